# shellcheck shell=bash disable=SC2015,SC2154  # run.sh sets work, here, out, err, rc, ms, ampirun
# Nothing left behind: jobs killed at different points (kill -9 of ampirun
# or of one process; before every process has mapped the shared-memory
# segments, and while the ranks run) leave no file in /dev/shm or in TMPDIR
# and no process.  Sourced by run.sh after programs.sh (needs $prog).

# Segments of the job of the ampirun with pid $1 (src/shm/shm.c's names).
segments_of() { compgen -G "/dev/shm/ampi-ampirun-$1-*"; }

# wait_for CONDITION_COMMAND...: up to 10 s.
wait_for() {
    local i
    for ((i = 0; i < 500; i++)); do
        "$@" && return 0
        sleep 0.02
    done
    return 1
}

ranks_up() { [ "$(grep -c '^rank [0-9]* pid ' "$work/kout" 2>/dev/null)" = "$1" ]; }
has_segment_of_proc0() { compgen -G "/dev/shm/ampi-ampirun-$1-*-0-*" >/dev/null; }
gone() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }

# kill_case NAME WHEN VICTIM: start a job of 2 processes x 2 ranks; WHEN
# "mapping": process 1 starts 5 s late, so process 0 waits with its segment
# not yet unlinked; "running": every rank is up.  VICTIM "ampirun" or
# "proc0" gets SIGKILL then.
kill_case() {
    local name=launch/leftovers_$1 when=$2 victim=$3 apid pids=() target
    rm -rf "$work/ktmp" && mkdir "$work/ktmp"
    : >"$work/kout"
    # shellcheck disable=SC2016  # expanded by the launched shell
    TMPDIR=$work/ktmp "$ampirun" -np 2 +vp 4 sh -c \
        'if [ "$PMIX_RANK" = 1 ] && [ "$1" = mapping ]; then sleep 5; fi; exec "$0" hang' \
        "$prog" "$when" >"$work/kout" 2>"$work/kerr" </dev/null &
    apid=$!
    disown "$apid" # no "Killed" line from the shell: the kill is the test
    if [ "$when" = mapping ]; then
        wait_for has_segment_of_proc0 "$apid" || { kill -9 "$apid"; fail "$name" "no segment of process 0 appeared"; return; }
        mapfile -t pids < <(pgrep -P "$apid")
    else
        wait_for ranks_up 4 || { kill -9 "$apid"; fail "$name" "ranks did not start: $(cat "$work/kerr")"; return; }
        mapfile -t pids < <(sed -n 's/^rank [0-9]* pid \([0-9]*\)$/\1/p' "$work/kout" | sort -u)
    fi
    if [ "$victim" = ampirun ]; then target=$apid; else target=$(pgrep -P "$apid" | head -1); fi
    kill -9 "$target"
    wait_for gone "$apid" "${pids[@]}" ||
        { kill -9 "$apid" "${pids[@]}" 2>/dev/null; fail "$name" "processes still running: $apid ${pids[*]}"; return; }
    # the janitor sweeps within 2 s of ampirun's death
    wait_for test -z "$(segments_of "$apid")$(ls -A "$work/ktmp")"
    [ -z "$(segments_of "$apid")" ] || { fail "$name" "left in /dev/shm: $(segments_of "$apid")"; return; }
    [ -z "$(ls -A "$work/ktmp")" ] || { fail "$name" "left in TMPDIR: $(ls -A "$work/ktmp")"; return; }
    pass "$name"
}

if [ -x "$prog" ]; then
    kill_case ampirun_mapping mapping ampirun
    kill_case ampirun_running running ampirun
    kill_case proc0_mapping mapping proc0
    kill_case proc0_running running proc0
else
    for c in ampirun_mapping ampirun_running proc0_mapping proc0_running; do
        skip "launch/leftovers_$c" "mpi_prog not built (no installed ampicc)"
    done
fi
