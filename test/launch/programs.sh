# shellcheck shell=bash disable=SC2015,SC2154,SC2030,SC2031  # run.sh sets work, here, out, err, rc, ms, ampirun
# Cases of ampirun with MPI programs built by the installed ampicc, and of
# the drop-in names (compat/bin: mpicc, mpicxx, mpirun, mpiexec).  Sourced
# by run.sh, whose helpers (run, pass, fail, skip, has_line) they use.

prefix=${AMPI_PREFIX:-}
ampicc=$prefix/bin/ampicc
compat=$prefix/compat/bin
prog=$work/mpi_prog

build_prog() {
    [ -n "$prefix" ] && [ -x "$ampicc" ] || return 1
    "$ampicc" -g -O1 -o "$prog" "$here/mpi_prog.c" 2>"$work/prog.build.log"
}

# A sanitizer build (./test.sh --asan) scales time and memory: vp_scale
# allows for it.
sanitized=
ldd "$prefix/lib/libampi.so" 2>/dev/null | grep -q 'libasan' && sanitized=1

# count_lines FILE PATTERN: lines of FILE matching the extended regex.
count_lines() { grep -cE -- "$2" "$1"; }

# AMPI_VP set for ampirun: every process sees it and the job has V ranks.
vp_from_env() {
    AMPI_VP=4 run -np 2 "$prog" hello
    [ "$rc" = 0 ] && has_line "$out" "hello 4 ranks" ||
        { fail launch/vp_from_env "rc $rc: $(tail -2 "$out" "$err" | tr '\n' ' ')"; return; }
    pass launch/vp_from_env
}

# +vp to ampirun and to the program: an error that names both, nothing runs.
vp_twice() {
    run -np 2 +vp 4 "$prog" hello +vp 6
    [ "$rc" = 2 ] && grep -q "ampirun +vp 4 and '+vp 6'" "$err" && ! grep -q '^rank' "$out" ||
        { fail launch/vp_twice "+vp twice: rc $rc: $(cat "$err")"; return; }
    AMPI_VP=4 run -np 2 "$prog" hello +vp6
    [ "$rc" = 2 ] && grep -q "AMPI_VP=4 and '+vp 6'" "$err" ||
        { fail launch/vp_twice "AMPI_VP and +vp: rc $rc: $(cat "$err")"; return; }
    pass launch/vp_twice
}

# A bad +vp on a singleton is an error (status 2), not silently 1 rank.
vp_bad_singleton() {
    local v
    for v in abc 0 -3 4x ""; do
        timeout 15 env -u AMPI_VP "$prog" hello +vp "$v" >"$work/out" 2>"$work/err" </dev/null
        rc=$?
        [ "$rc" = 2 ] && grep -q "+vp needs" "$work/err" && ! grep -q '^hello' "$work/out" ||
            { fail launch/vp_bad_singleton "+vp '$v': rc $rc: $(cat "$work/err")"; return; }
    done
    timeout 15 env -u AMPI_VP "$prog" hello +vp 3 >"$work/out" 2>"$work/err" </dev/null &&
        has_line "$work/out" "hello 3 ranks" ||
        { fail launch/vp_bad_singleton "+vp 3: $(cat "$work/err")"; return; }
    pass launch/vp_bad_singleton
}

# MPIEXEC_TIMEOUT (Open MPI's and MPICH's) ends a hung job like --timeout.
mpiexec_timeout() {
    MPIEXEC_TIMEOUT=1 run -np 2 "$prog" hang
    [ "$rc" = 124 ] && grep -q 'job timed out after 1 seconds' "$err" && [ "$ms" -lt 5000 ] ||
        { fail launch/mpiexec_timeout "rc $rc after $ms ms: $(cat "$err")"; return; }
    MPIEXEC_TIMEOUT=soon run -np 1 "$prog" hello
    [ "$rc" = 2 ] && grep -q 'MPIEXEC_TIMEOUT needs a positive number' "$err" ||
        { fail launch/mpiexec_timeout "bad value: rc $rc: $(cat "$err")"; return; }
    pass launch/mpiexec_timeout
}

