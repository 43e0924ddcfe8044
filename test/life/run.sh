#!/usr/bin/env bash
# test/life/run.sh - how a program starts and ends: main keeps C and C++
# semantics (ampicc takes control at link time, mpi.h renames nothing),
# exit and return on one rank, atexit handlers.  Each case builds a program
# in this folder with ampicc/ampicxx and runs it over a few (processes P x
# ranks V) cells, checking the exit status and the output.
#
#   test/life/run.sh [case ...]
#
# Environment: AMPI_PREFIX (bin/ampicc, bin/ampirun; default $repo/.prefix),
# AMPI_BUILD (binaries and logs under life/; default $repo/.build).
# Output: one PASS/FAIL/SKIP line per case, then a summary line; exit
# status 1 if anything failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$here/../lib.sh"
set_tools ampi life
cxx=$AMPI_PREFIX/bin/ampicxx
mkdir -p "$logdir" || exit 2
only=("$@")

RUN_TIMEOUT=60   # ampirun --timeout
OUTER_TIMEOUT=90 # timeout(1) around every run
CELLS='1x1 1x4 2x4 4x4'

wanted() { # case name: whether the command line asked for it
    [ ${#only[@]} -eq 0 ] && return 0
    local c
    for c in "${only[@]}"; do [ "$c" = "$1" ] && return 0; done
    return 1
}

# build NAME COMPILER SOURCES...: bin/NAME at -O2 with every warning an error.
build() {
    local name=$1 compiler=$2
    shift 2
    if "$compiler" -O2 -Wall -Wextra -Werror -o "$bindir/$name" "$@" >"$logdir/$name.build.log" 2>&1; then
        return 0
    fi
    fail "life/$name build" "$compiler failed (log $logdir/$name.build.log): $(tail_of "$logdir/$name.build.log")"
    return 1
}

# run_cell NAME P V: runs bin/NAME under ampirun; sets rc, secs, log.
run_cell() {
    log=$logdir/$1.np$2.vp$3.log
    timed_run "$log" "$OUTER_TIMEOUT" env AMPI_WARN_GLOBALS=0 "$launcher" --timeout "$RUN_TIMEOUT" \
        -np "$2" +vp "$3" "$bindir/$1"
}

count() { grep -c -- "$1" "$log"; }

# check_lines NAME P V STATUS PATTERN: exit STATUS and V lines with PATTERN.
check_lines() {
    local name=$1 p=$2 v=$3 status=$4 pattern=$5 why=
    run_cell "$name" "$p" "$v"
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ] && [ "$rc" -ne "$status" ]; then
        why="exit $rc, expected $status"
    elif [ -z "$why" ] && [ "$(count "$pattern")" -ne "$v" ]; then
        why="$(count "$pattern") lines '$pattern', expected $v"
    fi
    report_case "life/$name np=$p vp=$v" "$why" "$log"
}

# check_ends NAME P V STATUS MESSAGE: the job ends with STATUS within
# MAX_END_S seconds and stderr has MESSAGE.
MAX_END_S=10
check_ends() {
    local name=$1 p=$2 v=$3 status=$4 message=$5 why=
    run_cell "$name" "$p" "$v"
    why=$(early_verdict "$log" "hung: timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ] && [ "$rc" -ne "$status" ]; then
        why="exit $rc, expected $status"
    elif [ -z "$why" ] && ! grep -q -- "$message" "$log"; then
        why="no message '$message'"
    elif [ -z "$why" ] && awk -v s="$secs" -v m="$MAX_END_S" 'BEGIN { exit !(s > m) }'; then
        why="took ${secs} s to end, more than ${MAX_END_S} s"
    fi
    report_case "life/$name np=$p vp=$v" "$why" "$log"
}

tool_missing=$(missing_tool ampi yes "install the library first")
if [ -n "$tool_missing" ]; then
    skip life "$tool_missing"
    echo "life: $npass passed, $nfail failed, $nskip skipped"
    exit 0
fi

# ---- main keeps its C and C++ semantics ----------------------------------
if wanted noreturn_c && build noreturn_c "$cc" "$here/noreturn_c.c"; then
    for cell in $CELLS; do
        check_lines noreturn_c "${cell%x*}" "${cell#*x}" 0 '^noreturn_c: rank .* finished'
    done
fi
if wanted noreturn_cxx && build noreturn_cxx "$cxx" "$here/noreturn_cxx.cpp"; then
    for cell in $CELLS; do
        check_lines noreturn_cxx "${cell%x*}" "${cell#*x}" 0 '^noreturn_cxx: rank .* finished'
    done
fi
if wanted main_elsewhere &&
    build main_elsewhere "$cc" "$here/main_elsewhere.c" "$here/main_elsewhere_mpi.c"; then
    for cell in $CELLS; do
        check_lines main_elsewhere "${cell%x*}" "${cell#*x}" 0 '^main_elsewhere: main returns 0'
    done
fi

# ---- how a rank ends --------------------------------------------------------
if wanted exit_after_finalize && build exit_after_finalize "$cc" "$here/exit_after_finalize.c"; then
    for cell in $CELLS 4x16; do
        check_lines exit_after_finalize "${cell%x*}" "${cell#*x}" 5 '^exit_after_finalize: rank .* finished'
    done
fi
if wanted exit_before_finalize && build exit_before_finalize "$cc" "$here/exit_before_finalize.c"; then
    for cell in $CELLS; do
        v=${cell#*x}
        check_ends exit_before_finalize "${cell%x*}" "$v" 7 "rank $((v - 1)) called exit(7) before MPI_Finalize"
    done
fi
if wanted return_no_finalize && build return_no_finalize "$cc" "$here/return_no_finalize.c"; then
    for cell in $CELLS; do
        v=${cell#*x}
        check_ends return_no_finalize "${cell%x*}" "$v" 1 \
            "rank $((v - 1)) returned 0 from main without calling MPI_Finalize"
    done
fi
if wanted atexit_once && build atexit_once "$cc" "$here/atexit_once.c"; then
    for cell in $CELLS 2x7; do
        p=${cell%x*} v=${cell#*x}
        run_cell atexit_once "$p" "$v"
        why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
        handlers=$(count '^atexit_once: handler')
        complete=$(grep '^atexit_once: handler' "$log" | awk '$7 != $9' | wc -l)
        if [ -z "$why" ] && [ "$rc" -ne 0 ]; then
            why="exit $rc, expected 0"
        elif [ -z "$why" ] && [ "$handlers" -ne "$p" ]; then
            why="the handler ran $handlers times, expected once per process ($p)"
        elif [ -z "$why" ] && [ "$complete" -ne 0 ]; then
            why="a handler ran before every rank of its process finished"
        fi
        report_case "life/atexit_once np=$p vp=$v" "$why" "$log"
    done
fi

echo "life: $npass passed, $nfail failed, $nskip skipped (logs in $logdir)"
[ $nfail -eq 0 ]
