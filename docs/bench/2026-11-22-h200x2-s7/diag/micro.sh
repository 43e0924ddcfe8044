#!/bin/bash
# Diagnostic (session 7): message patterns around a barrier, ours vs Open MPI, 2 processes.
# On the lent machine after scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-22-h200x2-s7/diag/micro.sh
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/micro; mkdir -p $D
for s in pat skew; do $P/bin/ampicc -O2 -o $D/$s docs/bench/2026-11-22-h200x2-s7/diag/$s.c && mpicc -O2 -o $D/$s.ompi docs/bench/2026-11-22-h200x2-s7/diag/$s.c; done
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
for r in 1 2; do
  for p in 0 3 4 6 2; do
    echo "r$r ours $($P/bin/ampirun --timeout 60 -np 2 $D/pat $p)"
    echo "r$r ompi $(om $D/pat.ompi $p 2>&1 | grep pattern)"
  done
  echo "r$r ours skew $($P/bin/ampirun --timeout 60 -np 2 $D/skew)"
  echo "r$r ompi skew $(om $D/skew.ompi 2>&1 | grep barrier)"
done
