# m4/ampi_compiler.m4 -- warning, C11, -Werror and sanitizer flags.
#
# These go into AMPI_CFLAGS / AMPI_LDFLAGS (used as AM_CFLAGS / AM_LDFLAGS), not
# into CFLAGS, so that configure's own test programs are not built with -Werror
# and the user's CFLAGS stay theirs.  AMPI_WRAPPER_FLAGS is what ampicc must add
# to programs linked against a sanitized libampi (ASan wants its runtime first).
# AMPI_WRAPPER_LIBS names those runtimes as libraries for build systems that
# keep only the -L, -l and -Wl, words of `ampicc -showme:link` (CMake's FindMPI
# drops -fsanitize=..., and the program's link then misses __asan_*).
AC_DEFUN([AMPI_COMPILER_FLAGS], [
AC_REQUIRE([AC_PROG_CC])
AC_ARG_ENABLE([werror],
  [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI)])],
  [], [enable_werror=no])
AC_ARG_ENABLE([sanitizers],
  [AS_HELP_STRING([--enable-sanitizers],
    [build library, tools and tests with -fsanitize=address,undefined])],
  [], [enable_sanitizers=no])

AMPI_CFLAGS=
AMPI_LDFLAGS=
AMPI_WRAPPER_FLAGS=
AMPI_WRAPPER_LIBS=

AC_MSG_CHECKING([whether $CC accepts -std=gnu11])
ampi_save_CFLAGS=$CFLAGS
CFLAGS="$CFLAGS -std=gnu11"
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[_Static_assert(1, "C11");]], [])],
  [AMPI_CFLAGS="-std=gnu11"; AC_MSG_RESULT([yes])],
  [AC_MSG_RESULT([no]); AC_MSG_ERROR([a C11 compiler is required (gcc >= 5)])])
CFLAGS=$ampi_save_CFLAGS
AMPI_CFLAGS="$AMPI_CFLAGS -Wall -Wextra"
AS_IF([test "x$enable_werror" = xyes], [AMPI_CFLAGS="$AMPI_CFLAGS -Werror"])

AS_IF([test "x$enable_sanitizers" = xyes], [
  ampi_san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
  AC_MSG_CHECKING([whether $CC can link with $ampi_san_flags])
  ampi_save_CFLAGS=$CFLAGS ampi_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS $ampi_san_flags" LDFLAGS="$LDFLAGS $ampi_san_flags"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [ampi_san_ok=yes], [ampi_san_ok=no])
  CFLAGS=$ampi_save_CFLAGS LDFLAGS=$ampi_save_LDFLAGS
  AC_MSG_RESULT([$ampi_san_ok])
  AS_IF([test $ampi_san_ok = no],
    [AC_MSG_ERROR([--enable-sanitizers: $CC cannot link with $ampi_san_flags (install libasan/libubsan)])])
  AMPI_CFLAGS="$AMPI_CFLAGS $ampi_san_flags"
  AMPI_LDFLAGS="$AMPI_LDFLAGS $ampi_san_flags"
  AMPI_WRAPPER_FLAGS=$ampi_san_flags
  # gcc's shared runtimes; a compiler without them (clang links its own
  # statically) gets none, and such build systems then need the flags by hand
  ampi_san_libs="-Wl,--push-state,--no-as-needed,-lasan,-lubsan,--pop-state"
  AC_MSG_CHECKING([whether $CC links the sanitizer runtimes as $ampi_san_libs])
  ampi_save_LIBS=$LIBS
  LIBS="$ampi_san_libs $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AMPI_WRAPPER_LIBS=$ampi_san_libs; AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])])
  LIBS=$ampi_save_LIBS
  AC_DEFINE([AMPI_SANITIZERS], [1], [Define to 1 when built with --enable-sanitizers])
])
AC_SUBST([AMPI_CFLAGS])
AC_SUBST([AMPI_LDFLAGS])
AC_SUBST([AMPI_WRAPPER_FLAGS])
AC_SUBST([AMPI_WRAPPER_LIBS])
])
