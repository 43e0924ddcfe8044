#!/usr/bin/env bash
# test/privat/run.sh - globals privatization (`ampicc -privatize`): programs
# with mutable globals of every kind, built privatized, must print their OK
# line and exit 0 in every cell of the matrix (processes x ranks); the same
# binaries run with AMPI_PRIVATIZE=off (one copy of the program per process)
# must print FAIL lines and exit non-zero wherever a process has more than one
# rank -- proof that each program detects shared globals.  globals_so links
# shared libraries: two built with `ampicc -shared` (per rank) and one built
# by plain cc, whose global the globals warning must name, alone, wherever a
# process has more than one rank.  atexit_rank checks
# that each rank's atexit handlers run at that rank's end (privatized only).
#
#   test/privat/run.sh [program ...]
#
# Environment: AMPI_PREFIX (bin/ampicc, bin/ampicxx, bin/ampirun; default
# $repo/.prefix), AMPI_BUILD (binaries and logs; default $repo/.build).
# Output: one PASS/FAIL/SKIP line per case, then a summary line.
set -u

PROGRAMS='globals_c globals_cxx globals_so atexit_rank'
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
        "$cxx" -shared -fPIC -O2 -Wall -Wextra -Werror -o "$bindir/libglobals_libcxx.so" "$here/globals_libcxx.cpp" \
            >"$log" 2>&1 &&
            "$cxx" -privatize -O2 -Wall -Wextra -Werror -o "$bindir/globals_cxx" "$here/globals_cxx.cpp" \
                -L"$bindir" -lglobals_libcxx -Wl,-rpath,"$bindir" >>"$log" 2>&1
        ;;
    globals_so)
        # rpaths of $ORIGIN: the copies come from memory, and $ORIGIN must
        # still name the executable's folder (the plain library has a soname)
        local plain_cc
        plain_cc=$("$cc" -show -c x.c | sed 's/ -c x\.c$//')
        "$cc" -shared -fPIC -O2 -Wall -Wextra -Werror -o "$bindir/libglobals_lib2.so" "$here/globals_lib2.c" >"$log" 2>&1 &&
            "$cc" -shared -fPIC -O2 -Wall -Wextra -Werror -o "$bindir/libglobals_lib.so" "$here/globals_lib.c" \
                -L"$bindir" -lglobals_lib2 -Wl,-rpath,"\$ORIGIN" >>"$log" 2>&1 &&
            $plain_cc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libglobals_plainlib.so \
                -o "$bindir/libglobals_plainlib.so" "$here/globals_plainlib.c" >>"$log" 2>&1 &&
            "$cc" -privatize -O2 -Wall -Wextra -Werror -o "$bindir/globals_so" "$here/globals_so.c" \
                -L"$bindir" -lglobals_lib -lglobals_plainlib -Wl,-rpath,"\$ORIGIN" >>"$log" 2>&1
        ;;
    atexit_rank)
        "$cc" -privatize -O2 -Wall -Wextra -Werror -o "$bindir/$prog" "$here/$prog.c" >"$log" 2>&1
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
            elif grep -q '^FAIL' "$log"; then
                why=$(grep -m1 '^FAIL' "$log")
            elif [ "$prog" = atexit_rank ]; then
                ok=$(grep -c '^atexit_rank: rank [0-9]* handlers OK$' "$log")
                distinct=$(grep '^atexit_rank: rank [0-9]* handlers OK$' "$log" | sort -u | wc -l)
                [ "$ok" -eq "$vp" ] && [ "$distinct" -eq "$vp" ] ||
                    why="$ok handler lines ($distinct ranks), expected one for each of $vp ranks"
            elif ! grep -qx "$prog: OK ($vp ranks)" "$log"; then
                why="no line \"$prog: OK ($vp ranks)\""
            elif [ "$prog" = globals_so ] && [ "$vp" -gt "$np" ]; then
                warned=$(grep 'warning: .*Writable ones' "$log")
                case $warned in
                *lib_counter* | *lib2_counter* | *failures*) why="the globals warning names privatized variables: $warned" ;;
                *plain_shared_counter*) ;;
                *) why="no globals warning naming plain_shared_counter, the plain library's global" ;;
                esac
            fi
        fi
        report_case "privat/$prog ${np}x$vp" "$why" "$log"
    done
    [ "$prog" = atexit_rank ] && continue # handlers, not globals
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
        elif ! grep -q 'warning: .*share its global and static variables (not privatized)' "$log"; then
            why="no globals warning saying that the program's globals are shared"
        fi
        report_case "privat/$prog ${np}x$vp AMPI_PRIVATIZE=off fails" "$why" "$log"
    done
done

echo "privat: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
