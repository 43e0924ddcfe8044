#!/usr/bin/env bash
# test/privat/bench.sh - benchmark of globals privatization (not a test),
# by the method of docs/benchmarking.md: one discarded warm-up round, then
# N rounds, each running every series once, plain and privatized side by
# side (odd rounds plain first, even rounds privatized first); every value
# goes to rounds.csv; the table gives the median and min-max per series.
#
#   test/privat/bench.sh [--rounds N] [--out DIR] [V ...]    (default: 5 rounds, V = 1000)
#
# Series, each built plain and with `ampicc -privatize`:
#   start V      bench_start.c, one process with V ranks (singleton
#                `./bench_start +vp V`): wall seconds, VmRSS (KiB), mappings
#   latency      osu/osu_latency.c, 8 B, two ranks of one process
#                (`ampirun -np 1 +vp 2`): one rank switch per message each way
#   switch       test/unit/bench_ctx: the scheduler's bare switch and yield
#                cycle, errno kept per rank (every program) and errno plus
#                getopt's globals (privatized programs), ns
#
# Environment: AMPI_PREFIX, AMPI_BUILD as for run.sh; AMPI_STACK_SIZE
# (default here 32K, so that 10,000 stacks fit).  Needs a quiet machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=${AMPI_PREFIX:-$repo/.prefix}
build=${AMPI_BUILD:-$repo/.build}
rounds=5
out=$build/privat/bench
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 1000
mkdir -p "$out" || exit 1
export AMPI_STACK_SIZE=${AMPI_STACK_SIZE:-32K}
for kind in plain priv; do
    flag=
    [ $kind = priv ] && flag=-privatize
    "$prefix/bin/ampicc" $flag -O2 -o "$out/bench_start_$kind" "$here/bench_start.c" || exit 1
    "$prefix/bin/ampicc" $flag -O2 -o "$out/osu_latency_$kind" "$repo/osu/osu_latency.c" "$repo/osu/osu_common.c" \
        "$repo/osu/osu_options.c" "$repo/osu/osu_device.c" -lm || exit 1
done
csv=$out/rounds.csv
echo "series,side,round,value,unit" >"$csv"
{
    echo "commit: $(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M') UTC"
    echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), $(ldd --version | head -1)"
    echo "rounds: $rounds (+1 warm-up), AMPI_STACK_SIZE=$AMPI_STACK_SIZE"
} | tee "$out/meta.txt"

record() { echo "$1,$2,$3,$4,$5" >>"$csv"; }

start_series() { # SIDE ROUND V
    local t0 t1 log=$out/start.$1.$3.log
    t0=$(date +%s.%N)
    "$out/bench_start_$1" +vp "$3" >"$log" 2>&1 || { echo "bench_start_$1 +vp $3 failed (log $log)" >&2; return; }
    t1=$(date +%s.%N)
    record "start $3 wall" "$1" "$2" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" s
    record "start $3 VmRSS" "$1" "$2" "$(awk '/VmRSS/ { print $(NF-1) }' "$log")" KiB
    record "start $3 mappings" "$1" "$2" "$(awk '/mappings/ { print $NF }' "$log")" maps
}

latency_series() { # SIDE ROUND
    local log=$out/latency.$1.log
    "$prefix/bin/ampirun" --timeout 120 -np 1 +vp 2 "$out/osu_latency_$1" -m 8:8 >"$log" 2>&1 || return
    record "latency 8 B (-np 1 +vp 2)" "$1" "$2" "$(awk '$1 == 8 { print $2 }' "$log")" us
}

switch_series() { # SIDE ROUND (plain: errno only; priv: errno and getopt)
    local arg='' log=$out/switch.$1.log
    [ "$1" = priv ] && arg=getopt
    [ -x "$build/test/unit/bench_ctx" ] || return
    "$build/test/unit/bench_ctx" 2000000 $arg >"$log" 2>&1 || return
    record "switch (bench_ctx bare)" "$1" "$2" "$(awk '/^context switch/ { print $3 }' "$log")" ns
    record "yield cycle (bench_ctx)" "$1" "$2" "$(awk '/^yield/ { print $5 }' "$log")" ns
}

for round in $(seq 0 "$rounds"); do
    sides="plain priv"
    [ $((round % 2)) = 0 ] && sides="priv plain"
    for side in $sides; do
        for v in "$@"; do start_series "$side" "$round" "$v"; done
        latency_series "$side" "$round"
        switch_series "$side" "$round"
    done
done

# median and min-max of rounds 1..N per series and side
awk -F, 'NR > 1 && $3 > 0 && $4 != "" { k = $1 SUBSEP $2; v[k, ++n[k]] = $4; unit[$1] = $5; if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 } }
function med(k,   i, j, t, m, a) {
    m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    lo = a[1]; hi = a[m]
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
    print "| series | unit | plain: median (min-max) | privatized: median (min-max) | n |"
    print "|---|---|---|---|---|"
    for (s = 1; s <= ns; s++) {
        name = order[s]; row = "| " name " | " unit[name]
        for (side = 1; side <= 2; side++) {
            k = name SUBSEP (side == 1 ? "plain" : "priv")
            if (n[k]) { m = med(k); row = row sprintf(" | %g (%g-%g)", m, lo, hi) } else row = row " | -"
        }
        print row " | " n[name SUBSEP "plain"] " |"
    }
}' "$csv" | tee "$out/tables.md"
