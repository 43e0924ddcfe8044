#!/bin/bash
# does any spinning vCPU slow the ranks' pure loop?  spin mode, off, off + external spinners on CPUs 2,3 (pause / plain), spin mode without pause
P=$PWD/.prefix/bin
$P/ampicc -O2 -o /tmp/nbc_phases osu/nbc_phases.c || exit 1
gcc -O2 -o /tmp/spinner .whl/spinner.c || exit 1
nproc; taskset -pc $$
for r in 1 2 3; do
for cfg in spin off off+pausers off+plainers spin-nopause off+far-pausers; do
  e=""; sp=""
  case $cfg in
  off*) e="AMPI_PROGRESS_SPIN=off" ;;
  spin-nopause) e="AMPI_X_NOPAUSE=1" ;;
  esac
  case $cfg in
  *+pausers) sp="1 2 3" ;; *+plainers) sp="0 2 3" ;; *+far-pausers) sp="1 20 21" ;;
  esac
  pids=""
  if [ -n "$sp" ]; then set -- $sp; for c in $2 $3; do taskset -c $c /tmp/spinner $1 20 & pids="$pids $!"; done; sleep 0.2; fi
  for job in Ialltoall:65536 Ialltoall:131072 Igather:65536; do
    IFS=: read c n <<< "$job"
    echo "== round $r cfg $cfg $job $(env $e timeout 60 $P/ampirun -np 2 /tmp/nbc_phases $c $n 200 pure 2>&1 | head -1)"
  done
  [ -n "$pids" ] && kill $pids 2>/dev/null; wait 2>/dev/null
done
done
