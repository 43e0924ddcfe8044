/* Unit test of the shared-memory envelope ring (src/shm/shm_ring.h): order
 * and contents across wrap-around (of the cell array and of the 32-bit
 * positions) with entries of one and of several cells (pads at a lap's
 * end), a full ring, envelopes that do not fit, bytes of a long entry that
 * look like a later seq, the notify word, medium entries (8-32 KiB
 * payloads), envelopes written in place (reserve/publish), and a producer
 * and a consumer in
 * two processes hammering one ring -- each for the smallest and the
 * largest ring size -- and the choice of ring size by job size. */
#include "shm/shm_ring.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_check.h"

/* The bytes of message i: its number, then a pattern that depends on i;
 * most fit one cell, every fifth takes several (up to SHM_ENTRY_MAX). */
static size_t fill_msg(uint8_t *buf, uint32_t i)
{
    size_t span = i % 5 == 4 ? SHM_ENTRY_MAX : SHM_CELL_DATA;
    size_t len = sizeof i + (i * 7919u) % (span - sizeof i + 1);
    memcpy(buf, &i, sizeof i);
    for (size_t k = sizeof i; k < len; k++)
        buf[k] = (uint8_t)(i * 31u + k);
    return len;
}

static bool msg_ok(const shm_cell_t *c, uint32_t i)
{
    uint8_t want[SHM_ENTRY_MAX];
    size_t len = fill_msg(want, i);
    return c->len == len && memcmp(c->bytes, want, len) == 0;
}

static uint32_t N; /* cells of the rings under test */

/* A ring whose positions start at `start` (0, or just below 2^32). */
static void ring_at(shm_ring_t *r, shm_tx_t *tx, shm_rx_t *rx, uint32_t start)
{
    shm_ring_init(r, N);
    atomic_store(&r->tail, start);
    *tx = (shm_tx_t){ .ring = r, .head = start, .tail_seen = start, .mask = N - 1, .mark = start };
    *rx = (shm_rx_t){ .ring = r, .tail = start, .mask = N - 1 };
}

static void test_order_and_wrap(shm_ring_t *r, uint32_t start)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, start);
    CHECK(shm_ring_peek(&rx) == NULL, "an empty ring has nothing to take");
    uint8_t buf[SHM_ENTRY_MAX];
    uint32_t sent = 0, got = 0;
    /* bursts of varying length, so that the cells wrap at every offset */
    for (int round = 0; round < 40; round++) {
        /* (a burst of up to N / SHM_ENTRY_CELLS always fits) */
        unsigned burst = 1 + (unsigned)(round * 13) % (N / SHM_ENTRY_CELLS);
        for (unsigned k = 0; k < burst; k++, sent++) {
            size_t len = fill_msg(buf, sent);
            /* split the message in two parts at a point that varies */
            size_t split = sent % (len + 1);
            CHECK(shm_ring_put(&tx, buf, split, buf + split, len - split), "put %u", sent);
        }
        const shm_cell_t *c;
        while ((c = shm_ring_peek(&rx))) {
            CHECK(msg_ok(c, got), "message %u (start %u) has wrong bytes or length", got, start);
            shm_ring_pop(&rx, c);
            got++;
        }
        CHECK(got == sent, "took %u of %u", got, sent);
    }
}

/* reserve/publish (the sender that writes an envelope in place): nothing
 * is visible, and nothing of the cell is written, until publish; the ask
 * for a cell ahead (t->ahead) changes nothing a receiver sees; a reserve
 * at a lap's end leaves a pad the receiver skips. */
