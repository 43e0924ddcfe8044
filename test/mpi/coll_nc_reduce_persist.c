/* coll_nc_reduce_persist.c - the reductions of coll_nc_reduce.c in their
 * persistent forms. */
#define COLL_MODE 2
#include "coll_nc_reduce.c"
