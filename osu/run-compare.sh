#!/usr/bin/env bash
# Side-by-side runner: the osu-style suite (point-to-point and collectives)
# under AMPI-UCX and under Open MPI (over the same CUDA-aware UCX), plus raw
# UCX (ucx_perftest) and NCCL's own all-reduce (nccl_allreduce.c) for
# reference.
#
#   osu/run-compare.sh [--cpu] [--out DIR] [--quick]
#
# Builds the suite twice (DIR/build-ampi with $AMPI_PREFIX/bin/ampicc,
# DIR/build-ompi with Open MPI's mpicc), runs every benchmark with both for
# placement H H and, when nvidia-smi lists at least two GPUs, also D D, D H
# and H D (collectives: H H and D D, all buffers on one side; NCCL beside
# osu_allreduce D D; osu_halo_persistent, when named, likewise, under load:
# many ranks); osu_bw and
# osu_bibw go up to 32 MiB where a buffer is on the device (the issue's
# targets; OSU stops at 4 MiB); ucx_perftest runs in all four placements;
# then writes DIR/results.csv, DIR/tables.md and DIR/timings.csv (seconds
# per run), and plots when matplotlib is there. Every run is bounded by
# `timeout` (and OSU_BUDGET_S for the whole script); a run that fails (Open
# MPI 4.1 crashes on device all-reduce) is recorded and the runner goes on.
# See osu/README.md; scripts/device.sh splits the suite into actions that
# fit a 10-minute command on a GPU machine.
# Command lines are kept as strings (to log them verbatim) and split on
# purpose when run; no path or argument here contains blanks.
# shellcheck disable=SC2086
set -u -o pipefail

usage() {
    cat <<'EOF'
Usage: osu/run-compare.sh [--cpu] [--out DIR] [--quick]
  --cpu       host buffers only, even when GPUs are present
  --out DIR   where builds, logs, results.csv and tables.md go
              (default: <repo>/.build/osu-compare)
  --quick     short sweeps (up to 1 MiB, few iterations) for smoke runs
Environment:
  AMPI_PREFIX      install prefix of AMPI-UCX (default <repo>/.prefix)
  AMPI_UCX_DIR     CUDA-aware UCX with lib/ and bin/ (default <repo>/.deps/ucx/libucx)
  CUDA_HOME        CUDA toolkit (default /usr/local/cuda)
  OMPI_MPICC, OMPI_MPIRUN   Open MPI's wrappers (default mpicc, mpirun)
  OSU_BENCHMARKS   subset to run (default: all twelve, point-to-point and
                   collective; osu_halo_persistent runs only when named)
  OSU_PLACEMENTS   e.g. "H-H D-D" (default: H-H, plus D-D D-H H-D with GPUs)
  OSU_RUN_TIMEOUT  seconds per run (default 120 quick, 300 full)
  OSU_MULTI_NP     processes for osu_mbw_mr and osu_multi_lat (default 2)
  OSU_COLL_NP      processes for the collectives and nccl_allreduce (default 2)
  OSU_NCCL_MAX     largest size of nccl_allreduce and osu_allreduce D D
                   (default 134217728, 1048576 with --quick)
  OSU_BW_MAX       largest size of osu_bw / osu_bibw (and ucx_perftest
                   tag_bw) where a buffer is on the device: D-D, D-H, H-D
                   (default 33554432 = 32 MiB; not with --quick; H-H keeps
                   OSU's 4 MiB)
  OSU_PERFTEST=0   no ucx_perftest runs (e.g. when an earlier run has them)
  OSU_PERFTEST_STEP  ucx_perftest sizes grow by this factor (default 2:
                   every size; 4: every other, plus the largest)
  OSU_BUDGET_S     start no run after this many seconds of the script (the
                   rest is listed as skipped); each run's timeout shrinks to
                   what is left (default: none)
  OSU_HALO_NP, OSU_HALO_VP  processes and ranks of osu_halo_persistent
                   (default 2 and 8: AMPI-UCX runs -np 2 +vp 8, Open MPI 8
                   processes); OSU_HALO_ARGS its extra arguments (default
                   -c; with --quick -c -i 100 -x 10)
  NCCL_HOME        where include/nccl.h and lib/libnccl.so are, when not in
                   CUDA_HOME or the system paths
  OSU_PYTHON       python with matplotlib for the plots (default python3)
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
osu_dir=$repo/osu
out=$repo/.build/osu-compare
cpu_only=0
quick=0
while [ $# -gt 0 ]; do
    case $1 in
    --cpu) cpu_only=1 ;;
    --quick) quick=1 ;;
    --out)
        [ $# -ge 2 ] || { usage >&2; exit 2; }
        out=$2
        shift
        ;;
    --out=*) out=${1#--out=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

AMPI_PREFIX=${AMPI_PREFIX:-$repo/.prefix}
AMPI_UCX_DIR=${AMPI_UCX_DIR:-$repo/.deps/ucx/libucx}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OMPI_MPICC=${OMPI_MPICC:-mpicc}
OMPI_MPIRUN=${OMPI_MPIRUN:-mpirun}
MULTI_NP=${OSU_MULTI_NP:-2}
COLL_NP=${OSU_COLL_NP:-2}
OSU_PYTHON=${OSU_PYTHON:-python3}
if [ "$quick" = 1 ]; then RUN_TIMEOUT=${OSU_RUN_TIMEOUT:-120}; else RUN_TIMEOUT=${OSU_RUN_TIMEOUT:-300}; fi
if [ "$quick" = 1 ]; then NCCL_MAX=${OSU_NCCL_MAX:-1048576}; else NCCL_MAX=${OSU_NCCL_MAX:-134217728}; fi
BW_MAX=${OSU_BW_MAX:-33554432}
# Quick runs sample every other size: each ucx_perftest size starts two processes.
if [ "$quick" = 1 ]; then PERFTEST_STEP=${OSU_PERFTEST_STEP:-4}; else PERFTEST_STEP=${OSU_PERFTEST_STEP:-2}; fi
BUDGET_S=${OSU_BUDGET_S:-0}
HALO_NP=${OSU_HALO_NP:-2}
HALO_VP=${OSU_HALO_VP:-8}
if [ "$quick" = 1 ]; then HALO_ARGS=${OSU_HALO_ARGS--c -i 100 -x 10}; else HALO_ARGS=${OSU_HALO_ARGS--c}; fi
P2P_BENCHMARKS="osu_latency osu_bw osu_bibw osu_latency_persistent osu_multi_lat osu_mbw_mr"
# osu/osu_halo_persistent.c (halo exchange through persistent requests, many
# ranks per process) is not in the default list: name it in OSU_BENCHMARKS.
HALO_BENCHMARK=osu_halo_persistent
COLL_BENCHMARKS="osu_allreduce osu_bcast osu_reduce osu_allgather osu_alltoall osu_barrier"
BENCHMARKS=${OSU_BENCHMARKS:-$P2P_BENCHMARKS $COLL_BENCHMARKS}
halo_missing=""
case " $BENCHMARKS " in
*" $HALO_BENCHMARK "*)
    if [ ! -f "$osu_dir/$HALO_BENCHMARK.c" ]; then
        halo_missing="$HALO_BENCHMARK (osu/$HALO_BENCHMARK.c does not exist yet)"
        BENCHMARKS=$(echo " $BENCHMARKS " | sed "s/ $HALO_BENCHMARK / /g")
    fi
    ;;
