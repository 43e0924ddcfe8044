#!/bin/bash
# scripts/device.sh -- build, test and benchmark AMPI-UCX on an offline GPU machine.
#
# Usage: scripts/device.sh ACTION [ACTION...] [--] [RUNNER ARGS, e.g. --quick]
#        scripts/device.sh plan          (prints this plan; runs nothing)
# Runs in a fresh copy of the working tree (carry .whl: see device-prep.sh):
# sets up UCX, builds AMPI-UCX once (./setup.sh --no-demo, ~20 s there), then
# runs the actions in order.  Each action writes $OUT/ACTION/ (CSV, markdown,
# timings.csv = seconds per run, failures, small logs); $OUT/summary.md lists
# every action with its status, measured and expected seconds.  RUNNER ARGS go
# to every runner (both understand --quick and --cpu).
#
# Time: where a command may run only so long (10 minutes, say), the actions
# of one run share DEVICE_BUDGET_S (default 540 s, counted from the start of
# this script, set-up included); each runner gets what is left as its own
# budget, starts no run once that is spent and lists what it skipped, so the
# run ends in time.
#
# Actions (seconds on a 2 x H200 host, set-up not included: measured there on
# 2026-11-22 where known, else estimated; the
# model: ~3 s per MPI run for launch + CUDA + UCX set-up, plus iterations x
# sizes x the latencies in BENCHMARKS.md; ~2.5 s per ucx_perftest size with a
# GPU buffer, ~1 s host-only; 48 osu runs took 5 min there, ucx_perftest 92
# sizes 3 min):
#   current          ~480 s  every current table of BENCHMARKS.md by the method of
#                            docs/benchmarking.md (scripts/bench.sh): host pt2pt and
#                            collectives beside Open MPI's pml ucx and pml ob1, device
#                            pt2pt, device all-reduce beside NCCL, Jacobi3D 192^3 per
#                            GPU ODF 1/2, virtualized ranks; interleaved rounds after a
#                            warm-up until the budget is spent (BENCH_ROUNDS, default 5);
#                            $OUT/current/tables.md, rounds.csv, runs.csv (exit statuses);
#                            CURRENT_AREAS narrows the areas (bench.sh --areas)
#   floor             ~15 s  osu/gpu_floor: what peer and host copies cost here
#   bench-p2p-dd     ~130 s  osu_latency/bw/bibw D-D, AMPI-UCX + Open MPI
#                            (6 runs), bw/bibw up to 32 MiB (OSU_BW_MAX); ucx_perftest
#                            -m cuda tag_lat 1 B-4 MiB and tag_bw 1 B-32 MiB, every size
#   bench-p2p-mixed  ~270 s  the same in D-H and H-D (12 runs, 32 MiB);
#                            ucx_perftest -m cuda,host / host,cuda every other size
#                            (OSU_PERFTEST_STEP=4) plus 32 MiB
#   bench-p2p-host   ~110 s  all six point-to-point programs H-H (12 runs),
#                            ucx_perftest host, every size
#   bench-p2p-more   ~115 s  osu_latency_persistent, osu_multi_lat, osu_mbw_mr
#                            in D-D, D-H, H-D (18 runs)
#   bench-coll        ~85 s  six collectives H-H and D-D (osu_barrier H-H),
#                            2 processes (22 runs) + nccl_allreduce beside
#                            osu_allreduce D-D up to 128 MiB
#   bench-coll-host   ~60 s  the six collectives H-H only, 2 processes,
#                            COLL_ROUNDS rounds (default 3) in $OUT/bench-coll-host-rN
#   bench-halo        ~35 s  osu/osu_halo_persistent.c when it exists (skipped
#                            otherwise): H-H and D-D, AMPI-UCX -np 2 +vp 8,
#                            Open MPI 8 processes (4 runs); OSU_HALO_NP/VP/ARGS
#                            change that
#   jacobi-small     ~200 s  Jacobi3D 192^3 per GPU, 1 and 2 GPUs, H and D,
#                            ODF 1/2/4/8, ampicc and mpicc builds (~20 s, nvcc; 32
#                            runs of 100 iterations, ~4 s each: launch-bound) after
#                            16 checked runs (48^3, -v)
#   jacobi-large     ~180 s  the same matrix at 1536^3 per GPU (32 runs, 30
#                            iterations after 5, ~20 ms each: ~58 GB per GPU per
#                            iteration at ~3-4 TB/s; ~5.5 s per run with set-up);
#                            +20 s for the build when not after jacobi-small
#   gpu-test         ~650 s  test/gpu/run.sh (both routes, channels,
#                            staging fallback, device collectives) and Jacobi3D's
#                            -D/-H checks (DEVICE_GPU_TEST_JACOBI=0: without them).
#                            More than one call on 2 x H200 (2026-11-27: the nine
#                            programs' matrix and route cases up to gpu_memkind's
#                            took ~510 s, gpu_ddt's ten cases and Jacobi3D 161 s):
#                            split it with GPU_TESTS, e.g. "gpu_query gpu_pt2pt
#                            gpu_wild gpu_stale gpu_coll gpu_rma gpu_smallred" with
#                            DEVICE_GPU_TEST_JACOBI=0 in one call, "gpu_memkind
#                            gpu_ddt" in the next
#   sweep-dd          ~45 s  osu_latency + osu_bw D-D up to 32 MiB under each
#                            of SWEEP_VARIANTS (route settings, ';'-separated)
#   sweep-allreduce  ~150 s  osu/gpu_floor (peer and pinned host<->device copies: the floor of
#                            small device collectives), then osu_allreduce, osu_reduce and
#                            osu_bcast D-D up to 1 MiB on 2 GPUs under SWEEP_AR_VARIANTS
#                            (default: as built; AMPI_GPU_COLL_HOST_MAX=0, i.e. NCCL; the same
#                            without NCCL; +vp 8 with and without host copies): the
#                            host-copy limit's crossover (estimated, not measured yet)
#   sweep-hh          ~40 s  osu_latency + osu_bw H-H up to 4 MiB, the same
#                            way, under SWEEP_HH_VARIANTS (default: as built,
#                            AMPI_SHM=0, ampirun --bind-to=none) and Open MPI;
#                            SWEEP_HH_PROGS (e.g. "osu_bw osu_bibw") and
#                            SWEEP_HH_MAX (bytes) change the programs and sizes
#   osu74-rma        ~480 s  unmodified OSU 7.4 (OSU74_DIR, default .osu74: its sources,
#                            carried, never committed) built with ampicc and Open MPI's
#                            mpicc --enable-cuda=basic: the nine one-sided programs
#                            (put/get latency and bandwidth, put_bibw, acc, get_acc,
#                            fop, cas latency) with -d cuda D D and H H, ours beside
#                            Open MPI (--mca pml ucx --mca osc ucx; on host buffers also
#                            pml ob1), OSU's defaults, interleaved rounds after a
#                            warm-up until the budget is spent (scripts/bench.sh
#                            --areas "rma-device rma-host"; OSU74_RMA_AREAS=rma-device or
#                            rma-host: one of them, for a call of its own, as a round of
#                            both may take most of 10 minutes); $OUT/osu74-rma/tables.md
#                            (also $OUT/osu74-rma-tables.md), runs.csv (every exit status)
#   osu74-exit       ~420 s  unmodified OSU 7.4 (OSU74_DIR, default .osu74: its sources, carried) built with
#                            ampicc --enable-cuda=basic: exit status of every pt2pt and
#                            collective program its Makefile.am files name (standard,
#                            persistent, congestion; blocking, non-blocking, persistent,
#                            neighborhood: ~60) with -d cuda (all must be 0; the collectives
#                            validate, -c); OSU74_EXIT_DIRS: some directories only; estimated ~5 s
#                            a run, not measured for the added programs
#   memkind-stress   ~480 s  test/gpu/gpu_memkind's stress mode: MEMKIND_REPS repetitions
#                            (default 100) up to 1 MiB in each of -np 2, -np 4, -np 1 +vp 4,
#                            -np 2 +vp 8, the budget shared among the four (each run starts
#                            no repetition past its share); memkind-stress/status.txt says
#                            how many repetitions each layout ran (fewer than asked fails the
#                            action: the seconds a repetition takes there are not known yet),
#                            its FAIL lines and exit status; MEMKIND_JOBS="2x2:1,4x4:3,1x4:5,2x8:6"
#                            runs those layouts' jobs (count after the colon) all at once, each
#                            on CPUs of its own, the repetitions shared among a layout's jobs
#   memkind-probe    ~540 s  the +vp wrong data with a witness: MEMKIND_PROBE_JOBS (15) jobs of
#                            gpu_memkind -np 2 +vp 8 at once over pool, user-pool, managed and
#                            peer buffers, under each of MEMKIND_PROBE_PHASES (as built, then
#                            UCX_MEMTYPE_CACHE=n), test/gpu/probe's witness describing every
#                            failed cuMemcpyAsync; status.txt per phase
#   memkind-bisect   ~480 s  gpu_memkind -np 2 +vp 8 on pool/managed/device buffers of 64 KiB
#                            and 1 MiB, repeated in an equal share of the budget under each
#                            of MEMKIND_VARIANTS (default: as built; AMPI_GPU_IPC=0;
#                            AMPI_GPU_IPC_CACHE=off; AMPI_GPU_POOL_AS_MANAGED=on;
#                            UCX_TLS=^tcp, i.e. UCX's cuda_ipc back
#                            beside our route; UCX_MEMTYPE_CACHE=n):
#                            repetitions and FAIL lines per variant in status.txt
#   memkind-base     ~300 s  the same hunt at earlier commits: each of MEMKIND_BASES (carried as
#                            .whl/base-REV.tar.gz) built in the call (~25 s each) and
#                            gpu_memkind (pool, user-pool, managed; 64 KiB, 1 MiB) run with
#                            its ampicc at -np 2 +vp 8 for an equal share (at most
#                            MEMKIND_BASE_S, 60 s); status.txt per commit
#   privat-gpu       ~150 s  globals privatization with device code: Jacobi3D (CUDA
#                            kernels) built with ampicc -privatize, its -D/-H/-cpu checks
#                            at -np 1 +vp N and -np 2 +vp N; test/gpu's programs built
#                            the same way over their matrix; test/privat/run.sh
#                            (PRIVAT_GPU_PARTS: some of "jacobi gpu privat")
#   gpu-bed          ~480 s  two "nodes" (network namespaces) of one GPU each, Open MPI's
#                            mpirun as the engine (test/multinode/gpu-bed.sh, within what is
#                            left of the budget): device buffers between the nodes (gpu_pt2pt,
#                            gpu_memkind, gpu_coll at 2 nodes x 1-2 processes x +vp 1-2, routes
#                            checked), osu_latency/osu_bw H H and D D beside Open MPI, Jacobi3D
#                            512^3 per GPU ODF 1/2/4/8 with and without -overlap; OSU74_DIR (or
#                            .whl/osu-7.4): the unmodified OSU 7.4; GPU_BED_PARTS: some of
#                            "correct osu jacobi"; $OUT/gpu-bed-summary.md
#   host-test        ~200 s  host MPI tests (test/mpi/run.sh: ring, pt2pt_basic,
#                            pt2pt_modes, order, probe, coll_basic, coll_sizes) over the
#                            ampirun matrix, and ring/pt2pt_basic under Open MPI's mpirun
#   compare REV      ~480 s  before/after: builds commit REV (its sources carried as
#                            .whl/base-REV.tar.gz: scripts/device-prep.sh --base REV)
#                            into its own prefix beside this tree, then osu_latency,
#                            osu_bw, osu_bibw H-H and D-D of both libraries, the same
#                            sources, interleaved rounds (scripts/bench.sh with
#                            BENCH_BASE_PREFIX) until the budget is spent; prints
#                            the medians of both and ours / REV per size
#                            ($OUT/compare-tables.md; compare/ in results.tgz).
#                            COMPARE_AREAS (default "host-p2p device-p2p"),
#                            BENCH_ROUNDS (default 9, the budget cuts it short),
#                            COMPARE_P2P_PROGS (default all three; the other
#                            actions of the call keep theirs).  compare self:
#                            this build against itself under COMPARE_BASE_ENV
#                            ("NAME=VALUE ...": which setting moves a figure).
#                            E.g. (~30 s set-up + ~40 s the second build + the
#                            rounds, ~45 s each on 2 H200):
#                              DEVICE_BUDGET_S=560 scripts/device.sh compare 566b9ca
#   Scaling (on 4 or 8 GPUs: every GPU of the machine):
#   scale-p2p         ~70 s  osu_multi_lat + osu_mbw_mr D-D on 2, 4 (, 8) processes, one
#                            GPU each, all pairs busy, ours and Open MPI (4 runs per count)
#   scale-coll        ~50 s  osu_allreduce/bcast/allgather/alltoall D-D on every GPU, ours
#                            and Open MPI, nccl_allreduce beside (up to 128 MiB)
#   scale-jacobi-small ~260 s Jacobi3D weak scaling 192^3 per GPU on 1, 2, 4 (, 8) GPUs,
#                            H and D, ODF 1/2/4/8, ours and Open MPI (48 runs on x4),
#                            checked runs (48^3, -v) on the most GPUs first
#   scale-jacobi-large ~450 s weak scaling 1536^3 per GPU and strong scaling of a
#                            1536^3 grid on 1, 2, 4 (, 8) GPUs, the same matrix (80 runs
#                            on x4: give it a run of its own)
#   build, test, bench, jacobi, all   as before: set-up only; ./test.sh; the whole
#                            run-compare.sh (~8-10 min: split it into the actions above);
#                            run-experiments.sh (both block sizes, ~6 min); build+test+bench
#
# A plan in runs of under 10 minutes, each from a fresh copy of the working
# tree with .whl (set-up ~30 s; measured on 2026-11-22).  On a 2 x H200 host:
#   run 1: GPU_TESTS="gpu_query gpu_pt2pt gpu_wild gpu_stale gpu_coll gpu_rma gpu_smallred"
#          DEVICE_GPU_TEST_JACOBI=0 scripts/device.sh gpu-test; then GPU_TESTS="gpu_memkind
#          gpu_ddt" scripts/device.sh gpu-test (each under 10 minutes; the split of gpu-test above)
#   run 1b: scripts/device.sh bench-p2p-dd sweep-dd                          ~30+175 s
#   run 2: scripts/device.sh bench-coll bench-halo bench-p2p-more bench-p2p-mixed
#                                                                           ~30+500 s
#   run 3: scripts/device.sh jacobi-small jacobi-large bench-p2p-host       ~30+365 s
# On a 4 x H200 host (393, 400, 531, 207 s per run):
#   run 1: scripts/device.sh scale-p2p scale-coll sweep-hh scale-jacobi-small
#   run 2: scripts/device.sh scale-jacobi-large
#   run 3: DEVICE_GPU_TEST_JACOBI=0 scripts/device.sh gpu-test sweep-hh bench-coll host-test
#   (gpu-test takes 163-168 s there with its 4-GPU cases, host-test 196 s)
# (the budget cuts the last action of a run short, and says so, if the
# estimates are low.)  A second device.sh in the same command needs its own
# OUT (e.g. OUT=$OUT/h): each run archives its OUT.
# $OUT/results.tgz holds all results, for machines that hand back only a few
# files.
# Where matplotlib is: osu/plot.py $OUT/bench-*/results.csv --out DIR and
# apps/jacobi3d/plot.py $OUT/jacobi-*/jacobi.csv --out DIR (matplotlib: see
# osu/README.md).  timings.csv and summary.md give the measured seconds for
# the next plan.
#
# Environment: OUT (results; without it they stay in DEVICE_WORK),
#   DEVICE_BUDGET_S (540), DEVICE_WORK (default .build/device),
#   AMPI_PREFIX (default .prefix), DEVICE_NO_SETUP=1 (no UCX set-up, no
#   nvidia-smi, no build: for trying the actions on a machine that has
#   AMPI_PREFIX installed already, e.g. with --cpu), DEVICE_DRY_RUN=1 (print
#   each action's runner command, run nothing), plus the runners' own
#   OSU_* / JACOBI_* settings (osu/README.md, apps/jacobi3d/run-experiments.sh).
#   With --cpu every osu action runs its benchmarks in H-H only (a smoke
#   test on a CPU-only machine): DEVICE_NO_SETUP=1 DEVICE_WORK=/tmp/d scripts/device.sh bench-coll -- --cpu --quick
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# expected seconds of each action (the plan above), for summary.md
declare -A expected=(
    [current]=480 [bench-p2p-dd]=130 [bench-p2p-mixed]=270 [bench-p2p-host]=110 [bench-p2p-more]=115
    [bench-coll]=85 [bench-coll-host]=60 [bench-halo]=35 [jacobi-small]=200 [jacobi-large]=180
    [build]=30 [test]=300 [bench]=540 [jacobi]=360 [all]=900 [gpu-test]=650 [sweep-dd]=45
    [sweep-hh]=40 [compare]=480 [gpu-bed]=480 [host-test]=200 [osu74-exit]=420 [osu74-rma]=480 [privat-gpu]=150 [scale-p2p]=70 [scale-coll]=50 [scale-jacobi-small]=260 [scale-jacobi-large]=450 [memkind-stress]=480 [memkind-bisect]=480 [memkind-base]=300 [memkind-probe]=540 [sweep-allreduce]=150 [floor]=15
)
is_action() { [ -n "${expected[$1]:-}" ]; }