version_case() {
    local v
    v=$("$ampirun" --version 2>&1) && [[ $v =~ ^ampirun\ \(AMPI-UCX\)\ [0-9] ]] ||
        { fail launch/version "got: $v"; return; }
    pass launch/version
}

# crash_case SIGNAL_NAME SIGNUM: rank 5 of 2 x 4 dies; ampirun names the
# process, its ranks, the signal and the rank; one backtrace naming the
# function it died in.
crash_case() {
    local how=$1 sig=$2 pid
    run -np 2 +vp 8 "$prog" "$how" 5
    pid=$(sed -n 's/^rank 5 pid \([0-9]*\)$/\1/p' "$out")
    [ "$rc" = $((128 + sig)) ] || { fail "launch/crash_$how" "exit status $rc, expected $((128 + sig))"; return; }
    grep -qE "^ampirun: process 1 \(pid $pid, ranks 4-7\) killed by signal $sig \(.*\) in rank 5$" "$err" ||
        { fail "launch/crash_$how" "ampirun's message: $(grep '^ampirun' "$err")"; return; }
    [ "$(count_lines "$err" "^ampi: rank 5 \(process 1, pid $pid\) got signal $sig ")" = 1 ] ||
        { fail "launch/crash_$how" "rank's message: $(grep '^ampi:' "$err")"; return; }
    [ "$(count_lines "$err" '^ampi: backtrace of rank 5:$')" = 1 ] &&
        [ "$(count_lines "$err" '^ampi: backtrace')" = 1 ] ||
        { fail "launch/crash_$how" "not one backtrace: $(grep -c backtrace "$err")"; return; }
    grep -q 'die_in_rank' "$err" ||
        { fail "launch/crash_$how" "backtrace without die_in_rank: $(grep '^  #' "$err" | head -5)"; return; }
    ! grep -q 'MPI_Abort' "$err" || { fail "launch/crash_$how" "says MPI_Abort: $(cat "$err")"; return; }
    [ -z "$leftover" ] || { fail "launch/crash_$how" "left in TMPDIR: $leftover"; return; }
    pass "launch/crash_$how"
}

# A stack overflow under +vp: the rank's message and ampirun's name rank 5.
overflow_case() {
    local pid
    run -np 2 +vp 8 "$prog" overflow 5
    pid=$(sed -n 's/^rank 5 pid \([0-9]*\)$/\1/p' "$out")
    [ "$rc" = 139 ] || { fail launch/crash_overflow "exit status $rc, expected 139"; return; }
    grep -qE "^ampirun: process 1 \(pid $pid, ranks 4-7\) killed by signal 11 \(.*\) in rank 5$" "$err" &&
        grep -q '^ampi: rank 5 overflowed its' "$err" ||
        { fail launch/crash_overflow "messages: $(grep -E '^ampi(run)?:' "$err")"; return; }
    pass launch/crash_overflow
}

# MPI_Abort is named as such, with the rank that called it.
mpi_abort_case() {
    run -np 2 +vp 4 "$prog" mpi_abort 3
    [ "$rc" = 7 ] && grep -qE '^ampirun: process 1 \(pid [0-9]+, ranks 2-3\) ended the job with status 7: MPI_Abort called by rank 3 ' "$err" ||
        { fail launch/mpi_abort "rc $rc: $(grep '^ampirun' "$err")"; return; }
    pass launch/mpi_abort
}

# Open MPI and MPICH options that scripts pass: accepted, with a note where
# they change nothing on one node; remote hosts refused.
compat_options() {
    # shellcheck disable=SC2016  # expanded by the launched shell
    run -n 2 --oversubscribe --bind-to core --map-by slot -ppn 2 -genv AMPI_T_GENV yes \
        -x AMPI_T_X=1 --host localhost --allow-run-as-root --mca btl self \
        sh -c 'echo "genv=$AMPI_T_GENV x=$AMPI_T_X"'
    [ "$rc" = 0 ] && [ "$(count_lines "$out" '^genv=yes x=1$')" = 2 ] ||
        { fail launch/compat_options "rc $rc: $(cat "$out" "$err")"; return; }
    grep -q '^ampirun: note: --oversubscribe changes nothing' "$err" &&
        grep -q '^ampirun: note: -ppn 2 changes nothing' "$err" &&
        grep -q '^ampirun: note: --mca btl self changes nothing' "$err" ||
        { fail launch/compat_options "notes: $(cat "$err")"; return; }
    run -np 2 --host some-other-node true
    [ "$rc" = 2 ] && grep -q "not on 'some-other-node'" "$err" ||
        { fail launch/compat_options "remote host: rc $rc: $(cat "$err")"; return; }
    pass launch/compat_options
}

