/* Async-signal-safe formatting and the default death (util_sigsafe.h). */
#define _GNU_SOURCE
#include "util/util_sigsafe.h"

#include <string.h>
#include <unistd.h>

char *util_sig_put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

char *util_sig_put_num(char *p, long long v)
{
    char digits[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = digits[--n];
    return p;
}

char *util_sig_put_hex(char *p, uintptr_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    p = util_sig_put_str(p, "0x");
    while (n)
        *p++ = digits[--n];
    return p;
}

void util_sig_say(const char *msg, const char *end)
{
    ssize_t w = write(STDERR_FILENO, msg, (size_t)(end - msg));
    (void)w;
}

void util_sig_die_by(int sig, const siginfo_t *si)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}
