#!/bin/bash
# First-lap A/B for osu_bw's first size: as built, AMPI_SHM_WARM=1 (the sender
# stores into every cell of its rings at attach), =2 (the receiver reads every
# cell), AMPI_SHM_CELLS=256 (a lap every 4 windows), beside Open MPI,
# interleaved per round: bwtrace 1 B (3 "sizes"; rates, then block medians of
# windows 0-9, 10-19, 20-29, 50-59, 100-109 of the first two) and osu_bw -m 1:16.
# After scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-26-h100x2-s8/diag/warm.sh [rounds]
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/warm; mkdir -p $D
S="osu/osu_common.c osu/osu_options.c osu/osu_device.c"
$P/bin/ampicc -std=c11 -O2 -o $D/osu_bw osu/osu_bw.c $S && mpicc -std=c11 -O2 -o $D/osu_bw.ompi osu/osu_bw.c $S || exit 1
T=docs/bench/2026-11-26-h100x2-s8/diag/bwtrace.c
$P/bin/ampicc -std=c11 -O2 -o $D/bwtrace $T && mpicc -std=c11 -O2 -o $D/bwtrace.ompi $T || exit 1
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
tr1() { awk '/^round [0-9]:/{printf "%s ", $3} /block/{printf "| %s %s %s %s %s ", $6, $7, $8, $11, $16}'; echo; }
for r in $(seq 1 ${1:-6}); do
  for v in base w1 w2 c256 ompi; do
    case $v in base) e="";; w1) e="AMPI_SHM_WARM=1";; w2) e="AMPI_SHM_WARM=2";; c256) e="AMPI_SHM_CELLS=256";; esac
    if [ $v = ompi ]; then
      echo "r$r ompi trace $(om $D/bwtrace.ompi 1 3 2>&1 | tr1)"
      echo "r$r ompi bw $(om $D/osu_bw.ompi -m 1:16 2>&1 | row)"
    else
      echo "r$r $v trace $(env $e $P/bin/ampirun --timeout 60 -np 2 $D/bwtrace 1 3 | tr1)"
      echo "r$r $v bw $(env $e $P/bin/ampirun --timeout 60 -np 2 $D/osu_bw -m 1:16 | row)"
    fi
  done
done
