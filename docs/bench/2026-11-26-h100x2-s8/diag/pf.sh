#!/bin/bash
# Receiver prefetch A/B (AMPI_SHM_PREFETCH=0/2/4) beside Open MPI, interleaved per round:
# bwtrace (1 B, 4 "sizes"), osu_bw -m 1:16 (default iterations), osu_latency -m 1:64.
# After scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-26-h100x2-s8/diag/pf.sh [rounds]
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/pf; mkdir -p $D
S="osu/osu_common.c osu/osu_options.c osu/osu_device.c"
for b in osu_bw osu_latency; do
  $P/bin/ampicc -std=c11 -O2 -o $D/$b osu/$b.c $S && mpicc -std=c11 -O2 -o $D/$b.ompi osu/$b.c $S || exit 1
done
T=docs/bench/2026-11-26-h100x2-s8/diag/bwtrace.c
$P/bin/ampicc -std=c11 -O2 -o $D/bwtrace $T && mpicc -std=c11 -O2 -o $D/bwtrace.ompi $T || exit 1
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
tr1() { awk '/^round [0-9]:/{printf "%s ", $3} /block/{printf "| %s %s %s %s", $6, $7, $8, $16}'; echo; }
for r in $(seq 1 ${1:-5}); do
  for v in 0 2 4 ompi; do
    if [ $v = ompi ]; then
      echo "r$r ompi trace $(om $D/bwtrace.ompi 1 4 2>&1 | tr1)"
      echo "r$r ompi bw $(om $D/osu_bw.ompi -m 1:16 2>&1 | row)"
      echo "r$r ompi lat $(om $D/osu_latency.ompi -m 1:64 2>&1 | row)"
    else
      echo "r$r pf$v trace $(AMPI_SHM_PREFETCH=$v $P/bin/ampirun --timeout 60 -np 2 $D/bwtrace 1 4 | tr1)"
      echo "r$r pf$v bw $(AMPI_SHM_PREFETCH=$v $P/bin/ampirun --timeout 60 -np 2 $D/osu_bw -m 1:16 | row)"
      echo "r$r pf$v lat $(AMPI_SHM_PREFETCH=$v $P/bin/ampirun --timeout 60 -np 2 $D/osu_latency -m 1:64 | row)"
    fi
  done
done
