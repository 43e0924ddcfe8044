#!/usr/bin/env bash
# test/gpu/run.sh - build the GPU point-to-point tests (C + CUDA runtime) and
# run each over a matrix of (processes P, virtual ranks V) with ampirun.
#
#   test/gpu/run.sh [--ompi] [--fallback LIBDIR] [--build-only] [program ...]
#
#   --ompi            build with Open MPI's mpicc and run with its mpirun
#                     (np 1 and 2, UCX pml) to cross-check the programs; put
#                     a CUDA-aware UCX first in LD_LIBRARY_PATH (it is passed
#                     on with -x)
#   --fallback LIBDIR one more np=2 run of gpu_pt2pt with LIBDIR prepended to
#                     LD_LIBRARY_PATH (e.g. a UCX without CUDA support, to
#                     exercise the library's host-staged path)
#   --build-only      only compile (works without a GPU)
#   program           run only these programs (default: all)
#
# Environment: AMPI_PREFIX (bin/ampicc, bin/ampirun; default $repo/.prefix),
# AMPI_BUILD (binaries and logs go to $AMPI_BUILD/gpu; default $repo/.build),
# CUDA_HOME (default /usr/local/cuda), MPICC / MPIRUN (override the compiler
# / launcher of the chosen mode).  The programs read GPU_TEST_MAX_BYTES
# (smaller largest message) and GPU_TEST_VERBOSE=1 (gpu_pt2pt: every case);
# GPU_MEMKIND_STRESS=N adds gpu_memkind runs repeating it N times;
# GPU_TEST_EXTRAS=0 runs the matrix only (no route, fallback or 4-GPU cases).
#
# Output: one PASS/FAIL/SKIP line per case, then a summary line.  Without an
# NVIDIA GPU (nvidia-smi -L) every program is skipped and the exit status is
# 0.  Exit status 1 if anything failed.

set -u

PROGRAMS='gpu_query gpu_pt2pt gpu_wild gpu_stale gpu_coll gpu_rma gpu_memkind gpu_ddt gpu_smallred'
MATRIX='1x1 1x4 2x2 2x8'
OMPI_NPS='1 2'
RUN_TIMEOUT=120   # ampirun --timeout
OUTER_TIMEOUT=150 # timeout(1) around every run

# ---- setup -----------------------------------------------------------------
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$here/../lib.sh"
mode=ampi
fallback=""
build_only=no
only=()
while [ $# -gt 0 ]; do
    case $1 in
    --ompi) mode=ompi ;;
    --build-only) build_only=yes ;;
    --fallback)
        if [ $# -lt 2 ]; then
            echo "run.sh: --fallback needs a library directory" >&2
            exit 2
        fi
        fallback=$2
        shift
        ;;
    --fallback=*) fallback=${1#--fallback=} ;;
    -h | --help)
        sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "run.sh: unknown option $1" >&2
        exit 2
        ;;
    *) only+=("$1") ;;
    esac
    shift
done
if [ -n "$fallback" ] && [ ! -d "$fallback" ]; then
    echo "run.sh: --fallback $fallback is not a directory" >&2
    exit 2
fi

progs=$(select_programs "$PROGRAMS" "${only[@]}")
if [ -z "$progs" ]; then
    echo "run.sh: no such program: ${only[*]} (known: $PROGRAMS)" >&2
    exit 2
fi

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
set_tools "$mode" gpu

summary() {
    echo "gpu: $npass passed, $nfail failed, $nskip skipped (logs in $logdir)"
    [ $nfail -eq 0 ]
    exit $?
}

skip_all() {
    for prog in $progs; do
        skip "gpu/$prog" "$1"
    done
    summary
}

# run_case NAME PROG LOG COMMAND... : run, judge, print one line.  A pass
# needs exit 0, the program's "<prog>: OK" line and no FAIL line.
run_case() {
    local name=$1 prog=$2 log=$3
    shift 3
    local rc secs why
    timed_run "$log" "$OUTER_TIMEOUT" "$@"
    why=$(early_verdict "$log" "timed out")
    if [ -n "$why" ]; then
        :
    elif [ "$rc" -ne 0 ]; then
        why="exit $rc, expected 0"
    elif ! grep -q "^$prog: OK\$" "$log"; then
        why="exit 0 but no '$prog: OK' line"
    fi
    report_case "$name" "$why" "$log"
}

