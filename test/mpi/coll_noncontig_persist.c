/* coll_noncontig_persist.c - the calls of coll_noncontig.c in their persistent
 * forms, whose helper threads pack and unpack the derived types' data. */
#define COLL_MODE 2
#include "coll_noncontig.c"
