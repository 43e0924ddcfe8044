/* MPI_Info objects: ordered (key, value) string lists behind int handles.
 *
 * The handle table is process-wide; ranks of a process are user-level
 * threads of one OS thread and none of these functions yields, so no locks.
 * Handle 0 is MPI_INFO_NULL, 1 MPI_INFO_ENV (built on first use, read-only
 * because all ranks of the process share it), user objects start at 2. */
#include "pt2pt/p2p_api.h"
#include "rank/rank_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct info_entry {
    char *key, *val;
} info_entry_t;

typedef struct info_obj {
    int n, cap;
    info_entry_t *e; /* insertion order: MPI_Info_get_nthkey */
} info_obj_t;

#define INFO_FIRST_USER 2

static info_obj_t **table; /* table[h - INFO_FIRST_USER] */
static int table_len;
static info_obj_t env_info;
static bool env_ready;

static int set_entry(info_obj_t *o, const char *key, const char *val);

/* MPI_INFO_ENV: what MPI 3.1 suggests where the library knows it, the same
 * before MPI_Init, between and after MPI_Finalize (MPI_Info_create_env may
 * be called at any of them): no "command"/"argv" (ranks do not see the
 * launcher's command line; MPI_Info_create_env adds its arguments'), no
 * "thread_level" (the launcher requests none). */
static void env_build(void)
{
    if (env_ready)
        return;
    char buf[1024];
    struct utsname u;
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        set_entry(&env_info, "host", buf);
    }
    if (uname(&u) == 0)
        set_entry(&env_info, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        set_entry(&env_info, "wdir", buf);
    if (core_proc.nranks > 0) { /* the launcher's, known from the start */
        snprintf(buf, sizeof buf, "%d", core_proc.nranks);
        set_entry(&env_info, "maxprocs", buf);
    }
    env_ready = true;
}

static info_obj_t *lookup(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        env_build();
        return &env_info;
    }
    if (h < INFO_FIRST_USER || h - INFO_FIRST_USER >= table_len)
        return NULL;
    return table[h - INFO_FIRST_USER];
}

static int find(const info_obj_t *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->e[i].key, key) == 0)
            return i;
    return -1;
}

static int set_entry(info_obj_t *o, const char *key, const char *val)
{
    char *v = strdup(val);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = find(o, key);
    if (i >= 0) { /* replacing keeps the key's position */
        free(o->e[i].val);
        o->e[i].val = v;
        return MPI_SUCCESS;
    }
    char *k = strdup(key);
    if (k && o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 8;
        info_entry_t *e = realloc(o->e, (size_t)cap * sizeof *e);
        if (e) {
            o->e = e;
            o->cap = cap;
        }
    }
    if (!k || o->n == o->cap) {
        free(k);
        free(v);
        return MPI_ERR_NO_MEM;
    }
    o->e[o->n++] = (info_entry_t){ k, v };
    return MPI_SUCCESS;
}

static void destroy(info_obj_t *o)
{
    for (int i = 0; i < o->n; i++) {
        free(o->e[i].key);
        free(o->e[i].val);
    }
    free(o->e);
    free(o);
}

/* A fresh handle for o (a free slot is reused), or MPI_INFO_NULL. */
static MPI_Info add_handle(info_obj_t *o)
{
    for (int i = 0; i < table_len; i++)
        if (!table[i]) {
            table[i] = o;
            return (MPI_Info)(i + INFO_FIRST_USER);
        }
    info_obj_t **t = realloc(table, (size_t)(table_len + 16) * sizeof *t);
    if (!t)
        return MPI_INFO_NULL;
    memset(t + table_len, 0, 16 * sizeof *t);
    table = t;
    table[table_len] = o;
    table_len += 16;
    return (MPI_Info)(table_len - 16 + INFO_FIRST_USER);
}

/* Keys and values must be shorter than MPI_MAX_INFO_KEY / _VAL, so that
 * they and their terminator fit a buffer of that size, the size codes
 * written for Open MPI allocate (MPICH allows one character more). */
static int check_key(const char *key)
{
    if (!key)
        return MPI_ERR_INFO_KEY;
    size_t len = strnlen(key, MPI_MAX_INFO_KEY);
    return len == 0 || len >= MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

/* Common prologue: O is the object behind handle H, or the function
 * returns MPI_ERR_INFO. */
#define INFO_LOOKUP(O, H, FN)                          \
    info_obj_t *O = lookup(H);                         \
    if (!O)                                            \
        return core_error(NULL, MPI_ERR_INFO, FN)

#pragma weak MPI_Info_create = PMPI_Info_create
int PMPI_Info_create(MPI_Info *info)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    if (!info)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_create");
    info_obj_t *o = calloc(1, sizeof *o);
    MPI_Info h = o ? add_handle(o) : MPI_INFO_NULL;
    if (h == MPI_INFO_NULL) {
        free(o);
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_create");
    }
    *info = h;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Info_set";
    if (info == MPI_INFO_ENV)
        return core_error_msg(NULL, MPI_ERR_INFO, fn, "MPI_INFO_ENV is read-only");
    INFO_LOOKUP(o, info, fn);
    int err = check_key(key);
    if (!err && (!value || strnlen(value, MPI_MAX_INFO_VAL) >= MPI_MAX_INFO_VAL))
        err = MPI_ERR_INFO_VALUE;
    if (!err)
        err = set_entry(o, key, value);
    return err ? core_error(NULL, err, fn) : MPI_SUCCESS;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Info_get";
    INFO_LOOKUP(o, info, fn);
    int err = check_key(key);
    if (err)
        return core_error(NULL, err, fn);
    if (valuelen < 0 || !value || !flag)
        return core_error(NULL, MPI_ERR_ARG, fn);
    int i = find(o, key);
    *flag = i >= 0;
    if (i >= 0) { /* at most valuelen characters, then the terminator */
        size_t len = strlen(o->e[i].val);
        if (len > (size_t)valuelen)
            len = (size_t)valuelen;
        memcpy(value, o->e[i].val, len);
        value[len] = '\0';
    }
    return MPI_SUCCESS;
}

