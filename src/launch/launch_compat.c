/* Options of Open MPI's mpirun and MPICH's mpiexec that scripts pass out of
 * habit.  ampirun runs one node, so the placement ones change nothing: they
 * are accepted with a note on stderr rather than refused, so that a script
 * written for another MPI runs unchanged under ampirun (or under the mpirun
 * and mpiexec names of the compat folder).  A host list naming another
 * machine is an error, not a note: silently running that job here would be
 * wrong. */
#define _GNU_SOURCE
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum {
    TAKES_NOTHING,
    TAKES_VALUE,
    TAKES_TWO, /* --mca NAME VALUE, -genv NAME VALUE */
} compat_arity_t;

typedef enum {
    ACT_NOTE,    /* accepted, a note says it changes nothing here */
    ACT_SILENT,  /* accepted, already what ampirun does */
    ACT_GENV,    /* -genv/-env NAME VALUE: like -x NAME=VALUE */
    ACT_BIND,    /* --bind-to core|none (others: a note, then core) */
    ACT_HOSTS,   /* --host LIST: local names only */
    ACT_NPROCS,  /* -c N: Open MPI's other spelling of -np */
    ACT_WDIR,    /* -wdir DIR: the processes' working directory */
} compat_action_t;

typedef struct compat_option {
    const char *name; /* also matched with one '-' less or more, and as name=value */
    compat_arity_t arity;
    compat_action_t action;
} compat_option_t;

static const compat_option_t options[] = {
    {"--oversubscribe", TAKES_NOTHING, ACT_NOTE},
    {"--report-bindings", TAKES_NOTHING, ACT_NOTE},
    {"--use-hwthread-cpus", TAKES_NOTHING, ACT_NOTE},
    {"--display-map", TAKES_NOTHING, ACT_NOTE},
    {"--allow-run-as-root", TAKES_NOTHING, ACT_SILENT},
    {"--quiet", TAKES_NOTHING, ACT_SILENT},
    {"-genvall", TAKES_NOTHING, ACT_SILENT},
    {"-genvlist", TAKES_VALUE, ACT_SILENT},
    {"--map-by", TAKES_VALUE, ACT_NOTE},
    {"--rank-by", TAKES_VALUE, ACT_NOTE},
    {"-ppn", TAKES_VALUE, ACT_NOTE},
    {"--npernode", TAKES_VALUE, ACT_NOTE},
    {"-perhost", TAKES_VALUE, ACT_NOTE},
    {"--hostfile", TAKES_VALUE, ACT_NOTE},
    {"--machinefile", TAKES_VALUE, ACT_NOTE},
    {"-launcher", TAKES_VALUE, ACT_NOTE},
    {"-bootstrap", TAKES_VALUE, ACT_NOTE},
    {"--mca", TAKES_TWO, ACT_NOTE},
    {"--gmca", TAKES_TWO, ACT_NOTE},
    {"-genv", TAKES_TWO, ACT_GENV},
    {"-env", TAKES_TWO, ACT_GENV},
    {"--bind-to", TAKES_VALUE, ACT_BIND},
    {"-binding", TAKES_VALUE, ACT_BIND},
    {"--host", TAKES_VALUE, ACT_HOSTS},
    {"-hosts", TAKES_VALUE, ACT_HOSTS},
    {"-H", TAKES_VALUE, ACT_HOSTS},
    {"-c", TAKES_VALUE, ACT_NPROCS},
    {"--wdir", TAKES_VALUE, ACT_WDIR},
    {"-cwd", TAKES_VALUE, ACT_WDIR},
};

/* arg spells name, with one dash more or less ("-oversubscribe",
 * "--ppn"), or as name=value (*attached then points at the value). */
static bool spells(const char *arg, const char *name, const char **attached)
{
    const char *bare = name + strspn(name, "-");
    const char *a = arg + strspn(arg, "-");
    size_t dashes = (size_t)(a - arg);
    if (dashes < 1 || dashes > 2)
        return false;
    /* one-letter options (-H, -c) only with their own single dash */
    if (bare[1] == '\0' && (dashes != 1 || name[1] != bare[0]))
        return false;
    size_t len = strlen(bare);
    if (strncmp(a, bare, len) != 0)
        return false;
    if (a[len] == '\0') {
        *attached = NULL;
        return true;
    }
    if (a[len] == '=' && a[len + 1] != '\0') {
        *attached = a + len + 1;
        return true;
    }
    return false;
}

