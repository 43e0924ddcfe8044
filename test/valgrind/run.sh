#!/bin/bash
# Runs a few MPI test programs under valgrind's memcheck: no invalid access,
# no use of uninitialised memory, no definite leak (PMIx's own strings are
# suppressed).  Uses the binaries test/mpi/run.sh built in $AMPI_BUILD/mpi.
# rma_passive over two processes runs the one-sided progress thread, which
# answers lock requests and ends when the window's worker closes: what it
# allocated has to end with it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${AMPI_PREFIX:-$here/../../.prefix}
bins=${AMPI_BUILD:-$here/../../.build}/mpi
cases=("pt2pt_basic 1 4" "order 2 4" "probe 2 2" "coll_basic 1 4" "comm_basic 2 4" "rma_passive 2 2")
if ! command -v valgrind >/dev/null 2>&1; then
    for c in "${cases[@]}"; do set -- $c; echo "SKIP valgrind/$1: valgrind is not installed"; done
    exit 0
fi
# memcheck cannot run sanitizer builds (ASan maps its own shadow memory)
# (grep reads all of ldd's output: with grep -q, ldd can die of SIGPIPE
# and pipefail turns the match into a failure, and the cases ran)
if ldd "$prefix/lib/libampi.so" 2>/dev/null | grep 'libasan\|libubsan' >/dev/null; then
    for c in "${cases[@]}"; do set -- $c; echo "SKIP valgrind/$1: sanitizer build (valgrind cannot run it)"; done
    exit 0
fi
vg=(valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite
    --errors-for-leak-kinds=definite --suppressions="$here/pmix.supp")
status=0
for c in "${cases[@]}"; do
    set -- $c
    name="valgrind/$1 np=$2 vp=$3"
    if [ ! -x "$bins/$1" ]; then
        echo "SKIP $name: $bins/$1 not built (run test/mpi/run.sh first)"
        continue
    fi
    out=$(timeout -k 5 300 "$prefix/bin/ampirun" --timeout 280 -np "$2" +vp "$3" "${vg[@]}" "$bins/$1" 2>&1)
    rc=$?
    if [ $rc = 0 ]; then
        echo "PASS $name"
    else
        echo "FAIL $name: exit $rc: $(grep -m3 -E '==[0-9]+== (Invalid|Conditional|Use of|[0-9,]+ bytes in)' <<<"$out" | tr '\n' ' ')"
        status=1
    fi
done
exit $status
