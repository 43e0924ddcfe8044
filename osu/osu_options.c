/*
 * Command-line options of the osu-style suite, with OSU 7.x names and
 * defaults.
 *
 * Parsed by hand rather than with getopt(): getopt keeps its position in
 * process-wide globals (optind) and GNU getopt permutes argv, both wrong
 * when several AMPI ranks run main() in one process.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_internal.h"
#include "osu_halo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One option: its letters, and which kinds of benchmark accept it. */
struct osu_option_spec {
    char letter;
    const char *long_name;
    int takes_value;
    int bandwidth_only;    /* -W */
    int message_rate_only; /* -p, -R */
};

static const struct osu_option_spec osu_option_specs[] = {
    {'h', "help", 0, 0, 0},
    {'v', "version", 0, 0, 0},
    {'m', "message-size", 1, 0, 0},
    {'i', "iterations", 1, 0, 0},
    {'x', "warmup", 1, 0, 0},
    {'W', "window-size", 1, 1, 0},
    {'p', "num-pairs", 1, 0, 1},
    {'R', "print-rate", 1, 0, 1},
    {'d', "accelerator", 1, 0, 0},
    {'c', "validation", 0, 0, 0},
};

static int osu_option_allowed(const struct osu_option_spec *spec,
                              enum osu_kind kind)
{
    if (spec->message_rate_only) {
        return kind == OSU_KIND_MESSAGE_RATE;
    }
    if (spec->bandwidth_only) {
        return kind != OSU_KIND_LATENCY;
    }
    return 1;
}

static const struct osu_option_spec *
osu_find_option(const struct osu_benchmark *bench, char letter,
                const char *long_name, size_t long_len)
{
    size_t n = sizeof osu_option_specs / sizeof osu_option_specs[0];
    for (size_t k = 0; k < n; k++) {
        const struct osu_option_spec *spec = &osu_option_specs[k];
        int same = long_name
                       ? strlen(spec->long_name) == long_len &&
                             strncmp(spec->long_name, long_name, long_len) == 0
                       : spec->letter == letter;
        if (same) {
            return osu_option_allowed(spec, bench->kind) ? spec : NULL;
        }
    }
    return NULL;
}

static void osu_set_defaults(struct osu_options *opt, enum osu_kind kind)
{
    memset(opt, 0, sizeof *opt);
    opt->src = 'H';
    opt->dst = 'H';
    opt->max_size = OSU_DEFAULT_MAX_SIZE;
    opt->window = OSU_DEFAULT_WINDOW;
    opt->print_rate = 1;
    if (kind == OSU_KIND_LATENCY) {
        /* OSU's LAT_LOOP_SMALL/LARGE and LAT_SKIP_SMALL/LARGE. */
        opt->min_size = 0;
        opt->iterations = 10000;
        opt->iterations_large = 1000;
        opt->skip = 100;
        opt->skip_large = 10;
    } else {
        /* OSU's BW_LOOP_SMALL/LARGE and BW_SKIP_SMALL/LARGE. */
        opt->min_size = 1;
        opt->iterations = 100;
        opt->iterations_large = 20;
        opt->skip = 10;
        opt->skip_large = 2;
    }
}

