#!/bin/bash
# Correctness of jacobi3d: every case runs with -v (all cells compared with a
# serial run on rank 0) and must print VERIFY PASS; one case injects a fault
# and must print VERIFY FAIL and exit 1, so the check itself is checked.
#
# usage: test.sh [--gpu] [--bin PATH] [--min-ranks N]
#   --gpu   also the CUDA modes -D and -H (needs a GPU; -D with several ranks
#           needs a CUDA-aware MPI)
#   --bin   the program to test (default: build it with $MPICC, default mpicc)
#   --min-ranks N  leave out the cases of fewer than N ranks (for a launcher
#           that spreads the ranks over N processes)
# env: JACOBI_LAUNCH, the launcher to which the rank count is appended
#   (default "mpirun --oversubscribe -np"; for ours: "ampirun -np 1 +vp").
# Prints PASS/FAIL lines; exits 1 if any case failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
gpu=0 bin= min_ranks=1
while [ $# -gt 0 ]; do
    case $1 in
    --gpu) gpu=1 ;;
    --bin) bin=$2; shift ;;
    --min-ranks) min_ranks=$2; shift ;;
    *) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
launch=${JACOBI_LAUNCH:-mpirun --oversubscribe -np}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
    if ! make -C "$here" MPICC="${MPICC:-mpicc}" BUILDDIR="$tmp/build" >"$tmp/build.log" 2>&1; then
        echo "FAIL jacobi3d-build: $(tail -3 "$tmp/build.log" | tr '\n' ' ')"
        exit 1
    fi
    bin=$tmp/build/jacobi3d
fi

pass=0 fail=0
check() { # expect(pass|fail) ranks args...
    local expect=$1 np=$2
    shift 2
    [ "$np" -ge "$min_ranks" ] || return 0
    local name="jacobi3d np=$np $*" out rc
    out=$(timeout -k 5 120 $launch "$np" "$bin" "$@" 2>&1)
    rc=$?
    if [ "$expect" = pass ] && [ $rc = 0 ] && grep -q '^VERIFY PASS' <<<"$out" && grep -q '^jacobi3d mode=' <<<"$out"; then
        echo "PASS $name"
        pass=$((pass + 1))
    elif [ "$expect" = fail ] && [ $rc != 0 ] && grep -q '^VERIFY FAIL' <<<"$out"; then
        echo "PASS $name (fault detected)"
        pass=$((pass + 1))
    else
        echo "FAIL $name: exit $rc, expected VERIFY $expect: $(tail -3 <<<"$out" | tr '\n' ' ')"
        fail=$((fail + 1))
    fi
}

# Grids: a cube, an uneven box, and one where blocks are 1-3 cells thick.
for np in 1 2 4 8; do
    for grid in "-n 24" "-x 30 -y 20 -z 10" "-x 7 -y 13 -z 5"; do
        check pass $np -cpu $grid -v -i 12 -w 3
    done
done
for flags in "-overlap" "-fuse" "-overlap -fuse"; do
    check pass 3 -cpu $flags -x 9 -y 4 -z 3 -v -i 7 -w 2
    check pass 8 -cpu $flags -n 13 -v -i 7 -w 2
done
# -ddt: faces as subarray datatypes of the grid, sent and received in place
for flags in "-ddt" "-ddt -overlap"; do
    check pass 3 -cpu $flags -x 9 -y 4 -z 3 -v -i 7 -w 2
    check pass 8 -cpu $flags -x 7 -y 13 -z 5 -v -i 7 -w 2
done
check pass 6 -cpu -b 5 -v -i 5
check fail 2 -cpu -n 12 -v -i 5 -w 0 -fault

if [ $gpu = 1 ]; then
    for mode in -D -H; do
        for flags in "" "-overlap" "-fuse" "-graphs" "-overlap -fuse -graphs"; do
            for np in 1 2 4; do
                check pass $np $mode $flags -x 40 -y 33 -z 27 -v -i 20 -w 2
            done
        done
        check pass 8 $mode -overlap -fuse -x 7 -y 13 -z 5 -v -i 9 -w 1
        check fail 2 $mode -n 16 -v -i 5 -w 0 -fault
    done
    # -D -ddt: the library packs the faces on the GPU (subarray datatypes)
    for flags in "-ddt" "-ddt -overlap"; do
        for np in 1 2 4; do
            check pass $np -D $flags -x 40 -y 33 -z 27 -v -i 20 -w 2
        done
        check pass 8 -D $flags -x 7 -y 13 -z 5 -v -i 9 -w 1
    done
fi
echo "jacobi3d tests: $pass passed, $fail failed"
[ $fail = 0 ]