# compat/bin holds the four names, and they are ours.
compat_names() {
    local n
    for n in mpicc mpicxx mpirun mpiexec; do
        [ -x "$compat/$n" ] || { fail launch/compat_names "no $compat/$n"; return; }
    done
    [ "$("$compat/mpicc" -showme:version)" = "mpicc: AMPI-UCX $("$ampirun" --version | sed 's/.* //') (Language: C)" ] &&
        [[ $("$compat/mpicxx" -showme:version) == "mpicxx: AMPI-UCX "*"(Language: C++)" ]] &&
        [[ $("$compat/mpiexec" --version) == "ampirun (AMPI-UCX) "* ]] ||
        { fail launch/compat_names "versions: $("$compat/mpicc" -showme:version 2>&1)"; return; }
    pass launch/compat_names
}

# Open MPI's and MPICH's query flags of the compiler wrapper.
wrapper_flags() {
    local cc=$compat/mpicc inc=$prefix/include lib=$prefix/lib got
    got=$("$cc" -showme:compile) && [[ " $got " == *" -I$inc "* ]] && [[ $got != *gcc* ]] ||
        { fail launch/wrapper_flags "-showme:compile: $got"; return; }
    got=$("$cc" -showme:link) && [[ " $got " == *" -L$lib "* ]] && [[ $got == *-lampi* ]] && [[ $got != *-I* ]] ||
        { fail launch/wrapper_flags "-showme:link: $got"; return; }
    got=$("$cc" -showme:incdirs) && [ "$got" = "$inc" ] || { fail launch/wrapper_flags "-showme:incdirs: $got"; return; }
    got=$("$cc" -showme:libdirs) && [ "$got" = "$lib" ] || { fail launch/wrapper_flags "-showme:libdirs: $got"; return; }
    got=$("$cc" -compile_info) && [[ $got == *" -I$inc"* ]] && [[ $got != *-lampi* ]] ||
        { fail launch/wrapper_flags "-compile_info: $got"; return; }
    got=$("$cc" -link_info) && [[ $got == *" -I$inc"* ]] && [[ $got == *-lampi* ]] ||
        { fail launch/wrapper_flags "-link_info: $got"; return; }
    got=$("$cc" -show -c x.c) && [[ $got == *" -I$inc "*"-c x.c"* ]] && [[ $got != *-lampi* ]] ||
        { fail launch/wrapper_flags "-show -c: $got"; return; }
    got=$("$cc" -showme x.c) && [[ $got == *"x.c"*"-lampi"* ]] || { fail launch/wrapper_flags "-showme: $got"; return; }
    got=$("$cc" -show) && [[ $got == *" -I$inc "*"-lampi"* ]] || { fail launch/wrapper_flags "-show alone: $got"; return; }
    got=$("$cc" -showme) && [[ $got == *" -I$inc "*"-lampi"* ]] || { fail launch/wrapper_flags "-showme alone: $got"; return; }
    got=$("$cc" --help) && [[ $got == *"-showme:compile"* ]] || { fail launch/wrapper_flags "--help: $got"; return; }
    got=$("$cc" -h) && [[ $got == *"Usage: mpicc"* ]] || { fail launch/wrapper_flags "-h: $got"; return; }
    # no input: gcc's error, non-zero, no a.out
    mkdir -p "$work/noinput" && got=$(cd "$work/noinput" && "$cc" -O2 2>&1)
    rc=$?
    [ "$rc" != 0 ] && [[ $got == *"no input files"* ]] && [ ! -e "$work/noinput/a.out" ] ||
        { fail launch/wrapper_flags "no input: rc $rc, $got, $(ls "$work/noinput")"; return; }
    got=$(cd "$work/noinput" && "$cc" --version 2>&1) && [ ! -e "$work/noinput/a.out" ] ||
        { fail launch/wrapper_flags "--version: $got"; return; }
    pass launch/wrapper_flags
}

