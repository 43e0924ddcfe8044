#include "util/util_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool util_debug_enabled;
static int log_proc = -1;

void util_log_init(int proc)
{
    log_proc = proc;
}

static void vprint(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    /* one fprintf per message so lines from several processes don't interleave */
    if (log_proc >= 0)
        fprintf(stderr, "ampi[%d]: %s%s\n", log_proc, kind, line);
    else
        fprintf(stderr, "ampi: %s%s\n", kind, line);
}

void util_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("warning: ", fmt, ap);
    va_end(ap);
}

void util_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("error: ", fmt, ap);
    va_end(ap);
}

void util_debug_print(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("debug: ", fmt, ap);
    va_end(ap);
}

void util_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("fatal: ", fmt, ap);
    va_end(ap);
    fflush(stderr);
    abort();
}
