# shellcheck shell=bash disable=SC2154,SC2034,SC2086 # bench.sh defines these; commands split on purpose
# scripts/bench-nodes.sh -- sourced by scripts/bench.sh for the areas that
# cross nodes: nodes-p2p (osu_latency, osu_bw H H) and nodes-device-p2p (the
# same D D), between two "nodes" of the namespace test bed
# (test/multinode/nsbed.sh: each its own network, hostname, /dev/shm, PID
# and IPC space, joined by veth pairs and a bridge).  One process per node;
# every side starts through the bed's `nsbed.sh mpirun 1`, i.e. Open MPI's
# mpirun and its daemons, so that the bytes cross the bridge over TCP.
# Device buffers: node i sees GPU i-1 alone (CUDA_VISIBLE_DEVICES).
#
# Sides: ours (our defaults); Open MPI --mca pml ucx over the same UCX as
# ours (AMPI_UCX_DIR first in LD_LIBRARY_PATH); for host buffers also Open
# MPI --mca pml ob1 --mca btl self,tcp (its own TCP transport).  Every side
# runs --bind-to none: the nodes share the machine's cores, and mpirun binds
# each node's first process to the same core otherwise.
#
# BENCH_NODES_LAT_ARGS, BENCH_NODES_BW_ARGS: sizes and iterations of
# osu_latency and osu_bw instead of OSU's defaults up to 4 MiB (e.g. "-m
# 1:1048576 -i 20 -x 2" where a loaded machine makes a default run take
# minutes); noted with the tables.
# OSU74_DIR: an OSU micro-benchmarks 7.4 source tree (never committed); when
# set, its unmodified osu_latency and osu_bw, configured and built with each
# side's compilers (with --enable-cuda=basic where GPUs are), else the osu/
# copies that bench.sh built.  Needs root (the bed).
# Uses bench.sh's out, note, add, has_area, build_osu74, status, ngpu, ucx_env.

nsbed=$repo/test/multinode/nsbed.sh
# a bed of its own: test runs of other work trees may hold others
export NSBED_ID=${NSBED_ID:-$((200 + $$ % 40))}
nodes_areas=""
for a in nodes-p2p nodes-device-p2p; do has_area $a && nodes_areas="$nodes_areas $a"; done

# drop_nodes_areas REASON: leave both areas out, with the reason
drop_nodes_areas() {
    local a
    for a in $nodes_areas; do
        note "$a left out: $1"
        areas=$(echo " $areas " | sed "s/ $a / /")
    done
    nodes_areas=""
}

# nodes_bed_up: a bed of 2 nodes under the first free ID from NSBED_ID on
# (a bed in use is another run's: never taken down here)
nodes_bed_up() {
    local try
    for try in 1 2 3 4 5 6 7 8; do
        "$nsbed" up 2 >"$out/logs/nsbed-up.log" 2>&1 && return 0
        grep -q 'is in use' "$out/logs/nsbed-up.log" || return 1
        NSBED_ID=$((NSBED_ID % 249 + 1))
    done
    return 1
}

if [ "$(id -u)" != 0 ]; then
    drop_nodes_areas "the namespace test bed needs root"
elif ! nodes_bed_up; then
    drop_nodes_areas "the namespace test bed did not come up: $(tail -n 2 "$out/logs/nsbed-up.log" | tr '\n' ' ')"
else
    trap '"$nsbed" down >/dev/null 2>&1' EXIT
    if has_area nodes-device-p2p; then
        "$nsbed" env ampinode1 CUDA_VISIBLE_DEVICES=0
        "$nsbed" env ampinode2 CUDA_VISIBLE_DEVICES=1
    fi
    note "nodes: 2 namespace nodes (bed $NSBED_ID, 10.213.$NSBED_ID.0/24: veth pairs through a bridge, TCP), one process each, all sides --bind-to none"
fi

# the benchmark binaries of each side: OSU 7.4's (bench.sh's build_osu74,
# shared with the rma areas) when OSU74_DIR is set, else the osu/ copies
nodes_osu_dir_ours=$out/build-ours nodes_osu_dir_ompi=$out/build-ompi
if [ -n "$nodes_areas" ] && [ -n "${OSU74_DIR:-}" ]; then
    for side in ours ompi; do
        bin=$out/build-$side/osu74/c/mpi/pt2pt/standard
        if [ ! -x "$bin/osu_latency" ]; then
            if [ $side = ours ]; then
                build_osu74 ours "$AMPI_PREFIX/bin/ampicc" "$AMPI_PREFIX/bin/ampicxx" || status=1
            else
                build_osu74 ompi "$OMPI_MPICC" "${OMPI_MPICXX:-mpicxx}" || status=1
            fi
        fi
        [ -x "$bin/osu_latency" ] && eval "nodes_osu_dir_$side=\$bin"
    done
    [ "$nodes_osu_dir_ours" != "$out/build-ours" ] &&
        note "nodes: unmodified OSU 7.4 ($(basename "$OSU74_DIR")), built with each side's compilers"
fi

# the series
[ -z "${BENCH_NODES_LAT_ARGS:-}${BENCH_NODES_BW_ARGS:-}" ] || [ -z "$nodes_areas" ] ||
    note "nodes: not OSU's default sizes and iterations: osu_latency ${BENCH_NODES_LAT_ARGS:-(defaults)}, osu_bw ${BENCH_NODES_BW_ARGS:-(defaults)}"
nodes_run="$nsbed mpirun 1 --bind-to none"
for a in $nodes_areas; do
    place=H-H dev="" max=4194304
    [ $a = nodes-device-p2p ] && place=D-D dev="-d cuda"
    for b in osu_latency osu_bw; do
        unit=MB/s sizes=${BENCH_NODES_BW_ARGS:-}
        [ $b = osu_latency ] && unit=us sizes=${BENCH_NODES_LAT_ARGS:-}
        # -d cuda right before the buffer places: OSU 7.4's parser wants it there
        args="-c ${p2p_args:-${sizes:--m 1:$max}} $dev ${place%-*} ${place#*-}"
        add $a $b $place ours $unit "$nodes_run $nodes_osu_dir_ours/$b $args"
        add $a $b $place ompi-ucx $unit "env $ucx_env $nodes_run --mca pml ucx --mca pml_ucx_tls any \
--mca pml_ucx_devices any -x LD_LIBRARY_PATH $nodes_osu_dir_ompi/$b $args"
        [ $a = nodes-p2p ] && add $a $b $place ompi-tcp $unit \
            "$nodes_run --mca pml ob1 --mca btl self,tcp $nodes_osu_dir_ompi/$b $args"
    done
done
