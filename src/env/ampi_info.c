/* ampi_info: what this build of AMPI-UCX runs on -- library, MPI, UCX, PMIx and
 * hwloc versions, the UCX transports this machine offers, and whether device
 * (CUDA) buffers are handled and how. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpu/gpu.h"
#include "mpi.h"

#include <hwloc.h>
#include <pmix.h>
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "?"
#endif

static void print_transports(void)
{
    uct_component_h *comps;
    unsigned ncomps;
    if (uct_query_components(&comps, &ncomps) != UCS_OK) {
        printf("  (UCT components could not be listed)\n");
        return;
    }
    for (unsigned i = 0; i < ncomps; i++) {
        uct_component_attr_t ca = { .field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                                                  UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT };
        if (uct_component_query(comps[i], &ca) != UCS_OK)
            continue;
        uct_md_resource_desc_t mds[ca.md_resource_count ? ca.md_resource_count : 1];
        ca.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        ca.md_resources = mds;
        if (uct_component_query(comps[i], &ca) != UCS_OK)
            continue;
        for (unsigned m = 0; m < ca.md_resource_count; m++) {
            uct_md_config_t *cfg;
            uct_md_h md;
            if (uct_md_config_read(comps[i], NULL, NULL, &cfg) != UCS_OK)
                continue;
            ucs_status_t st = uct_md_open(comps[i], mds[m].md_name, cfg, &md);
            uct_config_release(cfg);
            if (st != UCS_OK)
                continue;
            uct_tl_resource_desc_t *tls;
            unsigned ntls;
            if (uct_md_query_tl_resources(md, &tls, &ntls) == UCS_OK) {
                for (unsigned t = 0; t < ntls; t++)
                    printf("  %-12s %s\n", tls[t].tl_name, tls[t].dev_name);
                uct_release_tl_resource_list(tls);
            }
            uct_md_close(md);
        }
    }
    uct_release_component_list(comps);
}

static int ucx_moves_cuda(void)
{
    ucp_config_t *cfg;
    ucp_context_h ctx;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return -1;
    ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG };
    ucs_status_t st = ucp_init(&p, cfg, &ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK)
        return -1;
    ucp_context_attr_t a = { .field_mask = UCP_ATTR_FIELD_MEMORY_TYPES };
    int yes = ucp_context_query(ctx, &a) == UCS_OK && (a.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    ucp_cleanup(ctx);
    return yes;
}

int main(void)
{
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    unsigned hw = hwloc_get_api_version();
    printf("AMPI-UCX:      %s (MPI %d.%d)\n", PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
    printf("UCX:           %s (library %u.%u.%u)\n", ucp_get_version_string(), major, minor, release);
    printf("PMIx:          %s\n", PMIx_Get_version());
    printf("hwloc:         %u.%u.%u\n", hw >> 16, (hw >> 8) & 0xff, hw & 0xff);
    printf("UCX transports:\n");
    print_transports();
    gpu_init(0, 1);
    int cuda = ucx_moves_cuda();
    if (gpu_enabled())
        printf("CUDA:          on, GPU %d (%s) for local rank 0; device buffers moved by %s\n", gpu_device(),
               gpu_device_pci_bus_id(), cuda > 0 ? "UCX (cuda_copy/cuda_ipc)" : "host staging (UCX has no CUDA)");
    else
        printf("CUDA:          off (no driver or no GPU; every buffer is host memory)\n");
    printf("UCX CUDA memory support: %s\n", cuda > 0 ? "yes" : cuda == 0 ? "no" : "unknown");
    gpu_finalize();
    return 0;
}
