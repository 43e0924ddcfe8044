/* Command line of ampirun: mpirun-style (-np, -n, -x, --timeout,
 * --tag-output) and charmrun/AMPI-style (+p, +vp) options, ending at the
 * program name so that the program's own options are never touched.  The
 * options that Open MPI's mpirun and MPICH's mpiexec scripts commonly pass
 * are accepted too (launch_compat.c), so that ampirun can stand in for them
 * as mpirun/mpiexec. */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "(unknown version)"
#endif

static void print_usage(FILE *to)
{
    fputs("usage: ampirun [options] -np P [+vp V] prog [args...]\n"
          "  -np P, -n P, +p P    number of processes (PMIx job size, default 1)\n"
          "  +vp V, --vp V        number of MPI ranks (virtual processors) spread over\n"
          "                       the processes, V >= P (default: AMPI_VP, else P); given\n"
          "                       to them as AMPI_VP=V\n"
          "  --timeout SECONDS    end the job when it runs longer (exit status 124;\n"
          "                       default: MPIEXEC_TIMEOUT when set)\n"
          "  --tag-output         prefix each output line with \"[p] \" (p: process)\n"
          "  --bind-to core|none  pin process p to the p-th allowed CPU (default: core, when\n"
          "                       there are at least as many CPUs as processes)\n"
          "  -x NAME[=VALUE]      set NAME in the processes' environment (bare NAME:\n"
          "                       export ampirun's own value)\n"
          "  -genv NAME VALUE, -env NAME VALUE   the same, MPICH's spelling\n"
          "  --version            print the version and exit\n"
          "  -h, --help           show this help\n"
          "Accepted for Open MPI/MPICH scripts, with a note that they change nothing on\n"
          "one node: --oversubscribe, --map-by X, --rank-by X, -ppn N, --npernode N,\n"
          "--host/-H/-hosts LIST (local names only), --mca NAME VALUE, --report-bindings,\n"
          "-genvall, --allow-run-as-root (silently).\n",
          to);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("ampirun: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'ampirun --help' for more information.\n", stderr);
    return -1;
}

