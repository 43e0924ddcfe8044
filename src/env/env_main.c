/* libampi_main.a: the start-up of every program that ampicc links.
 *
 * The wrapper links with -Wl,--wrap=main (and =exit, =atexit), so the C
 * runtime's call of main reaches __wrap_main here, and __real_main is the
 * program's own main, whatever file defines it, in C or C++: mpi.h renames
 * nothing, C's implicit `return 0` from main holds, and the compiler's
 * messages name main.  __wrap_main runs that main once per MPI rank through
 * AMPI_Run.  This must be an archive linked into the program: --wrap binds
 * the program's references at link time, and a shared library cannot
 * define __real_main. */
#include "env/env_main.h"

#include <stdlib.h>

extern char **environ;

/* weak: a program without main of its own (built from objects compiled
 * against an older mpi.h that renamed main to AMPI_Main) still links */
int __real_main(int argc, char **argv, char **envp) __attribute__((weak));
extern int AMPI_Main(int argc, char **argv) __attribute__((weak));
_Noreturn void __real_exit(int status);
int __real_atexit(void (*fn)(void));

int __wrap_main(int argc, char **argv, char **envp);
_Noreturn void __wrap_exit(int status);
int __wrap_atexit(void (*fn)(void));

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer hook (sanitizer builds only): PMIx keeps a few strings from
 * PMIx_Init until exit; they are its own, not the program's or ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libpmix.so\n"; }
/* ASan's handler of a fault would name no rank (many share the process)
 * and end the process with status 1, hiding the signal from ampirun: the
 * fatal signals stay with ours (env_crash.c), which names the rank, prints
 * its backtrace and dies by the signal, as in the plain build.  ASAN_OPTIONS
 * set by the user still wins. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0"; }
#endif

/* Every rank gets the process's environment as main's third argument (as
 * it stands once the library has set AMPI_LOCAL_RANK and friends). */
static int run_main(int argc, char **argv) { return __real_main(argc, argv, environ); }

int __wrap_main(int argc, char **argv, char **envp)
{
    (void)envp;
    if (__real_main)
        return AMPI_Run(argc, argv, run_main);
    if (AMPI_Main)
        return AMPI_Run(argc, argv, AMPI_Main);
    return 1; /* not reached: the link needs a main or AMPI_Main */
}

void __wrap_exit(int status)
{
    AMPI_Rank_exit(status); /* returns only when not called by a rank */
    __real_exit(status);
}

int __wrap_atexit(void (*fn)(void))
{
    if (AMPI_Atexit_seen(fn))
        return 0;
    return __real_atexit(fn);
}
