#!/bin/bash
# test.sh -- run the whole test suite, setting up (./setup.sh --no-demo) first.
#
# Usage: ./test.sh [--asan]
#   --asan   use the sanitizer build (.build-asan, .prefix-asan)
# Environment:
#   AMPI_UNIT_TIMEOUT    seconds per unit test (default 120)
#   AMPI_RUNNER_TIMEOUT  seconds per group runner (default 1800)
#
# Every runner prints one line per test case -- "PASS <name>", "FAIL <name>:
# <why>" or "SKIP <name>: <reason>" -- and anything else as free text.  The
# runners get AMPI_PREFIX (the install) and AMPI_BUILD (the build tree).  The
# last line is "N passed, N failed, N skipped"; the exit status is 1 when any
# test failed.
set -uo pipefail
cd "$(dirname "$0")" || exit 1

asan=no
for arg in "$@"; do
    case $arg in
        --asan) asan=yes ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "test: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done
if [ $asan = yes ]; then
    export AMPI_PREFIX=$PWD/.prefix-asan AMPI_BUILD=$PWD/.build-asan
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
trap 'rm -f "$results" "$group_out"' EXIT

# Unit tests: every executable .build/test/unit/test_*; exit 0 passes, 77 skips.
run_unit_tests() {
    local test name output status
    for test in "$AMPI_BUILD"/test/unit/test_*; do
        if [ ! -f "$test" ] || [ ! -x "$test" ]; then continue; fi
        name=unit/$(basename "$test")
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

# run_group NAME COMMAND...: show a group's lines and keep them for the count.
# A runner that fails without reporting a failing case still counts as a failure.
run_group() {
    local name=$1 status
    shift
    echo "== $name"
    "$@" </dev/null 2>&1 | tee "$group_out"
    status=${PIPESTATUS[0]}
    cat "$group_out" >>"$results"
    if [ "$status" -ne 0 ] && ! grep -q '^FAIL ' "$group_out"; then
        echo "FAIL $name: runner exited with status $status without a FAIL line" | tee -a "$results"
    fi
}

run_group unit run_unit_tests
for runner in test/symbols/run.sh test/launch/run.sh test/mpi/run.sh test/life/run.sh test/privat/run.sh test/multinode/run.sh test/valgrind/run.sh test/gpu/run.sh; do
    [ -f "$runner" ] || continue
    run_group "$runner" timeout -k 10 "$runner_timeout" bash "$runner"
done

# Jacobi3D (the main job) verifies against its serial reference, built with
# our ampicc and run as ranks of one process (+vp 1..8); with a GPU also in the
# device (-D) and host-staging (-H) modes.
if [ -f apps/jacobi3d/test.sh ]; then
    jacobi_args=()
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then jacobi_args=(--gpu); fi
    run_group apps/jacobi3d env MPICC="$AMPI_PREFIX/bin/ampicc" \
        JACOBI_LAUNCH="$AMPI_PREFIX/bin/ampirun --timeout 100 -np 1 +vp" \
        timeout -k 10 "$runner_timeout" bash apps/jacobi3d/test.sh "${jacobi_args[@]}"
fi

passed=$(grep -c '^PASS ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^SKIP ' "$results")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
