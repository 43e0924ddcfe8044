/* The last reference to a communicator object. */
#include "core/core_comm.h"

static void (*destroy_fn)(core_comm_t *c);

void core_comm_set_destroy(void (*destroy)(core_comm_t *c)) { destroy_fn = destroy; }

void core_comm_release(core_comm_t *c)
{
    if (c->predefined || --c->refs > 0)
        return;
    destroy_fn(c); /* set by the communicator tables that made c */
}