static void test_reserve_publish(shm_ring_t *r)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, 0);
    tx.ahead = 8;
    uint8_t buf[SHM_ENTRY_MAX];
    for (uint32_t i = 0; i < 3 * N; i++) {
        size_t len = fill_msg(buf, i);
        shm_cell_t *c = shm_ring_reserve(&tx, len);
        CHECK(c != NULL, "reserve %u", i);
        if (!c)
            return;
        uint32_t seq_before = atomic_load(&c->seq), len_before = c->len;
        CHECK(shm_ring_peek(&rx) == NULL, "entry %u visible before its publish", i);
        memcpy(c->bytes, buf, len);
        CHECK(atomic_load(&c->seq) == seq_before && c->len == len_before, "reserve %u wrote the cell's header", i);
        shm_ring_publish(&tx, c, len);
        shm_ring_ask_ahead(&tx);
        const shm_cell_t *got = shm_ring_peek(&rx);
        CHECK(got == c && got && msg_ok(got, i), "entry %u: not the one published, or wrong bytes", i);
        if (got)
            shm_ring_pop(&rx, got);
        CHECK(shm_ring_peek(&rx) == NULL, "only entry %u was published", i);
    }
    CHECK(shm_ring_reserve(&tx, SHM_ENTRY_MAX + 1) == NULL, "an entry above entry_max is refused");
}

static void test_full_and_too_big(shm_ring_t *r)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, 5);
    static uint8_t buf[SHM_ENTRY_MAX + 1];
    memset(buf, 0xab, sizeof buf);
    CHECK(!shm_ring_put(&tx, buf, SHM_ENTRY_MAX + 1, NULL, 0), "an envelope larger than an entry");
    CHECK(!shm_ring_put(&tx, buf, SHM_ENTRY_MAX, buf, 1), "two parts larger than an entry");
    CHECK(!shm_ring_put(&tx, buf, 1, buf, SIZE_MAX), "a length that would wrap");
    CHECK(shm_ring_peek(&rx) == NULL, "a refused envelope leaves nothing behind");
    for (uint32_t i = 0; i < N; i++) {
        size_t len = fill_msg(buf, i * 5); /* one-cell messages only */
        CHECK(shm_ring_put(&tx, buf, len, NULL, 0), "cell %u of an empty ring", i);
    }
    CHECK(!shm_ring_put(&tx, buf, 4, NULL, 0), "a full ring takes nothing more");
    /* the consumer has taken but not given back: still full */
    const shm_cell_t *c = shm_ring_peek(&rx);
    CHECK(c && msg_ok(c, 0));
    CHECK(!shm_ring_put(&tx, buf, 4, NULL, 0), "a peeked cell is not free yet");
    shm_ring_pop(&rx, c);
    size_t len = fill_msg(buf, N * 5);
    CHECK(shm_ring_put(&tx, buf, len, NULL, 0), "one cell given back, one more fits");
    CHECK(!shm_ring_put(&tx, buf, 4, NULL, 0), "and then it is full again");
    for (uint32_t i = 1; i <= N; i++) {
        c = shm_ring_peek(&rx);
        CHECK(c && msg_ok(c, i * 5), "message %u after the ring was full", i);
        if (c)
            shm_ring_pop(&rx, c);
    }
    CHECK(shm_ring_peek(&rx) == NULL);
    /* a full-size envelope, a one-cell one and an empty one */
    for (size_t i = 0; i < SHM_ENTRY_MAX; i++)
        buf[i] = (uint8_t)(i * 13);
    CHECK(shm_ring_put(&tx, buf, SHM_ENTRY_MAX, NULL, 0));
    CHECK(shm_ring_put(&tx, buf, SHM_CELL_DATA, NULL, 0));
    CHECK(shm_ring_put(&tx, buf, 0, NULL, 0));
    c = shm_ring_peek(&rx);
    CHECK(c && c->len == SHM_ENTRY_MAX && memcmp(c->bytes, buf, SHM_ENTRY_MAX) == 0);
    if (c)
        shm_ring_pop(&rx, c);
    c = shm_ring_peek(&rx);
    CHECK(c && c->len == SHM_CELL_DATA && memcmp(c->bytes, buf, SHM_CELL_DATA) == 0);
    if (c)
        shm_ring_pop(&rx, c);
    c = shm_ring_peek(&rx);
    CHECK(c && c->len == 0);
    if (c)
        shm_ring_pop(&rx, c);
    /* full with long entries: as many as fit, with the pads they need */
    unsigned fitted = 0;
    while (shm_ring_put(&tx, buf, SHM_ENTRY_MAX, NULL, 0))
        fitted++;
    CHECK(fitted >= N / SHM_ENTRY_CELLS - 1 && fitted <= N / SHM_ENTRY_CELLS,
          "%u long entries in an empty ring", fitted);
    bool room = tx.head - rx.tail < N;
    CHECK(shm_ring_put(&tx, buf, 1, NULL, 0) == room, "a one-cell entry fits exactly where a cell is left");
    while ((c = shm_ring_peek(&rx)))
        shm_ring_pop(&rx, c);
}

