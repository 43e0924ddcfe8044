#!/usr/bin/env bash
# Side-by-side runner: the osu-style suite (point-to-point and collectives)
# under AMPI-UCX and under Open MPI (over the same CUDA-aware UCX), plus raw
# UCX (ucx_perftest) for reference.
#
#   osu/run-compare.sh [--cpu] [--out DIR] [--quick]
#
# Builds the suite twice (DIR/build-ampi with $AMPI_PREFIX/bin/ampicc,
# DIR/build-ompi with Open MPI's mpicc), runs every benchmark with both for
# placement H H and, when nvidia-smi lists at least two GPUs, also D D, D H
# and H D (collectives: H only); then writes DIR/results.csv and
# DIR/tables.md. Every run is bounded by `timeout`. See osu/README.md.
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
  OSU_BENCHMARKS   subset to run (default: all twelve, point-to-point and collective)
  OSU_PLACEMENTS   e.g. "H-H D-D" (default: H-H, plus D-D D-H H-D with GPUs)
  OSU_RUN_TIMEOUT  seconds per run (default 120 quick, 300 full)
  OSU_MULTI_NP     processes for osu_mbw_mr and osu_multi_lat (default 2)
  OSU_COLL_NP      processes for the collectives (default 2)
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
if [ "$quick" = 1 ]; then RUN_TIMEOUT=${OSU_RUN_TIMEOUT:-120}; else RUN_TIMEOUT=${OSU_RUN_TIMEOUT:-300}; fi
P2P_BENCHMARKS="osu_latency osu_bw osu_bibw osu_latency_persistent osu_multi_lat osu_mbw_mr"
COLL_BENCHMARKS="osu_allreduce osu_bcast osu_reduce osu_allgather osu_alltoall osu_barrier"
BENCHMARKS=${OSU_BENCHMARKS:-$P2P_BENCHMARKS $COLL_BENCHMARKS}
is_collective() { case " $COLL_BENCHMARKS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# NVLink multicast must stay off on the shared GPU machines.
export NCCL_NVLS_ENABLE=0
export UCX_WARN_UNUSED_ENV_VARS=${UCX_WARN_UNUSED_ENV_VARS:-n}
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

log() { printf "[run-compare %4ds] %s\n" "$SECONDS" "$*" >&2; }

logs=$out/logs
mkdir -p "$logs"
csv=$out/results.csv
commands=$out/commands.txt
failures=$out/failures.txt
echo "benchmark,placement,library,size,value,unit" >"$csv"
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
        # Host buffers only (see run_osu); a barrier has no data to check.
        [ "$1" = osu_barrier ] && args=""
        [ "$quick" = 1 ] && [ "$1" != osu_barrier ] && args="$args -m :1048576"
        [ "$quick" = 1 ] && args="$args -i 100 -x 10"
        echo "$args"
        return
    fi
    if [ "$quick" = 1 ]; then
        if [ "$(benchmark_kind "$1")" = bandwidth ]; then
            args="$args -m :1048576 -i 5 -x 1"
        else
            args="$args -m :1048576 -i 100 -x 10"
        fi
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

launch_command() { # lib np prog args...
    local lib=$1 np=$2 prog=$3
    shift 3
    case $lib in
    ampi) echo "$AMPI_PREFIX/bin/ampirun -np $np $prog $*" ;;
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

run_osu() { # lib prog placement
    local lib=$1 prog=$2 placement=$3 np args cmd base rc
    np=$(benchmark_np "$prog")
    args=$(benchmark_args "$prog" "$placement")
    cmd=$(launch_command "$lib" "$np" "$out/build-$lib/$prog" $args)
    base=$logs/$lib-$prog-$placement
    echo "timeout $RUN_TIMEOUT $cmd" >>"$commands"
    log "$lib $prog $placement"
    timeout -k 10 "$RUN_TIMEOUT" $cmd >"$base.out" 2>"$base.err" </dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        log "  exit status $rc (124 means timed out); see $base.err"
        echo "$prog $placement $(library_name "$lib") exit-status $rc" >>"$failures"
    fi
    collect_rows "$base.out" "$prog" "$placement" "$(library_name "$lib")" "$(benchmark_unit "$prog")"
}

# Collectives run with host buffers only: AMPI-UCX's collectives would
# treat a device pointer as host memory (device collectives are not
# implemented yet), so a D placement would crash rather than measure.
coll_skipped=""
for placement in $placements; do
    for prog in $BENCHMARKS; do
        if is_collective "$prog" && [ "$placement" != H-H ]; then
            coll_skipped="$coll_skipped $prog:$placement"
            continue
        fi
        for lib in $built; do
            run_osu "$lib" "$prog" "$placement"
        done
    done
done

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

run_perftest() { # test benchmark placement memtype
    local test=$1 bench=$2 placement=$3 mem=$4 size max line iters warmup value
    max=4194304
    [ "$quick" = 1 ] && max=1048576
    log "ucx_perftest $test $placement"
    size=1
    while [ "$size" -le "$max" ]; do
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
        line=$(perftest_once "$test" "$size" "$iters" "$warmup" "$mem" "$port")
        if [ -z "$line" ]; then
            echo "$bench $placement ucx-perftest size $size no result" >>"$failures"
        else
            # overall latency is one-way (us); bandwidth is MiB/s -> MB/s.
            value=$(echo "$line" | awk -F, -v t="$test" '{ if (t == "tag_lat") printf "%.2f", $4; else printf "%.2f", $6 * 1.048576 }')
            echo "$bench,$placement,ucx-perftest,$size,$value,$(benchmark_unit "$bench")" >>"$csv"
        fi
        # Quick runs sample every other size: each run starts two processes.
        if [ "$quick" = 1 ]; then size=$((size * 4)); else size=$((size * 2)); fi
    done
}

if [ -n "$perftest" ]; then
    for placement in $placements; do
        case $placement in
        H-H) mem=host ;;
        D-D) mem=cuda ;;
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
        echo "- Mode: $([ "$quick" = 1 ] && echo quick || echo 'full (OSU default sizes and iterations)'); placements: $placements"
        echo "- Latency in us (one-way, lower is better); bandwidth in MB/s = 1e6 bytes/s (higher is better)."
        echo "- ratio = AMPI-UCX / Open MPI. ucx_perftest: raw UCX tag_lat / tag_bw between the same two endpoints."
        echo "- Collectives: $COLL_NP processes, latency averaged over ranks (us), host buffers only (device collectives not implemented yet); osu_barrier is size 0."
        [ -n "$coll_skipped" ] && echo "- Not run (device collectives not implemented yet):$coll_skipped"
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
                if is_collective "$bench" && [ "$placement" != H-H ]; then continue; fi
                echo
                echo "## $bench, $placement ($unit)"
                echo
                if [ "$bench:$placement" = "osu_latency:H-H" ] || [ "$bench:$placement" = "osu_latency:D-D" ] ||
                    [ "$bench:$placement" = "osu_bw:H-H" ] || [ "$bench:$placement" = "osu_bw:D-D" ]; then
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
if [ -s "$failures" ]; then
    log "some runs failed: see $failures"
    exit 1
fi
exit 0