esac
is_collective() { case " $COLL_BENCHMARKS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
is_halo() { [ "$1" = "$HALO_BENCHMARK" ]; }
# Collectives put every buffer on one side: H H, or D D (-d cuda, as OSU's
# own); D H / H D mean nothing there, and a barrier has no buffer at all.
coll_runs_in() { # prog placement
    case $2 in
    H-H) return 0 ;;
    D-D) [ "$1" != osu_barrier ] ;;
    *) return 1 ;;
    esac
}
# Whether a benchmark has a run (and a table) in this placement. The halo
# benchmark, like the collectives, has every buffer on one side.
runs_in() { # prog placement
    if is_collective "$1" || is_halo "$1"; then coll_runs_in "$1" "$2"; else return 0; fi
}
# A buffer on the device: the sizes of osu_bw / osu_bibw reach OSU_BW_MAX.
on_device() { [ "$1" != H-H ]; }

# NVLink multicast must stay off on the shared GPU machines.
export NCCL_NVLS_ENABLE=0
export UCX_WARN_UNUSED_ENV_VARS=${UCX_WARN_UNUSED_ENV_VARS:-n}
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# Wall clock in seconds with decimals (bash 5), for timings.csv.
now() { echo "${EPOCHREALTIME:-$SECONDS}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf "[run-compare %4ds] %s\n" "$SECONDS" "$*" >&2; }

logs=$out/logs
mkdir -p "$logs"
csv=$out/results.csv
commands=$out/commands.txt
failures=$out/failures.txt
timings=$out/timings.csv
echo "benchmark,placement,library,size,value,unit" >"$csv"
# Seconds per run, so that the next plan of short commands on a GPU machine
# can be made from measurements.
echo "run,seconds,exit_status" >"$timings"
: >"$commands"
: >"$failures"

# ---------------------------------------------------------------- setup
gpu_count=0
if [ "$cpu_only" = 0 ] && command -v nvidia-smi >/dev/null 2>&1; then
    gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
use_gpu=0
[ "$gpu_count" -ge 2 ] && use_gpu=1
if [ -n "${OSU_PLACEMENTS:-}" ]; then
    placements=$OSU_PLACEMENTS
elif [ "$use_gpu" = 1 ]; then
    placements="H-H D-D D-H H-D"
else
    placements="H-H"
fi
log "GPUs found: $gpu_count; placements: $placements; quick=$quick"
[ -n "$halo_missing" ] && log "SKIP $halo_missing"

ucx_lib=""
if [ -d "$AMPI_UCX_DIR/lib" ]; then
    ucx_lib=$AMPI_UCX_DIR/lib
    export LD_LIBRARY_PATH="$ucx_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
    log "no UCX at $AMPI_UCX_DIR (set AMPI_UCX_DIR): Open MPI uses its default UCX, no ucx_perftest"
fi
if [ "$use_gpu" = 1 ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64"
fi

libraries=""
if [ -x "$AMPI_PREFIX/bin/ampicc" ] && [ -x "$AMPI_PREFIX/bin/ampirun" ]; then
    libraries="ampi"
else
    log "SKIP AMPI-UCX: $AMPI_PREFIX/bin/ampicc or ampirun not found (set AMPI_PREFIX)"
fi
if command -v "$OMPI_MPICC" >/dev/null 2>&1 && command -v "$OMPI_MPIRUN" >/dev/null 2>&1; then
    libraries="$libraries ompi"
else
    log "SKIP Open MPI: $OMPI_MPICC or $OMPI_MPIRUN not found"
fi

library_name() { case $1 in ampi) echo ampi-ucx ;; ompi) echo openmpi ;; *) echo "$1" ;; esac; }

