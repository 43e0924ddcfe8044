#!/bin/bash
# A/B of the small-envelope changes: BASE (a tree from .whl/base-*.tar, made
# here with `git archive COMMIT > .whl/base-COMMIT.tar`) against this tree,
# as built and with AMPI_SHM_PREFETCHW=N (variant pwN), beside Open MPI,
# interleaved per round: bwtrace 1 B (3 "sizes"), osu_bw -m 1:64, osu_latency
# -m 1:64.  AB_VARIANTS (default "base new pw4 pw8 ompi") and AB_PROGS (default
# "trace bw lat") choose.
# After scripts/device.sh build: OUT=DIR bash docs/bench/2026-11-26-h100x2-s8/diag/ab.sh [rounds]
cd "$(dirname "$0")/../../../.."; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/.prefix; U=$PWD/.deps/ucx/libucx/lib; D=$OUT/ab; mkdir -p $D
tarball=$(ls .whl/base-*.tar | head -1); B=/tmp/ab-base
rm -rf $B && mkdir -p $B && tar -xf $tarball -C $B && ln -s $PWD/.whl $B/.whl
(cd $B && ./setup.sh --no-demo > $D/base-setup.log 2>&1) || { echo "base build failed"; tail $D/base-setup.log; exit 1; }
echo "base: $tarball"
S="osu/osu_common.c osu/osu_options.c osu/osu_device.c"; T=docs/bench/2026-11-26-h100x2-s8/diag/bwtrace.c
for b in osu_bw osu_latency; do
  $P/bin/ampicc -std=c11 -O2 -o $D/$b.new osu/$b.c $S && $B/.prefix/bin/ampicc -std=c11 -O2 -o $D/$b.base osu/$b.c $S &&
    mpicc -std=c11 -O2 -o $D/$b.ompi osu/$b.c $S || exit 1
done
$P/bin/ampicc -std=c11 -O2 -o $D/bwtrace.new $T && $B/.prefix/bin/ampicc -std=c11 -O2 -o $D/bwtrace.base $T &&
  mpicc -std=c11 -O2 -o $D/bwtrace.ompi $T || exit 1
om() { mpirun -np 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x LD_LIBRARY_PATH="$U:${LD_LIBRARY_PATH:-}" "$@"; }
row() { awk '/^[0-9]/{printf "%s ", $2}'; echo; }
tr1() { awk '/^round [0-9]:/{printf "%s ", $3}'; echo; }
for r in $(seq 1 ${1:-6}); do
  for v in ${AB_VARIANTS:-base new pw4 pw8 ompi}; do
    case $v in
    ompi) run() { om "$D/$1.ompi" "${@:2}" 2>&1; } ;;
    base) run() { $B/.prefix/bin/ampirun --timeout 60 -np 2 "$D/$1.base" "${@:2}"; } ;;
    new) run() { $P/bin/ampirun --timeout 60 -np 2 "$D/$1.new" "${@:2}"; } ;;
    pw*) run() { AMPI_SHM_PREFETCHW=${v#pw} $P/bin/ampirun --timeout 60 -np 2 "$D/$1.new" "${@:2}"; } ;;
    esac
    for p in ${AB_PROGS:-trace bw lat}; do
      case $p in
      trace) echo "r$r $v trace $(run bwtrace 1 3 | tr1)" ;;
      bw) echo "r$r $v bw $(run osu_bw -m 1:64 | row)" ;;
      lat) echo "r$r $v lat $(run osu_latency -m 1:64 | row)" ;;
      esac
    done
  done
done
