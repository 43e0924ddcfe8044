#!/usr/bin/env bash
# test/multinode/run.sh - jobs that span two nodes of the namespace test bed
# (nsbed.sh), started by Open MPI's mpirun with its remote shell replaced by
# one that enters a node.  2 nodes x 2 processes x +vp 2 (8 ranks).
#
#   test/multinode/run.sh [case ...]
#
# Cases: listeners (a one-node job under ampirun, no bed: no process listens
# on an address other machines reach); layout (ampi_info --layout in every
# process: its node, the processes sharing it, the node count); the point-to-point and collective programs of test/mpi and
# node_layout.c (MPI_COMM_TYPE_SHARED per node, every pair's data); routes
# (shared memory and CMA only between processes of one node, from the
# library's own debug lines); fault cases: a node's processes killed
# mid-job, a node's link cut mid-job (the job must end, naming the node or
# within the time limit, never hang), Ctrl-C (SIGINT) to the launcher; after
# each fault no process of the job may stay on any node; pid_ns (no bed: two
# processes of one host under mpirun, one in a PID namespace of its own, so
# that CMA and UCX's shared memory cannot join them although PMIx calls them
# local: the library must take them for two nodes); gpu_bed
# (gpu-bed.sh's correctness and Jacobi3D parts, host-only without GPUs); slurm_*: the same programs (and a
# killed node) under Slurm's srun --mpi=pmix, with slurmctld on the machine
# and one slurmd per node (slurmbed.sh), skipped with the reason when the
# daemons cannot start.
#
# Needs root (namespaces, veth, bridge) and Open MPI's mpirun; otherwise every
# case is skipped with the reason.  mpirun runs through `nsbed.sh mpirun`
# (a hostfile with slots, no resource manager's allocation), so the cases
# also pass inside a Slurm job.  Environment: AMPI_PREFIX, AMPI_BUILD,
# OMPI_MPIRUN (default mpirun).  One PASS/FAIL/SKIP line per case, then a
# summary line; exit status 1 if anything failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../lib.sh
. "$repo/test/lib.sh"
set_tools ampi multinode
mpirun_bin=${OMPI_MPIRUN:-mpirun}
bed=$here/nsbed.sh
# a bed of our own (runs of several work trees may overlap): the first free
# ID from one that our PID picks
export NSBED_ID=${NSBED_ID:-$(( ($$ % 249) + 1 ))}
mkdir -p "$bindir" "$logdir"

CASES='listeners layout ring in_allocation pt2pt_basic order probe alltoall_p2p coll_basic coll_nb comm_basic node_layout routes
kill_node cut_link interrupt pid_ns gpu_bed slurm_ring slurm_pt2pt_basic slurm_coll_basic slurm_node_layout slurm_kill_node
slurm_interrupt'
wanted=$(select_programs "$CASES" "$@")

summary() {
    echo "$npass passed, $nfail failed, $nskip skipped"
    [ "$nfail" -eq 0 ]
    exit
}
skip_all() {
    local c
    for c in $wanted; do skip "multinode/$c" "$1"; done
    summary
}

why=$(missing_tool ampi yes "run ./setup.sh first")
[ -z "$why" ] || skip_all "$why"


# mpirun_nodes LOG LIMIT EXTRA... PROGRAM ARGS: 2 processes on each node,
# AMPI_VP=8; EXTRA are mpirun options (e.g. -x AMPI_DEBUG=1).  Under Slurm
# (launch=slurm) the same job through srun --mpi=pmix; EXTRA are then srun's.
launch=ompi
mpirun_nodes() {
    local log=$1 limit=$2
    shift 2
    if [ "$launch" = slurm ]; then
        timed_run "$log" "$limit" env SLURM_CONF="$slurm_conf" srun --mpi=pmix -N 2 -n 4 --ntasks-per-node=2 \
            --export=ALL,AMPI_VP=8 "$@"
        return
    fi
    timed_run "$log" "$limit" "$bed" mpirun 2 -x AMPI_VP=8 "$@"
}

build() {
    local name=$1 src=$2
    [ -x "$bindir/$name" ] && [ "$bindir/$name" -nt "$src" ] && return 0
    compile_test "multinode/$name" "$logdir/$name.build.log" -o "$bindir/$name" "$src"
}