# ---------------------------------------------------------------- build
build_suite() { # lib compiler
    local lib=$1 cc=$2 dir=$out/build-$1 cflags libs src prog objs=""
    cflags="-std=c11 -O2 -Wall -Wextra"
    libs=""
    if [ "$use_gpu" = 1 ]; then
        cflags="$cflags -DOSU_CUDA -I$CUDA_HOME/include"
        libs="-L$CUDA_HOME/lib64 -lcudart -Wl,-rpath,$CUDA_HOME/lib64"
    fi
    mkdir -p "$dir"
    : >"$logs/build-$lib.log"
    # Each group's shared sources once (only for groups selected), then
    # one link per benchmark.
    # Both groups link osu_options.o and osu_device.o (option integers,
    # local rank, GPU selection, buffers); the collectives add their sweep.
    local shared="" p2p_objs="" coll_objs="" common_objs
    common_objs="$dir/osu_options.o $dir/osu_device.o"
    for prog in $BENCHMARKS; do
        if is_collective "$prog"; then coll_objs="$dir/osu_coll.o $dir/osu_coll_options.o $common_objs"
        else p2p_objs="$dir/osu_common.o $common_objs"; fi
    done
    if [ -n "$p2p_objs$coll_objs" ]; then shared="osu_options osu_device"; fi
    [ -n "$p2p_objs" ] && shared="$shared osu_common"
    [ -n "$coll_objs" ] && shared="$shared osu_coll osu_coll_options"
    for src in $shared $BENCHMARKS; do
        local cmd="$cc $cflags -c -o $dir/$src.o $osu_dir/$src.c"
        echo "$cmd" >>"$commands"
        if ! $cmd >>"$logs/build-$lib.log" 2>&1; then
            log "compiling $src.c with $cc failed: see $logs/build-$lib.log"
            return 1
        fi
    done
    for prog in $BENCHMARKS; do
        if is_collective "$prog"; then objs=$coll_objs; else objs=$p2p_objs; fi
        local cmd="$cc -o $dir/$prog $dir/$prog.o $objs $libs"
        echo "$cmd" >>"$commands"
        if ! $cmd >>"$logs/build-$lib.log" 2>&1; then
            log "linking $prog with $cc failed: see $logs/build-$lib.log"
            return 1
        fi
    done
    log "built $BENCHMARKS into $dir"
}

# NCCL's all-reduce as the reference for osu_allreduce D D: built with Open
# MPI's mpicc (MPI only bootstraps it), when nccl.h and libnccl are found.
# A machine with only NCCL's runtime package has libnccl.so.2 without the
# libnccl.so link, so the library is linked by its path.
nccl_bin=""
nccl_skip=""
find_nccl() { # prints "include-dir library-path", or nothing
    local inc="" lib="" d f
    for d in ${NCCL_HOME:+$NCCL_HOME/include} $CUDA_HOME/include /usr/include /usr/local/include; do
        [ -f "$d/nccl.h" ] && { inc=$d; break; }
    done
    for d in ${NCCL_HOME:+$NCCL_HOME/lib $NCCL_HOME/lib64} $CUDA_HOME/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
        for f in libnccl.so libnccl.so.2; do
            [ -e "$d/$f" ] && { lib=$d/$f; break 2; }
        done
    done
    [ -n "$inc" ] && [ -n "$lib" ] && echo "$inc $lib"
}
build_nccl() {
    local found inc lib dir=$out/build-nccl cmd
    found=$(find_nccl)
    if [ -z "$found" ]; then
        nccl_skip="nccl.h or libnccl not found (CUDA_HOME=$CUDA_HOME, NCCL_HOME=${NCCL_HOME:-unset}, /usr)"
        return 0
    fi
    inc=${found% *}
    lib=${found#* }
    mkdir -p "$dir"
    cmd="$OMPI_MPICC -std=c11 -O2 -Wall -Wextra -I$inc -I$CUDA_HOME/include -o $dir/nccl_allreduce $osu_dir/nccl_allreduce.c $lib -Wl,-rpath,$(dirname "$lib") -L$CUDA_HOME/lib64 -lcudart -Wl,-rpath,$CUDA_HOME/lib64"
    echo "$cmd" >>"$commands"
    if $cmd >"$logs/build-nccl.log" 2>&1; then
        nccl_bin=$dir/nccl_allreduce
        log "built $nccl_bin (nccl.h in $inc, $lib)"
    else
        log "building nccl_allreduce failed: see $logs/build-nccl.log"
        echo "build nccl_allreduce" >>"$failures"
    fi
}

built=""
for lib in $libraries; do
    case $lib in
    ampi) cc=$AMPI_PREFIX/bin/ampicc ;;
    ompi) cc=$OMPI_MPICC ;;
    esac
    if build_suite "$lib" "$cc"; then
        built="$built $lib"
    else
        echo "build $lib" >>"$failures"
    fi
