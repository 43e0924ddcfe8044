/* Clocks, names, versions and small utilities of the MPI environment. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpu/gpu.h"
#include "pt2pt/p2p_api.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#pragma weak MPI_Wtime = PMPI_Wtime
double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#pragma weak MPI_Wtick = PMPI_Wtick
double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 1e-9;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Get_processor_name");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_version = PMPI_Get_version
int PMPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int PMPI_Get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "AMPI-UCX %s (MPI %d.%d, UCX %s)",
                     PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION, ucx_version());
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_address = PMPI_Get_address
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    if (size < 0)
        return core_error(NULL, MPI_ERR_SIZE, "MPI_Alloc_mem");
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

#pragma weak MPI_Free_mem = PMPI_Free_mem
int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}

/* 1 when device buffers may be passed to MPI calls: a GPU was found (UCX
 * moves them, or the host-staging fallback does). */
int MPIX_Query_cuda_support(void) { return gpu_enabled(); }

int AMPI_Yield(void)
{
    if (rank_self())
        rank_yield();
    return MPI_SUCCESS;
}
