/*
 * Interfaces shared by the suite's library files only: osu_common.c,
 * osu_options.c and osu_device.c, and the collective suite's osu_coll.c and
 * osu_coll_options.c, which reuse the integer parsing, the launcher's local
 * rank, GPU selection, buffers and the data pattern from here rather than
 * keeping copies. Benchmark programs include osu_common.h (or osu_coll.h)
 * alone.
 */
#ifndef OSU_INTERNAL_H
#define OSU_INTERNAL_H

#include "osu_common.h"

#include <stddef.h>

/* Ordered by severity: ranks agree on the worst one (MPI_MAX). */
enum osu_status {
    OSU_STATUS_OK = 0,
    OSU_STATUS_HELP,
    OSU_STATUS_VERSION,
    OSU_STATUS_NO_CUDA,
    OSU_STATUS_BAD_USAGE,
    OSU_STATUS_DEVICE_FAILED,
};

/* Outcome of parsing or device setup, with the text rank 0 prints. */
struct osu_parse {
    enum osu_status status;
    char message[256];
};

/* osu_options.c */
void osu_parse_options(const struct osu_benchmark *bench, int argc,
                       char **argv, struct osu_options *opt,
                       struct osu_parse *res);
void osu_print_usage(const struct osu_benchmark *bench);
/* Whole-string decimal integer in [lo, hi]; returns 0 on success. */
int osu_parse_integer(const char *text, long long lo, long long hi,
                      long long *out);

/* osu_device.c */
/* Buffers of at least 'bytes' (never fewer than 64) in host or device
 * memory; NULL on failure, after a message on stderr. */
void *osu_buffer_alloc(char placement, size_t bytes);
void osu_buffer_free(char placement, void *buf);
/* Writes the pattern that 'sender' sends for messages of 'size' bytes. */
void osu_buffer_fill_pattern(char placement, void *buf, size_t size,
                             int sender);
/* Sets every byte to 'value' (receive buffers start as 'b', as in OSU). */
void osu_buffer_set(char placement, void *buf, int value, size_t bytes);
/* Copies 'bytes' from a host image into buf (upload) or from buf into a
 * host image (download); aborts every rank if a device copy fails. */
void osu_buffer_upload(char placement, void *dst, const void *src,
                       size_t bytes);
void osu_buffer_download(char placement, void *dst, const void *src,
                         size_t bytes);
/* Byte i of what 'sender' sends at 'size': a mixed hash of all three, so
 * a shifted, truncated, stale or misrouted message does not match. */
unsigned char osu_pattern_byte(size_t i, size_t size, int sender);
/* Counts bytes that differ from what 'sender' sends for 'size' bytes. */
long osu_buffer_mismatches(char placement, const void *buf, size_t size,
                           int sender);
/* Node-local rank from the launcher's environment, or -1 if none says. */
int osu_local_rank_from_env(void);
/* Selects device (hint % device count) and creates its context; on
 * failure sets res to OSU_STATUS_DEVICE_FAILED. Needs -DOSU_CUDA. */
void osu_select_device(int hint, struct osu_parse *res);

#endif /* OSU_INTERNAL_H */
