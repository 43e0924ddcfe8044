#!/bin/bash
# scripts/bench.sh -- the current figures of every area, measured by the one
# method of docs/benchmarking.md: our library and Open MPI run the same
# benchmark source, interleaved in N rounds after a discarded warm-up, every
# value of every round kept; scripts/bench-tables.sh then writes the tables.
#
# Usage: scripts/bench.sh [--out DIR] [--rounds N] [--areas "AREA ..."] [--cpu] [--quick]
#   --out DIR    results (default .build/bench): rounds.csv (every value),
#                runs.csv (every run: exit status, seconds, command),
#                meta.txt (commit, date, machine, versions), tables.md, logs/
#   --rounds N   interleaved rounds (default BENCH_ROUNDS or 5)
#   --areas L    any of host-p2p host-coll device-p2p device-coll jacobi vp
#                (default: all; the device ones need 2 GPUs and are left out,
#                with a note, without them), and rma-host rma-device (never by
#                default): the nine one-sided programs of the unmodified OSU
#                7.4 release in OSU74_DIR, H H and -d cuda D D, and, only when
#                named, the areas between two nodes of the namespace test bed
#                (root): nodes-p2p (H H) and nodes-device-p2p (D D, 2 GPUs),
#                see scripts/bench-nodes.sh; nbc-host (only when named):
#                IMB-NBC of the Intel MPI Benchmarks in IMB_DIR, the overlap
#                (%) of Ibcast, Iallreduce and Ialltoall (BENCH_NBC_PROGS: others,
#                "all": the 13 of IMB-NBC), 64 KiB-4 MiB, on 2 processes
#   --commit     print the commit meta.txt would name (BENCH_COMMIT, else git's
#                where the tree is a checkout of its own) and exit
#   --cpu        no GPU areas even where GPUs are (Jacobi3D runs -cpu)
#   --quick      tiny sizes and iteration counts: a test of the runner, its
#                figures mean nothing
# Environment: AMPI_PREFIX (default .prefix), AMPI_UCX_DIR (the CUDA-aware UCX
#   for Open MPI's pml ucx, default .deps/ucx/libucx), CUDA_HOME
#   (/usr/local/cuda), OMPI_MPICC / OMPI_MPIRUN (mpicc / mpirun), NCCL_HOME,
#   BENCH_BUDGET_S (default 420: no round starts that the previous one says
#   would end after this many seconds of the script; the rounds run are in
#   meta.txt), BENCH_RUN_TIMEOUT (seconds per run, default 120), BENCH_COMMIT
#   (the commit to report: it wins over git, which answers for a checkout a
#   copy of the tree may lie in), BENCH_JACOBI_MODES
#   (Jacobi3D modes with GPUs, default "D"), OSU74_DIR (an OSU 7.4 source
#   tree, never committed: the rma areas build it with ampicc and mpicc, the
#   nodes areas run its osu_latency and osu_bw when it is set),
#   OMPI_MPICXX (mpicxx), NSBED_ID (the nodes areas' bed), IMB_DIR (an Intel
#   MPI Benchmarks source tree, never committed: nbc-host builds its
#   IMB-NBC with ampicxx and mpicxx).
# Before/after: BENCH_BASE_PREFIX=DIR (an install of AMPI-UCX from another
#   commit) makes the reference that install instead of Open MPI: every
#   series of ours gets a twin built with DIR/bin/ampicc and run by
#   DIR/bin/ampirun, interleaved with it round by round, under the side name
#   BENCH_BASE_NAME (default "base"); Open MPI and NCCL do not run.  The
#   tables' ratio is then ours / that build (scripts/device.sh compare).
#   BENCH_BASE_ENV="NAME=VALUE ..." runs the twin under those settings: with
#   BENCH_BASE_PREFIX=$AMPI_PREFIX it compares one build with and without
#   them.  BENCH_P2P_PROGS narrows the point-to-point programs (default
#   "osu_latency osu_bw osu_bibw"); BENCH_NBC_PROGS names IMB-NBC's benchmarks
#   (default "Ibcast Iallreduce Ialltoall"; "all": every one of the 13).
# Exit status: 1 when a build or any run failed (runs.csv has each status).
# Commands are kept as strings (to log them verbatim) and split on purpose
# when run; no path or argument here contains blanks.
# shellcheck disable=SC2086
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1

