#!/bin/bash
# scripts/device.sh -- build, test and benchmark AMPI-UCX on the lent GPU machine.
#
# Usage: scripts/device.sh [build|test|bench|jacobi|all] [run-compare args, e.g. --quick]
#        (default: all)
# Runs in a copy of the working tree.  The machine has no network, so the UCX
# wheel must be carried in .whl/libucx_cu13-*.whl.  When $OUT is set, logs,
# test output and benchmark results are copied there.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

action=${1:-all}
[ $# -gt 0 ] && shift
bench_args=("$@")    # passed to osu/run-compare.sh, e.g. --quick
case $action in
    build|test|bench|jacobi|all) ;;
    *) echo "usage: $0 [build|test|bench|jacobi|all] [osu/run-compare.sh args]" >&2; exit 2 ;;
esac

# NVLink SHARP (multicast) must stay off on the lent machines; Open MPI refuses
# to run as root without these.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-}
[ -n "$out" ] && mkdir -p "$out"

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

# The comparison script belongs to the osu/ helper: it writes results.csv and
# tables.md into its --out directory; those (and its logs) go to $OUT/bench.
do_bench() {
    if [ ! -f osu/run-compare.sh ]; then
        echo "== bench: osu/run-compare.sh does not exist yet; skipped"
        return 0
    fi
    [ -x .prefix/bin/ampicc ] || do_build || return 1
    local results=$PWD/.build/osu-compare status
    echo "== bench: osu/run-compare.sh --out $results ${bench_args[*]}"
    AMPI_PREFIX=$PWD/.prefix bash osu/run-compare.sh --out "$results" "${bench_args[@]}"
    status=$?
    if [ -n "$out" ]; then
        mkdir -p "$out/bench"
        find "$results" -maxdepth 1 -type f \( -name '*.csv' -o -name '*.md' \) \
            -exec cp -f {} "$out/bench/" \;
        find "$results" -type f -name '*.log' -size -1M -exec cp -f {} "$out/bench/" \; 2>/dev/null
        echo "bench: copied to $out/bench:" "$out"/bench/*
    fi
    return "$status"
}

if ! ls .whl/libucx_cu13-*.whl >/dev/null 2>&1; then
    echo "device: no .whl/libucx_cu13-*.whl carried; setup.sh will try PyPI, which needs network" >&2
fi
echo "== nvidia-smi -L"
nvidia-smi -L || echo "(nvidia-smi failed)"
# UCX first (unpacked from the wheel), so that ucx_info can report the transports.
./setup.sh --deps-only || { save_logs; exit 1; }
ucx_info=.deps/ucx/libucx/bin/ucx_info
echo "== ucx_info -v"
"$ucx_info" -v
echo "== ucx_info -d | grep Transport"
"$ucx_info" -d | grep Transport

# Jacobi3D experiments (ours beside Open MPI, H and D modes, ODF 1..8); the
# arguments go to run-experiments.sh (e.g. --quick).
do_jacobi() {
    [ -x .prefix/bin/ampicc ] || do_build || return 1
    local results=$PWD/.build/jacobi-exp status
    AMPI_PREFIX=$PWD/.prefix bash apps/jacobi3d/run-experiments.sh --out "$results" "${bench_args[@]}"
    status=$?
    if [ -n "$out" ]; then
        mkdir -p "$out/jacobi"
        cp -f "$results"/*.csv "$results"/*.md "$out/jacobi/" 2>/dev/null
    fi
    return "$status"
}

status=0
case $action in
    build) do_build || status=1 ;;
    test)  do_test || status=1 ;;
    bench) do_bench || status=1 ;;
    jacobi) do_jacobi || status=1 ;;
    all)   build_ok=yes
           do_build || { status=1; build_ok=no; }
           # test.sh sets up again (quickly), so run it even after a failed build
           # to get its "0 passed, 1 failed" summary.
           do_test || status=1
           if [ $build_ok = yes ]; then do_bench || status=1; fi ;;
esac
echo "device: $action finished with status $status"
exit $status
