#!/usr/bin/env bash
# test/mpi/run.sh - build the MPI test programs once and run each over a
# matrix of (processes P, virtual ranks V) with ampirun, plus a few runs of
# our binaries under Open MPI's mpirun and one singleton run.
#
#   test/mpi/run.sh [--ompi] [program ...]
#
#   --ompi     check the programs themselves with Debian's Open MPI (mpicc,
#              mpirun -np 1,2,4; no +vp), e.g. before our library exists
#   program    run only these programs (default: all in the table)
#
# Environment: AMPI_PREFIX (holds bin/ampicc, bin/ampirun; default
# $repo/.prefix), AMPI_BUILD (binaries and logs; default $repo/.build),
# MPICC / MPIRUN (override the compiler / launcher of the chosen mode),
# OMPI_MPIRUN (Open MPI's mpirun for the foreign-launcher cases).
#
# Output: one PASS/FAIL/SKIP line per case, then a summary line.  Exit
# status 1 if anything failed.

set -u

# ---- what runs where -------------------------------------------------------
# cells: a comma list of PxV, where "all" stands for every cell of MATRIX.
# expect: 0      exit 0, an "... OK" line, no FAIL line; a program that
#                printed "SKIP: <reason>" (mt_skipped: what it is there for
#                did not run, e.g. pair tests on one rank) reports SKIP
#         =N     exactly exit status N, and the program's line of MESSAGES
#                (if it has one) in the output
# max_s: the longest a passing run may take ("-": only the timeouts apply)
# Cases per program are counted: a cell added here changes the mpi line of
# test/expected-counts.
#
# program         cells                  expect   max_s
TABLE='
ring              1x1,1x4,1x16,2x2,2x4,2x16,4x4,4x16,4x64 0 -
pt2pt_basic       all,6x6,6x12           0        -
pt2pt_modes       all                    0        -
order             all,6x6,6x12           0        -
probe             all,6x6,6x12           0        -
waitany           all                    0        -
persistent        all                    0        -
persist_wild      all,6x6                0        -
persist_pairs     1x4,2x2,2x8,4x4,4x8    0        -
proc_null         1x1,1x4,2x4,4x16       0        -
truncate          all                    0        -
stale_request     all                    0        -
errors            1x1,1x4,2x4,4x16       0        -
unsupported       1x1,1x4,2x4,4x16       0        -
env               all                    0        -
barrier           all                    0        -
alltoall_p2p      all,6x6,6x12           0        -
abort             1x1,2x4,4x16           =7       15
crash             1x1,2x4,4x16           =139     15
return_nonzero    1x1,2x4,4x16           =3       -
coll_basic        all,6x6,6x12           0        -
coll_ops          all                    0        -
coll_user_ops     all                    0        -
coll_args         1x1,1x4,2x4,4x16       0        -
coll_nb           all                    0        -
coll_nb_async     all,6x6                0        -
coll_nb_rooted    all,6x6                0        -
coll_nb_rootedv   all,6x6                0        -
coll_nb_alltoallv all,6x6                0        -
coll_nb_reduce    all,6x6                0        -
coll_nb_allgather all,6x6                0        -
coll_neighbor     all                    0        -
coll_alltoallw    all                    0        -
coll_sizes        all                    0        -
comm_basic        all                    0        -
comm_group        all                    0        -
comm_coll         all                    0        -
topo_cart         all                    0        -
topo_graph        all                    0        -
dtype_basic       all                    0        -
dtype_query       all                    0        -
dtype_halo        all                    0        -
info              all                    0        -
interop           1x1,1x4,2x4,4x16       0        -
comm_idup         all                    0        -
rma_basic         all                    0        -
rma_acc           all                    0        -
rma_passive       all                    0        -
rma_early         all                    0        -
rma_shm           all,6x6                0        -
rma_batch         all,6x6                0        -
rma_fetch_large   all                    0        -
attr_type         1x1,1x4,2x4,4x16       0        -
comm_create_group 1x4,2x4,1x8,2x8,4x8,6x6,4x16 0      -
coll_persist      all                    0        -
isendrecv         all,6x6                0        -
intercomm         all,6x6                0        -
intercomm_coll    all,6x6                0        -
intercomm_split   all,6x6                0        -
coll_noncontig    all                    0        -
coll_noncontig_nb all                    0        -
coll_noncontig_persist all               0        -
coll_nc_reduce    all                    0        -
coll_nc_reduce_nb all                    0        -
coll_nc_reduce_persist all               0        -
session           1x1,1x4,2x4,4x16       0        -
errhandler        1x1,1x4,2x4,4x16       0        -
dtype_pairs       all                    0        -
dtype_external    all                    0        -
greq              1x1,1x4,2x4,4x16       0        -
large_count       1x1,1x4,2x4,4x16       0        -
pt2pt_edge        all                    0        -
bsend_flush       all                    0        -
send_cancel       all,6x6                0        -
info_env          1x1,1x4,2x4,4x16       0        -
keyval_free       1x1,1x4,2x4,4x16       0        -
'
# The line (an extended regular expression, whole line) that a program with
# an exact exit status must print; LASTPROC and LASTRANK stand for P-1 and
# V-1 of the cell (V: ranks in all).
MESSAGES='
abort ^ampirun: process LASTPROC \(pid [0-9]+, ranks? [0-9]+(-LASTRANK)?\) ended the job with status 7: MPI_Abort called by rank LASTRANK \(communicator 1\) with error code 7$
crash ^ampirun: process 0 \(pid [0-9]+, ranks? 0(-[0-9]+)?\) killed by signal 11 \(Segmentation fault\)( in rank 0)?$
'
MATRIX='1x1 1x4 1x16 2x2 2x4 2x16 4x4 4x16'
# (6x6, 6x12: more than SHM_SCAN_MAX peers, so the rings are found through
# the segment's notify word, src/shm/shm.c)
OMPI_NPS='1 2 4'
# our binaries under Open MPI's mpirun (np 2, AMPI_VP unset)
FOREIGN_PROGS='ring pt2pt_basic'
# The routes that the defaults leave unused between processes of one node:
# with AMPI_CMA=0 host payloads above the eager limit take UCX's rendezvous
# (as between nodes) instead of process_vm_readv; with AMPI_SHM=0 every
# envelope takes UCX instead of the shared-memory rings.
ROUTE_SETTINGS='AMPI_CMA=0 AMPI_SHM=0'
ROUTE_PROGS='pt2pt_basic pt2pt_modes truncate probe order persistent persist_wild rma_basic rma_passive rma_early
    rma_batch send_cancel'