out=$repo/.build/bench rounds=${BENCH_ROUNDS:-5} areas="" cpu=0 quick=0
# The commit the tree is: BENCH_COMMIT where set (a copy of the tree without
# .git of its own, as on the GPU machine: git would answer for whatever
# checkout the copy lies in), else git's where the tree is a checkout.
commit_of_tree() {
    local c
    if [ -n "${BENCH_COMMIT:-}" ]; then
        echo "$BENCH_COMMIT"
    elif [ "$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$repo" && pwd -P)" ] &&
        c=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null); then
        git -C "$repo" diff --quiet HEAD 2>/dev/null || c="$c (with uncommitted changes)"
        echo "$c"
    else
        echo "unknown (no git; set BENCH_COMMIT)"
    fi
}

while [ $# -gt 0 ]; do
    case $1 in
    --commit) commit_of_tree; exit 0 ;;
    --out) out=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --areas) areas=$2; shift ;;
    --cpu) cpu=1 ;;
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case $rounds in '' | *[!0-9]* | 0) echo "bench: --rounds needs a positive number" >&2; exit 2 ;; esac

AMPI_PREFIX=${AMPI_PREFIX:-$repo/.prefix}
AMPI_UCX_DIR=${AMPI_UCX_DIR:-$repo/.deps/ucx/libucx}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OMPI_MPICC=${OMPI_MPICC:-mpicc}
OMPI_MPIRUN=${OMPI_MPIRUN:-mpirun}
budget=${BENCH_BUDGET_S:-420}
base_prefix=${BENCH_BASE_PREFIX:-}
base_side=${BENCH_BASE_NAME:-base}
if [ -n "$base_prefix" ]; then
    [ -x "$base_prefix/bin/ampicc" ] || { echo "bench: no $base_prefix/bin/ampicc (BENCH_BASE_PREFIX)" >&2; exit 2; }
    case $base_side in ours | *[!A-Za-z0-9._-]*) echo "bench: BENCH_BASE_NAME must be a plain word other than ours" >&2; exit 2 ;; esac
fi
run_timeout=${BENCH_RUN_TIMEOUT:-120}
# Open MPI refuses root without these; NVLink multicast stays off.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0

ngpu=0
if [ $cpu = 0 ]; then ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU'); fi
all_areas="host-p2p host-coll device-p2p device-coll jacobi vp"
extra_areas="rma-host rma-device nodes-p2p nodes-device-p2p nbc-host" # only when asked for (OSU74_DIR; the bed: root; IMB_DIR)
[ -n "$areas" ] || areas=$all_areas
for a in $areas; do
    case " $all_areas $extra_areas " in *" $a "*) ;; *) echo "bench: unknown area $a (known: $all_areas $extra_areas)" >&2; exit 2 ;; esac
done
has_area() { case " $areas " in *" $1 "*) return 0 ;; esac; return 1; }

rm -rf "$out"
mkdir -p "$out/logs" "$out/build-ours" "$out/build-ompi"
[ -n "$base_prefix" ] && mkdir -p "$out/build-$base_side"
notes=$out/notes.txt # what was left out, and why: printed with the tables
: >"$notes"
echo "area,benchmark,placement,side,round,size,value,unit,status" >"$out/rounds.csv"
echo "area,benchmark,placement,side,round,status,seconds,command" >"$out/runs.csv"
status=0
note() { echo "bench: $*"; echo "$*" >>"$notes"; }

if [ "$ngpu" -lt 2 ]; then
    for a in device-p2p device-coll rma-device nodes-device-p2p; do
        has_area $a && note "$a left out: $ngpu GPU(s) in use here (needs 2)"
        areas=$(echo " $areas " | sed "s/ $a / /")
    done
fi

