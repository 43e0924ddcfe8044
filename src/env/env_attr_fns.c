/* The predefined attribute copy and delete functions of datatypes and
 * windows (MPI_TYPE_NULL_COPY_FN, MPI_WIN_DUP_FN, ...; those of
 * communicators are in comm/comm_attr.c). */
#define AMPI_BUILDING_LIBRARY 1
#include "mpi.h"

int AMPI_Type_null_copy_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in,
                           void *attribute_val_out, int *flag)
{
    (void)oldtype, (void)type_keyval, (void)extra_state, (void)attribute_val_in, (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int AMPI_Type_dup_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    (void)oldtype, (void)type_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int AMPI_Type_null_delete_fn(MPI_Datatype datatype, int type_keyval, void *attribute_val, void *extra_state)
{
    (void)datatype, (void)type_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

int AMPI_Win_null_copy_fn(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                          void *attribute_val_out, int *flag)
{
    (void)oldwin, (void)win_keyval, (void)extra_state, (void)attribute_val_in, (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int AMPI_Win_dup_fn(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    (void)oldwin, (void)win_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int AMPI_Win_null_delete_fn(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state)
{
    (void)win, (void)win_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}
