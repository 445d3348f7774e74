/* Where epgate finds itself and the files it ships
 * (lib/base/data_path.c). */
#ifndef EG_BASE_DATA_PATH_H
#define EG_BASE_DATA_PATH_H

#include <stddef.h>

/* This executable's path, read once; NULL when it cannot be found. */
const char *eg_self_exe(void);
/* 1 when the running program lies inside the build tree it was
 * compiled in (./epgate, the test programs), 0 when it is elsewhere (an
 * installed, staged or carried copy), -1 when that cannot be told. */
int eg_build_tree(void);
/* Locates a data file shipped with epgate (e.g. "fixtures/workloads/
 * l1-matrix.ini"): $EPGATE_DATADIR; then, for the program of the build
 * tree, the source tree and the installed pkgdatadir; for an installed
 * one, PREFIX/share/epgate beside its bin/ and the pkgdatadir compiled
 * in, never the source tree; then the current folder. */
int eg_find_data(const char *rel, char *out, size_t len);

#endif
