#!/usr/bin/env bash
# test/multinode/gpu-bed.sh -- jobs across two "nodes" of the namespace test
# bed (nsbed.sh) on a machine with two GPUs, one GPU per node
# (CUDA_VISIBLE_DEVICES), Open MPI's mpirun as the engine, in one run:
#   setup    the library (./setup.sh --no-demo when AMPI_PREFIX has none),
#            the test programs, the bed, and a first job that must put one
#            process in each node (if not: the resource-manager variables
#            present and mpirun's mapping, verbose);
#   correct  device buffers between the nodes: test/gpu's gpu_pt2pt,
#            gpu_memkind and gpu_coll at 2 nodes x 1-2 processes x +vp 1-2,
#            under AMPI_DEBUG: every process's device payloads to the other
#            node went through UCX (or host staging), never CUDA IPC, and
#            shared memory and CMA reach exactly the processes of its node;
#            without 2 GPUs the host programs test/mpi pt2pt_basic and
#            coll_basic instead (the GPU cases skipped, with the reason);
#   osu      osu_latency and osu_bw between the nodes, H H and D D, ours
#            beside Open MPI (pml ucx over the same UCX; ob1/tcp for host
#            buffers): scripts/bench.sh --areas "nodes-p2p nodes-device-p2p",
#            interleaved rounds, medians with their spread (OSU74_DIR: the
#            unmodified OSU 7.4, else the osu/ copies);
#   jacobi   Jacobi3D (apps/jacobi3d) -D between the nodes, one process per
#            node, ODF 1/2/4/8 ranks per GPU, with and without -overlap,
#            GPU_BED_BLOCK^3 cells per GPU (default 512), after one checked
#            run (-v); interleaved rounds; a table of the median ms per
#            iteration and its ratio to ODF 1 (-cpu and 24^3 by default
#            without GPUs).
#
#   test/multinode/gpu-bed.sh [--budget SECONDS] [--out DIR] [--parts "correct osu jacobi"]
#
# --budget (default 480): the whole run, set-up included, shared by the
# parts run in the proportions correct 20, osu 50, jacobi 30; no run starts
# that would end after its part's share (each part says what it left out;
# a first round always runs).  --parts: a subset (setup always runs).  Needs root (the bed) and Open MPI's mpirun;
# without them everything is skipped with the reason.  Environment:
# AMPI_PREFIX (.prefix), AMPI_BUILD (.build), OSU74_DIR, GPU_BED_BLOCK,
# NSBED_ID (default 201, or the next free one; the osu part's bed is the
# next free one after it), GPU_BED_ROUNDS
# (at most this many rounds of osu and of jacobi, default 5), GPU_BED_WORK
# (builds, default AMPI_BUILD/gpu-bed-work).
# Output: PASS/FAIL/SKIP lines and a summary on stdout; OUT (default
# .build/gpu-bed) gets the logs, osu/ (tables.md, rounds.csv, runs.csv,
# meta.txt), jacobi.csv, jacobi.md and summary.md (all tables).  Exit status
# 1 if a case failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$repo/test/lib.sh"
budget=480 out=$repo/.build/gpu-bed parts="correct osu jacobi"
while [ $# -gt 0 ]; do
    case $1 in
    --budget) budget=$2; shift ;;
    --out) out=$2; shift ;;
    --parts) parts=$2; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "gpu-bed: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case $budget in '' | *[!0-9]*) echo "gpu-bed: --budget needs seconds" >&2; exit 2 ;; esac
has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
for p in $parts; do
    case $p in correct | osu | jacobi) ;; *) echo "gpu-bed: unknown part $p (correct osu jacobi)" >&2; exit 2 ;; esac
