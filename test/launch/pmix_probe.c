/* pmix_probe: a PMIx client for testing ampirun.
 *
 * Default: PMIx_Init, read the job description (job size, local rank, local
 * peers), Put a 100-byte blob derived from its rank, Commit, Fence with data
 * collection, Get every peer's blob and check each byte, Finalize.  Prints
 *   probe rank R pid PID
 *   probe rank R of P local_rank L local_size S peers LIST exchange ok
 * ("exchange FAILED: why" and exit 1 on any mismatch).
 *
 * Failure modes (R: the rank that misbehaves after a first fence that
 * everybody passes once started; the others go on into the exchange and,
 * should its fence fail, wait to be killed so that the launcher's report can
 * only be about R):
 *   --abort R        PMIx_Abort(5, "probe rank R aborts"), after printing
 *                    "probe rank R aborts at T ms" (T: wall clock)
 *   --segv R         die of SIGSEGV
 *   --exit R:S       exit(S) without finalizing
 *   --nofinalize R   exit(0) without finalizing
 * Other options:
 *   --hang           everybody sleeps after the exchange (for --timeout)
 *   --ignore-term    ignore SIGTERM (the launcher must escalate to SIGKILL)
 *   --print N        N numbered lines to stdout, one line to stderr
 *   --stdin          print the first line read from stdin, or <eof>
 *   --env            print AMPI_VP */
#define _GNU_SOURCE
#include <pmix.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOB_SIZE 100
#define BLOB_KEY "probe.blob"

typedef struct probe_options {
    long abort_rank, segv_rank, exit_rank, exit_status, nofinalize_rank;
    long print_lines;
    bool hang, ignore_term, read_stdin, show_env;
} probe_options_t;

static pmix_proc_t self;

/* Sanitizer builds: PMIx's client keeps allocations until exit; they are not
 * the launcher's fault and must not turn into exit status 1. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpmix.so\n";
}
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}

static void parse(int argc, char **argv, probe_options_t *o)
{
    *o = (probe_options_t){.abort_rank = -1, .segv_rank = -1, .exit_rank = -1,
                           .nofinalize_rank = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--abort") == 0 && v)
            o->abort_rank = atol(v), i++;
        else if (strcmp(a, "--segv") == 0 && v)
            o->segv_rank = atol(v), i++;
        else if (strcmp(a, "--exit") == 0 && v && strchr(v, ':'))
            o->exit_rank = atol(v), o->exit_status = atol(strchr(v, ':') + 1), i++;
        else if (strcmp(a, "--nofinalize") == 0 && v)
            o->nofinalize_rank = atol(v), i++;
        else if (strcmp(a, "--print") == 0 && v)
            o->print_lines = atol(v), i++;
        else if (strcmp(a, "--hang") == 0)
            o->hang = true;
        else if (strcmp(a, "--ignore-term") == 0)
            o->ignore_term = true;
        else if (strcmp(a, "--stdin") == 0)
            o->read_stdin = true;
        else if (strcmp(a, "--env") == 0)
            o->show_env = true;
        else {
            fprintf(stderr, "pmix_probe: bad argument '%s'\n", a);
            exit(2);
        }
    }
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static void fill_blob(uint8_t *blob, pmix_rank_t rank)
{
    for (int i = 0; i < BLOB_SIZE; i++)
        blob[i] = (uint8_t)(rank * 37u + (unsigned)i * 7u + 1u);
}

/* Get key of proc; NULL (after a message) when absent. */
static pmix_value_t *get(pmix_rank_t rank, const char *key)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, self.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
        printf("probe rank %u: PMIx_Get(%s) failed: %s\n", self.rank, key, PMIx_Error_string(rc));
        return NULL;
    }
    return val;
}

/* Check every peer's blob; returns the number of problems (each printed). */
static int check_peer_blobs(uint32_t job_size)
{
    int problems = 0;
    for (uint32_t p = 0; p < job_size; p++) {
        pmix_value_t *val = get(p, BLOB_KEY);
        if (val == NULL) {
            problems++;
            continue;
        }
        uint8_t want[BLOB_SIZE];
        fill_blob(want, p);
        if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != BLOB_SIZE ||
            memcmp(val->data.bo.bytes, want, BLOB_SIZE) != 0) {
            printf("probe rank %u: blob of rank %u is wrong (type %d, size %zu)\n", self.rank, p,
                   (int)val->type, val->type == PMIX_BYTE_OBJECT ? val->data.bo.size : 0);
            problems++;
        }
        PMIX_VALUE_RELEASE(val);
    }
    return problems;
}

