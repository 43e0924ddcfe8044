# m4/ampi_pmix.m4 -- PMIx (required): --with-pmix=DIR.
#
# Sets PMIX_CPPFLAGS, PMIX_LDFLAGS, PMIX_LIBS and PMIX_LIBDIR.  Debian installs
# PMIx under /usr/lib/<multiarch>/pmix2, outside the linker's default paths, so
# that directory is searched (after pkg-config) and gets an rpath.
AC_DEFUN([AMPI_CHECK_PMIX], [
AC_REQUIRE([AMPI_DEPS_INIT])
AC_ARG_WITH([pmix],
  [AS_HELP_STRING([--with-pmix=DIR],
    [PMIx install prefix (DIR/include/pmix.h, DIR/lib/libpmix.so);
     default: pkg-config pmix, /usr/lib/<multiarch>/pmix2, /usr/local, /opt/pmix, /usr])],
  [], [with_pmix=check])
AS_IF([test "x$with_pmix" = xno],
  [AC_MSG_ERROR([PMIx is required; --without-pmix is not supported])])
ampi_pmix_candidates="/usr/local /opt/pmix /usr"
AS_IF([test -n "$ampi_multiarch"],
  [ampi_pmix_candidates="/usr/lib/$ampi_multiarch/pmix2 /usr/lib/$ampi_multiarch/pmix $ampi_pmix_candidates"])
AMPI_FIND_PACKAGE([PMIX], [pmix], [$with_pmix], [pkg-config $ampi_pmix_candidates],
                  [[#include <pmix.h>]], [[return PMIx_Get_version() == 0;]],
                  [-lpmix], [pmix.h])
AS_IF([test "x$ampi_found" != xyes], [AC_MSG_ERROR([PMIx (pmix.h and libpmix) not found.
  Install the Debian package libpmix-dev (apt-get install libpmix-dev),
  or pass --with-pmix=DIR.])])
AC_SUBST([PMIX_CPPFLAGS])
AC_SUBST([PMIX_LDFLAGS])
AC_SUBST([PMIX_LIBS])
AC_SUBST([PMIX_LIBDIR])
AMPI_RPATH_FOR([$PMIX_LIBDIR])
])
