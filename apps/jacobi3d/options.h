/* Command line of jacobi3d (see README.md). */
#ifndef JACOBI_OPTIONS_H
#define JACOBI_OPTIONS_H

typedef enum { JC_MODE_CPU, JC_MODE_HOST_STAGING, JC_MODE_DEVICE } jc_mode_t;

typedef struct jc_options {
    jc_mode_t mode;
    long n[3];        /* global grid; 0 when -b gives the block edge instead */
    long block;       /* -b: cells per block edge (weak scaling) */
    int iters, warmup;
    int verify, overlap, fuse, graphs;
    int ddt;          /* -ddt: faces sent as derived datatypes straight from the grid */
    int fault;        /* test hook: skip one unpack, so -v must fail */
} jc_options_t;

/* 0: parsed; 1: -h was asked for; -1: bad usage (a message is in err). */
int jc_parse_options(int argc, char **argv, jc_options_t *o, char *err, int errlen);
void jc_print_usage(const char *prog);
const char *jc_mode_name(jc_mode_t m);

#endif
