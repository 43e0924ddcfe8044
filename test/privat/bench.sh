#!/usr/bin/env bash
# test/privat/bench.sh - benchmark of globals privatization (not a test):
# start-up wall time, resident memory and memory mappings of one process
# with V ranks, built plain and with `ampicc -privatize`, and bench_ctx's
# scheduler cycles with and without getopt's state kept per rank.
#
#   test/privat/bench.sh [V ...]     (default: 1000 10000)
#
# Environment: AMPI_PREFIX, AMPI_BUILD as for run.sh; AMPI_STACK_SIZE
# (default here 32K, so that 10,000 stacks fit).  Needs a quiet machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=${AMPI_PREFIX:-$repo/.prefix}
build=${AMPI_BUILD:-$repo/.build}
out=$build/privat
mkdir -p "$out"
export AMPI_STACK_SIZE=${AMPI_STACK_SIZE:-32K}
"$prefix/bin/ampicc" -O2 -o "$out/bench_start_plain" "$here/bench_start.c" || exit 1
"$prefix/bin/ampicc" -privatize -O2 -o "$out/bench_start_priv" "$here/bench_start.c" || exit 1
[ $# -gt 0 ] || set -- 1000 10000
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), $(ldd --version | head -1)"
for v in "$@"; do
    for kind in plain priv; do
        t0=$(date +%s.%N)
        "$out/bench_start_$kind" +vp "$v" | sed "s/^/$kind /"
        t1=$(date +%s.%N)
        awk -v k="$kind" -v v="$v" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s bench_start: %d ranks: wall %.2f s\n", k, v, b - a }'
    done
done
if [ -x "$build/test/unit/bench_ctx" ]; then
    for i in 1 2 3; do
        "$build/test/unit/bench_ctx" 2000000 | sed 's/^/errno only:  /'
        "$build/test/unit/bench_ctx" 2000000 getopt | sed 's/^/with getopt: /'
    done
fi
