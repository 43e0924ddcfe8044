#!/usr/bin/env bash
# test/life/run.sh - how a program starts and ends: main keeps C and C++
# semantics (ampicc takes control at link time, mpi.h renames nothing),
# exit and return on one rank, atexit handlers; and library mode, where the
# program owns main (plain `cc -lampi`, a plug-in, Python with mpi4py) and
# each process is one rank, under ampirun, Open MPI's mpirun and as a
# singleton, with MPI calls from several OS threads.  Each case builds a
# program in this folder and runs it over a few (processes P x ranks V)
# cells, checking the exit status and the output.  mpi4py is built from
# PyPI's source package with MPICC=ampicc into a virtual environment under
# AMPI_BUILD (kept while mpi.h is unchanged); without PyPI that case skips.
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

# (matches, not lines: two processes' lines can arrive joined through a launcher)
count() { grep -o -- "$1" "$log" | wc -l; }

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

# ---- the globals warning ----------------------------------------------------
# check_warn NAME P V SETTING WANT: WANT (0 or 1) warnings at MPI_Init.
check_warn() {
    local name=$1 p=$2 v=$3 setting=$4 want=$5 why= n
    log=$logdir/$name.warn.np$p.vp$v.${setting%=*}.log
    timed_run "$log" "$OUTER_TIMEOUT" env "$setting" "$launcher" --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" \
        "$bindir/$name"
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    n=$(count 'share its global and static variables')
    if [ -z "$why" ] && [ "$rc" -ne 0 ]; then
        why="exit $rc, expected 0"
    elif [ -z "$why" ] && [ "$n" -ne "$want" ]; then
        why="$n globals warnings, expected $want"
    elif [ -z "$why" ] && [ "$want" -eq 1 ] && [ "$name" = globals_warn ]; then
        for sym in hits_counter scale_table 'ncalls\.' 'section "Global variables"' AMPI_WARN_GLOBALS=0; do
            grep 'share its global' "$log" | grep -q -- "$sym" || why="the warning does not name $sym"
        done
    fi
    report_case "life/$name globals warning np=$p vp=$v $setting" "$why" "$log"
}
if wanted globals_warn && build globals_warn "$cc" "$here/globals_warn.c"; then
    check_warn globals_warn 1 4 AMPI_WARN_GLOBALS=1 1
    check_warn globals_warn 2 4 AMPI_WARN_GLOBALS=1 1
    check_warn globals_warn 4 16 AMPI_WARN_GLOBALS=1 1
    check_warn globals_warn 2 2 AMPI_WARN_GLOBALS=1 0
    check_warn globals_warn 2 4 AMPI_WARN_GLOBALS=0 0
fi
# programs without globals of their own get no warning (the C and C++
# runtimes' own data is not the program's)
for prog in noreturn_c noreturn_cxx; do
    if wanted globals_warn && [ -x "$bindir/$prog" ]; then
        check_warn "$prog" 2 8 AMPI_WARN_GLOBALS=1 0
    fi
done

# ---- library mode ----------------------------------------------------------
# The launchers: ours, Open MPI's (as root it needs the two OMPI_ALLOW_*
# variables, which lib.sh exports) and none (a singleton).
ompi_run=
for c in "${OMPI_MPIRUN:-}" /usr/bin/mpirun.openmpi /usr/bin/mpirun; do
    if [ -n "$c" ] && [ -x "$c" ]; then ompi_run=$c && break; fi
done
# launch HOW N: the command prefix that starts N processes
launch() {
    case $1 in
    ampirun) echo "$launcher --timeout $RUN_TIMEOUT -np $2" ;;
    ompi) echo "env -u AMPI_VP $ompi_run --oversubscribe -np $2" ;;
    singleton) echo "env -u AMPI_VP" ;;
    esac
}

# check_lib NAME HOW N STATUS PATTERN COMMAND...: COMMAND started by HOW
# with N processes ends with STATUS and prints N lines with PATTERN.
check_lib() {
    local name=$1 how=$2 n=$3 status=$4 pattern=$5 why=
    shift 5
    if [ "$how" = ompi ] && [ -z "$ompi_run" ]; then
        skip "life/$name $how np=$n" "Open MPI's mpirun not found"
        return
    fi
    log=$logdir/$name.$how.np$n$(echo "${extra_name:-}" | tr -c 'A-Za-z0-9\n' '_').log
    # shellcheck disable=SC2046  # the launcher's words
    timed_run "$log" "$OUTER_TIMEOUT" $(launch "$how" "$n") "$@"
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ] && [ "$rc" -ne "$status" ]; then
        why="exit $rc, expected $status"
    elif [ -z "$why" ] && [ "$(count "$pattern")" -ne "$n" ]; then
        why="$(count "$pattern") lines '$pattern', expected $n"
    fi
    report_case "life/$name $how np=$n${extra_name:-}" "$why" "$log"
}

# Plain cc: the compiler command of ampicc (with its sanitizer flags, if
# any) but none of its link flags, and -lampi.
plain_cc=$("$cc" -show -c x.c | sed 's/ -c x\.c$//')
plain_link() { # OUT SOURCE [LIBS...]
    local out=$1 src=$2 log=$logdir/$(basename "$1").build.log
    shift 2
    # shellcheck disable=SC2086  # the command's words
    if $plain_cc -O2 -Wall -Wextra -Werror -o "$out" "$src" "$@" >"$log" 2>&1; then
        return 0
    fi
    fail "life/$(basename "$out") build" "plain cc failed (log $log): $(tail_of "$log")"
    return 1
}
libdir=$AMPI_PREFIX/lib
lampi=(-L"$libdir" -Wl,-rpath,"$libdir" -lampi)