# A user's CMake project, with only our compat/bin first on PATH (Open MPI's
# mpicc and mpiexec may be further on): FindMPI finds us, and mpiexec runs
# the program on our library.
cmake_project() {
    if ! command -v cmake >/dev/null; then
        skip launch/cmake_project "cmake not installed"
        return
    fi
    local d=$work/cmake
    rm -rf "$d" && mkdir -p "$d" && cp "$here"/projects/cmake/CMakeLists.txt "$here"/projects/hello.c "$d"/
    (cd "$d" && PATH="$compat:$PATH" &&
        timeout 120 cmake -S . -B build && timeout 120 cmake --build build &&
        cd build && timeout 60 ctest --output-on-failure -V) >"$d/log" 2>&1 ||
        { fail launch/cmake_project "build or ctest failed: $(tail -5 "$d/log")"; return; }
    grep -qx "MPI_C_COMPILER=$compat/mpicc" "$d/build/found.txt" &&
        grep -qx "MPIEXEC_EXECUTABLE=$compat/mpiexec" "$d/build/found.txt" &&
        grep -qx "MPI_C_INCLUDE_DIRS=$prefix/include" "$d/build/found.txt" ||
        { fail launch/cmake_project "FindMPI found another MPI: $(cat "$d/build/found.txt")"; return; }
    grep -q 'hello from 2 ranks on AMPI-UCX .*: sum ok' "$d/log" ||
        { fail launch/cmake_project "program output: $(grep hello "$d/log")"; return; }
    pass launch/cmake_project
}

