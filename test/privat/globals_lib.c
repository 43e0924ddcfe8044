/* A shared library of the program's own, built with `ampicc -shared`
 * (test/privat/run.sh): a program linked with -privatize loads a copy of it
 * per rank, so its globals, its thread-locals and its constructor's effects
 * are each rank's (globals_so.c checks them).  It needs globals_lib2, also
 * built by ampicc: the rank's copy of this library binds to that rank's copy
 * of the other. */
int lib_counter;           /* a plain global of the library */
__thread int lib_tls;      /* a thread-local of the library */
static int constructed;    /* how often this copy's constructor ran */
int lib2_bump(void);       /* globals_lib2.c */

__attribute__((constructor)) static void lib_init(void) { constructed++; }

int lib_bump(void);
int lib_bump(void)
{
    lib_tls += 10;
    lib2_bump();
    return ++lib_counter;
}

int lib_constructed(void);
int lib_constructed(void) { return constructed; }
