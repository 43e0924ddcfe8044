#!/bin/bash
# shellcheck disable=SC2015  # checks read "cond && cond || fail" on purpose
# Tests of ampirun, the launcher with the embedded PMIx server.
#
#   AMPI_PREFIX=<install prefix> AMPI_BUILD=<build dir> test/launch/run.sh
#
# Uses $AMPI_PREFIX/bin/ampirun and $AMPI_BUILD/test/launch/pmix_probe;
# whichever is missing is built with gcc into a temporary directory.
# Prints "PASS name", "FAIL name: why" or "SKIP name: reason" per case and
# exits 1 if any case failed.  Every ampirun run is bounded by timeout(1),
# so the whole runner stays well under 30 s.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ampirun-test.XXXXXX") || exit 1
failures=0
bg_pid=

# Stop a background ampirun (run under timeout(1), which passes SIGTERM on)
# and wait for it: it ends its processes before it exits.
stop_background() {
    [ -n "$bg_pid" ] || return
    kill -TERM "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
    bg_pid=
}

cleanup() {
    stop_background
    rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failures=$((failures + 1)); }
skip() { echo "SKIP $1: $2"; }

# ---- the programs under test ----
ampirun=${AMPI_PREFIX:+$AMPI_PREFIX/bin/ampirun}
probe=${AMPI_BUILD:+$AMPI_BUILD/test/launch/pmix_probe}
need_build=
{ [ -n "$ampirun" ] && [ -x "$ampirun" ]; } || need_build=1
{ [ -n "$probe" ] && [ -x "$probe" ]; } || need_build=1
if [ -n "$need_build" ]; then
    if ! pkg-config --exists pmix; then
        skip all "no ampirun/pmix_probe given and PMIx not found by pkg-config"
        exit 0
    fi
    flags="-std=gnu11 -O1 -Wall -Wextra -Werror $(pkg-config --cflags pmix)"
    libs=$(pkg-config --libs pmix)
    if [ -z "$ampirun" ] || [ ! -x "$ampirun" ]; then
        ampirun=$work/ampirun
        # shellcheck disable=SC2086
        gcc $flags "$srcdir"/src/launch/*.c $libs -o "$ampirun" 2>"$work/build.log" ||
            { fail build "ampirun: $(head -5 "$work/build.log")"; exit 1; }
    fi
    if [ -z "$probe" ] || [ ! -x "$probe" ]; then
        probe=$work/pmix_probe
        # shellcheck disable=SC2086
        gcc $flags "$here/pmix_probe.c" $libs -o "$probe" 2>"$work/build.log" ||
            { fail build "pmix_probe: $(head -5 "$work/build.log")"; exit 1; }
    fi
fi

# ---- helpers ----
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run ARGS...: runs ampirun with a fresh private TMPDIR; sets rc, out, err
# (file names), ms (wall time) and checks the launcher left no directory.
run() {
    out=$work/out err=$work/err
    rm -rf "$work/tmp" && mkdir "$work/tmp"
    local t0
    t0=$(now_ms)
    TMPDIR=$work/tmp timeout -k 2 "${RUN_LIMIT:-15}" "$ampirun" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    ms=$(($(now_ms) - t0))
    leftover=$(ls -A "$work/tmp")
}

# Pids of the probes of the last run (from their "probe rank R pid P" lines).
probe_pids() { sed -n 's/^probe rank [0-9]* pid \([0-9]*\)$/\1/p' "$out"; }
pid_of_rank() { sed -n "s/^probe rank $1 pid \\([0-9]*\\)\$/\\1/p" "$out"; }

# Empty when every probe of the last run is gone, else the survivors.
survivors() {
    local p alive=
    for p in $(probe_pids); do
        kill -0 "$p" 2>/dev/null && alive="$alive $p"
    done
    echo "$alive"
}

# Exactly one line equal to $2 in file $1?
has_line() { [ "$(grep -cxF -- "$2" "$1")" = 1 ]; }

# ---- cases ----
exchange() { # -np N: every rank reports the right job and a verified exchange
    local n=$1 name="exchange_np$1" r peers
    run -np "$n" "$probe"
    peers=$(seq -s, 0 $((n - 1)))
    [ "$rc" = 0 ] || { fail "$name" "exit status $rc: $(head -3 "$err")"; return; }
    for ((r = 0; r < n; r++)); do
        has_line "$out" "probe rank $r of $n local_rank $r local_size $n peers $peers exchange ok" ||
            { fail "$name" "rank $r: $(grep "rank $r " "$out" | tail -1)"; return; }
    done
    [ "$(grep -c '^probe rank .* exchange ok$' "$out")" = "$n" ] ||
        { fail "$name" "expected $n exchange lines"; return; }
    [ -z "$leftover" ] || { fail "$name" "left in TMPDIR: $leftover"; return; }
    pass "$name"
}

exit_status() {
    run -np 3 "$probe" --exit 1:3
    local pid1
    pid1=$(pid_of_rank 1)
    [ "$rc" = 3 ] || { fail exit_status "exit status $rc, expected 3"; return; }
    has_line "$err" "ampirun: process 1 (pid $pid1) exited with status 3" ||
        { fail exit_status "message: $(cat "$err")"; return; }
    [ -z "$(survivors)" ] || { fail exit_status "still running:$(survivors)"; return; }
    pass exit_status
}

abort_case() { # NAME PROBE_ARGS...: the abort message, status 5, all gone within 2 s
    local name=$1 limit=2000 t_abort t_gone i
    shift
    out=$work/out err=$work/err
    rm -rf "$work/tmp" && mkdir "$work/tmp"
    TMPDIR=$work/tmp timeout -k 2 15 "$ampirun" -np 4 "$probe" --abort 2 "$@" \
        >"$out" 2>"$err" </dev/null &
    bg_pid=$!
    # Watch the processes themselves (ampirun's own exit may lag, e.g. under
    # a sanitizer): from the abort until the last one is gone.
    # (The lines of different processes may arrive in any order.)
    for ((i = 0; i < 500; i++)); do
        grep -q '^probe rank 2 aborts at' "$out" && [ "$(probe_pids | wc -l)" = 4 ] && break
        kill -0 "$bg_pid" 2>/dev/null || break
        sleep 0.02
    done
    for ((i = 0; i < 500; i++)); do
        [ -z "$(survivors)" ] && break
        sleep 0.02
    done
    t_gone=$(now_ms)
    wait "$bg_pid"
    rc=$?
    bg_pid=
    t_abort=$(sed -n 's/^probe rank 2 aborts at \([0-9]*\) ms$/\1/p' "$out")
    [ "$rc" = 5 ] || { fail "$name" "exit status $rc, expected 5: $(head -3 "$err")"; return; }
    has_line "$err" "ampirun: process 2 (pid $(pid_of_rank 2)) ended the job with status 5: probe rank 2 aborts" ||
        { fail "$name" "message: $(cat "$err")"; return; }
    # All four passed a fence before the abort, so all four printed a pid.
    [ "$(probe_pids | wc -l)" = 4 ] || { fail "$name" "not all 4 probes started"; return; }
    [ -z "$(survivors)" ] || { fail "$name" "still running:$(survivors)"; return; }
    [ -n "$t_abort" ] || { fail "$name" "no abort time printed"; return; }
    [ $((t_gone - t_abort)) -lt "$limit" ] ||
        { fail "$name" "processes gone $((t_gone - t_abort)) ms after the abort (limit $limit)"; return; }
    [ -z "$(ls -A "$work/tmp")" ] || { fail "$name" "left in TMPDIR: $(ls -A "$work/tmp")"; return; }
    pass "$name"
}

signal_death() {
    run -np 2 "$probe" --segv 1
    local pid1
    pid1=$(pid_of_rank 1)
    [ "$rc" = 139 ] || { fail signal_death "exit status $rc, expected 139"; return; }
    has_line "$err" "ampirun: process 1 (pid $pid1) killed by signal 11 (Segmentation fault)" ||
        { fail signal_death "message: $(cat "$err")"; return; }
    [ -z "$(survivors)" ] || { fail signal_death "still running:$(survivors)"; return; }
    pass signal_death
}

no_finalize() {
    run -np 3 "$probe" --nofinalize 0
    local pid0
    pid0=$(pid_of_rank 0)
    [ "$rc" != 0 ] || { fail no_finalize "exit status 0"; return; }
    has_line "$err" "ampirun: process 0 (pid $pid0) exited without finalizing" ||
        { fail no_finalize "message: $(cat "$err")"; return; }
    [ -z "$(survivors)" ] || { fail no_finalize "still running:$(survivors)"; return; }
    pass no_finalize
}

timeout_case() {
    run --timeout 1 -np 2 "$probe" --hang --ignore-term
    [ "$rc" = 124 ] || { fail timeout "exit status $rc, expected 124"; return; }
    grep -q '^ampirun: job timed out after 1 seconds' "$err" ||
        { fail timeout "message: $(cat "$err")"; return; }
    [ "$(grep -c '^probe rank [01] hanging$' "$out")" = 2 ] ||
        { fail timeout "probes did not reach the hang"; return; }
    # 1 s limit + SIGKILL after the grace period (SIGTERM is ignored).
    [ "$ms" -ge 1000 ] && [ "$ms" -lt 3500 ] || { fail timeout "took $ms ms"; return; }
    [ -z "$(survivors)" ] || { fail timeout "still running:$(survivors)"; return; }
    pass timeout
}

descendants() { # what a wrapper shell started in the background ends with the job
    # shellcheck disable=SC2016  # expanded by the launched shell
    run --timeout 1 -np 2 sh -c 'sleep 30 & echo "probe rank 0 pid $!"; wait'
    [ "$rc" = 124 ] || { fail descendants "exit status $rc, expected 124"; return; }
    [ "$(probe_pids | wc -l)" = 2 ] || { fail descendants "no background pids printed"; return; }
    [ -z "$(survivors)" ] || { fail descendants "still running:$(survivors)"; return; }
    pass descendants
}

forwarding() {
    local n=3 lines=300 r
    run -np $n "$probe" --print $lines
    [ "$rc" = 0 ] || { fail stdout_forwarding "exit status $rc"; return; }
    for ((r = 0; r < n; r++)); do
        # Every line, whole and in order, per process.
        if ! diff <(grep "^probe rank $r line " "$out") \
            <(seq 0 $((lines - 1)) | sed "s/^/probe rank $r line /") >/dev/null; then
            fail stdout_forwarding "rank $r lines missing, mangled or out of order"
            return
        fi
        has_line "$err" "probe rank $r to stderr" ||
            { fail stdout_forwarding "rank $r stderr line missing"; return; }
    done
    [ "$(wc -l <"$out")" = $((n * (lines + 2))) ] ||
        { fail stdout_forwarding "unexpected extra or broken lines"; return; }
    pass stdout_forwarding
}

tag_output() {
    run --tag-output -np 2 "$probe" --print 5
    [ "$rc" = 0 ] || { fail tag_output "exit status $rc"; return; }
    local total tagged
    total=$(wc -l <"$out")
    # Each line carries the tag of the process that printed it.
    tagged=$(grep -cE '^\[([0-9]+)\] probe rank \1 ' "$out")
    [ "$total" = 14 ] && [ "$tagged" = 14 ] ||
        { fail tag_output "$tagged of $total lines tagged correctly (want 14: pid, exchange, 5 lines per rank)"; return; }
    has_line "$err" "[1] probe rank 1 to stderr" || { fail tag_output "stderr not tagged"; return; }
    pass tag_output
}

virtual_ranks() {
    run -np 2 +vp 8 "$probe" --env
    [ "$rc" = 0 ] && has_line "$out" "probe rank 0 AMPI_VP=8" && has_line "$out" "probe rank 1 AMPI_VP=8" ||
        { fail vp "+vp 8: rc $rc, $(grep AMPI_VP "$out" | tr '\n' ' ')"; return; }
    run -np 3 "$probe" --env
    [ "$rc" = 0 ] && [ "$(grep -cx 'probe rank [0-2] AMPI_VP=3' "$out")" = 3 ] ||
        { fail vp "default V != P: $(grep AMPI_VP "$out" | tr '\n' ' ')"; return; }
    run -np 4 +vp 2 "$probe"
    [ "$rc" != 0 ] && grep -q 'smaller than -np' "$err" && [ -z "$(probe_pids)" ] ||
        { fail vp "V < P accepted (rc $rc)"; return; }
    pass vp
}

non_pmix_program() {
    run -np 2 hostname
    local want
    want=$(hostname)
    [ "$rc" = 0 ] || { fail hostname "exit status $rc: $(cat "$err")"; return; }
    [ "$(grep -cxF "$want" "$out")" = 2 ] && [ "$(wc -l <"$out")" = 2 ] ||
        { fail hostname "output: $(cat "$out")"; return; }
    pass hostname
}

exports() {
    # shellcheck disable=SC2016  # expanded by the launched shell
    run -np 2 -x AMPI_LAUNCH_TEST=v4lue sh -c 'echo "got $AMPI_LAUNCH_TEST"'
    [ "$rc" = 0 ] && [ "$(grep -cx 'got v4lue' "$out")" = 2 ] ||
        { fail export "rc $rc, output: $(cat "$out")"; return; }
    pass export
}

stdin_case() {
    local token="tok$RANDOM$$"
    out=$work/out err=$work/err
    echo "$token" | timeout -k 2 15 "$ampirun" -np 2 "$probe" --stdin >"$out" 2>"$err"
    rc=$?
    [ "$rc" = 0 ] && has_line "$out" "probe rank 0 stdin: $token" &&
        has_line "$out" "probe rank 1 stdin: <eof>" ||
        { fail stdin "rc $rc, $(grep stdin: "$out" | tr '\n' ' ')"; return; }
    pass stdin
}

ctrl_c() {
    out=$work/out err=$work/err
    # Job control on, so that the background job does not start with SIGINT
    # ignored (what a non-interactive shell does to '&' commands).
    set -m
    timeout -k 2 15 "$ampirun" -np 3 "$probe" --hang >"$out" 2>"$err" </dev/null &
    bg_pid=$!
    set +m
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(grep -c '^probe rank [0-2] hanging$' "$out")" = 3 ] && break
        sleep 0.05
    done
    if [ "$i" = 100 ]; then
        stop_background
        fail ctrl_c "probes did not start"
        return
    fi
    # timeout(1) is in between: signal ampirun itself, its child.
    local launcher t0
    launcher=$(pgrep -P "$bg_pid" | head -1)
    t0=$(now_ms)
    kill -INT "${launcher:-$bg_pid}"
    wait "$bg_pid"
    rc=$?
    bg_pid=
    ms=$(($(now_ms) - t0))
    [ "$rc" = 130 ] || { fail ctrl_c "exit status $rc, expected 130"; return; }
    [ -z "$(survivors)" ] || { fail ctrl_c "still running:$(survivors)"; return; }
    [ "$ms" -lt 2500 ] || { fail ctrl_c "took $ms ms"; return; }
    pass ctrl_c
}

start=$(now_ms)
exchange 1
exchange 2
exchange 4
exit_status
# ampi_info (installed beside ampirun) reports versions and transports.
ampi_info_case() {
    local info=${AMPI_PREFIX:-}/bin/ampi_info out
    if [ ! -x "$info" ]; then
        echo "SKIP launch/ampi_info: $info not installed"
        return
    fi
    out=$("$info" 2>&1)
    if grep -q '^AMPI-UCX: ' <<<"$out" && grep -q '^UCX transports:' <<<"$out" && grep -q '^  self ' <<<"$out" &&
        grep -q '^CUDA: ' <<<"$out"; then
        pass launch/ampi_info
    else
        fail launch/ampi_info "unexpected output: $(head -3 <<<"$out" | tr '\n' ' ')"
    fi
}

# ampi_info --all / --parsable: every setting of README's table with its value
# and source; unknown options and bad values are errors.
readme_settings() {
    awk '/^\| variable \| meaning \| default \|$/ { t = 1; next } t && /^\|---/ { next }
         t && /^\|/ { split($0, f, "`"); print f[2]; next } t { exit }' "$srcdir/README.md"
}
ampi_info_settings() {
    local info=${AMPI_PREFIX:-}/bin/ampi_info names n name key field why=
    if [ ! -x "$info" ]; then
        skip launch/ampi_info_settings "$info not installed"
        return
    fi
    names=$(readme_settings)
    n=$(wc -l <<<"$names")
    [ "$n" -ge 10 ] || why="README's settings table not found ($n rows)"
    # --all: one line per setting, value and source
    env AMPI_SHM=No AMPI_EAGER_LIMIT=16384 "$info" --all >"$work/out" 2>"$work/err"
    rc=$?
    [ -n "$why" ] || [ "$rc" = 0 ] || why="--all: exit $rc: $(head -2 "$work/err")"
    for name in $names; do
        [ -n "$why" ] || [ "$(grep -c "^  $name " "$work/out")" = 1 ] || why="--all: no line for $name"
    done
    [ -n "$why" ] || grep -Eq '^  AMPI_SHM +off +environment ' "$work/out" || why="--all: AMPI_SHM=No not shown as off"
    [ -n "$why" ] || grep -Eq '^  AMPI_EAGER_LIMIT +16K +environment ' "$work/out" || why="--all: AMPI_EAGER_LIMIT"
    [ -n "$why" ] || grep -Eq '^  AMPI_CMA +on +default ' "$work/out" || why="--all: AMPI_CMA default"
    [ -n "$why" ] || [ ! -s "$work/err" ] || why="--all wrote to stderr: $(head -2 "$work/err")"
    [ -z "$why" ] && pass launch/ampi_info_all || fail launch/ampi_info_all "$why"
    why=
    # --parsable: key:value lines only; versions, transports, every setting
    env AMPI_SHM=No "$info" --parsable >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 0 ] || why="--parsable: exit $rc: $(head -2 "$work/err")"
    [ -n "$why" ] || ! grep -Evq '^[a-z]+:[A-Za-z0-9_]+:' "$work/out" || why="not key:value: $(grep -Ev '^[a-z]+:[A-Za-z0-9_]+:' "$work/out" | head -1)"
    for key in '^ampi:version:full:[0-9]' '^mpi:version:full:3\.1$' '^ucx:version:full:[0-9]' '^pmix:version:full:.' \
        '^hwloc:version:full:[0-9]' '^ucx:transport:self:device:memory$' '^cuda:enabled:(yes|no)$' \
        '^setting:AMPI_SHM:value:off$' '^setting:AMPI_SHM:source:environment$' '^setting:AMPI_SHM:default:on$' \
        '^setting:AMPI_CMA:source:default$' '^setting:AMPI_STACK_SIZE:value:8M$' '^setting:AMPI_VP:value:-$'; do
        [ -n "$why" ] || grep -Eq "$key" "$work/out" || why="--parsable: no line $key"
    done
    for name in $names; do
        for field in value source default type help; do
            [ -n "$why" ] || [ "$(grep -c "^setting:$name:$field:" "$work/out")" = 1 ] ||
                why="--parsable: no setting:$name:$field"
        done
    done
    [ -n "$why" ] || [ "$(grep -c '^setting:[A-Z_]*:value:' "$work/out")" = "$n" ] ||
        why="--parsable lists $(grep -c '^setting:[A-Z_]*:value:' "$work/out") settings, README $n"
    [ -z "$why" ] && pass launch/ampi_info_parsable || fail launch/ampi_info_parsable "$why"
    # an unknown option: exit 2, a message, nothing on stdout
    "$info" --bogus >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 2 ] && [ ! -s "$work/out" ] && grep -q "unknown option '--bogus'" "$work/err" &&
        pass launch/ampi_info_bad_option ||
        fail launch/ampi_info_bad_option "rc $rc, stderr: $(head -1 "$work/err")"
    # a bad value: exit 1 naming it and the spellings
    env AMPI_GPU_STAGE_CHUNK=1K "$info" --all >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 1 ] && grep -q 'AMPI_GPU_STAGE_CHUNK=1K is not valid: use a size from 4K to 2G' "$work/err" &&
        pass launch/ampi_info_bad_value ||
        fail launch/ampi_info_bad_value "rc $rc, stderr: $(head -1 "$work/err")"
}

abort_case abort
abort_case abort_sigterm_ignored --ignore-term
signal_death
no_finalize
timeout_case
descendants
forwarding
tag_output
virtual_ranks
non_pmix_program
exports
stdin_case
ctrl_c
ampi_info_case
ampi_info_settings
# shellcheck source=test/launch/programs.sh
. "$here/programs.sh"
# shellcheck source=test/launch/leftovers.sh
. "$here/leftovers.sh"
echo "# launch tests took $(($(now_ms) - start)) ms, $failures failed"
[ "$failures" = 0 ]