done
[ -n "${parts// /}" ] || { echo "gpu-bed: --parts names none of correct osu jacobi" >&2; exit 2; }
prefix=${AMPI_PREFIX:-$repo/.prefix}
build=${AMPI_BUILD:-$repo/.build}
export NSBED_ID=${NSBED_ID:-201} NCCL_NVLS_ENABLE=0
bed=$here/nsbed.sh
work=${GPU_BED_WORK:-$build/gpu-bed-work}
mkdir -p "$out/logs" "$work/bin"
cd "$repo" || exit 2
SECONDS=0
# deadline PART: the second (from the start) by which PART must end: the
# parts run share the budget in proportion to their weights
declare -A weight=([correct]=20 [osu]=50 [jacobi]=30)
declare -A ends=()
total=0 acc=0
for p in correct osu jacobi; do has_part $p && total=$((total + weight[$p])); done
for p in correct osu jacobi; do
    has_part $p || continue
    acc=$((acc + weight[$p]))
    ends[$p]=$((budget * acc / total - 5))
done
deadline() { echo "${ends[$1]}"; }
summary() {
    echo "$npass passed, $nfail failed, $nskip skipped ($SECONDS s of --budget $budget)" | tee -a "$out/summary.md"
    [ "$nfail" -eq 0 ]
    exit
}
skip_rest() {
    local p
    for p in $parts; do skip "gpu-bed/$p" "$1"; done
    summary
}

# ---- setup -------------------------------------------------------------------
{
    echo "# gpu-bed, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo "${BENCH_COMMIT:-unknown}")"
    echo "- gpus: $(nvidia-smi -L 2>/dev/null | sed 's/ (UUID.*//' | paste -sd ';' - || true)"
    echo "- open mpi: $(mpirun --version 2>/dev/null | head -1)"
    # a resource manager's allocation changes what Open MPI maps onto:
    # the names of its variables (nsbed.sh mpirun removes them)
    echo "- resource-manager variables here: $(compgen -e | grep -E '^(SLURM|PBS|LSB|SGE|FLUX)_|^PE_HOSTFILE$' |
        paste -sd ' ' - || true)"
    echo
} >"$out/summary.md"
cat "$out/summary.md"
[ "$(id -u)" = 0 ] || skip_rest "the namespace test bed needs root"
command -v mpirun >/dev/null 2>&1 || skip_rest "Open MPI's mpirun not found"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
gpus=yes
[ "$ngpu" -ge 2 ] || gpus=""
block=${GPU_BED_BLOCK:-$([ -n "$gpus" ] && echo 512 || echo 24)}
if [ ! -x "$prefix/bin/ampicc" ]; then
    echo "== setup: ./setup.sh --no-demo"
    ./setup.sh --no-demo >"$out/logs/setup.log" 2>&1 || { fail gpu-bed/setup "setup.sh failed: $(tail_of "$out/logs/setup.log")"; summary; }
fi
export AMPI_PREFIX=$prefix AMPI_BUILD=$build
# the same Open MPI binary the bench uses; the UCX first in the path for
# its pml ucx
ucx_lib=${AMPI_UCX_DIR:-$repo/.deps/ucx/libucx}/lib

# the first free bed ID from NSBED_ID on (a bed in use is another run's)
bed_up=
for _ in 1 2 3 4 5 6 7 8; do
    "$bed" up 2 >"$out/logs/bed.log" 2>&1 && { bed_up=yes; break; }
    grep -q 'is in use' "$out/logs/bed.log" || break
    NSBED_ID=$((NSBED_ID % 249 + 1))
done
if [ -z "$bed_up" ]; then
    fail gpu-bed/bed "the bed did not come up: $(tail_of "$out/logs/bed.log")"
    summary
fi
trap '"$bed" down >/dev/null 2>&1' EXIT
if [ -n "$gpus" ]; then
    "$bed" env ampinode1 CUDA_VISIBLE_DEVICES=0
    "$bed" env ampinode2 CUDA_VISIBLE_DEVICES=1
fi
# A first job: one process in each node, each seeing its own GPU.
# shellcheck disable=SC2016 # expanded in the node
timed_run "$out/logs/first-job.log" 60 "$bed" mpirun 1 sh -c 'echo "node $(hostname) gpus ${CUDA_VISIBLE_DEVICES:-none}"'
if [ "$rc" -eq 0 ] && grep -q '^node ampinode1 ' "$out/logs/first-job.log" &&
    grep -q '^node ampinode2 ' "$out/logs/first-job.log"; then
    pass "gpu-bed/first-job ($(grep '^node ' "$out/logs/first-job.log" | sort | paste -sd ';' -))"