static bool is_local_host(const char *name, size_t len)
{
    char self[256] = "";
    if (gethostname(self, sizeof self) != 0)
        self[0] = '\0';
    self[sizeof self - 1] = '\0';
    size_t short_len = strcspn(self, ".");
    const char *local[] = {"localhost", "127.0.0.1", "::1", self};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (local[i][0] != '\0' && strlen(local[i]) == len && strncmp(local[i], name, len) == 0)
            return true;
    return self[0] != '\0' && len == short_len && strncmp(self, name, len) == 0;
}

/* "a,b:4,c" -- every name (slots after ':' ignored) must be this node. */
static int check_hosts(const char *option, const char *list)
{
    for (const char *p = list; *p != '\0';) {
        size_t item = strcspn(p, ",");
        size_t name = strcspn(p, ",:");
        if (name > 0 && !is_local_host(p, name)) {
            fprintf(stderr, "ampirun: %s %s: ampirun starts processes on this node only, not on "
                            "'%.*s'\n",
                    option, list, (int)name, p);
            return -1;
        }
        p += item;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int remember(launch_options_t *opt, char *text)
{
    char **grown = realloc(opt->owned, (opt->nowned + 1) * sizeof *grown);
    if (grown == NULL) {
        free(text);
        return -1;
    }
    opt->owned = grown;
    opt->owned[opt->nowned++] = text;
    return 0;
}

static int apply(const compat_option_t *o, const char *spelled, const char *v1, const char *v2,
                 launch_options_t *opt)
{
    switch (o->action) {
    case ACT_SILENT:
        return 0;
    case ACT_NOTE:
        fprintf(stderr, "ampirun: note: %s%s%s%s%s changes nothing here (one node); ignored\n",
                spelled, v1 ? " " : "", v1 ? v1 : "", v2 ? " " : "", v2 ? v2 : "");
        return 0;
    case ACT_GENV: {
        char *entry;
        if (asprintf(&entry, "%s=%s", v1, v2) < 0 || remember(opt, entry) != 0)
            return -1;
        return launch_add_export(opt, entry);
    }
    case ACT_BIND:
        if (strcmp(v1, "none") == 0) {
            opt->bind_none = true;
        } else {
            opt->bind_none = false;
            if (strcmp(v1, "core") != 0)
                fprintf(stderr, "ampirun: note: %s %s: each process is bound to a core of its "
                                "own, as with core\n",
                        spelled, v1);
        }
        return 0;
    case ACT_HOSTS:
        return check_hosts(spelled, v1);
    case ACT_NPROCS:
        return launch_parse_count(v1, "-np", &opt->nprocs);
    case ACT_WDIR:
        opt->wdir = v1;
        return 0;
    }
    return 0;
}

int launch_parse_compat(int argc, char **argv, int *i, launch_options_t *opt)
{
    const char *arg = argv[*i];
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        const compat_option_t *o = &options[k];
        const char *attached = NULL;
        if (!spells(arg, o->name, &attached))
            continue;
        const char *v1 = NULL, *v2 = NULL;
        if (o->arity == TAKES_NOTHING && attached != NULL)
            continue;
        if (o->arity != TAKES_NOTHING) {
            v1 = attached != NULL ? attached : *i + 1 < argc ? argv[++*i] : NULL;
            if (o->arity == TAKES_TWO)
                v2 = *i + 1 < argc ? argv[++*i] : NULL;
            if (v1 == NULL || (o->arity == TAKES_TWO && v2 == NULL)) {
                fprintf(stderr, "ampirun: %s needs %s\nTry 'ampirun --help' for more "
                                "information.\n",
                        arg, o->arity == TAKES_TWO ? "a name and a value" : "a value");
                return -1;
            }
        }
        /* the name as the user spelled it, without an attached value */
        char spelled[64];
        snprintf(spelled, sizeof spelled, "%.*s", (int)strcspn(arg, "="), arg);
        return apply(o, spelled, v1, v2, opt) == 0 ? 1 : -1;
    }
    return 0;
}
