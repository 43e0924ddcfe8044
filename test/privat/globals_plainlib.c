/* A shared library built by plain cc, not ampicc: loaded once per process
 * even in a privatized program, so its global is shared by the ranks of a
 * process, and the globals warning at MPI_Init names it (globals_so.c). */
int plain_shared_counter;

int plain_bump(void);
int plain_bump(void) { return ++plain_shared_counter; }
