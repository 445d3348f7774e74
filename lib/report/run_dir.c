/* Run folders: "<root>/<UTC yyyymmddThhmmssZ>-<pid>", parents created
 * like mkdir -p.  The name sorts by start time; the pid keeps concurrent
 * runs apart.  An existing folder of that name (same process, same
 * second) is reused, as mkdir -p would. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/report.h"

static int eg__mkdir1(const char *path)
{
	struct stat sb;

	if (mkdir(path, 0777) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	return EG_EIO;
}

/* mkdir -p on a writable copy of the path. */
static int eg__mkdir_p(char *path)
{
	char *p;
	int r;

	for (p = path + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		r = eg__mkdir1(path);
		*p = '/';
		if (r)
			return r;
	}
	return eg__mkdir1(path);
}

int eg_run_dir_create(const char *root, char *out, size_t len)
{
	char stamp[32];
	struct tm tm;
	time_t now;
	int n, r;

	if (!root || !*root || !out || len == 0)
		return EG_EINVAL;
	now = time(NULL);
	if (!gmtime_r(&now, &tm) ||
	    !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return EG_EIO;
	n = snprintf(out, len, "%s%s%s-%ld", root,
		     root[strlen(root) - 1] == '/' ? "" : "/", stamp,
		     (long)getpid());
	if (n < 0 || (size_t)n >= len) {
		out[0] = '\0';
		return EG_ERANGE;
	}
	r = eg__mkdir_p(out);
	if (r)
		out[0] = '\0';
	return r;
}
