/* Forwarding of the processes' stdout/stderr, line by line.
 * Only complete lines leave the buffer, so lines of different processes
 * never interleave mid-line; a line longer than LINE_MAX_FORWARD is passed
 * on in pieces rather than buffered without bound. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define LINE_MAX_FORWARD (1024 * 1024)

/* Errors writing our own stdout/stderr (a closed pipe) are dropped: the job
 * keeps running and its output is lost, as with mpirun. */
static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

void launch_say(const char *fmt, ...)
{
    char msg[2048];
    int off = snprintf(msg, sizeof msg, "ampirun: ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + off, sizeof msg - (size_t)off - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)off + (n < 0 ? 0 : (size_t)n);
    if (len > sizeof msg - 2)
        len = sizeof msg - 2;
    msg[len++] = '\n';
    write_all(STDERR_FILENO, msg, len);
}

void launch_linebuf_init(launch_linebuf_t *lb)
{
    lb->data = NULL;
    lb->len = lb->cap = 0;
}

void launch_linebuf_free(launch_linebuf_t *lb)
{
    free(lb->data);
    launch_linebuf_init(lb);
}

/* Write lines [text, text+len) to out_fd, each prefixed when rank >= 0,
 * with one write call for the whole batch. */
static void emit(int out_fd, int rank, const char *text, size_t len)
{
    if (rank < 0) {
        write_all(out_fd, text, len);
        return;
    }
    char prefix[24];
    int plen = snprintf(prefix, sizeof prefix, "[%d] ", rank);
    size_t lines = 1;
    for (size_t i = 0; i + 1 < len; i++)
        lines += text[i] == '\n';
    char *out = malloc(len + lines * (size_t)plen);
    if (out == NULL) {
        write_all(out_fd, text, len); /* better untagged than lost */
        return;
    }
    size_t o = 0;
    bool line_start = true;
    for (size_t i = 0; i < len; i++) {
        if (line_start) {
            memcpy(out + o, prefix, (size_t)plen);
            o += (size_t)plen;
        }
        out[o++] = text[i];
        line_start = text[i] == '\n';
    }
    write_all(out_fd, out, o);
    free(out);
}

bool launch_forward(int fd, launch_linebuf_t *lb, int out_fd, int rank)
{
    if (lb->cap - lb->len < READ_CHUNK) {
        size_t cap = lb->len + READ_CHUNK;
        char *grown = realloc(lb->data, cap);
        if (grown == NULL) {
            /* Keep going with what we have: flush it to make room. */
            emit(out_fd, rank, lb->data, lb->len);
            lb->len = 0;
            if (lb->cap == 0)
                return false;
        } else {
            lb->data = grown;
            lb->cap = cap;
        }
    }
    ssize_t n;
    do
        n = read(fd, lb->data + lb->len, lb->cap - lb->len);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return true;
    if (n <= 0) {
        /* End of the stream: a last line without newline goes out as is. */
        if (lb->len > 0)
            emit(out_fd, rank, lb->data, lb->len);
        lb->len = 0;
        return false;
    }
    size_t old = lb->len;
    lb->len += (size_t)n;

    /* Only the new bytes can hold the last newline. */
    size_t complete = 0;
    for (size_t i = lb->len; i > old; i--) {
        if (lb->data[i - 1] == '\n') {
            complete = i;
            break;
        }
    }
    if (complete == 0 && lb->len >= LINE_MAX_FORWARD)
        complete = lb->len;
    if (complete > 0) {
        emit(out_fd, rank, lb->data, complete);
        memmove(lb->data, lb->data + complete, lb->len - complete);
        lb->len -= complete;
    }
    return true;
}