int main(int argc, char **argv)
{
    probe_options_t o;
    parse(argc, argv, &o);
    if (o.ignore_term)
        signal(SIGTERM, SIG_IGN);

    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("probe: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    long me = (long)self.rank;
    printf("probe rank %ld pid %ld\n", me, (long)getpid());
    fflush(stdout);
    bool misbehaving_peer = o.abort_rank >= 0 || o.segv_rank >= 0 || o.exit_rank >= 0 ||
                            o.nofinalize_rank >= 0;
    /* Before anyone misbehaves, everybody has started and printed its pid,
     * so the test can check that the launcher ended every one of them. */
    if (misbehaving_peer && (rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("probe rank %ld: first fence failed: %s\n", me, PMIx_Error_string(rc));
        return 1;
    }

    if (me == o.abort_rank) {
        char msg[64];
        snprintf(msg, sizeof msg, "probe rank %ld aborts", me);
        /* Wall-clock time, so that the test can time the launcher's
         * reaction from here with date(1). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        printf("probe rank %ld aborts at %lld ms\n", me,
               (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        fflush(stdout);
        PMIx_Abort(5, msg, NULL, 0);
        sleep_forever(); /* the launcher must end us */
    }
    if (me == o.segv_rank) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    if (me == o.exit_rank)
        exit((int)o.exit_status);
    if (me == o.nofinalize_rank)
        exit(0);

    int problems = 0;
    uint32_t job_size = 0, local_size = 0;
    uint16_t local_rank = UINT16_MAX;
    char peers[256] = "?";
    pmix_value_t *val;
    if ((val = get(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE)) != NULL) {
        job_size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    if ((val = get(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE)) != NULL) {
        local_size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    if ((val = get(self.rank, PMIX_LOCAL_RANK)) != NULL) {
        local_rank = val->data.uint16;
        PMIX_VALUE_RELEASE(val);
    }
    if ((val = get(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS)) != NULL) {
        if (val->type == PMIX_STRING)
            snprintf(peers, sizeof peers, "%s", val->data.string);
        PMIX_VALUE_RELEASE(val);
    }
    if (job_size == 0 || self.rank >= job_size) {
        printf("probe rank %ld: bad job size %u\n", me, job_size);
        problems++;
    }

    uint8_t blob[BLOB_SIZE];
    fill_blob(blob, self.rank);
    pmix_byte_object_t bo = {.bytes = (char *)blob, .size = BLOB_SIZE};
    pmix_value_t mine;
    PMIX_VALUE_LOAD(&mine, &bo, PMIX_BYTE_OBJECT); /* copies the bytes */
    rc = PMIx_Put(PMIX_GLOBAL, BLOB_KEY, &mine);
    PMIX_VALUE_DESTRUCT(&mine);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        PMIX_INFO_DESTRUCT(&collect);
    }
    if (rc != PMIX_SUCCESS) {
        printf("probe rank %ld: put/commit/fence failed: %s\n", me, PMIx_Error_string(rc));
        fflush(stdout);
        if (misbehaving_peer)
            sleep_forever();
        return 1;
    }
    if (job_size > 0)
        problems += check_peer_blobs(job_size);

    if (problems == 0)
        printf("probe rank %ld of %u local_rank %u local_size %u peers %s exchange ok\n", me,
               job_size, local_rank, local_size, peers);
    else
        printf("probe rank %ld exchange FAILED: %d problems\n", me, problems);
    fflush(stdout);
    if (problems > 0 && misbehaving_peer)
        sleep_forever(); /* a consequence: leave the report to the culprit */

    if (o.show_env) {
        const char *vp = getenv("AMPI_VP");
        printf("probe rank %ld AMPI_VP=%s\n", me, vp ? vp : "(unset)");
    }
    for (long i = 0; i < o.print_lines; i++)
        printf("probe rank %ld line %ld\n", me, i);
    if (o.print_lines > 0)
        fprintf(stderr, "probe rank %ld to stderr\n", me);
    if (o.read_stdin) {
        char line[256];
        if (fgets(line, sizeof line, stdin) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            printf("probe rank %ld stdin: %s\n", me, line);
        } else {
            printf("probe rank %ld stdin: <eof>\n", me);
        }
    }
    fflush(stdout);
    if (o.hang) {
        printf("probe rank %ld hanging\n", me);
        fflush(stdout);
        sleep_forever();
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("probe rank %ld: PMIx_Finalize failed: %s\n", me, PMIx_Error_string(rc));
        problems++;
    }
    return problems == 0 ? 0 : 1;
}
