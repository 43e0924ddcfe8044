/* rank_ctx_switch for aarch64 (AAPCS64).
 *
 * Saves what a callee must preserve: x19-x28, the frame pointer x29, the link
 * register x30 (our return address), the low halves d8-d15 of v8-v15, and
 * FPCR (rounding mode etc.: per-rank control state, as MXCSR on x86-64).
 * FPCR is only written when it differs, because writing it can be slow.
 *
 * Saved frame (176 bytes), from the saved stack pointer upwards:
 *     0: x19 x20   16: x21 x22   32: x23 x24   48: x25 x26   64: x27 x28
 *    80: x29 x30   96: d8 d9    112: d10 d11  128: d12 d13  144: d14 d15
 *   160: FPCR     168: padding (keeps sp 16-byte aligned)
 * rank_ctx_make builds the same frame by hand.
 */
#if defined(__aarch64__) && !defined(RANK_CTX_UCONTEXT)

    .text
    .globl  rank_ctx_switch
    .hidden rank_ctx_switch
    .type   rank_ctx_switch, %function
    .p2align 4
/* void rank_ctx_switch(rank_ctx_t *from (x0), rank_ctx_t *to (x1)) */
rank_ctx_switch:
    .cfi_startproc
    sub     sp, sp, #176
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    stp     d8, d9, [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    mrs     x9, fpcr
    str     x9, [sp, #160]
    mov     x9, sp
    str     x9, [x0]            /* from->sp */
    ldr     x9, [x1]            /* to->sp: from here on we are on the other stack */
    mov     sp, x9
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    ldp     d8, d9, [sp, #96]
    ldp     d10, d11, [sp, #112]
    ldp     d12, d13, [sp, #128]
    ldp     d14, d15, [sp, #144]
    ldr     x9, [sp, #160]
    mrs     x10, fpcr
    cmp     x9, x10
    b.eq    1f
    msr     fpcr, x9
1:
    add     sp, sp, #176
    ret
    .cfi_endproc
    .size   rank_ctx_switch, .-rank_ctx_switch

/* First code a new context runs (reached by the ret above through x30):
 * rank_ctx_make left fn in x19 and arg in x20, and sp 16-byte aligned.
 * fn never returns; brk traps if it does. */
    .globl  rank_ctx_trampoline
    .hidden rank_ctx_trampoline
    .type   rank_ctx_trampoline, %function
    .p2align 4
rank_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined x30          /* outermost frame: debuggers stop unwinding here */
    mov     x0, x20
    blr     x19
    brk     #0
    .cfi_endproc
    .size   rank_ctx_trampoline, .-rank_ctx_trampoline

#endif
    /* Also when empty: without this note the linker assumes an executable stack. */
    .section .note.GNU-stack,"",%progbits
