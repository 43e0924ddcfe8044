#!/usr/bin/env bash
# test/privat/run.sh - globals privatization (`ampicc -privatize`): programs
# with mutable globals of every kind, built privatized, must print their OK
# line and exit 0 in every cell of the matrix (processes x ranks); the same
# binaries run with AMPI_PRIVATIZE=off (one copy of the program per process)
# must print FAIL lines and exit non-zero wherever a process has more than one
# rank -- proof that each program detects shared globals.
#
#   test/privat/run.sh [program ...]
#
# Environment: AMPI_PREFIX (bin/ampicc, bin/ampicxx, bin/ampirun; default
# $repo/.prefix), AMPI_BUILD (binaries and logs; default $repo/.build).
# Output: one PASS/FAIL/SKIP line per case, then a summary line.
set -u

PROGRAMS='globals_c globals_cxx'
CELLS='1x1 1x4 2x8 2x2'    # PxV: privatized, expect OK
SHARED_CELLS='1x4 2x8'     # AMPI_PRIVATIZE=off, expect FAIL lines
RUN_TIMEOUT=60

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$here/../lib.sh"
case ${1-} in -h | --help)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
set_tools ampi privat
mkdir -p "$logdir" || exit 2
cxx=$AMPI_PREFIX/bin/ampicxx
progs=$(select_programs "$PROGRAMS" "$@")

missing=$(missing_tool ampi yes "install the library first")
if [ -n "$missing" ]; then
    for prog in $progs; do skip "privat/$prog" "$missing"; done
    echo "privat: $npass passed, $nfail failed, $nskip skipped"
    exit 0
fi

# ---- build: objects and an archive compiled with -privatize, then the link
build() {
    local prog=$1 log=$logdir/$1.build.log
    case $prog in
    globals_c)
        "$cc" -privatize -O2 -Wall -Wextra -Werror -c -o "$bindir/globals_archive.o" \
            "$here/globals_archive.c" >"$log" 2>&1 &&
            rm -f "$bindir/libglobals_archive.a" &&
            ar rcs "$bindir/libglobals_archive.a" "$bindir/globals_archive.o" >>"$log" 2>&1 &&
            "$cc" -privatize -O2 -Wall -Wextra -Werror -o "$bindir/globals_c" "$here/globals_c.c" \
                -L"$bindir" -lglobals_archive >>"$log" 2>&1
        ;;
    globals_cxx)
        "$cxx" -privatize -O2 -Wall -Wextra -Werror -o "$bindir/globals_cxx" "$here/globals_cxx.cpp" >"$log" 2>&1
        ;;
    esac || {
        fail "privat/$prog build" "failed (log $log): $(tail_of "$log")"
        return 1
    }
}

for prog in $progs; do
    build "$prog" || continue
    for cell in $CELLS; do
        np=${cell%x*} vp=${cell#*x}
        log=$logdir/$prog.$cell.log
        timed_run "$log" $((RUN_TIMEOUT + 30)) "$launcher" --timeout "$RUN_TIMEOUT" -np "$np" +vp "$vp" "$bindir/$prog" -a -a -n 5 -r 3:9
        why=$(early_verdict "$log" "timed out")
        if [ -z "$why" ]; then
            if [ "$rc" -ne 0 ]; then
                why="exit $rc, expected 0"
            elif ! grep -qx "$prog: OK ($vp ranks)" "$log"; then
                why="no line \"$prog: OK ($vp ranks)\""
            fi
        fi
        report_case "privat/$prog ${np}x$vp" "$why" "$log"
    done
    for cell in $SHARED_CELLS; do
        np=${cell%x*} vp=${cell#*x}
        log=$logdir/$prog.$cell.shared.log
        timed_run "$log" $((RUN_TIMEOUT + 30)) env AMPI_PRIVATIZE=off \
            "$launcher" --timeout "$RUN_TIMEOUT" -np "$np" +vp "$vp" "$bindir/$prog" -a -a -n 5 -r 3:9
        why=
        if [ "$rc" -eq 0 ]; then
            why="exit 0 with one copy per process: the program cannot tell shared globals"
        elif ! grep -q "^FAIL rank" "$log"; then
            why="exit $rc without FAIL lines"
        fi
        report_case "privat/$prog ${np}x$vp AMPI_PRIVATIZE=off fails" "$why" "$log"
    done
done

echo "privat: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
