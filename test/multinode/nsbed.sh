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
#        nsbed.sh hostfile [PPN]  one line per node, for mpirun --hostfile
#                             (with PPN: "NODE slots=PPN")
#        nsbed.sh mpirun PPN [MPIRUN OPTIONS...] PROGRAM [ARGS...]
#                             Open MPI's mpirun (OMPI_MPIRUN, default mpirun)
#                             over every node, PPN processes on each: the
#                             agent above, a hostfile with slots=PPN, the rsh
#                             launcher, and no resource manager's allocation:
#                             Slurm's, PBS's, LSF's, Grid Engine's and Flux's
#                             variables are removed and their allocation
#                             modules left out (inside a Slurm job Open MPI
#                             maps only onto the job's hosts, drops the bed's
#                             nodes and answers "All nodes which are allocated
#                             for this job are already filled")
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
#
# Tools: unshare, nsenter (util-linux), pgrep, and ip (iproute2).  Where ip
# is missing (a container image without iproute2) the bed unpacks Debian's
# iproute2 and the libraries it needs (libmnl0, libbpf1, libelf1, libcap2,
# libxtables12) from NSBED_DEBS (default the repository's .whl/, where
# scripts/device-prep.sh puts them) into /run/ampi-nsbed-tools.
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
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
# ipcmd: the command that runs ip(8), the system's or the unpacked one
ipcmd=(ip)
find_ip() {
    command -v ip >/dev/null 2>&1 && [ -z "${NSBED_CARRIED_IP:-}" ] && return 0
    local debs=${NSBED_DEBS:-$(cd "$(dirname "$self")/../.." && pwd)/.whl} tools=/run/ampi-nsbed-tools d
    if [ ! -x "$tools/bin/ip" ]; then
        ls "$debs"/iproute2_*.deb >/dev/null 2>&1 ||
            die "ip (iproute2) not found, and no iproute2_*.deb in $debs (scripts/device-prep.sh downloads it)"
        rm -rf "$tools.partial"
        for d in "$debs"/iproute2_*.deb "$debs"/libmnl0_*.deb "$debs"/libbpf1_*.deb "$debs"/libelf1_*.deb \
            "$debs"/libcap2_*.deb "$debs"/libxtables12_*.deb; do
            [ -f "$d" ] && { dpkg-deb -x "$d" "$tools.partial" || die "cannot unpack $d"; }
        done
        rm -rf "$tools"
        mv "$tools.partial" "$tools"
    fi
    ipcmd=(env "LD_LIBRARY_PATH=$tools/lib/x86_64-linux-gnu:$tools/usr/lib/x86_64-linux-gnu" "$tools/bin/ip")
    "${ipcmd[@]}" -V >/dev/null 2>&1 || die "the unpacked $tools/bin/ip does not run: $("${ipcmd[@]}" -V 2>&1 | head -1)"
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
    find_ip
    mkdir "$state" 2>/dev/null || die "bed $id is in use ($state exists; nsbed.sh down ends it)"
    "${ipcmd[@]}" link add "$bridge" type bridge 2>/dev/null || { rmdir "$state"; die "bed $id is in use ($bridge exists)"; }
    "${ipcmd[@]}" addr add "$net.1/24" dev "$bridge"
    "${ipcmd[@]}" link set "$bridge" up
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
        "${ipcmd[@]}" link add "nsb${id}x$i" type veth peer name eth0 netns "$pid"
        "${ipcmd[@]}" link set "nsb${id}x$i" master "$bridge"
        "${ipcmd[@]}" link set "nsb${id}x$i" up
        nsenter -t "$pid" --net "${ipcmd[@]}" addr add "$net.$((10 + i))/24" dev eth0
        nsenter -t "$pid" --net "${ipcmd[@]}" link set eth0 up
        nsenter -t "$pid" --net "${ipcmd[@]}" link set lo up
        echo "$name"
    done
    # mpirun on the head treats a host name that resolves to one of the
    # head's own addresses as the head itself and starts its processes there
    local addr
    for i in $(seq 1 "$n"); do
        addr=$(getent hosts "ampinode$i" | awk '{ print $1; exit }' || true)
        [ -n "$addr" ] && echo "nsbed: warning: ampinode$i resolves to $addr on this machine;" \
            "mpirun may start its processes here instead of in the node" >&2
    done
    return 0
}

down() {
    local f pid
    find_ip 2>/dev/null || true
    if [ -d "$state" ]; then
        for f in "$state"/ampinode*; do
            [ -f "$f" ] || continue
            case $f in *.env) rm -f "$f"; continue ;; esac
            pid=$(cat "$f")
            # Killing the holder (PID 1 of the node) ends every process in it.
            kill -KILL "$pid" 2>/dev/null || true
            pkill -KILL -P "$pid" 2>/dev/null || true
            rm -f "$f"
        done
    fi
    "${ipcmd[@]}" link del "$bridge" 2>/dev/null || true
    for f in /sys/class/net/nsb"$id"x*; do
        [ -e "$f" ] && "${ipcmd[@]}" link del "$(basename "$f")" 2>/dev/null || true
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
        for f in "$state"/ampinode*; do
            [ -f "$f" ] && case $f in *.env) ;; *) echo "$(basename "$f")${2:+ slots=$2}" ;; esac
        done | sort -V ;;
    mpirun)
        [ $# -ge 3 ] && [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || die "usage: nsbed.sh mpirun PPN [OPTIONS...] PROGRAM [ARGS...]"
        ppn=$2
        shift 2
        "$self" hostfile "$ppn" >"$state/hostfile"
        nnodes=$(wc -l <"$state/hostfile")
        [ "$nnodes" -ge 1 ] || die "no nodes (nsbed.sh up N first)"
        for v in $(compgen -e); do
            case $v in SLURM_* | SLURMD_* | PBS_* | LSB_* | LSF_* | PE_HOSTFILE | SGE_* | FLUX_* | OMPI_MCA_ras* | OMPI_MCA_plm*) unset "$v" ;; esac
        done
        # the bed runs as root, which Open MPI refuses without these
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        exec "${OMPI_MPIRUN:-mpirun}" --mca plm rsh --mca plm_rsh_agent "$self agent" \
            --mca ras ^slurm,tm,lsf,gridengine,alps,simulator --hostfile "$state/hostfile" \
            -np $((nnodes * ppn)) "$@"
        ;;
    link)
        [ $# -eq 3 ] || die "usage: nsbed.sh link NODE up|down"
        i=$(node_index "$2")
        find_ip
        "${ipcmd[@]}" link set "nsb${id}x$i" "$3" ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
