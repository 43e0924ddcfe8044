/* ampi_info: what this build of AMPI-UCX runs on -- library, MPI, UCX, PMIx and
 * hwloc versions, the UCX transports this machine offers, and whether device
 * (CUDA) buffers are handled and how; with --all also every setting with its
 * current value and where that comes from; with --parsable all of it as
 * key:value lines (as `ompi_info --parsable` prints them) for scripts. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "core/core_settings.h"
#include "gpu/gpu.h"
#include "mpi.h"
#include "ucx/ucx_pmix.h"

#include <hwloc.h>
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <uct/api/uct.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "?"
#endif

static bool parsable;

static void print_transports(void)
{
    uct_component_h *comps;
    unsigned ncomps;
    if (uct_query_components(&comps, &ncomps) != UCS_OK) {
        if (!parsable)
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
                    printf(parsable ? "ucx:transport:%s:device:%s\n" : "  %-12s %s\n", tls[t].tl_name,
                           tls[t].dev_name);
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

static const char *type_name(core_type_t t)
{
    static const char *const names[] = { "bool", "int", "size", "enum", "string" };
    return names[t];
}

/* Every setting: its current value (environment, else default) and which. */
static void print_settings(void)
{
    if (!parsable)
        printf("Settings (value, source, meaning; README.md lists them):\n");
    for (int id = 0; id < CORE_SET_COUNT; id++) {
        const core_setting_t *s = &core_settings[id];
        const char *env = core_setting_env((core_setting_id_t)id);
        const char *text = env ? env : s->dflt;
        core_value_t v = { 0 }, d = { 0 };
        char err[320], vbuf[64], dbuf[64];
        /* core_settings_check has refused bad values already */
        bool has = text && core_setting_parse(s, text, &v, err, sizeof err);
        bool has_d = s->dflt && core_setting_parse(s, s->dflt, &d, err, sizeof err);
        const char *value = core_setting_text(s, &v, has, vbuf, sizeof vbuf);
        const char *source = env ? "environment" : "default";
        if (!parsable) {
            printf("  %-22s %-8s %-11s %s\n", s->name, value, source, s->doc);
            continue;
        }
        printf("setting:%s:value:%s\n", s->name, value);
        printf("setting:%s:source:%s\n", s->name, source);
        printf("setting:%s:default:%s\n", s->name, core_setting_text(s, &d, has_d, dbuf, sizeof dbuf));
        printf("setting:%s:type:%s\n", s->name, type_name(s->type));
        printf("setting:%s:help:%s\n", s->name, s->doc);
        printf("setting:%s:documented:%s\n", s->name, s->where);
    }
}

/* --layout: run by a launcher (one copy per process, e.g. `mpirun -H a,b
 * ampi_info --layout`), each copy prints where the job's processes are as
 * the library will see them: its node, the processes sharing that node
 * (they get shared memory, CMA and CUDA IPC between them) and the node count. */
static int print_layout(void)
{
    ucx_job_t job;
    ucx_pmix_init(&job);
    char host[256];
    snprintf(host, sizeof host, "%s", ucx_pmix_hostname());
    if (!host[0] && gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    char peers[1024] = "";
    size_t at = 0;
    for (int p = 0; p < job.nprocs && at < sizeof peers - 16; p++)
        if (ucx_pmix_is_local(p))
            at += (size_t)snprintf(peers + at, sizeof peers - at, "%s%d", at ? "," : "", p);
    if (parsable)
        printf("layout:process:%d:nprocs:%d:node:%s:node_leader:%d:local_size:%d:local_peers:%s:nnodes:%d\n",
               job.proc, job.nprocs, host, job.node_leader, job.local_size, peers, job.nnodes);
    else
        printf("process %d of %d: node %s (named by process %d), %d local process(es) [%s], %d node(s)%s\n",
               job.proc, job.nprocs, host, job.node_leader, job.local_size, peers, job.nnodes,
               job.singleton ? " (singleton: no launcher)" : "");
    fflush(stdout);
    ucx_pmix_finalize();
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "Usage: ampi_info [--all | -a] [--parsable] [--layout]\n"
                "  (none)       versions, UCX transports, device buffers\n"
                "  --all, -a    also every AMPI_* setting: value, source (default or environment), meaning\n"
                "  --parsable   everything as key:value lines (versions, transports, CUDA, settings)\n"
                "  --layout     under a launcher: this process's node and the processes sharing it\n"
                "  --help, -h   this text\n");
}

int main(int argc, char **argv)
{
    bool all = false, layout = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a")) {
            all = true;
        } else if (!strcmp(argv[i], "--layout")) {
            layout = true;
        } else if (!strcmp(argv[i], "--parsable") || !strcmp(argv[i], "--parseable")) {
            parsable = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "ampi_info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (core_settings_check() > 0) {
        fprintf(stderr, "ampi_info: an AMPI_* setting is not valid (see above)\n");
        return 1;
    }
    if (layout)
        return print_layout();
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    unsigned hw = hwloc_get_api_version();
    if (parsable) {
        printf("ampi:version:full:%s\n", PACKAGE_VERSION);
        printf("mpi:version:full:%d.%d\n", MPI_VERSION, MPI_SUBVERSION);
        printf("ucx:version:full:%s\n", ucp_get_version_string());
        printf("ucx:version:library:%u.%u.%u\n", major, minor, release);
        printf("pmix:version:full:%s\n", PMIx_Get_version());
        printf("hwloc:version:full:%u.%u.%u\n", hw >> 16, (hw >> 8) & 0xff, hw & 0xff);
    } else {
        printf("AMPI-UCX:      %s (MPI %d.%d)\n", PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
        printf("UCX:           %s (library %u.%u.%u)\n", ucp_get_version_string(), major, minor, release);
        printf("PMIx:          %s\n", PMIx_Get_version());
        printf("hwloc:         %u.%u.%u\n", hw >> 16, (hw >> 8) & 0xff, hw & 0xff);
        printf("UCX transports:\n");
    }
    print_transports();
    gpu_init(0, 1);
    int cuda = ucx_moves_cuda();
    const char *ucx_cuda = cuda > 0 ? "yes" : cuda == 0 ? "no" : "unknown";
    if (parsable) {
        printf("cuda:enabled:%s\n", gpu_enabled() ? "yes" : "no");
        if (gpu_enabled()) {
            printf("cuda:device:%d\n", gpu_device());
            printf("cuda:pci_bus_id:%s\n", gpu_device_pci_bus_id());
        }
        printf("cuda:ucx_memory_support:%s\n", ucx_cuda);
    } else {
        if (gpu_enabled())
            printf("CUDA:          on, GPU %d (%s) for local rank 0; device buffers moved by %s\n", gpu_device(),
                   gpu_device_pci_bus_id(),
                   cuda > 0 ? "UCX (cuda_copy/cuda_ipc)" : "host staging (UCX has no CUDA)");
        else
            printf("CUDA:          off (no driver or no GPU; every buffer is host memory)\n");
        printf("UCX CUDA memory support: %s\n", ucx_cuda);
    }
    gpu_finalize();
    if (all || parsable)
        print_settings();
    return 0;
}
