/* Tell AddressSanitizer and Valgrind about ULT stacks.
 *
 * Both tools track "the" stack of a thread; a context switch to another
 * stack looks to them like a wild stack-pointer jump.  ASan needs to be told
 * around every switch (fiber annotations) and Valgrind needs every stack
 * registered once.  Without the tools all of this compiles to nothing. */
#ifndef AMPI_RANK_SAN_H
#define AMPI_RANK_SAN_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define RANK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RANK_ASAN 1
#endif
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define RANK_VALGRIND 1
#endif
#endif

#ifdef RANK_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* Before switching to the stack [bottom, bottom + size).  *save receives
 * ASan's state of the stack being left; pass save == NULL when the stack
 * being left is dead for good (ASan then frees its fake frames). */
static inline void rank_san_switch_begin(void **save, const void *bottom, size_t size)
{
#ifdef RANK_ASAN
    __sanitizer_start_switch_fiber(save, bottom, size);
#else
    (void)save, (void)bottom, (void)size;
#endif
}

/* Right after a switch lands.  save is what rank_san_switch_begin stored
 * when this stack was left (NULL on its first entry); *old_bottom and
 * *old_size (may be NULL) receive the stack that was just left. */
static inline void rank_san_switch_end(void *save, const void **old_bottom, size_t *old_size)
{
#ifdef RANK_ASAN
    __sanitizer_finish_switch_fiber(save, old_bottom, old_size);
#else
    (void)save, (void)old_bottom, (void)old_size;
#endif
}

/* A stack's memory is handed back or reused: forget stale red zones that
 * frames which never returned left poisoned. */
static inline void rank_san_stack_clean(void *bottom, size_t size)
{
#ifdef RANK_ASAN
    __asan_unpoison_memory_region(bottom, size);
#else
    (void)bottom, (void)size;
#endif
}

/* Valgrind stack registration; the id is 0 without Valgrind. */
static inline unsigned rank_san_stack_register(void *bottom, size_t size)
{
#ifdef RANK_VALGRIND
    return VALGRIND_STACK_REGISTER(bottom, (char *)bottom + size);
#else
    (void)bottom, (void)size;
    return 0;
#endif
}

static inline void rank_san_stack_deregister(unsigned id)
{
#ifdef RANK_VALGRIND
    VALGRIND_STACK_DEREGISTER(id);
#else
    (void)id;
#endif
}

#endif
