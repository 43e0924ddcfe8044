#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

void jc_print_usage(const char *prog)
{
    printf("usage: %s [-cpu | -H | -D] [-x NX -y NY -z NZ | -n N | -b N] [-i iters] [-w warmup]\n"
           "          [-overlap] [-fuse] [-graphs] [-ddt] [-v]\n"
           "  -cpu     host loops, no CUDA at all (the default)\n"
           "  -H       GPU; faces staged through pinned host buffers for MPI\n"
           "  -D       GPU; device buffers handed to MPI (CUDA-aware)\n"
           "  -x/-y/-z global grid (-n N: N^3); -b N: N^3 cells per rank, the\n"
           "           global grid grows with the decomposition (default -b 32)\n"
           "  -i       timed iterations (100)    -w  warm-up iterations (10)\n"
           "  -overlap update the interior while the halos travel, then the exterior\n"
           "  -fuse    all faces in one pack and one unpack kernel\n"
           "  -graphs  replay unpack+update+pack as CUDA graphs (two: the grids swap)\n"
           "  -ddt     (-cpu, -D) no pack/unpack of our own: each face is an MPI subarray\n"
           "           datatype of the grid, sent and received in place by the MPI library\n"
           "  -v       compare with a serial run on rank 0 (small grids)\n",
           prog);
}

const char *jc_mode_name(jc_mode_t m)
{
    return m == JC_MODE_DEVICE ? "D" : m == JC_MODE_HOST_STAGING ? "H" : "cpu";
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int jc_parse_options(int argc, char **argv, jc_options_t *o, char *err, int errlen)
{
    *o = (jc_options_t){.mode = JC_MODE_CPU, .iters = 100, .warmup = 10};
    int mode_set = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        jc_mode_t mode = JC_MODE_CPU;
        int is_mode = 1;
        if (!strcmp(arg, "-cpu"))
            mode = JC_MODE_CPU;
        else if (!strcmp(arg, "-H"))
            mode = JC_MODE_HOST_STAGING;
        else if (!strcmp(arg, "-D"))
            mode = JC_MODE_DEVICE;
        else
            is_mode = 0;
        if (is_mode) {
            if (mode_set && o->mode != mode) {
                snprintf(err, errlen, "choose one of -cpu, -H, -D");
                return -1;
            }
            o->mode = mode;
            mode_set = 1;
            continue;
        }
        int *flag = !strcmp(arg, "-v")         ? &o->verify
                    : !strcmp(arg, "-overlap") ? &o->overlap
                    : !strcmp(arg, "-fuse")    ? &o->fuse
                    : !strcmp(arg, "-graphs")  ? &o->graphs
                    : !strcmp(arg, "-fault")   ? &o->fault
                    : !strcmp(arg, "-ddt")     ? &o->ddt
                                               : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return 1;
        long v;
        if (a + 1 >= argc || parse_long(argv[a + 1], !strcmp(arg, "-w") ? 0 : 1, INT_MAX, &v)) {
            snprintf(err, errlen, "%s: unknown option, or it needs a %s integer", arg,
                     !strcmp(arg, "-w") ? "non-negative" : "positive");
            return -1;
        }
        a++;
        if (!strcmp(arg, "-x"))
            o->n[0] = v;
        else if (!strcmp(arg, "-y"))
            o->n[1] = v;
        else if (!strcmp(arg, "-z"))
            o->n[2] = v;
        else if (!strcmp(arg, "-n"))
            o->n[0] = o->n[1] = o->n[2] = v;
        else if (!strcmp(arg, "-b"))
            o->block = v;
        else if (!strcmp(arg, "-i"))
            o->iters = (int)v;
        else if (!strcmp(arg, "-w"))
            o->warmup = (int)v;
        else {
            snprintf(err, errlen, "unknown option %s (-h lists them)", arg);
            return -1;
        }
    }
    int given = (o->n[0] > 0) + (o->n[1] > 0) + (o->n[2] > 0);
    if (given && o->block) {
        snprintf(err, errlen, "-b and -x/-y/-z/-n exclude each other");
        return -1;
    }
    if (given && given < 3) {
        snprintf(err, errlen, "give all of -x, -y and -z (or -n)");
        return -1;
    }
    if (!given && !o->block)
        o->block = 32;
    if (o->ddt && (o->mode == JC_MODE_HOST_STAGING || o->fuse || o->graphs || o->fault)) {
        snprintf(err, errlen, "-ddt goes with -cpu or -D, without -fuse, -graphs or -fault");
        return -1;
    }
    if (o->fault && o->iters + o->warmup < 2) {
        snprintf(err, errlen, "-fault needs at least two iterations");
        return -1;
    }
    return 0;
}
