/* Where epgate finds the files it ships, and where a command may write
 * (each refusal names the argument, the path and the reason). */
#define _XOPEN_SOURCE 700 /* realpath */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/data_path.h"
#include "epgate/report.h"

#include "lib/suite/suite.h"

/* ---- where a command writes --------------------------------------------- */

/* mkdir -p, saying which folder could not be made and why. */
static int eg__mkdir_p(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	struct stat sb;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return eg_err_set(err, errlen, EG_ERANGE, "path too long");
	for (char *p = path + 1;; p++) {
		int last = !*p;

		if (!last && (*p != '/' || p[-1] == '/'))
			continue;
		*p = '\0';
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return eg_err_set(err, errlen, EG_EIO,
					  "cannot create the folder %s: %s",
					  path, strerror(errno));
		if (stat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
			return eg_err_set(err, errlen, EG_EIO,
					  "%s exists and is not a folder",
					  path);
		if (last)
			break;
		*p = '/';
	}
	if (access(path, W_OK) < 0)
		return eg_err_set(err, errlen, EG_EIO, "cannot write in %s: %s",
				  path, strerror(errno));
	return EG_OK;
}

int eg_suite_run_dir(const char *prog, const char *reports, char *run,
		     size_t len)
{
	char err[4400];
	int rc = eg__mkdir_p(reports, err, sizeof(err));

	if (rc == EG_OK && (rc = eg_run_dir_create(reports, run, len)) < 0)
		snprintf(err, sizeof(err),
			 "cannot create a run folder in it: "
			 "%s",
			 strerror(errno));
	if (rc < 0) {
		fprintf(stderr, "%s: --reports %s: %s\n", prog, reports, err);
		return rc;
	}
	return EG_OK;
}

int eg_suite_run_dir_drop(const char *run)
{
	return run && *run && rmdir(run) == 0;
}

int eg_suite_out_file(const char *prog, const char *opt, const char *path)
{
	char dir[4096], *slash;
	struct stat sb;
	const char *why = NULL;

	if (!path || !strcmp(path, "-"))
		return EG_OK;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "%s: %s %s: is a folder; give a file\n", prog,
			opt, path);
		return EG_EINVAL;
	}
	if (stat(dir, &sb) < 0)
		why = "does not exist";
	else if (!S_ISDIR(sb.st_mode))
		why = "is not a folder";
	else if (access(dir, W_OK) < 0)
		why = "is not writable";
	if (!why)
		return EG_OK;
	fprintf(stderr, "%s: %s %s: the folder %s %s\n", prog, opt, path, dir,
		why);
	return EG_EINVAL;
}