# A user's autotools project: configure finds mpicc and mpiexec by name,
# make check runs mpiexec -n 2.
autotools_project() {
    if ! command -v autoreconf >/dev/null; then
        skip launch/autotools_project "autoreconf not installed"
        return
    fi
    local d=$work/autotools
    rm -rf "$d" && mkdir -p "$d" && cp "$here"/projects/autotools/* "$here"/projects/hello.c "$d"/
    (cd "$d" && PATH="$compat:$PATH" &&
        timeout 120 autoreconf -i && timeout 120 ./configure && timeout 120 make &&
        timeout 60 make check) >"$d/log" 2>&1 ||
        { fail launch/autotools_project "failed: $(tail -5 "$d/log")"; return; }
    grep -q "^MPICC='mpicc'" "$d/config.log" && grep -q "^MPIEXEC='mpiexec'" "$d/config.log" ||
        { fail launch/autotools_project "configure: $(grep -E '^MPI(CC|EXEC)=' "$d/config.log")"; return; }
    grep -q 'hello from 2 ranks on AMPI-UCX .*: sum ok' "$d/log" ||
        { fail launch/autotools_project "program output: $(grep hello "$d/log")"; return; }
    pass launch/autotools_project
}

# +vp at scale: 40,000 ranks in one process (guard pages for every stack
# stopped near 32,700: vm.max_map_count), and 2 x 10,000 ranks whose memory
# grows linearly (per-peer tables by world rank made it 1.5 GB a process).
# Under ASan (every stack poisoned and unpoisoned at each switch, shadow
# memory besides) a twentieth of the ranks, without the memory bound: the
# scale itself is the plain build's test (4,000 ranks took 55 s under ASan
# on 2 busy cores).
vp_scale() {
    local peak n1=40000 n2=20000
    [ -n "$sanitized" ] && n1=2000 n2=1000
    RUN_LIMIT=150 run -np 1 +vp $n1 "$prog" quiet
    [ "$rc" = 0 ] && has_line "$out" "hello $n1 ranks" ||
        { fail launch/vp_scale "-np 1 +vp $n1: rc $rc: $(tail -3 "$err")"; return; }
    RUN_LIMIT=150 run -np 2 +vp $n2 "$prog" quiet
    [ "$rc" = 0 ] && has_line "$out" "hello $n2 ranks" && [ "$(count_lines "$out" '^peak [0-9]+ kB$')" = 2 ] ||
        { fail launch/vp_scale "-np 2 +vp $n2: rc $rc: $(tail -3 "$out" "$err")"; return; }
    peak=$(sed -n 's/^peak \([0-9]*\) kB$/\1/p' "$out" | sort -n | tail -1)
    # about 16 KiB per local rank measured; 1.5 GB before
    [ -n "$sanitized" ] || [ "$peak" -lt 600000 ] ||
        { fail launch/vp_scale "-np 2 +vp $n2: $peak kB in one process"; return; }
    pass launch/vp_scale
}


# The CPUs this shell may use, as a list of numbers.
allowed_list() {
    local spec part lo hi
    spec=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    for part in ${spec//,/ }; do
        lo=${part%-*} hi=${part#*-}
        seq "$lo" "$hi"
    done
}

# ampirun gives each process a CPU for its progress threads where there are
# two CPUs per process (AMPI_PROGRESS_CPU, not the process's own), none where
# there are fewer, and keeps a value the user set; the library then runs its
# progress thread on that CPU.
progress_cpu_case() {
    local cpus n last line
    # shellcheck disable=SC2207
    cpus=($(allowed_list))
    n=${#cpus[@]}
    last=${cpus[$((n - 1))]}
    if [ "$n" -lt 2 ]; then
        skip launch/progress_cpu "one CPU here"
        return
    fi
    # shellcheck disable=SC2016  # expanded by the launched shell
    run -np 1 sh -c 'echo "pcpu=${AMPI_PROGRESS_CPU:-unset} own=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
    local pc own
    pc=$(sed -n 's/^pcpu=\([^ ]*\) .*/\1/p' "$out")
    own=$(sed -n 's/.* own=//p' "$out")
    case $pc in
    '' | *[!0-9]*) fail launch/progress_cpu "-np 1 on $n CPUs: no CPU given: rc $rc, $(cat "$out")"; return ;;
    esac
    [ "$rc" = 0 ] && [ "$pc" != "$own" ] ||
        { fail launch/progress_cpu "-np 1: rc $rc, $(cat "$out")"; return; }
    # shellcheck disable=SC2016
    run -np "$n" sh -c 'echo "pcpu=${AMPI_PROGRESS_CPU:-unset}"'
    [ "$rc" = 0 ] && [ "$(grep -cx 'pcpu=unset' "$out")" = "$n" ] ||
        { fail launch/progress_cpu "-np $n on $n CPUs: rc $rc, $(sort -u "$out" | tr '\n' ' ')"; return; }
    # shellcheck disable=SC2016
    AMPI_PROGRESS_CPU=-1 run -np 1 sh -c 'echo "pcpu=${AMPI_PROGRESS_CPU:-unset}"'
    [ "$rc" = 0 ] && has_line "$out" "pcpu=-1" ||
        { fail launch/progress_cpu "the user's -1 not kept: $(cat "$out")"; return; }
    # the library's side: with the progress CPU set to the last CPU, the
    # process bound elsewhere has its progress thread there
    AMPI_PROGRESS_CPU=$last run -np 2 "$prog" progress_cpu
    line=$(grep '^process on cpus' "$out" | grep -v "^process on cpus $last:" | head -1)
    local k
    k=$(echo "$line" | sed -n 's/.*: \([0-9]*\) threads on cpus.*/\1/p')
    [ "$rc" = 0 ] && [ "${k:-0}" -ge 1 ] ||
        { fail launch/progress_cpu "progress thread not on CPU $last: rc $rc, $(grep '^process' "$out" | tr '\n' ' ')"; return; }
    pass launch/progress_cpu
}

if build_prog; then
    vp_from_env
    vp_twice
    vp_bad_singleton
    mpiexec_timeout
    crash_case segv 11
    crash_case fpe 8
    crash_case abort 6
    overflow_case
    mpi_abort_case
    compat_options
    compat_names
    wrapper_flags
    cmake_project
    autotools_project
    vp_scale
    progress_cpu_case
else
    for c in vp_from_env vp_twice vp_bad_singleton mpiexec_timeout crash_segv crash_fpe crash_abort crash_overflow \
        mpi_abort compat_options compat_names wrapper_flags cmake_project autotools_project vp_scale progress_cpu; do
        skip "launch/$c" "no installed ampicc (AMPI_PREFIX=${AMPI_PREFIX:-unset}): $(head -2 "$work/prog.build.log" 2>/dev/null)"
    done
fi
version_case
