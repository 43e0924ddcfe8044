/* rank_ctx_make for the assembly context switch (x86-64, aarch64): build, on
 * the new stack, the frame rank_ctx_switch would have saved, so that its
 * "return" enters rank_ctx_trampoline with fn and arg in callee-saved
 * registers.  The frame layouts are documented in the .S files. */
#include "rank/rank_ctx.h"

#ifdef RANK_CTX_ASM
#include <stdint.h>
#include <string.h>

void rank_ctx_trampoline(void); /* assembly; never called from C */

void rank_ctx_make(rank_ctx_t *ctx, void *stack, size_t size, void (*fn)(void *), void *arg)
{
    /* The ABIs want a 16-byte aligned stack pointer at call sites. */
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;

#if defined(__x86_64__)
    /* Two zero words on top: a null "return address" that ends frame-pointer
     * walks, and the padding that leaves rsp 16-byte aligned right after the
     * jump into the trampoline (which then calls fn with the ABI alignment). */
    *--sp = 0;
    *--sp = 0;
    *--sp = (uint64_t)(uintptr_t)rank_ctx_trampoline; /* popped and jumped to */
    *--sp = 0;                                        /* rbp */
    *--sp = 0;                                        /* rbx */
    *--sp = (uint64_t)(uintptr_t)fn;                  /* r12 */
    *--sp = (uint64_t)(uintptr_t)arg;                 /* r13 */
    *--sp = 0;                                        /* r14 */
    *--sp = 0;                                        /* r15 */
    /* A new context starts with its creator's floating-point control state,
     * as a new thread does. */
    uint32_t mxcsr;
    uint16_t x87cw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(x87cw));
    *--sp = (uint64_t)mxcsr | (uint64_t)x87cw << 32;
#elif defined(__aarch64__)
    sp -= 176 / 8;
    memset(sp, 0, 176);
    sp[0] = (uint64_t)(uintptr_t)fn;                   /* x19 */
    sp[1] = (uint64_t)(uintptr_t)arg;                  /* x20 */
    sp[11] = (uint64_t)(uintptr_t)rank_ctx_trampoline; /* x30: where ret goes; x29 stays 0 */
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    sp[20] = fpcr;
#endif
    ctx->sp = sp;
}

#endif