done
case " $BENCHMARKS :: $placements " in
*" osu_allreduce "*::*" D-D "*)
    if [ "$use_gpu" != 1 ]; then
        nccl_skip="no GPUs in use"
    elif [ "$COLL_NP" -gt "$gpu_count" ]; then
        nccl_skip="OSU_COLL_NP=$COLL_NP processes, $gpu_count GPUs (NCCL needs one GPU per rank)"
    elif ! command -v "$OMPI_MPICC" >/dev/null 2>&1; then
        nccl_skip="$OMPI_MPICC not found"
    else
        build_nccl
    fi
    ;;
*) nccl_skip="osu_allreduce D-D not selected" ;;
esac
[ -n "$nccl_skip" ] && log "SKIP nccl_allreduce: $nccl_skip"

# ---------------------------------------------------------------- runs
benchmark_kind() { case $1 in osu_bw | osu_bibw | osu_mbw_mr) echo bandwidth ;; *) echo latency ;; esac; }
benchmark_np() {
    if is_collective "$1"; then echo "$COLL_NP"; return; fi
    case $1 in osu_mbw_mr | osu_multi_lat) echo "$MULTI_NP" ;; *) echo 2 ;; esac
}
benchmark_unit() { [ "$(benchmark_kind "$1")" = bandwidth ] && echo "MB/s" || echo "us"; }

benchmark_args() { # prog placement
    local args="-c"
    if is_collective "$1"; then
        # A barrier has no data to check.
        [ "$1" = osu_barrier ] && args=""
        if [ "$1:$2" = osu_allreduce:D-D ]; then
            # The sizes of the NCCL reference beside it.
            args="$args -m :$NCCL_MAX"
        elif [ "$quick" = 1 ] && [ "$1" != osu_barrier ]; then
            args="$args -m :1048576"
        fi
        [ "$quick" = 1 ] && args="$args -i 100 -x 10"
        [ "$2" = D-D ] && args="$args -d cuda"
        echo "$args"
        return
    fi
    if is_halo "$1"; then
        args=$HALO_ARGS
        [ "$2" = D-D ] && args="$args -d cuda"
        echo "$args"
        return
    fi
    if [ "$quick" = 1 ]; then
        if [ "$(benchmark_kind "$1")" = bandwidth ]; then
            args="$args -m :1048576 -i 5 -x 1"
        else
            args="$args -m :1048576 -i 100 -x 10"
        fi
    else
        # OSU stops at 4 MiB; the device bandwidth targets are at 32 MiB.
        case $1 in osu_bw | osu_bibw) on_device "$2" && args="$args -m :$BW_MAX" ;; esac
    fi
    case $2 in
    H-H) [ "$use_gpu" = 1 ] && args="$args -d cuda H H" ;;
    *) args="$args -d cuda ${2%-*} ${2#*-}" ;;
    esac
    echo "$args"
}

# Forward every UCX_* setting of ours to Open MPI's ranks.
ucx_exports() {
    local name
    for name in $(compgen -e | grep '^UCX_' || true); do printf -- '-x %s ' "$name"; done
}

# NP may be "P+V": P processes running V ranks (AMPI-UCX: ampirun -np P +vp
# V); other libraries run V processes.
launch_command() { # lib np prog args...
    local lib=$1 np=$2 prog=$3 vp=""
    shift 3
    case $np in *+*) vp=${np#*+} np=${np%+*} ;; esac
    [ -n "$vp" ] && [ "$lib" != ampi ] && np=$vp
    case $lib in
    ampi) echo "$AMPI_PREFIX/bin/ampirun -np $np${vp:+ +vp $vp} $prog $*" ;;
    ompi)
        local extra="" bind="--bind-to core"
        # More processes than cores (OSU_COLL_NP, OSU_MULTI_NP): Open MPI
        # refuses to bind two processes to one core.
        [ "$np" -gt "$(nproc)" ] && extra="--oversubscribe" && bind="--bind-to none"
        # pml_ucx_tls/devices=any: Open MPI 4.1 otherwise refuses UCX on
        # hosts without InfiniBand or CUDA transports.
        echo "$OMPI_MPIRUN -np $np --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH $(ucx_exports)$bind $extra $prog $*"
        ;;
    esac
}

