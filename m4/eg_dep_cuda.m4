# EG_DEP_CUDA: --with-cuda[=DIR]. Detected by default under DIR (default
# /usr/local/cuda); an explicit --with-cuda that is not found is an error.
# Sets NVCC, CUDA_CPPFLAGS, CUDA_LIBS (static runtime), HAVE_CUDA.
AC_DEFUN([EG_DEP_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA toolkit (default: detect in /usr/local/cuda)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc])
  eg_have_cuda=no
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [eg_cuda_dir=/usr/local/cuda],
    [eg_cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AC_MSG_CHECKING([for CUDA in $eg_cuda_dir])
    eg_cuda_lib=$eg_cuda_dir/lib64
    AS_IF([test ! -d "$eg_cuda_lib"], [eg_cuda_lib=$eg_cuda_dir/lib])
    AS_IF([test -x "$eg_cuda_dir/bin/nvcc" &&
           test -f "$eg_cuda_dir/include/cuda_runtime_api.h" &&
           test -f "$eg_cuda_lib/libcudart_static.a"],
      [eg_have_cuda=yes])
    AC_MSG_RESULT([$eg_have_cuda])
    AS_IF([test "x$eg_have_cuda" = xno && test "x$with_cuda" != xcheck],
      [AC_MSG_ERROR([CUDA not found in $eg_cuda_dir (need bin/nvcc, include/cuda_runtime_api.h, libcudart_static.a): apt-get install nvidia-cuda-toolkit, or pass --with-cuda=DIR])])
  ])
  AS_IF([test "x$eg_have_cuda" = xyes], [
    NVCC=$eg_cuda_dir/bin/nvcc
    CUDA_CPPFLAGS="-I$eg_cuda_dir/include"
    CUDA_LIBS="-L$eg_cuda_lib -lcudart_static -lstdc++ -ldl -lpthread -lrt"
    dnl plugins link the shared runtime, as an external library's would
    CUDA_PLUGIN_LIBS="-L$eg_cuda_lib -Wl,-rpath,$eg_cuda_lib -lcudart"
    AC_DEFINE([HAVE_CUDA], [1], [Define if the CUDA toolkit is used])
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([CUDA_PLUGIN_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$eg_have_cuda" = xyes])
])
