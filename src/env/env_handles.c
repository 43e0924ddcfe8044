/* Handle conversion between C and Fortran (MPI 3.1 17.2.4) and the
 * profiling control call.
 *
 * Handles that are ints in C (communicators, groups, datatypes, ops,
 * error handlers, info objects, windows) are their own Fortran integer.
 * Requests, messages and files are pointers: each one converted gets a slot
 * in a process-wide table, and its Fortran integer is the slot's index
 * (0 stands for the null handle).  The table only grows: a handle keeps its
 * integer, and a freed object's slot is found again if the same address
 * comes back. */
#include "pt2pt/p2p_api.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static void **slots;    /* slots[0] unused: 0 is the null handle */
static MPI_Fint nslots; /* used, including slot 0 */
static MPI_Fint cap;

/* The integer of pointer handle p (null -> 0); -1 when out of memory. */
static MPI_Fint ptr_c2f(void *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&slots_lock);
    MPI_Fint i;
    for (i = nslots - 1; i > 0; i--)
        if (slots[i] == p)
            break;
    if (i <= 0) {
        if (nslots == 0)
            nslots = 1;
        if (nslots >= cap) {
            MPI_Fint ncap = cap ? 2 * cap : 64;
            void **n = realloc(slots, (size_t)ncap * sizeof *n);
            if (!n) {
                pthread_mutex_unlock(&slots_lock);
                return -1;
            }
            slots = n;
            cap = ncap;
        }
        i = nslots++;
        slots[i] = p;
    }
    pthread_mutex_unlock(&slots_lock);
    return i;
}

/* The pointer handle of integer f; NULL (the null handle) when f was never
 * returned by ptr_c2f. */
static void *ptr_f2c(MPI_Fint f)
{
    void *p = NULL;
    pthread_mutex_lock(&slots_lock);
    if (f > 0 && f < nslots)
        p = slots[f];
    pthread_mutex_unlock(&slots_lock);
    return p;
}

#define HANDLE_PRAGMA(x) _Pragma(#x)
#define INT_HANDLE(Name, Type)                                                 \
    HANDLE_PRAGMA(weak MPI_##Name##_c2f = PMPI_##Name##_c2f)                   \
    MPI_Fint PMPI_##Name##_c2f(Type h) { return (MPI_Fint)h; }                 \
    HANDLE_PRAGMA(weak MPI_##Name##_f2c = PMPI_##Name##_f2c)                   \
    Type PMPI_##Name##_f2c(MPI_Fint f) { return (Type)f; }

#define PTR_HANDLE(Name, Type)                                                 \
    HANDLE_PRAGMA(weak MPI_##Name##_c2f = PMPI_##Name##_c2f)                   \
    MPI_Fint PMPI_##Name##_c2f(Type h) { return ptr_c2f((void *)h); }          \
    HANDLE_PRAGMA(weak MPI_##Name##_f2c = PMPI_##Name##_f2c)                   \
    Type PMPI_##Name##_f2c(MPI_Fint f) { return (Type)ptr_f2c(f); }

INT_HANDLE(Comm, MPI_Comm)
INT_HANDLE(Group, MPI_Group)
INT_HANDLE(Type, MPI_Datatype)
INT_HANDLE(Op, MPI_Op)
INT_HANDLE(Errhandler, MPI_Errhandler)
INT_HANDLE(Info, MPI_Info)
INT_HANDLE(Win, MPI_Win)
PTR_HANDLE(Request, MPI_Request)
PTR_HANDLE(Message, MPI_Message)
PTR_HANDLE(File, MPI_File)

/* A Fortran status is the C status as MPI_Fint words: MPI_SOURCE, MPI_TAG
 * and MPI_ERROR first (their Fortran indices 1..3), the library's own
 * fields after them. */
_Static_assert(sizeof(MPI_Status) == sizeof(MPI_F08_status), "a Fortran status holds a C status");
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a C status is a whole number of MPI_Fint");

static int status_copy(const void *from, void *to, const char *func)
{
    if (!from || !to)
        return core_error(NULL, MPI_ERR_ARG, func);
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return status_copy(c_status, f_status, "MPI_Status_c2f");
}

#pragma weak MPI_Status_f2c = PMPI_Status_f2c
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return status_copy(f_status, c_status, "MPI_Status_f2c");
}

#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return status_copy(c_status, f08_status, "MPI_Status_c2f08");
}

#pragma weak MPI_Status_f082c = PMPI_Status_f082c
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return status_copy(f08_status, c_status, "MPI_Status_f082c");
}

/* No profiling library is built in: MPI 3.1 14.2.4 lets MPI_Pcontrol do
 * nothing then; a profiling library linked before this one replaces it. */
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
