/* mpitestconf.h for building MPICH's test/mpi by hand against AMPI-UCX
 * (test/conformance/mpich.py copies it into the build's include directory).
 *
 * MPICH's configure normally writes this header.  Its own configure needs
 * files from the top of an MPICH tree, so the runner builds the test
 * programs directly and this header answers configure's questions for a
 * Linux C11 compiler and a strict MPI library: tests of MPICH extensions
 * (MPIX_*) stay out.  The runner appends the answers it probes against the
 * installed mpi.h (one-sided, MPI-IO, optional Fortran types). */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

/* only what the MPI standard defines is tested */
#define USE_STRICT_MPI 1
#define ENABLE_STRICTMPI 1

/* the C compiler and C library */
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE__BOOL 1
#define HAVE_ATOMIC 1
#define HAVE_FLOAT16 1
#define POINTERINT_t long
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX

/* MPI features every run has */
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_TYPE_CREATE_STRUCT 1
#define HAVE_MPI2_COMBINERS 1

/* probed by the runner */
#include "mpitestconf_probed.h"

#endif
