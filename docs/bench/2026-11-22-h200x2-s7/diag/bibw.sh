#!/bin/bash
# osu_bibw, osu_bw, osu_latency 16 KiB-4 MiB: ours, ours with AMPI_CMA_SPLIT=0, Open MPI, 4 rounds (call 7;
# call 6 ran bibw and a 1000-iteration osu_bw 1-8 B the same way).  After scripts/device.sh build: OUT=DIR bash THIS
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/bibw; mkdir -p $D
S="osu/osu_common.c osu/osu_options.c osu/osu_device.c"
for b in osu_bibw osu_bw osu_latency; do $P/bin/ampicc -std=c11 -O2 -o $D/$b osu/$b.c $S && mpicc -std=c11 -O2 -o $D/$b.ompi osu/$b.c $S || exit 1; done
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
for r in 1 2 3 4; do
  for b in osu_bibw osu_bw osu_latency; do
    echo "r$r ours $b $($P/bin/ampirun --timeout 60 -np 2 $D/$b -m 16384:4194304 | row)"
    echo "r$r split0 $b $(AMPI_CMA_SPLIT=0 $P/bin/ampirun --timeout 60 -np 2 $D/$b -m 16384:4194304 | row)"
    echo "r$r ompi $b $(om $D/$b.ompi -m 16384:4194304 2>&1 | row)"
  done
done
