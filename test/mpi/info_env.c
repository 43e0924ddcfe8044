/* info_env.c - MPI_Info_create_env (MPI 4.0 9.4) may be called before
 * MPI_Init and after MPI_Finalize, and gives the same keys and values each
 * time: those of MPI_INFO_ENV, plus "command" and "argv" from its
 * arguments. */
#include "mpitest.h"

#include <stdbool.h>

/* Whether a and b hold the same keys with the same values; says how not. */
static bool same_info(MPI_Info a, MPI_Info b, const char *when)
{
    int na = -1, nb = -2;
    MPI_Info_get_nkeys(a, &na);
    MPI_Info_get_nkeys(b, &nb);
    if (na != nb) {
        printf("FAIL %s: %d keys, before MPI_Init %d\n", when, nb, na);
        return false;
    }
    for (int i = 0; i < na; i++) {
        char key[MPI_MAX_INFO_KEY], va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
        int la = MPI_MAX_INFO_VAL, lb = MPI_MAX_INFO_VAL, fa = 0, fb = 0;
        MPI_Info_get_nthkey(a, i, key);
        MPI_Info_get_string(a, key, &la, va, &fa);
        MPI_Info_get_string(b, key, &lb, vb, &fb);
        if (!fa || !fb || strcmp(va, vb) != 0) {
            printf("FAIL %s: key %s is \"%s\", before MPI_Init \"%s\"\n", when, key, fb ? vb : "(none)", va);
            return false;
        }
    }
    return true;
}

static bool has_value(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL];
    int len = MPI_MAX_INFO_VAL, flag = 0;
    MPI_Info_get_string(info, key, &len, v, &flag);
    return flag && strcmp(v, want) == 0;
}

int main(int argc, char **argv)
{
    MPI_Info before, during, after;
    MPI_Info_create_env(argc, argv, &before);
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), errs = 0;
    MPI_Info_create_env(argc, argv, &during);
    if (!same_info(before, during, "after MPI_Init"))
        errs++;
    if (!has_value(during, "command", argv[0]))
        errs += mt_fail(rank, "no key \"command\" with the program's name %s", argv[0]);
    int n_env = -1, n_during = -1;
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n_env);
    MPI_Info_get_nkeys(during, &n_during);
    if (n_during != n_env + 1 + (argc > 1))
        errs += mt_fail(rank, "%d keys, MPI_INFO_ENV %d: expected it plus command%s", n_during, n_env,
                        argc > 1 ? " and argv" : "");
    MPI_Info_free(&during);
    mt_finish(errs, "info_env OK");
    MPI_Finalize();
    MPI_Info_create_env(argc, argv, &after);
    int bad = !same_info(before, after, "after MPI_Finalize");
    MPI_Info_free(&after);
    MPI_Info_free(&before);
    return bad || errs;
}
