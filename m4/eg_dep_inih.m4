# EG_DEP_INIH: workload files, through pkg-config; names the Debian package when
# missing.
AC_DEFUN([EG_DEP_INIH], [
  PKG_CHECK_MODULES([INIH], [inih], [],
    [AC_MSG_ERROR([inih not found (workload files): apt-get install libinih-dev])])
])
