#!/bin/bash
# scripts/bench-import.sh -- raw files of the runners used before
# scripts/bench.sh, turned into a folder that scripts/bench-tables.sh reads,
# so that earlier figures are tabulated by the same statistic (and marked with
# their own commit and date) instead of by hand.
#
# Usage: scripts/bench-import.sh OUTDIR META-LINE SOURCE...
#   META-LINE  written to OUTDIR/meta.txt (commit, date, machine, rounds)
#   SOURCE     FORMAT:FILE[:ROUND]
#     sweep:FILE      scripts/device.sh sweep-hh/sweep-dd sweep.csv
#                     (variant,benchmark,size,value,round); variant
#                     "default" is ours, "ompi" Open MPI's pml ucx, any
#                     other a side named by its settings (H-H only)
#     compare:FILE:R  osu/run-compare.sh results.csv as round R (libraries
#                     ampi-ucx, openmpi, nccl; ucx_perftest left out)
#     ab:FILE         "rN new|ompi bw V1 V2 ..." lines (osu_bw 1, 2, 4 ... B)
#     jacobi:FILE:R   apps/jacobi3d/run-experiments.sh jacobi.csv as round R
#                     (the weak-scaling rows of 192^3 per GPU on 2 GPUs)
# BENCH_IMPORT_AREAS="AREA ...": keep only these areas of scripts/bench.sh.
# Exit statuses were not recorded by those runners: the status column is
# "-" and there is no runs.csv (the tables say so).  Open MPI ran with
# --mca pml ucx in all of them: its side is ompi-ucx.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '7,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1 meta=$2
shift 2
mkdir -p "$out"
echo "$meta" >"$out/meta.txt"
: >"$out/notes.txt"
rows=$out/rounds.csv
echo "area,benchmark,placement,side,round,size,value,unit,status" >"$rows"
# area_of BENCHMARK PLACEMENT (awk): the area of scripts/bench.sh, or ""
area_awk='
function area_of(b, p) {
    if (b ~ /^osu_(latency|bw|bibw)$/) return p == "H-H" ? "host-p2p" : p == "D-D" ? "device-p2p" : ""
    if (b ~ /^osu_(allreduce|bcast|alltoall|allgather|reduce|barrier)$/) {
        if (p == "H-H") return "host-coll"
        if (p == "D-D" && b == "osu_allreduce") return "device-coll"
    }
    return ""
}
function unit_of(b) { return b ~ /^osu_(bw|bibw)$/ ? "MB/s" : "us" }'
for src in "$@"; do
    fmt=${src%%:*} rest=${src#*:}
    file=${rest%%:*} round=${rest#*:}
    [ "$round" = "$rest" ] && round=""
    [ -f "$file" ] || { echo "bench-import: no $file" >&2; exit 2; }
    case $fmt in
    sweep)
        awk -F, "$area_awk"'
            NR > 1 {
                a = area_of($2, "H-H")
                side = $1 == "default" ? "ours" : $1 == "ompi" ? "ompi-ucx" : $1
                if (a != "") printf "%s,%s,H-H,%s,%s,%s,%s,%s,-\n", a, $2, side, $5, $3, $4, unit_of($2)
            }' "$file" >>"$rows" ;;
    compare)
        awk -F, -v r="$round" "$area_awk"'
            NR > 1 {
                a = area_of($1, $2)
                s = $3 == "ampi-ucx" ? "ours" : $3 == "openmpi" ? "ompi-ucx" : $3 == "nccl" ? "nccl" : ""
                if (a != "" && s != "") printf "%s,%s,%s,%s,%s,%s,%s,%s,-\n", a, $1, $2, s, r, $4, $5, $6
            }' "$file" >>"$rows" ;;
    ab)
        awk '$1 ~ /^r[0-9]+$/ && ($2 == "new" || $2 == "ompi") && $3 == "bw" {
                for (i = 4; i <= NF; i++)
                    printf "host-p2p,osu_bw,H-H,%s,%s,%d,%s,MB/s,-\n", $2 == "ompi" ? "ompi-ucx" : "ours", substr($1, 2), 2 ^ (i - 4), $i
            }' "$file" >>"$rows" ;;
    jacobi)
        awk -F, -v r="$round" 'NR > 1 && $1 == "perf" && $3 == 2 && $6 == 192 && $15 == "ok" {
                printf "jacobi,jacobi3d,%s,%s,%s,%s,%s,ms,-\n", $7, $2 == "ampi" ? "ours" : "ompi-ucx", r, $4, $11
            }' "$file" >>"$rows" ;;
    *) echo "bench-import: unknown format $fmt" >&2; exit 2 ;;
    esac
done
if [ -n "${BENCH_IMPORT_AREAS:-}" ]; then
    awk -F, -v keep=" $BENCH_IMPORT_AREAS " 'NR == 1 || index(keep, " " $1 " ")' "$rows" >"$rows.tmp" && mv "$rows.tmp" "$rows"
fi
echo "exit statuses: not recorded by the runner of these files (imported by scripts/bench-import.sh)" >>"$out/notes.txt"