# Appends "size value" rows of an osu-style output to results.csv; a
# "Fail" in the validation column goes to failures.txt instead.
collect_rows() { # stdout-file benchmark placement library unit
    awk -v b="$2" -v p="$3" -v l="$4" -v u="$5" -v failures="$failures" '
        /^#/ { next }
        # osu_barrier: one "Avg Latency(us)" row without a size: size 0.
        b == "osu_barrier" && $1 ~ /^[0-9]+[.][0-9]+$/ {
            printf "%s,%s,%s,0,%s,%s\n", b, p, l, $1, u
            next
        }
        $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ {
            if ($NF == "Fail") { print b, p, l, $1, "validation failed" >> failures; next }
            printf "%s,%s,%s,%s,%s,%s\n", b, p, l, $1, $2, u
        }' "$1" >>"$csv"
}

# The timeout of the next run: RUN_TIMEOUT, or what is left of OSU_BUDGET_S
# when less; fails when less than 5 s are left.
run_limit() {
    local left
    if [ "$BUDGET_S" -le 0 ]; then echo "$RUN_TIMEOUT"; return 0; fi
    left=$((BUDGET_S - SECONDS))
    [ "$left" -ge 5 ] || return 1
    [ "$left" -lt "$RUN_TIMEOUT" ] && echo "$left" || echo "$RUN_TIMEOUT"
}

# Runs one command bounded by timeout into logs/NAME.out/.err; a failure
# (crash, timeout, non-zero exit) goes to failures.txt and the runner goes
# on: Open MPI 4.1 segfaults on device all-reduce, and that is a result.
run_logged() { # name what-for-failures.txt cmd...
    local name=$1 what=$2 base=$logs/$1 rc limit t0
    shift 2
    : >"$base.out"
    limit=$(run_limit) || {
        log "  not run: OSU_BUDGET_S=$BUDGET_S spent"
        echo "$what not run (OSU_BUDGET_S=$BUDGET_S spent)" >>"$failures"
        return 0
    }
    echo "timeout $limit $*" >>"$commands"
    t0=$(now)
    timeout -k 10 "$limit" "$@" >"$base.out" 2>"$base.err" </dev/null
    rc=$?
    echo "$name,$(since "$t0"),$rc" >>"$timings"
    if [ $rc -ne 0 ]; then
        log "  exit status $rc (124 means timed out, 139 a segfault); see $base.err"
        echo "$what exit-status $rc" >>"$failures"
    fi
    return 0
}

# The halo benchmark under load: HALO_VP ranks (AMPI-UCX: in HALO_NP
# processes; Open MPI: HALO_VP processes).
run_halo() { # lib placement
    local lib=$1 placement=$2 args cmd
    args=$(benchmark_args "$HALO_BENCHMARK" "$placement")
    cmd=$(launch_command "$lib" "$HALO_NP+$HALO_VP" "$out/build-$lib/$HALO_BENCHMARK" $args)
    log "$lib $HALO_BENCHMARK $placement"
    run_logged "$lib-$HALO_BENCHMARK-$placement" "$HALO_BENCHMARK $placement $(library_name "$lib")" $cmd
    collect_rows "$logs/$lib-$HALO_BENCHMARK-$placement.out" "$HALO_BENCHMARK" "$placement" "$(library_name "$lib")" us
}

run_osu() { # lib prog placement
    local lib=$1 prog=$2 placement=$3 np args cmd
    if is_halo "$prog"; then run_halo "$lib" "$placement"; return; fi
    np=$(benchmark_np "$prog")
    args=$(benchmark_args "$prog" "$placement")
    cmd=$(launch_command "$lib" "$np" "$out/build-$lib/$prog" $args)
    log "$lib $prog $placement"
    run_logged "$lib-$prog-$placement" "$prog $placement $(library_name "$lib")" $cmd
    collect_rows "$logs/$lib-$prog-$placement.out" "$prog" "$placement" "$(library_name "$lib")" "$(benchmark_unit "$prog")"
}

# NCCL's all-reduce, one process per GPU, out of place (as osu_allreduce):
# its latency beside osu_allreduce D D, its bus bandwidth as
# osu_allreduce_busbw rows.
run_nccl() {
    local args="-c -m 8:$NCCL_MAX" cmd base=$logs/nccl-nccl_allreduce-D-D
    [ "$quick" = 1 ] && args="$args -i 100 -x 10"
    cmd=$(launch_command ompi "$COLL_NP" "$nccl_bin" $args)
    log "nccl nccl_allreduce D-D"
    run_logged nccl-nccl_allreduce-D-D "nccl_allreduce D-D nccl" $cmd
    collect_rows "$base.out" osu_allreduce D-D nccl us
    awk '/^#/ { next } $1 ~ /^[0-9]+$/ && $3 ~ /^[0-9.]+$/ && $NF != "Fail" {
        printf "osu_allreduce_busbw,D-D,nccl,%s,%s,GB/s\n", $1, $3 }' "$base.out" >>"$csv"
}

# Bus bandwidth of the MPI device all-reduces, as nccl-tests counts it:
# size / time * 2(n-1)/n, in GB/s (for 2 ranks: size / time).
derive_busbw() {
    awk -F, -v n="$COLL_NP" 'NR > 1 && $1 == "osu_allreduce" && $2 == "D-D" && $3 != "nccl" && $5 + 0 > 0 {
        printf "osu_allreduce_busbw,D-D,%s,%s,%.2f,GB/s\n", $3, $4, $4 / ($5 * 1e3) * 2 * (n - 1) / n
    }' "$csv" >"$out/busbw.tmp" && cat "$out/busbw.tmp" >>"$csv"
    rm -f "$out/busbw.tmp"
}

