/* +vp on the program's command line (charmrun's convention, so that a
 * singleton can run many ranks: ./prog +vp 8).  It is checked as strictly
 * as ampirun checks its own: a typo must not silently run another number of
 * ranks. */
#include "env/env_args.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "ampi: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(2);
}

static int parse_vp(const char *text)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > INT_MAX / 2)
        usage_error("+vp needs a positive integer (at most %s), got '%s'", "1073741823", text);
    return (int)v;
}

int env_take_vp_arg(int *argc, char **argv)
{
    int vp = 0, out = 1;
    const char *seen = NULL;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "+vp") == 0) {
            if (i + 1 >= *argc)
                usage_error("+vp needs a value%s%s", "", "");
            value = argv[++i];
        } else if (strncmp(a, "+vp", 3) == 0) {
            value = a + 3;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (seen)
            usage_error("+vp is given twice ('+vp %s' and '+vp %s'); give it once", seen, value);
        seen = value;
        vp = parse_vp(value);
    }
    argv[out] = NULL;
    *argc = out;
    return vp;
}
