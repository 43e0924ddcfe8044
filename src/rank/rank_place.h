/* Block placement of V MPI ranks onto P processes.
 *
 * Process proc hosts the contiguous ranks [first(proc), first(proc+1)).  Each
 * process gets V/P ranks and the first V%P processes one more, so V=10, P=4
 * gives 3,3,2,2.  Contiguous blocks keep neighbouring ranks (which usually
 * talk most) inside one process.  P > V is allowed: the last processes then
 * host no rank.  All functions are O(1) and need no table. */
#ifndef AMPI_RANK_PLACE_H
#define AMPI_RANK_PLACE_H

/* First rank of process proc (0 <= proc <= p); proc == p gives v. */
int rank_place_first(int v, int p, int proc);

/* Number of ranks on process proc (0 <= proc < p). */
int rank_place_count(int v, int p, int proc);

/* Process that hosts rank (0 <= rank < v). */
int rank_place_proc(int v, int p, int rank);

#endif
