/* Datatype queries for the predefined types. */
#include "pt2pt/p2p_api.h"

#include <string.h>

#pragma weak MPI_Type_size = PMPI_Type_size
int PMPI_Type_size(MPI_Datatype dt, int *size)
{
    if (!dt_valid(dt))
        return env_error(NULL, MPI_ERR_TYPE, "MPI_Type_size");
    *size = (int)dt_size(dt);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
    if (!dt_valid(dt))
        return env_error(NULL, MPI_ERR_TYPE, "MPI_Type_size_x");
    *size = (MPI_Count)dt_size(dt);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    if (!dt_valid(dt))
        return env_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_extent");
    *lb = 0;
    *extent = (MPI_Aint)dt_predefined[dt].extent;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int PMPI_Type_get_name(MPI_Datatype dt, char *type_name, int *resultlen)
{
    if (!dt_valid(dt))
        return env_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_name");
    const char *n = dt_predefined[dt].name;
    size_t len = strlen(n);
    if (len >= MPI_MAX_OBJECT_NAME)
        len = MPI_MAX_OBJECT_NAME - 1;
    memcpy(type_name, n, len);
    type_name[len] = '\0';
    *resultlen = (int)len;
    return MPI_SUCCESS;
}
