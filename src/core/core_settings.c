#include "core/core_settings.h"
#include "util/util_log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KIB(n) ((long long)(n) << 10)
#define MIB(n) ((long long)(n) << 20)
#define GIB(n) ((long long)(n) << 30)

/* Keep README's settings table in step (test/unit/test_settings checks the
 * names and defaults). */
const core_setting_t core_settings[CORE_SET_COUNT] = {
    [CORE_SET_VP] = { "AMPI_VP", CORE_TYPE_INT, NULL, 1, INT_MAX / 2, NULL,
                      "MPI ranks in the job (V); unset: one per process", "README.md" },
    [CORE_SET_STACK_SIZE] = { "AMPI_STACK_SIZE", CORE_TYPE_SIZE, "8M", KIB(16), LLONG_MAX, NULL,
                              "stack of each rank, above a guard page", "README.md" },
    [CORE_SET_EAGER_LIMIT] = { "AMPI_EAGER_LIMIT", CORE_TYPE_SIZE, "8K", 0, MIB(1), NULL,
                               "largest message sent eagerly (envelope and data at once)", "README.md" },
    [CORE_SET_SHM] = { "AMPI_SHM", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                       "envelopes between processes of a node take shared-memory rings", "README.md" },
    [CORE_SET_SHM_MEDIUM] = { "AMPI_SHM_MEDIUM", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                              "8-32 KiB payloads streamed one way go through the rings", "README.md" },
    [CORE_SET_SHM_PREFETCHW] = { "AMPI_SHM_PREFETCHW", CORE_TYPE_INT, "8", 0, 16, NULL,
                                 "ring cells a streaming sender claims ahead (0: none)", "README.md" },
    [CORE_SET_CMA] = { "AMPI_CMA", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                       "receivers on a node read large host payloads with process_vm_readv", "README.md" },
    [CORE_SET_CMA_SPLIT] = { "AMPI_CMA_SPLIT", CORE_TYPE_SIZE, "64K", 0, LLONG_MAX, NULL,
                             "CMA messages this large are copied half by each side (0: never)", "README.md" },
    [CORE_SET_GPU] = { "AMPI_GPU", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                       "load the CUDA driver and handle device buffers", "README.md" },
    [CORE_SET_GPU_DEVICE] = { "AMPI_GPU_DEVICE", CORE_TYPE_INT, NULL, 0, INT_MAX, NULL,
                              "GPU ordinal of every process (unset: local rank modulo GPUs)", "README.md" },
    [CORE_SET_GPU_CACHE] = { "AMPI_GPU_CACHE", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                             "cache the memory kind of buffers (off: ask the driver each time)",
                             "README.md, docs/gpu.md" },
    [CORE_SET_GPU_VERBOSE] = { "AMPI_GPU_VERBOSE", CORE_TYPE_BOOL, "off", 0, 0, NULL,
                               "print the GPU chosen and whether the cache hooks work",
                               "README.md, docs/gpu.md" },
    [CORE_SET_NCCL] = { "AMPI_NCCL", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                        "device collectives may use NCCL", "README.md" },
    [CORE_SET_GPU_COLL_HOST_MAX] = { "AMPI_GPU_COLL_HOST_MAX", CORE_TYPE_SIZE, "1K", 0, GIB(1), NULL,
                                     "device Allreduce/Reduce up to this size run on host copies (0: never)",
                                     "README.md, docs/gpu.md" },
    [CORE_SET_GPU_IPC] = { "AMPI_GPU_IPC", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                           "device payloads between processes of a node take CUDA IPC", "README.md" },
    [CORE_SET_GPU_IPC_PUSH] = { "AMPI_GPU_IPC_PUSH", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                "on the IPC route the sender's GPU writes (off: the receiver reads)",
                                "README.md" },
    [CORE_SET_GPU_IPC_PUSH_MIN] = { "AMPI_GPU_IPC_PUSH_MIN", CORE_TYPE_SIZE, "512K", 0, LLONG_MAX, NULL,
                                    "smaller IPC messages are read by the receiver (no CTS/FIN)",
                                    "README.md" },
    [CORE_SET_GPU_IPC_CACHE] = { "AMPI_GPU_IPC_CACHE", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                 "keep CUDA IPC mappings of peers' buffers for reuse (off: unmap after each copy)",
                                 "README.md, docs/gpu.md" },
    [CORE_SET_GPU_POOL_AS_MANAGED] = { "AMPI_GPU_POOL_AS_MANAGED", CORE_TYPE_BOOL, "off", 0, 0, NULL,
                                       "tell UCX that stream-ordered pool memory is managed memory",
                                       "README.md, docs/gpu.md" },
    [CORE_SET_GPU_STAGE_CHUNK] = { "AMPI_GPU_STAGE_CHUNK", CORE_TYPE_SIZE, "1M", KIB(4), GIB(2), NULL,
                                   "chunk of the pipelined host staging of device payloads", "README.md" },
    [CORE_SET_GPU_DDT_CHUNK] = { "AMPI_GPU_DDT_CHUNK", CORE_TYPE_SIZE, "0", 0, GIB(1), NULL,
                                 "chunk of the pipelined packing of large device messages of types with gaps "
                                 "(0: pack whole)",
                                 "README.md, docs/gpu.md" },
    [CORE_SET_RMA_PROGRESS] = { "AMPI_RMA_PROGRESS", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                "a thread per process applies one-sided operations while its ranks compute",
                                "README.md" },
    [CORE_SET_RMA_SHM] = { "AMPI_RMA_SHM", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                           "MPI_Win_allocate memory is mapped by the node's other processes (loads and stores)",
                           "README.md" },
    [CORE_SET_NBC_PROGRESS] = { "AMPI_NBC_PROGRESS", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                "Ibcast, Iallreduce, Ialltoall, Igather(v), Iscatter(v), Iallgather(v) between processes progress while ranks compute",
                                "README.md" },
    [CORE_SET_NBC_PROGRESS_MIN] = { "AMPI_NBC_PROGRESS_MIN", CORE_TYPE_SIZE, "128K", 0, GIB(1), NULL,
                                    "those collectives move at least this many bytes per rank to progress so",
                                    "README.md" },
    [CORE_SET_PROGRESS_CPU] = { "AMPI_PROGRESS_CPU", CORE_TYPE_INT, "-1", -1, 1023, NULL,
                                "CPU of the process's progress threads (-1: the process's own); ampirun sets it "
                                "where there are two CPUs per process",
                                "README.md" },
    [CORE_SET_PROGRESS_SPIN] = { "AMPI_PROGRESS_SPIN", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                 "a collectives' progress thread on a CPU of its own polls every few microseconds "
                                 "while a collective is under way and wakes at once for the next (off: 50 us naps)",
                                 "README.md" },
    [CORE_SET_PROGRESS_SPIN_PAUSE] = { "AMPI_PROGRESS_SPIN_PAUSE", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                       "spin mode waits between looks on pause instructions (off: a plain loop)",
                                       "README.md" },
    [CORE_SET_PRIVATIZE] = { "AMPI_PRIVATIZE", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                             "programs built with ampicc -privatize load a copy per rank (off: per process)",
                             "README.md" },
    [CORE_SET_DEBUG] = { "AMPI_DEBUG", CORE_TYPE_BOOL, "off", 0, 0, NULL, "print debug messages",
                         "README.md" },
    [CORE_SET_WARN_GLOBALS] = { "AMPI_WARN_GLOBALS", CORE_TYPE_BOOL, "on", 0, 0, NULL,
                                "warn at MPI_Init when ranks share a process's writable globals", "README.md" },
};

