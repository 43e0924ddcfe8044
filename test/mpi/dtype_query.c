/* dtype_query.c - datatype queries and the parts of the datatype interface
 * that are not plain transfers: extents and true extents, envelope and
 * contents, names, MPI_Get_elements on a partial element, a mixed struct
 * against its bytes, several MPI_Pack calls into one buffer, errors. */
#include "mpitest.h"

#include <stddef.h>

typedef struct {
    int i;
    double d;
    char c;
} rec_t; /* sizeof 24: the struct type's extent must match */

static int check_extent(int rank, const char *what, MPI_Datatype t, long lb, long ext, long tlb, long text)
{
    MPI_Aint a, b;
    MPI_Count x, y;
    int errs = 0;
    MPI_Type_get_extent(t, &a, &b);
    if (a != lb || b != ext)
        errs += mt_fail(rank, "%s: lb %ld extent %ld, expected %ld %ld", what, (long)a, (long)b, lb, ext);
    MPI_Type_get_true_extent(t, &a, &b);
    if (a != tlb || b != text)
        errs += mt_fail(rank, "%s: true lb %ld extent %ld, expected %ld %ld", what, (long)a, (long)b, tlb, text);
    MPI_Type_get_extent_x(t, &x, &y);
    if (x != lb || y != ext)
        errs += mt_fail(rank, "%s: extent_x %lld %lld", what, x, y);
    return errs;
}

static MPI_Datatype rec_type(void)
{
    int bl[] = { 1, 1, 1 };
    MPI_Aint disp[] = { offsetof(rec_t, i), offsetof(rec_t, d), offsetof(rec_t, c) };
    MPI_Datatype types[] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, t;
    MPI_Type_create_struct(3, bl, disp, types, &t);
    MPI_Type_commit(&t);
    return t;
}

static int test_extents(int rank)
{
    int errs = 0;
    MPI_Datatype v, r, r2, s = rec_type();
    errs += check_extent(rank, "struct rec_t", s, 0, sizeof(rec_t), 0, offsetof(rec_t, c) + 1);
    MPI_Count sx;
    MPI_Type_size_x(s, &sx);
    if (sx != sizeof(int) + sizeof(double) + 1)
        errs += mt_fail(rank, "struct size_x %lld", sx);
    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v);
    errs += check_extent(rank, "vector", v, 0, 12 * 8, 0, 12 * 8);
    MPI_Type_create_resized(v, -16, 200, &r);
    errs += check_extent(rank, "resized", r, -16, 200, 0, 12 * 8);
    MPI_Type_contiguous(2, r, &r2); /* copies 200 bytes apart; bounds stay sticky */
    errs += check_extent(rank, "contiguous(resized)", r2, -16, 400, 0, 200 + 12 * 8);
    MPI_Type_free(&v);
    MPI_Type_free(&r);
    MPI_Type_free(&r2);
    MPI_Type_free(&s);
    return errs;
}

