#!/bin/bash
# test/multinode/slurmbed.sh -- a Slurm cluster over the nodes of nsbed.sh:
# slurmctld and a private munged on the machine itself (the head, 10.213.0.1),
# one slurmd inside each node's namespaces.  Jobs start with
# `SLURM_CONF=$(slurmbed.sh conf) srun --mpi=pmix ...` (Slurm's PMIx plugin is
# the engine; the library only speaks PMIx to it).  Needs root, Debian's
# slurmctld, slurmd, slurm-client and munge, and `nsbed.sh up N` first.
#
# Usage: slurmbed.sh up N     configure and start the daemons for ampinode1..N
#        slurmbed.sh down     stop them
#        slurmbed.sh conf     print the path of slurm.conf
# State: /run/ampi-nsbed-ID/slurm, with NSBED_ID as for nsbed.sh; slurmctld
# listens on port 7000+ID of the bed's head address.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
id=${NSBED_ID:-0}
state=/run/ampi-nsbed-$id/slurm
conf=$state/slurm.conf
die() { echo "slurmbed: $*" >&2; exit 1; }

wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
    local limit=$1
    shift
    for _ in $(seq 1 $((limit * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
}

up() {
    local n=$1 i
    for cmd in slurmctld slurmd srun sinfo munged; do
        command -v "$cmd" >/dev/null 2>&1 || die "$cmd not found (apt-get install slurmctld slurmd slurm-client munge)"
    done
    [ -f /etc/munge/munge.key ] || die "no /etc/munge/munge.key"
    down >/dev/null 2>&1 || true
    mkdir -p "$state/ctld" "$state/munge"
    chown munge:munge "$state/munge"
    chmod 700 "$state/munge"
    cat >"$conf" <<EOF
ClusterName=ampibed
SlurmctldHost=$(hostname -s)(10.213.$id.1)
SlurmctldPort=$((7000 + id))
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool-%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd-%n.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
# both address families: inside a fresh network namespace getaddrinfo() with
# AF_INET and AI_ADDRCONFIG fails, with AF_UNSPEC (which this selects) it works
CommunicationParameters=EnableIPv6
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
# generous: on a loaded machine a launch can take seconds, and a node marked
# down would fail every later case
SlurmdTimeout=300
MessageTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=2
TmpFS=/tmp
NodeName=ampinode[1-$n] NodeHostname=ampinode[1-$n] NodeAddr=10.213.$id.[11-$((10 + n))] CPUs=$(nproc) State=UNKNOWN
PartitionName=bed Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
    echo "CgroupPlugin=cgroup/v1" >"$state/cgroup.conf"
    runuser -u munge -- munged --socket="$state/munge/munge.socket" --pid-file="$state/munge/munged.pid" \
        --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed" --force
    wait_for 5 test -S "$state/munge/munge.socket" || die "munged did not start"
    SLURM_CONF=$conf slurmctld -f "$conf" || die "slurmctld did not start: $(tail -n 5 "$state/slurmctld.log")"
    for i in $(seq 1 "$n"); do
        mkdir -p "$state/spool-ampinode$i" "$state/tmp-ampinode$i"
        # Each slurmd reads a copy whose TmpFS is its node's own: Slurm's PMIx
        # plugin makes its directories there by job and step alone, and the
        # nodes share /tmp (slurmctld only logs that the copies differ).
        sed "s|^TmpFS=.*|TmpFS=$state/tmp-ampinode$i|" "$conf" >"$state/slurm-ampinode$i.conf"
        SLURM_CONF=$state/slurm-ampinode$i.conf "$here/nsbed.sh" exec "ampinode$i" \
            slurmd -f "$state/slurm-ampinode$i.conf" -N "ampinode$i" ||
            die "slurmd on ampinode$i did not start: $(tail -n 5 "$state/slurmd-ampinode$i.log" 2>/dev/null)"
    done
    idle() { [ "$(SLURM_CONF=$conf sinfo -h -N -o %t | grep -c idle)" -eq "$n" ]; }
    wait_for 20 idle || die "nodes not idle: $(SLURM_CONF=$conf sinfo -h -N -o '%N %t' | tr '\n' ' ')"
}

stop_pidfile() {
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

down() {
    local f
    [ -d "$state" ] || return 0
    for f in "$state"/slurmd-*.pid; do [ -f "$f" ] && stop_pidfile "$f"; done
    stop_pidfile "$state/slurmctld.pid"
    stop_pidfile "$state/munge/munged.pid"
    rm -rf "$state"
}

case ${1:-} in
    up) [ $# -eq 2 ] || die "usage: slurmbed.sh up N"; up "$2" ;;
    down) down ;;
    conf) echo "$conf" ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
