/* Whole files: read one into memory with a size limit, and replace one
 * atomically (write PATH.tmp, fsync, rename over PATH) so that a reader,
 * or a crash, only ever sees the old file or the complete new one.
 * Errors come back as a code from epgate/error.h and one line in err
 * that names the path. */
#ifndef EPGATE_FILE_H
#define EPGATE_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Reads path whole into a new NUL-terminated buffer (*text, free() it;
 * *len bytes before the NUL, len may be NULL).  A file larger than max
 * bytes is refused before it is read: EG_ERANGE, "path: N bytes, over
 * the limit of MAX".  EG_ENOENT when it does not exist, EG_EIO when it
 * cannot be opened or read, EG_ENOMEM. */
int eg_file_read(const char *path, size_t max, char **text, size_t *len,
		 char *err, size_t errlen);

/* Writes path atomically: fn(f, arg) writes the content to PATH.tmp
 * (returning 0, or <0 to abandon the write), which is then flushed,
 * fsync'ed and renamed over path.  On any failure PATH.tmp is removed,
 * path is left as it was, and err says "path: ...". */
typedef int (*eg_file_fill_fn)(FILE *f, void *arg);
int eg_file_write_atomic(const char *path, eg_file_fill_fn fn, void *arg,
			 char *err, size_t errlen);
/* The same with the content in memory. */
int eg_file_write_atomic_buf(const char *path, const void *buf, size_t len,
			     char *err, size_t errlen);

/* The names in folder dir that keep(dir, name, arg) accepts (non-zero),
 * sorted by cmp over char * elements (strcmp order when NULL): *out a new
 * array of *n new strings, freed by eg_file_names_free.  EG_ENOENT when
 * dir cannot be opened, EG_ENOMEM (then *out is NULL). */
typedef int (*eg_file_keep_fn)(const char *dir, const char *name, void *arg);
int eg_file_names(const char *dir, eg_file_keep_fn keep, void *arg,
		  int (*cmp)(const void *, const void *), char ***out,
		  size_t *n);
void eg_file_names_free(char **v, size_t n);

#endif