/* Envelope and contents of each constructor give back its arguments. */
static int test_contents(int rank)
{
    int errs = 0, ni, na, nt, comb, ints[16];
    MPI_Aint aints[4];
    MPI_Datatype types[4], v, h, idx, hidx, iblk, hblk, st, sub, res;
    MPI_Type_vector(4, 3, 7, MPI_FLOAT, &v);
    MPI_Type_create_hvector(2, 1, 48, v, &h);
    int bl[] = { 2, 5 }, dp[] = { 9, 1 };
    MPI_Type_indexed(2, bl, dp, MPI_SHORT, &idx);
    MPI_Aint sd[] = { 0, 40 };
    MPI_Type_create_hindexed(2, bl, sd, MPI_SHORT, &hidx);
    MPI_Type_create_indexed_block(2, 3, dp, MPI_SHORT, &iblk);
    MPI_Type_create_hindexed_block(2, 3, sd, idx, &hblk);
    MPI_Datatype stt[] = { MPI_DOUBLE, h };
    MPI_Type_create_struct(2, bl, sd, stt, &st);
    int sizes[] = { 6, 7, 8 }, subs[] = { 1, 7, 8 }, starts[] = { 5, 0, 0 };
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_create_resized(sub, 8, 1000, &res);
    struct {
        MPI_Datatype t;
        int comb, ni, na, nt;
        int ints[12];
        MPI_Aint aints[2];
        MPI_Datatype types[2];
    } want[] = {
        { v, MPI_COMBINER_VECTOR, 3, 0, 1, { 4, 3, 7 }, { 0 }, { MPI_FLOAT } },
        { h, MPI_COMBINER_HVECTOR, 2, 1, 1, { 2, 1 }, { 48 }, { v } },
        { idx, MPI_COMBINER_INDEXED, 5, 0, 1, { 2, 2, 5, 9, 1 }, { 0 }, { MPI_SHORT } },
        { hidx, MPI_COMBINER_HINDEXED, 3, 2, 1, { 2, 2, 5 }, { 0, 40 }, { MPI_SHORT } },
        { iblk, MPI_COMBINER_INDEXED_BLOCK, 4, 0, 1, { 2, 3, 9, 1 }, { 0 }, { MPI_SHORT } },
        { hblk, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1, { 2, 3 }, { 0, 40 }, { idx } },
        { st, MPI_COMBINER_STRUCT, 3, 2, 2, { 2, 2, 5 }, { 0, 40 }, { MPI_DOUBLE, h } },
        { sub, MPI_COMBINER_SUBARRAY, 11, 0, 1, { 3, 6, 7, 8, 1, 7, 8, 5, 0, 0, MPI_ORDER_C }, { 0 }, { MPI_INT } },
        { res, MPI_COMBINER_RESIZED, 0, 2, 1, { 0 }, { 8, 1000 }, { sub } },
    };
    for (int k = 0; k < (int)(sizeof want / sizeof want[0]); k++) {
        MPI_Type_get_envelope(want[k].t, &ni, &na, &nt, &comb);
        if (comb != want[k].comb || ni != want[k].ni || na != want[k].na || nt != want[k].nt) {
            errs += mt_fail(rank, "envelope %d: %d %d %d %d", k, comb, ni, na, nt);
            continue;
        }
        /* exact maxima: Open MPI 4.1 walks max_datatypes entries */
        MPI_Type_get_contents(want[k].t, ni, na, nt, ints, aints, types);
        if (memcmp(ints, want[k].ints, (size_t)ni * sizeof(int)) != 0 ||
            memcmp(aints, want[k].aints, (size_t)na * sizeof(MPI_Aint)) != 0)
            errs += mt_fail(rank, "contents %d: wrong integers or addresses", k);
        for (int i = 0; i < nt; i++) {
            int ci, ca, ct, cc, wc; /* a derived type comes back as an equal type the caller frees */
            MPI_Type_get_envelope(types[i], &ci, &ca, &ct, &cc);
            MPI_Type_get_envelope(want[k].types[i], &ci, &ca, &ct, &wc);
            if (cc != wc || (cc == MPI_COMBINER_NAMED && types[i] != want[k].types[i]))
                errs += mt_fail(rank, "contents %d: type %d differs", k, i);
            if (cc != MPI_COMBINER_NAMED)
                MPI_Type_free(&types[i]);
        }
    }
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED || ni || na || nt)
        errs += mt_fail(rank, "envelope of MPI_INT: combiner %d", comb);
    MPI_Datatype all[] = { v, h, idx, hidx, iblk, hblk, st, sub, res };
    for (int i = 0; i < (int)(sizeof all / sizeof all[0]); i++)
        MPI_Type_free(&all[i]);
    return errs;
}

/* rec_t records through the struct type, checked against the C struct;
 * then a message ending inside a record: Get_elements counts what came. */
