#!/bin/bash
# setup.sh -- install what is missing, build AMPI-UCX, run the demo.
#
# Usage: ./setup.sh [--no-demo] [--asan] [--deps-only]
#   --no-demo    build and install, but do not run the demo
#   --asan       build with --enable-sanitizers into .build-asan, .prefix-asan
#   --deps-only  stop once the system packages and UCX are in place
# Environment:
#   AMPI_CONFIGURE_FLAGS  extra configure arguments (CI passes --enable-werror)
#   AMPI_MAKE_JOBS        parallel make jobs (default: nproc)
#   AMPI_DEMO_ARGS        arguments for the demo program
#
# Steps: 1. system packages (apt-get, only when something is missing)
#        2. CUDA-aware UCX from the PyPI wheel libucx-cu13, into .deps/ucx
#        3. autoreconf / configure / make / make install, out of tree, logged
#        4. the demo (apps/jacobi3d, else test/mpi/ring.c): ampicc, then
#           ampirun -np 2 +vp 8
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD

run_demo=yes
asan=no
deps_only=no
for arg in "$@"; do
    case $arg in
        --no-demo) run_demo=no ;;
        --asan) asan=yes ;;
        --deps-only) deps_only=yes ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "setup: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done

if [ $asan = yes ]; then
    build_dir=$top/.build-asan prefix_dir=$top/.prefix-asan
else
    build_dir=$top/.build prefix_dir=$top/.prefix
fi
ucx_root=$top/.deps/ucx
ucx_wheel_version=1.22.0
mkdir -p "$build_dir"

say() { echo "setup: $*"; }
# fail_with_log WHAT LOG: report a failed step with the end of its log.
fail_with_log() {
    echo "setup: $1 failed; last lines of $2:" >&2
    tail -n 40 "$2" | sed 's/^/  | /' >&2
    exit 1
}

# ---- 1. system packages ----------------------------------------------------
# An offline GPU machine may lack libtool and have no network to install it:
# a libtool .deb carried in .whl/ (scripts/device-prep.sh puts it there) is
# unpacked instead.  libtool is
# architecture-independent scripts and m4 files.
if ! command -v libtoolize >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v dpkg >/dev/null 2>&1; then
    for deb in .whl/libtool_*_all.deb; do
        [ -f "$deb" ] || continue
        say "libtoolize missing: unpacking the carried $deb"
        dpkg -x "$deb" / && break
    done
fi
missing=()
for tool in autoconf automake libtoolize pkg-config make gcc; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
pkg-config --exists pmix 2>/dev/null || missing+=("pmix.pc (libpmix-dev)")
pkg-config --exists hwloc 2>/dev/null || missing+=("hwloc.pc (libhwloc-dev)")
# Open MPI's mpirun is a second PMIx launcher that tests start our library under.
command -v mpirun >/dev/null 2>&1 || missing+=("mpirun (openmpi-bin)")
# Slurm and munge start the multi-node tests' second engine (test/multinode);
# optional: where they cannot be installed (an offline machine) those tests skip.
optional_missing=()
for tool in slurmctld slurmd srun munged; do
    command -v "$tool" >/dev/null 2>&1 || optional_missing+=("$tool")
done

if [ ! -f "$ucx_root/libucx/lib/libucp.so" ]; then
    command -v python3 >/dev/null 2>&1 || missing+=("python3 (to unpack the UCX wheel)")
fi