else
    fail gpu-bed/first-job "exit $rc: $(tail_of "$out/logs/first-job.log")"
    # why: mpirun's view of the nodes and of its mapping
    timed_run "$out/logs/first-job-verbose.log" 60 "$bed" mpirun 1 --mca ras_base_verbose 10 \
        --mca rmaps_base_verbose 10 --mca plm_base_verbose 5 hostname
    echo "gpu-bed: mpirun's mapping, verbose: $out/logs/first-job-verbose.log"
    summary
fi

# ---- correct -----------------------------------------------------------------
# check_routes LOG NPROC PPN: AMPI_DEBUG lines of each of NPROC processes,
# PPN per node.  Prints why not, or nothing.
check_routes() {
    local log=$1 np=$2 ppn=$3 n
    n=$(grep -c 'debug: device payloads sent to processes of other nodes: CUDA IPC 0,' "$log")
    [ -z "$gpus" ] || [ "$n" -eq "$np" ] ||
        { echo "$n of $np processes report no CUDA IPC to other nodes"; return; }
    if [ "$ppn" -gt 1 ]; then
        n=$(grep -c "debug: shared memory: $((ppn - 1)) of $((ppn - 1)) peers on this node reachable" "$log")
        [ "$n" -eq "$np" ] || { echo "$n of $np processes reach exactly their node's peers by shared memory"; return; }
    fi
    if [ "$ppn" -gt 1 ]; then
        n=$(grep -c "debug: cross-memory attach: $((ppn - 1)) of $((np - 1)) peers" "$log")
        [ "$n" -eq "$np" ] || echo "$n of $np processes reach exactly their node's peers by CMA"
    elif grep -q -E 'debug: (shared memory|cross-memory attach): [1-9]' "$log"; then
        # alone on its node, a process has no peer to reach that way
        echo "a process alone on its node reaches a peer by shared memory or CMA"
    fi
}