if [ "${1:-}" = plan ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 0
fi
actions=()
compare_rev=""
while [ $# -gt 0 ] && is_action "$1"; do
    actions+=("$1")
    shift
    # compare takes the commit to compare with as its next word
    if [ "${actions[-1]}" = compare ] && [ $# -gt 0 ] && ! is_action "$1" && [ "$1" != -- ]; then
        compare_rev=$1
        shift
    fi
done
[ "${1:-}" = -- ] && shift
bench_args=("$@") # to every runner, e.g. --quick
[ ${#actions[@]} -gt 0 ] || actions=(all)
cpu=0
for arg in "${bench_args[@]}"; do
    case $arg in
    --cpu) cpu=1 ;;
    -*) ;;
    *) echo "device: unknown action $arg; actions: ${!expected[*]} (or plan)" >&2; exit 2 ;;
    esac
done

budget=${DEVICE_BUDGET_S:-540}
work=${DEVICE_WORK:-$PWD/.build/device}
prefix=${AMPI_PREFIX:-$PWD/.prefix}
dry=${DEVICE_DRY_RUN:-0}
no_setup=${DEVICE_NO_SETUP:-0}
# NVLink SHARP (multicast) stays off: on a host whose GPUs others share, a
# program that uses it can put them out of service.  Open MPI refuses to run
# as root without the other two.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-}
[ -n "$out" ] && mkdir -p "$out"
mkdir -p "$work"

left() { echo $((budget - SECONDS)); }

# save_logs: the build logs of the last setup, into $OUT/logs.
save_logs() {
    [ -n "$out" ] || return 0
    mkdir -p "$out/logs"
    cp -f .build/*.log "$out/logs/" 2>/dev/null || true
}

do_build() {
    echo "== build: ./setup.sh --no-demo"
    ./setup.sh --no-demo
    local status=$?
    save_logs
    return "$status"
}

need_prefix() {
    [ "$dry" = 1 ] && return 0
    [ -x "$prefix/bin/ampicc" ] && return 0
    [ "$no_setup" = 1 ] && { echo "device: no $prefix/bin/ampicc and DEVICE_NO_SETUP=1" >&2; return 1; }
    do_build
}

do_test() {
    echo "== test: ./test.sh"
    local status
    if [ -n "$out" ]; then
        ./test.sh 2>&1 | tee "$out/test.log"
        status=${PIPESTATUS[0]}
    else
        ./test.sh
        status=$?
    fi
    save_logs
    return "$status"
}

# copy_results DIR NAME: a runner's CSV/MD/TXT and its small logs to $OUT/NAME.
copy_results() {
    [ -n "$out" ] || return 0
    local from=$1 to=$out/$2
    mkdir -p "$to/logs"
    find "$from" -maxdepth 1 -type f \( -name '*.csv' -o -name '*.md' -o -name '*.txt' \) -exec cp -f {} "$to/" \;
    find "$from/logs" -maxdepth 1 -type f -size -256k -exec cp -f {} "$to/logs/" \; 2>/dev/null
    echo "device: results of $2 in $to"
}

# osu_action NAME VAR=VALUE...: osu/run-compare.sh with these settings (the
# caller's own OSU_* settings win, except the benchmarks and placements that
# define the action), bounded by what is left of the budget.
osu_action() {
    local name=$1 dir=$work/$1 status
    shift
    need_prefix || return 1
    rm -rf "$dir"
    local settings=() kv key
    for kv in "$@"; do
        key=${kv%%=*}
        if [ "$key" != OSU_BENCHMARKS ] && [ "$key" != OSU_PLACEMENTS ] && [ -n "${!key:-}" ]; then
            settings+=("$key=${!key}")
        elif [ "$key" = OSU_PLACEMENTS ] && [ "$cpu" = 1 ]; then
            settings+=(OSU_PLACEMENTS=H-H) # --cpu: a smoke test of the action without GPUs
        else
            settings+=("$kv")
        fi
    done
    settings+=("OSU_BUDGET_S=$(($(left) - 20))" "AMPI_PREFIX=$prefix")
    echo "== $name: env ${settings[*]} bash osu/run-compare.sh --out $dir ${bench_args[*]}"
    [ "$dry" = 1 ] && return 0
    env "${settings[@]}" bash osu/run-compare.sh --out "$dir" "${bench_args[@]}"
    status=$?
    copy_results "$dir" "$name"
    return "$status"
}

# jacobi_action NAME RUNNER-ARGS...: apps/jacobi3d/run-experiments.sh; both
# jacobi actions of one run share the two builds.
jacobi_action() {
    local name=$1 dir=$work/$1 status
    shift
    need_prefix || return 1
    rm -rf "$dir"
    local settings=("JACOBI_BUDGET_S=$(($(left) - 45))" "JACOBI_BUILD_ROOT=${JACOBI_BUILD_ROOT:-$work/jacobi-builds}"
        "AMPI_PREFIX=$prefix")
    echo "== $name: env ${settings[*]} bash apps/jacobi3d/run-experiments.sh --out $dir $* ${bench_args[*]}"
    [ "$dry" = 1 ] && return 0
    env "${settings[@]}" bash apps/jacobi3d/run-experiments.sh --out "$dir" "$@" "${bench_args[@]}"
    status=$?
    copy_results "$dir" "$name"
    return "$status"
}

# current_action: scripts/bench.sh within what is left of the budget (30 s
# kept for its tables and the archive).
current_action() {
    local dir=$work/current status
    need_prefix || return 1
    echo "== current: BENCH_BUDGET_S=$(($(left) - 30)) scripts/bench.sh --out $dir ${bench_args[*]}"
    [ "$dry" = 1 ] && return 0
    local area_args=()
    [ -n "${CURRENT_AREAS:-}" ] && area_args=(--areas "$CURRENT_AREAS")
    BENCH_BUDGET_S=$(($(left) - 30)) AMPI_PREFIX=$prefix bash scripts/bench.sh --out "$dir" "${area_args[@]}" \
        "${bench_args[@]}"
    status=$?
    copy_results "$dir" current
    # the tables also outside results.tgz, so that they come back at once
    [ -n "$out" ] && [ -f "$dir/tables.md" ] && cp -f "$dir/tables.md" "$out/current-tables.md"
    return "$status"
}

# osu74_rma_action: the one-sided tables (scripts/bench.sh's rma areas)
# within what is left of the budget (30 s kept for the tables and archive).
osu74_rma_action() {
    local dir=$work/osu74-rma status src=${OSU74_DIR:-$PWD/.osu74} areas=${OSU74_RMA_AREAS:-rma-device rma-host}
    need_prefix || return 1
    echo "== osu74-rma: OSU74_DIR=$src BENCH_BUDGET_S=$(($(left) - 30)) scripts/bench.sh --out $dir --areas \"$areas\" ${bench_args[*]}"
    [ "$dry" = 1 ] && return 0
    OSU74_DIR=$src BENCH_BUDGET_S=$(($(left) - 30)) AMPI_PREFIX=$prefix bash scripts/bench.sh --out "$dir" \
        --areas "$areas" "${bench_args[@]}"
    status=$?
    copy_results "$dir" osu74-rma
    [ -n "$out" ] && [ -f "$dir/tables.md" ] && cp -f "$dir/tables.md" "$out/osu74-rma-tables.md"
    return "$status"
}

# gpu_test_action: the GPU groups of the suite only (test/gpu/run.sh, and
# Jacobi3D's checks in -D/-H unless DEVICE_GPU_TEST_JACOBI=0), without the
# CPU groups that CI runs anyway.
gpu_test_action() {
    need_prefix || return 1
    [ "$dry" = 1 ] && { echo "== gpu-test: test/gpu/run.sh; apps/jacobi3d/test.sh --gpu"; return 0; }
    local log=${out:-$work}/gpu-test.log status=0
    mkdir -p "$(dirname "$log")"
    echo "== gpu-test: test/gpu/run.sh" | tee "$log"
    # GPU_TESTS="gpu_coll ...": only these programs (default: all)
    # shellcheck disable=SC2086
    AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build bash test/gpu/run.sh ${GPU_TESTS:-} 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    if [ "${DEVICE_GPU_TEST_JACOBI:-1}" != 0 ]; then
        echo "== gpu-test: apps/jacobi3d/test.sh --gpu" | tee -a "$log"
        MPICC="$prefix/bin/ampicc" JACOBI_LAUNCH="$prefix/bin/ampirun --timeout 100 -np 1 +vp" \
            bash apps/jacobi3d/test.sh --gpu 2>&1 | tee -a "$log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
    fi
    echo "gpu-test: $(grep -c '^PASS ' "$log") passed, $(grep -c '^FAIL ' "$log") failed, $(grep -c '^SKIP ' "$log") skipped" | tee -a "$log"
    return $status
}

# privat_gpu_action: privatized programs with CUDA code (each rank its own
# copy of the program, the CUDA runtime linked into it): Jacobi3D built with
# `ampicc -privatize` must pass its device, host-staging and CPU checks with
# the ranks of one process and of two; test/gpu's programs built the same
# way must pass their matrix; then the privatization tests.
# PRIVAT_GPU_PARTS: some of "jacobi gpu privat" (default all three);
# PRIVAT_GPU_TESTS: test/gpu's programs to build privatized (default
# gpu_pt2pt gpu_coll gpu_ddt gpu_rma gpu_memkind), run over the matrix only.
privat_gpu_action() {
    need_prefix || return 1
    local parts=" ${PRIVAT_GPU_PARTS:-jacobi gpu privat} "
    [ "$dry" = 1 ] && { echo "== privat-gpu:$parts(ampicc -privatize)"; return 0; }
    local log=${out:-$work}/privat-gpu.log status=0 launch
    mkdir -p "$(dirname "$log")" "$work/privat-gpu"
    local -a more
    if [[ $parts == *" jacobi "* ]]; then
        for launch in "-np 1 +vp" "-np 2 +vp"; do
            more=()
            [ "$launch" = "-np 2 +vp" ] && more=(--min-ranks 2)
            echo "== privat-gpu: apps/jacobi3d/test.sh --gpu, ampicc -privatize, ampirun $launch" | tee -a "$log"
            MPICC="$prefix/bin/ampicc -privatize" JACOBI_LAUNCH="$prefix/bin/ampirun --timeout 100 $launch" \
                bash apps/jacobi3d/test.sh --gpu "${more[@]}" 2>&1 | tee -a "$log"
            [ "${PIPESTATUS[0]}" = 0 ] || status=1
        done
    fi
    if [[ $parts == *" gpu "* ]]; then
        # test/gpu/run.sh takes one compiler word: a two-line wrapper adds the flag
        local cc=$work/privat-gpu/ampicc-privatize
        printf '#!/bin/sh\nexec "%s" -privatize "$@"\n' "$prefix/bin/ampicc" >"$cc"
        chmod +x "$cc"
        echo "== privat-gpu: test/gpu/run.sh built with ampicc -privatize (matrix only)" | tee -a "$log"
        # shellcheck disable=SC2086 # a list of program names
        MPICC=$cc GPU_TEST_EXTRAS=0 AMPI_PREFIX=$prefix AMPI_BUILD=$work/privat-gpu \
            bash test/gpu/run.sh ${PRIVAT_GPU_TESTS:-gpu_pt2pt gpu_coll gpu_ddt gpu_rma gpu_memkind} 2>&1 | tee -a "$log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
    fi
    if [[ $parts == *" privat "* ]]; then
        echo "== privat-gpu: test/privat/run.sh" | tee -a "$log"
        AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build bash test/privat/run.sh 2>&1 | tee -a "$log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
    fi
    echo "privat-gpu: $(grep -c '^PASS ' "$log") passed, $(grep -c '^FAIL ' "$log") failed, $(grep -c '^SKIP ' "$log") skipped" | tee -a "$log"
    return $status
}

# sweep_action NAME PLACEMENT MAX VARIANTS: osu_latency and osu_bw in
# PLACEMENT (D-D or H-H) up to MAX bytes under each variant (';'-separated:
# "default" = as built; VAR=VALUE words set the environment, words starting
# with -- go to ampirun, written --option=value; "ompi" = the same source
# built with mpicc and run by Open MPI's mpirun over the CUDA-aware UCX), so
# that one run compares them side by side.  SWEEP_ROUNDS=N (default 1)
# runs the whole list N times, variants interleaved, so that a slow spell of
# the machine hits every variant alike (compare medians over the rounds),
# after one discarded warm-up run (SWEEP_WARMUP=0: none).
# Writes NAME/sweep.csv (variant,benchmark,size,value,round).  PROGS (5th
# argument, default "osu_latency osu_bw") may name collectives of osu/
# (osu_allreduce, ...: all buffers on the device with D-D, no placement
# words); a variant word +vp=N runs N ranks on the 2 processes.
sweep_action() {
    local name=$1 placement=$2 max=$3 variants=$4 progs=${5:-osu_latency osu_bw}
    need_prefix || return 1
    local dir=$work/$name res=${out:-$work}/$name
    mkdir -p "$dir" "$res"
    [ "$dry" = 1 ] && { echo "== $name: $progs: $variants"; return 0; }
    local cuda=${CUDA_HOME:-/usr/local/cuda} prog srcs
    local flags="-std=c11 -O2 -DOSU_CUDA -I$cuda/include" libs="-L$cuda/lib64 -lcudart"
    local ucx_lib=$PWD/.deps/ucx/libucx/lib
    is_coll() { case $1 in osu_allreduce | osu_bcast | osu_reduce | osu_allgather | osu_alltoall | osu_barrier) return 0 ;; esac; return 1; }
    for prog in $progs; do
        srcs="osu/osu_common.c osu/osu_options.c osu/osu_device.c"
        is_coll "$prog" && srcs="osu/osu_coll.c osu/osu_coll_options.c osu/osu_options.c osu/osu_device.c"
        # shellcheck disable=SC2086 # flag lists are split on purpose
        "$prefix/bin/ampicc" $flags -o "$dir/$prog" osu/$prog.c $srcs $libs >"$res/build.log" 2>&1 ||
            { echo "$name: building $prog failed"; cat "$res/build.log"; return 1; }
        if [[ ";$variants;" == *";ompi;"* ]]; then
            # shellcheck disable=SC2086
            mpicc $flags -o "$dir/$prog.ompi" osu/$prog.c $srcs $libs >>"$res/build.log" 2>&1 ||
                echo "$name: building $prog with mpicc failed (no ompi variant)"
        fi
    done
    local dev_args=()
    [ "$placement" = D-D ] && dev_args=(-d cuda)
    echo "variant,benchmark,size,value,round" >"$res/sweep.csv"
    # one untimed run first (SWEEP_WARMUP=0: none): the first run on a fresh
    # machine can be up to 2x slower at every size (BENCHMARKS.md,
    # 2026-11-22, 2 x H200, 343bb73, change 1a5d58d)
    # placement words (D D) and the smallest size: point-to-point programs only
    place_args() { is_coll "$1" && return 0; printf '%s\n' "${placement%-*}" "${placement#*-}"; }
    local first=${progs%% *} min
    if [ "${SWEEP_WARMUP:-1}" != 0 ]; then
        echo "== $name: warm-up (discarded)"
        # shellcheck disable=SC2046 # two words or none
        timeout 90 "$prefix/bin/ampirun" --timeout 80 -np 2 "$dir/$first" "${dev_args[@]}" -m "8:$max" \
            $(place_args "$first") >/dev/null 2>&1
    fi
    local IFS=';' v round
    for ((round = 1; round <= ${SWEEP_ROUNDS:-1}; round++)); do
    for v in $variants; do
        IFS=' '
        for prog in $progs; do
            [ "$(left)" -gt 30 ] || { echo "$name: budget spent before round $round $v $prog"; return 0; }
            local envs=() launcher_args=() word cmd
            min=1
            is_coll "$prog" && min=8
            if [ "$v" = ompi ]; then
                [ -x "$dir/$prog.ompi" ] || continue
                cmd=(mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
                    -x LD_LIBRARY_PATH="$ucx_lib:${LD_LIBRARY_PATH:-}" -x NCCL_NVLS_ENABLE "$dir/$prog.ompi")
            else
                if [ "$v" != default ]; then
                    for word in $v; do
                        case $word in
                        --*) launcher_args+=("$word") ;;
                        +vp=*) launcher_args+=(+vp "${word#+vp=}") ;;
                        *) envs+=("$word") ;;
                        esac
                    done
                fi
                cmd=("$prefix/bin/ampirun" --timeout 80 "${launcher_args[@]}" -np 2 "$dir/$prog")
            fi
            echo "== $name: round $round: $v $prog"
            # the placement words as an array: IFS is ';' here, so a
            # command substitution would reach the program as one word
            local -a pargs=()
            is_coll "$prog" || pargs=("${placement%-*}" "${placement#*-}")
            env "${envs[@]}" timeout 90 "${cmd[@]}" "${dev_args[@]}" -m "$min:$max" \
                "${pargs[@]}" 2>&1 | tee "$dir/run.log" | grep -v '^#'
            awk -v v="$v" -v p="$prog" -v r="$round" '/^[0-9]/ { print v "," p "," $1 "," $2 "," r }' "$dir/run.log" \
                >>"$res/sweep.csv"
        done
        IFS=';'
    done
    done
}

# floor_action NAME: osu/gpu_floor (what copies cost on this machine:
# peer copies, pinned host <-> device copies, each finished by an event or
# a host flag) into NAME/gpu_floor.txt.
floor_action() {
    local res=${out:-$work}/$1 cuda=${CUDA_HOME:-/usr/local/cuda}
    [ "$dry" = 1 ] && { echo "== $1: gpu_floor"; return 0; }
    mkdir -p "$res" "$work"
    cc -O2 -I"$cuda/include" osu/gpu_floor.c -L"$cuda/lib64/stubs" -lcuda -o "$work/gpu_floor" >"$res/floor-build.log" 2>&1 ||
        { echo "$1: building gpu_floor failed"; cat "$res/floor-build.log"; return 1; }
    echo "== $1: gpu_floor"
    timeout 120 "$work/gpu_floor" 2>&1 | tee "$res/gpu_floor.txt"
    return 0
}

# host_test_action: host MPI test programs under ampirun's matrix and the
# image's Open MPI mpirun (the foreign-launcher cases of test/mpi/run.sh).
host_test_action() {
    need_prefix || return 1
    local log=${out:-$work}/host-test.log
    [ "$dry" = 1 ] && { echo "== host-test: test/mpi/run.sh ${HOST_TEST_PROGS:-...}"; return 0; }
    mkdir -p "$(dirname "$log")"
    # shellcheck disable=SC2086 # a list of programs
    AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build OMPI_MPIRUN=$(command -v mpirun) bash test/mpi/run.sh \
        ${HOST_TEST_PROGS:-ring pt2pt_basic pt2pt_modes order probe coll_basic coll_sizes} 2>&1 | tee "$log"
    return "${PIPESTATUS[0]}"
}

# scale_osu_action NAME BENCHMARKS: osu/run-compare.sh in D-D on every GPU
# count from 2 to all of them (powers of two) for osu_multi_lat/osu_mbw_mr
# (scale-p2p), or on all of them for the collectives (scale-coll).
scale_osu_action() {
    local name=$1 benchmarks=$2 ngpu np status=0
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "$cpu" = 1 ] && ngpu=4
    if [ "$name" = scale-coll ]; then
        [ "$ngpu" -ge 2 ] || { echo "$name: needs 2 GPUs, found $ngpu"; return 1; }
        osu_action "$name-np$ngpu" "OSU_BENCHMARKS=$benchmarks" OSU_PLACEMENTS=D-D OSU_COLL_NP="$ngpu" \
            OSU_NCCL_MAX=134217728 OSU_PERFTEST=0 OSU_RUN_TIMEOUT=120 || status=1
        return $status
    fi
    for np in 2 4 8; do
        [ "$np" -le "$ngpu" ] || break
        osu_action "$name-np$np" "OSU_BENCHMARKS=$benchmarks" OSU_PLACEMENTS=D-D OSU_MULTI_NP="$np" \
            OSU_PERFTEST=0 OSU_RUN_TIMEOUT=120 || status=1
    done
    return $status
}

# osu74_exit_action: the unmodified OSU micro-benchmarks 7.4, whose sources
# the caller carries (OSU74_DIR: a copy of the release, never committed),
# configured --enable-cuda=basic and built with our ampicc; every
# point-to-point and collective program that its Makefile.am files name
# (pt2pt standard/persistent/congestion; collective blocking, non-blocking,
# persistent, neighborhood) runs once with device buffers (-d cuda, and D D
# for pt2pt) and its exit status is listed (osu74-exit/status.txt): all must
# exit 0, also since these programs reset the device right after
# MPI_Finalize.  A program named there but not built is listed as such; a
# run the budget leaves no time for, too.  Sizes: up to 1 MiB (the
# non-blocking and persistent collectives up to 64 KiB: they time a compute
# phase per size).  The collectives validate their results (-c: a Fail line,
# or no Pass line, fails the run).  -np 2, except the fan-in/fan-out and
# neighborhood programs (-np 4).
osu74_exit_action() {
    need_prefix || return 1
    local dir=$work/osu74 src=${OSU74_DIR:-$PWD/.osu74} status=0
    if [ -z "$src" ] || [ ! -x "$src/configure" ]; then
        echo "osu74-exit: set OSU74_DIR to an OSU 7.4 source tree" >&2
        return 1
    fi
    [ "$dry" = 1 ] && { echo "== osu74-exit: build $src with $prefix/bin/ampicc, run with -d cuda"; return 0; }
    rm -rf "$dir" && mkdir -p "$dir" && cp -a "$src/." "$dir/" || return 1
    local res=${out:-$work}/osu74-exit
    mkdir -p "$res"
    if ! (cd "$dir" && ./configure CC="$prefix/bin/ampicc" CXX="$prefix/bin/ampicxx" --enable-cuda=basic \
        --with-cuda="${CUDA_HOME:-/usr/local/cuda}" >"$res/configure.log" 2>&1 &&
        make -j"$(nproc)" >"$res/make.log" 2>&1); then
        echo "osu74-exit: build failed (logs in $res)"
        return 1
    fi
    local m=$dir/c/mpi p sub args rc np limit check verdict nrun=0 nok=0
    : >"$res/status.txt"
    # every program of the pt2pt and collective Makefile.am files (joined
    # continuation lines, every *_PROGRAMS assignment, conditional ones too)
    local progs=()
    # OSU74_EXIT_DIRS: some of these directories only (a call of its own for each)
    for sub in ${OSU74_EXIT_DIRS:-pt2pt/standard pt2pt/persistent pt2pt/congestion collective/blocking \
        collective/non_blocking collective/persistent collective/neighborhood}; do
        for p in $(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$m/$sub/Makefile.am" |
            sed -n 's/^[[:space:]]*[a-z0-9_]*_PROGRAMS *+\{0,1\}= *//p'); do
            progs+=("$sub/$p")
        done
    done
    for p in "${progs[@]}"; do
        if [ ! -x "$m/$p" ]; then
            echo "$(basename "$p"): not built" | tee -a "$res/status.txt"
            status=1
            continue
        fi
        limit=$(($(left) - 15))
        if [ "$limit" -lt 20 ]; then
            echo "$(basename "$p"): not run, budget spent" | tee -a "$res/status.txt"
            status=1
            continue
        fi
        [ "$limit" -gt 90 ] && limit=90
        args="-i 50 -x 5 -d cuda" # -d cuda [D D] last: OSU 7.4's parser wants it there
        np=2 check=
        case $p in
        pt2pt/congestion/*) np=4 args="-m 1:1048576 $args D D" ;;
        pt2pt/*) args="-m 1:1048576 $args D D" ;;
        *barrier*) ;;
        # OSU 7.4's osu_allreduce_persistent validates recvbuf while its
        # MPI_Allreduce_init names recvbuf_warmup: -c fails under any MPI
        *osu_allreduce_persistent) args="-m 1:65536 $args" ;;
        # the neighborhood programs run nothing (and exit 0) below 4 processes
        collective/neighborhood/*) np=4 check=-c args="-m 1:65536 -c $args" ;;
        collective/blocking/*) check=-c args="-m 1:1048576 -c $args" ;;
        *) check=-c args="-m 1:65536 -c $args" ;;
        esac
        # shellcheck disable=SC2086
        timeout $((limit + 10)) "$prefix/bin/ampirun" --timeout "$limit" -np $np "$m/$p" $args \
            >"$res/$(basename "$p").log" 2>&1
        rc=$?
        local log=$res/$(basename "$p").log
        # OSU 7.4's fan-in/fan-out programs refuse one node (exit 1): listed, not counted
        if grep -q 'Please run this benchmark on more than 1 node' "$log"; then
            echo "$(basename "$p") -np $np: refused by OSU on one node (exit $rc), not counted" | tee -a "$res/status.txt"
            continue
        fi
        # Programs without a device option in OSU 7.4 (osu_latency_mt, _mp, the
        # neighborhood ones) answer -d with their usage, whose printing
        # overflows a heap buffer of OSU's (osu_util_mpi.c: malloc(strlen(name))
        # for "--" name), caught where the compiler fortifies (exit 134):
        # they run again with host buffers, and that run counts.
        if grep -q 'Invalid option \[-d\]' "$log"; then
            args=${args/-d cuda/}
            args=${args% D D}
            mv "$log" "${log%.log}.no-device-option.log"
            # shellcheck disable=SC2086
            timeout $((limit + 10)) "$prefix/bin/ampirun" --timeout "$limit" -np $np "$m/$p" $args >"$log" 2>&1
            rc=$?
            verdict=", no -d in OSU 7.4: host buffers"
        else
            verdict=
        fi
        # -c: every size prints Pass; a run that validated nothing fails too
        if [ -n "$check" ] && [ $rc = 0 ]; then
            if grep -q 'Fail' "$log"; then
                rc=fail verdict="$verdict, validation failed"
            elif ! grep -q 'Pass' "$log"; then
                rc=none verdict="$verdict, nothing validated"
            else
                verdict="$verdict, validated (-c)"
            fi
        fi
        nrun=$((nrun + 1))
        [ "$rc" = 0 ] && nok=$((nok + 1))
        echo "$(basename "$p") -np $np: exit $rc$verdict" | tee -a "$res/status.txt"
        [ "$rc" = 0 ] || status=1
    done
    # two ranks in one process: both reset the device after MPI_Finalize
    if [ -n "${OSU74_EXIT_DIRS:-}" ]; then
        :
    elif [ "$(left)" -gt 40 ]; then
        timeout 100 "$prefix/bin/ampirun" --timeout 90 -np 1 +vp 2 "$m/pt2pt/standard/osu_latency" -m 1:1048576 \
            -i 50 -x 5 -d cuda D D >"$res/osu_latency.1x2.log" 2>&1
        rc=$?
        nrun=$((nrun + 1))
        [ $rc = 0 ] && nok=$((nok + 1))
        echo "osu_latency -np 1 +vp 2: exit $rc" | tee -a "$res/status.txt"
        [ $rc = 0 ] || status=1
    else
        echo "osu_latency -np 1 +vp 2: not run, budget spent" | tee -a "$res/status.txt"
        status=1
    fi
    echo "osu74-exit: ${#progs[@]} programs named, $nrun runs, $nok exited 0" | tee -a "$res/status.txt"
    return $status
}

# memkind_stress_action: gpu_memkind MEMKIND_REPS times (default 100) in each
# of four layouts, each run within its share of what is left of the budget
# (MEMKIND_SECONDS: the program starts no repetition past it, and says after
# each how many it ran and how many failures there were).
memkind_stress_action() {
    need_prefix || return 1
    local res=${out:-$work}/memkind-stress reps=${MEMKIND_REPS:-100} status=0
    [ "$dry" = 1 ] && { echo "== memkind-stress: gpu_memkind x$reps in 2x2 4x4 1x4 2x8"; return 0; }
    mkdir -p "$res"
    AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build bash test/gpu/run.sh --build-only gpu_memkind >"$res/build.log" 2>&1 ||
        { echo "memkind-stress: building gpu_memkind failed"; cat "$res/build.log"; return 1; }
    local bin=$PWD/.build/gpu/gpu_memkind layouts=(2x2 4x4 1x4 2x8) i p v share rc ran fails log
    : >"$res/status.txt"
    [ -n "${MEMKIND_JOBS:-}" ] && { memkind_jobs "$bin" "$res" "$reps"; return; }
    for i in "${!layouts[@]}"; do
        p=${layouts[$i]%x*} v=${layouts[$i]#*x}
        log=$res/np$p.vp$v.log
        # an equal share of what is left for this and the later layouts; the
        # program stops starting repetitions 30 s before its share ends
        # (one repetition up to 1 MiB takes seconds), the timeout 20 s after it
        share=$(( ($(left) - 20) / (${#layouts[@]} - i) ))
        if [ "$share" -lt 40 ]; then
            echo "np=$p vp=$v: not run, ${share}s of the budget left for it" | tee -a "$res/status.txt"
            status=1
            continue
        fi
        echo "== memkind-stress: -np $p +vp $v, up to $reps repetitions in ${share}s"
        MEMKIND_REPEAT=$reps MEMKIND_SECONDS=$((share - 30)) GPU_TEST_MAX_BYTES=1048576 \
            timeout $((share + 20)) "$prefix/bin/ampirun" --timeout "$share" -np "$p" +vp "$v" "$bin" >"$log" 2>&1
        rc=$?
        ran=$(grep -c '^gpu_memkind: repetition .* done' "$log")
        fails=$(grep -c '^FAIL' "$log")
        echo "np=$p vp=$v: $ran of $reps repetitions, $fails FAIL line(s), exit $rc$(grep -q '^gpu_memkind: OK$' "$log" ||
            echo ', no OK line')" | tee -a "$res/status.txt"
        [ "$rc" = 0 ] && [ "$fails" = 0 ] && grep -q '^gpu_memkind: OK$' "$log" || status=1
        [ "$ran" -ge "$reps" ] || status=1 # fewer than asked is not a pass of the stress mode
        grep -m 5 '^FAIL' "$log"
    done
    return $status
}

# memkind_jobs BIN RES REPS: the layouts of MEMKIND_JOBS ("2x2:1,4x4:3,...":
# processes x ranks, then how many jobs of it) all at once, each job on a
# slice of the node's CPUs of its own (ampirun binds within what it is
# allowed), so that a host-bound test uses every core; a layout's REPS
# repetitions are shared among its jobs and summed in status.txt.  Each job
# sees the GPUs in an order rotated by the processes started before it
# (CUDA_VISIBLE_DEVICES): a process takes its local rank's device, so
# without the rotation every job's process 0 shares the first GPU, which on
# a 4-GPU host made repetitions 3x slower than the same jobs spread out.
memkind_jobs() {
    local bin=$1 res=$2 reps=$3 spec total=0 ncpu first=0 width each secs n margin=${MEMKIND_MARGIN:-75}
    local ngpu started=0 devs g
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    local -a specs pids logs
    IFS=, read -ra specs <<<"$MEMKIND_JOBS"
    for spec in "${specs[@]}"; do
        p=${spec%%x*} n=${spec#*:}
        total=$((total + p * n))
    done
    ncpu=$(nproc)
    width=$((ncpu / total))
    [ "$width" -ge 1 ] || width=1
    secs=$(($(left) - 40))
    echo "== memkind-stress: jobs $MEMKIND_JOBS at once ($total processes, $width CPU(s) each, ${secs}s)"
    for spec in "${specs[@]}"; do
        local layout=${spec%%:*} n=${spec#*:} j
        p=${layout%x*} v=${layout#*x}
        each=$(((reps + n - 1) / n))
        for ((j = 1; j <= n; j++)); do
            local cpus=$first-$(((first + p * width - 1) % ncpu))
            [ $((first + p * width)) -le "$ncpu" ] || cpus=0-$((ncpu - 1))
            first=$(((first + p * width) % ncpu))
            local log=$res/np$p.vp$v.job$j.log
            devs=
            for ((g = 0; g < ngpu; g++)); do devs=$devs${devs:+,}$(((started + g) % ngpu)); done
            started=$((started + p))
            echo "np=$p vp=$v job $j: CPUs $cpus, GPUs ${devs:-as found}, up to $each repetitions" >"$log"
            env ${devs:+CUDA_VISIBLE_DEVICES=$devs} MEMKIND_REPEAT=$each MEMKIND_SECONDS=$((secs - margin)) GPU_TEST_MAX_BYTES=1048576 \
                timeout $((secs + 20)) taskset -c "$cpus" "$prefix/bin/ampirun" --timeout "$secs" \
                -np "$p" +vp "$v" "$bin" >>"$log" 2>&1 &
            pids+=($!) logs+=("$log")
        done
    done
    local status=0 k
    for k in "${!pids[@]}"; do
        wait "${pids[$k]}"
        echo "${logs[$k]##*/}: exit $?" >>"$res/exits.txt"
    done
    for spec in "${specs[@]}"; do
        local layout=${spec%%:*} sum=0 fails=0 bad=0 f
        p=${layout%x*} v=${layout#*x}
        for f in "$res"/np$p.vp$v.job*.log; do
            sum=$((sum + $(grep -c '^gpu_memkind: repetition .* done' "$f")))
            fails=$((fails + $(grep -c '^FAIL' "$f")))
            grep -q '^gpu_memkind: OK$' "$f" && grep -q "^${f##*/}: exit 0$" "$res/exits.txt" || bad=$((bad + 1))
        done
        echo "np=$p vp=$v: $sum of $reps repetitions in ${spec#*:} job(s) at once, $fails FAIL line(s), $bad job(s) without exit 0 and OK" |
            tee -a "$res/status.txt"
        [ "$fails" = 0 ] && [ "$bad" = 0 ] && [ "$sum" -ge "$reps" ] || status=1
        grep -h -m 5 '^FAIL' "$res"/np$p.vp$v.job*.log
    done
    return $status
}

# memkind_probe_action: the +vp wrong data with a witness -- MEMKIND_PROBE_JOBS
# (default 15) jobs of gpu_memkind -np 2 +vp 8 at once, each on CPUs of its
# own, repeating over MEMKIND_KINDS (default pool,userpool,managed,peer) up
# to 1 MiB, under each of MEMKIND_PROBE_PHASES ("name:VAR=value ...", comma
# separated; default: as built, then UCX_MEMTYPE_CACHE=n) for an equal share
# of the budget, with test/gpu/probe's LD_PRELOAD witness that describes
# every failing cuMemcpyAsync (contexts, devices and pools of both pointers).
memkind_probe_action() {
    need_prefix || return 1
    local res=${out:-$work}/memkind-probe status=0
    local phases=${MEMKIND_PROBE_PHASES:-asis:,cache-off:UCX_MEMTYPE_CACHE=n} jobs=${MEMKIND_PROBE_JOBS:-15}
    [ "$dry" = 1 ] && { echo "== memkind-probe: $jobs jobs -np 2 +vp 8 under $phases"; return 0; }
    mkdir -p "$res"
    AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build bash test/gpu/run.sh --build-only gpu_memkind >"$res/build.log" 2>&1 ||
        { echo "memkind-probe: building gpu_memkind failed"; cat "$res/build.log"; return 1; }
    local cuda shim=$work/cucopy_probe.so
    cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    cc -shared -fPIC -I"$cuda/include" test/gpu/probe/cucopy_probe.c -o "$shim" -L"$cuda/lib64/stubs" \
        -L"$cuda/targets/x86_64-linux/lib/stubs" -lcuda -ldl >>"$res/build.log" 2>&1 ||
        { echo "memkind-probe: building the witness failed"; cat "$res/build.log"; return 1; }
    local bin=$PWD/.build/gpu/gpu_memkind ncpu width n=0 i=0 ph name envs secs j k
    local -a list
    IFS=, read -ra list <<<"$phases"
    ncpu=$(nproc)
    width=$((ncpu / (2 * jobs)))
    [ "$width" -ge 1 ] || width=1
    : >"$res/status.txt"
    for ph in "${list[@]}"; do
        name=${ph%%:*} envs=${ph#*:}
        secs=$(( ($(left) - 20) / (${#list[@]} - i) ))
        i=$((i + 1))
        [ "$secs" -ge 90 ] || { echo "$name: not run, ${secs}s left" | tee -a "$res/status.txt"; status=1; continue; }
        echo "== memkind-probe: $name ($envs): $jobs jobs for ${secs}s"
        local -a pids=()
        for ((j = 0; j < jobs; j++)); do
            local first=$(((j * 2 * width) % ncpu)) log=$res/$name.job$((j + 1)).log
            env $envs LD_PRELOAD="$shim" MEMKIND_REPEAT=1000 MEMKIND_SECONDS=$((secs - 75)) \
                MEMKIND_KINDS=${MEMKIND_KINDS:-pool,userpool,managed,peer} GPU_TEST_MAX_BYTES=1048576 \
                timeout $((secs + 10)) taskset -c "$first-$((first + 2 * width - 1))" "$prefix/bin/ampirun" \
                --timeout "$secs" -np 2 +vp 8 "$bin" >"$log" 2>&1 &
            pids+=($!)
        done
        for k in "${pids[@]}"; do wait "$k"; done
        local reps=0 bad=0 fails=0 probes=0 uerr=0 f
        for f in "$res/$name".job*.log; do
            reps=$((reps + $(grep -c '^gpu_memkind: repetition .* done' "$f")))
            k=$(grep -c '^FAIL' "$f")
            fails=$((fails + k))
            [ "$k" = 0 ] && grep -q '^gpu_memkind: OK$' "$f" || bad=$((bad + 1))
            probes=$((probes + $(grep -c '^probe.*cuMemcpyAsync' "$f")))
            uerr=$((uerr + $(grep -c 'UCX  ERROR' "$f")))
        done
        [ "$reps" -gt 0 ] || status=1
        echo "$name ($envs): $jobs jobs, $reps repetitions, $bad job(s) failing, $fails FAIL line(s), $uerr UCX error line(s), $probes failed copies described" |
            tee -a "$res/status.txt"
        grep -h -m 6 '^probe' "$res/$name".job*.log | head -12 | tee -a "$res/status.txt"
        n=$((n + 1))
    done
    return $status
}

# memkind_bisect_action: the +vp wrong-data hunt -- gpu_memkind at -np 2
# +vp 8 on pool, user-pool, managed and device buffers of 64 KiB and 1 MiB,
# repeated within an equal share of the budget under each of
# MEMKIND_VARIANTS (';'-separated environment settings; "default" = none):
# status.txt gives, per variant, the repetitions run and the FAIL lines,
# so that one call says which route or cache the failures follow.
memkind_bisect_action() {
    need_prefix || return 1
    local res=${out:-$work}/memkind-bisect status=0
    local variants=${MEMKIND_VARIANTS:-default;AMPI_GPU_IPC=0;AMPI_GPU_IPC_CACHE=off;AMPI_GPU_POOL_AS_MANAGED=on;UCX_TLS=^tcp;UCX_MEMTYPE_CACHE=n}
    [ "$dry" = 1 ] && { echo "== memkind-bisect: $variants"; return 0; }
    mkdir -p "$res"
    AMPI_PREFIX=$prefix AMPI_BUILD=$PWD/.build bash test/gpu/run.sh --build-only gpu_memkind >"$res/build.log" 2>&1 ||
        { echo "memkind-bisect: building gpu_memkind failed"; cat "$res/build.log"; return 1; }
    local bin=$PWD/.build/gpu/gpu_memkind v n=0 i=0 share rc ran fails log
    local IFS=';'
    for v in $variants; do n=$((n + 1)); done
    : >"$res/status.txt"
    for v in $variants; do
        IFS=' '
        share=$(( ($(left) - 20) / (n - i) ))
        i=$((i + 1))
        log=$res/variant$i.log
        if [ "$share" -lt 40 ]; then
            echo "[$v]: not run, ${share}s of the budget left for it" | tee -a "$res/status.txt"
            IFS=';'
            continue
        fi
        local envs=()
        [ "$v" != default ] && read -r -a envs <<<"$v"
        echo "== memkind-bisect: [$v] -np 2 +vp 8 for ${share}s"
        env "${envs[@]}" MEMKIND_REPEAT=1000 MEMKIND_SECONDS=$((share - 30)) MEMKIND_KINDS=pool,userpool,managed,device \
            MEMKIND_SIZES=65536,1048576 timeout $((share + 20)) "$prefix/bin/ampirun" --timeout "$share" -np 2 +vp 8 \
            "$bin" >"$log" 2>&1
        rc=$?
        ran=$(grep -c '^gpu_memkind: repetition .* done' "$log")
        fails=$(grep -c '^FAIL' "$log")
        echo "[$v]: $ran repetitions, $fails FAIL line(s), exit $rc" | tee -a "$res/status.txt"
        grep -m 3 '^FAIL' "$log" | tee -a "$res/status.txt"
        [ "$fails" = 0 ] && [ "$rc" = 0 ] || status=1
        IFS=';'
    done
    return $status
}

# memkind_base_action: the +vp wrong data at earlier commits -- each of
# MEMKIND_BASES (commits carried as .whl/base-REV.tar.gz, or in git) built in
# the call, this tree's gpu_memkind built with its ampicc and run at -np 2
# +vp 8 on pool, user-pool and managed buffers of 64 KiB and 1 MiB for an
# equal share of the budget, at most MEMKIND_BASE_S seconds (default 60): status.txt says which commits deliver wrong data
# and the FAIL lines say whose data arrived instead.
memkind_base_action() {
    local res=${out:-$work}/memkind-base status=0 bases=${MEMKIND_BASES:-} rev i=0 n=0 share rc ran fails log src
    [ -n "$bases" ] || { echo "memkind-base: set MEMKIND_BASES (commits)" >&2; return 1; }
    [ "$dry" = 1 ] && { echo "== memkind-base: gpu_memkind -np 2 +vp 8 at $bases"; return 0; }
    mkdir -p "$res"
    : >"$res/status.txt"
    for rev in $bases; do n=$((n + 1)); done
    for rev in $bases; do
        i=$((i + 1))
        src=$work/memkind-base-$rev log=$res/$rev.log
        base_sources "$rev" "$src" >>"$res/build-$rev.log" 2>&1 || { echo "$rev: no sources" | tee -a "$res/status.txt"; status=1; continue; }
        ln -sfn "$PWD/.deps" "$src/.deps"
        [ -d .whl ] && ln -sfn "$PWD/.whl" "$src/.whl"
        echo "== memkind-base: building $rev"
        if ! (cd "$src" && ./setup.sh --no-demo) >>"$res/build-$rev.log" 2>&1 ||
            ! AMPI_PREFIX=$src/.prefix AMPI_BUILD=$src/.build bash test/gpu/run.sh --build-only gpu_memkind \
                >>"$res/build-$rev.log" 2>&1; then
            echo "$rev: build failed" | tee -a "$res/status.txt"
            tail -n 15 "$res/build-$rev.log"
            status=1
            continue
        fi
        share=$(( ($(left) - 20) / (n - i + 1) ))
        [ "$share" -gt "${MEMKIND_BASE_S:-60}" ] && share=${MEMKIND_BASE_S:-60}
        if [ "$share" -lt 30 ]; then
            echo "$rev: not run, ${share}s of the budget left for it" | tee -a "$res/status.txt"
            status=1
            continue
        fi
        echo "== memkind-base: $rev, -np 2 +vp 8 for ${share}s"
        MEMKIND_REPEAT=1000 MEMKIND_SECONDS=$((share - 20)) MEMKIND_KINDS=pool,userpool,managed \
            MEMKIND_SIZES=65536,1048576 timeout $((share + 15)) "$src/.prefix/bin/ampirun" --timeout "$share" \
            -np 2 +vp 8 "$src/.build/gpu/gpu_memkind" >"$log" 2>&1
        rc=$?
        ran=$(grep -c '^gpu_memkind: repetition .* done' "$log")
        fails=$(grep -c '^FAIL' "$log")
        echo "$rev: $ran repetitions, $fails FAIL line(s), exit $rc" | tee -a "$res/status.txt"
        grep -m 4 '^FAIL' "$log" | tee -a "$res/status.txt"
    done
    return $status
}

# base_sources REV DIR: the sources of commit REV into DIR (emptied first):
# from .whl/base-REV.tar.gz (scripts/device-prep.sh --base REV), else from
# git where this tree has its history.
base_sources() {
    local rev=$1 dir=$2 tarball="" f
    for f in ".whl/base-$rev.tar.gz" .whl/base-"$rev"*.tar.gz .whl/base-*.tar.gz; do
        [ -f "$f" ] || continue
        local name=${f#.whl/base-}
        name=${name%.tar.gz}
        # an abbreviation of the same commit, either way round
        case $rev in "$name"*) ;; *) case $name in "$rev"*) ;; *) continue ;; esac ;; esac
        tarball=$f
        break
    done
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    if [ -n "$tarball" ]; then
        echo "compare: sources of $rev from $tarball"
        tar xzf "$tarball" -C "$dir" --strip-components=1
    elif git rev-parse -q --verify "$rev^{commit}" >/dev/null 2>&1; then
        echo "compare: sources of $rev from git"
        git archive "$rev" | tar x -C "$dir"
    else
        echo "compare: no .whl/base-$rev.tar.gz and no git history here: run scripts/device-prep.sh --base $rev" \
            "where git is, and carry .whl" >&2
        return 1
    fi
}

# compare_action: the before/after run of one call (see the plan above).
compare_action() {
    local rev=$compare_rev dir=$work/compare res=${out:-$work}/compare status
    [ -n "$rev" ] || { echo "compare: name the commit to compare with (scripts/device.sh compare REV)" >&2; return 1; }
    need_prefix || return 1
    local src=$work/base-$rev
    if [ "$dry" = 1 ]; then
        echo "== compare: build $rev into $src/.prefix; BENCH_BASE_PREFIX=$src/.prefix scripts/bench.sh" \
            "--areas \"${COMPARE_AREAS:-host-p2p device-p2p}\""
        return 0
    fi
    mkdir -p "$res"
    local base_prefix=$src/.prefix base_name=$rev base_env=""
    if [ "$rev" = self ]; then
        # one build with and without COMPARE_BASE_ENV: which setting moves a figure
        [ -n "${COMPARE_BASE_ENV:-}" ] || { echo "compare self: set COMPARE_BASE_ENV" >&2; return 1; }
        base_prefix=$prefix base_name=self-env base_env=$COMPARE_BASE_ENV
    else
        base_sources "$rev" "$src" || return 1
        # the same UCX as ours: the old tree's setup.sh finds it and skips that step
        ln -sfn "$PWD/.deps" "$src/.deps"
        [ -d .whl ] && ln -sfn "$PWD/.whl" "$src/.whl"
        echo "== compare: building $rev (log: compare/base-build.log)"
        if ! (cd "$src" && ./setup.sh --no-demo) >"$res/base-build.log" 2>&1; then
            echo "compare: building $rev failed; last lines:"
            tail -n 20 "$res/base-build.log"
            return 1
        fi
    fi
    echo "== compare: BENCH_BASE_PREFIX=$base_prefix BENCH_BASE_ENV=\"$base_env\" BENCH_BUDGET_S=$(($(left) - 30))" \
        "scripts/bench.sh --out $dir --areas \"${COMPARE_AREAS:-host-p2p device-p2p}\" ${bench_args[*]}"
    BENCH_BASE_PREFIX=$base_prefix BENCH_BASE_NAME=$base_name BENCH_BASE_ENV=$base_env \
        BENCH_P2P_PROGS=${COMPARE_P2P_PROGS:-${BENCH_P2P_PROGS:-osu_latency osu_bw osu_bibw}} \
        BENCH_BUDGET_S=$(($(left) - 30)) BENCH_ROUNDS=${BENCH_ROUNDS:-9} AMPI_PREFIX=$prefix \
        bash scripts/bench.sh --out "$dir" --areas "${COMPARE_AREAS:-host-p2p device-p2p}" "${bench_args[@]}"
    status=$?
    copy_results "$dir" compare
    bash scripts/bench-tables.sh --brief "$dir" >"$dir/brief.md" 2>/dev/null
    [ -n "$out" ] && cp -f "$dir/tables.md" "$out/compare-tables.md" 2>/dev/null
    # the console gets the short form: medians of both and the ratio per size
    grep -v '^- \|^    ' "$dir/brief.md"
    return "$status"
}

# gpu_bed_action: test/multinode/gpu-bed.sh within what is left of the
# budget (needs root and 2 GPUs; the GPU parts skip with the reason on fewer).
gpu_bed_action() {
    need_prefix || return 1
    local res=${out:-$work}/gpu-bed
    echo "== gpu-bed: test/multinode/gpu-bed.sh --budget $(($(left) - 15)) --out $res"
    [ "$dry" = 1 ] && return 0
    AMPI_PREFIX=$prefix GPU_BED_WORK=$work/gpu-bed bash test/multinode/gpu-bed.sh --budget $(($(left) - 15)) \
        --parts "${GPU_BED_PARTS:-correct osu jacobi}" --out "$res" 2>&1 | tee "$work/gpu-bed.log"
    local status=${PIPESTATUS[0]}
    [ -n "$out" ] && cp -f "$res/summary.md" "$out/gpu-bed-summary.md" 2>/dev/null
    return "$status"
}

p2p="osu_latency osu_bw osu_bibw osu_latency_persistent osu_multi_lat osu_mbw_mr"
coll="osu_allreduce osu_bcast osu_reduce osu_allgather osu_alltoall osu_barrier"
run_action() {
    case $1 in
    build) [ "$dry" = 1 ] || do_build ;;
    test) [ "$dry" = 1 ] || do_test ;;
    bench) osu_action bench ;;
    jacobi) jacobi_action jacobi ;;
    all)
        local status=0
        [ "$dry" = 1 ] || do_build || status=1
        # test.sh sets up again (quickly), so run it even after a failed build
        # to get its "0 passed, 1 failed" summary.
        [ "$dry" = 1 ] || do_test || status=1
        [ -x "$prefix/bin/ampicc" ] && { osu_action bench || status=1; }
        return $status
        ;;
    current) current_action ;;
    gpu-test) gpu_test_action ;;
    privat-gpu) privat_gpu_action ;;
    osu74-exit) osu74_exit_action ;;
    osu74-rma) osu74_rma_action ;;
    memkind-stress) memkind_stress_action ;;
    memkind-probe) memkind_probe_action ;;
    memkind-bisect) memkind_bisect_action ;;
    memkind-base) memkind_base_action ;;
    sweep-dd) sweep_action sweep-dd D-D 33554432 \
        "${SWEEP_VARIANTS:-default;AMPI_GPU_IPC_PUSH=0;AMPI_GPU_IPC_PUSH_MIN=65536;AMPI_GPU_IPC=0}" ;;
    sweep-hh) sweep_action sweep-hh H-H "${SWEEP_HH_MAX:-4194304}" \
        "${SWEEP_HH_VARIANTS:-default;AMPI_SHM=0;--bind-to=none;ompi}" "${SWEEP_HH_PROGS:-osu_latency osu_bw}" ;;
    floor) floor_action floor ;;
    sweep-allreduce)
        # the floor (gpu_floor: peer and pinned host copies) in the same call
        floor_action sweep-allreduce &&
            sweep_action sweep-allreduce D-D 1048576 "${SWEEP_AR_VARIANTS:-default;AMPI_GPU_COLL_HOST_MAX=0;AMPI_GPU_COLL_HOST_MAX=0 AMPI_NCCL=0;+vp=8;+vp=8 AMPI_GPU_COLL_HOST_MAX=0}" \
                "osu_allreduce osu_reduce osu_bcast" ;;
    host-test) host_test_action ;;
    compare) compare_action ;;
    gpu-bed) gpu_bed_action ;;
    scale-p2p) scale_osu_action scale-p2p "osu_multi_lat osu_mbw_mr" ;;
    scale-coll) scale_osu_action scale-coll "osu_allreduce osu_bcast osu_allgather osu_alltoall" ;;
    scale-jacobi-small)
        JACOBI_UNITS=${JACOBI_UNITS:-1 2 4 8} JACOBI_CHECK_UNITS=${JACOBI_CHECK_UNITS:-largest} \
            jacobi_action "$1" --blocks "$([ "$cpu" = 1 ] && echo 16 || echo 192)" ;;
    scale-jacobi-large)
        JACOBI_UNITS=${JACOBI_UNITS:-1 2 4 8} jacobi_action "$1" \
            --blocks "$([ "$cpu" = 1 ] && echo 24 || echo 1536)" --strong "$([ "$cpu" = 1 ] && echo 24 || echo 1536)" --no-check ;;
    bench-p2p-dd)
        osu_action "$1" "OSU_BENCHMARKS=osu_latency osu_bw osu_bibw" OSU_PLACEMENTS=D-D \
            OSU_BW_MAX=33554432 OSU_PERFTEST_STEP=2 OSU_RUN_TIMEOUT=120 ;;
    bench-p2p-mixed)
        osu_action "$1" "OSU_BENCHMARKS=osu_latency osu_bw osu_bibw" "OSU_PLACEMENTS=D-H H-D" \
            OSU_BW_MAX=33554432 OSU_PERFTEST_STEP=4 OSU_RUN_TIMEOUT=120 ;;
    bench-p2p-host)
        osu_action "$1" "OSU_BENCHMARKS=$p2p" OSU_PLACEMENTS=H-H OSU_PERFTEST_STEP=2 OSU_RUN_TIMEOUT=120 ;;
    bench-p2p-more)
        osu_action "$1" "OSU_BENCHMARKS=osu_latency_persistent osu_multi_lat osu_mbw_mr" \
            "OSU_PLACEMENTS=D-D D-H H-D" OSU_RUN_TIMEOUT=120 ;;
    bench-coll)
        osu_action "$1" "OSU_BENCHMARKS=$coll" "OSU_PLACEMENTS=H-H D-D" OSU_COLL_NP=2 \
            OSU_NCCL_MAX=134217728 OSU_RUN_TIMEOUT=120 ;;
    bench-coll-host)
        # the host collectives only, COLL_ROUNDS times (default 3): small
        # figures move by 10-30% between runs, so one run cannot show 1.2x
        local round status=0
        for ((round = 1; round <= ${COLL_ROUNDS:-3}; round++)); do
            osu_action "$1-r$round" "OSU_BENCHMARKS=$coll" OSU_PLACEMENTS=H-H OSU_COLL_NP=2 \
                OSU_PERFTEST=0 OSU_RUN_TIMEOUT=120 || status=1
        done
        return $status ;;
    bench-halo)
        osu_action "$1" OSU_BENCHMARKS=osu_halo_persistent "OSU_PLACEMENTS=H-H D-D" OSU_HALO_NP=2 \
            OSU_HALO_VP=8 OSU_RUN_TIMEOUT=120 ;;
    # --cpu: tiny blocks, every run checked (-cpu -v): a smoke test without GPUs.
    jacobi-small) jacobi_action "$1" --blocks "$([ "$cpu" = 1 ] && echo 16 || echo 192)" ;;
    jacobi-large) jacobi_action "$1" --blocks "$([ "$cpu" = 1 ] && echo 24 || echo 1536)" --no-check ;;
    esac
}

