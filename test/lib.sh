# shellcheck shell=bash
# test/lib.sh - shell helpers shared by test/mpi/run.sh and test/gpu/run.sh;
# sourced, never run.  Both scripts print one PASS/FAIL/SKIP line per case
# and a summary; this file holds what they do alike (counting and printing
# results, choosing the compiler and launcher, compiling a test program,
# running one case under timeout(1)), so the two cannot drift apart.  What
# each judges a pass stays in its own script.
#
# The caller sets repo (the repository root) before calling set_tools.
# Check with shellcheck -x (or name lib.sh among the files) so that the
# variables set here are known in the scripts.

# Open MPI refuses root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

npass=0 nfail=0 nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }

# The first FAIL lines and the last lines of a log, joined into one line so
# that each case stays one output line.
tail_of() {
    { grep -m 3 '^FAIL' "$1"; tail -n 4 "$1"; } 2>/dev/null | grep -v '^ *$' |
        tr '\n' '|' | sed 's/|$//; s/|/ | /g' | cut -c1-700
}

# select_programs "KNOWN..." [WANTED...]: the known programs, in their
# order, that the command line asked for (all of them when it named none).
select_programs() {
    local known=$1 prog p
    shift
    for prog in $known; do
        if [ $# -eq 0 ]; then
            echo "$prog"
            continue
        fi
        for p in "$@"; do
            if [ "$p" = "$prog" ]; then
                echo "$prog"
            fi
        done
    done
}

# set_tools MODE SUITE: cc and launcher of MODE (ampi: ours from
# AMPI_PREFIX; ompi: Open MPI's; MPICC / MPIRUN override), bindir
# ($AMPI_BUILD/SUITE, SUITE-ompi for Open MPI builds) and logdir.
set_tools() {
    AMPI_PREFIX=${AMPI_PREFIX:-$repo/.prefix}
    AMPI_BUILD=${AMPI_BUILD:-$repo/.build}
    if [ "$1" = ompi ]; then
        cc=${MPICC:-mpicc}
        launcher=${MPIRUN:-mpirun}
        bindir=$AMPI_BUILD/$2-ompi
    else
        cc=${MPICC:-$AMPI_PREFIX/bin/ampicc}
        launcher=${MPIRUN:-$AMPI_PREFIX/bin/ampirun}
        bindir=$AMPI_BUILD/$2
    fi
    # shellcheck disable=SC2034  # for the sourcing script
    logdir=$bindir/logs
}

# missing_tool MODE NEED_LAUNCHER(yes|no) HINT: after set_tools, prints
# why the compiler (or, when needed, the launcher) cannot be used, or
# nothing.  HINT follows a missing ampicc.
missing_tool() {
    local need_launcher=$2 hint=$3
    if [ "$1" = ampi ]; then
        if ! [ -x "$cc" ] && ! command -v "$cc" >/dev/null 2>&1; then
            echo "ampicc not found ($cc); $hint"
        elif [ "$need_launcher" = yes ] && ! [ -x "$launcher" ] &&
            ! command -v "$launcher" >/dev/null 2>&1; then
            echo "ampirun not found ($launcher)"
        fi
    elif ! command -v "$cc" >/dev/null 2>&1; then
        echo "mpicc not found ($cc)"
    elif [ "$need_launcher" = yes ] &&
        ! command -v "$launcher" >/dev/null 2>&1; then
        echo "mpirun not found ($launcher)"
    fi
}

# compile_test NAME LOG ARGS...: "$cc" with the warnings every test builds
# under, output to LOG; on failure one "FAIL NAME build" line and status 1.
compile_test() {
    local name=$1 log=$2
    shift 2
    if "$cc" -O2 -Wall -Wextra -Werror "$@" >"$log" 2>&1; then
        return 0
    fi
    fail "$name build" "$cc failed (log $log): $(tail_of "$log")"
    return 1
}

# timed_run LOG LIMIT COMMAND...: runs COMMAND under timeout(1) (LIMIT
# seconds, then KILL 5 s later) with no input and all output to LOG; sets
# rc (its exit status) and secs (wall seconds, one decimal).
timed_run() {
    local log=$1 limit=$2 t0 t1
    shift 2
    t0=$(date +%s.%N)
    timeout -k 5 "$limit" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# early_verdict LOG TIMEOUT_TEXT: after timed_run, the failures both suites
# judge alike (killed by the timeout, a FAIL line in the output), or nothing.
early_verdict() {
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "$2 (status $rc)"
    elif grep -q '^FAIL' "$1"; then
        echo "FAIL line in output, exit $rc"
    fi
}

# report_case NAME WHY LOG: PASS when WHY is empty, else FAIL with WHY, the
# time and the end of the log.
report_case() {
    if [ -z "$2" ]; then
        pass "$1"
    else
        fail "$1" "$2 (${secs} s, log $3): $(tail_of "$3")"
    fi
}
