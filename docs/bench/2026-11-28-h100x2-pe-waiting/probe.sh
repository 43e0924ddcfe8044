#!/bin/bash
# pure start + wait loops: head (the progress thread keeps off the worker while the ranks wait), the same without
# its queued copies meanwhile, spin off, and the base build
P=$PWD/.prefix/bin B=$PWD/.build/device/base-8a6767a/.prefix/bin
$P/ampicc -O2 -o /tmp/nbc_phases osu/nbc_phases.c || exit 1
[ -x $B/ampicc ] && $B/ampicc -O2 -o /tmp/nbc_phases_base osu/nbc_phases.c
for r in 1 2 3; do
for cfg in head nowork off base; do
  e=""; run="$P/ampirun"; prog=/tmp/nbc_phases
  case $cfg in
  nowork) e="TRY_INSIDE_WORK=0" ;; off) e="AMPI_PROGRESS_SPIN=off" ;; base) run="$B/ampirun"; prog=/tmp/nbc_phases_base ;;
  esac
  for job in Ialltoall:65536 Ialltoall:131072 Ialltoall:262144 Igather:65536 Igather:262144; do
    IFS=: read c n <<< "$job"
    echo "== round $r cfg $cfg $job $(env $e timeout 30 $run -np 2 $prog $c $n 200 pure 2>&1 | grep -m1 pure)"
  done
done
done