int osu_parse_integer(const char *text, long long lo, long long hi,
                      long long *out)
{
    char *end = NULL;
    long long v;

    if (text == NULL || *text == '\0') {
        return -1;
    }
    v = strtoll(text, &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

/* "MAX", "MIN:MAX", "MIN:" or ":MAX", as OSU's -m. MIN must be positive. */
static int osu_parse_sizes(const char *text, struct osu_options *opt)
{
    const char *colon = strchr(text, ':');
    char min_text[32], max_text[32];
    long long v;

    if (colon == NULL) {
        if (osu_parse_integer(text, 0, INT_MAX, &v)) {
            return -1;
        }
        opt->max_size = (size_t)v;
        return 0;
    }
    if (strchr(colon + 1, ':') != NULL ||
        (size_t)(colon - text) >= sizeof min_text ||
        strlen(colon + 1) >= sizeof max_text) {
        return -1;
    }
    memcpy(min_text, text, (size_t)(colon - text));
    min_text[colon - text] = '\0';
    strcpy(max_text, colon + 1);
    if (min_text[0] == '\0' && max_text[0] == '\0') {
        return -1;
    }
    if (min_text[0] != '\0') {
        if (osu_parse_integer(min_text, 1, INT_MAX, &v)) {
            return -1;
        }
        opt->min_size = (size_t)v;
    }
    if (max_text[0] != '\0') {
        if (osu_parse_integer(max_text, 0, INT_MAX, &v)) {
            return -1;
        }
        opt->max_size = (size_t)v;
    }
    return 0;
}

static void osu_bad_usage(struct osu_parse *res, const char *message,
                          char letter, const char *value)
{
    res->status = OSU_STATUS_BAD_USAGE;
    if (value != NULL) {
        snprintf(res->message, sizeof res->message, "%s [-%c %s]", message,
                 letter, value);
    } else {
        snprintf(res->message, sizeof res->message, "%s [-%c]", message,
                 letter);
    }
}

/* -d cuda or a 'D' placement: only a build with -DOSU_CUDA can do it. */
static void osu_enable_cuda(struct osu_options *opt, struct osu_parse *res)
{
#ifdef OSU_CUDA
    (void)res;
    opt->use_cuda = 1;
#else
    (void)opt;
    res->status = OSU_STATUS_NO_CUDA;
    snprintf(res->message, sizeof res->message,
             "CUDA Support Not Enabled\n"
             "Please recompile benchmark with CUDA support (-DOSU_CUDA)");
#endif
}

static void osu_apply_option(const struct osu_option_spec *spec,
                             const char *value, struct osu_options *opt,
                             struct osu_parse *res)
{
    long long v;

    switch (spec->letter) {
    case 'h':
        res->status = OSU_STATUS_HELP;
        break;
    case 'v':
        res->status = OSU_STATUS_VERSION;
        break;
    case 'c':
        opt->validate = 1;
        break;
    case 'm':
        if (osu_parse_sizes(value, opt)) {
            osu_bad_usage(res, "Invalid Message Size", 'm', value);
        }
        break;
    case 'i':
        if (osu_parse_integer(value, 1, INT_MAX, &v)) {
            osu_bad_usage(res, "Invalid Number of Iterations", 'i', value);
        } else {
            opt->iterations = opt->iterations_large = (int)v;
        }
        break;
    case 'x':
        if (osu_parse_integer(value, 0, INT_MAX, &v)) {
            osu_bad_usage(res, "Invalid Number of Warmup Iterations", 'x',
                          value);
        } else {
            opt->skip = opt->skip_large = (int)v;
        }
        break;
    case 'W':
        if (osu_parse_integer(value, 1, 1 << 20, &v)) {
            osu_bad_usage(res, "Invalid Window Size", 'W', value);
        } else {
            opt->window = (int)v;
        }
        break;
    case 'p':
        if (osu_parse_integer(value, 1, INT_MAX, &v)) {
            osu_bad_usage(res, "Invalid Number of Pairs", 'p', value);
        } else {
            opt->pairs = (int)v;
        }
        break;
    case 'R':
        if (osu_parse_integer(value, 0, 1, &v)) {
            osu_bad_usage(res, "Invalid Print Rate (0 or 1)", 'R', value);
        } else {
            opt->print_rate = (int)v;
        }
        break;
    case 'd':
        if (strcasecmp(value, "cuda") != 0) {
            osu_bad_usage(res, "Invalid Accel Type Specified", 'd', value);
        } else {
            osu_enable_cuda(opt, res);
        }
        break;
    default:
        osu_bad_usage(res, "Invalid option", spec->letter, NULL);
        break;
    }
}

/* Trailing "SRC DST" placement letters, as OSU's positional arguments. */
static void osu_apply_placements(int count, char **words,
                                 struct osu_options *opt,
                                 struct osu_parse *res)
{
    if (count == 0) {
        return;
    }
    if (count != 2 || (words[0][0] != 'H' && words[0][0] != 'D') ||
        (words[1][0] != 'H' && words[1][0] != 'D') || words[0][1] != '\0' ||
        words[1][1] != '\0') {
        res->status = OSU_STATUS_BAD_USAGE;
        snprintf(res->message, sizeof res->message,
                 "Expected buffer placements SRC DST, each `H' or `D'");
        return;
    }
    opt->src = words[0][0];
    opt->dst = words[1][0];
    /* A device placement implies -d cuda, as OSU's setAccel() does. */
    if (opt->src == 'D' || opt->dst == 'D') {
        osu_enable_cuda(opt, res);
    }
}

void osu_parse_options(const struct osu_benchmark *bench, int argc,
                       char **argv, struct osu_options *opt,
                       struct osu_parse *res)
{
    int i = 1;

    osu_set_defaults(opt, bench->kind);
    res->status = OSU_STATUS_OK;
    res->message[0] = '\0';

    while (i < argc && res->status == OSU_STATUS_OK) {
        const char *arg = argv[i];
        const struct osu_option_spec *spec;
        const char *value = NULL;

        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            break; /* first placement letter */
        }
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            spec = osu_find_option(bench, 0, name, len);
            if (spec == NULL) {
                res->status = OSU_STATUS_BAD_USAGE;
                snprintf(res->message, sizeof res->message,
                         "Invalid option [%s]", arg);
                break;
            }
            if (spec->takes_value) {
                value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            }
        } else {
            spec = osu_find_option(bench, arg[1], NULL, 0);
            if (spec == NULL) {
                osu_bad_usage(res, "Invalid option", arg[1], NULL);
                break;
            }
            if (spec->takes_value) {
                value = arg[2] ? arg + 2 : (i + 1 < argc ? argv[++i] : NULL);
            } else if (arg[2] != '\0') {
                osu_bad_usage(res, "Invalid option", arg[1], NULL);
                break;
            }
        }
        if (spec->takes_value && value == NULL) {
            osu_bad_usage(res, "Option Missing Required Argument",
                          spec->letter, NULL);
            break;
        }
        osu_apply_option(spec, value, opt, res);
        i++;
    }
    if (res->status == OSU_STATUS_OK) {
        osu_apply_placements(argc - i, argv + i, opt, res);
    }
    if (res->status == OSU_STATUS_OK && opt->min_size > opt->max_size) {
        res->status = OSU_STATUS_BAD_USAGE;
        snprintf(res->message, sizeof res->message,
                 "Invalid Message Size [minimum %zu above maximum %zu]",
                 opt->min_size, opt->max_size);
    }
}

