/* The real main of every program built with ampicc (installed as
 * libampi_main.a).  mpi.h renamed the user's main to AMPI_Main; in C++ an
 * `int main()` without parameters becomes a mangled overload, so look for
 * that one too.  These are weak references: whichever exists is called once
 * per MPI rank by AMPI_Run. */
#define AMPI_NO_MAIN_RENAME 1
#include "mpi.h"

#include <stdio.h>

extern int AMPI_Main(int, char **) __attribute__((weak));
extern int _Z9AMPI_MainiPPc(int, char **) __attribute__((weak)); /* C++: int AMPI_Main(int, char**) */
extern int _Z9AMPI_Mainv(void) __attribute__((weak));           /* C++: int AMPI_Main() */

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer hook (sanitizer builds only): PMIx keeps a few strings from
 * PMIx_Init until exit; they are its own, not the program's or ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libpmix.so\n"; }
#endif

static int call_noargs(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return _Z9AMPI_Mainv();
}

int main(int argc, char **argv)
{
    if (AMPI_Main)
        return AMPI_Run(argc, argv, AMPI_Main);
    if (_Z9AMPI_MainiPPc)
        return AMPI_Run(argc, argv, _Z9AMPI_MainiPPc);
    if (_Z9AMPI_Mainv)
        return AMPI_Run(argc, argv, call_noargs);
    fprintf(stderr, "ampi: this program has no main: its main file must include mpi.h\n");
    return 1;
}
