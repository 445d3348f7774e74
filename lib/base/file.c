/* Whole files (include/epgate/file.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/file.h"

/* Reads f to its end into *text; refuses to go past max bytes (the size
 * stat gave may be wrong for pipes and /proc files). */
static int eg__slurp(FILE *f, size_t max, char **text, size_t *len)
{
	size_t cap = 0, n = 0, got;
	char *buf = NULL;

	for (;;) {
		if (cap - n < 4096) {
			size_t nc = cap ? 2 * cap : 16384;
			char *t = realloc(buf, nc + 1);

			if (!t) {
				free(buf);
				return EG_ENOMEM;
			}
			buf = t;
			cap = nc;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got || n > max)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return EG_EIO;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return n > max ? EG_ERANGE : EG_OK;
}

int eg_file_read(const char *path, size_t max, char **text, size_t *len,
		 char *err, size_t errlen)
{
	struct stat st;
	size_t n = 0;
	FILE *f;
	int rc;

	*text = NULL;
	if (len)
		*len = 0;
	f = fopen(path, "r");
	if (!f) {
		int en = errno;

		return eg_err_set(err, errlen,
				  en == ENOENT ? EG_ENOENT : EG_EIO,
				  "%s: cannot open: %s", path, strerror(en));
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size > max) {
		fclose(f);
		return eg_err_set(err, errlen, EG_ERANGE,
				  "%s: %llu bytes, over the limit of %zu", path,
				  (unsigned long long)st.st_size, max);
	}
	rc = eg__slurp(f, max, text, &n);
	fclose(f);
	if (rc == EG_ERANGE) {
		free(*text);
		*text = NULL;
		return eg_err_set(err, errlen, rc,
				  "%s: more than %zu bytes, over the limit",
				  path, max);
	}
	if (rc == EG_EIO)
		return eg_err_set(err, errlen, rc, "%s: read error", path);
	if (rc < 0)
		return eg_err_set(err, errlen, rc, "%s: out of memory", path);
	if (len)
		*len = n;
	return EG_OK;
}

/* Makes a rename durable: fsync of the folder that holds path. */
static void eg__sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: some file systems refuse */
		close(fd);
	}
}

/* Not a regular file (/dev/null, a pipe): written in place -- a rename
 * would replace the device with a file. */
static int eg__write_in_place(const char *path, eg_file_fill_fn fn, void *arg,
			      char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return eg_err_set(err, errlen, EG_EIO, "%s: cannot open: %s",
				  path, strerror(errno));
	rc = fn(f, arg);
	if (fclose(f) != 0 && !rc)
		rc = EG_EIO;
	if (rc)
		eg_err_set(err, errlen, rc, "%s: write failed", path);
	return rc;
}

int eg_file_write_atomic(const char *path, eg_file_fill_fn fn, void *arg,
			 char *err, size_t errlen)
{
	size_t n = strlen(path) + 5;
	char *tmp;
	int rc, en = 0;
	struct stat sb;
	FILE *f;

	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
	    !S_ISDIR(sb.st_mode))
		return eg__write_in_place(path, fn, arg, err, errlen);
	if (!(tmp = malloc(n)))
		return eg_err_set(err, errlen, EG_ENOMEM, "%s: out of memory",
				  path);
	snprintf(tmp, n, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		en = errno;
		rc = eg_err_set(err, errlen, EG_EIO, "%s: cannot create: %s",
				tmp, strerror(en));
		free(tmp);
		return rc;
	}
	errno = 0;
	rc = fn(f, arg);
	if (!rc && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		rc = EG_EIO;
	en = errno;
	if (fclose(f) != 0 && !rc) {
		en = errno;
		rc = EG_EIO;
	}
	if (!rc && rename(tmp, path) != 0) {
		en = errno;
		rc = EG_EIO;
	}
	if (rc) {
		eg_err_set(err, errlen, rc, "%s: write failed: %s", path,
			   en ? strerror(en) : eg_strerror(rc));
		unlink(tmp);
	} else {
		eg__sync_dir(path);
	}
	free(tmp);
	return rc;
}

struct eg__buf {
	const void *p;
	size_t n;
};

static int eg__put_buf(FILE *f, void *arg)
{
	const struct eg__buf *b = arg;

	return fwrite(b->p, 1, b->n, f) == b->n ? 0 : EG_EIO;
}

int eg_file_write_atomic_buf(const char *path, const void *buf, size_t len,
			     char *err, size_t errlen)
{
	struct eg__buf b = {buf, len};

	return eg_file_write_atomic(path, eg__put_buf, &b, err, errlen);
}

static int eg__cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int eg_file_names(const char *dir, eg_file_keep_fn keep, void *arg,
		  int (*cmp)(const void *, const void *), char ***out,
		  size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!d)
		return EG_ENOENT;
	while ((e = readdir(d))) {
		char **p;

		if (!keep(dir, e->d_name, arg))
			continue;
		p = realloc(*out, (*n + 1) * sizeof(*p));
		if (!p || !(p[*n] = strdup(e->d_name))) {
			eg_file_names_free(p ? p : *out, *n);
			*out = NULL;
			*n = 0;
			closedir(d);
			return EG_ENOMEM;
		}
		*out = p;
		(*n)++;
	}
	closedir(d);
	if (*n > 1) /* qsort's base may not be NULL, even for no element */
		qsort(*out, *n, sizeof(**out), cmp ? cmp : eg__cmp_names);
	return EG_OK;
}

void eg_file_names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