# One-sided windows that the node's other processes would map (rma_shm.c)
# without the mappings: puts and gets by CMA, accumulates as messages.
RMA_ROUTE_SETTINGS='AMPI_RMA_SHM=0'
RMA_ROUTE_PROGS='rma_shm rma_acc rma_basic rma_fetch_large'
# Nonblocking collectives of every size on the progress thread's schedules
# (by default only those of 128 KiB and more take them, Iallreduce from 64 KiB,
# Ibcast from 64 KiB where the progress threads have CPUs of their own).
NBC_ROUTE_SETTINGS='AMPI_NBC_PROGRESS_MIN=0'
NBC_ROUTE_PROGS='coll_nb_async coll_nb_rooted coll_nb_rootedv coll_nb_alltoallv coll_nb_reduce coll_nb_allgather'
# The same with the progress threads pinned to a CPU (as ampirun does where
# there are two CPUs per process): their spin mode (AMPI_PROGRESS_SPIN,
# src/ucx/ucx_side.h), which dozes between collectives and is woken by the
# next one.  CPU 0 is shared with ranks here: the mode runs, not its speed.
# Its second form waits on a plain loop instead of pause instructions
# (AMPI_PROGRESS_SPIN_PAUSE=off).  A comma joins the settings of one run.
SPIN_ROUTE_SETTINGS='AMPI_PROGRESS_CPU=0 AMPI_PROGRESS_CPU=0,AMPI_PROGRESS_SPIN_PAUSE=off'
ROUTE_CELLS='2x4 4x4'