# ---- build -----------------------------------------------------------------
gpu_flags="" gpu_libs=""
if [ "$ngpu" -ge 1 ]; then
    gpu_flags="-DOSU_CUDA -I$CUDA_HOME/include"
    gpu_libs="-L$CUDA_HOME/lib64 -lcudart -Wl,-rpath,$CUDA_HOME/lib64"
fi
p2p_progs=${BENCH_P2P_PROGS:-osu_latency osu_bw osu_bibw}
coll_progs="osu_allreduce osu_bcast osu_alltoall osu_allgather osu_reduce osu_barrier"
build_osu() { # side compiler
    local dir=$out/build-$1 cc=$2 prog extra log=$out/logs/build-$1.log
    for prog in $p2p_progs $coll_progs; do
        case " $coll_progs " in
        *" $prog "*) extra="osu/osu_coll.c osu/osu_coll_options.c" ;;
        *) extra="osu/osu_common.c" ;;
        esac
        if ! $cc -std=c11 -O2 $gpu_flags -o "$dir/$prog" "osu/$prog.c" $extra osu/osu_options.c osu/osu_device.c \
            $gpu_libs >>"$log" 2>&1; then
            note "build of $prog with $cc failed: $(tail -3 "$log" | tr '\n' ' ')"
            return 1
        fi
    done
}
build_osu ours "$AMPI_PREFIX/bin/ampicc" || status=1
if [ -n "$base_prefix" ]; then
    build_osu "$base_side" "$base_prefix/bin/ampicc" || status=1
    note "before/after: ours ($AMPI_PREFIX) against $base_side ($base_prefix${BENCH_BASE_ENV:+, run under $BENCH_BASE_ENV}), the same sources built with each one's ampicc and run by its ampirun; Open MPI does not run"
else
    build_osu ompi "$OMPI_MPICC" || status=1
fi

# The unmodified OSU 7.4 release (rma areas): configured and built once per
# side in a copy of OSU74_DIR, with CUDA where GPUs are.
rma_progs="osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw osu_acc_latency osu_get_acc_latency
    osu_fop_latency osu_cas_latency"
build_osu74() { # side C-compiler C++-compiler
    local dir=$out/build-$1/osu74 log=$out/logs/build-osu74-$1.log cuda=""
    [ "$ngpu" -ge 1 ] && cuda="--enable-cuda=basic --with-cuda=$CUDA_HOME"
    mkdir -p "$dir" && cp -a "$OSU74_DIR/." "$dir/" || return 1 # -a: timestamps, or make reruns autotools
    if ! (cd "$dir" && ./configure CC="$2" CXX="$3" $cuda && make -j"$(nproc)") >"$log" 2>&1; then
        note "build of OSU 7.4 with $2 failed: $(tail -3 "$log" | tr '\n' ' ')"
        return 1
    fi
    for prog in $rma_progs; do ln -sf "$dir/c/mpi/one-sided/$prog" "$out/build-$1/$prog"; done
}
if has_area rma-host || has_area rma-device; then
    if [ -z "${OSU74_DIR:-}" ] || [ ! -x "${OSU74_DIR:-}/configure" ]; then
        note "rma areas left out: OSU74_DIR (an OSU 7.4 source tree) is not set"
        areas=$(echo " $areas " | sed 's/ rma-host / /; s/ rma-device / /')
        status=1
    else
        build_osu74 ours "$AMPI_PREFIX/bin/ampicc" "$AMPI_PREFIX/bin/ampicxx" || status=1
        if [ -n "$base_prefix" ]; then
            build_osu74 "$base_side" "$base_prefix/bin/ampicc" "$base_prefix/bin/ampicxx" || status=1
        else
            build_osu74 ompi "$OMPI_MPICC" "${OMPI_MPICXX:-mpicxx}" || status=1
        fi
    fi
fi

