/*
 * Options of the osu-style collective benchmarks (as OSU 7.x: -m, -i, -x,
 * -f, -d cuda, -c, -h, -v). Parsed without getopt, whose state is global
 * and would be shared by AMPI ranks.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"
#include "osu_internal.h" /* osu_parse_integer(), from osu_options.c */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct osu_coll_option {
    char letter;
    const char *name;
    int takes_value;
};

static const struct osu_coll_option osu_coll_option_table[] = {
    {'m', "message-size", 1}, {'i', "iterations", 1}, {'x', "warmup", 1},
    {'f', "full", 0},         {'d', "accelerator", 1}, {'c', "validation", 0},
    {'h', "help", 0},         {'v', "version", 0},
};

/* "MAX", "MIN:MAX", ":MAX" or "MIN:"; sizes must be >= 1 (they double). */
static int osu_coll_sizes(const char *text, struct osu_coll_options *opt)
{
    const char *colon = strchr(text, ':');
    long long v;

    if (colon == NULL) {
        if (osu_parse_integer(text, 1, INT_MAX, &v)) {
            return -1;
        }
        opt->max_size = (size_t)v;
        return 0;
    }
    char min_text[32];
    size_t len = (size_t)(colon - text);
    if (len >= sizeof min_text || (len == 0 && colon[1] == '\0')) {
        return -1;
    }
    if (len > 0) {
        memcpy(min_text, text, len);
        min_text[len] = '\0';
        if (osu_parse_integer(min_text, 1, INT_MAX, &v)) {
            return -1;
        }
        opt->min_size = (size_t)v;
    }
    if (colon[1] != '\0') {
        if (osu_parse_integer(colon + 1, 1, INT_MAX, &v)) {
            return -1;
        }
        opt->max_size = (size_t)v;
    }
    return 0;
}

static const struct osu_coll_option *
osu_coll_find(const struct osu_coll_benchmark *bench, char letter,
              const char *name, size_t name_len)
{
    for (size_t k = 0; k < sizeof osu_coll_option_table /
                               sizeof osu_coll_option_table[0]; k++) {
        const struct osu_coll_option *o = &osu_coll_option_table[k];
        int match = name ? strlen(o->name) == name_len &&
                               strncmp(o->name, name, name_len) == 0
                         : o->letter == letter;
        /* A barrier has no message sizes and nothing to validate. */
        if (match && bench->is_barrier && (o->letter == 'm' ||
                                           o->letter == 'c')) {
            return NULL;
        }
        if (match) {
            return o;
        }
    }
    return NULL;
}

static enum osu_coll_status osu_coll_apply(char letter, const char *value,
                                           struct osu_coll_options *opt,
                                           char *message, size_t msize)
{
    long long v;

    switch (letter) {
    case 'h':
        return OSU_COLL_HELP;
    case 'v':
        return OSU_COLL_VERSION;
    case 'f':
        opt->full = 1;
        return OSU_COLL_OK;
    case 'c':
        opt->validate = 1;
        return OSU_COLL_OK;
    case 'm':
        if (osu_coll_sizes(value, opt) == 0) {
            return OSU_COLL_OK;
        }
        snprintf(message, msize, "Invalid Message Size [-m %s]", value);
        return OSU_COLL_BAD_USAGE;
    case 'i':
        if (osu_parse_integer(value, 1, INT_MAX, &v) == 0) {
            opt->iterations = opt->iterations_large = (int)v;
            return OSU_COLL_OK;
        }
        snprintf(message, msize, "Invalid Number of Iterations [-i %s]",
                 value);
        return OSU_COLL_BAD_USAGE;
    case 'x':
        if (osu_parse_integer(value, 0, INT_MAX, &v) == 0) {
            opt->skip = opt->skip_large = (int)v;
            return OSU_COLL_OK;
        }
        snprintf(message, msize,
                 "Invalid Number of Warmup Iterations [-x %s]", value);
        return OSU_COLL_BAD_USAGE;
    case 'd':
        if (strcasecmp(value, "cuda") != 0) {
            snprintf(message, msize, "Invalid Accel Type Specified [-d %s]",
                     value);
            return OSU_COLL_BAD_USAGE;
        }
#ifdef OSU_CUDA
        opt->use_cuda = 1;
        return OSU_COLL_OK;
#else
        snprintf(message, msize,
                 "CUDA Support Not Enabled\n"
                 "Please recompile benchmark with CUDA support (-DOSU_CUDA)");
        return OSU_COLL_BAD_USAGE;
#endif
    default:
        snprintf(message, msize, "Invalid option [-%c]", letter);
        return OSU_COLL_BAD_USAGE;
    }
}

