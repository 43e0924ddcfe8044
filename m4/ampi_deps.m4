# m4/ampi_deps.m4 -- the search shared by the dependency checks (ampi_ucx.m4,
# ampi_pmix.m4, ampi_hwloc.m4, ampi_cuda.m4).
#
# Each dependency is looked for in a list of candidates (pkg-config, install
# prefixes); the first candidate whose header compiles and whose library links
# wins.  The link tests are run by hand rather than with AC_CHECK_HEADER/LIB
# because those cache their answer, and the cache would make every candidate
# after the first look like the first.

# AMPI_DEPS_INIT: shell helpers, emitted once (AC_REQUIRE'd below).  The case
# patterns carry a leading '(' so that m4 sees balanced parentheses.
AC_DEFUN([AMPI_DEPS_INIT], [
AC_REQUIRE([AC_PROG_CC])
AC_REQUIRE([PKG_PROG_PKG_CONFIG])

# Turn -I into -isystem: third-party headers are not ours to fix, and UCX's
# ucs/sys/compiler_def.h already trips -Wsign-compare, which -Werror would turn
# into a failure of our own build.
ampi_isystem () {
  ampi_isystem_out=
  for ampi_isystem_flag in $[1]; do
    case $ampi_isystem_flag in
      (-I*) ampi_isystem_out="$ampi_isystem_out -isystem $(echo "$ampi_isystem_flag" | sed 's/^-I//')" ;;
      (*)   ampi_isystem_out="$ampi_isystem_out $ampi_isystem_flag" ;;
    esac
  done
  echo "$ampi_isystem_out" | sed 's/^ *//'
}

# The library directory of an install prefix (lib64 first: RPM-style layouts).
ampi_libdir_of () {
  if test -d "$[1]/lib64"; then echo "$[1]/lib64"; else echo "$[1]/lib"; fi
}

# Directories the dynamic linker searches anyway: no -L or rpath is needed there.
ampi_multiarch=$($CC -print-multiarch 2>/dev/null)
ampi_is_system_libdir () {
  case $[1] in
    (""|/lib|/lib64|/usr/lib|/usr/lib64) return 0 ;;
    ("/lib/$ampi_multiarch"|"/usr/lib/$ampi_multiarch") test -n "$ampi_multiarch" ;;
    (*) return 1 ;;
  esac
}
])

# AMPI_FIND_PACKAGE(VAR, PKG-CONFIG-MODULE, WITH-VALUE, CANDIDATES, INCLUDES,
#                   BODY, LIBS, HEADER)
# Looks for a package whose INCLUDES + BODY compile and link with LIBS; in an
# install prefix, HEADER (under include/) and the first library of LIBS must
# be present too.
# WITH-VALUE is the --with-xxx argument: a directory restricts the search to
# that prefix; "yes", "check" or empty tries each of CANDIDATES in turn: an
# install prefix, "/usr" meaning the compiler's default paths, or the word
# "pkg-config" meaning MODULE's flags (skipped when pkg-config does not know it).
# On success sets ampi_found=yes, ampi_found_in (the candidate), VAR_CPPFLAGS,
# VAR_LDFLAGS (-L and -Wl,-rpath), VAR_LIBS and VAR_LIBDIR (empty for the
# linker's own directories).
AC_DEFUN([AMPI_FIND_PACKAGE], [
AC_REQUIRE([AMPI_DEPS_INIT])
ampi_found=no
ampi_found_in=
AS_CASE([$3], [yes|check|""], [ampi_candidates="$4"], [ampi_candidates="$3"])
for ampi_cand in $ampi_candidates; do
  AS_CASE([$ampi_cand],
    [pkg-config], [
      AS_IF([test -z "$2" || test -z "$PKG_CONFIG" || ! $PKG_CONFIG --exists "$2" 2>/dev/null],
            [continue])
      ampi_cppflags=$(ampi_isystem "$($PKG_CONFIG --cflags "$2")")
      ampi_libdir=$($PKG_CONFIG --variable=libdir "$2")
      ampi_ldflags=$($PKG_CONFIG --libs-only-L "$2")
      AC_MSG_CHECKING([for $1 via pkg-config ($2)])],
    [/usr], [
      ampi_cppflags= ampi_libdir= ampi_ldflags=
      AC_MSG_CHECKING([for $1 in the compiler's default paths])],
    [
      ampi_cppflags="-isystem $ampi_cand/include"
      ampi_libdir=$(ampi_libdir_of "$ampi_cand")
      ampi_ldflags="-L$ampi_libdir"
      AC_MSG_CHECKING([for $1 in $ampi_cand])
      # The compiler and linker fall back to the system's copies, so a prefix
      # only counts when it holds the header and the library itself.
      ampi_lib=$(echo "$7" | sed -n 's/^ *-l\([[^ ]]*\).*/\1/p')
      AS_IF([test ! -f "$ampi_cand/include/$8" ||
             { test -n "$ampi_lib" && ! ls "$ampi_libdir/lib$ampi_lib".* >/dev/null 2>&1; }], [
        AC_MSG_RESULT([no])
        continue])])
  ampi_save_CPPFLAGS=$CPPFLAGS ampi_save_LDFLAGS=$LDFLAGS ampi_save_LIBS=$LIBS
  CPPFLAGS="$ampi_cppflags $CPPFLAGS"
  LDFLAGS="$ampi_ldflags $LDFLAGS"
  LIBS="$7 $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([$5], [$6])], [ampi_found=yes])
  CPPFLAGS=$ampi_save_CPPFLAGS LDFLAGS=$ampi_save_LDFLAGS LIBS=$ampi_save_LIBS
  AC_MSG_RESULT([$ampi_found])
  AS_IF([test $ampi_found = yes], [ampi_found_in=$ampi_cand; break])
done
AS_IF([test $ampi_found = yes], [
  AS_IF([ampi_is_system_libdir "$ampi_libdir"], [ampi_libdir=])
  # The rpath travels with the -L flag, so that any target linking with
  # $(VAR_LDFLAGS) -- even one that replaces AM_LDFLAGS -- runs without
  # LD_LIBRARY_PATH (and does not pick up another copy from the system).
  AS_IF([test -n "$ampi_libdir"],
        [ampi_ldflags="${ampi_ldflags:+$ampi_ldflags }-Wl,-rpath,$ampi_libdir"])
  $1_CPPFLAGS=$ampi_cppflags
  $1_LDFLAGS=$ampi_ldflags
  $1_LIBS="$7"
  $1_LIBDIR=$ampi_libdir])
])

# AMPI_RPATH_FOR(DIR): record -Wl,-rpath,DIR in AMPI_RPATH_LDFLAGS, the list of
# all dependency rpaths (already part of each VAR_LDFLAGS; for the summary and
# for scripts that link by hand).
AC_DEFUN([AMPI_RPATH_FOR], [
AS_IF([test -n "$1"], [AMPI_RPATH_LDFLAGS="${AMPI_RPATH_LDFLAGS:+$AMPI_RPATH_LDFLAGS }-Wl,-rpath,$1"])
])
