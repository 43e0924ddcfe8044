/* User error handlers and user error classes, codes and strings (MPI 3.1
 * 8.3, 8.5): the tables behind MPI_Comm_create_errhandler and
 * MPI_Add_error_class & co., which the error dispatch (src/core/core_err.c) asks
 * through the hooks this layer registers (core_err_set_user_hooks). */
#ifndef AMPI_ENV_ERRH_H
#define AMPI_ENV_ERRH_H

#include "mpi.h"
#include <stdbool.h>

/* What a user handler was made for (MPI_Comm_, MPI_Win_, MPI_File_, MPI_Session_create_errhandler). */
typedef enum { ENV_ERRH_COMM = 1, ENV_ERRH_WIN, ENV_ERRH_FILE, ENV_ERRH_SESSION } env_errh_kind_t;

/* True if eh is a predefined handler or a live user handler of `kind`. */
bool env_errh_usable(MPI_Errhandler eh, env_errh_kind_t kind);
/* Creates a handler of `kind` (fn: its function); an MPI error class. */
int env_errh_create(env_errh_kind_t kind, void (*fn)(void), MPI_Errhandler *errhandler, const char *func);
/* A handle of the caller's own for eh (MPI_Xxx_get_errhandler): eh. */
MPI_Errhandler env_errh_get(MPI_Errhandler eh);
/* Calls user handler eh on *object (an MPI_Comm, MPI_Win, MPI_File or MPI_Session) with
 * errorcode, and returns errorcode; false (nothing called) if eh is not a
 * user handler. */
bool env_errh_invoke(MPI_Errhandler eh, void *object, int errorcode);

/* The class of a user-added code (itself for a class), or -1 if code is
 * not one. */
int env_errh_class_of(int code);
/* Its string ("" until MPI_Add_error_string), NULL if code is not one. */
const char *env_errh_string(int code);

/* The default error handler of files (MPI_File_set_errhandler on
 * MPI_FILE_NULL; MPI_ERRORS_RETURN at start). */
MPI_Errhandler env_errh_file_default(void);

#endif