/* AMPI_* names that are not settings of the library but belong to it, so
 * that finding them in the environment is no reason for a warning. */
static const char *const other_names[] = {
    "AMPI_LOCAL_RANK", "AMPI_LOCAL_SIZE",     /* set for the program by the library */
    "AMPI_LAUNCH_REPORT_FD",                  /* set for the processes by ampirun */
    "AMPI_CC", "AMPI_CXX", "AMPI_WRAPPER_NAME", /* ampicc, ampicxx */
    "AMPI_CONFIGURE_FLAGS", "AMPI_MAKE_JOBS", /* setup.sh */
    "AMPI_DEMO_ARGS",                         /* setup.sh */
    "AMPI_PREFIX", "AMPI_BUILD",              /* test.sh and the test runners */
    "AMPI_UNIT_TIMEOUT", "AMPI_RUNNER_TIMEOUT", /* test.sh */
    "AMPI_UCX_DIR",                           /* apps/jacobi3d and osu scripts */
    NULL,
};

/* ---- parsers ---- */

bool core_parse_bool(const char *text, bool *out)
{
    static const char *const no[] = { "0", "off", "no", "false" };
    static const char *const yes[] = { "1", "on", "yes", "true" };
    if (!text)
        return false;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (!strcasecmp(text, no[i])) {
            *out = false;
            return true;
        }
        if (!strcasecmp(text, yes[i])) {
            *out = true;
            return true;
        }
    }
    return false;
}

