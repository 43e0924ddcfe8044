/* The wire: every message kind that travels between processes, with the
 * fields it uses.  One header struct serves every kind but the compact
 * EAGER_SHORT; the table says what each field means for each kind, and a
 * field a kind does not list is zero.
 *
 * Common to the sequenced kinds (EAGER, EAGER_SHORT, RNDV, IPC, CMA): ctx
 * (the communicator's context), src (the sender's rank in it), tag,
 * src_world and dst_world (world ranks), seq (per (src_world, dst_world)
 * pair: the receiver enters them into matching in this order) and size
 * (the message's bytes).  The replies (ACK, CTS, CMA_PUT, CANCEL_REPLY) carry
 * no seq: each settles exactly one request, in any order; CANCEL, not a
 * message of the sequence either, names one by its seq.
 *
 *  kind         after the header           fields besides the common ones
 *  EAGER        size bytes of data         flags SYNC: sreq
 *  EAGER_SHORT  (p2p_wire_short_t: the common fields without size, then the
 *               data: size is the rest of the message; never flags)
 *  RNDV         -                          payload_tag: UCX tag of the data
 *                                          (ucx_tag.h); flags SYNC: sreq;
 *                                          DEVICE: the data is device memory;
 *                                          STAGED: chunk, its pipeline chunk
 *  IPC          gpu_ipc_desc_t (88 B)      sreq; flags SYNC, DEVICE
 *  CMA          cma_desc_t (p2p_cma.c)     sreq; flags SYNC
 *  ACK          -                          dst_world: the rank addressed;
 *                                          sreq: the request it settles
 *                                          (a FIN is an ACK naming rreq)
 *  CTS          gpu_ipc_desc_t of the      src_world (receiver), dst_world
 *               receive buffer             (sender), size (bytes to write),
 *                                          sreq (the send), rreq (the
 *                                          receive: the FIN names it)
 *  CMA_PUT      put_desc_t (p2p_cma.c)     as CTS; size: the bytes the
 *                                          sender writes, the tail
 *  CANCEL       -                          src_world, dst_world and seq of
 *                                          the message to withdraw; sreq:
 *                                          the send (p2p_cancel.c)
 *  CANCEL_REPLY -                          dst_world, sreq as ACK; flags 1:
 *                                          withdrawn, 0: it was matched
 *
 * Requests are named on the wire by ids (sreq, rreq), never by addresses:
 * p2p_reqid_issue gives a running request an id, a table slot and its
 * generation, and the id dies when the request completes.  An arriving id
 * that was never issued, or whose request has completed, finds nothing
 * (p2p_reqid_find): the envelope is rejected with a logged error, and a
 * reply whose request is found but whose body is malformed fails that
 * request with MPI_ERR_INTERN (p2p_recv.c). */
#ifndef AMPI_P2P_WIRE_H
#define AMPI_P2P_WIRE_H

#include <stdint.h>

enum { P2P_WIRE_EAGER = 1, P2P_WIRE_RNDV = 2, P2P_WIRE_ACK = 3, P2P_WIRE_IPC = 4, P2P_WIRE_CTS = 5,
       P2P_WIRE_EAGER_SHORT = 6, P2P_WIRE_CMA = 8, P2P_WIRE_CMA_PUT = 9, P2P_WIRE_CANCEL = 10,
       P2P_WIRE_CANCEL_REPLY = 11 };
/* PACKING (IPC route): the sender's GPU is still packing the payload, so
 * the receiver must not read it but ask for it to be written (a CTS;
 * p2p_ipc.c) */
enum { P2P_WIRE_SYNC = 1, P2P_WIRE_DEVICE = 2, P2P_WIRE_STAGED = 4, P2P_WIRE_PACKING = 8 };

typedef struct p2p_wire_hdr {
    uint8_t kind;     /* P2P_WIRE_* */
    uint8_t flags;    /* P2P_WIRE_SYNC, DEVICE, STAGED, PACKING */
    uint16_t unused;
    uint32_t ctx;
    int32_t src;      /* sender's rank in the communicator */
    int32_t tag;
    int32_t src_world;
    int32_t dst_world;
    uint32_t seq;
    uint32_t chunk;   /* RNDV + STAGED */
    uint64_t size;
    union {
        uint64_t payload_tag; /* RNDV */
        uint64_t rreq;        /* CTS, CMA_PUT: the receive's id */
    };
    uint64_t sreq;    /* the send's id (SYNC, IPC, CMA, and the replies) */
} p2p_wire_hdr_t;

/* The compact envelope of a small eager send without flags (P2P_INLINE_MAX
 * bytes of host data at most, always one contiguous buffer): only what
 * matching needs, the size is the rest of the message.  28 bytes instead of
 * 56 keep 64 bytes of data within UCX's shortest path on shared memory (92
 * bytes in all); the receiver's intake (p2p_recv.c) delivers it at once or
 * expands it into a full P2P_WIRE_EAGER envelope. */
typedef struct p2p_wire_short {
    uint8_t kind;     /* P2P_WIRE_EAGER_SHORT */
    uint8_t unused[3];
    uint32_t ctx;
    int32_t src, tag, src_world, dst_world;
    uint32_t seq;
} p2p_wire_short_t;

/* Eager data up to this size is copied behind the header so that UCX sends
 * one contiguous buffer (its fastest path); larger eager data goes as the
 * AM's payload behind the header.  Blocking sends of up to this size to other
 * processes build the envelope on the stack (p2p_short.h). */
#define P2P_INLINE_MAX 1024
/* sizeof(gpu_ipc_desc_t): an IPC envelope is the header plus that */
#define P2P_IPC_DESC_SIZE 88

/* Request ids: slot index + 1 in the low 32 bits, the slot's generation
 * in the high 32 (p2p_reqid.c).  0 is never an id. */
struct AMPI_Request_s;
uint64_t p2p_reqid_issue(struct AMPI_Request_s *q);  /* q's id, issued on first use */
struct AMPI_Request_s *p2p_reqid_find(uint64_t id); /* NULL: never issued, or dead */
void p2p_reqid_retire(struct AMPI_Request_s *q);    /* at q's completion */

#endif
