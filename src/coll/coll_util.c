/* Small helpers shared by the collectives. */
#include "coll/coll.h"

#include <stdlib.h>

void *coll_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        util_fatal("out of memory: %zu bytes of collective scratch space", bytes);
    return p;
}

int coll_check_vec(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt)
{
    if (!counts || (displs == NULL && n > 0))
        return MPI_ERR_ARG;
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    if (!dt_is_contig(dt) || dt_contig_offset(dt) != 0 || dt_extent(dt) != (ptrdiff_t)dt_size(dt))
        return MPI_ERR_UNSUPPORTED_OPERATION; /* see coll_check_buf */
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
        if (counts[i] > 0 && dt_size(dt) > 0 && (!buf || buf == MPI_IN_PLACE))
            return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}