/* Bytes of a long entry sit where later laps put the headers of entries:
 * bytes that equal the seq the receiver will wait for there must not make
 * it take a cell the sender has not filled. */
static void test_stale_bytes(shm_ring_t *r)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, 3);
    static uint8_t buf[SHM_ENTRY_MAX];
    uint32_t first = tx.head;
    /* cell first+j's seq lies at bytes offset j * SHM_CELL_SIZE - SHM_CELL_HDR;
     * write there the seq expected when the tail reaches it a lap later */
    memset(buf, 0, sizeof buf);
    for (uint32_t j = 1; j < SHM_ENTRY_CELLS; j++) {
        uint32_t later = first + j + N + 1;
        memcpy(buf + j * SHM_CELL_SIZE - SHM_CELL_HDR, &later, sizeof later);
    }
    CHECK(shm_ring_put(&tx, buf, SHM_ENTRY_MAX, NULL, 0));
    const shm_cell_t *c = shm_ring_peek(&rx);
    CHECK(c && c->len == SHM_ENTRY_MAX && memcmp(c->bytes, buf, SHM_ENTRY_MAX) == 0);
    if (c)
        shm_ring_pop(&rx, c);
    /* one-cell entries up to the long entry's first cell of the next lap */
    uint8_t b = 7;
    while (tx.head != first + N + 1) {
        CHECK(shm_ring_put(&tx, &b, 1, NULL, 0));
        c = shm_ring_peek(&rx);
        CHECK(c && c->len == 1 && c->bytes[0] == 7);
        if (!c)
            return;
        shm_ring_pop(&rx, c);
    }
    CHECK(shm_ring_peek(&rx) == NULL, "a cell that held a long entry's bytes is taken as an entry");
}

/* Medium entries (entry_max = SHM_MEDIUM_MAX, rings of SHM_MEDIUM_MIN_CELLS
 * or more): bytes intact across wrap-around, a quarter of the ring always
 * left for small entries, stale bytes of a medium entry never taken for a
 * seq, and shm_ring_busy telling whether the receiver has taken them all. */
