#!/bin/bash
# scripts/bench-instr.sh -- instructions (not time) of a small message's path,
# counted by valgrind's callgrind, for one or more installed builds side by side.
#
# Usage: scripts/bench-instr.sh OUTDIR NAME=PREFIX [NAME=PREFIX ...]
#   PREFIX: an install prefix (bin/ampicc, bin/ampirun) of the build to count.
#   Writes OUTDIR/instr.csv (name,series,value) and OUTDIR/table.md, keeps
#   the callgrind files in OUTDIR/NAME/, and prints the table.
#
# Series (scripts/instr/):
#   vp round trip   pingpong.c, -np 1 +vp 2: per round trip (two 8-byte
#                   sends and two receives, each a switch between the ranks),
#                   the process's main thread in libampi, the program and the
#                   C library's copies (its other functions and UCX's start-up
#                   vary from run to run)
#   MPI_Send, MPI_Recv  pingpong_fifo.c, -np 2: inside each call only
#                   (--toggle-collect), per call, each process (in pid order);
#                   every receive finds its message in its first poll
#   empty poll      idle_wait.c, -np 2: inside the waiting MPI_Recv, per
#                   progress poll that found nothing
# Every count but the last is the difference of a run of 11000 iterations and
# one of 1000, divided by 10000: start-up and shut-down cancel.  A machine's
# load changes none of them by more than a few instructions; they are no
# timings: a cache miss or a mispredicted branch costs more than several
# instructions, and this says nothing of those.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench-instr: valgrind is not installed" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
mkdir -p "$out"
csv=$out/instr.csv
echo "name,series,value" >"$csv"
cg=(valgrind --tool=callgrind)

# total FILE: instructions the file recorded
total() { callgrind_annotate --auto=no "$1" | awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1; exit }'; }
# lib_total FILE: the vp series' sum (see above) over the functions listed
lib_total() {
    callgrind_annotate --auto=no --threshold=100 "$1" | awk '
        /file:function/ { on = 1; next }
        on && /^ *[0-9,]+ \(/ {
            n = $1; gsub(/,/, "", n)
            obj = ""; if (match($0, /\[[^]]*\]$/)) obj = substr($0, RSTART + 1, RLENGTH - 2)
            name = $0; sub(/ \[[^]]*\]$/, "", name); fn = name; sub(/.*:/, "", fn)
            if (fn ~ /^(ucm|ucs|uct|ucp)_/ || fn ~ /sched_yield|gettimeofday|clock_gettime|syscall/) next
            if (obj ~ /libampi/ || obj == prog || obj == "" ||
                (obj ~ /libc\.so/ && fn ~ /memcpy|memmove|errno/)) sum += n
        }
        END { print sum + 0 }' prog="$2"
}
# polls FILE: calls of p2p_progress the file recorded
polls() {
    callgrind_annotate --auto=no --inclusive=yes --tree=caller --threshold=100 "$1" | awk '
        /^ *[0-9,]+ \(.*\) +< / { if (match($0, /\([0-9,]+x\)/)) { c = substr($0, RSTART + 1, RLENGTH - 3); gsub(/,/, "", c); pend += c } next }
        /^ *[0-9,]+ \(.*\) +\* / { if ($0 ~ /:p2p_progress( |$)/) sum += pend; pend = 0; next }
        END { print sum + 0 }'
}
# by_pid FILE...: the files in the order of the pid that ends their names
by_pid() { for f in "$@"; do echo "${f##*.} $f"; done | sort -n | cut -d' ' -f2-; }
per_iter() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 10000 }'; }

names=()
for arg in "$@"; do
    name=${arg%%=*} prefix=${arg#*=}
    names+=("$name")
    dir=$out/$name
    rm -rf "$dir"
    mkdir -p "$dir"
    for p in pingpong pingpong_fifo idle_wait; do
        "$prefix/bin/ampicc" -O2 -g "$here/instr/$p.c" -o "$dir/$p" || { echo "bench-instr: $name: ampicc failed" >&2; exit 1; }
    done
    run() { "$prefix/bin/ampirun" --timeout 900 "$@" >>"$dir/runs.log" 2>&1 || { echo "bench-instr: $name: $* failed (see $dir/runs.log)" >&2; exit 1; }; }
    mkfifo "$dir/to1" "$dir/to0"
    for n in 1000 11000; do
        run -np 1 +vp 2 "${cg[@]}" --separate-threads=yes --callgrind-out-file="$dir/vp.$n.%p" "$dir/pingpong" $n
        for fn in PMPI_Send PMPI_Recv; do
            run -np 2 "${cg[@]}" --collect-atstart=no --toggle-collect=$fn --callgrind-out-file="$dir/$fn.$n.%p" \
                "$dir/pingpong_fifo" $n "$dir/to1" "$dir/to0"
        done
    done
    for ms in 200 1200; do
        run -np 2 "${cg[@]}" --collect-atstart=no --toggle-collect=PMPI_Recv --callgrind-out-file="$dir/idle.$ms.%p" \
            "$dir/idle_wait" $ms
    done
    a=$(ls "$dir"/vp.1000.*-01) b=$(ls "$dir"/vp.11000.*-01)
    echo "$name,vp round trip,$(per_iter "$(lib_total "$a" "$dir/pingpong")" "$(lib_total "$b" "$dir/pingpong")")" >>"$csv"
    for fn in PMPI_Send PMPI_Recv; do
        mapfile -t A < <(by_pid "$dir"/$fn.1000.*)
        mapfile -t B < <(by_pid "$dir"/$fn.11000.*)
        vals=()
        for i in "${!A[@]}"; do vals+=("$(per_iter "$(total "${A[$i]}")" "$(total "${B[$i]}")")"); done
        joined=$(printf '%s / ' "${vals[@]}")
        echo "$name,${fn#P} -np 2,${joined% / }" >>"$csv"
    done
    # the waiting process is the one that polled; instructions per poll
    best() { for f in "$dir"/idle.$1.*; do echo "$(polls "$f") $(total "$f")"; done | sort -n | tail -1; }
    read -r p1 t1 <<<"$(best 200)"
    read -r p2 t2 <<<"$(best 1200)"
    echo "$name,empty poll -np 2,$(awk -v a="$t1" -v b="$t2" -v p="$p1" -v q="$p2" 'BEGIN { printf "%.1f", (b - a) / (q - p) }')" >>"$csv"
done

{
    printf '| series (instructions) |'
    for n in "${names[@]}"; do printf ' %s |' "$n"; done
    printf '\n|---|'
    for n in "${names[@]}"; do printf -- '---|'; done
    printf '\n'
    for s in "vp round trip" "MPI_Send -np 2" "MPI_Recv -np 2" "empty poll -np 2"; do
        printf '| %s |' "$s"
        for n in "${names[@]}"; do printf ' %s |' "$(awk -F, -v n="$n" -v s="$s" '$1 == n && $2 == s { print $3 }' "$csv")"; done
        printf '\n'
    done
} | tee "$out/table.md"