# Intel MPI Benchmarks' IMB-NBC (nbc-host): built once per side in a copy of IMB_DIR.
build_imb() { # side C-compiler C++-compiler
    local dir=$out/build-$1/imb log=$out/logs/build-imb-$1.log
    mkdir -p "$dir" && cp -a "$IMB_DIR/." "$dir/" || return 1
    # Open MPI 4.1 headers declare its C++ bindings unless told not to (IMB builds with -Werror)
    if ! make -C "$dir/src_cpp" TARGET=NBC CC="$2" CXX="$3 -DOMPI_SKIP_MPICXX=1" >"$log" 2>&1; then
        note "build of IMB-NBC with $2 failed: $(tail -3 "$log" | tr '\n' ' ')"
        return 1
    fi
    ln -sf "$dir/src_cpp/IMB-NBC" "$out/build-$1/IMB-NBC"
}
if has_area nbc-host; then
    if [ -z "${IMB_DIR:-}" ] || [ ! -f "${IMB_DIR:-}/src_cpp/Makefile" ]; then
        note "nbc-host left out: IMB_DIR (an Intel MPI Benchmarks source tree) is not set"
        areas=$(echo " $areas " | sed 's/ nbc-host / /')
        status=1
    else
        build_imb ours "$AMPI_PREFIX/bin/ampicc" "$AMPI_PREFIX/bin/ampicxx" || status=1
        [ -z "$base_prefix" ] && { build_imb ompi "$OMPI_MPICC" "${OMPI_MPICXX:-mpicxx}" || status=1; }
        [ -n "$base_prefix" ] && { build_imb "$base_side" "$base_prefix/bin/ampicc" "$base_prefix/bin/ampicxx" || status=1; }
    fi
fi

nccl_bin=""
if has_area device-coll && [ -z "$base_prefix" ]; then
    inc="" lib=""
    for d in ${NCCL_HOME:+$NCCL_HOME/include} "$CUDA_HOME/include" /usr/include /usr/local/include; do
        [ -f "$d/nccl.h" ] && { inc=$d; break; }
    done
    for d in ${NCCL_HOME:+$NCCL_HOME/lib $NCCL_HOME/lib64} "$CUDA_HOME/lib64" /usr/lib/x86_64-linux-gnu /usr/lib64; do
        for f in libnccl.so libnccl.so.2; do [ -e "$d/$f" ] && { lib=$d/$f; break 2; }; done
    done
    if [ -z "$inc" ] || [ -z "$lib" ]; then
        note "nccl_allreduce left out: nccl.h or libnccl not found"
    elif "$OMPI_MPICC" -std=c11 -O2 -I"$inc" -I"$CUDA_HOME/include" -o "$out/build-ompi/nccl_allreduce" \
        osu/nccl_allreduce.c "$lib" -Wl,-rpath,"$(dirname "$lib")" -L"$CUDA_HOME/lib64" -lcudart \
        -Wl,-rpath,"$CUDA_HOME/lib64" >"$out/logs/build-nccl.log" 2>&1; then
        nccl_bin=$out/build-ompi/nccl_allreduce
    else
        note "build of nccl_allreduce failed: $(tail -3 "$out/logs/build-nccl.log" | tr '\n' ' ')"
        status=1
    fi
fi

if has_area jacobi; then
    nvcc=""
    [ "$ngpu" -ge 1 ] && nvcc=$CUDA_HOME/bin/nvcc
    jacobi_sides="ours ompi"
    [ -n "$base_prefix" ] && jacobi_sides="ours $base_side"
    for side in $jacobi_sides; do
        cc=$AMPI_PREFIX/bin/ampicc
        [ $side = ompi ] && cc=$OMPI_MPICC
        [ $side = "$base_side" ] && [ -n "$base_prefix" ] && cc=$base_prefix/bin/ampicc
        make -C apps/jacobi3d MPICC="$cc" NVCC="$nvcc" BUILDDIR="$out/build-$side/jacobi" \
            >"$out/logs/build-jacobi-$side.log" 2>&1 ||
            { note "build of jacobi3d with $cc failed"; status=1; }
    done
    # Open MPI with ODF processes per GPU: ranks r*ODF .. r*ODF+ODF-1 share
    # GPU r, as ours do (consecutive ranks in one process); jacobi3d picks
    # its GPU from the local rank, which this divides by ODF.
    cat >"$out/gpu-blocked.sh" <<'EOF'