static void test_medium(shm_ring_t *r)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, UINT32_MAX - 300);
    static uint8_t buf[SHM_MEDIUM_MAX + 1];
    CHECK(!shm_ring_put(&tx, buf, SHM_ENTRY_MAX + 1, NULL, 0), "no medium entry without entry_max");
    tx.entry_max = SHM_MEDIUM_MAX;
    CHECK(!shm_ring_put(&tx, buf, SHM_MEDIUM_MAX + 1, NULL, 0), "nothing above SHM_MEDIUM_MAX");
    CHECK(!shm_ring_busy(&tx), "an empty ring is not busy");
    const shm_cell_t *c;
    /* lengths from just above an 8 KiB entry to the largest, over several laps */
    for (uint32_t i = 0; i < 3 * N / SHM_MEDIUM_CELLS; i++) {
        size_t len = SHM_ENTRY_MAX + 1 + (i * 7919u) % (SHM_MEDIUM_MAX - SHM_ENTRY_MAX);
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)(i * 31u + k * 7u);
        size_t split = i % 3 == 0 ? len : 56; /* header + payload, as pt2pt sends them */
        CHECK(shm_ring_put(&tx, buf, split, buf + split, len - split), "medium entry %u", i);
        CHECK(!shm_ring_busy(&tx), "an unmarked entry does not make the ring busy");
        tx.mark = tx.head;
        CHECK(shm_ring_busy(&tx), "a ring holding our marked entry is busy");
        CHECK(shm_ring_put(&tx, buf, 4, NULL, 0));
        c = shm_ring_peek(&rx);
        CHECK(c && c->len == len && memcmp(c->bytes, buf, len) == 0, "medium entry %u has wrong bytes", i);
        if (c)
            shm_ring_pop(&rx, c);
        CHECK(!shm_ring_busy(&tx), "taken the marked entry, the ring is not busy (an unmarked one follows)");
        CHECK(shm_ring_put(&tx, buf, len, NULL, 0));
        c = shm_ring_peek(&rx);
        CHECK(c && c->len == 4 && memcmp(c->bytes, buf, 4) == 0, "the one-cell entry after medium entry %u", i);
        if (c)
            shm_ring_pop(&rx, c);
        c = shm_ring_peek(&rx);
        CHECK(c && c->len == len && memcmp(c->bytes, buf, len) == 0, "medium entry %u (whole) has wrong bytes", i);
        if (c)
            shm_ring_pop(&rx, c);
    }
    /* full of medium entries: a quarter stays free, and small ones still fit */
    unsigned fitted = 0;
    while (shm_ring_put(&tx, buf, SHM_MEDIUM_MAX, NULL, 0))
        fitted++;
    CHECK(fitted > 0 && tx.head - rx.tail <= N - N / 4, "%u medium entries left %u of %u cells", fitted,
          N - (tx.head - rx.tail), N);
    CHECK(shm_ring_put(&tx, buf, SHM_ENTRY_MAX, NULL, 0), "an 8 KiB entry fits beside a full load of medium ones");
    CHECK(shm_ring_put(&tx, buf, 4, NULL, 0), "and a one-cell one");
    while ((c = shm_ring_peek(&rx)))
        shm_ring_pop(&rx, c);
    /* stale bytes: a medium entry's bytes where later laps put headers */
    uint32_t first = tx.head;
    memset(buf, 0, SHM_MEDIUM_MAX);
    for (uint32_t j = 1; j < SHM_MEDIUM_CELLS; j++) {
        uint32_t later = first + j + N + 1;
        memcpy(buf + j * SHM_CELL_SIZE - SHM_CELL_HDR, &later, sizeof later);
    }
    CHECK(shm_ring_put(&tx, buf, SHM_MEDIUM_MAX, NULL, 0));
    c = shm_ring_peek(&rx);
    CHECK(c && c->len == SHM_MEDIUM_MAX && memcmp(c->bytes, buf, SHM_MEDIUM_MAX) == 0);
    if (c)
        shm_ring_pop(&rx, c);
    uint8_t b = 9;
    while (tx.head != first + N + 1) {
        CHECK(shm_ring_put(&tx, &b, 1, NULL, 0));
        c = shm_ring_peek(&rx);
        CHECK(c && c->len == 1 && c->bytes[0] == 9);
        if (!c)
            return;
        shm_ring_pop(&rx, c);
    }
    CHECK(shm_ring_peek(&rx) == NULL, "a cell that held a medium entry's bytes is taken as an entry");
}

static void test_notify(shm_ring_t *r)
{
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, 0);
    _Atomic uint32_t word = 0;
    tx.notify = &word;
    uint8_t b = 1;
    CHECK(shm_ring_put(&tx, &b, 1, NULL, 0));
    CHECK(atomic_load(&word) == 1, "a put raises the receiver's word");
    atomic_store(&word, 0);
    for (uint32_t i = 0; i < N - 1; i++)
        CHECK(shm_ring_put(&tx, &b, 1, NULL, 0));
    atomic_store(&word, 0);
    CHECK(!shm_ring_put(&tx, &b, 1, NULL, 0));
    CHECK(atomic_load(&word) == 0, "a refused put leaves the word alone");
}

/* A child process produces, this one consumes, through a MAP_SHARED ring:
 * every message arrives once, in order, with its bytes. */
