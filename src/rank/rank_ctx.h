/* Context switch between ULTs: our own assembly on x86-64 and aarch64
 * (callee-saved registers only, ~10 ns), ucontext as the portable fallback. */
#ifndef AMPI_RANK_CTX_H
#define AMPI_RANK_CTX_H

#include <stddef.h>

/* -DRANK_CTX_UCONTEXT forces the fallback (to test it on x86-64/aarch64). */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(RANK_CTX_UCONTEXT)
#define RANK_CTX_ASM 1
typedef struct rank_ctx {
    void *sp; /* stack pointer with the callee-saved registers pushed below it */
} rank_ctx_t;
#else
#include <ucontext.h>
typedef struct rank_ctx {
    ucontext_t uc;
} rank_ctx_t;
#endif

/* Prepare ctx so that the first rank_ctx_switch() into it calls fn(arg) on
 * the stack [stack, stack + size).  fn must never return. */
void rank_ctx_make(rank_ctx_t *ctx, void *stack, size_t size, void (*fn)(void *), void *arg);

/* Save the current registers in *from and resume *to. */
void rank_ctx_switch(rank_ctx_t *from, rank_ctx_t *to);

#endif