void osu_print_usage(const struct osu_benchmark *bench)
{
    int bw = bench->kind != OSU_KIND_LATENCY;
    int mr = bench->kind == OSU_KIND_MESSAGE_RATE;

    printf("Usage: %s [options] [SRC DST]\n\n", bench->program);
    printf("SRC and DST are buffer types for the source and destination:\n"
           "`D' places the buffer in accelerator device memory, `H' in host\n"
           "memory, for each MPI rank (device placements need a build with\n"
           "-DOSU_CUDA).%s\n\n",
           bench->multi_pair ? " SRC applies to the first half of the\n"
                               "ranks, DST to the second half."
                             : "");
    printf("Options:\n");
    printf("  -d, --accelerator TYPE     use accelerator device buffers of "
           "TYPE `cuda';\n"
           "                             placements stay H H unless SRC DST "
           "are given\n");
    printf("  -m, --message-size [MIN:]MAX\n"
           "                             sweep message sizes from MIN "
           "(default %d) to\n"
           "                             MAX (default %zu) bytes by powers "
           "of two\n",
           bw ? 1 : 0, OSU_DEFAULT_MAX_SIZE);
    printf("  -i, --iterations ITER      timed iterations per size "
           "(default %d, %d above %d bytes)\n",
           bw ? 100 : 10000, bw ? 20 : 1000, OSU_LARGE_MESSAGE_SIZE);
    printf("  -x, --warmup ITER          untimed warmup iterations "
           "(default %d, %d above %d bytes)\n",
           bw ? 10 : 100, bw ? 2 : 10, OSU_LARGE_MESSAGE_SIZE);
    if (bw) {
        printf("  -W, --window-size SIZE     messages in flight per "
               "iteration (default %d)\n",
               OSU_DEFAULT_WINDOW);
    }
    if (mr) {
        printf("  -p, --num-pairs PAIRS      sender/receiver pairs "
               "(default: processes / 2)\n");
        printf("  -R, --print-rate 0|1       also print messages per second "
               "(default 1)\n");
    }
    printf("  -c, --validation           check received data after each "
           "size\n");
    printf("  -v, --version              print the benchmark name and "
           "exit\n");
    printf("  -h, --help                 print this help and exit\n");
    fflush(stdout);
}

int osu_halo_parse(int argc, char **argv, const char *usage, long long lo,
                   long long hi, struct osu_halo_options *o, int rank)
{
    long long v, first;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-c")) {
            o->validate = 1;
            continue;
        }
        if (!val || strlen(a) != 2 || a[0] != '-') {
            goto bad;
        }
        i++;
        switch (a[1]) {
        case 'd':
            if (strcmp(val, "cuda")) {
                goto bad;
            }
            o->where = 'D';
            break;
        case 'n':
            if (!o->neighbours || osu_parse_integer(val, 2, 6, &v) || v % 2) {
                goto bad;
            }
            o->neighbours = (int)v;
            break;
        case 'i':
        case 'x':
            if (osu_parse_integer(val, a[1] == 'i' ? 1 : 0, 1000000000, &v)) {
                goto bad;
            }
            *(a[1] == 'i' ? &o->iterations : &o->skip) = (int)v;
            break;
        case 'm': {
            const char *colon = strchr(val, ':');
            char text[32] = "";
            first = -1;
            if (colon && colon > val) {
                if ((size_t)(colon - val) >= sizeof text) {
                    goto bad;
                }
                memcpy(text, val, (size_t)(colon - val));
                if (osu_parse_integer(text, lo, hi, &first)) {
                    goto bad;
                }
            }
            if (osu_parse_integer(colon ? colon + 1 : val, lo, hi, &v)) {
                goto bad;
            }
            if (first < 0) {
                first = o->min < v ? o->min : v;
            }
            if (v < first) {
                goto bad;
            }
            o->min = first;
            o->max = v;
            break;
        }
        default:
            goto bad;
        }
    }
    return 0;
bad:
    if (rank == 0) {
        fprintf(stderr, "usage: %s\n", usage);
    }
    return 1;
}