# A program of test/mpi (or ours) passes with exit 0, its OK line, no FAIL.
# CASE is the case's name (slurm_PROGRAM under Slurm).
program_case() {
    local case=$1 name=${1#slurm_} why
    local src=$here/$name.c log=$logdir/$1.log
    [ -f "$src" ] || src=$repo/test/mpi/$name.c
    build "$name" "$src" || return
    # Slurm's step launch alone took tens of seconds on a loaded machine
    mpirun_nodes "$log" $([ "$launch" = slurm ] && echo 150 || echo 60) "$bindir/$name"
    why=$(early_verdict "$log" "timed out")
    if [ -z "$why" ] && [ "$rc" -ne 0 ]; then
        why="exit status $rc"
    elif [ -z "$why" ] && ! grep -q ' OK$' "$log"; then
        why="no OK line"
    fi
    report_case "multinode/$case" "$why" "$log"
}

# The ring started from inside a Slurm job's environment (an allocation of
# one other host): Open MPI then maps only onto the allocation and, given the
# bed's nodes by -H, answered "All nodes which are allocated for this job are
# already filled"; nsbed.sh mpirun leaves the allocation out.
allocation_case() {
    local log=$logdir/in_allocation.log why=
    build ring "$repo/test/mpi/ring.c" || return
    SLURM_JOB_ID=4242 SLURM_JOBID=4242 SLURM_NODELIST=ampielsewhere SLURM_JOB_NODELIST=ampielsewhere \
        SLURM_TASKS_PER_NODE=4 SLURM_NNODES=1 SLURM_NTASKS=4 mpirun_nodes "$log" 60 "$bindir/ring"
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    [ -n "$why" ] || grep -q ' OK$' "$log" || why="no OK line"
    report_case "multinode/in_allocation" "$why" "$log"
}

# gpu-bed.sh's correctness part and its Jacobi3D rounds (small blocks, one
# round) in a bed of their own: without GPUs its host programs and
# Jacobi3D -cpu, with the GPU cases skipped; with 2 GPUs device buffers.
gpu_bed_case() {
    local log=$logdir/gpu_bed.log why=
    timed_run "$log" 400 env NSBED_ID=$((NSBED_ID % 249 + 1)) GPU_BED_ROUNDS=1 GPU_BED_BLOCK=32 \
        GPU_BED_WORK="$bindir/gpu-bed-work" bash "$here/gpu-bed.sh" --budget 360 --parts "correct jacobi" \
        --out "$logdir/gpu-bed"
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    [ -n "$why" ] || grep -q '^[1-9][0-9]* passed, 0 failed' "$log" || why="no summary with 0 failed"
    report_case "multinode/gpu_bed" "$why" "$log"
}

# Each process reports its shared-memory and CMA peers (AMPI_DEBUG): with 2
# processes a node, exactly the one other process of its node, never one of
# the other node.
routes_case() {
    local log=$logdir/routes.log why=
    build node_layout "$here/node_layout.c" || return
    mpirun_nodes "$log" 60 -x AMPI_DEBUG=1 "$bindir/node_layout"
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    local shm cma
    shm=$(grep -c 'shared memory: 1 of 1 peers on this node reachable' "$log")
    cma=$(grep -c 'cross-memory attach: 1 of 3 peers' "$log")
    [ -n "$why" ] || [ "$shm" -eq 4 ] || why="$shm of 4 processes reach exactly their node's peer by shared memory"
    [ -n "$why" ] || [ "$cma" -eq 4 ] || why="$cma of 4 processes reach exactly their node's peer by CMA"
    report_case "multinode/routes" "$why" "$log"
}

# ampi_info --layout in each process: processes 0,1 on ampinode1, 2,3 on
# ampinode2, each naming its node's two processes and 2 nodes.
layout_case() {
    local log=$logdir/layout.log why= p node peers
    mpirun_nodes "$log" 60 "$AMPI_PREFIX/bin/ampi_info" --layout --parsable
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    for p in 0 1 2 3; do
        if [ "$p" -lt 2 ]; then node=ampinode1 peers=0,1; else node=ampinode2 peers=2,3; fi
        [ -n "$why" ] || grep -q "^layout:process:$p:nprocs:4:node:$node:node_leader:${peers%,*}:local_size:2:local_peers:$peers:nnodes:2$" "$log" ||
            why="no layout line for process $p on $node with peers $peers"
    done
    report_case "multinode/layout" "$why" "$log"
}

# A program that keeps exchanging until told to stop (a file appears).
spin_src() {
    cat >"$bindir/spin.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) { printf("spin started\n"); fflush(stdout); }
    for (int i = 0; i < 1000000 && access(argv[1], F_OK) != 0; i++) {
        int x = i, y;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        usleep(1000);
    }
    MPI_Finalize();
    return 0;
}
EOF
}

