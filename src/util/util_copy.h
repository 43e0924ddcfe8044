/* Copies of a few bytes whose length is known only at run time. */
#ifndef AMPI_UTIL_COPY_H
#define AMPI_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Up to 16 bytes in two overlapping loads and stores, else memcpy.  A
 * memcpy of a variable length compiles to a call or to `rep movsq`, whose
 * start-up (~30 cycles) was a tenth of a small envelope's cost on each side
 * of a one-byte osu_bw (perf, this file's callers in shm_ring.h and pt2pt). */
/* n in [w, 2w] bytes as two w-byte pieces, the first and the last (they
 * overlap unless n == 2w); w is a constant once inlined. */
static inline void util_copy_ends(uint8_t *d, const uint8_t *s, size_t n, size_t w)
{
    uint64_t first = 0, last = 0;
    memcpy(&first, s, w);
    memcpy(&last, s + n - w, w);
    memcpy(d, &first, w);
    memcpy(d + n - w, &last, w);
}

static inline void util_copy_small(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        util_copy_ends(d, s, n, 8);
    } else if (n >= 4) {
        util_copy_ends(d, s, n, 4);
    } else if (n) { /* 1, 2 or 3 bytes */
        uint8_t a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

#endif
