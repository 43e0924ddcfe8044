/* The globals warning: ranks of one process are user-level threads that
 * share its global and static variables, so a program that writes them
 * computes wrong results under +vp.  Until the library privatizes them,
 * MPI_Init says so once per job (process 0, when some process runs more
 * than one rank), naming the first few such variables it finds in the
 * program and its own shared libraries (AMPI_WARN_GLOBALS=0 silences it). */
#ifndef AMPI_ENV_GLOBALS_H
#define AMPI_ENV_GLOBALS_H

#include <stdbool.h>
#include <stddef.h>

/* Called by the first MPI_Init of the process. */
void env_globals_check(void);

/* A variable the library gives each rank its own copy of (privatization:
 * every variable of a rank's copy of the program): skipped by the check. */
bool env_globals_privatized(const char *object, const char *symbol);

/* Calls found(name, arg) for each writable, non-privatized data symbol of
 * the ELF file at path (executable or shared library) in symbol-table
 * order, until it returns false; returns how many it found, or -1 when the
 * file has no symbol table (stripped) or cannot be read. */
long env_globals_scan(const char *path, bool (*found)(const char *name, void *arg), void *arg);

#endif