coll_skipped=""
for placement in $placements; do
    for prog in $BENCHMARKS; do
        if ! runs_in "$prog" "$placement"; then
            coll_skipped="$coll_skipped $prog:$placement"
            continue
        fi
        for lib in $built; do
            run_osu "$lib" "$prog" "$placement"
        done
        if [ "$prog:$placement" = osu_allreduce:D-D ] && [ -n "$nccl_bin" ]; then
            run_nccl
        fi
    done
done
derive_busbw

# ---------------------------------------------------------------- raw UCX
perftest=""
[ -n "$ucx_lib" ] && [ -x "$AMPI_UCX_DIR/bin/ucx_perftest" ] && perftest=$AMPI_UCX_DIR/bin/ucx_perftest
port=$((20000 + RANDOM % 20000))

# One ucx_perftest server+client pair over loopback; prints the client's
# CSV line (-v): iterations,p50_lat,avg_lat,overall_lat,avg_bw,overall_bw,...
perftest_once() { # test size iterations warmup memtype port
    local test=$1 size=$2 iters=$3 warmup=$4 mem=$5 port=$6 server_pid line
    local cpu_server="" cpu_client=""
    # With -m cuda, ucx_perftest itself puts the server on GPU 0 and the
    # client on GPU 1 (device = its group index modulo device count).
    if [ "$(nproc)" -ge 2 ]; then cpu_server="-c 0"; cpu_client="-c 1"; fi
    local args="-t $test -s $size -n $iters -w $warmup -m $mem -p $port -v"
    echo "timeout $RUN_TIMEOUT $perftest $cpu_server -p $port & timeout $RUN_TIMEOUT $perftest 127.0.0.1 $cpu_client $args" >>"$commands"
    timeout -k 5 "$RUN_TIMEOUT" "$perftest" $cpu_server -p "$port" >>"$logs/perftest-server.log" 2>&1 </dev/null &
    server_pid=$!
    line=""
    for _ in $(seq 1 50); do
        line=$(timeout -k 5 "$RUN_TIMEOUT" "$perftest" 127.0.0.1 $cpu_client $args 2>>"$logs/perftest-client.err" </dev/null | tail -n 1)
        case $line in [0-9]* | " "[0-9]*) break ;; esac
        line=""
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$line" ]; then
        kill "$server_pid" 2>/dev/null
    fi
    wait "$server_pid" 2>/dev/null
    echo "$line"
}

# The sizes of one ucx_perftest sweep: 1 .. max by the factor step, and the
# largest size always.
perftest_sizes() { # max step
    local size=1
    while [ "$size" -lt "$1" ]; do echo "$size"; size=$((size * $2)); done
    echo "$1"
}

run_perftest() { # test benchmark placement memtype
    local test=$1 bench=$2 placement=$3 mem=$4 size max line iters warmup value step=$PERFTEST_STEP t0
    # perftest_once bounds its processes by RUN_TIMEOUT: the budget's share.
    local RUN_TIMEOUT=$RUN_TIMEOUT
    max=4194304
    [ "$test" = tag_bw ] && on_device "$placement" && max=$BW_MAX
    [ "$quick" = 1 ] && max=1048576
    log "ucx_perftest $test $placement (-m $mem)"
    for size in $(perftest_sizes "$max" "$step"); do
        if ! RUN_TIMEOUT=$(run_limit); then
            echo "$bench $placement ucx-perftest from size $size not run (OSU_BUDGET_S=$BUDGET_S spent)" >>"$failures"
            break
        fi
        if [ "$test" = tag_lat ]; then
            if [ "$quick" = 1 ]; then iters=100; warmup=10
            elif [ "$size" -le 8192 ]; then iters=10000; warmup=100
            else iters=1000; warmup=10; fi
        else
            # OSU's window of 64 times its iteration counts.
            if [ "$quick" = 1 ]; then iters=320; warmup=64
            elif [ "$size" -le 8192 ]; then iters=6400; warmup=640
            else iters=1280; warmup=128; fi
        fi
        port=$((port + 1))
        t0=$(now)
        line=$(perftest_once "$test" "$size" "$iters" "$warmup" "$mem" "$port")
        echo "perftest-$test-$placement-$size,$(since "$t0"),$([ -n "$line" ] && echo 0 || echo 1)" >>"$timings"
        if [ -z "$line" ]; then
            echo "$bench $placement ucx-perftest size $size no result" >>"$failures"
        else
            # overall latency is one-way (us); bandwidth is MiB/s -> MB/s.
            value=$(echo "$line" | awk -F, -v t="$test" '{ if (t == "tag_lat") printf "%.2f", $4; else printf "%.2f", $6 * 1.048576 }')
            echo "$bench,$placement,ucx-perftest,$size,$value,$(benchmark_unit "$bench")" >>"$csv"
        fi
    done
}