static void test_two_processes(void)
{
    const uint32_t n = 100000;
    shm_ring_t *r = mmap(NULL, shm_ring_bytes(N), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    if (r == MAP_FAILED)
        return;
    shm_tx_t tx;
    shm_rx_t rx;
    ring_at(r, &tx, &rx, UINT32_MAX - 1000); /* the positions wrap on the way */
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        static uint8_t buf[SHM_ENTRY_MAX];
        for (uint32_t i = 0; i < n; i++) {
            size_t len = fill_msg(buf, i);
            for (unsigned spin = 1; !shm_ring_put(&tx, buf, len, NULL, 0); spin++)
                if (spin % 1024 == 0)
                    sched_yield(); /* full for long: the consumer may need our core */
        }
        _exit(0);
    }
    uint32_t got = 0, bad = 0;
    for (unsigned spin = 1; got < n; spin++) {
        const shm_cell_t *c = shm_ring_peek(&rx);
        if (!c) {
            if (spin % 1024 == 0)
                sched_yield();
            continue;
        }
        bad += !msg_ok(c, got);
        shm_ring_pop(&rx, c);
        got++;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(bad == 0, "%u of %u messages arrived with wrong bytes or out of order", bad, n);
    CHECK(shm_ring_peek(&rx) == NULL, "nothing after the last message");
    munmap(r, shm_ring_bytes(N));
}

/* Ring sizes by job size: powers of two, SHM_NODE_BUDGET bytes a node at
 * most, none below SHM_MIN_CELLS, and the largest that fits. */
static void test_cells_for(void)
{
    const int nprocs[] = {1, 2, 8, 16, 45, 64, 127, 128, 200};
    for (size_t i = 0; i < sizeof nprocs / sizeof *nprocs; i++) {
        int p = nprocs[i];
        uint32_t c = shm_ring_cells_for(p);
        size_t rings = (size_t)p * (size_t)p;
        if (!c) {
            CHECK(rings * shm_ring_bytes(SHM_MIN_CELLS) > SHM_NODE_BUDGET, "%d processes: no rings, yet %u fit", p,
                  SHM_MIN_CELLS);
            continue;
        }
        CHECK((c & (c - 1)) == 0 && c >= SHM_MIN_CELLS && c <= SHM_MAX_CELLS, "%d processes: %u cells", p, c);
        CHECK(rings * shm_ring_bytes(c) <= SHM_NODE_BUDGET, "%d processes: %u cells exceed the budget", p, c);
        CHECK(c == SHM_MAX_CELLS || rings * shm_ring_bytes(2 * c) > SHM_NODE_BUDGET,
              "%d processes: %u cells, but twice as many fit", p, c);
    }
    CHECK(shm_ring_cells_for(2) == SHM_MAX_CELLS, "two processes get the largest rings");
    CHECK(shm_ring_cells_for(45) == 1024, "45 processes: 1024 cells (as the fixed rings were)");
    CHECK(shm_ring_cells_for(200) == 0, "200 processes: no rings");
    CHECK(SHM_MAX_CELLS >= 64 * shm_entry_cells(8192 + 56), "a window of 64 8 KiB envelopes fits the largest ring");
}

int main(void)
{
    unit_check_watchdog(120, "test_shm: hung (watchdog)\n");
    test_cells_for();
    const uint32_t sizes[] = {SHM_MIN_CELLS, SHM_MAX_CELLS};
    for (size_t i = 0; i < 2; i++) {
        N = sizes[i];
        shm_ring_t *r = aligned_alloc(SHM_LINE, shm_ring_bytes(N));
        CHECK(r != NULL);
        if (!r)
            return 1;
        test_order_and_wrap(r, 0);
        test_order_and_wrap(r, UINT32_MAX - 70); /* positions wrap through 2^32 */
        test_full_and_too_big(r);
        test_reserve_publish(r);
        test_stale_bytes(r);
        test_notify(r);
        if (N >= SHM_MEDIUM_MIN_CELLS)
            test_medium(r);
        free(r);
        test_two_processes();
    }
    if (unit_check_summary("test_shm"))
        return 1;
    printf("test_shm: ok\n");
    return 0;
}
