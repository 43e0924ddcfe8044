/* Channels: a persistent send and a persistent receive in two processes that
 * agreed on one UCX tag (ucx_tag.h, type CHANNEL), so that later rounds move
 * the data without an envelope.  AMPI_CHANNEL=1 turns them on (off by default:
 * their gain is not measured yet, and a round that misses its credit costs a
 * credit and a fill message on top of the envelope).
 *
 * Handshake.  A persistent send that qualifies (standard mode, contiguous,
 * more than the eager limit or device memory that UCX moves itself) gets a
 * channel id at its first Start; every round it sends by envelope says so
 * (flag P2P_WIRE_CHANNEL, the id in sreq, its count of channel payloads in
 * chunk).  A persistent receive with a specific source and tag that matches
 * such an envelope binds to that id.
 *
 * Rounds.  The receiver's MPI_Start pre-posts ucp_tag_recv on the channel tag
 * straight into its buffer when that cannot break MPI's matching order (no
 * posted or unexpected message with its source/tag ahead of it), leaves a
 * placeholder at its place in the posted queue and sends a CREDIT carrying
 * E, how many envelopes from the sender it had entered into matching.  The
 * sender's MPI_Start uses a credit only if it has sent no envelope to that
 * rank since (its send_seq is still E): then its data is the next message the
 * receiver sees from it and belongs to this receive, so it goes as a tag send
 * on the channel tag.  Otherwise (or when the send is freed) it answers the
 * credit with a zero-length FILL on the channel tag and goes by envelope; the
 * receive then takes the first message that reaches its placeholder, as if it
 * had been posted normally.  Every credit gets exactly one message on the
 * tag, so no pre-posted receive is left behind and no cancel is needed.
 *
 * While a pre-posted round waits, a message that reaches its placeholder
 * (same source and tag) may be older or younger than the channel data.  The
 * envelope of the sender's own round says so (its payload count); any other
 * one is held back unentered, which also holds back everything after it from
 * that sender (sequence order), and a NUDGE asks the sender to settle the
 * credit.  Once the round is settled the held message enters matching.
 *
 * MPI_Request_free: a freed receive (always between rounds) sends CLOSE_RX
 * and the send may bind to the next receive that matches it; a freed send
 * fills a credit it holds, sends CLOSE_TX, and answers credits still on
 * their way (unknown id) with a fill and another CLOSE_TX. */
#ifndef AMPI_P2P_CHANNEL_H
#define AMPI_P2P_CHANNEL_H

#include "pt2pt/p2p.h"

/* the sender (p2p_send.c): true when the round went on the channel, with no
 * envelope; otherwise p2p_chan_mark flags the round's envelope */
bool p2p_chan_send(p2p_req_t *q, int dst_world);
void p2p_chan_mark(p2p_req_t *q, p2p_wire_hdr_t *h);

/* the receiver (p2p_recv.c) */
void p2p_chan_bind(p2p_req_t *q, const p2p_wire_hdr_t *h); /* a flagged envelope matched q */
bool p2p_chan_recv_start(p2p_req_t *q);                    /* true: pre-posted */
/* An entered envelope reached a channel's placeholder (ph, still queued);
 * the channel delivers it, or holds it back unentered (seq rewound). */
void p2p_chan_claim(p2p_rank_t *r, p2p_msg_t *msg, p2p_req_t *ph);

/* both sides */
void p2p_chan_control(const p2p_wire_hdr_t *h, size_t len); /* a P2P_WIRE_CHAN message */
void p2p_chan_release(p2p_req_t *q);                        /* MPI_Request_free: tear down */

/* ---- inside the channel code (p2p_channel.c, p2p_channel_rx.c) ---- */
enum { P2P_CHAN_CREDIT = 1, P2P_CHAN_NUDGE = 2, P2P_CHAN_CLOSE_RX = 3, P2P_CHAN_CLOSE_TX = 4 };
bool p2p_chan_enabled(void);
/* A control message from rank `from` to rank `to` (kind P2P_WIRE_CHAN, the
 * operation in flags, ids in sreq/payload_tag, round in seq, E in size). */
void p2p_chan_ctl(int op, int from, int to, uint64_t tx_id, uint64_t rx_id, uint32_t round, uint64_t e);
void p2p_chan_fill(int proc, uint64_t tag); /* the zero-length "not this round" */
void p2p_chan_rx_control(const p2p_wire_hdr_t *h);
void p2p_chan_rx_release(void *rx);
/* An id -> object table per side (0: senders, 1: receivers); ids start at 1. */
uint64_t p2p_chan_table_add(int side, void *obj);
void *p2p_chan_table_get(int side, uint64_t id);
void p2p_chan_table_del(int side, uint64_t id);

#endif
