#!/bin/bash
# Jacobi3D weak-scaling runs: AMPI-UCX (ours, with overdecomposition) against
# Open MPI, host-staged (H) and CUDA-aware (D) halo exchange.
#
# usage: run-experiments.sh [--quick] [--cpu] [--out DIR]
#   --quick  blocks of 192^3 and 768^3 per GPU instead of 192^3 and 1536^3
#   --cpu    no GPU: mode -cpu on small blocks, with -v on every run
#   --out    results directory (default: <repo>/.build/jacobi3d-results)
# env: AMPI_PREFIX (our install, default <repo>/.prefix), AMPI_UCX_DIR (the
#   CUDA-aware UCX for Open MPI, default <repo>/.deps/ucx/libucx), OMPI_MPICC
#   and OMPI_MPIRUN (default mpicc, mpirun), JACOBI_BUDGET_S (default 450),
#   JACOBI_COMMIT (reported where the tree is no git checkout).
# Writes DIR/jacobi.csv and DIR/jacobi.md; run logs are in DIR/logs/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0 cpu=0 out=$repo/.build/jacobi3d-results
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --cpu) cpu=1 ;;
    --out) out=$2; shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run-experiments.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

AMPI_PREFIX=${AMPI_PREFIX:-$repo/.prefix}
AMPI_UCX_DIR=${AMPI_UCX_DIR:-$repo/.deps/ucx/libucx}
OMPI_MPICC=${OMPI_MPICC:-mpicc}
OMPI_MPIRUN=${OMPI_MPIRUN:-mpirun}
budget=${JACOBI_BUDGET_S:-450} # the whole script must stay under 8 minutes
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d "$AMPI_UCX_DIR/lib" ] && export LD_LIBRARY_PATH=$AMPI_UCX_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

ngpu=0
if [ $cpu = 0 ] && command -v nvidia-smi >/dev/null; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
if [ $cpu = 0 ] && [ "$ngpu" -lt 1 ]; then
    echo "no GPU found: running the --cpu variant"
    cpu=1
fi
if [ $cpu = 1 ]; then
    modes="cpu" counts="1 2" odfs="1 2 4 8"
    if [ $quick = 1 ]; then sizes="16 32"; else sizes="32 64"; fi
else
    modes="H D" counts=$(seq 1 $((ngpu < 2 ? ngpu : 2))) odfs="1 2 4 8"
    if [ $quick = 1 ]; then sizes="192 768"; else sizes="192 1536"; fi
fi

mkdir -p "$out/logs" || exit 1
csv=$out/jacobi.csv md=$out/jacobi.md
echo "kind,library,units,odf,ranks,block,mode,grid,decomp,iters,iter_ms,comm_ms,iter_ms_max,verify,status,seconds" >"$csv"
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 8 ] && jobs=8

# ---- builds --------------------------------------------------------------
libs=""
build() { # name mpicc
    local dir=$out/build-$1
    if make -C "$here" -j"$jobs" MPICC="$2" BUILDDIR="$dir" >"$out/logs/build-$1.log" 2>&1; then
        libs="$libs $1"
        echo "built $1 with $2"
    else
        echo "BUILD FAILED for $1 ($2); tail of $out/logs/build-$1.log:"
        tail -5 "$out/logs/build-$1.log"
    fi
}
if [ -x "$AMPI_PREFIX/bin/ampicc" ] && [ -x "$AMPI_PREFIX/bin/ampirun" ]; then
    build ampi "$AMPI_PREFIX/bin/ampicc"
else
    echo "SKIP ampi: no $AMPI_PREFIX/bin/ampicc and ampirun (set AMPI_PREFIX or run ./setup.sh)"
fi
if command -v "$OMPI_MPICC" >/dev/null && command -v "$OMPI_MPIRUN" >/dev/null; then
    build ompi "$OMPI_MPICC"
else
    echo "SKIP ompi: no $OMPI_MPICC / $OMPI_MPIRUN"
fi
[ -n "$libs" ] || { echo "nothing was built"; exit 1; }

# ---- runs ----------------------------------------------------------------
launch() { # library units odf: prints the launcher's command prefix
    if [ "$1" = ampi ]; then
        echo "$AMPI_PREFIX/bin/ampirun -np $2 +vp $(($2 * $3))"
    elif [ $cpu = 1 ]; then
        echo "$OMPI_MPIRUN --oversubscribe -np $2"
    else
        echo "$OMPI_MPIRUN -np $2 --mca pml ucx -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
    fi
}