int launch_parse_count(const char *text, const char *option, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > INT_MAX) {
        fprintf(stderr, "ampirun: %s needs a positive integer, got '%s'\n", option, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_seconds(const char *text, const char *option, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* No job runs for a year: a larger value is a typo, not a limit. */
    if (errno != 0 || end == text || *end != '\0' || !(v > 0) || v > 366 * 86400.0) {
        fprintf(stderr, "ampirun: %s needs a positive number of seconds, got '%s'\n", option,
                text);
        return -1;
    }
    *out = v;
    return 0;
}

int launch_add_export(launch_options_t *opt, const char *entry)
{
    size_t n = 0;
    while (opt->exports[n] != NULL)
        n++;
    if (entry[0] == '\0' || entry[0] == '=')
        return usage_error("-x needs NAME or NAME=VALUE, got '%s'", entry);
    char **grown = realloc(opt->exports, (n + 2) * sizeof *grown);
    if (grown == NULL)
        return usage_error("%s", "out of memory");
    opt->exports = grown;
    opt->exports[n] = (char *)entry;
    opt->exports[n + 1] = NULL;
    return 0;
}

/* Option value either attached ("+p4", "--vp=8") or the next argument. */
static const char *option_value(int argc, char **argv, int *i, const char *attached)
{
    if (attached != NULL)
        return attached;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* If arg is name itself, return "" (value follows); if arg is name
 * immediately followed by a value (separated by '=' when requested),
 * return that value; otherwise NULL. */
static const char *match(const char *arg, const char *name, bool attached_ok, bool needs_eq)
{
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return NULL;
    if (arg[len] == '\0')
        return "";
    if (!attached_ok)
        return NULL;
    if (needs_eq)
        return arg[len] == '=' && arg[len + 1] != '\0' ? arg + len + 1 : NULL;
    return arg + len;
}

/* The "+vp" of the program's own arguments, which AMPI_Run also reads
 * ("+vp N" or "+vpN"); NULL when there is none. */
static const char *program_vp(char **prog_argv)
{
    for (int i = 1; prog_argv[i] != NULL; i++) {
        if (strcmp(prog_argv[i], "+vp") == 0)
            return prog_argv[i + 1] != NULL ? prog_argv[i + 1] : "";
        if (strncmp(prog_argv[i], "+vp", 3) == 0)
            return prog_argv[i] + 3;
    }
    return NULL;
}

/* V from AMPI_VP when no +vp was given; the program's own "+vp" then is
 * an error as well (two sources, no way to tell which one is meant). */
static int settle_vp(launch_options_t *opt)
{
    const char *env = getenv("AMPI_VP");
    if (opt->nvp == 0 && env != NULL && env[0] != '\0') {
        if (launch_parse_count(env, "AMPI_VP", &opt->nvp) != 0)
            return -1;
        opt->nvp_source = "AMPI_VP";
    }
    const char *prog = program_vp(opt->prog_argv);
    if (prog != NULL && opt->nvp_source != NULL) {
        char given[64];
        if (strcmp(opt->nvp_source, "AMPI_VP") == 0)
            snprintf(given, sizeof given, "AMPI_VP=%d", opt->nvp);
        else
            snprintf(given, sizeof given, "ampirun %s %d", opt->nvp_source, opt->nvp);
        fprintf(stderr,
                "ampirun: the number of ranks is given twice: %s and '+vp %s' in the "
                "arguments of %s; give it once\n",
                given, prog, opt->prog_argv[0]);
        return -1;
    }
    if (opt->nvp == 0)
        opt->nvp = opt->nprocs;
    if (opt->nvp < opt->nprocs) {
        fprintf(stderr,
                "ampirun: +vp %d is smaller than -np %d: every process needs at least one "
                "virtual rank\n",
                opt->nvp, opt->nprocs);
        return -1;
    }
    return 0;
}

int launch_parse_args(int argc, char **argv, launch_options_t *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->nprocs = 1;
    opt->exports = calloc(1, sizeof *opt->exports);
    if (opt->exports == NULL)
        return usage_error("%s", "out of memory");

    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int *count = NULL;
        const char *count_name = NULL;

        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' && arg[0] != '+')
            break; /* the program: everything from here on is its own */

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 || strcmp(arg, "-help") == 0) {
            print_usage(stdout);
            return 1;
        }
        if (strcmp(arg, "--version") == 0 || strcmp(arg, "-version") == 0 ||
            strcmp(arg, "-V") == 0) {
            printf("ampirun (AMPI-UCX) %s\n", PACKAGE_VERSION);
            return 1;
        }
        if (strcmp(arg, "--tag-output") == 0 || strcmp(arg, "-tag-output") == 0) {
            opt->tag_output = true;
            continue;
        }

        /* Checked longest first: "+vp" before "+p" would not matter, but
         * "-np" must not be read as "-n" with value "p". */
        const char *attached = NULL;
        if ((v = match(arg, "-np", false, false)) || (v = match(arg, "--np", true, true)) ||
            (v = match(arg, "-n", false, false)) || (v = match(arg, "--n", true, true))) {
            count = &opt->nprocs;
            count_name = "-np";
        } else if ((v = match(arg, "+vp", true, false)) || (v = match(arg, "--vp", true, true))) {
            count = &opt->nvp;
            count_name = "+vp";
            opt->nvp_source = "+vp";
        } else if ((v = match(arg, "+p", true, false))) {
            count = &opt->nprocs;
            count_name = "+p";
        } else if ((v = match(arg, "--timeout", true, true)) ||
                   (v = match(arg, "-timeout", false, false))) {
            attached = *v ? v : NULL;
            const char *value = option_value(argc, argv, &i, attached);
            if (value == NULL)
                return usage_error("%s needs a value", "--timeout");
            if (parse_seconds(value, "--timeout", &opt->timeout_s) != 0)
                return -1;
            continue;
        } else if ((v = match(arg, "-x", false, false))) {
            const char *value = option_value(argc, argv, &i, NULL);
            if (value == NULL)
                return usage_error("%s needs NAME or NAME=VALUE", "-x");
            if (launch_add_export(opt, value) != 0)
                return -1;
            continue;
        } else {
            int rc = launch_parse_compat(argc, argv, &i, opt);
            if (rc < 0)
                return -1;
            if (rc > 0)
                continue;
            return usage_error("unknown option '%s'", arg);
        }

        attached = *v ? v : NULL;
        const char *value = option_value(argc, argv, &i, attached);
        if (value == NULL)
            return usage_error("%s needs a value", count_name);
        if (launch_parse_count(value, count_name, count) != 0)
            return -1;
    }

    if (i >= argc)
        return usage_error("%s", "no program to run");
    opt->prog_argv = argv + i;
    if (settle_vp(opt) != 0)
        return -1;
    /* Open MPI's and MPICH's mpiexec read this; a script may set it alone. */
    const char *limit = getenv("MPIEXEC_TIMEOUT");
    if (opt->timeout_s == 0 && limit != NULL && limit[0] != '\0' &&
        parse_seconds(limit, "MPIEXEC_TIMEOUT", &opt->timeout_s) != 0)
        return -1;
    return 0;
}

void launch_free_options(launch_options_t *opt)
{
    free(opt->exports);
    opt->exports = NULL;
    for (size_t i = 0; i < opt->nowned; i++)
        free(opt->owned[i]);
    free(opt->owned);
    opt->owned = NULL;
}