# ---- set-up: UCX first (unpacked from the wheel), so that ucx_info can
# report the transports; AMPI-UCX is built by the first action that needs it.
if [ "$no_setup" != 1 ] && [ "$dry" != 1 ]; then
    if ! ls .whl/libucx_cu13-*.whl >/dev/null 2>&1; then
        echo "device: no .whl/libucx_cu13-*.whl carried; setup.sh will try PyPI, which needs network" >&2
    fi
    echo "== nvidia-smi -L; nvidia-smi topo -m"
    nvidia-smi -L || echo "(nvidia-smi failed)"
    nvidia-smi topo -m || true
    ./setup.sh --deps-only || { save_logs; exit 1; }
    ucx_info=.deps/ucx/libucx/bin/ucx_info
    echo "== ucx_info -v"
    "$ucx_info" -v
    echo "== ucx_info -d | grep Transport"
    "$ucx_info" -d | grep Transport
fi

status=0
summary="| action | status | seconds | expected | budget left at start |"$'\n'"|---|---|---:|---:|---:|"
for action in "${actions[@]}"; do
    t0=$SECONDS
    at_start=$(left)
    if [ "$at_start" -lt 60 ] && [ "$dry" != 1 ]; then
        result="skipped: ${at_start}s of DEVICE_BUDGET_S=$budget left"
        status=1
    elif run_action "$action"; then
        result=ok
    else
        result=failed
        status=1
    fi
    echo "device: $action $result after $((SECONDS - t0))s (expected ~${expected[$action]}s)"
    summary+=$'\n'"| $action | $result | $((SECONDS - t0)) | ${expected[$action]} | $at_start |"
