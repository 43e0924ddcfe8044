#!/bin/bash
# test/multinode/nsbed.sh -- a cluster of N "nodes" on one machine, for tests
# of jobs that span nodes.  Each node is a set of Linux namespaces held open by
# one sleeping process: its own network (a veth into a bridge), hostname (UTS),
# PID space, System V IPC and mounts (a private /dev/shm and /etc/hosts).
# Programs see the rest of the file system (the build tree, /tmp) as on a
# cluster with a shared home and scratch.  Needs root.
#
# Usage: nsbed.sh up N        make nodes ampinode1..ampinodeN (prints their names)
#        nsbed.sh down        end every node and remove the bridge
#        nsbed.sh exec NODE CMD...   run CMD inside NODE (all of its namespaces)
#        nsbed.sh agent NODE CMD...  the same, as Open MPI's remote-shell agent:
#                             mpirun --mca plm_rsh_agent "nsbed.sh agent" -H ...
#        nsbed.sh hostfile    one line per node, for mpirun --hostfile
#        nsbed.sh link NODE up|down  connect or cut a node's network link
#        nsbed.sh env NODE NAME=VALUE...  variables every command the agent
#                             starts on NODE gets (e.g. CUDA_VISIBLE_DEVICES=1:
#                             one GPU per node)
#
# Several beds can live at once (test runs of several work trees): NSBED_ID
# (0-249, default 0) picks the bed's bridge ampibrID, its veths nsbIDxI, its
# network 10.213.ID.0/24 and its state directory /run/ampi-nsbed-ID.
# Addresses: 10.213.ID.1 is the bridge (the machine itself: the "head node"
# where mpirun runs), node i is 10.213.ID.(10+i).  Nothing leaves the machine:
# the bridge has no uplink and no route beyond its /24.  The state directory
# holds one file per node with its holder's PID.
set -euo pipefail
id=${NSBED_ID:-0}
[[ $id =~ ^[0-9]+$ ]] && [ "$id" -le 249 ] || { echo "nsbed: NSBED_ID must be 0..249" >&2; exit 1; }
state=/run/ampi-nsbed-$id
bridge=ampibr$id
net=10.213.$id

die() { echo "nsbed: $*" >&2; exit 1; }
holder_pid() {
    [ -f "$state/$1" ] || die "no node $1 (nsbed.sh up N first)"
    local pid
    pid=$(cat "$state/$1")
    [ -d "/proc/$pid" ] || die "node $1 is gone (holder $pid ended)"
    echo "$pid"
}
node_index() { local n=${1#ampinode}; [[ $n =~ ^[0-9]+$ ]] || die "bad node name $1"; echo "$n"; }

# enter NODE CMD...: run CMD in every namespace of NODE, in the caller's
# working directory, with the caller's environment.
enter() {
    local node=$1 pid
    shift
    pid=$(holder_pid "$node")
    exec nsenter -t "$pid" --net --uts --ipc --pid --mount --wd="$PWD" -- "$@"
}

up() {
    local n=$1 i name pid
    [ "$(id -u)" = 0 ] || die "needs root"
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 32 ] || die "N must be 1..32"
    # another bed of this ID (a concurrent test run) is never torn down here
    mkdir "$state" 2>/dev/null || die "bed $id is in use ($state exists; nsbed.sh down ends it)"
    ip link add "$bridge" type bridge 2>/dev/null || { rmdir "$state"; die "bed $id is in use ($bridge exists)"; }
    ip addr add "$net.1/24" dev "$bridge"
    ip link set "$bridge" up
    {
        echo "127.0.0.1 localhost"
        echo "$net.1 ampihead"
        for i in $(seq 1 "$n"); do echo "$net.$((10 + i)) ampinode$i"; done
    } >"$state/hosts"
    for i in $(seq 1 "$n"); do
        name=ampinode$i
        # The holder: new namespaces, private mounts of /dev/shm and
        # /etc/hosts, then sleep.  setsid detaches it from the caller's session.
        setsid unshare --net --uts --ipc --pid --mount --fork --propagation private \
            sh -c "hostname $name; mount -t tmpfs -o size=2g tmpfs /dev/shm;
                   mount --bind $state/hosts /etc/hosts;
                   mount -t proc proc /proc; exec sleep infinity" \
            </dev/null >/dev/null 2>&1 &
        local unshare_pid=$!
        pid=
        for _ in $(seq 1 100); do
            pid=$(pgrep -P "$unshare_pid" sleep || true)
            [ -n "$pid" ] && break
            sleep 0.05
        done
        [ -n "$pid" ] || die "node $name did not start"
        echo "$pid" >"$state/$name"
        ip link add "nsb${id}x$i" type veth peer name eth0 netns "$pid"
        ip link set "nsb${id}x$i" master "$bridge"
        ip link set "nsb${id}x$i" up
        nsenter -t "$pid" --net ip addr add "$net.$((10 + i))/24" dev eth0
        nsenter -t "$pid" --net ip link set eth0 up
        nsenter -t "$pid" --net ip link set lo up
        echo "$name"
    done
}

down() {
    local f pid
    if [ -d "$state" ]; then
        for f in "$state"/ampinode*; do
            [ -f "$f" ] || continue
            pid=$(cat "$f")
            # Killing the holder (PID 1 of the node) ends every process in it.
            kill -KILL "$pid" 2>/dev/null || true
            pkill -KILL -P "$pid" 2>/dev/null || true
            rm -f "$f"
        done
    fi
    ip link del "$bridge" 2>/dev/null || true
    for f in /sys/class/net/nsb"$id"x*; do
        [ -e "$f" ] && ip link del "$(basename "$f")" 2>/dev/null || true
    done
    rm -rf "$state"
}

case ${1:-} in
    up) [ $# -eq 2 ] || die "usage: nsbed.sh up N"; up "$2" ;;
    down) down ;;
    exec) [ $# -ge 3 ] || die "usage: nsbed.sh exec NODE CMD..."; shift; enter "$@" ;;
    agent)
        # Open MPI calls the agent as ssh: AGENT [options] HOST CMD...; skip
        # ssh-style options it may pass, then run the command through a shell
        # (it is one string with quoting meant for a remote shell).
        shift
        while [ $# -gt 0 ] && [[ $1 == -* ]]; do shift; done
        [ $# -ge 2 ] || die "agent: usage: agent HOST CMD..."
        host=$1
        shift
        case $host in
            "$net".*) host=ampinode$(( ${host##*.} - 10 )) ;;
        esac
        node_index "$host" >/dev/null
        if [ -f "$state/$host.env" ]; then
            enter "$host" /bin/sh -c "set -a; . '$state/$host.env'; set +a; $*"
        fi
        enter "$host" /bin/sh -c "$*"
        ;;
    env)
        [ $# -ge 3 ] || die "usage: nsbed.sh env NODE NAME=VALUE..."
        holder_pid "$2" >/dev/null
        node=$2
        shift 2
        for kv in "$@"; do
            [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.,:/-]*$ ]] || die "env: bad NAME=VALUE '$kv'"
            echo "$kv" >>"$state/$node.env"
        done
        ;;
    hostfile)
        for f in "$state"/ampinode*; do [ -f "$f" ] && basename "$f"; done | sort -V ;;
    link)
        [ $# -eq 3 ] || die "usage: nsbed.sh link NODE up|down"
        i=$(node_index "$2")
        ip link set "nsb${id}x$i" "$3" ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
