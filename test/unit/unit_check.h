/*
 * CHECK(), failure counting and a hang watchdog for the single-process
 * unit tests.
 *
 *   CHECK(cond);                      FAIL file:line: cond
 *   CHECK(cond, "got %d", value);     FAIL file:line: cond: got 7
 *
 * A failed check is reported on stderr and counted; the test goes on, so one
 * run shows every broken property. main() ends with
 * `return unit_check_summary("test_x");` or reads unit_failures itself.
 *
 * The counter (and the watchdog's message) are statics in this header: each
 * unit test is one translation unit of one single-rank program, so there is
 * exactly one of each per test.
 * A test that expects floods of failures defines UNIT_CHECK_PRINT_LIMIT
 * before including this header to print only the first ones.
 */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef UNIT_CHECK_PRINT_LIMIT
#define UNIT_CHECK_PRINT_LIMIT 0 /* 0: print every failure */
#endif

/* Separator between the condition and an explanation; a format that is
 * nothing else means CHECK() was given no explanation. */
#define UNIT_CHECK_SEPARATOR ": "

static int unit_failures;

__attribute__((format(printf, 4, 5))) static inline void
unit_check_failed(const char *file, int line, const char *cond,
                  const char *format, ...)
{
    unit_failures++;
    if (UNIT_CHECK_PRINT_LIMIT > 0 && unit_failures > UNIT_CHECK_PRINT_LIMIT) {
        return;
    }
    fprintf(stderr, "FAIL %s:%d: %s", file, line, cond);
    if (strcmp(format, UNIT_CHECK_SEPARATOR) != 0) {
        va_list args;
        va_start(args, format);
        vfprintf(stderr, format, args);
        va_end(args);
    }
    fputc('\n', stderr);
}

/* The explanation's format is pasted after the separator, so the compiler
 * still checks it against its arguments. */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            unit_check_failed(__FILE__, __LINE__, #cond,                      \
                              UNIT_CHECK_SEPARATOR __VA_ARGS__);              \
        }                                                                     \
    } while (0)

/* End of a test: says how many checks failed (stderr); returns main()'s
 * exit status for that, 0 or 1. Success is left to the caller to print. */
static inline int unit_check_summary(const char *test)
{
    if (unit_failures == 0) {
        return 0;
    }
    fprintf(stderr, "%s: %d check(s) failed\n", test, unit_failures);
    return 1;
}

/* What the watchdog prints; set once by unit_check_watchdog() before the
 * alarm is armed, read only by the signal handler. */
static const char *unit_watchdog_message;
static size_t unit_watchdog_length;

static inline void unit_watchdog_expired(int sig)
{
    (void)sig;
    /* write() and _exit() only: the handler may interrupt anything. */
    ssize_t n = write(STDERR_FILENO, unit_watchdog_message,
                      unit_watchdog_length);
    (void)n;
    _exit(1);
}

/* A broken context switch or scheduler often shows as a hang: after
 * 'seconds' the test prints 'message' (a whole line) and exits with 1. */
static inline void unit_check_watchdog(unsigned seconds, const char *message)
{
    unit_watchdog_message = message;
    unit_watchdog_length = strlen(message);
    signal(SIGALRM, unit_watchdog_expired);
    alarm(seconds);
}

#endif /* UNIT_CHECK_H */
