/* Packing along the flattened block list, element counting, and the MPI
 * entry points MPI_Pack, MPI_Unpack, MPI_Pack_size. */
#include "core/core_rank.h"
#include "datatype/dt_internal.h"
#include "rank/rank_host.h"

#include <string.h>

void dt_pack(const void *buf, int count, MPI_Datatype t, void *out)
{
    const char *src = buf;
    char *dst = out;
    if (dt_is_contig(t)) {
        size_t bytes = (size_t)count * dt_size(t);
        if (bytes)
            memcpy(dst, src + dt_contig_offset(t), bytes);
        return;
    }
    const dt_type_t *d = dt_view(t);
    ptrdiff_t ext = d->ub - d->lb;
    for (int i = 0; i < count; i++, src += ext)
        for (size_t k = 0; k < d->nblocks; k++) {
            memcpy(dst, src + d->blocks[k].off, d->blocks[k].len);
            dst += d->blocks[k].len;
        }
}

void dt_unpack(const void *in, size_t in_bytes, void *buf, int count, MPI_Datatype t)
{
    const char *src = in;
    char *dst = buf;
    size_t total = (size_t)count * dt_size(t);
    size_t left = in_bytes < total ? in_bytes : total;
    if (dt_is_contig(t)) {
        if (left)
            memcpy(dst + dt_contig_offset(t), src, left);
        return;
    }
    const dt_type_t *d = dt_view(t);
    ptrdiff_t ext = d->ub - d->lb;
    for (int i = 0; i < count && left; i++, dst += ext)
        for (size_t k = 0; k < d->nblocks && left; k++) {
            size_t len = d->blocks[k].len < left ? d->blocks[k].len : left;
            memcpy(dst + d->blocks[k].off, src, len);
            src += len;
            left -= len;
        }
}

/* Basic elements in the first `bytes` of one element of the predefined
 * type b (a pair counts its value and its index), or -1 when they end
 * inside one. */
static long long elements_in(MPI_Datatype b, long long bytes)
{
    const dt_info_t *p = &dt_predefined[b];
    if (bytes == 0 || bytes == (long long)p->size)
        return bytes ? dt_view(b)->nbasic : 0;
    if (p->first && bytes == (long long)p->first)
        return 1; /* the value of a pair without its index */
    return -1;
}

long long dt_elements_bytes(MPI_Datatype t, long long elements)
{
    const dt_type_t *d = dt_view(t);
    if (elements <= 0 || d->nbasic == 0)
        return 0;
    long long per = (long long)d->nbasic, bytes = elements / per * (long long)dt_size(t), rem = elements % per;
    /* a partial element: its first basic elements, along the type map */
    for (size_t i = 0; i < d->nruns && rem > 0; i++) {
        MPI_Datatype b = d->runs[i].basic;
        const dt_info_t *p = &dt_predefined[b];
        long long bper = (long long)dt_view(b)->nbasic, run = (long long)d->runs[i].n * bper;
        long long take = rem < run ? rem : run;
        bytes += take / bper * (long long)p->size;
        if (take % bper) /* the value of a pair without its index */
            bytes += (long long)p->first;
        rem -= take;
    }
    return rem ? -1 : bytes;
}

long long dt_elements(MPI_Datatype t, long long bytes)
{
    long long size = (long long)dt_size(t);
    if (size == 0 || bytes <= 0)
        return 0;
    const dt_type_t *d = dt_view(t);
    long long n = bytes / size * (long long)d->nbasic;
    long long rem = bytes % size;
    /* A partial element: count whole basic elements along the type map. */
    for (size_t i = 0; i < d->nruns && rem > 0; i++) {
        MPI_Datatype b = d->runs[i].basic;
        long long bs = (long long)dt_predefined[b].size, per = (long long)dt_view(b)->nbasic;
        long long run = (long long)d->runs[i].n * bs;
        if (rem >= run) {
            n += (long long)d->runs[i].n * per;
            rem -= run;
        } else {
            long long part = elements_in(b, rem % bs);
            if (part < 0)
                return -1;
            n += rem / bs * per + part;
            rem = 0;
        }
    }
    return rem ? -1 : n;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    (void)comm;
    if (!dt_committed(dt))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Pack_size");
    if (incount < 0 || !size)
        return core_error(NULL, incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Pack_size");
    size_t bytes = dt_packed_size(dt, incount);
    if (bytes > (size_t)0x7fffffff)
        return core_error(NULL, MPI_ERR_COUNT, "MPI_Pack_size");
    *size = (int)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    RANK_HOST_GUARD;
    (void)comm;
    if (!dt_valid(dt))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Pack");
    if (incount < 0)
        return core_error(NULL, MPI_ERR_COUNT, "MPI_Pack");
    if (!position || *position < 0 || outsize < 0)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Pack");
    size_t bytes = dt_packed_size(dt, incount);
    if (*position > outsize || bytes > (size_t)(outsize - *position))
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, "MPI_Pack", "output buffer too small");
    dt_pack(inbuf, incount, dt, (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack = PMPI_Unpack
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype dt,
                MPI_Comm comm)
{
    RANK_HOST_GUARD;
    (void)comm;
    if (!dt_valid(dt))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Unpack");
    if (outcount < 0)
        return core_error(NULL, MPI_ERR_COUNT, "MPI_Unpack");
    if (!position || *position < 0 || insize < 0)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Unpack");
    size_t bytes = dt_packed_size(dt, outcount);
    if (*position > insize || bytes > (size_t)(insize - *position))
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, "MPI_Unpack", "input buffer too short");
    dt_unpack((const char *)inbuf + *position, bytes, outbuf, outcount, dt);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