if wanted libmode && plain_link "$bindir/libmode" "$here/libmode.c" "${lampi[@]}"; then
    pat='^libmode: rank .* OK'
    check_lib libmode ampirun 1 0 "$pat" "$bindir/libmode"
    extra_name=" multiple" check_lib libmode ampirun 2 0 "$pat" "$bindir/libmode" multiple
    extra_name=" single" check_lib libmode ampirun 4 0 "$pat" "$bindir/libmode" single
    extra_name=" serialized" check_lib libmode ompi 2 0 "$pat" "$bindir/libmode" serialized
    extra_name=" funneled" check_lib libmode singleton 1 0 "$pat" "$bindir/libmode" funneled
    # +vp needs ranks as user-level threads, which need ampicc's start-up
    run_cell libmode 2 4
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ] && [ "$rc" -eq 0 ]; then
        why="exit 0: +vp 4 in library mode was not refused"
    elif [ -z "$why" ] && ! grep -q 'library mode' "$log"; then
        why="no message naming library mode"
    fi
    report_case "life/libmode np=2 vp=4 refused" "$why" "$log"
fi
if wanted libmode_threads &&
    plain_link "$bindir/libmode_threads" "$here/libmode_threads.c" "${lampi[@]}" -pthread; then
    pat='^libmode_threads: rank .* OK'
    check_lib libmode_threads ampirun 2 0 "$pat" "$bindir/libmode_threads"
    check_lib libmode_threads ampirun 4 0 "$pat" "$bindir/libmode_threads"
    check_lib libmode_threads ompi 2 0 "$pat" "$bindir/libmode_threads"
    check_lib libmode_threads singleton 1 0 "$pat" "$bindir/libmode_threads"
fi
if wanted plugin && build libplugin.so "$cc" -shared -fPIC "$here/plugin.c" &&
    plain_link "$bindir/plugin_host" "$here/plugin_host.c" -ldl; then
    pat='^plugin: rank .* OK'
    check_lib plugin ampirun 2 0 "$pat" "$bindir/plugin_host" "$bindir/libplugin.so"
    check_lib plugin ompi 2 0 "$pat" "$bindir/plugin_host" "$bindir/libplugin.so"
    check_lib plugin singleton 1 0 "$pat" "$bindir/plugin_host" "$bindir/libplugin.so"
fi

# mpi4py: PyPI's source package built with MPICC=ampicc (at -O0: the test
# needs it built, not fast, and its generated C file is large).
mpi4py_venv() {
    local key venv=$AMPI_BUILD/life/mpi4py-venv log=$logdir/mpi4py.build.log
    key=$(cat "$AMPI_PREFIX/include/mpi.h" "$cc" | sha256sum | cut -c1-16)
    if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/ampi-key" 2>/dev/null)" = "$key" ] &&
        "$venv/bin/python" -c 'import mpi4py' 2>/dev/null; then
        echo "$venv"
        return 0
    fi
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
        echo "SKIP:python3 has no venv/ensurepip module"
        return 0
    fi
    if ! python3 -c 'import urllib.request as u; u.urlopen("https://pypi.org/simple/mpi4py/", timeout=15)' \
        >/dev/null 2>&1; then
        echo "SKIP:PyPI (https://pypi.org) cannot be reached"
        return 0
    fi
    rm -rf "$venv"
    if python3 -m venv "$venv" >"$log" 2>&1 &&
        timeout 2400 env MPICC="$cc" CFLAGS="-O0 -g0" "$venv/bin/pip" install --no-cache-dir --no-binary mpi4py mpi4py \
            >>"$log" 2>&1 && "$venv/bin/python" -c 'import mpi4py' >>"$log" 2>&1; then
        echo "$key" >"$venv/ampi-key"
        echo "$venv"
        return 0
    fi
    echo "FAIL:building mpi4py with MPICC=ampicc failed (log $log): $(tail_of "$log")"
}
if wanted mpi4py; then
    venv=$(mpi4py_venv)
    case $venv in
    SKIP:*) # one line per case, so that the group's count stays the same
        for c in "ampirun np=2" "ampirun np=2 sys.exit(3)" "ompi np=2" "singleton np=1"; do
            skip "life/mpi4py $c" "${venv#SKIP:}"
        done
        ;;
    FAIL:*) fail "life/mpi4py build" "${venv#FAIL:}" ;;
    *)
        pat='mpi4py_ring: rank [0-9]* of [0-9]* OK'
        py=("$venv/bin/python" "$here/mpi4py_ring.py")
        # A sanitizer build (./test.sh --asan): python is not linked with
        # ASan, so its runtime has to come first (LD_PRELOAD, the one
        # libampi names), and the interpreter's allocations that it leaves
        # for exit to free are not ours to report (detect_leaks=0, for
        # python alone: our C programs keep leak detection).
        asan_rt=$(ldd "$libdir/libampi.so" 2>/dev/null | awk '$1 ~ /^libasan\.so/ { print $3; exit }')
        if [ -n "$asan_rt" ]; then
            py=(env LD_PRELOAD="$asan_rt${LD_PRELOAD:+:$LD_PRELOAD}"
                ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "${py[@]}")
        fi
        check_lib mpi4py ampirun 2 0 "$pat" "${py[@]}"
        extra_name=" sys.exit(3)" check_lib mpi4py ampirun 2 3 "$pat" "${py[@]}" 3
        check_lib mpi4py ompi 2 0 "$pat" "${py[@]}"
        check_lib mpi4py singleton 1 0 "$pat" "${py[@]}"
        ;;
    esac
fi

echo "life: $npass passed, $nfail failed, $nskip skipped (logs in $logdir)"
[ $nfail -eq 0 ]
