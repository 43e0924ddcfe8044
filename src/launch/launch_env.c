/* Environment arrays for the children and program lookup.  The arrays are
 * built before fork because only async-signal-safe calls may run between
 * fork and exec in a process that has threads (PMIx's). */
#define _GNU_SOURCE
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t env_count(char *const *env)
{
    size_t n = 0;
    while (env != NULL && env[n] != NULL)
        n++;
    return n;
}

char **launch_env_copy(char *const *env)
{
    size_t n = env_count(env);
    char **copy = calloc(n + 1, sizeof *copy);
    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(env[i]);
        if (copy[i] == NULL) {
            launch_env_free(copy);
            return NULL;
        }
    }
    return copy;
}

void launch_env_free(char **env)
{
    if (env == NULL)
        return;
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

static ssize_t env_find(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
        if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
            return (ssize_t)i;
    return -1;
}

const char *launch_env_get(char *const *env, const char *name)
{
    ssize_t i = env_find(env, name);
    return i < 0 ? NULL : env[i] + strlen(name) + 1;
}

int launch_env_set(char ***env, const char *name, const char *value)
{
    char *entry;
    if (asprintf(&entry, "%s=%s", name, value) < 0)
        return -1;
    ssize_t i = env_find(*env, name);
    if (i >= 0) {
        free((*env)[i]);
        (*env)[i] = entry;
        return 0;
    }
    size_t n = env_count(*env);
    char **grown = realloc(*env, (n + 2) * sizeof *grown);
    if (grown == NULL) {
        free(entry);
        return -1;
    }
    grown[n] = entry;
    grown[n + 1] = NULL;
    *env = grown;
    return 0;
}

int launch_env_apply_exports(char ***env, char *const *exports)
{
    for (size_t i = 0; exports != NULL && exports[i] != NULL; i++) {
        const char *eq = strchr(exports[i], '=');
        if (eq == NULL) {
            /* mpirun -x NAME exports the launcher's value; ours is already
             * inherited, so only a missing variable needs a word. */
            if (getenv(exports[i]) == NULL)
                launch_say("warning: -x %s: not set in ampirun's environment", exports[i]);
            continue;
        }
        char *name = strndup(exports[i], (size_t)(eq - exports[i]));
        if (name == NULL)
            return -1;
        int rc = launch_env_set(env, name, eq + 1);
        free(name);
        if (rc != 0)
            return -1;
    }
    return 0;
}

char *launch_find_program(const char *prog, const char *path_var)
{
    if (strchr(prog, '/') != NULL)
        return strdup(prog);
    /* POSIX: an unset PATH means an implementation-defined default. */
    const char *path = path_var != NULL ? path_var : "/usr/local/bin:/usr/bin:/bin";
    while (1) {
        const char *colon = strchr(path, ':');
        size_t dirlen = colon != NULL ? (size_t)(colon - path) : strlen(path);
        char *candidate;
        /* An empty PATH element means the current directory. */
        if (asprintf(&candidate, "%.*s%s%s", (int)dirlen, path, dirlen ? "/" : "./", prog) < 0)
            return NULL;
        struct stat st;
        if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
            return candidate;
        free(candidate);
        if (colon == NULL)
            return NULL;
        path = colon + 1;
    }
}
