/* What a fatal-signal handler may do: format a message into a buffer of its
 * own and write it (no stdio, no malloc: both may hold the lock the faulting
 * code held), and die by the signal as if no handler were installed. */
#ifndef AMPI_UTIL_SIGSAFE_H
#define AMPI_UTIL_SIGSAFE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Each appends to p (no terminating NUL) and returns the end; the caller's
 * buffer holds the whole message. */
char *util_sig_put_str(char *p, const char *s);
char *util_sig_put_num(char *p, long long v);
char *util_sig_put_hex(char *p, uintptr_t v); /* "0x..." */
/* Writes the bytes from msg to end to stderr; a failed write is ignored
 * (nothing better to do if stderr is gone). */
void util_sig_say(const char *msg, const char *end);
/* Die by sig with the default action, so that the exit status and core dump
 * say the signal, as without our handler: a fault recurs when the handler
 * returns to the faulting instruction; a sent signal (raise, abort, kill)
 * would not, so it is sent again and stays pending until the handler
 * returns. */
void util_sig_die_by(int sig, const siginfo_t *si);

#endif
