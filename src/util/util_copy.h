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
static inline void util_copy_small(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) { /* 1, 2 or 3 bytes */
        uint8_t a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

#endif