enum osu_coll_status osu_coll_parse(const struct osu_coll_benchmark *bench,
                                    int argc, char **argv,
                                    struct osu_coll_options *opt,
                                    char *message, size_t msize)
{
    enum osu_coll_status status = OSU_COLL_OK;

    memset(opt, 0, sizeof *opt);
    opt->min_size = bench->element;
    opt->max_size = OSU_COLL_DEFAULT_MAX_SIZE;
    opt->iterations = OSU_COLL_ITERATIONS;
    opt->iterations_large = OSU_COLL_ITERATIONS_LARGE;
    opt->skip = OSU_COLL_SKIP;
    opt->skip_large = OSU_COLL_SKIP_LARGE;
    message[0] = '\0';

    for (int i = 1; i < argc && status == OSU_COLL_OK; i++) {
        const char *arg = argv[i];
        const struct osu_coll_option *o;
        const char *value = NULL;

        if (arg[0] != '-' || arg[1] == '\0') {
            snprintf(message, msize, "Unexpected argument [%s]", arg);
            return OSU_COLL_BAD_USAGE;
        }
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            o = osu_coll_find(bench, 0, name,
                              eq ? (size_t)(eq - name) : strlen(name));
            if (o != NULL && o->takes_value) {
                value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            } else if (o != NULL && eq != NULL) {
                o = NULL;
            }
        } else {
            o = osu_coll_find(bench, arg[1], NULL, 0);
            if (o != NULL && o->takes_value) {
                value = arg[2] ? arg + 2 : (i + 1 < argc ? argv[++i] : NULL);
            } else if (o != NULL && arg[2] != '\0') {
                o = NULL;
            }
        }
        if (o == NULL) {
            snprintf(message, msize, "Invalid option [%s]", arg);
            return OSU_COLL_BAD_USAGE;
        }
        if (o->takes_value && value == NULL) {
            snprintf(message, msize, "Option Missing Required Argument [-%c]",
                     o->letter);
            return OSU_COLL_BAD_USAGE;
        }
        status = osu_coll_apply(o->letter, value, opt, message, msize);
    }
    if (status != OSU_COLL_OK) {
        return status;
    }
    /* Reductions move whole elements: OSU raises the minimum to one. */
    if (opt->min_size < bench->element) {
        opt->min_size = bench->element;
    }
    if (opt->min_size > opt->max_size) {
        snprintf(message, msize,
                 "Invalid Message Size [minimum %zu above maximum %zu]",
                 opt->min_size, opt->max_size);
        return OSU_COLL_BAD_USAGE;
    }
    return OSU_COLL_OK;
}

void osu_coll_print_usage(const struct osu_coll_benchmark *bench)
{
    printf("Usage: %s [options]\n\nOptions:\n", bench->program);
    printf("  -d, --accelerator TYPE     buffers in accelerator memory; "
           "TYPE: cuda\n");
    if (!bench->is_barrier) {
        printf("  -m, --message-size [MIN:]MAX\n"
               "                             sizes MIN..MAX bytes by powers "
               "of two (default %zu:%zu)\n",
               bench->element, OSU_COLL_DEFAULT_MAX_SIZE);
    }
    printf("  -i, --iterations ITER      timed iterations (default %d, %d "
           "above %d bytes)\n",
           OSU_COLL_ITERATIONS, OSU_COLL_ITERATIONS_LARGE,
           OSU_COLL_LARGE_MESSAGE_SIZE);
    printf("  -x, --warmup ITER          untimed warmup iterations (default "
           "%d, %d above %d bytes)\n",
           OSU_COLL_SKIP, OSU_COLL_SKIP_LARGE, OSU_COLL_LARGE_MESSAGE_SIZE);
    printf("  -f, --full                 also print min and max latency over "
           "ranks and iterations\n");
    if (!bench->is_barrier) {
        printf("  -c, --validation           check the result after each "
               "size (Pass/Fail column)\n");
    }
    printf("  -v, --version              print the benchmark name and exit\n");
    printf("  -h, --help                 print this help and exit\n");
}
