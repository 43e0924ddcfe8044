# m4/ampi_ucx.m4 -- UCX (required): --with-ucx=DIR.
#
# Sets UCX_CPPFLAGS, UCX_LDFLAGS, UCX_LIBS, UCX_LIBDIR and UCX_BINDIR (where
# ucx_info lives, for scripts).  UCX_LIBS has libucm too: the GPU layer hooks
# UCM's memory events to keep its pointer cache valid.  libucm uses libucs
# symbols without naming libucs as a dependency, so -lucs must come after
# -lucm, or an --as-needed link (Debian's default) drops libucs and fails.
# The project-local install that ./setup.sh unpacks from the CUDA-aware PyPI
# wheel (libucx-cu13) is searched before pkg-config: a system UCX is usually
# built without CUDA.
AC_DEFUN([AMPI_CHECK_UCX], [
AC_REQUIRE([AMPI_DEPS_INIT])
AC_ARG_WITH([ucx],
  [AS_HELP_STRING([--with-ucx=DIR],
    [UCX install prefix (DIR/include/ucp/api/ucp.h, DIR/lib/libucp.so);
     default: .deps/ucx/libucx, pkg-config ucx, /usr/local, /opt/ucx, /usr])],
  [], [with_ucx=check])
AS_IF([test "x$with_ucx" = xno],
  [AC_MSG_ERROR([UCX is required; --without-ucx is not supported])])
ampi_ucx_local=$(cd "$srcdir" && pwd)/.deps/ucx/libucx
AMPI_FIND_PACKAGE([UCX], [ucx], [$with_ucx],
                  [$ampi_ucx_local pkg-config /usr/local /opt/ucx /usr],
                  [[#include <ucp/api/ucp.h>]],
                  [[return ucp_get_version_string() == 0;]], [-lucp -lucm -lucs], [ucp/api/ucp.h])
AS_IF([test "x$ampi_found" != xyes], [
  AS_CASE([$with_ucx], [yes|check], [ampi_where=], [ampi_where=" in $with_ucx"])
  AC_MSG_ERROR([UCX (ucp/api/ucp.h and libucp) not found$ampi_where.
  Run ./setup.sh: it unpacks the CUDA-aware UCX wheel from PyPI (libucx-cu13)
  into .deps/ucx.  Or pass --with-ucx=DIR for another UCX install.])])

# A libtool archive naming another directory (the PyPI wheel ships such) makes
# libtool fail when linking libampi; ./setup.sh deletes them.
AS_IF([test -n "$UCX_LIBDIR" && test -f "$UCX_LIBDIR/libucp.la" &&
       ! grep -q "^libdir='$UCX_LIBDIR'" "$UCX_LIBDIR/libucp.la"],
  [AC_MSG_ERROR([$UCX_LIBDIR/libucp.la belongs to another directory (it was moved);
  libtool would fail to link against it.  Delete the *.la files of that UCX.])])

# ucx_info: in the prefix the headers came from, else pkg-config's bindir,
# else PATH.
UCX_BINDIR=
AS_CASE([$ampi_found_in],
  [/usr], [ampi_ucx_bindir=/usr/bin],
  [pkg-config], [ampi_ucx_bindir=$($PKG_CONFIG --variable=bindir ucx)],
  [ampi_ucx_bindir=$ampi_found_in/bin])
AS_IF([test -n "$ampi_ucx_bindir" && test -x "$ampi_ucx_bindir/ucx_info"],
  [UCX_BINDIR=$ampi_ucx_bindir],
  [AC_PATH_PROG([AMPI_UCX_INFO], [ucx_info])
   AS_IF([test -n "$AMPI_UCX_INFO"], [UCX_BINDIR=$(dirname "$AMPI_UCX_INFO")])])
AC_MSG_CHECKING([for the directory of ucx_info])
AC_MSG_RESULT([${UCX_BINDIR:-not found}])

AC_SUBST([UCX_CPPFLAGS])
AC_SUBST([UCX_LDFLAGS])
AC_SUBST([UCX_LIBS])
AC_SUBST([UCX_LIBDIR])
AC_SUBST([UCX_BINDIR])
AC_DEFINE_UNQUOTED([AMPI_UCX_BINDIR], ["$UCX_BINDIR"],
                   [Directory of the ucx_info found at configure time])
AMPI_RPATH_FOR([$UCX_LIBDIR])
])