RUN_TIMEOUT=60   # ampirun --timeout
OUTER_TIMEOUT=90 # timeout(1) around every run

# ---- setup -----------------------------------------------------------------
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$here/../lib.sh"
mode=ampi
only=()
for arg in "$@"; do
    case $arg in
    --ompi) mode=ompi ;;
    -h | --help)
        sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "run.sh: unknown option $arg" >&2
        exit 2
        ;;
    *) only+=("$arg") ;;
    esac
done

set_tools "$mode" mpi
mkdir -p "$logdir" || exit 2

# Open MPI's mpirun, for the foreign-launcher cases.
find_ompi_mpirun() {
    local c
    for c in "${OMPI_MPIRUN:-}" /usr/bin/mpirun.openmpi /usr/bin/mpirun; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            echo "$c"
            return 0
        fi
    done
    return 1
}

table_field() { # program, field number (2 cells, 3 expect, 4 max_s)
    awk -v p="$1" -v f="$2" '$1 == p { print $f }' <<<"$TABLE"
}

# expected_message PROG P V: PROG's line of MESSAGES for cell PxV, or nothing.
expected_message() {
    local re
    re=$(awk -v p="$1" '$1 == p { sub(/^[^ ]+ /, ""); print; exit }' <<<"$MESSAGES")
    re=${re//LASTPROC/$(($2 - 1))}
    echo "${re//LASTRANK/$(($3 - 1))}"
}

# run_case NAME LOG EXPECT MAX_S MESSAGE COMMAND... : run, judge, print one
# line.  MESSAGE: an extended regex a line of the output must match, or "".
run_case() {
    local name=$1 log=$2 expect=$3 maxs=$4 message=$5
    shift 5
    local rc secs why skipped=""
    timed_run "$log" "$OUTER_TIMEOUT" "$@"
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ]; then
        case $expect in
        0)
            if [ "$rc" -ne 0 ]; then
                why="exit $rc, expected 0"
            elif ! grep -q 'OK$' "$log"; then
                why="exit 0 but no OK line"
            else
                skipped=$(grep -m 1 '^SKIP: ' "$log")
            fi
            ;;
        =*)
            if [ "$rc" -ne "${expect#=}" ]; then
                why="exit $rc, expected ${expect#=}"
            elif [ -n "$message" ] && ! grep -Eq "$message" "$log"; then
                why="exit $rc but no line matching: $message"
            fi
            ;;
        *)
            why="the table's expect field '$expect' is neither 0 nor =N"
            ;;
        esac
        if [ -z "$why" ] && [ "$maxs" != "-" ] &&
            awk -v s="$secs" -v m="$maxs" 'BEGIN { exit !(s > m) }'; then
            why="took ${secs} s, more than ${maxs} s"
        fi
    fi
    if [ -z "$why" ] && [ -n "$skipped" ]; then
        skip "$name" "${skipped#SKIP: }"
        return
    fi
    report_case "$name" "$why" "$log"
}

# ---- build -----------------------------------------------------------------
progs=$(select_programs "$(awk 'NF { print $1 }' <<<"$TABLE")" "${only[@]}")
if [ -z "$progs" ]; then
    echo "run.sh: no such program in the table: ${only[*]}" >&2
    exit 2
fi

tool_missing=$(missing_tool "$mode" yes "install the library first or use --ompi")
if [ -n "$tool_missing" ]; then
    for prog in $progs; do
        skip "mpi/$prog" "$tool_missing"
    done
    echo "mpi: $npass passed, $nfail failed, $nskip skipped"
    exit 0