if [ "${OSU_PERFTEST:-1}" = 0 ]; then
    log "SKIP ucx_perftest: OSU_PERFTEST=0"
elif [ -n "$perftest" ]; then
    for placement in $placements; do
        # -m SEND,RECV: the sender's and the receiver's memory (tag_lat
        # sends both ways from SEND memory into RECV memory).
        case $placement in
        H-H) mem=host ;;
        D-D) mem=cuda ;;
        D-H) mem=cuda,host ;;
        H-D) mem=host,cuda ;;
        *) continue ;;
        esac
        # Only as a reference for the benchmarks selected.
        case " $BENCHMARKS " in *" osu_latency "*) run_perftest tag_lat osu_latency "$placement" "$mem" ;; esac
        case " $BENCHMARKS " in *" osu_bw "*) run_perftest tag_bw osu_bw "$placement" "$mem" ;; esac
    done
else
    log "SKIP ucx_perftest: not found under $AMPI_UCX_DIR/bin"
fi

# ---------------------------------------------------------------- tables
# Prints "size<TAB>ampi<TAB>ompi<TAB>perftest" rows, "-" where missing.
table_rows() { # benchmark placement
    awk -F, -v b="$1" -v p="$2" '
        NR > 1 && $1 == b && $2 == p {
            sizes[$4] = 1
            v[$4, $3] = $5
        }
        END {
            for (s in sizes) {
                a = ((s, "ampi-ucx") in v) ? v[s, "ampi-ucx"] : "-"
                o = ((s, "openmpi") in v) ? v[s, "openmpi"] : "-"
                u = ((s, "ucx-perftest") in v) ? v[s, "ucx-perftest"] : "-"
                printf "%s\t%s\t%s\t%s\n", s, a, o, u
            }
        }' "$csv" | sort -n
}

# One column per library that has rows for this benchmark and placement, in
# the order they were run (the halo benchmark: AMPI-UCX with and without
# Open MPI).
library_table() { # benchmark placement
    awk -F, -v b="$1" -v p="$2" '
        NR > 1 && $1 == b && $2 == p {
            if (!($3 in seen)) { seen[$3] = 1; libs[n++] = $3 }
            if (!($4 in sized)) { sized[$4] = 1; sizes[m++] = $4 + 0 }
            v[$4, $3] = $5
        }
        END {
            if (n == 0) { print "(no rows)"; exit }
            head = "| size |"; rule = "|---:|"
            for (i = 0; i < n; i++) { head = head " " libs[i] " |"; rule = rule "---:|" }
            print head; print rule
            # sizes in ascending order (insertion sort: a few dozen rows)
            for (i = 1; i < m; i++) for (j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
                t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t }
            for (i = 0; i < m; i++) {
                line = "| " sizes[i] " |"
                for (k = 0; k < n; k++) line = line " " (((sizes[i], libs[k]) in v) ? v[sizes[i], libs[k]] : "-") " |"
                print line
            }
        }' "$csv"
}

