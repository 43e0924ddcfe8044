/* coll_noncontig_nb.c - the calls of coll_noncontig.c in their nonblocking
 * forms, whose helper threads pack and unpack the derived types' data. */
#define COLL_MODE 1
#include "coll_noncontig.c"
