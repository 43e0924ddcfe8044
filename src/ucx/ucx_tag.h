/* The 64-bit UCX tag layout -- the one place it is defined.
 *
 *   63     60 59                          36 35                              0
 *  +---------+------------------------------+---------------------------------+
 *  |  type   |   source PE      (24 bits)   |   counter          (36 bits)    |
 *  +---------+------------------------------+---------------------------------+
 *
 *  type ENVELOPE: reserved.  MPI envelopes (struct p2p_wire_hdr, with the
 *                 data when the message is eager) no longer travel as tagged
 *                 messages but as UCX active messages (ucx_worker.c): pt2pt
 *                 matches them itself, since MPI matching needs ranks,
 *                 contexts and wildcards that do not fit in 64 bits.
 *  type PAYLOAD:  the host data of a rendezvous message.  Each one gets a
 *                 fresh counter value from its source PE, so (source, counter)
 *                 names it uniquely; the envelope carries the whole tag and
 *                 the receiver posts ucp_tag_recv straight into the user's
 *                 buffer once the envelope has matched.
 *  type DEVICE:   the same for device (GPU) payloads (the seeds' design).
 *
 * A 36-bit counter wraps after 6.9e10 messages from one PE; a payload tag is
 * only live between its envelope's match and the receive, so wrap-around
 * cannot alias two live payloads.
 */
#ifndef AMPI_UCX_TAG_H
#define AMPI_UCX_TAG_H

#include <stdint.h>

#define UCX_TAG_TYPE_BITS 4
#define UCX_TAG_PE_BITS 24
#define UCX_TAG_COUNTER_BITS 36

#define UCX_TAG_TYPE_SHIFT (UCX_TAG_PE_BITS + UCX_TAG_COUNTER_BITS)
#define UCX_TAG_PE_SHIFT UCX_TAG_COUNTER_BITS

#define UCX_TAG_TYPE_MASK ((((uint64_t)1 << UCX_TAG_TYPE_BITS) - 1) << UCX_TAG_TYPE_SHIFT)
#define UCX_TAG_PE_MASK ((((uint64_t)1 << UCX_TAG_PE_BITS) - 1) << UCX_TAG_PE_SHIFT)
#define UCX_TAG_COUNTER_MASK (((uint64_t)1 << UCX_TAG_COUNTER_BITS) - 1)
#define UCX_TAG_FULL_MASK (~(uint64_t)0)
#define UCX_TAG_MAX_PES (1 << UCX_TAG_PE_BITS)

typedef enum {
    UCX_TAG_ENVELOPE = 1,
    UCX_TAG_PAYLOAD = 2,
    UCX_TAG_DEVICE = 3,
} ucx_tag_type_t;

static inline uint64_t ucx_tag_make(ucx_tag_type_t type, uint32_t pe, uint64_t counter)
{
    return ((uint64_t)type << UCX_TAG_TYPE_SHIFT) |
           (((uint64_t)pe << UCX_TAG_PE_SHIFT) & UCX_TAG_PE_MASK) | (counter & UCX_TAG_COUNTER_MASK);
}
static inline ucx_tag_type_t ucx_tag_type(uint64_t tag) { return (ucx_tag_type_t)(tag >> UCX_TAG_TYPE_SHIFT); }
static inline uint32_t ucx_tag_pe(uint64_t tag) { return (uint32_t)((tag & UCX_TAG_PE_MASK) >> UCX_TAG_PE_SHIFT); }
static inline uint64_t ucx_tag_counter(uint64_t tag) { return tag & UCX_TAG_COUNTER_MASK; }

#endif
