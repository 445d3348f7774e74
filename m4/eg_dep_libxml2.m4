# EG_DEP_LIBXML2: JUnit XML, through pkg-config; names the Debian package when
# missing.
AC_DEFUN([EG_DEP_LIBXML2], [
  PKG_CHECK_MODULES([LIBXML2], [libxml-2.0], [],
    [AC_MSG_ERROR([libxml-2.0 not found (JUnit XML): apt-get install libxml2-dev])])
])
