/* Command line of ampirun: mpirun-style (-np, -n, -x, --timeout,
 * --tag-output) and charmrun/AMPI-style (+p, +vp) options, ending at the
 * program name so that the program's own options are never touched. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(FILE *to)
{
    fputs("usage: ampirun [options] -np P [+vp V] prog [args...]\n"
          "  -np P, -n P, +p P    number of processes (PMIx job size, default 1)\n"
          "  +vp V, --vp V        number of MPI ranks (virtual processors) spread over\n"
          "                       the processes, V >= P (default P); given to them as\n"
          "                       AMPI_VP=V\n"
          "  --timeout SECONDS    end the job when it runs longer (exit status 124)\n"
          "  --tag-output         prefix each output line with \"[p] \" (p: process)\n"
          "  --bind-to core|none  pin process p to the p-th allowed CPU (default: core, when\n"
          "                       there are at least as many CPUs as processes)\n"
          "  -x NAME[=VALUE]      set NAME in the processes' environment (bare NAME:\n"
          "                       export ampirun's own value)\n"
          "  -h, --help           show this help\n",
          to);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("ampirun: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'ampirun --help' for more information.\n", stderr);
    return -1;
}

static int parse_count(const char *text, const char *option, int *out)
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

static int parse_seconds(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* No job runs for a year: a larger value is a typo, not a limit. */
    if (errno != 0 || end == text || *end != '\0' || !(v > 0) || v > 366 * 86400.0) {
        fprintf(stderr, "ampirun: --timeout needs a positive number of seconds, got '%s'\n",
                text);
        return -1;
    }
    *out = v;
    return 0;
}

static int add_export(launch_options_t *opt, const char *entry)
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

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_usage(stdout);
            return 1;
        }
        if (strcmp(arg, "--tag-output") == 0 || strcmp(arg, "-tag-output") == 0) {
            opt->tag_output = true;
            continue;
        }
        if ((v = match(arg, "--bind-to", true, true))) {
            const char *value = option_value(argc, argv, &i, *v ? v : NULL);
            if (value == NULL || (strcmp(value, "core") != 0 && strcmp(value, "none") != 0))
                return usage_error("%s takes core or none", "--bind-to");
            opt->bind_none = strcmp(value, "none") == 0;
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
        } else if ((v = match(arg, "+p", true, false))) {
            count = &opt->nprocs;
            count_name = "+p";
        } else if ((v = match(arg, "--timeout", true, true))) {
            attached = *v ? v : NULL;
            const char *value = option_value(argc, argv, &i, attached);
            if (value == NULL)
                return usage_error("%s needs a value", "--timeout");
            if (parse_seconds(value, &opt->timeout_s) != 0)
                return -1;
            continue;
        } else if ((v = match(arg, "-x", false, false))) {
            const char *value = option_value(argc, argv, &i, NULL);
            if (value == NULL)
                return usage_error("%s needs NAME or NAME=VALUE", "-x");
            if (add_export(opt, value) != 0)
                return -1;
            continue;
        } else {
            return usage_error("unknown option '%s'", arg);
        }

        attached = *v ? v : NULL;
        const char *value = option_value(argc, argv, &i, attached);
        if (value == NULL)
            return usage_error("%s needs a value", count_name);
        if (parse_count(value, count_name, count) != 0)
            return -1;
    }

    if (i >= argc)
        return usage_error("%s", "no program to run");
    opt->prog_argv = argv + i;
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

void launch_free_options(launch_options_t *opt)
{
    free(opt->exports);
    opt->exports = NULL;
}
