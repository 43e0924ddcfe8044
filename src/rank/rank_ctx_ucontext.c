/* Portable context switch on <ucontext.h>, for architectures without our
 * assembly (see rank_ctx.h).  Much slower (swapcontext also saves the signal
 * mask with a system call) but correct everywhere glibc runs. */
#include "rank/rank_ctx.h"

#if !defined(RANK_CTX_ASM)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* makecontext passes only int arguments, so pointers travel as two 32-bit
 * halves and are glued back together here. */
static uintptr_t glue(unsigned hi, unsigned lo)
{
    return (uintptr_t)(((uint64_t)hi << 32) | lo);
}

static void ucontext_entry(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi, unsigned arg_lo)
{
    void (*fn)(void *) = (void (*)(void *))glue(fn_hi, fn_lo);
    fn((void *)glue(arg_hi, arg_lo));
    abort(); /* fn must never return: uc_link is NULL, the thread would exit */
}

void rank_ctx_make(rank_ctx_t *ctx, void *stack, size_t size, void (*fn)(void *), void *arg)
{
    uint64_t f = (uint64_t)(uintptr_t)fn, a = (uint64_t)(uintptr_t)arg;
    if (getcontext(&ctx->uc) != 0) {
        perror("ampi: getcontext");
        abort();
    }
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    makecontext(&ctx->uc, (void (*)(void))ucontext_entry, 4, (unsigned)(f >> 32),
                (unsigned)f, (unsigned)(a >> 32), (unsigned)a);
}

void rank_ctx_switch(rank_ctx_t *from, rank_ctx_t *to)
{
    if (swapcontext(&from->uc, &to->uc) != 0) {
        perror("ampi: swapcontext");
        abort();
    }
}

#endif
