/* The process's view of the job and the calling rank. */
#include "core/core_rank.h"

core_proc_t core_proc;
__thread core_rank_t *core_current __attribute__((tls_model("initial-exec")));
core_rank_t *core_lib_rank;
