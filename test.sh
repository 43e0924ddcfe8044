#!/bin/bash
# test.sh -- run the whole test suite, setting up (./setup.sh --no-demo) first.
#
# Usage: ./test.sh [--asan] [--group NAME]...
#   --asan   use the sanitizer build (.build-asan, .prefix-asan); undefined
#            behaviour stops the program (UBSAN_OPTIONS, unless set)
#   --group  run only this group (repeatable; the names are those of
#            test/expected-counts), and check only its count
# Environment:
#   AMPI_UNIT_TIMEOUT    seconds per unit test (default 120)
#   AMPI_RUNNER_TIMEOUT  seconds per group runner (default 1800)
#
# Every runner prints one line per test case -- "PASS <name>", "FAIL <name>:
# <why>" or "SKIP <name>: <reason>" -- and anything else as free text.  The
# runners get AMPI_PREFIX (the install) and AMPI_BUILD (the build tree).  The
# cases are counted per group and compared with test/expected-counts: a group
# that ran more or fewer cases than stated there, or did not run, is one more
# FAIL.  The last line is "N passed, N failed, N skipped"; the exit status is
# 1 when any test failed.
set -uo pipefail
cd "$(dirname "$0")" || exit 1

asan=no
only=" "
while [ $# -gt 0 ]; do
    case $1 in
        --asan) asan=yes ;;
        --group)
            grep -q "^group $2 " test/expected-counts ||
                { echo "test: no group '$2' in test/expected-counts" >&2; exit 2; }
            only="$only$2 "
            shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "test: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
selected() { [ "$only" = " " ] || [[ $only == *" $1 "* ]]; }
if [ $asan = yes ]; then
    export AMPI_PREFIX=$PWD/.prefix-asan AMPI_BUILD=$PWD/.build-asan
    # UBSan only prints by default and the program goes on to pass: stop it
    # at the first finding, so that undefined behaviour fails its test as an
    # ASan finding does.
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    # PMIx's own leaks, for the programs without our built-in suppression
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/test/lsan.supp:print_suppressions=0}
    setup_args=(--no-demo --asan)
else
    export AMPI_PREFIX=$PWD/.prefix AMPI_BUILD=$PWD/.build
    setup_args=(--no-demo)
fi
unit_timeout=${AMPI_UNIT_TIMEOUT:-120}
runner_timeout=${AMPI_RUNNER_TIMEOUT:-1800}

if ! ./setup.sh "${setup_args[@]}"; then
    echo "FAIL setup: ./setup.sh ${setup_args[*]} failed (see above)"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi

results=$(mktemp)
group_out=$(mktemp)
counts=$(mktemp)
trap 'rm -f "$results" "$group_out" "$counts"' EXIT
has_gpu=no
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then has_gpu=yes; fi

# Unit tests: every test/unit/test_*.c is built into .build/test/unit/test_*;
# exit 0 passes, 77 skips, and a source without its binary fails.
run_unit_tests() {
    local src test name output status
    for src in test/unit/test_*.c; do
        name=unit/$(basename "$src" .c)
        test=$AMPI_BUILD/test/unit/$(basename "$src" .c)
        if [ ! -f "$test" ] || [ ! -x "$test" ]; then
            echo "FAIL $name: $test was not built (is it in a noinst_PROGRAMS line of test/unit/unit.am?)"
            continue
        fi
        # timeout signals the whole process group, so children die with the test.
        output=$(timeout -k 5 "$unit_timeout" "$test" </dev/null 2>&1)
        status=$?
        case $status in
            0)  echo "PASS $name" ;;
            77) echo "SKIP $name: $(printf '%s\n' "$output" | tail -n 1)" ;;
            124|137)
                echo "FAIL $name: timed out after ${unit_timeout}s"
                printf '%s\n' "$output" | tail -n 10 | sed 's/^/    /' ;;
            *)  echo "FAIL $name: exit status $status: $(printf '%s\n' "$output" | tail -n 1)"
                printf '%s\n' "$output" | tail -n 10 | sed 's/^/    /' ;;
        esac
    done
}

# run_group NAME COMMAND...: show a group's lines, keep them for the total
# and note how many cases it ran.  A runner that fails without reporting a
# failing case still counts as a failure.
run_group() {
    local name=$1 status
    shift
    selected "$name" || return 0
    echo "== $name"
    "$@" </dev/null 2>&1 | tee "$group_out"
    status=${PIPESTATUS[0]}
    cat "$group_out" >>"$results"
    echo "$name $(grep -cE '^(PASS|FAIL|SKIP) ' "$group_out")" >>"$counts"
    if [ "$status" -ne 0 ] && ! grep -q '^FAIL ' "$group_out"; then
        echo "FAIL $name: runner exited with status $status without a FAIL line" | tee -a "$results"
    fi
}