# ---- what is there ---------------------------------------------------------
if [ ! -f "$CUDA_HOME/include/cuda_runtime.h" ]; then
    skip_all "CUDA toolkit not found (no $CUDA_HOME/include/cuda_runtime.h; set CUDA_HOME)"
fi
if [ $build_only = no ] &&
    ! nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
    skip_all "no NVIDIA GPU on this machine"
fi
need_launcher=yes
[ $build_only = yes ] && need_launcher=no
tool_missing=$(missing_tool "$mode" $need_launcher \
    "install the library (AMPI_PREFIX) or use --ompi")
[ -n "$tool_missing" ] && skip_all "$tool_missing"
mkdir -p "$logdir" || exit 2

# ---- build -----------------------------------------------------------------
cudalib=$CUDA_HOME/lib64
[ -d "$cudalib" ] || cudalib=$CUDA_HOME/lib
built=""
for prog in $progs; do
    if compile_test "gpu/$prog" "$logdir/$prog.build.log" \
        -I"$CUDA_HOME/include" -o "$bindir/$prog" "$here/$prog.c" \
        -L"$cudalib" -lcudart -Wl,-rpath,"$cudalib"; then
        built="$built $prog"
        [ $build_only = yes ] && pass "gpu/$prog build"
    fi
done
[ $build_only = yes ] && summary

# ---- runs ------------------------------------------------------------------
has() { case " $built " in *" $1 "*) return 0 ;; esac; return 1; }

if [ "$mode" = ompi ]; then
    xenv=()
    [ -n "${LD_LIBRARY_PATH:-}" ] && xenv=(-x LD_LIBRARY_PATH)
    for prog in $built; do
        for np in $OMPI_NPS; do
            # pml_ucx_tls/devices "any": without them the UCX pml declines
            # on hosts without an RDMA network device
            run_case "gpu/$prog np=$np (openmpi)" "$prog" \
                "$logdir/$prog.np$np.log" "$launcher" --allow-run-as-root \
                --oversubscribe -np "$np" --mca pml ucx \
                --mca pml_ucx_tls any --mca pml_ucx_devices any \
                "${xenv[@]}" "$bindir/$prog"
        done
    done
    summary
fi