if [ ${#missing[@]} -gt 0 ]; then
    packages="libpmix-dev libhwloc-dev autoconf automake libtool pkg-config make gcc g++
              openmpi-bin libopenmpi-dev python3"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "missing: ${missing[*]}; installing with apt-get (log: $build_dir/apt.log)"
        export DEBIAN_FRONTEND=noninteractive
        # shellcheck disable=SC2086  # the package list is split on purpose
        { apt-get update && apt-get install -y --no-install-recommends $packages; } \
            >"$build_dir/apt.log" 2>&1 || fail_with_log "apt-get install" "$build_dir/apt.log"
    else
        echo "setup: missing: ${missing[*]}" >&2
        # shellcheck disable=SC2086  # one package per word
        echo "setup: install them, e.g. as root: apt-get install" $packages >&2
        exit 1
    fi
fi
# Optional packages come only where apt's mirrors answer: on a machine without
# a network apt-get waits minutes on every mirror before it gives up.
apt_reachable() {
    local host
    for host in $(grep -rhoE '^(deb|URIs:)[^#]*https?://[^/ ]+' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null \
                      | sed -E 's|.*https?://||' | sort -u); do
        timeout 5 getent hosts "$host" >/dev/null 2>&1 && return 0
    done
    return 1
}
optional_apt=no
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt_reachable; then
    optional_apt=yes
elif [ ${#optional_missing[@]} -gt 0 ]; then
    say "optional: ${optional_missing[*]} missing and no apt mirror answers; the Slurm cases of test/multinode will skip"
fi
# cmake is optional: the launcher tests build a user's CMake project through
# our mpicc with it (and skip that case without it); a machine without a
# network (the GPU machine) goes on without it.
if ! command -v cmake >/dev/null 2>&1 && [ $optional_apt = yes ]; then
    say "cmake missing; installing it with apt-get (log: $build_dir/apt-cmake.log)"
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake; } \
        >"$build_dir/apt-cmake.log" 2>&1 || say "warning: cmake could not be installed (see the log); going on"
fi
if [ ${#optional_missing[@]} -gt 0 ] && [ $optional_apt = yes ]; then
    say "optional: ${optional_missing[*]} missing; installing slurmctld slurmd slurm-client munge (log: $build_dir/apt-optional.log)"
    if ! { timeout 120 apt-get update && DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y --no-install-recommends \
               slurmctld slurmd slurm-client munge; } >"$build_dir/apt-optional.log" 2>&1; then
        say "optional packages not installed (the Slurm cases of test/multinode will skip)"
    fi
fi
say "[1/4] system packages: ok"

# ---- 2. CUDA-aware UCX -----------------------------------------------------
if [ ! -f "$ucx_root/libucx/lib/libucp.so" ]; then
    # A wheel carried in .whl/ (for a machine with no network), else one
    # downloaded earlier, else PyPI.
    shopt -s nullglob
    wheels=(.whl/libucx_cu13-*.whl .deps/whl/libucx_cu13-"$ucx_wheel_version"-*.whl)
    if [ ${#wheels[@]} -eq 0 ]; then
        say "downloading libucx-cu13==$ucx_wheel_version from PyPI"
        python3 -m pip download --no-deps --only-binary=:all: --disable-pip-version-check \
            -d .deps/whl "libucx-cu13==$ucx_wheel_version" >"$build_dir/pip.log" 2>&1 \
            || fail_with_log "pip download" "$build_dir/pip.log"
        wheels=(.deps/whl/libucx_cu13-"$ucx_wheel_version"-*.whl)
    fi
    shopt -u nullglob
    [ ${#wheels[@]} -gt 0 ] || { echo "setup: pip left no libucx_cu13 wheel in .deps/whl" >&2; exit 1; }
    wheel=${wheels[0]}
    say "unpacking $wheel into .deps/ucx"
    # Unpack beside, then rename: an interrupted unpack must not look complete.
    rm -rf "$ucx_root.partial"
    python3 -m zipfile -e "$wheel" "$ucx_root.partial"
    rm -rf "$ucx_root"
    mv "$ucx_root.partial" "$ucx_root"
    chmod +x "$ucx_root"/libucx/bin/*    # zip does not keep the mode bits
    # The wheel's libtool archives name the directories it was built in; libtool
    # would follow them when linking libampi and fail.  The .so files suffice.
    find "$ucx_root" -name '*.la' -delete
fi
[ -f "$ucx_root/libucx/lib/libucp.so" ] || { echo "setup: no libucp.so in $ucx_root/libucx/lib" >&2; exit 1; }
say "[2/4] UCX: $ucx_root/libucx ($(cat "$ucx_root/libucx/UCX_WHEEL_VERSION.txt" 2>/dev/null || echo '?'))"
[ $deps_only = yes ] && exit 0

# ---- 3. build --------------------------------------------------------------
# autoreconf when configure is missing or older than any autotools input.
needs_autoreconf() {
    [ -x configure ] || return 0
    [ -n "$(find . \( -path ./.git -o -path './.build*' -o -path './.prefix*' -o -path ./.deps \
                      -o -path ./autom4te.cache \) -prune -o \
                   \( -name configure.ac -o -name '*.am' -o -path './m4/*.m4' \) \
                   -newer configure -print 2>/dev/null | head -n 1)" ]
}
if needs_autoreconf; then
    say "autoreconf (log: $build_dir/autoreconf.log)"
    autoreconf -fi >"$build_dir/autoreconf.log" 2>&1 || fail_with_log autoreconf "$build_dir/autoreconf.log"
fi

configure_args=(--prefix="$prefix_dir" --with-ucx="$ucx_root/libucx")
[ $asan = yes ] && configure_args+=(--enable-sanitizers)
# shellcheck disable=SC2206  # AMPI_CONFIGURE_FLAGS is a list of words
configure_args+=(${AMPI_CONFIGURE_FLAGS:-})
# Reconfigure when there is no Makefile, configure changed, or the arguments did.
args_file=$build_dir/.configure-args
args_changed=no
if [ -f "$build_dir/Makefile" ] &&
   [ "$(printf '%s\n' "${configure_args[@]}")" != "$(cat "$args_file" 2>/dev/null)" ]; then
    args_changed=yes
fi
if [ ! -f "$build_dir/Makefile" ] || [ configure -nt "$build_dir/config.status" ] ||
   [ $args_changed = yes ]; then
    say "configure ${configure_args[*]} (log: $build_dir/configure.log)"
    rm -f "$args_file"
    (cd "$build_dir" && "$top/configure" "${configure_args[@]}") >"$build_dir/configure.log" 2>&1 \
        || fail_with_log configure "$build_dir/configure.log"
    printf '%s\n' "${configure_args[@]}" >"$args_file"
    # Objects do not depend on the flags: with other options (--enable-werror,
    # another UCX) everything must be compiled again.
    if [ $args_changed = yes ]; then
        make -C "$build_dir" clean >"$build_dir/clean.log" 2>&1 || fail_with_log "make clean" "$build_dir/clean.log"
    fi
fi

jobs=${AMPI_MAKE_JOBS:-$(nproc 2>/dev/null || echo 2)}
say "make -j$jobs (log: $build_dir/make.log)"
make -C "$build_dir" -j"$jobs" >"$build_dir/make.log" 2>&1 || fail_with_log make "$build_dir/make.log"
make -C "$build_dir" install >"$build_dir/install.log" 2>&1 || fail_with_log "make install" "$build_dir/install.log"
say "[3/4] built and installed into $prefix_dir"

# ---- 4. demo ---------------------------------------------------------------
if [ $run_demo = no ]; then
    say "[4/4] demo skipped (--no-demo)"
    exit 0
fi
demo=$build_dir/demo
# shellcheck disable=SC2206  # AMPI_DEMO_ARGS is a list of words
demo_args=(${AMPI_DEMO_ARGS:-})
if [ -f apps/jacobi3d/Makefile ]; then
    # On the GPU where there is one (device buffers straight into MPI), else
    # the same code on the CPU (jacobi3d's default: -cpu -b 32).
    if [ ${#demo_args[@]} = 0 ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
        demo_args=(-D -b 64 -v)
    fi
    # jacobi3d has its own Makefile (it adds the CUDA kernels when nvcc exists).
    say "[4/4] demo: make -C apps/jacobi3d MPICC=$prefix_dir/bin/ampicc (log: $build_dir/demo-build.log)"
    make -C apps/jacobi3d MPICC="$prefix_dir/bin/ampicc" CFLAGS=-O2 BUILDDIR="$build_dir/jacobi3d" \
        >"$build_dir/demo-build.log" 2>&1 || fail_with_log "building the demo" "$build_dir/demo-build.log"
    cp -f "$build_dir/jacobi3d/jacobi3d" "$demo"
elif [ -f test/mpi/ring.c ]; then
    say "[4/4] demo: $prefix_dir/bin/ampicc -O2 -o $demo test/mpi/ring.c"
    "$prefix_dir/bin/ampicc" -O2 -o "$demo" test/mpi/ring.c
else
    echo "setup: no demo source (apps/jacobi3d/Makefile or test/mpi/ring.c)" >&2
    exit 1
fi
say "demo: $prefix_dir/bin/ampirun -np 2 +vp 8 $demo ${demo_args[*]}"
if ! timeout -k 5 300 "$prefix_dir/bin/ampirun" -np 2 +vp 8 "$demo" "${demo_args[@]}"; then
    echo "setup: the demo failed" >&2
    exit 1
fi
say "demo finished"
