#!/bin/bash
# osu_alltoall and osu_allreduce H-H 1 B-8 KiB on 2 processes, ours (as built, and with
# AMPI_SHM_PREFETCHW=0) beside Open MPI, interleaved per round.
# After scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-26-h100x2-s8/diag/a2a.sh [rounds]
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/a2a; mkdir -p $D
S="osu/osu_coll.c osu/osu_coll_options.c osu/osu_common.c osu/osu_options.c osu/osu_device.c"
for b in osu_alltoall osu_allreduce; do
  $P/bin/ampicc -std=c11 -O2 -o $D/$b osu/$b.c $S -lm && mpicc -std=c11 -O2 -o $D/$b.ompi osu/$b.c $S -lm || exit 1
done
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
for r in $(seq 1 ${1:-5}); do
  for b in osu_alltoall osu_allreduce; do
    echo "r$r $b ours $($P/bin/ampirun --timeout 60 -np 2 $D/$b -m 1:8192 | row)"
    echo "r$r $b pw0 $(AMPI_SHM_PREFETCHW=0 $P/bin/ampirun --timeout 60 -np 2 $D/$b -m 1:8192 | row)"
    echo "r$r $b ompi $(om $D/$b.ompi -m 1:8192 2>&1 | row)"
  done
done
