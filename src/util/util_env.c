#include "util/util_env.h"
#include "util/util_log.h"

#include <errno.h>
#include <stdlib.h>

bool util_parse_size(const char *s, size_t *out)
{
    if (!s || !*s)
        return false;
    if (*s < '0' || *s > '9')
        return false; /* no sign, no spaces */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || (shift && v > (~0ULL >> shift)))
        return false;
    *out = (size_t)(v << shift);
    return true;
}

size_t util_env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    size_t v;
    if (!s)
        return dflt;
    if (!util_parse_size(s, &v)) {
        util_warn("ignoring %s=%s: not a size", name, s);
        return dflt;
    }
    return v;
}

long util_env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end) {
        util_warn("ignoring %s=%s: not a number", name, s);
        return dflt;
    }
    return v;
}
