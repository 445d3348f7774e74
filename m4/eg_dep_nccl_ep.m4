# EG_DEP_NCCL_EP: --with-nccl-ep=DIR builds the NCCL EP adapter plugin
# (plugins/nccl-ep/libeg-nccl-ep.so, docs/plugins.md "NCCL EP"). Never
# detected: without the option the plugin is not built and its tests
# skip. DIR is an NCCL EP build or bundle: include/nccl_ep.h (with
# nccl_ep/ep_enums.h, and nccl.h and nccl_device/ of the NCCL it was built
# with) and lib/libnccl_ep.so (and that NCCL's libnccl.so). Asked for and
# incomplete is an error naming what is missing. Needs CUDA and NCCL.
# Sets NCCL_EP_DIR, NCCL_EP_CPPFLAGS (DIR's headers before CUDA's, whose
# NCCL headers may be older), NCCL_EP_LIBS, HAVE_NCCL_EP.
AC_DEFUN([EG_DEP_NCCL_EP], [
  AC_REQUIRE([EG_DEP_NCCL])
  AC_ARG_WITH([nccl-ep],
    [AS_HELP_STRING([--with-nccl-ep=DIR],
      [build the NCCL EP adapter plugin against DIR (DIR/include/nccl_ep.h, DIR/lib/libnccl_ep.so); default: not built])],
    [], [with_nccl_ep=no])
  eg_have_nccl_ep=no
  NCCL_EP_DIR=
  NCCL_EP_CPPFLAGS=
  NCCL_EP_LIBS=
  AS_CASE([$with_nccl_ep],
    [no], [],
    [yes], [AC_MSG_ERROR([--with-nccl-ep needs a directory: --with-nccl-ep=DIR, with DIR/include/nccl_ep.h and DIR/lib/libnccl_ep.so])],
    [
    eg_d=$with_nccl_ep
    eg_miss=
    AS_IF([test "x$eg_have_cuda" != xyes], [eg_miss="$eg_miss CUDA (--with-cuda=DIR);"])
    AS_IF([test "x$eg_have_nccl" != xyes], [eg_miss="$eg_miss NCCL (--with-nccl=DIR);"])
    for eg_f in include/nccl_ep.h include/nccl_ep/ep_enums.h include/nccl.h \
                include/nccl_device/core.h; do
      AS_IF([test ! -f "$eg_d/$eg_f"], [eg_miss="$eg_miss $eg_d/$eg_f;"])
    done
    eg_nep_lib=
    for eg_l in "$eg_d/lib" "$eg_d/lib64"; do
      AS_IF([test -z "$eg_nep_lib" && test -e "$eg_l/libnccl_ep.so" && test -e "$eg_l/libnccl.so"],
        [eg_nep_lib=$eg_l])
    done
    AS_IF([test -z "$eg_nep_lib"], [eg_miss="$eg_miss $eg_d/lib/libnccl_ep.so and libnccl.so;"])
    eg_miss=`echo "$eg_miss" | sed 's/;$//'`
    AS_IF([test -n "$eg_miss"],
      [AC_MSG_ERROR([--with-nccl-ep=$eg_d: missing$eg_miss (want an NCCL EP build or bundle: include/nccl_ep.h with the headers of its NCCL, lib/libnccl_ep.so and lib/libnccl.so)])])
    NCCL_EP_DIR=`cd "$eg_d" && pwd`
    NCCL_EP_CPPFLAGS="-isystem $NCCL_EP_DIR/include -isystem $eg_cuda_dir/include"
    NCCL_EP_LIBS="-L$eg_nep_lib -lnccl_ep -lnccl"
    AC_MSG_CHECKING([whether NCCL EP's headers compile as C11 with its NCCL's device API])
    eg_save_CPPFLAGS=$CPPFLAGS
    eg_save_CFLAGS=$CFLAGS
    CPPFLAGS="$NCCL_EP_CPPFLAGS $CPPFLAGS"
    CFLAGS="$EG_BASE_CFLAGS -fgnu89-inline"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include <nccl.h>
#include <nccl_ep.h>
#include <nccl_device/core.h>
]], [[
ncclCommProperties_t p;
ncclEpGroupConfig_t c = NCCL_EP_GROUP_CONFIG_INIT;
p.railedGinType = NCCL_GIN_TYPE_NONE;
return (int)c.num_experts + (int)p.railedGinType + NCCL_EP_VERSION_CODE;
]])], [eg_have_nccl_ep=yes], [eg_have_nccl_ep=no])
    CPPFLAGS=$eg_save_CPPFLAGS
    CFLAGS=$eg_save_CFLAGS
    AC_MSG_RESULT([$eg_have_nccl_ep])
    AS_IF([test "x$eg_have_nccl_ep" != xyes],
      [AC_MSG_ERROR([--with-nccl-ep=$eg_d: include/nccl_ep.h does not compile with DIR/include/nccl.h and nccl_device/ (want NCCL EP 0.1 with the NCCL 2.30 it was built with; see config.log)])])
    ])
  AC_MSG_CHECKING([for NCCL EP (the adapter plugin)])
  AC_MSG_RESULT([$eg_have_nccl_ep${NCCL_EP_DIR:+ in $NCCL_EP_DIR}])
  AC_SUBST([NCCL_EP_DIR])
  AC_SUBST([NCCL_EP_CPPFLAGS])
  AC_SUBST([NCCL_EP_LIBS])
  AM_CONDITIONAL([HAVE_NCCL_EP], [test "x$eg_have_nccl_ep" = xyes])
])
