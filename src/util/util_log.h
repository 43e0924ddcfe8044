/* Diagnostics.  Every message starts with "ampi:" so users can tell ours
 * from theirs; util_debug prints only when util_debug_enabled
 * (AMPI_DEBUG, set at the start of a process). */
#ifndef AMPI_UTIL_LOG_H
#define AMPI_UTIL_LOG_H

#include <stdbool.h>

/* On the declaration of a variable of the library that the installed
 * library does not export (all of them: only MPI names leave it): code then
 * reads it straight, not through the GOT, a load fewer per use.  For the
 * variables every small message reads. */
#define UTIL_HIDDEN __attribute__((visibility("hidden")))

void util_log_init(int proc); /* remembers the process index for prefixes */
void util_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void util_error(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* the caller goes on */
void util_debug_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void util_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool util_debug_enabled UTIL_HIDDEN;

#define util_debug(...)                     \
    do {                                    \
        if (util_debug_enabled)             \
            util_debug_print(__VA_ARGS__);  \
    } while (0)

#define UTIL_LIKELY(x) __builtin_expect(!!(x), 1)
#define UTIL_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
