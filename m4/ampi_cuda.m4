# m4/ampi_cuda.m4 -- CUDA headers (optional): --with-cuda=DIR, --without-cuda.
#
# Only cuda.h is needed: the library dlopens libcuda at run time, so the same
# build runs on machines without a GPU driver.  Never link libcuda/libcudart.
# Defines HAVE_CUDA_H, substitutes CUDA_CPPFLAGS, CUDA_HOME and NVCC (GPU tests
# and the reduction kernels), and sets the automake conditionals HAVE_CUDA and
# HAVE_NVCC.
AC_DEFUN([AMPI_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda=DIR],
    [CUDA toolkit prefix holding include/cuda.h (optional; default: $CUDA_HOME,
     $CUDA_PATH, /usr/local/cuda, /opt/cuda, /usr)])],
  [], [with_cuda=check])
CUDA_CPPFLAGS=
CUDA_HOME_FOUND=
ampi_found=no
AS_IF([test "x$with_cuda" != xno], [
  ampi_cuda_candidates=
  for ampi_dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /opt/cuda; do
    AS_IF([test -n "$ampi_dir" && test -f "$ampi_dir/include/cuda.h"],
          [ampi_cuda_candidates="$ampi_cuda_candidates $ampi_dir"])
  done
  ampi_cuda_candidates="$ampi_cuda_candidates /usr"
  AMPI_FIND_PACKAGE([CUDA], [], [$with_cuda], [$ampi_cuda_candidates],
                    [[#include <cuda.h>]],
                    [[CUresult status = CUDA_SUCCESS; return (int)status;]], [], [cuda.h])
  AS_IF([test "x$ampi_found" = xyes], [
    AC_DEFINE([HAVE_CUDA_H], [1], [Define to 1 if cuda.h is available])
    AS_CASE([$ampi_found_in], [/usr], [CUDA_HOME_FOUND=/usr], [CUDA_HOME_FOUND=$ampi_found_in])
  ], [test "x$with_cuda" != xcheck], [
    AC_MSG_ERROR([cuda.h not found${with_cuda:+ (--with-cuda=$with_cuda)}; install the CUDA toolkit headers or use --without-cuda])
  ])
])
CUDA_HOME=$CUDA_HOME_FOUND
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_HOME])
NVCC=
AS_IF([test -n "$CUDA_HOME"],
  [AC_PATH_PROG([NVCC], [nvcc], [], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])])
AC_SUBST([NVCC])
AM_CONDITIONAL([HAVE_CUDA], [test "x$ampi_found" = xyes])
# nvcc builds the collectives' reduction kernels into the library (gpu.am);
# without it they are left out and device reductions are refused.
AM_CONDITIONAL([HAVE_NVCC], [test -n "$NVCC"])
])
