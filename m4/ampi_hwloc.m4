# m4/ampi_hwloc.m4 -- hwloc (required): --with-hwloc=DIR.
#
# Sets HWLOC_CPPFLAGS, HWLOC_LDFLAGS, HWLOC_LIBS and HWLOC_LIBDIR.
AC_DEFUN([AMPI_CHECK_HWLOC], [
AC_ARG_WITH([hwloc],
  [AS_HELP_STRING([--with-hwloc=DIR],
    [hwloc install prefix (DIR/include/hwloc.h, DIR/lib/libhwloc.so);
     default: pkg-config hwloc, /usr/local, /opt/hwloc, /usr])],
  [], [with_hwloc=check])
AS_IF([test "x$with_hwloc" = xno],
  [AC_MSG_ERROR([hwloc is required; --without-hwloc is not supported])])
AMPI_FIND_PACKAGE([HWLOC], [hwloc], [$with_hwloc], [pkg-config /usr/local /opt/hwloc /usr],
                  [[#include <hwloc.h>]], [[return hwloc_get_api_version() == 0;]],
                  [-lhwloc], [hwloc.h])
AS_IF([test "x$ampi_found" != xyes], [AC_MSG_ERROR([hwloc (hwloc.h and libhwloc) not found.
  Install the Debian package libhwloc-dev (apt-get install libhwloc-dev),
  or pass --with-hwloc=DIR.])])
AC_SUBST([HWLOC_CPPFLAGS])
AC_SUBST([HWLOC_LDFLAGS])
AC_SUBST([HWLOC_LIBS])
AC_SUBST([HWLOC_LIBDIR])
AMPI_RPATH_FOR([$HWLOC_LIBDIR])
])
