#!/bin/bash
# test/bench/run.sh - scripts/bench-tables.sh on made-up rounds whose medians,
# quartiles, references and ratios are worked out by hand below: the
# statistic of docs/benchmarking.md (ratio of the medians, not the median of
# per-round ratios; round 0 and failed runs left out; the faster Open MPI
# path as the reference).  Prints one PASS/FAIL line per check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tables=$here/../../scripts/bench-tables.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
nfail=0

# osu_bw, size 1 (higher is better), rounds 1-5:
#   ours     9.47 9.0 10.0 12.0 5.0  -> sorted 5 9 9.47 10 12: median 9.47,
#            quartiles 9 and 10 (IQR 1.00); round 0 (1000) is the warm-up
#   ompi-ucx 8.35 6.5 7.25 8.7 20.0 -> median 8.35, the reference
#   ompi-ob1 7 x 5                  -> median 7.00
#   ratio of medians 9.47 / 8.35 = 1.13 (the per-round ratios 1.13 1.38
#   1.38 1.38 0.25 have the median 1.38: not what is reported); ours
#   better in rounds 1-4: 4/5
# osu_bw, size 2: ours 10 x 5, ompi-ucx 5 x 5, ompi-ob1 20 x 4 and a run
#   that exited 1 (left out): reference ompi-ob1, ratio 0.50, 0/4
# osu_allreduce, size 4 (lower is better): ours 1 2 3 4 -> median 2.50,
#   quartiles 1.75 and 3.25 (IQR 1.50); ompi-ucx 2 x 4 (reference), ompi-ob1
#   3 x 4; ratio 1.25; ours better in round 1 only: 1/4
{
    echo "area,benchmark,placement,side,round,size,value,unit,status"
    echo "host-p2p,osu_bw,H-H,ours,0,1,1000,MB/s,0"
    r=1
    for v in 9.47 9.0 10.0 12.0 5.0; do echo "host-p2p,osu_bw,H-H,ours,$r,1,$v,MB/s,0"; r=$((r + 1)); done
    r=1
    for v in 8.35 6.5 7.25 8.7 20.0; do echo "host-p2p,osu_bw,H-H,ompi-ucx,$r,1,$v,MB/s,0"; r=$((r + 1)); done
    for r in 1 2 3 4 5; do
        echo "host-p2p,osu_bw,H-H,ompi-ob1,$r,1,7,MB/s,0"
        echo "host-p2p,osu_bw,H-H,ours,$r,2,10,MB/s,0"
        echo "host-p2p,osu_bw,H-H,ompi-ucx,$r,2,5,MB/s,0"
        echo "host-p2p,osu_bw,H-H,ompi-ob1,$r,2,20,MB/s,$([ $r = 5 ] && echo 1 || echo 0)"
    done
    r=1
    for v in 1 2 3 4; do
        echo "host-coll,osu_allreduce,H-H,ours,$r,4,$v,us,0"
        echo "host-coll,osu_allreduce,H-H,ompi-ucx,$r,4,2,us,0"
        echo "host-coll,osu_allreduce,H-H,ompi-ob1,$r,4,3,us,0"
        r=$((r + 1))
    done
} >"$dir/rounds.csv"
{
    echo "area,benchmark,placement,side,round,status,seconds,command"
    echo "host-p2p,osu_bw,H-H,ours,0,0,1.0,\"ampirun osu_bw\""
    for r in 1 2 3 4 5; do
        echo "host-p2p,osu_bw,H-H,ours,$r,0,1.0,\"ampirun osu_bw\""
        echo "host-p2p,osu_bw,H-H,ompi-ucx,$r,0,1.0,\"mpirun --mca pml ucx osu_bw\""
        echo "host-p2p,osu_bw,H-H,ompi-ob1,$r,$([ $r = 5 ] && echo 1 || echo 0),1.0,\"mpirun --mca pml ob1 --mca btl self,vader osu_bw\""
        [ $r = 5 ] && continue
        echo "host-coll,osu_allreduce,H-H,ours,$r,0,1.0,\"ampirun osu_allreduce\""
        echo "host-coll,osu_allreduce,H-H,ompi-ucx,$r,0,1.0,\"mpirun --mca pml ucx osu_allreduce\""
        echo "host-coll,osu_allreduce,H-H,ompi-ob1,$r,0,1.0,\"mpirun --mca pml ob1 osu_allreduce\""
    done
} >"$dir/runs.csv"

bash "$tables" "$dir" >"$dir/tables.md" 2>&1
rc=$?