# check_counts: one FAIL line per group whose number of cases differs from
# test/expected-counts ("group NAME CASES [CASES_WITH_A_GPU]"), per group
# stated but not run, and per group run but not stated.
check_counts() {
    awk -v gpu="$has_gpu" -v only="$only" '
        FNR == NR { ran[$1] = $2; order[++n] = $1; next }
        $1 == "group" && (only == " " || index(only, " " $2 " ")) {
            want = (gpu == "yes" && $4 != "") ? $4 : $3
            stated[$2] = 1
            if (!($2 in ran))
                printf "FAIL count/%s: the group did not run (test/expected-counts: %d cases)\n", $2, want
            else if (ran[$2] != want)
                printf "FAIL count/%s: ran %d cases, test/expected-counts says %d\n", $2, ran[$2], want
        }
        END {
            for (i = 1; i <= n; i++)
                if (!(order[i] in stated))
                    printf "FAIL count/%s: ran %d cases, but test/expected-counts has no line for it\n", order[i], ran[order[i]]
        }' "$counts" test/expected-counts | tee -a "$results"
}

run_group unit run_unit_tests
run_group layers bash test/layers/run.sh
run_group symbols timeout -k 10 "$runner_timeout" bash test/symbols/run.sh
run_group launch timeout -k 10 "$runner_timeout" bash test/launch/run.sh
run_group mpi timeout -k 10 "$runner_timeout" bash test/mpi/run.sh
run_group life timeout -k 10 "$runner_timeout" bash test/life/run.sh
run_group privat timeout -k 10 "$runner_timeout" bash test/privat/run.sh
run_group multinode timeout -k 10 "$runner_timeout" bash test/multinode/run.sh
run_group valgrind timeout -k 10 "$runner_timeout" bash test/valgrind/run.sh
run_group bench bash test/bench/run.sh
run_group gpu timeout -k 10 "$runner_timeout" bash test/gpu/run.sh
# The GPU programs compile and link wherever the CUDA toolkit is, GPU or not.
run_group gpu-build timeout -k 10 "$runner_timeout" bash test/gpu/run.sh --build-only

# Jacobi3D (the main job), built once with our ampicc and, where nvcc is, its
# CUDA kernels (the binary still runs -cpu without a GPU).  It verifies
# against its serial reference as ranks of one process (+vp 1..8) and spread
# over two processes; with a GPU also in the device (-D) and host-staging
# (-H) modes.
build_jacobi() {
    local nvcc=${NVCC-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)} dir=$AMPI_BUILD/jacobi3d
    rm -rf "$dir"
    if [ -x "$nvcc" ]; then
        if make -C apps/jacobi3d MPICC="$AMPI_PREFIX/bin/ampicc" NVCC="$nvcc" BUILDDIR="$dir" \
            >"$AMPI_BUILD/jacobi3d-build.log" 2>&1; then
            echo "PASS jacobi3d build (CUDA kernels, $nvcc)"
            return
        fi
        echo "FAIL jacobi3d build (CUDA kernels, $nvcc): $(tail -3 "$AMPI_BUILD/jacobi3d-build.log" | tr '\n' ' ')"
    else
        echo "SKIP jacobi3d build (CUDA kernels): no nvcc (set NVCC, or put it on PATH or in /usr/local/cuda/bin)"
    fi
    # the CPU-only program, so that the runs below still test something
    make -C apps/jacobi3d MPICC="$AMPI_PREFIX/bin/ampicc" NVCC= BUILDDIR="$dir" \
        >>"$AMPI_BUILD/jacobi3d-build.log" 2>&1 ||
        echo "FAIL jacobi3d build (CPU only): $(tail -3 "$AMPI_BUILD/jacobi3d-build.log" | tr '\n' ' ')"
}
run_group jacobi3d-build build_jacobi
# (--group jacobi3d alone: build it quietly, once)
if ! selected jacobi3d-build && { selected jacobi3d || selected jacobi3d-2proc; } &&
    [ ! -x "$AMPI_BUILD/jacobi3d/jacobi3d" ]; then
    build_jacobi >/dev/null
fi
jacobi_args=(--bin "$AMPI_BUILD/jacobi3d/jacobi3d")
if [ $has_gpu = yes ]; then jacobi_args+=(--gpu); fi
run_group jacobi3d env JACOBI_LAUNCH="$AMPI_PREFIX/bin/ampirun --timeout 100 -np 1 +vp" \
    timeout -k 10 "$runner_timeout" bash apps/jacobi3d/test.sh "${jacobi_args[@]}"
run_group jacobi3d-2proc env JACOBI_LAUNCH="$AMPI_PREFIX/bin/ampirun --timeout 100 -np 2 +vp" \
    timeout -k 10 "$runner_timeout" bash apps/jacobi3d/test.sh "${jacobi_args[@]}" --min-ranks 2

echo "== counts (test/expected-counts)"
check_counts

passed=$(grep -c '^PASS ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^SKIP ' "$results")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
