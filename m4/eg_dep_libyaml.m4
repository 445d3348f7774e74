# EG_DEP_LIBYAML: TAP YAML diagnostics, through pkg-config; names the Debian package when
# missing.
AC_DEFUN([EG_DEP_LIBYAML], [
  PKG_CHECK_MODULES([LIBYAML], [yaml-0.1], [],
    [AC_MSG_ERROR([yaml-0.1 not found (TAP YAML diagnostics): apt-get install libyaml-dev])])
])