if has_part correct; then
    end=$(deadline correct)
    if [ -n "$gpus" ]; then
        progs="gpu_pt2pt gpu_memkind gpu_coll"
        # shellcheck disable=SC2086 # a list of programs
        bash test/gpu/run.sh --build-only $progs >"$out/logs/build-gpu.log" 2>&1 ||
            fail gpu-bed/build "test/gpu/run.sh --build-only: $(tail_of "$out/logs/build-gpu.log")"
        bindir=$build/gpu
    else
        progs="pt2pt_basic coll_basic"
        bindir=$work/bin
        cc=$prefix/bin/ampicc
        for p in $progs; do compile_test "gpu-bed/$p" "$out/logs/$p.build.log" -o "$bindir/$p" "test/mpi/$p.c"; done
        for p in gpu_pt2pt gpu_memkind gpu_coll; do skip "gpu-bed/$p" "$ngpu GPU(s) here, the case needs 2"; done
    fi
    # UCX's own account of its protocols (UCX_PROTO_INFO): one process per
    # node, so every endpoint must be inter-node and none may use a
    # transport of one machine (CUDA IPC, shared memory, CMA)
    p=${progs%% *}
    log=$out/logs/$p-ucx-proto.log
    if [ -x "$bindir/$p" ]; then
        timed_run "$log" 120 "$bed" mpirun 1 --bind-to none -x AMPI_VP=2 -x UCX_PROTO_INFO=y -x NCCL_NVLS_ENABLE \
            "$bindir/$p"
        why=$(early_verdict "$log" "timed out")
        [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit $rc"
        # UCX labels its protocols intra-node by the host's machine id,
        # which the bed's namespaces share: the transports are what counts
        [ -n "$why" ] || [ -z "$gpus" ] || grep -q 'from cuda' "$log" || why="no protocol lines for device memory from UCX"
        [ -n "$why" ] || grep -q '| tcp/' "$log" || why="no TCP protocol lines from UCX"
        bad=$(grep -o -E '(cuda_ipc|sysv|posix|cma|xpmem|knem)/[a-z0-9_:]*' "$log" | sort -u | paste -sd ' ' -)
        [ -n "$why" ] || [ -z "$bad" ] || why="UCX transports of one machine between nodes: $bad"
        seen=$(grep -o -E 'from (host|cuda) memory|\| [a-z_0-9]+/[a-z0-9_:]+' "$log" | sed 's/^| //' | sort -u |
            paste -sd ' ' -)
        report_case "gpu-bed/$p ucx-protocols ($seen)" "$why" "$log"
    fi
    for ppn in 1 2; do
        for vp in 1 2; do
            for p in $progs; do
                name="gpu-bed/$p nodes=2 ppn=$ppn vp=$vp"
                [ -x "$bindir/$p" ] || { fail "$name" "not built"; continue; }
                if [ "$SECONDS" -gt $((end - 20)) ]; then
                    skip "$name" "the part's share of --budget $budget is spent"
                    continue
                fi
                log=$out/logs/$p-ppn$ppn-vp$vp.log
                # gpu_memkind up to 1 MiB, as test/gpu/run.sh's route cases:
                # over TCP its 64 MiB messages with four processes, and up to
                # 4 MiB with eight ranks, ran past the 120 s a run has
                # (2026-11-27, 2 x H200: up to 4 MiB passed with four ranks)
                cap=()
                [ "$p" = gpu_memkind ] && cap=(-x GPU_TEST_MAX_BYTES=1048576)
                timed_run "$log" 120 "$bed" mpirun "$ppn" --bind-to none -x AMPI_VP=$((2 * ppn * vp)) \
                    -x AMPI_DEBUG=1 -x NCCL_NVLS_ENABLE "${cap[@]}" "$bindir/$p"
                why=$(early_verdict "$log" "timed out")
                [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit $rc"
                [ -n "$why" ] || grep -q -E "^$p: OK$| OK$" "$log" || why="no OK line"
                [ -n "$why" ] || why=$(check_routes "$log" $((2 * ppn)) "$ppn")
                report_case "$name" "$why" "$log"
            done
        done
    done
fi

# ---- osu ---------------------------------------------------------------------
if has_part osu; then
    end=$(deadline osu)
    areas="nodes-p2p"
    [ -n "$gpus" ] && areas="nodes-p2p nodes-device-p2p"
    [ -n "$gpus" ] || skip "gpu-bed/osu D D" "$ngpu GPU(s) here, needs 2"
    osu74=${OSU74_DIR:-}
    [ -z "$osu74" ] && [ -x "$repo/.whl/osu-7.4/configure" ] && osu74=$repo/.whl/osu-7.4
    # OSU's default iterations up to 4 MiB take minutes a run over TCP: fewer
    # (the tables say so)
    lat_args=${BENCH_NODES_LAT_ARGS:--m 1:4194304 -i 1000 -x 100}
    bw_args=${BENCH_NODES_BW_ARGS:--m 1:4194304 -i 20 -x 2}
    echo "== osu: scripts/bench.sh --areas \"$areas\" (budget $((end - SECONDS)) s)"
    # a bed of its own, next to ours
    NSBED_ID=$((NSBED_ID % 249 + 1)) OSU74_DIR=$osu74 BENCH_BUDGET_S=$((end - SECONDS)) BENCH_RUN_TIMEOUT=90 \
        BENCH_NODES_LAT_ARGS=$lat_args BENCH_NODES_BW_ARGS=$bw_args \
        AMPI_UCX_DIR=${ucx_lib%/lib} bash scripts/bench.sh --areas "$areas" --rounds "${GPU_BED_ROUNDS:-5}" \
        --out "$work/osu" >"$out/logs/osu.log" 2>&1
    rc=$?
    # the results without the builds
    mkdir -p "$out/osu/logs"
    cp -f "$work"/osu/*.csv "$work"/osu/*.txt "$work"/osu/*.md "$out/osu/" 2>/dev/null
    cp -f "$work"/osu/logs/*.log "$out/osu/logs/" 2>/dev/null
    if [ -f "$out/osu/tables.md" ]; then
        cat "$out/osu/tables.md" >>"$out/summary.md"
        grep -E '^(rounds|ucx)' "$out/osu/meta.txt"
        secs=$SECONDS
        report_case "gpu-bed/osu ($areas)" "$([ "$rc" -eq 0 ] || echo "a build or run failed (exit $rc; osu/runs.csv)")" \
            "$out/logs/osu.log"
    else
        fail "gpu-bed/osu" "no tables: $(tail_of "$out/logs/osu.log")"
    fi
fi

# ---- jacobi ------------------------------------------------------------------
if has_part jacobi; then
    end=$(deadline jacobi)
    mode=D nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
    [ -n "$gpus" ] || { mode=cpu nvcc=""; skip "gpu-bed/jacobi -D" "$ngpu GPU(s) here, needs 2: -cpu instead"; }
    jdir=$work/jacobi-build
    if ! make -C apps/jacobi3d MPICC="$prefix/bin/ampicc" NVCC="$nvcc" BUILDDIR="$jdir" >"$out/logs/jacobi-build.log" 2>&1; then
        fail "gpu-bed/jacobi build" "$(tail_of "$out/logs/jacobi-build.log")"
    else
        # jrun LOG ODF ARGS...: one process per node, ODF ranks each
        jrun() {
            local log=$1 odf=$2
            shift 2
            timed_run "$log" 120 "$bed" mpirun 1 --bind-to none -x AMPI_VP=$((2 * odf)) -x NCCL_NVLS_ENABLE \
                "$jdir/jacobi3d" "-$mode" "$@"
        }
        log=$out/logs/jacobi-verify.log
        jrun "$log" 4 -n 48 -i 5 -w 1 -v
        why=$(early_verdict "$log" "timed out")
        [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit $rc"
        [ -n "$why" ] || grep -q 'VERIFY PASS' "$log" || why="no VERIFY PASS"
        report_case "gpu-bed/jacobi -$mode -v odf=2" "$why" "$log"
        csv=$out/jacobi.csv
        echo "mode,block,odf,overlap,round,iter_ms,comm_ms,status" >"$csv"
        # the global grid: two blocks of block^3 side by side, one per GPU
        grid="-x $((2 * block)) -y $block -z $block -i 50 -w 10"
        configs="1: 1:-overlap 2: 2:-overlap 4: 4:-overlap 8: 8:-overlap"
        round=0 last=0
        # a round takes about as long as the last one: none starts that
        # would end after the part's share; odd rounds in order, even ones
        # reversed
        while [ "$round" -lt "${GPU_BED_ROUNDS:-5}" ] && [ $((SECONDS + last)) -le "$end" ]; do
            round=$((round + 1))
            t0=$SECONDS
            list=$configs
            [ $((round % 2)) = 0 ] && list=$(echo "$configs" | tr ' ' '\n' | tac | paste -sd ' ' -)
            for c in $list; do
                odf=${c%%:*} ov=${c#*:}
                log=$out/logs/jacobi-odf$odf${ov}-r$round.log
                # shellcheck disable=SC2086 # grid is a list of arguments
                jrun "$log" "$odf" $grid $ov
                ms=$(grep -o 'iter_ms=[0-9.]*' "$log" | head -1 | cut -d= -f2)
                cm=$(grep -o 'comm_ms=[0-9.]*' "$log" | head -1 | cut -d= -f2)
                echo "$mode,$block,$odf,${ov:+yes},$round,${ms:-},${cm:-},$rc" >>"$csv"
                if [ "$rc" -ne 0 ] || [ -z "$ms" ]; then
                    fail "gpu-bed/jacobi odf=$odf $ov round $round" "exit $rc: $(tail_of "$log")"
                fi
            done
            last=$((SECONDS - t0))
        done
        bash "$here/jacobi-table.sh" "$csv" | tee "$out/jacobi.md" | tee -a "$out/summary.md"
        if [ "$round" -ge 1 ]; then
            pass "gpu-bed/jacobi -$mode ${block}^3 per node, odf 1-8 with and without -overlap: $round rounds"
        else
            fail "gpu-bed/jacobi" "no round fitted in the part's share of --budget $budget"
        fi
    fi
fi
summary
