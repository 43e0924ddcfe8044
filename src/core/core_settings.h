/* The library's settings: every AMPI_* environment variable it reads, in one
 * table (name, type, default, one-line description, where documented), read
 * through one parser, so that a setting is spelled the same way everywhere
 * and a misspelt value stops the program with a message instead of quietly
 * falling back to the default.  `ampi_info --all` prints the table;
 * README's settings table lists the same names and defaults (a unit test
 * compares them).
 *
 * Spellings, case-insensitive:
 *   bool    0/1, off/on, no/yes, false/true
 *   int     a decimal integer within the setting's range
 *   size    bytes, optionally with a K, M or G suffix (1024-based) and a B
 *   enum    one of the setting's words
 *   string  anything
 * An empty value counts as unset (the default applies), as in most shells'
 * `VAR= program`. */
#ifndef AMPI_CORE_SETTINGS_H
#define AMPI_CORE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    CORE_TYPE_BOOL,
    CORE_TYPE_INT,
    CORE_TYPE_SIZE,
    CORE_TYPE_ENUM,
    CORE_TYPE_STRING,
} core_type_t;

/* One id per row of core_settings[], in the same order. */
typedef enum {
    CORE_SET_VP,
    CORE_SET_STACK_SIZE,
    CORE_SET_EAGER_LIMIT,
    CORE_SET_SHM,
    CORE_SET_SHM_MEDIUM,
    CORE_SET_SHM_PREFETCHW,
    CORE_SET_CMA,
    CORE_SET_CMA_SPLIT,
    CORE_SET_GPU,
    CORE_SET_GPU_DEVICE,
    CORE_SET_GPU_CACHE,
    CORE_SET_GPU_VERBOSE,
    CORE_SET_NCCL,
    CORE_SET_GPU_COLL_HOST_MAX,
    CORE_SET_GPU_IPC,
    CORE_SET_GPU_IPC_PUSH,
    CORE_SET_GPU_IPC_PUSH_MIN,
    CORE_SET_GPU_IPC_CACHE,
    CORE_SET_GPU_POOL_AS_MANAGED,
    CORE_SET_GPU_STAGE_CHUNK,
    CORE_SET_GPU_DDT_CHUNK,
    CORE_SET_RMA_PROGRESS,
    CORE_SET_RMA_SHM,
    CORE_SET_NBC_PROGRESS,
    CORE_SET_NBC_PROGRESS_MIN,
    CORE_SET_PROGRESS_CPU,
    CORE_SET_PROGRESS_SPIN,
    CORE_SET_PROGRESS_SPIN_PAUSE,
    CORE_SET_PRIVATIZE,
    CORE_SET_DEBUG,
    CORE_SET_WARN_GLOBALS,
    CORE_SET_COUNT
} core_setting_id_t;

typedef struct {
    const char *name;           /* AMPI_... */
    core_type_t type;
    const char *dflt;           /* as a user would spell it; NULL: no value */
    long long min, max;         /* int and size: the accepted range */
    const char *const *words;   /* enum: the accepted words, NULL-terminated */
    const char *doc;            /* one line */
    const char *where;          /* files that document it, comma-separated */
} core_setting_t;

extern const core_setting_t core_settings[CORE_SET_COUNT];

/* A parsed value: b for bool, i for int and enum (the word's index), z for
 * size, s for string (points into the text parsed). */
typedef struct {
    bool b;
    long long i;
    size_t z;
    const char *s;
} core_value_t;

/* The parsers; each returns false on anything but its spellings. */
bool core_parse_bool(const char *text, bool *out);
bool core_parse_int(const char *text, long long *out);
bool core_parse_size(const char *text, size_t *out);
bool core_parse_enum(const char *text, const char *const *words, long long *out);

/* Parses text as setting s, range included.  On failure writes into err a
 * message naming the variable, the value and the accepted spellings. */
bool core_setting_parse(const core_setting_t *s, const char *text, core_value_t *out, char *err,
                        size_t errlen);

/* The environment's value of a setting, NULL when unset or empty. */
const char *core_setting_env(core_setting_id_t id);

/* Current values (environment, else default), read on every call (callers
 * on hot paths keep them).  The first call checks the whole environment
 * (core_settings_check); a bad value is fatal. */
bool core_setting_bool(core_setting_id_t id);
size_t core_setting_size(core_setting_id_t id);
/* false when the setting has no value (unset, and no default) */
bool core_setting_int(core_setting_id_t id, long long *out);

/* The value as `ampi_info` shows it ("on", "8K", "-"); buf of 32 bytes or
 * more. */
const char *core_setting_text(const core_setting_t *s, const core_value_t *v, bool has, char *buf,
                              size_t len);

/* Whether name is an AMPI_* variable this library knows: a setting, one it
 * sets for the programs it starts, or one of the build and test scripts. */
bool core_setting_known(const char *name);

/* Checks every AMPI_* variable of env: each bad value is reported on stderr
 * and counted (the return value), each unknown name is warned about and
 * counted in *unknown (may be NULL). */
int core_settings_scan(char *const *env, int *unknown);

/* core_settings_scan(environ) once per process (later calls print nothing
 * and return the same count): the start of a process calls it and stops
 * when a value is bad, before any rank runs. */
int core_settings_check(void);

#endif
