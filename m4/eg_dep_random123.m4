# EG_DEP_RANDOM123: header-only counter-based RNG (Philox), same bits on
# CPU and GPU.
AC_DEFUN([EG_DEP_RANDOM123], [
  AC_LANG_PUSH([C])
  AC_CHECK_HEADER([Random123/philox.h], [],
    [AC_MSG_ERROR([Random123/philox.h not found: apt-get install librandom123-dev])])
  AC_LANG_POP([C])
])
