/* rank_ctx_switch for x86-64 (System V ABI).
 *
 * Only what the ABI says a callee must preserve is saved: rbx, rbp, r12-r15,
 * the MXCSR control/status bits and the x87 control word (both "callee-saved"
 * control state: a rank that changes its rounding mode must not change its
 * neighbours').  Everything else is already saved by the caller, because for
 * the compiler this is an ordinary function call.
 *
 * Saved frame, from the saved stack pointer upwards (rank_ctx_make builds the
 * same frame by hand):
 *    0: MXCSR (4 bytes), x87 control word (2), padding (2)
 *    8: r15   16: r14   24: r13   32: r12   40: rbx   48: rbp
 *   56: return address (resumed with pop + jmp)
 */
#if defined(__x86_64__) && !defined(RANK_CTX_UCONTEXT)

    .text
    .globl  rank_ctx_switch
    .hidden rank_ctx_switch
    .type   rank_ctx_switch, @function
    .p2align 4
/* void rank_ctx_switch(rank_ctx_t *from (rdi), rank_ctx_t *to (rsi)) */
rank_ctx_switch:
    .cfi_startproc
    /* Both stacks hold the same frame layout, so these CFA offsets describe
     * the code before and after the stack swap alike (for profilers). */
    pushq   %rbp
    .cfi_adjust_cfa_offset 8
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    pushq   %r14
    .cfi_adjust_cfa_offset 8
    pushq   %r15
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)        /* from->sp */
    movq    (%rsi), %rsp        /* to->sp: from here on we are on the other stack */
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %r15
    .cfi_adjust_cfa_offset -8
    popq    %r14
    .cfi_adjust_cfa_offset -8
    popq    %r13
    .cfi_adjust_cfa_offset -8
    popq    %r12
    .cfi_adjust_cfa_offset -8
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    /* pop + jmp instead of ret: a ret here would never match the call that
     * the return-stack predictor remembers (that call was made in the other
     * context), so every switch would mispredict: 2-3x slower (bench_ctx on
     * a 2-core machine, 3c4468e).  (No
     * endbr64 at the targets: this object carries no IBT/SHSTK property, so
     * the linker leaves CET off for programs that contain it, as any
     * stack-switching code must.) */
    popq    %r11
    jmpq    *%r11
    .cfi_endproc
    .size   rank_ctx_switch, .-rank_ctx_switch

/* First code a new context runs (the jmp above lands here): rank_ctx_make
 * left fn in r12 and arg in r13, and rsp 16-byte aligned, so the call below
 * gives fn the stack alignment the ABI promises.  fn never returns; ud2
 * traps if it does. */
    .globl  rank_ctx_trampoline
    .hidden rank_ctx_trampoline
    .type   rank_ctx_trampoline, @function
    .p2align 4
rank_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip          /* outermost frame: debuggers stop unwinding here */
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   rank_ctx_trampoline, .-rank_ctx_trampoline

    .section .note.GNU-stack,"",@progbits
#else
    /* Not x86-64: this file is empty; still say the stack is not executable. */
    .section .note.GNU-stack,"",%progbits
#endif
