/* The settings table and its parser (src/core/core_settings.c): every
 * spelling each type accepts, bad values refused with a message that names
 * the variable and the accepted spellings, unknown AMPI_* names warned about
 * once, and README's settings table listing exactly the table's names with
 * the same defaults. */
#include "core/core_settings.h"
#include "unit_check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AMPI_SRCDIR
#error "AMPI_SRCDIR (the source tree, for README.md) is set by unit.am"
#endif

static void test_bool(void)
{
    static const struct { const char *text; bool want; } good[] = {
        { "0", false }, { "1", true }, { "off", false }, { "on", true }, { "no", false },
        { "yes", true }, { "false", false }, { "true", true }, { "OFF", false }, { "On", true },
        { "NO", false }, { "Yes", true }, { "FaLsE", false }, { "TRUE", true },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        bool v = !good[i].want;
        CHECK(core_parse_bool(good[i].text, &v) && v == good[i].want, "\"%s\"", good[i].text);
    }
    static const char *const bad[] = { "", "2", "-1", "01", "onn", " on", "yes ", "y", "n",
                                       "enable", "disabled", "truee", NULL };
    for (int i = 0; bad[i]; i++) {
        bool v;
        CHECK(!core_parse_bool(bad[i], &v), "\"%s\" taken as a bool", bad[i]);
    }
    bool v;
    CHECK(!core_parse_bool(NULL, &v));
}

static void test_int(void)
{
    static const struct { const char *text; long long want; } good[] = {
        { "0", 0 }, { "7", 7 }, { "16", 16 }, { "-3", -3 }, { "0100", 100 },
        { "9223372036854775807", LLONG_MAX },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        long long v = -1;
        CHECK(core_parse_int(good[i].text, &v) && v == good[i].want, "\"%s\": %lld", good[i].text, v);
    }
    static const char *const bad[] = { "", "-", "+1", " 1", "1 ", "1x", "0x10", "1.0", "8K",
                                       "9223372036854775808", "on", NULL };
    for (int i = 0; bad[i]; i++) {
        long long v;
        CHECK(!core_parse_int(bad[i], &v), "\"%s\" taken as an int", bad[i]);
    }
}

static void test_size(void)
{
    static const struct { const char *text; size_t want; } good[] = {
        { "0", 0 }, { "123", 123 }, { "64K", 65536 }, { "64k", 65536 }, { "64KB", 65536 },
        { "64kb", 65536 }, { "8M", 8u << 20 }, { "8m", 8u << 20 }, { "1G", (size_t)1 << 30 },
        { "1g", (size_t)1 << 30 }, { "3GB", (size_t)3 << 30 }, { "100B", 100 },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t v = 1;
        CHECK(core_parse_size(good[i].text, &v) && v == good[i].want, "\"%s\": %zu", good[i].text, v);
    }
    static const char *const bad[] = { "", "-1", "+1", "K", "1T", "1.5M", " 1", "1 K", "1KK", "1KiB",
                                       "0x10", "18446744073709551616", "17179869184G", "on", NULL };
    for (int i = 0; bad[i]; i++) {
        size_t v;
        CHECK(!core_parse_size(bad[i], &v), "\"%s\" taken as a size", bad[i]);
    }
}

static void test_enum(void)
{
    static const char *const words[] = { "auto", "always", "never", NULL };
    long long v = -1;
    CHECK(core_parse_enum("always", words, &v) && v == 1);
    CHECK(core_parse_enum("NEVER", words, &v) && v == 2);
    CHECK(!core_parse_enum("sometimes", words, &v));
    CHECK(!core_parse_enum("", words, &v));
    const core_setting_t s = { "AMPI_TEST_ENUM", CORE_TYPE_ENUM, "auto", 0, 0, words, "a test", "-" };
    core_value_t val;
    char err[320], buf[32];
    CHECK(core_setting_parse(&s, "Auto", &val, err, sizeof err) && val.i == 0);
    CHECK(!strcmp(core_setting_text(&s, &val, true, buf, sizeof buf), "auto"));
    CHECK(!core_setting_parse(&s, "maybe", &val, err, sizeof err));
    CHECK(strstr(err, "AMPI_TEST_ENUM=maybe") && strstr(err, "auto, always, never"), "[%s]", err);
}