fi

built=""
for prog in $progs; do
    if compile_test "mpi/$prog" "$logdir/$prog.build.log" \
        -o "$bindir/$prog" "$here/$prog.c"; then
        built="$built $prog"
    fi
done

# ---- the matrix ------------------------------------------------------------
for prog in $built; do
    expect=$(table_field "$prog" 3)
    maxs=$(table_field "$prog" 4)
    bin=$bindir/$prog
    if [ "$mode" = ompi ]; then
        extra=()
        # Open MPI 4.1's ob1 with single-copy (CMA) transfers writes a whole
        # truncated rendezvous message past the receive buffer, which
        # truncate.c rightly reports; copy-in/copy-out avoids that bug.
        [ "$prog" = truncate ] &&
            extra=(--mca btl_vader_single_copy_mechanism none)
        for np in $OMPI_NPS; do
            run_case "mpi/$prog np=$np (openmpi)" "$logdir/$prog.np$np.log" \
                "$expect" "$maxs" "" "$launcher" --allow-run-as-root \
                --oversubscribe "${extra[@]}" -np "$np" "$bin"
        done
        continue
    fi
    cells=$(table_field "$prog" 2)
    cells=${cells/all/${MATRIX// /,}}
    for cell in ${cells//,/ }; do
        p=${cell%x*} v=${cell#*x}
        run_case "mpi/$prog np=$p vp=$v" "$logdir/$prog.np$p.vp$v.log" \
            "$expect" "$maxs" "$(expected_message "$prog" "$p" "$v")" "$launcher" --timeout "$RUN_TIMEOUT" \
            -np "$p" +vp "$v" "$bin"
    done
done

# ---- route switches ----------------------------------------------------------
route_runs() { # SETTINGS PROGS
    local setting prog cell p v names
    for setting in $1; do
        names=$(echo "$setting" | sed 's/=[^,]*//g; s/,/+/g') # the log's suffix: the settings' names
        for prog in $2; do
            case " $built " in *" $prog "*) ;; *) continue ;; esac
            for cell in $ROUTE_CELLS; do
                p=${cell%x*} v=${cell#*x}
                # shellcheck disable=SC2086 # a comma list becomes several NAME=VALUE words
                run_case "mpi/$prog np=$p vp=$v ${setting//,/ }" "$logdir/$prog.np$p.vp$v.$names.log" 0 - "" \
                    env ${setting//,/ } "$launcher" --timeout "$RUN_TIMEOUT" -np "$p" +vp "$v" "$bindir/$prog"
            done
        done
    done
}
if [ "$mode" = ampi ]; then
    route_runs "$ROUTE_SETTINGS" "$ROUTE_PROGS"
    route_runs "$RMA_ROUTE_SETTINGS" "$RMA_ROUTE_PROGS"
    route_runs "$NBC_ROUTE_SETTINGS" "$NBC_ROUTE_PROGS"
    route_runs "$SPIN_ROUTE_SETTINGS" "$NBC_ROUTE_PROGS"
fi

# ---- other launchers -------------------------------------------------------
if [ "$mode" = ampi ]; then
    ompi_run=$(find_ompi_mpirun)
    for prog in $FOREIGN_PROGS; do
        case " $built " in *" $prog "*) ;; *) continue ;; esac
        name="mpi/$prog np=2 (openmpi mpirun)"
        if [ -z "$ompi_run" ]; then
            skip "$name" "Open MPI's mpirun not found"
            continue
        fi
        run_case "$name" "$logdir/$prog.ompirun.log" 0 - "" \
            env -u AMPI_VP "$ompi_run" --allow-run-as-root --oversubscribe \
            -np 2 "$bindir/$prog"
    done
    # AMPI_PROGRESS_CPU on one process only (each part of an MPMD command line
    # has its own environment): both processes must still take one route for
    # an Ibcast between half AMPI_NBC_PROGRESS_MIN and all of it, which follows
    # process 0's progress thread (src/coll/coll_sched.h); else they hang.
    prog=coll_nb_async
    for on in 0 1; do
        case " $built " in *" $prog "*) ;; *) break ;; esac
        name="mpi/$prog np=2 (openmpi mpirun, AMPI_PROGRESS_CPU=0 on process $on only)"
        if [ -z "$ompi_run" ]; then
            skip "$name" "Open MPI's mpirun not found"
            continue
        fi
        with=(env AMPI_PROGRESS_CPU=0 "$bindir/$prog")
        if [ "$on" = 0 ]; then parts=(-np 1 "${with[@]}" : -np 1 "$bindir/$prog")
        else parts=(-np 1 "$bindir/$prog" : -np 1 "${with[@]}"); fi
        run_case "$name" "$logdir/$prog.ompirun.cpu$on.log" 0 - "" \
            env -u AMPI_VP "$ompi_run" --allow-run-as-root --oversubscribe "${parts[@]}"
    done