for prog in $built; do
    for cell in $MATRIX; do
        p=${cell%x*} v=${cell#*x}
        run_case "gpu/$prog np=$p vp=$v" "$prog" \
            "$logdir/$prog.np$p.vp$v.log" "$launcher" --timeout "$RUN_TIMEOUT" \
            -np "$p" +vp "$v" "$bindir/$prog"
    done
done

[ "${GPU_TEST_EXTRAS:-1}" = 0 ] && summary

# Four GPUs or more: one process per GPU, NCCL and the
# flat device Bcast between four processes (4x4), two ranks each (4x8).
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
for prog in gpu_pt2pt gpu_coll; do
    has "$prog" || continue
    for cell in 4x4 4x8; do
        p=${cell%x*} v=${cell#*x}
        if [ "$ngpus" -ge 4 ]; then
            run_case "gpu/$prog-4gpus np=$p vp=$v" "$prog" "$logdir/$prog.4gpus.np$p.vp$v.log" "$launcher" \
                --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" "$bindir/$prog"
        else
            skip "gpu/$prog-4gpus np=$p vp=$v" "$ngpus GPU(s) here, the case needs 4"
        fi
    done
done

# The library kept off the GPU: the query must say 0.
if has gpu_query; then
    run_case "gpu/gpu_query-nogpu np=2 vp=2" gpu_query \
        "$logdir/gpu_query.nogpu.log" env AMPI_GPU=0 "$launcher" \
        --timeout "$RUN_TIMEOUT" -np 2 +vp 2 "$bindir/gpu_query"
fi

# Between processes device payloads take CUDA IPC by default; AMPI_GPU_IPC=0
# sends them the other way, under a UCX DEVICE tag: test that route too.
if has gpu_pt2pt; then
    for cell in 2x2 2x8; do
        p=${cell%x*} v=${cell#*x}
        run_case "gpu/gpu_pt2pt-ucx-route np=$p vp=$v" gpu_pt2pt \
            "$logdir/gpu_pt2pt.ucxroute.np$p.vp$v.log" env AMPI_GPU_IPC=0 "$launcher" \
            --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" "$bindir/gpu_pt2pt"
    done
fi

# One-sided: device windows of other processes of the node are mapped by
# CUDA IPC by default; AMPI_GPU_IPC=0 leaves the driver copies at the target.
if has gpu_rma; then
    run_case "gpu/gpu_rma-no-ipc np=2 vp=4" gpu_rma "$logdir/gpu_rma.noipc.log" \
        env AMPI_GPU_IPC=0 "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 4 "$bindir/gpu_rma"
fi

# Collectives: at 2x2 (one rank per process, two GPUs) the blocking ones go
# to NCCL, small reductions to host copies; run them once more on the kernel
# path between processes at every size.
if has gpu_coll; then
    run_case "gpu/gpu_coll-nonccl np=2 vp=2" gpu_coll "$logdir/gpu_coll.nonccl.log" \
        env AMPI_NCCL=0 AMPI_GPU_COLL_HOST_MAX=0 "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 2 "$bindir/gpu_coll"
fi

# Small device reductions take host copies by default (gpu_smallred);
# AMPI_GPU_COLL_HOST_MAX=0 sends the same calls down the device path: the
# kernels at 2x8, NCCL at 2x2 (one rank per process, two GPUs), with
# memory kinds mixed across the ranks of a call.
if has gpu_smallred; then
    for cell in 2x2 2x8; do
        p=${cell%x*} v=${cell#*x}
        run_case "gpu/gpu_smallred-nostage np=$p vp=$v" gpu_smallred "$logdir/gpu_smallred.nostage.np$p.vp$v.log" \
            env AMPI_GPU_COLL_HOST_MAX=0 "$launcher" --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" "$bindir/gpu_smallred"
    done
fi

# The IPC route with the sender copying at every size (the default pulls
# below 512 KiB and pushes above), and with the receiver copying at every size.
if has gpu_pt2pt; then
    run_case "gpu/gpu_pt2pt-ipc-push-always np=2 vp=8" gpu_pt2pt \
        "$logdir/gpu_pt2pt.ipcpush.log" env AMPI_GPU_IPC_PUSH_MIN=0 "$launcher" \
        --timeout "$RUN_TIMEOUT" -np 2 +vp 8 "$bindir/gpu_pt2pt"
    run_case "gpu/gpu_pt2pt-ipc-pull-always np=2 vp=8" gpu_pt2pt \
        "$logdir/gpu_pt2pt.ipcpull.log" env AMPI_GPU_IPC_PUSH=0 "$launcher" \
        --timeout "$RUN_TIMEOUT" -np 2 +vp 8 "$bindir/gpu_pt2pt"
fi

# Device messages of types with gaps sent while the GPU packs them
# (AMPI_GPU_DDT_CHUNK: 64 KiB chunks pipeline gpu_ddt's 1 MiB vector of rows
# and 540 KiB sub-boxes): between processes on the IPC route, the receiver
# writing into device or host buffers, and within a process.
if has gpu_ddt; then
    for cell in 1x4 2x2 2x8; do
        p=${cell%x*} v=${cell#*x}
        run_case "gpu/gpu_ddt-pipelined np=$p vp=$v" gpu_ddt "$logdir/gpu_ddt.pipelined.np$p.vp$v.log" \
            env AMPI_GPU_DDT_CHUNK=64K "$launcher" --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" "$bindir/gpu_ddt"
    done
fi

# Every pair of memory kinds (gpu_memkind): four processes (2 per GPU on a
# two-GPU machine), and each route between processes with four ranks a
# process -- the UCX route, the IPC route pushing or pulling at every size,
# the IPC route unmapping after every copy (AMPI_GPU_IPC_CACHE=off), the
# staging fallback below -- up to 1 MiB.  GPU_MEMKIND_STRESS=N: each of
# -np 2, -np 4, -np 1 +vp 4 and -np 2 +vp 8 once more, repeating the whole
# test N times (MEMKIND_REPEAT) up to 1 MiB.
if has gpu_memkind; then
    run_case "gpu/gpu_memkind np=4 vp=4" gpu_memkind "$logdir/gpu_memkind.np4.log" \
        "$launcher" --timeout "$RUN_TIMEOUT" -np 4 +vp 4 "$bindir/gpu_memkind"
    for route in ucx:AMPI_GPU_IPC=0 ipc-push-always:AMPI_GPU_IPC_PUSH_MIN=0 ipc-pull-always:AMPI_GPU_IPC_PUSH=0 \
        ipc-nocache:AMPI_GPU_IPC_CACHE=off; do
        run_case "gpu/gpu_memkind-${route%%:*} np=2 vp=8" gpu_memkind "$logdir/gpu_memkind.${route%%:*}.log" \
            env "${route#*:}" GPU_TEST_MAX_BYTES=1048576 "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 8 \
            "$bindir/gpu_memkind"
    done
    if [ -n "${GPU_MEMKIND_STRESS:-}" ]; then
        for pv in 2x2 4x4 1x4 2x8; do
            p=${pv%x*} v=${pv#*x}
            run_case "gpu/gpu_memkind-stress$GPU_MEMKIND_STRESS np=$p vp=$v" gpu_memkind \
                "$logdir/gpu_memkind.stress.np$p.vp$v.log" env MEMKIND_REPEAT="$GPU_MEMKIND_STRESS" \
                GPU_TEST_MAX_BYTES=1048576 "$launcher" --timeout 600 -np "$p" +vp "$v" "$bindir/gpu_memkind"
        done
    fi
fi

# Derived datatypes on device buffers (gpu_ddt) over each route between
# processes.
if has gpu_ddt; then
    for route in ucx:AMPI_GPU_IPC=0 ipc-push-always:AMPI_GPU_IPC_PUSH_MIN=0 ipc-pull-always:AMPI_GPU_IPC_PUSH=0; do
        run_case "gpu/gpu_ddt-${route%%:*} np=2 vp=4" gpu_ddt "$logdir/gpu_ddt.${route%%:*}.log" \
            env "${route#*:}" "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 4 "$bindir/gpu_ddt"
    done
fi

# The host-staging fallback: a UCX without CUDA and no IPC route.  Without
# --fallback, the system's UCX is used when it has no CUDA transport (the GPU
# machine's image is such a case).
if [ -z "$fallback" ]; then
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64; do
        if [ -e "$dir/libucp.so.0" ] && ! ls "$dir"/ucx/libuct_cuda* >/dev/null 2>&1; then
            fallback=$dir
            break
        fi
    done
    if [ -z "$fallback" ]; then # one line per case it stands for, so the count stays
        for c in " np=2 vp=2" "-chunk64K np=2 vp=8"; do
            skip "gpu/gpu_pt2pt-fallback$c" "no UCX without CUDA support found (use --fallback LIBDIR)"
        done
    fi
fi
if [ -n "$fallback" ]; then
    if has gpu_pt2pt; then
        run_case "gpu/gpu_pt2pt-fallback np=2 vp=2" gpu_pt2pt \
            "$logdir/gpu_pt2pt.fallback.log" \
            env AMPI_GPU_IPC=0 LD_LIBRARY_PATH="$fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 2 \
            "$bindir/gpu_pt2pt"
        if has gpu_memkind; then
            run_case "gpu/gpu_memkind-fallback np=2 vp=8" gpu_memkind "$logdir/gpu_memkind.fallback.log" \
                env AMPI_GPU_IPC=0 GPU_TEST_MAX_BYTES=1048576 \
                LD_LIBRARY_PATH="$fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
                "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 8 "$bindir/gpu_memkind"
        fi
        # small chunks: many chunks per message, every slot reused
        run_case "gpu/gpu_pt2pt-fallback-chunk64K np=2 vp=8" gpu_pt2pt \
            "$logdir/gpu_pt2pt.fallback64k.log" \
            env AMPI_GPU_IPC=0 AMPI_GPU_STAGE_CHUNK=64K \
            LD_LIBRARY_PATH="$fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 8 "$bindir/gpu_pt2pt"
    else
        for c in " np=2 vp=2" "-chunk64K np=2 vp=8"; do
            skip "gpu/gpu_pt2pt-fallback$c" "gpu_pt2pt was not built or not selected"
        done
    fi
fi

summary
