#!/usr/bin/env bash
# test/multinode/gpu-bed.sh -- device buffers between two "nodes" of the
# namespace bed on a machine with two GPUs: one GPU per node
# (CUDA_VISIBLE_DEVICES), one process per node, Open MPI's mpirun as the
# engine.  Checks that device payloads cross nodes intact (the GPU
# point-to-point and memory-kind tests, Jacobi3D -D -v), then times Jacobi3D
# -D at ODF 1/2/4/8 (ranks per GPU) with and without -overlap: between
# nodes communication goes over TCP, where overdecomposition may pay.
#
#   test/multinode/gpu-bed.sh [OUTDIR]
#
# Needs root, 2 GPUs, a built install (AMPI_PREFIX, default .prefix) and the
# GPU tests built (test/gpu/run.sh --build-only).  Writes OUTDIR/gpu-bed.csv
# (mode,odf,overlap,iter_ms per run) and prints PASS/FAIL lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/.build/gpu-bed}
prefix=${AMPI_PREFIX:-$repo/.prefix}
build=${AMPI_BUILD:-$repo/.build}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export NSBED_ID=${NSBED_ID:-201}
bed=$here/nsbed.sh
npass=0 nfail=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }

[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] || { echo "SKIP gpu-bed: fewer than 2 GPUs"; exit 0; }
"$bed" down >/dev/null 2>&1
"$bed" up 2 >/dev/null || { echo "FAIL gpu-bed: the bed did not come up"; exit 1; }
trap '"$bed" down >/dev/null 2>&1' EXIT
"$bed" env ampinode1 CUDA_VISIBLE_DEVICES=0
"$bed" env ampinode2 CUDA_VISIBLE_DEVICES=1

# run LOG VP PROGRAM ARGS...: one process per node, VP ranks in the job
run() {
    local log=$1 vp=$2
    shift 2
    timeout -k 5 180 "$bed" mpirun 1 -x AMPI_VP="$vp" -x NCCL_NVLS_ENABLE=0 "$@" >"$log" 2>&1 </dev/null
}

# correctness: the GPU tests' programs between the nodes
for prog in gpu_pt2pt gpu_memkind gpu_coll; do
    bin=$build/gpu/$prog
    [ -x "$bin" ] || { fail "gpu-bed/$prog" "not built ($bin)"; continue; }
    for vp in 2 8; do
        log=$out/$prog-vp$vp.log
        if run "$log" "$vp" "$bin" && grep -q 'OK' "$log" && ! grep -q '^FAIL' "$log"; then
            pass "gpu-bed/$prog vp=$vp"
        else
            fail "gpu-bed/$prog vp=$vp" "exit $?, $(grep -m2 -E 'FAIL|rror' "$log" | tr '\n' ' ')"
        fi
    done
done

# Jacobi3D across the nodes
jdir=$out/jacobi-build
if make -C "$repo/apps/jacobi3d" MPICC="$prefix/bin/ampicc" BUILDDIR="$jdir" >"$out/jacobi-build.log" 2>&1; then
    log=$out/jacobi-verify.log
    if run "$log" 8 "$jdir/jacobi3d" -D -n 48 -i 5 -w 0 -v && grep -q 'VERIFY PASS' "$log"; then
        pass "gpu-bed/jacobi3d -D -v vp=8"
    else
        fail "gpu-bed/jacobi3d -D -v vp=8" "$(tail -n 3 "$log" | tr '\n' ' ')"
    fi
    echo "mode,odf,overlap,ranks,grid,iter_ms" >"$out/gpu-bed.csv"
    # 384^3 cells per GPU: the global grid 384 x 384 x 768 over 2 GPUs
    for round in 1 2 3; do
        for odf in 1 2 4 8; do
            for ov in "" -overlap; do
                log=$out/jacobi-odf$odf${ov}-r$round.log
                run "$log" $((2 * odf)) "$jdir/jacobi3d" -D -x 384 -y 384 -z 768 -i 30 -w 5 $ov
                ms=$(grep -o 'iter_ms=[0-9.]*' "$log" | cut -d= -f2)
                echo "D,$odf,${ov:+yes},$((2 * odf)),384x384x768,${ms:-failed}" >>"$out/gpu-bed.csv"
            done
        done
    done
    cat "$out/gpu-bed.csv"
else
    fail "gpu-bed/jacobi3d build" "$(tail -n 3 "$out/jacobi-build.log" | tr '\n' ' ')"
fi
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