field() { # key line
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

failures=0
run_one() { # kind(check|perf) library units odf block mode extra-args...
    local kind=$1 lib=$2 units=$3 odf=$4 block=$5 mode=$6
    shift 6
    local name="$kind-$lib-u$units-odf$odf-b$block-$mode$(tr -d ' ' <<<"$*")"
    local log=$out/logs/$name.log status=ok verify=-
    # The grid is split between GPUs (processes) along x, as the program's
    # own decomposition does, so each unit keeps a block^3 share.
    local args="-$mode -x $((block * units)) -y $block -z $block $*"
    local limit=60
    [ "$block" -ge 1024 ] && limit=120
    if [ "$SECONDS" -ge "$budget" ]; then
        status=skipped-budget
        echo "$kind,$lib,$units,$odf,,$block,$mode,,,,,,,-,$status,0" >>"$csv"
        echo "SKIP $name: time budget of ${budget}s used up"
        return
    fi
    local cmd="$(launch "$lib" "$units" "$odf") $out/build-$lib/jacobi3d $args"
    echo "$cmd" >"$log"
    local t0=$SECONDS
    timeout -k 5 "$limit" $cmd >>"$log" 2>&1
    local rc=$? secs=$((SECONDS - t0))
    local line
    line=$(grep '^jacobi3d mode=' "$log" | tail -1)
    grep -q '^VERIFY PASS' "$log" && verify=pass
    grep -q '^VERIFY FAIL' "$log" && verify=fail
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        status=timeout
    elif [ $rc != 0 ] || [ -z "$line" ] || [ $verify = fail ]; then
        status=failed-rc$rc
    fi
    [ $status = ok ] || failures=$((failures + 1))
    echo "$kind,$lib,$units,$odf,$(field ranks "$line"),$block,$mode,$(field grid "$line"),$(field decomp "$line")," \
        "$(field iters "$line"),$(field iter_ms "$line"),$(field comm_ms "$line"),$(field iter_ms_max "$line")," \
        "$verify,$status,$secs" | tr -d ' ' >>"$csv"
    printf '%-4s %-40s %s iter_ms=%s comm_ms=%s verify=%s (%ss)\n' "$status" "$name" "$(field grid "$line")" \
        "$(field iter_ms "$line")" "$(field comm_ms "$line")" "$verify" "$secs"
}

odfs_of() { [ "$1" = ampi ] && echo "$odfs" || echo 1; }

if [ $cpu = 1 ]; then
    for block in $sizes; do
        for units in $counts; do
            for lib in $libs; do
                for odf in $(odfs_of $lib); do run_one perf $lib $units $odf $block cpu -v; done
            done
        done
    done
else
    # Correctness first, on a small grid, for every library, mode and GPU count.
    for lib in $libs; do
        for units in $counts; do
            for mode in $modes; do
                for odf in $(odfs_of $lib | awk '{print $1, $NF}' | tr ' ' '\n' | sort -un); do
                    run_one check $lib $units $odf 48 $mode -v -i 20 -w 2
                done
            done
        done
    done
    for block in $sizes; do
        for units in $counts; do
            for mode in $modes; do
                for lib in $libs; do
                    for odf in $(odfs_of $lib); do run_one perf $lib $units $odf $block $mode; done
                done
            done
        done
    done
fi

# ---- report --------------------------------------------------------------
{
    echo "# Jacobi3D: AMPI-UCX vs Open MPI"
    echo
    echo "- host: $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC')"
    if commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null); then
        git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
    else
        commit="${JACOBI_COMMIT:-unknown (no git checkout here; set JACOBI_COMMIT)}"
    fi
    echo "- commit: $commit"
    if [ $cpu = 1 ]; then
        echo "- no GPU: mode -cpu, units are processes, every run verified against a serial run (-v)"
    else
        echo "- GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')"
    fi
    echo "- ours: \`$AMPI_PREFIX/bin/ampirun -np G +vp G*ODF jacobi3d -MODE -x BLOCK*G -y BLOCK -z BLOCK\`"
    echo "- Open MPI: \`$(launch ompi G 1) jacobi3d -MODE -x BLOCK*G -y BLOCK -z BLOCK\`"
    echo "- units: GPUs (or processes with --cpu); G = units; the grid is split between units along x"
    echo "- ${odfs:+ODF = ranks per GPU (overdecomposition); }iterations: 100 timed after 10 warm-up; times are per iteration, averaged over ranks; comm = time in MPI (posting + MPI_Waitall)"
    echo
    echo "## iter_ms (comm_ms) by configuration"
    echo
    header="| block | units | mode | Open MPI |"
    sep="|---|---|---|---|"
    for odf in $odfs; do header="$header ours ODF $odf |"; sep="$sep---|"; done
    echo "$header"
    echo "$sep"
    awk -F, -v odfs="$odfs" '
        NR > 1 && $1 == "perf" {
            key = $6 "|" $3 "|" $7
            if (!(key in seen)) { seen[key] = 1; order[n++] = key }
            v = ($15 == "ok") ? $11 " (" $12 ")" : $15
            cell[key "|" $2 "|" $4] = v
        }
        END {
            split(odfs, o, " ")
            for (i = 0; i < n; i++) {
                split(order[i], k, "|")
                line = "| " k[1] "^3 | " k[2] " | " k[3] " | " ((order[i] "|ompi|1") in cell ? cell[order[i] "|ompi|1"] : "-") " |"
                for (j = 1; j in o; j++) {
                    c = order[i] "|ampi|" o[j]
                    line = line " " ((c in cell) ? cell[c] : "-") " |"
                }
                print line
            }
        }' "$csv"
    echo
    echo "## All runs"
    echo
    echo "| kind | library | units | ODF | ranks | block | mode | grid | decomp | iter_ms | comm_ms | iter_ms_max | verify | status |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $12, $13, $14, $15 }' "$csv"
} >"$md"

echo "wrote $csv and $md ($failures failed run(s), ${SECONDS}s)"
[ $failures = 0 ]
