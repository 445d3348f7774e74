# EG_DEP_NCCL: --with-nccl[=DIR]. Detected by default (DIR, the CUDA
# tree, then the system paths); an explicit --with-nccl that is not found
# is an error. Sets NCCL_CPPFLAGS, NCCL_LIBS, HAVE_NCCL.
AC_DEFUN([EG_DEP_NCCL], [
  AC_REQUIRE([EG_DEP_CUDA])
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@], [NCCL (default: detect)])],
    [], [with_nccl=check])
  eg_have_nccl=no
  NCCL_CPPFLAGS=
  NCCL_LIBS=
  AS_IF([test "x$with_nccl" != xno && test "x$eg_have_cuda" = xyes], [
    eg_save_CPPFLAGS=$CPPFLAGS
    eg_save_LIBS=$LIBS
    eg_save_LDFLAGS=$LDFLAGS
    AS_CASE([$with_nccl],
      [yes|check], [eg_nccl_dirs="$eg_cuda_dir /usr"],
      [eg_nccl_dirs=$with_nccl])
    for eg_d in $eg_nccl_dirs; do
      AS_IF([test -f "$eg_d/include/nccl.h"], [
        for eg_l in "$eg_d/lib64" "$eg_d/lib" "$eg_d/lib/x86_64-linux-gnu"; do
          AS_IF([test -e "$eg_l/libnccl.so"], [
            NCCL_CPPFLAGS="-I$eg_d/include"
            NCCL_LIBS="-L$eg_l -Wl,-rpath,$eg_l -lnccl"
            break 2])
        done])
    done
    AS_IF([test -n "$NCCL_LIBS"], [
      CPPFLAGS="$CPPFLAGS $NCCL_CPPFLAGS $CUDA_CPPFLAGS"
      AC_CHECK_HEADER([nccl.h], [eg_have_nccl=yes], [eg_have_nccl=no])
      CPPFLAGS=$eg_save_CPPFLAGS
    ])
    LIBS=$eg_save_LIBS
    LDFLAGS=$eg_save_LDFLAGS
  ])
  AS_IF([test "x$eg_have_nccl" = xno && test "x$with_nccl" != xcheck && test "x$with_nccl" != xno],
    [AC_MSG_ERROR([NCCL not found (need CUDA, include/nccl.h and libnccl.so): apt-get install libnccl-dev, or pass --with-nccl=DIR])])
  AS_IF([test "x$eg_have_nccl" = xyes],
    [AC_DEFINE([HAVE_NCCL], [1], [Define if NCCL is used])],
    [NCCL_CPPFLAGS= ; NCCL_LIBS=])
  AC_MSG_CHECKING([for NCCL])
  AC_MSG_RESULT([$eg_have_nccl])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LIBS])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$eg_have_nccl" = xyes])
])
