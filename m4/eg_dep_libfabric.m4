# EG_DEP_LIBFABRIC: --with-libfabric[=DIR]. Detected by default through
# pkg-config; an explicit --with-libfabric that is not found is an error.
# Sets LIBFABRIC_CFLAGS, LIBFABRIC_LIBS, HAVE_LIBFABRIC.
AC_DEFUN([EG_DEP_LIBFABRIC], [
  AC_ARG_WITH([libfabric],
    [AS_HELP_STRING([--with-libfabric@<:@=DIR@:>@], [libfabric (default: detect)])],
    [], [with_libfabric=check])
  eg_have_libfabric=no
  AS_CASE([$with_libfabric],
    [no], [],
    [yes|check], [PKG_CHECK_MODULES([LIBFABRIC], [libfabric >= 1.14],
                    [eg_have_libfabric=yes], [eg_have_libfabric=no])],
    [AS_IF([test -f "$with_libfabric/include/rdma/fabric.h"], [
       LIBFABRIC_CFLAGS="-I$with_libfabric/include"
       LIBFABRIC_LIBS="-L$with_libfabric/lib -lfabric"
       AS_IF([test -d "$with_libfabric/lib64"], [LIBFABRIC_LIBS="-L$with_libfabric/lib64 -lfabric"])
       eg_have_libfabric=yes])])
  AS_IF([test "x$eg_have_libfabric" = xno && test "x$with_libfabric" != xcheck && test "x$with_libfabric" != xno],
    [AC_MSG_ERROR([libfabric not found: apt-get install libfabric-dev, or pass --with-libfabric=DIR])])
  AS_IF([test "x$eg_have_libfabric" = xyes],
    [AC_DEFINE([HAVE_LIBFABRIC], [1], [Define if libfabric is used])])
  AC_SUBST([LIBFABRIC_CFLAGS])
  AC_SUBST([LIBFABRIC_LIBS])
  AM_CONDITIONAL([HAVE_LIBFABRIC], [test "x$eg_have_libfabric" = xyes])
])
