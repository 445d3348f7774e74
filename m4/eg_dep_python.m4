# EG_DEP_PYTHON: the Python bridge plugin (plugins/python/libeg-python.so,
# docs/python.md), which embeds CPython to drive adapter modules written
# in Python. --with-python=PATH names the interpreter whose headers and
# libpython the bridge is built against (a venv's python works: its base
# interpreter's headers, and at run time the venv's packages); the default
# is $PYTHON, else the first of python3 from PATH and /usr/bin/python3
# that imports numpy, else python3 from PATH; detected: without Python.h
# (Debian: python3-dev) or a shared libpython the bridge is not built and
# its tests
# skip. Asked for and unusable is an error saying why. --without-python
# turns it off. Sets PYTHON_BIN (the interpreter as named, the bridge's
# program name at run time), PYTHON_CPPFLAGS, PYTHON_LIBS, HAVE_PYTHON.
AC_DEFUN([EG_DEP_PYTHON], [
  AC_ARG_VAR([PYTHON], [the Python interpreter of the bridge plugin (as --with-python=PATH)])
  AC_ARG_WITH([python],
    [AS_HELP_STRING([--with-python=PATH],
      [build the Python bridge plugin against the interpreter PATH (default: python3 from PATH, when its headers are found)])],
    [], [with_python=check])
  eg_have_python=no
  eg_python_why=
  PYTHON_BIN=
  PYTHON_CPPFLAGS=
  PYTHON_LIBS=
  AS_CASE([$with_python],
    [no], [eg_python_why="--without-python"],
    [yes|check], [eg_py=${PYTHON:-python3}
      dnl not named: the first python3 that has numpy (the reference
      dnl adapter's), so that a pyenv or venv python3 without it on PATH
      dnl does not leave the bridge's tests skipped beside Debian's
      AS_IF([test -z "$PYTHON"], [
        for eg_cand in python3 /usr/bin/python3; do
          AS_IF([$eg_cand -c 'import numpy' >/dev/null 2>&1],
            [eg_py=$eg_cand; break])
        done])],
    [eg_py=$with_python])
  AS_IF([test "x$with_python" != xno], [
    AC_MSG_CHECKING([for the Python bridge's interpreter])
    AS_CASE([$eg_py],
      [*/*], [],
      [eg_py=`command -v "$eg_py" 2>/dev/null`])
    AS_IF([test -n "$eg_py" && test -x "$eg_py"], [AC_MSG_RESULT([$eg_py])],
      [AC_MSG_RESULT([no])
       eg_python_why="no interpreter ${with_python}"])
  ])
  AS_IF([test -z "$eg_python_why"], [
    AC_MSG_CHECKING([for $eg_py's headers and shared libpython])
    dnl four lines: include dir, LIBDIR, python<VERSION><ABIFLAGS>, shared
    eg_pyvars=`"$eg_py" -c 'import sysconfig as s; v = s.get_config_var; print(s.get_path("include")); print(v("LIBDIR")); print("python" + v("VERSION") + (v("ABIFLAGS") or "")); print(v("Py_ENABLE_SHARED") or 0)' 2>/dev/null`
    eg_pyinc=`echo "$eg_pyvars" | sed -n 1p`
    eg_pylibdir=`echo "$eg_pyvars" | sed -n 2p`
    eg_pylib=`echo "$eg_pyvars" | sed -n 3p`
    eg_pyshared=`echo "$eg_pyvars" | sed -n 4p`
    AS_IF([test -z "$eg_pylib"], [eg_python_why="$eg_py does not answer sysconfig"],
      [test ! -f "$eg_pyinc/Python.h"], [eg_python_why="no $eg_pyinc/Python.h (Debian: apt-get install python3-dev)"],
      [test "x$eg_pyshared" != x1], [eg_python_why="$eg_py has no shared libpython (Py_ENABLE_SHARED=0): the bridge embeds libpython"],
      [PYTHON_CPPFLAGS="-isystem $eg_pyinc"
       PYTHON_LIBS="-L$eg_pylibdir -Wl,-rpath,$eg_pylibdir -l$eg_pylib"])
    AS_IF([test -z "$eg_python_why"], [
      eg_save_CPPFLAGS=$CPPFLAGS
      eg_save_LIBS=$LIBS
      CPPFLAGS="$PYTHON_CPPFLAGS $CPPFLAGS"
      LIBS="$PYTHON_LIBS $LIBS"
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <Python.h>]],
        [[PyConfig c; PyConfig_InitPythonConfig(&c); return Py_IsInitialized();]])],
        [], [eg_python_why="cannot link against $PYTHON_LIBS (Python 3.8 or later wanted)"])
      CPPFLAGS=$eg_save_CPPFLAGS
      LIBS=$eg_save_LIBS
    ])
    AS_IF([test -z "$eg_python_why"], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no: $eg_python_why])])
  ])
  AS_IF([test -z "$eg_python_why"], [eg_have_python=yes; PYTHON_BIN=$eg_py],
    [AS_CASE([$with_python], [check|no], [],
      [AC_MSG_ERROR([--with-python=$with_python: $eg_python_why])])
     PYTHON_CPPFLAGS=
     PYTHON_LIBS=])
  AC_SUBST([PYTHON_BIN])
  AC_SUBST([PYTHON_CPPFLAGS])
  AC_SUBST([PYTHON_LIBS])
  AM_CONDITIONAL([HAVE_PYTHON], [test "x$eg_have_python" = xyes])
])