#!/bin/sh
odf=$1
shift
[ -n "${OMPI_COMM_WORLD_LOCAL_RANK:-}" ] && OMPI_COMM_WORLD_LOCAL_RANK=$((OMPI_COMM_WORLD_LOCAL_RANK / odf)) &&
    export OMPI_COMM_WORLD_LOCAL_RANK
exec "$@"
EOF
    chmod +x "$out/gpu-blocked.sh"
fi

# ---- the series: one line per (area, benchmark, placement, side) -----------
# Fields, '|'-separated: area|benchmark|placement|side|unit|command.  Sides:
# ours (our defaults), ompi-ucx (--mca pml ucx over the CUDA-aware UCX),
# ompi-ob1 (--mca pml ob1 --mca btl self,vader: Open MPI's own shared
# memory), nccl.  The tables name each side's command.
ucx_env="LD_LIBRARY_PATH=$AMPI_UCX_DIR/lib:${LD_LIBRARY_PATH:-}"
ours() { # ranks-spec prog args: "P" or "P+V" (P processes, V ranks)
    local np=${1%+*} vp=""
    case $1 in *+*) vp=${1#*+} ;; esac
    echo "$AMPI_PREFIX/bin/ampirun --timeout $run_timeout -np $np${vp:+ +vp $vp} $out/build-ours/$2 ${*:3}"
}
ompi() { # pml np prog args (prog: under build-ompi unless absolute)
    local bind="--bind-to core" prog=$3
    [[ $prog == /* ]] || prog=$out/build-ompi/$prog
    [ "$2" -gt "$(nproc)" ] && bind="--oversubscribe --bind-to none"
    case $1 in
    ucx) echo "env $ucx_env $OMPI_MPIRUN -np $2 $bind --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE $prog ${*:4}" ;;
    ucx-osc) echo "env $ucx_env $OMPI_MPIRUN -np $2 $bind --mca pml ucx --mca osc ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE $prog ${*:4}" ;;
    ob1) echo "$OMPI_MPIRUN -np $2 $bind --mca pml ob1 --mca btl self,vader $prog ${*:4}" ;;
    esac
}
series=()
add() { series+=("$1|$2|$3|$4|$5|$6|${7:-}"); } # ...|command|ODF (jacobi3d)
# sizes and iterations: OSU's defaults (--quick: a few tiny ones)
p2p_args="" coll_args="" big=""
if [ $quick = 1 ]; then
    p2p_args="-m 1:64 -i 20 -x 2" coll_args="-m 4:64 -i 20 -x 2" big="-m 1:64 -i 20 -x 2"
fi
if has_area host-p2p; then
    for b in $p2p_progs; do
        unit=MB/s
        [ $b = osu_latency ] && unit=us
        args="-c ${p2p_args:--m 1:4194304} H H"
        add host-p2p $b H-H ours $unit "$(ours 2 $b $args)"
        add host-p2p $b H-H ompi-ucx $unit "$(ompi ucx 2 $b $args)"
        add host-p2p $b H-H ompi-ob1 $unit "$(ompi ob1 2 $b $args)"
    done
fi
if has_area host-coll; then
    for b in $coll_progs; do
        args="-c $coll_args"
        [ $b = osu_barrier ] && args=${coll_args#-m 4:64 } # no sizes
        add host-coll $b H-H ours us "$(ours 2 $b $args)"
        add host-coll $b H-H ompi-ucx us "$(ompi ucx 2 $b $args)"
        add host-coll $b H-H ompi-ob1 us "$(ompi ob1 2 $b $args)"
    done
fi
if has_area device-p2p; then
    for b in $p2p_progs; do
        unit=MB/s max=33554432
        [ $b = osu_latency ] && unit=us max=4194304
        args="-c -d cuda ${big:--m 1:$max} D D"
        add device-p2p $b D-D ours $unit "$(ours 2 $b $args)"
        add device-p2p $b D-D ompi-ucx $unit "$(ompi ucx 2 $b $args)"
    done
fi
if has_area device-coll; then
    args="-c -d cuda ${big:--m 8:134217728}"
    add device-coll osu_allreduce D-D ours us "$(ours 2 osu_allreduce $args)"
    [ -z "$base_prefix" ] &&
        note "device-coll: Open MPI 4.1.6's osu_allreduce -d cuda ends in a segmentation fault (it reduces device memory on the host), so NCCL's own all-reduce is the reference"
    [ -n "$nccl_bin" ] && add device-coll osu_allreduce D-D nccl us \
        "$(ompi ucx 2 nccl_allreduce -c ${big:--m 8:134217728})"
fi
# One-sided: OSU 7.4's defaults (window flavor and synchronization per
# program, sizes, iterations).  Open MPI runs its UCX one-sided component
# (--mca osc ucx over pml ucx) and, on host buffers, its default path too.
rma_unit() { case $1 in *_bw | *_bibw) echo MB/s ;; *) echo us ;; esac; }
if has_area rma-host; then
    for b in $rma_progs; do
        args="${p2p_args} H H"
        add rma-host "$b" H-H ours "$(rma_unit "$b")" "$(ours 2 "$b" $args)"
        add rma-host "$b" H-H ompi-ucx "$(rma_unit "$b")" "$(ompi ucx-osc 2 "$b" $args)"
        add rma-host "$b" H-H ompi-ob1 "$(rma_unit "$b")" "$(ompi ob1 2 "$b" $args)"
    done
fi
if has_area rma-device; then
    for b in $rma_progs; do
        args="${p2p_args} -d cuda D D" # OSU 7.4's parser wants -d cuda [D D] last
        add rma-device "$b" D-D ours "$(rma_unit "$b")" "$(ours 2 "$b" $args)"
        add rma-device "$b" D-D ompi-ucx "$(rma_unit "$b")" "$(ompi ucx-osc 2 "$b" $args)"
    done
fi
# IMB-NBC: the overlap of communication and computation (IMB's overlap[%]
# column: how much of the shorter of the collective and the computation
# IMB hides behind the other), and from the same run its t_pure (the
# collective alone, in us: IMB-NBC-*-t_pure).  One run per collective and side.
if has_area nbc-host; then
    nbc_args="-msglog 16:22 -npmin 2 -iter 100 -time 5"
    [ $quick = 1 ] && nbc_args="-msglog 16:17 -npmin 2 -iter 5"
    nbc_progs=${BENCH_NBC_PROGS:-Ibcast Iallreduce Ialltoall}
    [ "$nbc_progs" = all ] && nbc_progs="Ibcast Iallreduce Ialltoall Iallgather Iallgatherv Ialltoallv Ibarrier Igather
        Igatherv Ireduce Ireduce_scatter Iscatter Iscatterv"
    for b in $nbc_progs; do
        add nbc-host "IMB-NBC-$b" H-H ours % "$(ours 2 IMB-NBC $b $nbc_args)"
        add nbc-host "IMB-NBC-$b" H-H ompi-ucx % "$(ompi ucx 2 IMB-NBC $b $nbc_args)"
        add nbc-host "IMB-NBC-$b" H-H ompi-ob1 % "$(ompi ob1 2 IMB-NBC $b $nbc_args)"
    done
fi
if has_area jacobi; then
    # 2 processes (one GPU each), 192^3 cells per GPU, ODF 1 and 2 ranks per
    # GPU; --cpu: 2 processes, 32^3 per process, mode -cpu.
    if [ "$ngpu" -ge 2 ]; then modes=${BENCH_JACOBI_MODES:-D} block=192 units=2; else modes=cpu block=32 units=2; fi
    iters="-i 100 -w 10"
    [ $quick = 1 ] && { iters="-i 5 -w 1"; block=16; }
    for mode in $modes; do
        for odf in 1 2; do
            np=$((units * odf))
            args="-$mode -x $((block * units)) -y $block -z $block $iters"
            add jacobi jacobi3d "$mode" ours ms "$(ours "$units+$np" jacobi/jacobi3d $args)" $odf
            add jacobi jacobi3d "$mode" ompi-ucx ms \
                "$(ompi ucx $np "$out/gpu-blocked.sh" $odf "$out/build-ompi/jacobi/jacobi3d" $args)" $odf
        done
    done
fi
if has_area vp; then
    # ranks as user-level threads: two ranks of one process (+vp 2), and 8
    # ranks on 2 processes (+vp 8) against Open MPI's 8 processes.  The
    # reference of the first two is Open MPI's host-p2p runs of the same
    # round (same arguments): bench-tables.sh takes them from there.
    args="-c ${p2p_args:--m 1:4194304} H H"
    add vp osu_latency "1+2" ours us "$(ours 1+2 osu_latency $args)"
    add vp osu_bw "1+2" ours MB/s "$(ours 1+2 osu_bw $args)"
    if [ -n "$base_prefix" ]; then
        :
    elif has_area host-p2p; then
        note "vp: the Open MPI columns of osu_latency/osu_bw 1+2 are its 2-process runs of host-p2p in the same rounds"
    else
        note "vp: osu_latency/osu_bw 1+2 have no Open MPI columns without the host-p2p area"
    fi
    add vp osu_allreduce "2+8" ours us "$(ours 2+8 osu_allreduce -c $coll_args)"
    add vp osu_allreduce "2+8" ompi-ucx us "$(ompi ucx 8 osu_allreduce -c $coll_args)"
    add vp osu_allreduce "2+8" ompi-ob1 us "$(ompi ob1 8 osu_allreduce -c $coll_args)"
fi

# between two nodes of the namespace test bed
if has_area nodes-p2p || has_area nodes-device-p2p; then
    # shellcheck source=bench-nodes.sh
    . "$repo/scripts/bench-nodes.sh"
fi

# Before/after: ours and its twin of the other build, nothing else.  The
# twin's command is ours with the other install and its own binaries.
if [ -n "$base_prefix" ]; then
    pairs=()
    for s in "${series[@]}"; do
        IFS='|' read -r area bench place side unit cmd odf <<<"$s"
        [ "$side" = ours ] || continue
        twin=${cmd//"$AMPI_PREFIX/"/"$base_prefix/"}
        twin=${twin//"$out/build-ours/"/"$out/build-$base_side/"}
        [ -n "${BENCH_BASE_ENV:-}" ] && twin="env $BENCH_BASE_ENV $twin"
        pairs+=("$s" "$area|$bench|$place|$base_side|$unit|$twin|$odf")
    done
    series=("${pairs[@]}")
fi

# ---- runs ------------------------------------------------------------------
# parse RUN-OUTPUT BENCHMARK: "size value" per row of an osu-style or
# jacobi3d output (osu_barrier: size 0; jacobi3d: size = ODF; IMB-NBC: the
# overlap column of its rows of 6 numbers, from 1 byte on)
parse() {
    awk -v b="$2" -v odf="$3" '
        /^#/ { next }
        b == "jacobi3d" && /^jacobi3d mode=/ {
            for (i = 1; i <= NF; i++) if ($i ~ /^iter_ms=/) { sub(/^iter_ms=/, "", $i); print odf, $i }
            next
        }
        b ~ /^IMB-NBC-Ibarrier/ { if (NF == 5 && $1 ~ /^[0-9]+$/ && $5 ~ /^-?[0-9.]+$/) print 0, $5; next }
        b ~ /^IMB-NBC/ { if (NF == 6 && $1 ~ /^[0-9]+$/ && $1 > 0 && $6 ~ /^-?[0-9.]+$/) print $1, $6; next }
        b == "osu_barrier" && NF == 1 && $1 ~ /^[0-9]+[.][0-9]+$/ { print 0, $1; next }
        $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { print $1, $2 }' "$1"
}

# run_one ROUND SERIES-LINE: one run, its values into rounds.csv.
run_one() {
    local round=$1 area bench place side unit cmd odf=""
    IFS='|' read -r area bench place side unit cmd odf <<<"$2"
    local tag=$area-$bench-$place-$side-r$round log t0 rc secs
    tag=${tag//\//_}
    tag=${tag//+/_}
    log=$out/logs/$tag.log
    t0=$(date +%s.%N)
    timeout -k 5 $((run_timeout + 10)) $cmd >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$area,$bench,$place,$side,$round,$rc,$secs,\"$cmd\"" >>"$out/runs.csv"
    parse "$log" "$bench" "$odf" | while read -r size value; do
        echo "$area,$bench,$place,$side,$round,$size,$value,$unit,$rc"
    done >>"$out/rounds.csv"
    # IMB-NBC's t_pure column too: the collective's time with nothing to
    # overlap, which the overlap must not cost (a table of its own)
    # (Ibarrier's rows have no size column: size 0)
    [[ $bench == IMB-NBC* ]] && awk -v p="$area,$bench-t_pure,$place,$side,$round" -v rc="$rc" \
        'NF == 6 && $1 ~ /^[0-9]+$/ && $1 > 0 && $4 ~ /^[0-9.]+$/ { print p "," $1 "," $4 ",us," rc }
         NF == 5 && p ~ /Ibarrier/ && $1 ~ /^[0-9]+$/ && $3 ~ /^[0-9.]+$/ { print p ",0," $3 ",us," rc }' "$log" \
        >>"$out/rounds.csv"
    printf 'bench: round %s %-11s %-14s %-5s %-9s exit %s, %ss\n' "$round" "$area" "$bench" "$place" "$side" "$rc" "$secs"
    [ "$rc" = 0 ] || status=1
}

# Warm-up (round 0, kept in the CSVs, left out of the tables): the first
# series of each side on host and on device buffers, so that the first timed
# round does not pay for a cold machine.
declare -A warmed=()
for s in "${series[@]}"; do
    IFS='|' read -r area _ _ side _ <<<"$s"
    kind=$side-${area%%-*}
    [[ $area == rma-* || $area == nodes-* || $area == nbc-* ]] && kind=$side-$area # host and device buffers: one warm-up each
    [ -n "${warmed[$kind]:-}" ] && continue
    warmed[$kind]=1
    run_one 0 "$s"
done

# Rounds: every series once per round, in the table's order in odd rounds
# and the reverse in even ones, so that neither side always runs first.
done_rounds=0
for ((round = 1; round <= rounds; round++)); do
    t_round=$SECONDS
    if [ $round -gt 1 ] && [ $((SECONDS + last_round)) -gt "$budget" ]; then
        note "rounds: $done_rounds of $rounds run; round $round would end after BENCH_BUDGET_S=$budget s (a round took ${last_round} s)"
        break
    fi
    if [ $((round % 2)) = 1 ]; then
        for s in "${series[@]}"; do run_one "$round" "$s"; done
    else
        for ((i = ${#series[@]} - 1; i >= 0; i--)); do run_one "$round" "${series[i]}"; done
    fi
    last_round=$((SECONDS - t_round))
    done_rounds=$round
done

# ---- what was measured where -----------------------------------------------
{
    commit=$(commit_of_tree)
    echo "commit: $commit"
    [ -n "$base_prefix" ] && echo "$base_side: $base_prefix"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "gpus: $(nvidia-smi -L 2>/dev/null | sed 's/ (UUID.*//' | paste -sd ';' - || true)"
    echo "open mpi: $("$OMPI_MPIRUN" --version 2>/dev/null | head -1)"
    # with the library path the runs have (else ucx_info may load the system's UCX)
    echo "ucx for pml ucx: $(env "$ucx_env" "$AMPI_UCX_DIR/bin/ucx_info" -v 2>/dev/null | head -1 | sed 's/^# *//')"
    echo "ucx for ours: $(ldd "$AMPI_PREFIX/lib/libampi.so" 2>/dev/null | awk '/libucp/ { print $3 }')"
    echo "rounds: $done_rounds (asked $rounds), after a warm-up; quick: $quick"
    echo "seconds: $SECONDS"
} >"$out/meta.txt"
bash "$repo/scripts/bench-tables.sh" "$out" >"$out/tables.md" || status=1
echo "bench: $out/tables.md ($done_rounds rounds, ${SECONDS}s); exit statuses in $out/runs.csv"
exit $status