fi
case " $built " in
*" ring "*)
    run_case "mpi/ring singleton" "$logdir/ring.singleton.log" 0 - "" \
        env -u AMPI_VP "$bindir/ring"
    ;;
esac

# ---- settings ---------------------------------------------------------------
# A bad value of a setting stops the job with exit status 1 before any rank
# runs, naming the variable and the spellings it takes (src/core/core_settings.c);
# an unknown AMPI_* name is warned about once per process and the job runs.
bad_setting_case() { # name log command...
    local name=$1 log=$2 why=
    shift 2
    timed_run "$log" "$OUTER_TIMEOUT" "$@"
    why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
    if [ -z "$why" ] && [ "$rc" -ne 1 ]; then
        why="exit $rc, expected 1"
    elif [ -z "$why" ] && ! grep -q 'AMPI_SHM=maybe is not valid: use 0/1, off/on, no/yes or false/true' "$log"; then
        why="no message naming AMPI_SHM=maybe and the spellings"
    elif [ -z "$why" ] && grep -q 'OK$' "$log"; then
        why="a rank ran"
    fi
    report_case "$name" "$why" "$log"
}
if [ "$mode" = ampi ]; then
    case " $built " in
    *" ring "*)
        bad_setting_case "mpi/ring np=2 vp=4 AMPI_SHM=maybe" "$logdir/ring.bad_setting.log" \
            env AMPI_SHM=maybe "$launcher" --timeout "$RUN_TIMEOUT" -np 2 +vp 4 "$bindir/ring"
        bad_setting_case "mpi/ring singleton AMPI_SHM=maybe" "$logdir/ring.bad_setting.singleton.log" \
            env -u AMPI_VP AMPI_SHM=maybe "$bindir/ring"
        log=$logdir/ring.unknown_setting.log
        timed_run "$log" "$OUTER_TIMEOUT" env AMPI_SHM_MEDUIM=0 "$launcher" --timeout "$RUN_TIMEOUT" \
            -np 2 +vp 4 "$bindir/ring"
        why=$(early_verdict "$log" "timed out after ${OUTER_TIMEOUT} s")
        if [ -z "$why" ] && { [ "$rc" -ne 0 ] || ! grep -q 'OK$' "$log"; }; then
            why="exit $rc or no OK line"
        elif [ -z "$why" ] &&
            [ "$(grep -c 'AMPI_SHM_MEDUIM is not a setting of this library (ignored); did you mean AMPI_SHM_MEDIUM?' "$log")" != 2 ]; then
            why="expected one warning per process (2)"
        fi
        report_case "mpi/ring np=2 vp=4 AMPI_SHM_MEDUIM (unknown name)" "$why" "$log"
        ;;
    esac
fi

echo "mpi: $npass passed, $nfail failed, $nskip skipped (logs in $logdir)"
[ $nfail -eq 0 ]