# osu_allreduce D D beside NCCL: latency (us) and bus bandwidth (GB/s).
allreduce_device_table() {
    echo
    echo "## osu_allreduce, D-D (us; busbw in GB/s), with NCCL"
    echo
    echo "| size | AMPI-UCX | Open MPI | ratio | NCCL | AMPI-UCX / NCCL | AMPI-UCX busbw | Open MPI busbw | NCCL busbw |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 && $2 == "D-D" && ($1 == "osu_allreduce" || $1 == "osu_allreduce_busbw") {
            sizes[$4] = 1
            v[$1, $4, $3] = $5
        }
        function get(b, s, l) { return ((b, s, l) in v) ? v[b, s, l] : "-" }
        function ratio(a, b) { return (a != "-" && b != "-" && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
        END {
            for (s in sizes) {
                a = get("osu_allreduce", s, "ampi-ucx"); o = get("osu_allreduce", s, "openmpi")
                c = get("osu_allreduce", s, "nccl")
                printf "%s\t| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s, s, a, o, ratio(a, o), c,
                    ratio(a, c), get("osu_allreduce_busbw", s, "ampi-ucx"),
                    get("osu_allreduce_busbw", s, "openmpi"), get("osu_allreduce_busbw", s, "nccl")
            }
        }' "$csv" | sort -n | cut -f2-
}

write_tables() {
    local md=$out/tables.md commit gpu ompi_version ucx_version
    commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$repo" status --porcelain 2>/dev/null)" ]; then commit="$commit (work tree modified)"; fi
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)
    [ -n "$gpu" ] || gpu="none"
    ompi_version=$("$OMPI_MPIRUN" --version 2>/dev/null | head -n 1)
    ucx_version=$([ -n "$ucx_lib" ] && "$AMPI_UCX_DIR/bin/ucx_info" -v 2>/dev/null | head -n 1 | sed 's/^# *//')
    {
        echo "# AMPI-UCX vs Open MPI: osu-style benchmarks"
        echo
        echo "- Host: $(hostname) ($(uname -srm), $(nproc) cores)"
        echo "- Date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
        echo "- Git commit: $commit"
        echo "- GPU: $gpu (used: $([ "$use_gpu" = 1 ] && echo yes || echo no))"
        echo "- Open MPI: ${ompi_version:-not found}; UCX: ${ucx_version:-not found} ($AMPI_UCX_DIR)"
        echo "- AMPI-UCX prefix: $AMPI_PREFIX$(echo " $built" | grep -q ' ampi' || echo ' (not built: skipped)')"
        echo "- Mode: $([ "$quick" = 1 ] && echo quick || echo "full (OSU default sizes and iterations; osu_bw / osu_bibw up to $BW_MAX bytes where a buffer is on the device)"); placements: $placements"
        echo "- ucx_perftest sizes: every $([ "$PERFTEST_STEP" = 2 ] && echo size || echo "factor $PERFTEST_STEP") up to $([ "$quick" = 1 ] && echo '1 MiB (quick)' || echo "4 MiB (tag_bw with a device buffer: $BW_MAX)"); D-H runs \`-m cuda,host\`, H-D \`-m host,cuda\` (sender's, receiver's memory)"
        [ -n "$halo_missing" ] && echo "- Not run: $halo_missing"
        case " $BENCHMARKS " in *" $HALO_BENCHMARK "*)
            echo "- $HALO_BENCHMARK: $HALO_VP ranks (AMPI-UCX: $HALO_NP processes, +vp $HALO_VP; Open MPI: $HALO_VP processes), arguments \`$HALO_ARGS\` (D-D adds -d cuda); us per exchange" ;;
        esac
        echo "- Wall time of the script: ${SECONDS}s; per run in timings.csv"
        echo "- Latency in us (one-way, lower is better); bandwidth in MB/s = 1e6 bytes/s (higher is better)."
        echo "- ratio = AMPI-UCX / Open MPI. ucx_perftest: raw UCX tag_lat / tag_bw between the same two endpoints."
        echo "- Collectives: $COLL_NP processes, latency averaged over ranks (us); H-H host buffers, D-D every buffer on the device (-d cuda); osu_barrier is size 0."
        [ -n "$coll_skipped" ] && echo "- Not run (collectives: H-H and D-D only; osu_barrier: no buffer, H-H only):$coll_skipped"
        echo "- NCCL reference: $([ -n "$nccl_bin" ] && echo "nccl_allreduce (float sum, out of place, $COLL_NP ranks, one GPU each), beside osu_allreduce D-D; busbw = size / time * 2(n-1)/n in GB/s (nccl-tests), for 2 ranks size / time" || echo "not run: ${nccl_skip:-build failed}")"
        if [ -s "$failures" ]; then
            echo
            echo "## Failures"
            echo
            sed 's/^/- /' "$failures"
        fi
        local bench placement unit
        for bench in $BENCHMARKS; do
            unit=$(benchmark_unit "$bench")
            for placement in $placements; do
                runs_in "$bench" "$placement" || continue
                if [ "$bench:$placement" = osu_allreduce:D-D ]; then
                    allreduce_device_table
                    continue
                fi
                echo
                echo "## $bench, $placement ($unit)"
                echo
                if is_halo "$bench"; then
                    library_table "$bench" "$placement"
                elif [ "$bench" = osu_latency ] || [ "$bench" = osu_bw ]; then
                    echo "| size | AMPI-UCX | Open MPI | ratio | ucx_perftest |"
                    echo "|---:|---:|---:|---:|---:|"
                    table_rows "$bench" "$placement" | awk -F'\t' '{
                        r = ($2 != "-" && $3 != "-" && $3 + 0 > 0) ? sprintf("%.2f", $2 / $3) : "-"
                        printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, r, $4 }'
                else
                    echo "| size | AMPI-UCX | Open MPI | ratio |"
                    echo "|---:|---:|---:|---:|"
                    table_rows "$bench" "$placement" | awk -F'\t' '{
                        r = ($2 != "-" && $3 != "-" && $3 + 0 > 0) ? sprintf("%.2f", $2 / $3) : "-"
                        printf "| %s | %s | %s | %s |\n", $1, $2, $3, r }'
                fi
            done
        done
        echo
        echo "## Commands"
        echo
        echo "Environment: LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE $(compgen -e | grep '^UCX_' | while read -r n; do printf '%s=%s ' "$n" "${!n}"; done)"
        echo
        echo '```'
        cat "$commands"
        echo '```'
    } >"$md"
    log "wrote $csv and $md"
}

write_tables

# Plots where matplotlib is (elsewhere: plot the CSV later with
# osu/plot.py).
if "$OSU_PYTHON" -c 'import matplotlib' >/dev/null 2>&1; then
    if "$OSU_PYTHON" "$osu_dir/plot.py" "$csv" --out "$out/plots" >"$logs/plot.log" 2>&1; then
        log "plots in $out/plots"
    else
        log "plot.py failed: see $logs/plot.log"
    fi
else
    log "SKIP plots: no matplotlib for $OSU_PYTHON; plot elsewhere with osu/plot.py $csv"
fi

if [ -s "$failures" ]; then
    log "some runs failed: see $failures"
    exit 1
fi
exit 0