/* MPI 4.0 9.4: *buflen in: room in value, terminator included; out: the
 * room the whole value needs.  A value that does not fit is cut short. */
#pragma weak MPI_Info_get_string = PMPI_Info_get_string
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    const char *fn = "MPI_Info_get_string";
    INFO_LOOKUP(o, info, fn);
    int err = check_key(key);
    if (err)
        return core_error(NULL, err, fn);
    if (!buflen || *buflen < 0 || (*buflen > 0 && !value) || !flag)
        return core_error(NULL, MPI_ERR_ARG, fn);
    int i = find(o, key);
    *flag = i >= 0;
    if (i >= 0) {
        size_t len = strlen(o->e[i].val);
        if (*buflen > 0) {
            size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
            memcpy(value, o->e[i].val, n);
            value[n] = '\0';
        }
        *buflen = (int)len + 1;
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Info_get_valuelen";
    INFO_LOOKUP(o, info, fn);
    int err = check_key(key);
    if (err)
        return core_error(NULL, err, fn);
    if (!valuelen || !flag)
        return core_error(NULL, MPI_ERR_ARG, fn);
    int i = find(o, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(o->e[i].val);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    RANK_HOST_GUARD;
    INFO_LOOKUP(o, info, "MPI_Info_get_nkeys");
    if (!nkeys)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys");
    *nkeys = o->n;
    return MPI_SUCCESS;
}

/* key needs room for MPI_MAX_INFO_KEY bytes, the terminator included. */
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    RANK_HOST_GUARD;
    INFO_LOOKUP(o, info, "MPI_Info_get_nthkey");
    if (n < 0 || n >= o->n || !key)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
    strcpy(key, o->e[n].key); /* keys were checked to fit when set */
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Info_delete";
    if (info == MPI_INFO_ENV)
        return core_error_msg(NULL, MPI_ERR_INFO, fn, "MPI_INFO_ENV is read-only");
    INFO_LOOKUP(o, info, fn);
    int err = check_key(key);
    if (err)
        return core_error(NULL, err, fn);
    int i = find(o, key);
    if (i < 0)
        return core_error(NULL, MPI_ERR_INFO_NOKEY, fn);
    free(o->e[i].key);
    free(o->e[i].val);
    memmove(&o->e[i], &o->e[i + 1], (size_t)(o->n - i - 1) * sizeof o->e[0]);
    o->n--;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    RANK_HOST_GUARD;
    INFO_LOOKUP(o, info, "MPI_Info_dup");
    if (!newinfo)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_dup");
    info_obj_t *copy = calloc(1, sizeof *copy);
    int err = copy ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; i < o->n && !err; i++)
        err = set_entry(copy, o->e[i].key, o->e[i].val);
    MPI_Info h = err ? MPI_INFO_NULL : add_handle(copy);
    if (h == MPI_INFO_NULL) {
        if (copy)
            destroy(copy);
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup");
    }
    *newinfo = h;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_free = PMPI_Info_free
int PMPI_Info_free(MPI_Info *info)
{
    RANK_HOST_GUARD;
    if (!info)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_free");
    if (*info == MPI_INFO_ENV || !lookup(*info))
        return core_error(NULL, MPI_ERR_INFO, "MPI_Info_free");
    destroy(table[*info - INFO_FIRST_USER]);
    table[*info - INFO_FIRST_USER] = NULL;
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* MPI 4.0 9.4: the keys of MPI_INFO_ENV, as a new object of the caller's,
 * with "command" and "argv" from the arguments where given. */
#pragma weak MPI_Info_create_env = PMPI_Info_create_env
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (!info)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Info_create_env");
    int err = PMPI_Info_dup(MPI_INFO_ENV, info);
    if (err || argc <= 0 || !argv || !argv[0])
        return err;
    info_obj_t *o = lookup(*info);
    err = set_entry(o, "command", argv[0]);
    size_t len = 0;
    for (int i = 1; i < argc && argv[i]; i++)
        len += strlen(argv[i]) + 1;
    if (!err && len > 0) { /* the arguments after the command, separated by spaces */
        char *all = malloc(len), *p = all;
        for (int i = 1; all && i < argc && argv[i]; i++)
            p += sprintf(p, "%s%s", i > 1 ? " " : "", argv[i]);
        err = all ? set_entry(o, "argv", all) : MPI_ERR_NO_MEM;
        free(all);
    }
    return err ? core_error(NULL, err, "MPI_Info_create_env") : MPI_SUCCESS;
}
