#!/bin/bash
# osu_bw 1-16 B: default runs beside longer ones (call 4: "-m 1:16" "-m 1:16 -i 2000" "-m 2:16"; call 5: the
# three ARGS below), ours vs Open MPI.  After scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-22-h200x2-s7/diag/bw1.sh
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/bw1; mkdir -p $D
S="osu/osu_common.c osu/osu_options.c osu/osu_device.c"
$P/bin/ampicc -std=c11 -O2 -o $D/osu_bw osu/osu_bw.c $S && mpicc -std=c11 -O2 -o $D/osu_bw.ompi osu/osu_bw.c $S || exit 1
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
for r in 1 2 3 4; do
  for args in "-m 1:16" "-m 1:16 -x 300" "-m 1:16 -x 1000 -i 1000"; do
    echo "r$r ours [$args] $($P/bin/ampirun --timeout 60 -np 2 $D/osu_bw $args | row)"
    echo "r$r ompi [$args] $(om $D/osu_bw.ompi $args 2>&1 | row)"
  done
done
