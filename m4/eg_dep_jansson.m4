# EG_DEP_JANSSON: JSON, through pkg-config; names the Debian package when
# missing.
AC_DEFUN([EG_DEP_JANSSON], [
  PKG_CHECK_MODULES([JANSSON], [jansson], [],
    [AC_MSG_ERROR([jansson not found (JSON): apt-get install libjansson-dev])])
])