check() { # name fixed-string: the line must be in the tables
    if grep -qF -- "$2" "$dir/tables.md"; then
        echo "PASS bench/$1"
    else
        echo "FAIL bench/$1: no line with: $2"
        sed 's/^/    /' "$dir/tables.md" | head -40
        nfail=$((nfail + 1))
    fi
}
check median-odd-ratio-of-medians "| 1 B | 9.47 (5.00-12.00, IQR 1.00, n 5) | 8.35 (6.50-20.00, IQR 1.45, n 5) | 7.00 (7.00-7.00, IQR 0, n 5) | ompi-ucx | 1.13 | 4/5 |"
check failed-run-left-out "| 2 B | 10.00 (10.00-10.00, IQR 0, n 5) | 5.00 (5.00-5.00, IQR 0, n 5) | 20.00 (20.00-20.00, IQR 0, n 4) | ompi-ob1 | 0.50 | 0/4 |"
check median-even-lower-better "| 4 B | 2.50 (1.00-4.00, IQR 1.50, n 4) | 2.00 (2.00-2.00, IQR 0, n 4) | 3.00 (3.00-3.00, IQR 0, n 4) | ompi-ucx | 1.25 | 1/4 |"
check worse-list "Ours worse than the reference (ratio of medians) at 1 of 2 sizes: 2 B 0.50"
check direction "### host-coll: osu_allreduce H-H (us, lower is better)"
check commands "- ompi-ob1: \`mpirun --mca pml ob1 --mca btl self,vader osu_bw\`"
check exit-statuses "- round 5, host-p2p osu_bw H-H ompi-ob1: exit 1 after 1.0 s"
# geometric mean of the ratios: osu_bw sqrt(9.47/8.35 * 0.50) = 0.753
check geomean-higher "Geometric mean of ours / reference over the 2 sizes: 0.75 (higher is better)"
check geomean-lower "Geometric mean of ours / reference over the 1 sizes: 1.25 (lower is better)"
# --brief: the medians alone, the same reference and ratio
bash "$tables" --brief "$dir" >"$dir/brief.md" 2>&1
if grep -qF "| 1 B | 9.47 | 8.35 | 7.00 | ompi-ucx | 1.13 | 4/5 |" "$dir/brief.md"; then
    echo "PASS bench/brief"
else
    echo "FAIL bench/brief: no row '| 1 B | 9.47 | 8.35 | 7.00 | ompi-ucx | 1.13 | 4/5 |'"
    sed 's/^/    /' "$dir/brief.md" | head -20
    nfail=$((nfail + 1))
fi
if [ $rc = 1 ]; then
    echo "PASS bench/failed-run-status"
else
    echo "FAIL bench/failed-run-status: bench-tables.sh exited $rc with a failed run, expected 1"
    nfail=$((nfail + 1))
fi

# scripts/bench-import.sh: the older runners' formats, mapped to areas and sides
# (a sweep's other variants become sides named by their settings)
imp=$dir/import
printf 'variant,benchmark,size,value,round\ndefault,osu_bw,8,64.5,2\nompi,osu_bw,8,55,2\nAMPI_SHM=0,osu_bw,8,1,2\n' >"$dir/sweep.csv"
printf 'r3 new bw 7.5 14.8\nr3 ompi bw 8.3 16.6\n' >"$dir/ab.log"
printf 'benchmark,placement,library,size,value,unit\nosu_allreduce,D-D,nccl,8,17.78,us\nosu_bw,D-H,ampi-ucx,8,1,MB/s\n' >"$dir/compare.csv"
bash "$here/../../scripts/bench-import.sh" "$imp" "test" sweep:"$dir/sweep.csv" ab:"$dir/ab.log" \
    compare:"$dir/compare.csv":4 >/dev/null 2>&1
want='area,benchmark,placement,side,round,size,value,unit,status
host-p2p,osu_bw,H-H,ours,2,8,64.5,MB/s,-
host-p2p,osu_bw,H-H,ompi-ucx,2,8,55,MB/s,-
host-p2p,osu_bw,H-H,AMPI_SHM=0,2,8,1,MB/s,-
host-p2p,osu_bw,H-H,ours,3,1,7.5,MB/s,-
host-p2p,osu_bw,H-H,ours,3,2,14.8,MB/s,-
host-p2p,osu_bw,H-H,ompi-ucx,3,1,8.3,MB/s,-
host-p2p,osu_bw,H-H,ompi-ucx,3,2,16.6,MB/s,-
device-coll,osu_allreduce,D-D,nccl,4,8,17.78,us,-'
if [ "$(cat "$imp/rounds.csv" 2>/dev/null)" = "$want" ]; then
    echo "PASS bench/import"
else
    echo "FAIL bench/import: rounds.csv differs: $(tr '\n' ' ' <"$imp/rounds.csv" 2>/dev/null)"
    nfail=$((nfail + 1))
fi
# scripts/bench.sh's commit: a copy of the tree lying in another checkout (as
# on the GPU machine) names BENCH_COMMIT, or nothing -- never the outer
# checkout's commit, which meta.txt used to name
outer=$dir/outer
git init -q "$outer" && git -C "$outer" -c user.email=t@t -c user.name=t commit -q --allow-empty -m outer &&
    mkdir -p "$outer/copy/scripts" && cp "$here/../../scripts/bench.sh" "$outer/copy/scripts/"
got_set=$(BENCH_COMMIT=abc1234 bash "$outer/copy/scripts/bench.sh" --commit 2>&1)
got_unset=$(env -u BENCH_COMMIT bash "$outer/copy/scripts/bench.sh" --commit 2>&1)
if [ "$got_set" = abc1234 ] && [ "$got_unset" = "unknown (no git; set BENCH_COMMIT)" ]; then
    echo "PASS bench/commit"
else
    echo "FAIL bench/commit: with BENCH_COMMIT '$got_set', without '$got_unset' (outer checkout" \
        "$(git -C "$outer" rev-parse --short HEAD 2>/dev/null))"
    nfail=$((nfail + 1))
fi
[ $nfail = 0 ]
