# SHIFTPOOL_CHECK_CFLAG(FLAG, [ACTION-SUCCESS], [ACTION-FAILURE], [EXTRA-FLAGS])
# ------------------------------------------------------------------------------
# Whether the C compiler accepts FLAG (with EXTRA-FLAGS, e.g. -Werror so that
# an unknown warning option fails instead of warning).  The result is cached
# per flag.
#
# This file is part of shiftpool.  SPDX-License-Identifier: MIT
AC_DEFUN([SHIFTPOOL_CHECK_CFLAG], [
  AS_VAR_PUSHDEF([cache_var], [shiftpool_cv_cflags_$4_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [cache_var], [
    shiftpool_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS $4 $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([cache_var], [yes])], [AS_VAR_SET([cache_var], [no])])
    CFLAGS=$shiftpool_save_CFLAGS])
  AS_VAR_IF([cache_var], [yes], [m4_default([$2], :)], [m4_default([$3], :)])
  AS_VAR_POPDEF([cache_var])
])
