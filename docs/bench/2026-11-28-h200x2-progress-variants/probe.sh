#!/bin/bash
# pure start + wait loops under the progress thread's variants (spin default, off, mute, pollnow, defer at 256K, plain waits)
P=$PWD/.prefix/bin
$P/ampicc -O2 -o /tmp/nbc_phases osu/nbc_phases.c || exit 1
nproc
for r in 1 2 3; do
for cfg in spin off mute pollnow defer256 plain; do
  case $cfg in
  spin) e="" ;; off) e="AMPI_PROGRESS_SPIN=off" ;; mute) e="TRY_SIDE=mute" ;; pollnow) e="TRY_SIDE=pollnow" ;;
  defer256) e="TRY_DEFER_MIN=262144" ;; plain) e="AMPI_PROGRESS_SPIN_PAUSE=off" ;;
  esac
  for job in Ialltoall:65536 Ialltoall:131072 Ialltoall:262144 Igather:65536 Igather:262144; do
    IFS=: read c n <<< "$job"
    echo "== round $r cfg $cfg $job $(env $e timeout 60 $P/ampirun -np 2 /tmp/nbc_phases $c $n 200 pure 2>&1 | grep -m1 pure)"
  done
done
done
