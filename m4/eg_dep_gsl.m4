# EG_DEP_GSL: GNU Scientific Library (statistics, bootstrap, RNG for the
# gate engine), through pkg-config; names the Debian package when missing.
AC_DEFUN([EG_DEP_GSL], [
  PKG_CHECK_MODULES([GSL], [gsl], [],
    [AC_MSG_ERROR([gsl not found (statistics for gates): apt-get install libgsl-dev])])
])