/* The message of a refused value names the variable, the value and what
 * would have been accepted. */
static void test_messages(void)
{
    static const struct { core_setting_id_t id; const char *text, *says; } cases[] = {
        { CORE_SET_SHM, "maybe", "0/1, off/on, no/yes or false/true" },
        { CORE_SET_SHM_PREFETCHW, "17", "an integer from 0 to 16" },
        { CORE_SET_SHM_PREFETCHW, "-1", "an integer from 0 to 16" },
        { CORE_SET_VP, "0", "an integer from 1 to" },
        { CORE_SET_GPU_STAGE_CHUNK, "1K", "a size from 4K to 2G bytes" },
        { CORE_SET_GPU_STAGE_CHUNK, "3G", "a size from 4K to 2G bytes" },
        { CORE_SET_STACK_SIZE, "4K", "a size of at least 16K bytes" },
        { CORE_SET_CMA_SPLIT, "64X", "a size in bytes, with an optional K, M or G suffix" },
        { CORE_SET_EAGER_LIMIT, "2M", "a size from 0 to 1M bytes" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const core_setting_t *s = &core_settings[cases[i].id];
        core_value_t v;
        char err[320] = "", want[96];
        snprintf(want, sizeof want, "%s=%s", s->name, cases[i].text);
        CHECK(!core_setting_parse(s, cases[i].text, &v, err, sizeof err), "%s accepted", want);
        CHECK(strstr(err, want) && strstr(err, cases[i].says), "%s: [%s]", want, err);
    }
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Every row: a name of its own, a default its own parser accepts, one line
 * of description, and files that really mention it. */
static void test_table(void)
{
    for (int id = 0; id < CORE_SET_COUNT; id++) {
        const core_setting_t *s = &core_settings[id];
        CHECK(s->name && !strncmp(s->name, "AMPI_", 5), "row %d has no AMPI_ name", id);
        if (!s->name)
            continue;
        for (int j = 0; j < id; j++)
            CHECK(!core_settings[j].name || strcmp(s->name, core_settings[j].name), "%s twice", s->name);
        CHECK(core_setting_known(s->name), "%s", s->name);
        CHECK(s->doc && *s->doc && !strchr(s->doc, '\n'), "%s: description", s->name);
        core_value_t v;
        char err[320];
        CHECK(!s->dflt || core_setting_parse(s, s->dflt, &v, err, sizeof err), "%s: %s", s->name, err);
        CHECK(s->where && *s->where, "%s: where documented", s->name);
        char where[128];
        snprintf(where, sizeof where, "%s", s->where ? s->where : "");
        for (char *save, *file = strtok_r(where, ", ", &save); file; file = strtok_r(NULL, ", ", &save)) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", AMPI_SRCDIR, file);
            char *text = read_text(path);
            CHECK(text && strstr(text, s->name), "%s: not in %s", s->name, path);
            free(text);
        }
    }
    /* names the library sets or its scripts read are not settings, but known */
    CHECK(core_setting_known("AMPI_LOCAL_RANK") && core_setting_known("AMPI_LOCAL_SIZE"));
    CHECK(core_setting_known("AMPI_CC") && core_setting_known("AMPI_PREFIX"));
    CHECK(!core_setting_known("AMPI_SHM_MEDUIM") && !core_setting_known("AMPI_"));
}

/* The values the rest of the library reads. */
static void test_getters(void)
{
    unsetenv("AMPI_SHM");
    CHECK(core_setting_bool(CORE_SET_SHM), "AMPI_SHM defaults to on");
    setenv("AMPI_SHM", "No", 1);
    CHECK(!core_setting_bool(CORE_SET_SHM));
    setenv("AMPI_SHM", "", 1); /* empty: unset */
    CHECK(core_setting_bool(CORE_SET_SHM));
    CHECK(core_setting_env(CORE_SET_SHM) == NULL);
    unsetenv("AMPI_SHM");
    unsetenv("AMPI_DEBUG");
    CHECK(!core_setting_bool(CORE_SET_DEBUG));

    unsetenv("AMPI_EAGER_LIMIT");
    CHECK(core_setting_size(CORE_SET_EAGER_LIMIT) == 8192);
    setenv("AMPI_EAGER_LIMIT", "16k", 1);
    CHECK(core_setting_size(CORE_SET_EAGER_LIMIT) == 16384);
    unsetenv("AMPI_EAGER_LIMIT");

    long long v = -1;
    unsetenv("AMPI_VP");
    CHECK(!core_setting_int(CORE_SET_VP, &v), "AMPI_VP has no default");
    setenv("AMPI_VP", "4", 1);
    CHECK(core_setting_int(CORE_SET_VP, &v) && v == 4);
    unsetenv("AMPI_VP");
    CHECK(core_setting_int(CORE_SET_SHM_PREFETCHW, &v) && v == 8);

    char buf[32];
    core_value_t z = { .z = 65536 };
    CHECK(!strcmp(core_setting_text(&core_settings[CORE_SET_CMA_SPLIT], &z, true, buf, sizeof buf), "64K"));
    z.z = 1536;
    CHECK(!strcmp(core_setting_text(&core_settings[CORE_SET_CMA_SPLIT], &z, true, buf, sizeof buf), "1536"));
    z.z = (size_t)3 << 30;
    CHECK(!strcmp(core_setting_text(&core_settings[CORE_SET_CMA_SPLIT], &z, true, buf, sizeof buf), "3G"));
    CHECK(!strcmp(core_setting_text(&core_settings[CORE_SET_VP], &z, false, buf, sizeof buf), "-"));
}

/* Runs fn in a child with stderr into a file; returns its wait status and
 * what it wrote (at most len - 1 bytes). */
static int in_child(void (*fn)(void), char *out, size_t len)
{
    char path[] = "/tmp/test_settings.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        fn();
        _exit(0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    ssize_t n = pread(fd, out, len - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    return status;
}

static void bad_value_read(void)
{
    setenv("AMPI_CMA", "maybe", 1);
    (void)core_setting_bool(CORE_SET_CMA);
}

static void unknown_names_read(void)
{
    setenv("AMPI_SHM_MEDUIM", "0", 1);
    setenv("AMPI_NOTHING_LIKE_IT", "1", 1);
    setenv("AMPI_LOCAL_RANK", "0", 1);
    setenv("AMPI_CC", "gcc", 1);
    (void)core_setting_bool(CORE_SET_SHM);
    (void)core_setting_bool(CORE_SET_CMA);
    _exit(core_settings_check() == 0 ? 0 : 3);
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void test_environment(void)
{
    char err[4096];
    /* a bad value is fatal where the library reads it, with the message */
    int st = in_child(bad_value_read, err, sizeof err);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %#x", st);
    CHECK(strstr(err, "AMPI_CMA=maybe") && strstr(err, "off/on"), "[%s]", err);

    /* unknown names: one warning each per process, near misses named */
    st = in_child(unknown_names_read, err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x: [%s]", st, err);
    CHECK(count(err, "AMPI_SHM_MEDUIM is not a setting") == 1 && strstr(err, "did you mean AMPI_SHM_MEDIUM?"),
          "[%s]", err);
    CHECK(count(err, "AMPI_NOTHING_LIKE_IT is not a setting") == 1 && strstr(err, "ampi_info --all"), "[%s]",
          err);
    CHECK(!strstr(err, "AMPI_LOCAL_RANK") && !strstr(err, "AMPI_CC"), "known names warned: [%s]", err);

    /* the scan itself: bad values counted, unknown names counted */
    char *env[] = { "PATH=/bin", "AMPI_SHM=maybe", "AMPI_VP=0", "AMPI_EAGER_LIMIT=", "AMPI_GPU=YES",
                    "AMPI_SHM_MEDUIM=1", "AMPI_LOCAL_SIZE=2", "AMPI_STACK_SIZE=1M", NULL };
    int unknown = -1;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *sink = tmpfile();
    dup2(fileno(sink), STDERR_FILENO);
    int bad = core_settings_scan(env, &unknown);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    size_t n = fread(err, 1, sizeof err - 1, (rewind(sink), sink));
    err[n] = '\0';
    fclose(sink);
    CHECK(bad == 2 && unknown == 1, "bad %d, unknown %d: [%s]", bad, unknown, err);
    CHECK(strstr(err, "error: AMPI_SHM=maybe is not valid") && strstr(err, "error: AMPI_VP=0 is not valid"),
          "[%s]", err);
}

/* README's settings table: the rows after the header `| variable | meaning |
 * default |`, up to the first line that is not a row. */
static void test_readme(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/README.md", AMPI_SRCDIR);
    char *text = read_text(path);
    CHECK(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    const char *header = "| variable | meaning | default |\n";
    char *p = strstr(text, header);
    CHECK(p != NULL, "README.md has no settings table (header \"%.*s\")", (int)strlen(header) - 1, header);
    bool seen[CORE_SET_COUNT] = { false };
    int rows = 0;
    if (p) {
        p = strchr(p, '\n') + 1;
        p = strchr(p, '\n') + 1; /* |---|---|---| */
        for (char *line = p, *end; *line == '|'; line = end + 1) {
            end = strchr(line, '\n');
            if (!end)
                break;
            *end = '\0';
            rows++;
            char *name = strchr(line, '`'), *name_end = name ? strchr(name + 1, '`') : NULL;
            char *last = strrchr(line, '|');
            *last = '\0';
            char *dflt = strrchr(line, '|');
            CHECK(name && name_end && dflt, "README row \"%s\"", line);
            if (!name || !name_end || !dflt)
                continue;
            *name_end = '\0';
            name++;
            dflt++;
            while (*dflt == ' ')
                dflt++;
            for (char *t = dflt + strlen(dflt); t > dflt && t[-1] == ' ';)
                *--t = '\0';
            int id = 0;
            while (id < CORE_SET_COUNT && strcmp(core_settings[id].name, name))
                id++;
            CHECK(id < CORE_SET_COUNT, "README lists %s, which is no setting (src/core/core_settings.c)", name);
            if (id == CORE_SET_COUNT)
                continue;
            CHECK(!seen[id], "README lists %s twice", name);
            seen[id] = true;
            const char *want = core_settings[id].dflt ? core_settings[id].dflt : "-";
            CHECK(!strcmp(dflt, want), "%s: README's default is \"%s\", the table's \"%s\"", name, dflt, want);
        }
    }
    for (int id = 0; id < CORE_SET_COUNT; id++)
        CHECK(seen[id], "README's settings table lacks %s", core_settings[id].name);
    CHECK(rows == CORE_SET_COUNT, "README has %d rows, the table %d settings", rows, CORE_SET_COUNT);
    free(text);
}

int main(void)
{
    unit_check_watchdog(60, "FAIL test_settings: timed out\n");
    test_bool();
    test_int();
    test_size();
    test_enum();
    test_messages();
    test_table();
    /* before any read in this process: the children must make the first */
    test_environment();
    test_getters();
    test_readme();
    if (unit_check_summary("test_settings"))
        return 1;
    printf("test_settings: all checks passed\n");
    return 0;
}
