/* env.c - the environment calls: Initialized/Finalized before Init, after
 * Init and after Finalize; Init_thread asked for MPI_THREAD_MULTIPLE gives
 * a level between MPI_THREAD_FUNNELED and the one required; Wtime never
 * goes back and does advance; Wtick > 0; a non-empty processor name; MPI
 * version 3.1 or newer (and equal to the header's); a library version
 * string; MPI_TAG_UB >= 32767; MPI_COMM_SELF has one rank; and the world
 * ranks are distinct and complete (each reports to rank 0, which checks
 * every rank 0..size-1 shows up exactly once with the right source). */
#include "mpitest.h"

enum { TAG_HELLO = 4 };

static int check_flags(int rank, const char *when, int want_init,
                       int want_fini)
{
    int init = -1, fini = -1, errs = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (!init != !want_init)
        errs += mt_fail(rank, "%s: MPI_Initialized says %d", when, init);
    if (!fini != !want_fini)
        errs += mt_fail(rank, "%s: MPI_Finalized says %d", when, fini);
    return errs;
}

static int check_time(int rank)
{
    int errs = 0;
    double tick = MPI_Wtick(), t0 = MPI_Wtime(), prev = t0, now = t0;
    if (!(tick > 0.0) || tick > 1.0)
        errs += mt_fail(rank, "MPI_Wtick %g not in (0, 1]", tick);
    /* must move on by 10 ms and never step back meanwhile; the call cap
     * ends the loop if the clock is stuck */
    for (long calls = 0; now - t0 < 0.01 && calls < 50000000L; calls++) {
        now = MPI_Wtime();
        if (now < prev) {
            errs += mt_fail(rank, "MPI_Wtime went back: %.9f after %.9f", now,
                            prev);
            break;
        }
        prev = now;
    }
    if (!(now > t0))
        errs += mt_fail(rank, "MPI_Wtime did not advance");
    return errs;
}

static int check_identity(int rank, int size, char *name, int *name_len)
{
    int errs = 0, v = 0, sv = 0, len = -1, flag = 0, *tag_ub = NULL;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];

    memset(name, 0, MPI_MAX_PROCESSOR_NAME + 1);
    MPI_Get_processor_name(name, name_len);
    if (*name_len <= 0 || *name_len >= MPI_MAX_PROCESSOR_NAME ||
        (int)strlen(name) != *name_len)
        errs += mt_fail(rank, "processor name '%s' length %d", name,
                        *name_len);

    MPI_Get_version(&v, &sv);
    if (v < 3 || (v == 3 && sv < 1))
        errs += mt_fail(rank, "MPI version %d.%d older than 3.1", v, sv);
    if (v != MPI_VERSION || sv != MPI_SUBVERSION)
        errs += mt_fail(rank, "MPI_Get_version %d.%d but mpi.h says %d.%d", v,
                        sv, MPI_VERSION, MPI_SUBVERSION);
    memset(lib, 0, sizeof lib);
    MPI_Get_library_version(lib, &len);
    if (len <= 0 || len >= MPI_MAX_LIBRARY_VERSION_STRING || lib[0] == '\0')
        errs += mt_fail(rank, "library version string of length %d", len);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || !tag_ub || *tag_ub < 32767)
        errs += mt_fail(rank, "MPI_TAG_UB missing or below 32767 (flag %d, "
                        "value %d)", flag, tag_ub ? *tag_ub : -1);

    int srank = -1, ssize = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &srank);
    MPI_Comm_size(MPI_COMM_SELF, &ssize);
    if (srank != 0 || ssize != 1)
        errs += mt_fail(rank, "MPI_COMM_SELF: rank %d size %d", srank, ssize);
    if (size < 1 || rank < 0 || rank >= size)
        errs += mt_fail(rank, "world rank %d of size %d", rank, size);
    return errs;
}

/* Every rank says hello to rank 0 with (rank, size); rank 0 checks that
 * each rank appears once and that the envelope matches the content. */
static int census(int rank, int size)
{
    int hello[2] = {rank, size}, errs = 0;
    MPI_Request req;
    MPI_Isend(hello, 2, MPI_INT, 0, TAG_HELLO, MPI_COMM_WORLD, &req);
    if (rank == 0) {
        char *seen = mt_zalloc((size_t)size);
        for (int i = 0; i < size; i++) {
            int got[2];
            MPI_Status st;
            MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, TAG_HELLO,
                     MPI_COMM_WORLD, &st);
            if (got[0] != st.MPI_SOURCE || got[0] < 0 || got[0] >= size ||
                got[1] != size) {
                errs += mt_fail(rank, "hello (%d, %d) from source %d", got[0],
                                got[1], st.MPI_SOURCE);
                continue;
            }
            if (seen[got[0]]++)
                errs += mt_fail(rank, "rank %d reported twice", got[0]);
        }
        for (int r = 0; r < size; r++)
            if (!seen[r])
                errs += mt_fail(rank, "rank %d never reported", r);
        free(seen);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, provided = -1;
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int name_len = 0;

    /* rank unknown before Init: report as -1 */
    errs += check_flags(-1, "before MPI_Init", 0, 0);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = mt_rank(), size = mt_size();
    errs += check_flags(rank, "after MPI_Init", 1, 0);
    if (!(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
          MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE))
        errs += mt_fail(rank, "thread level constants are not ordered");
    if (provided < MPI_THREAD_FUNNELED || provided > MPI_THREAD_MULTIPLE)
        errs += mt_fail(rank, "Init_thread(MULTIPLE) provided %d", provided);

    errs += check_time(rank);
    errs += check_identity(rank, size, name, &name_len);
    errs += census(rank, size);

    char ok[96];
    snprintf(ok, sizeof ok, "env: %d ranks, thread level %d, checks before "
             "Finalize OK", size, provided);
    mt_finish(errs, ok);
    MPI_Finalize();

    if (check_flags(rank, "after MPI_Finalize", 1, 1))
        return 1;
    if (rank == 0)
        mt_note("env: %d ranks OK", size);
    return 0;
}