# fault_case NAME ACTION: start spin, wait until it runs, do ACTION, and
# expect the job to end (non-zero) within 20 s, naming ampinode2.
fault_case() {
    local name=$1 action=$2 log=$logdir/$1.log stop=$bindir/$1.stop why= t0
    spin_src
    build spin "$bindir/spin.c" || return
    rm -f "$stop"
    if [ "$launch" = slurm ]; then
        timeout -k 5 90 env SLURM_CONF="$slurm_conf" srun --mpi=pmix -N 2 -n 4 --ntasks-per-node=2 \
            --export=ALL,AMPI_VP=8 "$bindir/spin" "$stop" >"$log" 2>&1 </dev/null &
    else
        # keepalives on the runtime's own links, so that mpirun notices a
        # daemon whose link is cut (Open MPI waits 300 s + 9 x 20 s by default)
        timeout -k 5 90 "$bed" mpirun 2 --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 \
            --mca oob_tcp_keepalive_probes 3 -x AMPI_VP=8 "$bindir/spin" "$stop" >"$log" 2>&1 </dev/null &
    fi
    local job=$!
    for _ in $(seq 1 100); do grep -q 'spin started' "$log" && break; sleep 0.1; done
    sleep 0.5
    t0=$(date +%s)
    case $action in
        kill) "$bed" exec ampinode2 pkill -KILL -f "$bindir/spin" ;;
        cut) "$bed" link ampinode2 down ;;
        interrupt)
            # Ctrl-C: mpirun ends the job at the first; srun only reports the
            # step's state then and ends it at a second within a second
            local target
            target=$(pgrep -P "$job" -x "${mpirun_bin##*/}" || pgrep -P "$job" srun || echo "$job")
            kill -INT "$target"
            [ "$launch" = slurm ] && { sleep 0.3; kill -INT "$target"; } ;;
    esac
    local ended=
    for _ in $(seq 1 300); do
        kill -0 "$job" 2>/dev/null || { ended=yes; break; }
        sleep 0.1
    done
    secs=$(( $(date +%s) - t0 ))
    if [ -z "$ended" ]; then
        why="still running ${secs} s after the fault"
        touch "$stop"
        kill -TERM "$job" 2>/dev/null
    fi
    wait "$job"
    rc=$?
    [ "$action" = cut ] && "$bed" link ampinode2 up
    [ -n "$why" ] || [ "$rc" -ne 0 ] || why="exit status 0 after the fault"
    [ -n "$why" ] || [ "$action" = interrupt ] || grep -q 'ampinode2' "$log" || why="no message names ampinode2"
    # nothing of the job stays on any node (2 s for the engine's last kills)
    local left=
    for _ in $(seq 1 20); do
        left=$("$bed" exec ampinode1 pgrep -f "$bindir/spin"; "$bed" exec ampinode2 pgrep -f "$bindir/spin")
        [ -z "$left" ] && break
        sleep 0.1
    done
    [ -n "$why" ] || [ -z "$left" ] || why="processes left on the nodes: $(echo $left)"
    echo "ended ${secs} s after the fault" >>"$log"
    report_case "multinode/$name" "$why" "$log"
}

# listeners: one node, no bed needed
listeners_case() {
    local log=$logdir/listeners.log why
    build listeners "$here/listeners.c" || return
    if ! command -v ss >/dev/null 2>&1; then
        skip multinode/listeners "ss (iproute2) not found"
        return
    fi
    timed_run "$log" 60 "$launcher" -np 2 +vp 4 "$bindir/listeners"
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    [ -n "$why" ] || grep -q 'listeners OK$' "$log" || why="no OK line"
    report_case multinode/listeners "$why" "$log"
}
if echo "$wanted" | grep -qx listeners; then
    listeners_case
    wanted=$(echo "$wanted" | grep -vx listeners)