done
summary+=$'\n\n'"Total ${SECONDS}s of DEVICE_BUDGET_S=$budget (set-up included); per run: ACTION/timings.csv."
echo "$summary"
if [ -n "$out" ]; then
    echo "$summary" >"$out/summary.md"
    # For machines that hand back only a handful of files, everything else
    # travels in one archive (console.log is the caller's redirect).
    # (GNU tar exits 1 when a file changed while read -- the caller's
    # console.log grows in this folder -- and the archive is still whole.)
    # A second run into the same OUT archives beside the first
    # (results-2.tgz, ...) rather than over it.
    (cd "$out" || exit
        archive=results.tgz n=1
        while [ -e "$archive" ]; do n=$((n + 1)) archive=results-$n.tgz; done
        tar czf "$archive" --warning=no-file-changed --exclude='results*.tgz' --exclude=console.log \
            --exclude=summary.md --exclude=current-tables.md --exclude=osu74-rma-tables.md \
            --exclude=compare-tables.md --exclude=gpu-bed-summary.md .
        [ $? -le 1 ] && find . -mindepth 1 -maxdepth 1 ! -name 'results*.tgz' ! -name console.log \
            ! -name summary.md ! -name current-tables.md ! -name osu74-rma-tables.md ! -name compare-tables.md \
            ! -name gpu-bed-summary.md -exec rm -rf {} +)
fi
echo "device: ${actions[*]} finished with status $status"
exit $status
