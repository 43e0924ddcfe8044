#!/usr/bin/env bash
# test/symbols/run.sh - checks the installed library against the lists of
# MPI 3.1 in this directory:
#
#   symbols/exported   libampi.so exports every function of
#                      mpi-3.1-functions.txt as MPI_x and as PMPI_x
#   symbols/declared   mpi.h declares each of them (a program that takes
#                      the address of every one compiles with
#                      -Werror=implicit-function-declaration)
#   symbols/constants  mpi.h defines every constant, type and status field
#                      of mpi-3.1-constants.txt
#   symbols/prefixes   libampi.so exports nothing but MPI_*, PMPI_*, MPIX_*,
#                      AMPI_* (and the C runtime's _init/_fini)
#
# Environment: AMPI_PREFIX (the install; default $repo/.prefix), AMPI_BUILD
# (scratch files go to its test/symbols; default $repo/.build).
# Output: one PASS/FAIL/SKIP line per case, then a summary line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=${AMPI_PREFIX:-$repo/.prefix}
work=${AMPI_BUILD:-$repo/.build}/test/symbols
mkdir -p "$work"

npass=0 nfail=0 nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }

# names NOUNS... -> at most 12 of the names, then how many more
some() {
    awk '{ if (NR <= 12) printf "%s%s", (NR > 1 ? " " : ""), $0 } END { if (NR > 12) printf " (+%d more)", NR - 12 }'
}

lib=$prefix/lib/libampi.so
cc=$prefix/bin/ampicc
functions=$(grep '^MPI_' "$here/mpi-3.1-functions.txt")

if ! command -v nm >/dev/null; then
    skip symbols/exported "nm (binutils) not installed"
    skip symbols/prefixes "nm (binutils) not installed"
elif [ ! -f "$lib" ]; then
    fail symbols/exported "$lib missing (build and install first)"
    fail symbols/prefixes "$lib missing (build and install first)"
else
    nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwiBDdVv]$/ { print $3 }' | sed 's/@.*//' | sort -u \
        >"$work/exported.txt"
    for f in $functions; do echo "$f"; echo "P$f"; done | sort >"$work/wanted.txt"
    comm -23 "$work/wanted.txt" "$work/exported.txt" >"$work/missing.txt"
    if [ -s "$work/missing.txt" ]; then
        fail symbols/exported "$(wc -l <"$work/missing.txt") of $(wc -l <"$work/wanted.txt") names of MPI 3.1 not exported: $(some <"$work/missing.txt")"
    else
        pass symbols/exported
    fi
    grep -Ev '^(MPI_|PMPI_|MPIX_|AMPI_|_init$|_fini$|_edata$|_end$|__bss_start$)' "$work/exported.txt" \
        >"$work/foreign.txt"
    if [ -s "$work/foreign.txt" ]; then
        fail symbols/prefixes "exported without an MPI/AMPI prefix: $(some <"$work/foreign.txt")"
    else
        pass symbols/prefixes
    fi
fi

# compile SRC: 0 when ampicc compiles it; the errors are left in SRC.log
compile() {
    LC_ALL=C "$cc" -std=c11 -Wall -Werror=implicit-function-declaration -c -o "${1%.c}.o" "$1" >"$1.log" 2>&1
}

if [ ! -x "$cc" ]; then
    fail symbols/declared "$cc missing (build and install first)"
    fail symbols/constants "$cc missing (build and install first)"
else
    {
        echo '#include <mpi.h>'
        echo 'void *symbols_declared(int i);'
        echo 'void *symbols_declared(int i) {'
        echo '    void *const fns[] = {'
        for f in $functions; do echo "        (void *)$f,"; done
        echo '    };'
        echo '    return fns[i];'
        echo '}'
    } >"$work/declared.c"
    if compile "$work/declared.c"; then
        pass symbols/declared
    else
        missing=$(grep -oE "implicit declaration of function '[A-Za-z_0-9]+'|'[A-Za-z_0-9]+' undeclared" \
            "$work/declared.c.log" | grep -oE "MPI_[A-Za-z_0-9]+" | sort -u)
        fail symbols/declared "not declared by mpi.h: $(echo "$missing" | some) (see $work/declared.c.log)"
    fi
    # one function per name, so that the compiler names every missing one
    {
        echo '#include <stddef.h>'
        echo '#include <mpi.h>'
        n=0
        grep -Ev '^\s*(#|$)' "$here/mpi-3.1-constants.txt" | while read -r a b; do
            n=$((n + 1))
            case $a in
                type)  echo "size_t symbols_c$n(void); size_t symbols_c$n(void) { return sizeof($b); }" ;;
                field) echo "size_t symbols_c$n(void); size_t symbols_c$n(void) { return offsetof(MPI_Status, $b); }" ;;
                *)     echo "void symbols_c$n(void); void symbols_c$n(void) { (void)($a); }" ;;
            esac
        done
    } >"$work/constants.c"
    if compile "$work/constants.c"; then
        pass symbols/constants
    else
        missing=$(grep -oE "'[A-Za-z_0-9]+' undeclared|unknown type name '[A-Za-z_0-9]+'|has no member named '[A-Za-z_0-9]+'|'[A-Za-z_0-9]+' (was not declared|not declared)" \
            "$work/constants.c.log" | grep -oE "MPI_[A-Za-z_0-9]+" | sort -u)
        fail symbols/constants "not defined by mpi.h: $(echo "$missing" | some) (see $work/constants.c.log)"
    fi
fi

echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
