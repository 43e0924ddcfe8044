/* Find the /proc/self/maps line that holds an address.  Runs under the cache
 * mutex, possibly while another thread waits in a munmap hook, so it uses
 * plain system calls and a stack buffer: no stdio, no malloc. */
#include "gpu/gpu_cache.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const char *parse_hex(const char *s, const char *end, uintptr_t *v)
{
    uintptr_t x = 0;
    const char *p = s;
    for (; p < end; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else
            break;
        x = x * 16 + (uintptr_t)d;
    }
    *v = x;
    return p == s ? NULL : p;
}

/* One line: "start-end perms offset dev inode   path".  Returns 1 when it
 * holds ptr (and fills *ok), 0 when it lies below ptr, -1 when above. */
static int parse_line(const char *line, const char *end, uintptr_t ptr, uintptr_t *start_out,
                      uintptr_t *end_out, bool *ok)
{
    uintptr_t start, stop;
    const char *p = parse_hex(line, end, &start);
    if (!p || p >= end || *p != '-')
        return 0;
    p = parse_hex(p + 1, end, &stop);
    if (!p)
        return 0;
    if (ptr < start)
        return -1;
    if (ptr >= stop)
        return 0;
    *start_out = start;
    *end_out = stop;
    /* Ordinary memory has some access right.  The driver's reservation of
     * device address space is PROT_NONE and managed/BAR memory is a mapping
     * of /dev/nvidia*: both may later hold device allocations without any
     * unmap that we would hear about, so they are never cached as host. */
    bool access = false;
    if (p + 4 <= end)
        access = p[1] == 'r' || p[2] == 'w' || p[3] == 'x';
    /* The path is the 6th field, after runs of spaces. */
    int field = 1;
    while (p < end && field < 6) {
        while (p < end && *p == ' ')
            p++;
        if (++field < 6)
            while (p < end && *p != ' ')
                p++;
    }
    static const char nvidia[] = "/dev/nvidia";
    bool device_file =
        (size_t)(end - p) >= sizeof nvidia - 1 && memcmp(p, nvidia, sizeof nvidia - 1) == 0;
    *ok = access && !device_file;
    return 1;
}

bool gpu_hostmap_find(uintptr_t ptr, uintptr_t *start, uintptr_t *end)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[4096];
    size_t have = 0;
    bool found = false, skipping = false, eof = false;
    while (!eof) {
        ssize_t got = read(fd, buf + have, sizeof buf - have);
        if (got < 0)
            break;
        if (got == 0)
            eof = true;
        have += (size_t)got;
        size_t pos = 0;
        for (;;) {
            char *nl = memchr(buf + pos, '\n', have - pos);
            if (!nl && !(eof && pos < have) && !(pos == 0 && have == sizeof buf))
                break; /* incomplete line: read more */
            char *line_end = nl ? nl : buf + have;
            if (skipping) {
                skipping = false; /* the rest of an overlong line */
            } else {
                bool ok = false;
                int r = parse_line(buf + pos, line_end, ptr, start, end, &ok);
                if (r != 0) {
                    found = r > 0 && ok;
                    goto out;
                }
            }
            if (!nl) {
                /* A line longer than the buffer (a very long path): the
                 * fields we need were at its start; drop the rest. */
                skipping = !eof;
                pos = have;
                break;
            }
            pos = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + pos, have - pos);
        have -= pos;
    }
out:
    close(fd);
    return found;
}
