/* Point-to-point messaging: the protocols.  The types are in p2p_types.h,
 * requests in p2p_req.h, the process's progress and waiting in p2p_proc.h,
 * the wire format (every message kind and its fields) in p2p_wire.h, the
 * routes in p2p_routes.h; this header brings them all.
 *
 * Protocols (every message carries a struct p2p_wire_hdr "envelope"):
 *  - same process: the sender matches against the receiver's posted queue
 *    directly and copies once from send buffer to receive buffer.  If nothing
 *    is posted, a small standard send is copied into an unexpected message and
 *    completes; a large or synchronous one leaves a LOCAL message pointing at
 *    the sender's buffer and completes when the receiver copies it.
 *  - between processes, eager (<= AMPI_EAGER_LIMIT bytes, default 8 KiB): one
 *    UCX active message, envelope + data (the envelope as the AM header when
 *    the data is not copied behind it: no copy at the sender).
 *  - between processes, rendezvous: the data goes under a fresh PAYLOAD tag
 *    (ucx_tag.h) and the envelope carries that tag; the receiver matches the
 *    envelope, then posts the UCX receive straight into the user's buffer.
 *  - between processes of one node, host payloads above the eager limit:
 *    the envelope carries the sender's pid and buffer address and the
 *    receiver reads the payload with process_vm_readv, then ACKs
 *    (p2p_cma.c); the rendezvous above where that is not allowed.
 *  - synchronous sends (Ssend) add an ACK envelope from receiver to sender
 *    once matched; the send completes only with it.
 *  - device (GPU) buffers, the seeds' GPU messaging design: the sender posts
 *    the device payload to UCX under a fresh DEVICE tag and sends the
 *    envelope with that tag; the receiver matches the envelope like any other
 *    and posts the UCX receive into the user's buffer (device or host: UCX
 *    moves between memory types).  Never eager, never copied by the CPU.  In
 *    one process the receiver's match starts an asynchronous device copy
 *    (p2p_gpu.c) polled by the PE's progress.  Without a CUDA-capable UCX the
 *    device data is staged through pinned host buffers, pipelined in chunks
 *    (p2p_stage.c).
 *  - device buffers between processes of one node (the fastest route at every
 *    size on NVLink, p2p_ipc.c): the envelope carries a CUDA IPC handle of
 *    the sender's buffer instead of a payload tag; the receiver matches it
 *    and answers with a CTS carrying a handle of its own device buffer; the
 *    sender copies straight into it (a GPU writing over NVLink is ~3 us
 *    faster than one reading) and sends a FIN (an ACK to the receive).  A
 *    host receive buffer (or one that cannot be exported) makes the
 *    receiver copy from the sender's buffer itself, then ACK.  The UCX route
 *    above remains for memory that cannot be exported and for processes on
 *    other nodes.
 * Between processes of one node an envelope that fits a cell of the
 * receiver's shared-memory ring (src/shm/shm.h) goes there instead of to UCX
 * (p2p_env_send says which kinds may); a full ring or a larger envelope
 * still takes UCX.
 * Envelopes between one pair of ranks carry a sequence number so the
 * receiver enters them into matching in send order whatever order UCX or
 * the rings deliver them in (non-overtaking). */
#ifndef AMPI_P2P_H
#define AMPI_P2P_H

#include "pt2pt/p2p_types.h"
#include "pt2pt/p2p_req.h"
#include "pt2pt/p2p_proc.h"
#include "pt2pt/p2p_wire.h"
#include "pt2pt/p2p_routes.h"
#include "pt2pt/p2p_short.h"

#endif
