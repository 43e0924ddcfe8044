#!/bin/bash
# Jacobi3D weak-scaling runs: AMPI-UCX (ours) against Open MPI, host-staged (H)
# and CUDA-aware (D) halo exchange, with overdecomposition (ODF = ranks per GPU).
#
# usage: run-experiments.sh [--quick] [--cpu] [--blocks "N ..."] [--strong N] [--no-check] [--out DIR]
#   --quick     blocks of 192^3 and 768^3 per GPU instead of 192^3 and 1536^3
#   --cpu       no GPU: mode -cpu on small blocks (32^3, 64^3), -v on every run
#   --blocks    the blocks per GPU (cells per side), e.g. "192" or "1536"
#   --strong N  also strong scaling: a fixed N^3 grid split between the units
#               (kind "strong"; its 1-unit point is the weak run of block N
#               when --blocks has N, so that configuration runs once)
#   --no-check  skip the correctness runs (48^3 per GPU with -v)
#   --out       results directory (default: <repo>/.build/jacobi3d-results)
# Matrix: blocks x GPUs (1, 2) x modes (H, D) x ODF (1, 2, 4, 8) x library:
#   ours: ampirun -np G +vp G*ODF; Open MPI: G*ODF processes, ODF per GPU
#   (consecutive ranks on one GPU, as ours).  Weak scaling: the grid is
#   (BLOCK*G) x BLOCK x BLOCK, so every GPU holds BLOCK^3 cells.
# Iterations: 100 timed after 10 warm-up; blocks >= 1024: 30 after 5 (one
#   1536^3 iteration reads and writes ~60 GB per GPU, ~15-25 ms on an H200).
# env: AMPI_PREFIX (our install, default <repo>/.prefix), AMPI_UCX_DIR (the
#   CUDA-aware UCX for Open MPI, default <repo>/.deps/ucx/libucx), OMPI_MPICC
#   and OMPI_MPIRUN (default mpicc, mpirun), JACOBI_BUDGET_S (start no run
#   after this many seconds, default 450), JACOBI_ODFS (default "1 2 4 8"),
#   JACOBI_OMPI_ODFS (default: JACOBI_ODFS), JACOBI_UNITS (default "1 2"),
#   JACOBI_CHECK_UNITS (units of the correctness runs, default JACOBI_UNITS;
#   "largest": the most units only),
#   JACOBI_MODES (default "H D"), JACOBI_ITERS/JACOBI_WARMUP (100/10),
#   JACOBI_LARGE_ITERS/JACOBI_LARGE_WARMUP (blocks >= 1024: 30/5),
#   JACOBI_BUILD_ROOT (where build-ampi/ and build-ompi/ go, default DIR:
#   share it between runs to build once), JACOBI_COMMIT (reported where the
#   tree is no git checkout).
# Writes DIR/jacobi.csv and DIR/jacobi.md (plot them with plot.py); run logs
# are in DIR/logs/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0 cpu=0 check=1 blocks="" strong="" out=$repo/.build/jacobi3d-results
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --cpu) cpu=1 ;;
    --no-check) check=0 ;;
    --blocks) blocks=$2; shift ;;
    --blocks=*) blocks=${1#--blocks=} ;;
    --strong) strong=$2; shift ;;
    --strong=*) strong=${1#--strong=} ;;
    --out) out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    -h | --help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "run-experiments.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

AMPI_PREFIX=${AMPI_PREFIX:-$repo/.prefix}
AMPI_UCX_DIR=${AMPI_UCX_DIR:-$repo/.deps/ucx/libucx}
OMPI_MPICC=${OMPI_MPICC:-mpicc}
OMPI_MPIRUN=${OMPI_MPIRUN:-mpirun}
budget=${JACOBI_BUDGET_S:-450}
odfs=${JACOBI_ODFS:-1 2 4 8}
ompi_odfs=${JACOBI_OMPI_ODFS:-$odfs}
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
units_list=${JACOBI_UNITS:-1 2}
if [ $cpu = 1 ]; then
    modes="cpu"
    [ -n "$blocks" ] || { [ $quick = 1 ] && blocks="16 32" || blocks="32 64"; }
