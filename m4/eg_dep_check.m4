# EG_DEP_CHECK: check (unit tests), through pkg-config; names the Debian package when
# missing.
AC_DEFUN([EG_DEP_CHECK], [
  PKG_CHECK_MODULES([CHECK], [check], [],
    [AC_MSG_ERROR([check not found (check (unit tests)): apt-get install libcheck-dev])])
])
