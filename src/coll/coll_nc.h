/* Packed copies of collective buffers whose derived datatypes have gaps
 * (coll_noncontig.c for the blocking forms, coll_noncontig_nb.c for the
 * nonblocking and persistent ones). */
#ifndef AMPI_COLL_NC_H
#define AMPI_COLL_NC_H

#include "coll/coll.h"

/* n blocks of a user buffer: block i is counts[i] (or count) elements at
 * displs[i] (or i * count) extents, as in the v-forms. */
typedef struct {
    char *buf;
    const int *counts, *displs;
    int count;
    MPI_Datatype dt;
} coll_nc_side_t;

/* Scratch for one side: its byte counts and offsets and the packed bytes,
 * block after block. */
typedef struct {
    int *bcounts, *boffs;
    char *packed;
    size_t total;
} coll_nc_pack_t;

/* Sets up p for n blocks of s (0 or an error class; nc_release either way). */
int coll_nc_prepare(const coll_nc_side_t *s, int n, coll_nc_pack_t *p);
void coll_nc_release(coll_nc_pack_t *p);
void coll_nc_pack(const coll_nc_side_t *s, int i, char *packed, const int *boffs);
void coll_nc_unpack(const coll_nc_side_t *s, int i, const char *packed, const int *bcounts, const int *boffs);
/* dt_pack / dt_unpack into or out of host memory `packed` for a user
 * buffer of any memory kind (device memory: packed by its GPU). */
void coll_nc_pack_buf(const void *buf, int count, MPI_Datatype dt, char *packed);
void coll_nc_unpack_buf(const char *packed, size_t bytes, void *buf, int count, MPI_Datatype dt);
/* Both sides of a collective: nsend blocks of ss into sp and nrecv blocks
 * of rs into rp (0: that side is not packed).  0 or an error class; the
 * caller releases sp and rp (zeroed before) either way. */
int coll_nc_prepare_sides(const coll_nc_side_t *ss, int nsend, coll_nc_pack_t *sp, const coll_nc_side_t *rs,
                          int nrecv, coll_nc_pack_t *rp);

#endif