else
    modes=${JACOBI_MODES:-H D}
    [ -n "$blocks" ] || { [ $quick = 1 ] && blocks="192 768" || blocks="192 1536"; }
    # No more GPUs than there are.
    units_list=$(for u in $units_list; do [ "$u" -le "$ngpu" ] && echo "$u"; done | tr '\n' ' ')
fi
check_units=${JACOBI_CHECK_UNITS:-$units_list}
[ "$check_units" = largest ] && check_units=$(tr ' ' '\n' <<<"$units_list" | sort -n | tail -1)

mkdir -p "$out/logs" || exit 1
build_root=${JACOBI_BUILD_ROOT:-$out}
csv=$out/jacobi.csv md=$out/jacobi.md
echo "kind,library,units,odf,ranks,block,mode,grid,decomp,iters,iter_ms,comm_ms,iter_ms_max,verify,status,seconds" >"$csv"
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 8 ] && jobs=8

# ---- builds (make is incremental: a shared JACOBI_BUILD_ROOT builds once) --
libs=""
build() { # name mpicc
    local dir=$build_root/build-$1
    if make -C "$here" -j"$jobs" MPICC="$2" BUILDDIR="$dir" >"$out/logs/build-$1.log" 2>&1; then
        libs="$libs $1"
        echo "built $1 with $2 into $dir"
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

# Open MPI with ODF processes per GPU: jacobi3d picks GPU (local rank % GPUs),
# which would put consecutive ranks (neighbours along z) on different GPUs.
# This wrapper divides the local rank it reads by ODF, so that ranks
# r*ODF .. r*ODF+ODF-1 share GPU r, as ours do (ampirun puts consecutive
# ranks in one process).  Open MPI itself takes its ranks from PMIx.
blocked=$out/gpu-blocked.sh
cat >"$blocked" <<'EOF'
#!/bin/sh
# usage: gpu-blocked.sh ODF PROGRAM ARGS...: ranks ODF apart share a GPU.
odf=$1
shift
[ -n "${OMPI_COMM_WORLD_LOCAL_RANK:-}" ] && OMPI_COMM_WORLD_LOCAL_RANK=$((OMPI_COMM_WORLD_LOCAL_RANK / odf)) &&
    export OMPI_COMM_WORLD_LOCAL_RANK
exec "$@"
EOF
chmod +x "$blocked"

# ---- runs ----------------------------------------------------------------
launch() { # library units odf: prints the launcher's command prefix
    local np=$(($2 * $3)) extra=""
    if [ "$1" = ampi ]; then
        echo "$AMPI_PREFIX/bin/ampirun -np $2 +vp $np"
        return
    fi
    [ "$np" -gt "$(nproc)" ] && extra="--oversubscribe --bind-to none"
    if [ $cpu = 1 ]; then
        echo "$OMPI_MPIRUN --oversubscribe -np $np"
    else
        # pml_ucx_tls/devices any: as osu/run-compare.sh (Open MPI 4.1 may
        # otherwise turn UCX down); the CUDA-aware UCX is first in
        # LD_LIBRARY_PATH.
        echo "$OMPI_MPIRUN -np $np $extra --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" \
            "-x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE $blocked $3"
    fi
}

field() { # key line
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

iters_for() { # block: "-i N -w N"
    if [ "$1" -ge 1024 ]; then
        echo "-i ${JACOBI_LARGE_ITERS:-30} -w ${JACOBI_LARGE_WARMUP:-5}"
    else
        echo "-i ${JACOBI_ITERS:-100} -w ${JACOBI_WARMUP:-10}"
    fi
}

failures=0
run_one() { # kind(check|perf|strong) library units odf block mode extra-args...
    local kind=$1 lib=$2 units=$3 odf=$4 block=$5 mode=$6
    shift 6
    local name
    name="$kind-$lib-u$units-odf$odf-b$block-$mode$(tr -d ' ' <<<"$*")"
    local log=$out/logs/$name.log status=ok verify=-
    # Weak: the grid is split between GPUs (processes) along x, as the
    # program's own decomposition does, so each unit keeps a block^3 share.
    # Strong: the grid stays block^3 whatever the units.
    local xcells=$((block * units))
    [ "$kind" = strong ] && xcells=$block
    local args="-$mode -x $xcells -y $block -z $block $*"
    local limit=60
    [ "$block" -ge 1024 ] && limit=120
    if [ "$SECONDS" -ge "$budget" ]; then
        status=skipped-budget
        echo "$kind,$lib,$units,$odf,,$block,$mode,,,,,,,-,$status,0" >>"$csv"
        echo "SKIP $name: time budget of ${budget}s used up"
        failures=$((failures + 1))
        return
    fi
    [ $((budget - SECONDS + 30)) -lt $limit ] && limit=$((budget - SECONDS + 30))
    local cmd
    cmd="$(launch "$lib" "$units" "$odf") $build_root/build-$lib/jacobi3d $args"
    echo "$cmd" >"$log"
    local t0=$SECONDS
    # shellcheck disable=SC2086 # the command line is split on purpose
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

odfs_of() { [ "$1" = ampi ] && echo "$odfs" || echo "$ompi_odfs"; }

# run_matrix KIND BLOCKS: the timed runs of KIND (perf = weak scaling, strong)
# for every block, unit count, mode (cpu with --cpu), library and ODF.
run_matrix() {
    local kind=$1 block units mode lib odf
    for block in $2; do
        for units in $units_list; do
            # The 1-unit strong run is the weak run of the same block.
            [ "$kind" = strong ] && [ "$units" = 1 ] && [[ " $blocks " == *" $block "* ]] && continue
            for mode in $modes; do
                for lib in $libs; do
                    for odf in $(odfs_of "$lib"); do
                        # --cpu: every run checked; else "-i N -w N" (split on purpose)
                        # shellcheck disable=SC2046
                        run_one "$kind" "$lib" "$units" "$odf" "$block" "$mode" \
                            $([ $cpu = 1 ] && echo -v || iters_for "$block")
                    done
                done
            done
        done
    done
}

if [ $cpu = 1 ]; then
    run_matrix perf "$blocks"
    run_matrix strong "$strong"
else
    # Correctness first, on a small grid, for every library, mode and GPU
    # count, with the smallest and the largest ODF.
    if [ $check = 1 ]; then
        for lib in $libs; do
            for units in $check_units; do
                for mode in $modes; do
                    for odf in $(odfs_of "$lib" | tr ' ' '\n' | sed -n '1p;$p' | sort -un); do
                        run_one check "$lib" "$units" "$odf" 48 "$mode" -v -i 20 -w 2
                    done
                done
            done
        done
    fi
    run_matrix perf "$blocks"
    run_matrix strong "$strong"
fi

# ---- report --------------------------------------------------------------
{
    echo "# Jacobi3D: AMPI-UCX vs Open MPI"
    echo
    echo "- host: $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC'), ${SECONDS}s for this script"
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
    echo "- Open MPI: \`$(launch ompi 1 1 | sed -E 's/-np 1( |$)/-np G*ODF\1/; s/ 1$/ ODF/') jacobi3d -MODE -x BLOCK*G -y BLOCK -z BLOCK\`"
    echo "- units: GPUs (or processes with --cpu); G = units; the grid is split between units along x (weak scaling: BLOCK^3 per unit)"
    echo "- ODF = ranks per unit (overdecomposition): ours ${odfs// /, } (user-level threads), Open MPI ${ompi_odfs// /, } (processes sharing the GPU)"
    for block in $blocks; do
        [ $cpu = 1 ] && { echo "- $block^3: 100 timed iterations after 10 warm-up, -v"; continue; }
        echo "- $block^3: iterations $(iters_for "$block" | sed 's/-i \([0-9]*\) -w \([0-9]*\)/\1 timed after \2 warm-up/')"
    done
    echo "- times are per iteration, averaged over ranks, in ms; comm = time in MPI (posting + MPI_Waitall)"
    echo
    echo "## iter_ms (comm_ms) by configuration"
    echo
    echo "| block | units | mode | ODF | AMPI-UCX | Open MPI | AMPI-UCX / Open MPI |"
    echo "|---|---|---|---|---|---|---|"
    awk -F, '
        NR > 1 && $1 == "perf" {
            key = $6 "|" $3 "|" $7 "|" $4
            if (!(key in seen)) { seen[key] = 1; order[n++] = key }
            cell[key "|" $2] = ($15 == "ok") ? $11 " (" $12 ")" : $15
            if ($15 == "ok") t[key "|" $2] = $11
        }
        END {
            for (i = 0; i < n; i++) {
                split(order[i], k, "|")
                a = order[i] "|ampi"; o = order[i] "|ompi"
                r = ((a in t) && (o in t) && t[o] > 0) ? sprintf("%.2f", t[a] / t[o]) : "-"
                printf "| %s^3 | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], k[3], k[4],
                    (a in cell) ? cell[a] : "-", (o in cell) ? cell[o] : "-", r
            }
        }' "$csv"
    echo
    # scaling_table KIND TITLE: iter_ms per unit count and t(1)/t(G) (weak:
    # efficiency, 1 is perfect; strong: speedup, G is perfect).  A strong
    # run's 1-unit point is the weak (perf) run of the same block.
    scaling_table() {
        local units_header units_sep sorted_units
        # columns in ascending order whatever order the runs took (JACOBI_UNITS="8 1 4 2" runs the largest first)
        sorted_units=$(tr ' ' '\n' <<<"$units_list" | grep . | sort -n | tr '\n' ' ')
        units_header=$(for u in $sorted_units; do printf ' %s unit(s) |' "$u"; done)
        units_sep=$(for u in $sorted_units; do printf -- '---:|'; done)
        echo "## $2"
        echo
        echo "| block | mode | library | ODF |$units_header t(1)/t(G), G = largest |"
        echo "|---|---|---|---|$units_sep---:|"
        awk -F, -v want="$1" -v units="$sorted_units" '
            NR > 1 && $15 == "ok" && ($1 == want || (want == "strong" && $1 == "perf" && $3 == 1)) {
                key = $6 "|" $7 "|" $2 "|" $4
                if ($1 == want && !(key in seen)) { seen[key] = 1; order[n++] = key }
                t[key "|" $3] = $11
            }
            END {
                nu = split(units, u, " ")
                for (i = 0; i < n; i++) {
                    split(order[i], k, "|")
                    line = sprintf("| %s^3 | %s | %s | %s |", k[1], k[2], (k[3] == "ampi") ? "AMPI-UCX" : "Open MPI", k[4])
                    for (j = 1; j <= nu; j++)
                        line = line " " ((order[i] "|" u[j]) in t ? t[order[i] "|" u[j]] : "-") " |"
                    one = order[i] "|1"; last = order[i] "|" u[nu]
                    r = ((one in t) && (last in t) && t[last] > 0) ? sprintf("%.2f", t[one] / t[last]) : "-"
                    print line " " r " |"
                }
            }' "$csv"
        echo
    }
    scaling_table perf "Weak scaling: iter_ms per unit count (BLOCK^3 per unit); t(1)/t(G) is the efficiency"
    [ -n "$strong" ] && scaling_table strong "Strong scaling: iter_ms for a fixed BLOCK^3 grid; t(1)/t(G) is the speedup"
    echo "## All runs"
    echo
    echo "| kind | library | units | ODF | ranks | block | mode | grid | decomp | iters | iter_ms | comm_ms | iter_ms_max | verify | status | s |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }' "$csv"
} >"$md"

echo "wrote $csv and $md ($failures failed or skipped run(s), ${SECONDS}s)"
[ $failures = 0 ]