fi

command -v "$mpirun_bin" >/dev/null 2>&1 || skip_all "Open MPI's mpirun not found"
[ "$(id -u)" = 0 ] || skip_all "the namespace test bed needs root"
unshare --net --uts --pid --mount --fork true 2>/dev/null || skip_all "namespaces cannot be made here"

# pid_ns: one host, no bed: mpirun's PMIx names both processes local
pid_ns_case() {
    local log=$logdir/pid_ns.log why
    build ring "$repo/test/mpi/ring.c" || return
    # shellcheck disable=SC2016 # expanded by the job's shell
    timed_run "$log" 60 env -u SLURM_JOB_ID -u SLURM_JOBID -u SLURM_NODELIST AMPI_DEBUG=1 "$mpirun_bin" \
        --allow-run-as-root --oversubscribe -np 2 sh -c \
        'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec unshare --pid --fork "$0"; else exec "$0"; fi' "$bindir/ring"
    why=$(early_verdict "$log" "timed out")
    [ -n "$why" ] || [ "$rc" -eq 0 ] || why="exit status $rc"
    [ -n "$why" ] || grep -q 'ring: 2 ranks.* OK$' "$log" || why="no OK line"
    [ -n "$why" ] || grep -q 'PMIx named 1 process(es) of other nodes local' "$log" ||
        why="no process saw that PMIx's local peers span two PID namespaces"
    [ -n "$why" ] || ! grep -q 'cross-memory attach: 1 of 1' "$log" || why="CMA attached across PID namespaces"
    report_case multinode/pid_ns "$why" "$log"
}
if echo "$wanted" | grep -qx pid_ns; then
    pid_ns_case
    wanted=$(echo "$wanted" | grep -vx pid_ns)
fi

bed_up=
for _ in 1 2 3 4 5 6 7 8; do
    if "$bed" up 2 >"$logdir/bed.log" 2>&1; then
        bed_up=yes
        break
    fi
    grep -q 'is in use' "$logdir/bed.log" || break
    export NSBED_ID=$(( NSBED_ID % 249 + 1 ))
done
[ -n "$bed_up" ] || skip_all "the test bed did not come up: $(tail -n 2 "$logdir/bed.log" | tr '\n' ' ')"
trap '"$bed" down >/dev/null 2>&1' EXIT

slurm_cases=$(echo "$wanted" | grep '^slurm_' || true)
wanted=$(echo "$wanted" | grep -v '^slurm_' || true)
for c in $wanted; do
    case $c in
        routes) routes_case ;;
        layout) layout_case ;;
        in_allocation) allocation_case ;;
        gpu_bed) gpu_bed_case ;;
        kill_node) fault_case kill_node kill ;;
        cut_link) fault_case cut_link cut ;;
        interrupt) fault_case interrupt interrupt ;;
        *) program_case "$c" ;;
    esac
done

# Slurm: the daemons over the same nodes
if [ -n "$slurm_cases" ]; then
    slurm_conf=$("$here/slurmbed.sh" conf)
    if ! "$here/slurmbed.sh" up 2 >"$logdir/slurmbed.log" 2>&1; then
        for c in $slurm_cases; do
            skip "multinode/$c" "Slurm's daemons did not start: $(tail -n 1 "$logdir/slurmbed.log")"
        done
    else
        trap '"$here/slurmbed.sh" down >/dev/null 2>&1; "$bed" down >/dev/null 2>&1' EXIT
        launch=slurm
        for c in $slurm_cases; do
            # a node drained by an earlier case's timeout would fail the rest
            SLURM_CONF=$slurm_conf scontrol update nodename=ampinode1,ampinode2 state=resume >/dev/null 2>&1
            case $c in
                slurm_kill_node) fault_case slurm_kill_node kill ;;
                slurm_interrupt) fault_case slurm_interrupt interrupt ;;
                *) program_case "$c" ;;
            esac
        done
    fi
fi
summary
