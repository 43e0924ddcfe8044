/*
 * The command line of the halo benchmarks (osu_halo_ddt,
 * osu_halo_persistent): one parser, in osu_options.c, so that both read
 * -d cuda, -c, -i, -x and -m [min:]max alike.
 */
#ifndef OSU_HALO_H
#define OSU_HALO_H

struct osu_halo_options {
    char where;         /* 'H', or 'D' after -d cuda */
    int validate;       /* -c */
    int neighbours;     /* -n 2|4|6; 0: the benchmark takes no -n */
    int iterations;     /* -i; -1: the benchmark's own choice */
    int skip;           /* -x; -1 likewise */
    long long min, max; /* -m [min:]max, within [lo, hi] of the parser */
};

/* Parses argv over the defaults in *o; -m's bounds must lie in [lo, hi]
 * ("-m max" alone keeps the default min, or max where that is smaller).
 * Returns 0, or 1 after rank 0 printed "usage: <usage>". */
int osu_halo_parse(int argc, char **argv, const char *usage, long long lo,
                   long long hi, struct osu_halo_options *o, int rank);

#endif /* OSU_HALO_H */
