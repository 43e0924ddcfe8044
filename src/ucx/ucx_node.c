/* Which processes share this node, as the routes need it (ucx_node.h). */
#include "ucx/ucx_node.h"
#include "ucx/ucx_pmix.h"
#include "util/util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_ID_KEY "ampi.node"

/* The first line of a small file of /proc ("" when it cannot be read). */
static void first_line(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(out, (int)cap, f))
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* The namespace a /proc/self/ns link names ("ipc:[4026531839]"). */
static void ns_of(const char *kind, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
    ssize_t n = readlink(path, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

void ucx_node_identity(char *out, size_t cap)
{
    char host[256] = "", boot[64], ipc[64], mnt[64], pid[64];
    gethostname(host, sizeof host - 1);
    first_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    ns_of("ipc", ipc, sizeof ipc);
    ns_of("mnt", mnt, sizeof mnt);
    ns_of("pid", pid, sizeof pid);
    snprintf(out, cap, "%s|%s|%s|%s|%s", host, boot, ipc, mnt, pid);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int ucx_node_exchange(int proc, int nprocs, bool *local, int *nnodes)
{
    char id[512];
    ucx_node_identity(id, sizeof id);
    if (ucx_pmix_put(NODE_ID_KEY, id, strlen(id) + 1) != 0 || ucx_pmix_fence(true) != 0)
        return -1;
    char **ids = calloc((size_t)nprocs, sizeof *ids);
    if (!ids)
        util_fatal("out of memory for the node identities of %d processes", nprocs);
    int rc = 0;
    for (int p = 0; p < nprocs && rc == 0; p++) {
        size_t len = 0;
        if (p == proc) {
            ids[p] = strdup(id);
        } else if (ucx_pmix_get(p, NODE_ID_KEY, (void **)&ids[p], &len) != 0 || len == 0 ||
                   ids[p][len - 1] != '\0') {
            rc = -1;
            break;
        }
        if (!ids[p])
            util_fatal("out of memory");
        local[p] = strcmp(ids[p], id) == 0;
    }
    if (rc == 0) {
        qsort(ids, (size_t)nprocs, sizeof *ids, cmp_str);
        *nnodes = 1;
        for (int p = 1; p < nprocs; p++)
            *nnodes += strcmp(ids[p], ids[p - 1]) != 0;
    }
    for (int p = 0; p < nprocs; p++)
        free(ids[p]);
    free(ids);
    return rc;
}