bool core_parse_int(const char *text, long long *out)
{
    if (!text)
        return false;
    const char *digits = *text == '-' ? text + 1 : text;
    if (*digits < '0' || *digits > '9')
        return false; /* no spaces, no '+', no empty */
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool core_parse_size(const char *text, size_t *out)
{
    if (!text || *text < '0' || *text > '9')
        return false; /* no sign, no spaces, no empty */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)(v << shift);
    return true;
}

bool core_parse_enum(const char *text, const char *const *words, long long *out)
{
    for (long long i = 0; text && words && words[i]; i++) {
        if (!strcasecmp(text, words[i])) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* "64K" for 65536, "1536" for 1536: the largest exact suffix. */
static void size_text(unsigned long long v, char *buf, size_t len)
{
    static const char suffix[] = "KMG";
    int i = -1;
    while (i < 2 && v && !(v & 1023)) {
        v >>= 10;
        i++;
    }
    if (i < 0)
        snprintf(buf, len, "%llu", v);
    else
        snprintf(buf, len, "%llu%c", v, suffix[i]);
}

static const char *accepted(const core_setting_t *s, char *buf, size_t len)
{
    char lo[32], hi[32];
    switch (s->type) {
    case CORE_TYPE_BOOL:
        return "0/1, off/on, no/yes or false/true (any case)";
    case CORE_TYPE_INT:
        snprintf(buf, len, "an integer from %lld to %lld", s->min, s->max);
        return buf;
    case CORE_TYPE_SIZE:
        size_text((unsigned long long)s->min, lo, sizeof lo);
        if (s->max == LLONG_MAX && s->min == 0)
            snprintf(buf, len, "a size in bytes, with an optional K, M or G suffix");
        else if (s->max == LLONG_MAX)
            snprintf(buf, len, "a size of at least %s bytes, with an optional K, M or G suffix", lo);
        else {
            size_text((unsigned long long)s->max, hi, sizeof hi);
            snprintf(buf, len, "a size from %s to %s bytes, with an optional K, M or G suffix", lo, hi);
        }
        return buf;
    case CORE_TYPE_ENUM: {
        size_t n = (size_t)snprintf(buf, len, "one of");
        for (size_t i = 0; s->words && s->words[i] && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s %s", i ? "," : "", s->words[i]);
        return buf;
    }
    case CORE_TYPE_STRING:
        break;
    }
    return "any text";
}

bool core_setting_parse(const core_setting_t *s, const char *text, core_value_t *out, char *err,
                        size_t errlen)
{
    core_value_t v = { .s = text };
    bool ok = false;
    switch (s->type) {
    case CORE_TYPE_BOOL:
        ok = core_parse_bool(text, &v.b);
        break;
    case CORE_TYPE_INT:
        ok = core_parse_int(text, &v.i) && v.i >= s->min && v.i <= s->max;
        break;
    case CORE_TYPE_SIZE:
        ok = core_parse_size(text, &v.z) && (unsigned long long)v.z >= (unsigned long long)s->min &&
             (unsigned long long)v.z <= (unsigned long long)s->max;
        break;
    case CORE_TYPE_ENUM:
        ok = core_parse_enum(text, s->words, &v.i);
        break;
    case CORE_TYPE_STRING:
        ok = text != NULL;
        break;
    }
    if (ok) {
        *out = v;
        return true;
    }
    char buf[160];
    snprintf(err, errlen, "%s=%s is not valid: use %s", s->name, text ? text : "(null)",
             accepted(s, buf, sizeof buf));
    return false;
}

const char *core_setting_text(const core_setting_t *s, const core_value_t *v, bool has, char *buf,
                              size_t len)
{
    if (!has)
        return "-";
    switch (s->type) {
    case CORE_TYPE_BOOL:
        return v->b ? "on" : "off";
    case CORE_TYPE_INT:
        snprintf(buf, len, "%lld", v->i);
        return buf;
    case CORE_TYPE_SIZE:
        size_text(v->z, buf, len);
        return buf;
    case CORE_TYPE_ENUM:
        return s->words[v->i];
    case CORE_TYPE_STRING:
        break;
    }
    return v->s;
}

/* ---- the environment ---- */

const char *core_setting_env(core_setting_id_t id)
{
    const char *v = getenv(core_settings[id].name);
    return v && *v ? v : NULL;
}

bool core_setting_known(const char *name)
{
    for (int i = 0; i < CORE_SET_COUNT; i++)
        if (!strcmp(name, core_settings[i].name))
            return true;
    for (int i = 0; other_names[i]; i++)
        if (!strcmp(name, other_names[i]))
            return true;
    return false;
}

/* Edits (insert, delete, change, swap of neighbours) from a to b, so that a
 * typo like AMPI_SHM_MEDUIM points at its setting.  Three rows of the
 * table only: this may run on a rank's small stack. */
static unsigned distance(const char *a, const char *b)
{
    enum { MAX = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX || lb >= MAX)
        return MAX;
    unsigned rows[3][MAX], *back2 = rows[0], *back = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        back[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned best = back[j - 1] + (a[i - 1] != b[j - 1]);
            if (back[j] + 1 < best)
                best = back[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && back2[j - 2] + 1 < best)
                best = back2[j - 2] + 1;
            cur[j] = best;
        }
        unsigned *t = back2;
        back2 = back;
        back = cur;
        cur = t;
    }
    return back[lb];
}

static void warn_unknown(const char *name)
{
    const char *near = NULL;
    unsigned best = 3; /* more edits than 2 is another word */
    for (int i = 0; i < CORE_SET_COUNT; i++) {
        unsigned d = distance(name, core_settings[i].name);
        if (d < best) {
            best = d;
            near = core_settings[i].name;
        }
    }
    if (near)
        util_warn("%s is not a setting of this library (ignored); did you mean %s?", name, near);
    else
        util_warn("%s is not a setting of this library (ignored; `ampi_info --all` lists them)", name);
}

int core_settings_scan(char *const *env, int *unknown)
{
    int bad = 0, odd = 0;
    for (size_t k = 0; env && env[k]; k++) {
        const char *eq = strchr(env[k], '=');
        if (strncmp(env[k], "AMPI_", 5) != 0 || !eq)
            continue;
        char name[128];
        size_t n = (size_t)(eq - env[k]);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, env[k], n);
        name[n] = '\0';
        int id = 0;
        while (id < CORE_SET_COUNT && strcmp(name, core_settings[id].name))
            id++;
        if (id == CORE_SET_COUNT) {
            if (!core_setting_known(name)) {
                warn_unknown(name);
                odd++;
            }
            continue;
        }
        core_value_t v;
        char err[320];
        if (eq[1] && !core_setting_parse(&core_settings[id], eq + 1, &v, err, sizeof err)) {
            util_error("%s", err);
            bad++;
        }
    }
    if (unknown)
        *unknown = odd;
    return bad;
}

extern char **environ;
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static int check_bad;

static void check_environ(void)
{
    check_bad = core_settings_scan(environ, NULL);
}

int core_settings_check(void)
{
    pthread_once(&check_once, check_environ);
    return check_bad;
}

/* The current value of id; false when it has none. */
static bool value_of(core_setting_id_t id, core_value_t *v)
{
    core_settings_check();
    const core_setting_t *s = &core_settings[id];
    const char *text = core_setting_env(id);
    if (!text)
        text = s->dflt;
    if (!text)
        return false;
    char err[320];
    if (!core_setting_parse(s, text, v, err, sizeof err))
        util_fatal("%s", err);
    return true;
}

bool core_setting_bool(core_setting_id_t id)
{
    core_value_t v = { 0 };
    return value_of(id, &v) && v.b;
}

size_t core_setting_size(core_setting_id_t id)
{
    core_value_t v = { 0 };
    value_of(id, &v);
    return v.z;
}

bool core_setting_int(core_setting_id_t id, long long *out)
{
    core_value_t v = { 0 };
    if (!value_of(id, &v))
        return false;
    *out = v.i;
    return true;
}
