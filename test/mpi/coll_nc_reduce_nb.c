/* coll_nc_reduce_nb.c - the reductions of coll_nc_reduce.c in their
 * nonblocking forms. */
#define COLL_MODE 1
#include "coll_nc_reduce.c"
