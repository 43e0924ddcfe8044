/* A hosted PE: library mode, where the program's own OS threads call MPI
 * (Python with mpi4py, a plug-in, a program linked without ampicc's
 * start-up) and no scheduler loop of ours runs the PE.
 *
 * The process then has one rank and any of its OS threads may call MPI:
 * every call holds the host lock, a FIFO (ticket) lock that a thread may
 * take again while it holds it, so calls run one at a time.  A thread that
 * waits inside MPI (outside any ULT: rank_block polls) hosts the PE: it
 * runs progress and the PE's ready ULTs (helpers of nonblocking
 * collectives), and hands the lock to the threads queued for it, so that a
 * thread blocked in MPI_Recv never keeps another out of MPI_Send.
 *
 * A helper ULT may thus be resumed by another OS thread than the one that
 * started it; library code on ULT stacks reads thread-local state afresh
 * after each switch (rank_this_pe is read through %fs each time). */
#ifndef AMPI_RANK_HOST_H
#define AMPI_RANK_HOST_H

#include <stdbool.h>
#include "rank/rank_ult.h"
#include "util/util_log.h"

/* Set once, by rank_host_start, before any other thread can call MPI. */
extern bool rank_hosted UTIL_HIDDEN;

/* Makes pe the hosted PE of this process (the caller holds no lock yet). */
void rank_host_start(rank_pe_t *pe);

void rank_host_lock(void);   /* also makes the hosted PE this thread's PE */
void rank_host_unlock(void);
/* Inside a wait: let the threads queued for the lock have their turn. */
void rank_host_pause(void);
/* Whether the calling thread holds the lock (for assertions, messages). */
bool rank_host_held(void);

/* Serializes the enclosing MPI function in library mode: the lock is taken
 * here and let go when the function returns, whichever return it takes. */
static inline bool rank_host_enter(void)
{
    if (__builtin_expect(!rank_hosted, 1))
        return false;
    rank_host_lock();
    return true;
}
static inline void rank_host_leave(bool *held)
{
    if (__builtin_expect(*held, 0))
        rank_host_unlock();
}
#define RANK_HOST_GUARD __attribute__((cleanup(rank_host_leave))) bool rank_host_held_ = rank_host_enter()

#endif