static int test_struct_transfer(int rank, int size)
{
    int errs = 0, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Datatype s = rec_type();
    rec_t out[3], in[3];
    for (int i = 0; i < 3; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i] = (rec_t){ 10 * rank + i, rank + i / 4.0, (char)('a' + i) };
    }
    memset(in, 0x5a, sizeof in);
    MPI_Status st;
    MPI_Sendrecv(out, 3, s, next, 1, in, 3, s, prev, 1, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 3; i++)
        if (in[i].i != 10 * prev + i || in[i].d != prev + i / 4.0 || in[i].c != 'a' + i)
            errs += mt_fail(rank, "struct record %d: %d %g %c", i, in[i].i, in[i].d, in[i].c);
    const unsigned char *got = (const unsigned char *)in;
    for (size_t b = offsetof(rec_t, i) + sizeof(int); b < offsetof(rec_t, d); b++)
        if (got[b] != 0x5a) /* the padding between i and d is a gap */
            errs += mt_fail(rank, "struct padding byte %zu overwritten", b);
    /* one record and an int and a double of the next, sent as bytes */
    enum { BYTES = 13 + 4 + 8 };
    unsigned char raw[BYTES], want[BYTES];
    for (int i = 0; i < BYTES; i++) {
        raw[i] = (unsigned char)(3 * rank + i);
        want[i] = (unsigned char)(3 * prev + i);
    }
    memset(in, 0x5a, sizeof in);
    MPI_Sendrecv(raw, BYTES, MPI_BYTE, next, 2, in, 3, s, prev, 2, MPI_COMM_WORLD, &st);
    int n = -1;
    MPI_Get_elements(&st, s, &n);
    if (n != 5)
        errs += mt_fail(rank, "Get_elements of %d bytes: %d, expected 5", BYTES, n);
    MPI_Get_count(&st, s, &n);
    if (n != MPI_UNDEFINED)
        errs += mt_fail(rank, "Get_count of a partial record: %d", n);
    if (memcmp(&in[0].i, want, 4) || memcmp(&in[0].d, want + 4, 8) || in[0].c != (char)want[12] ||
        memcmp(&in[1].i, want + 13, 4) || memcmp(&in[1].d, want + 17, 8) || in[1].c != 0x5a ||
        got[2 * sizeof(rec_t)] != 0x5a)
        errs += mt_fail(rank, "partial record: data misplaced");
    MPI_Type_free(&s);
    return errs;
}

/* Several items packed one after another, unpacked in the same order. */
static int test_pack_sequence(int rank)
{
    int errs = 0, pos = 0, s1, s2;
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    double d[4] = { 1.5, -2, 3.25, 4 }, d2[4] = { 0, 0, 0, 0 };
    int k = 42 + rank, k2 = 0;
    MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(1, v, MPI_COMM_WORLD, &s2);
    char buf[256];
    MPI_Pack(&k, 1, MPI_INT, buf, s1 + s2, &pos, MPI_COMM_WORLD);
    MPI_Pack(d, 1, v, buf, s1 + s2, &pos, MPI_COMM_WORLD);
    int end = pos;
    pos = 0;
    MPI_Unpack(buf, end, &pos, &k2, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, end, &pos, d2, 1, v, MPI_COMM_WORLD);
    if (k2 != k || d2[0] != 1.5 || d2[3] != 4 || d2[1] != 0 || d2[2] != 0 || pos != end)
        errs += mt_fail(rank, "pack sequence: %d %g %g %g %g (pos %d of %d)", k2, d2[0], d2[1], d2[2], d2[3], pos,
                        end);
    /* too small an output buffer is an error, and nothing moves */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pos = 0;
    int err = MPI_Pack(d, 2, v, buf, s2, &pos, MPI_COMM_WORLD);
    if (err == MPI_SUCCESS || pos != 0)
        errs += mt_fail(rank, "Pack into a short buffer: error %d, position %d", err, pos);
    /* an uncommitted type cannot be used in communication */
    MPI_Datatype raw;
    MPI_Type_contiguous(2, MPI_INT, &raw);
    err = MPI_Send(&k, 1, raw, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Error_class(err, &cls);
    if (cls != MPI_ERR_TYPE)
        errs += mt_fail(rank, "Send with an uncommitted type: error class %d", cls);
    MPI_Type_free(&raw);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&v);
    return errs;
}

static int test_names(int rank)
{
    int errs = 0, len;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_set_name(t, "three ints");
    MPI_Type_get_name(t, name, &len);
    if (strcmp(name, "three ints") != 0 || len != 10)
        errs += mt_fail(rank, "derived name '%s' (%d)", name, len);
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    if (strcmp(name, "MPI_DOUBLE") != 0)
        errs += mt_fail(rank, "MPI_DOUBLE is named '%s'", name);
    MPI_Type_free(&t);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += test_extents(rank);
    errs += test_contents(rank);
    errs += test_struct_transfer(rank, size);
    errs += test_pack_sequence(rank);
    errs += test_names(rank);
    mt_finish(errs, "dtype_query OK");
    MPI_Finalize();
    return 0;
}
