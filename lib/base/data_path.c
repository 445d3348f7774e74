/* Where epgate finds itself and the files it ships (profiles, gates,
 * fixtures): below every folder that reads one, so the page, the bench
 * and the suites ask here and never each other. */
#define _XOPEN_SOURCE 700 /* realpath */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/base/data_path.h"

const char *eg_self_exe(void)
{
	static char self[4096];
	static int done;

	if (!done) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[n > 0 ? n : 0] = '\0';
		done = 1;
	}
	return self[0] ? self : NULL;
}

int eg_build_tree(void)
{
	char exe[PATH_MAX], top[PATH_MAX];
	const char *self = eg_self_exe();
	size_t n;

	if (!self || !realpath(self, exe) || !realpath(EG_BUILDDIR, top))
		return self ? 0 : -1;
	n = strlen(top);
	return !strncmp(exe, top, n) && exe[n] == '/';
}

/* PREFIX/share/epgate beside the running program (PREFIX/bin/epgate),
 * when it is there: an installed tree moved, or staged with DESTDIR. */
static int eg__beside_exe(char *out)
{
	const char *self = eg_self_exe(), *slash;
	char dir[PATH_MAX];

	if (!self || !(slash = strrchr(self, '/')) ||
	    snprintf(dir, sizeof(dir), "%.*s/../share/" PACKAGE_TARNAME,
		     (int)(slash - self), self) >= (int)sizeof(dir))
		return -1;
	return realpath(dir, out) ? 0 : -1;
}

int eg_find_data(const char *rel, char *out, size_t len)
{
	char beside[PATH_MAX] = "";
	int tree = eg_build_tree();
	const char *roots[4] = {getenv("EPGATE_DATADIR")};

	/* the build tree's program reads the source tree it was built
	 * from; an installed one its PREFIX/share/epgate, never the source
	 * tree compiled into it (which may have moved on, or be gone) */
	if (tree == 1) {
		roots[1] = EG_SRCDIR;
		roots[2] = EG_PKGDATADIR;
	} else {
		if (tree == 0 && eg__beside_exe(beside) == 0)
			roots[1] = beside;
		roots[2] = EG_PKGDATADIR;
		roots[3] = tree < 0 ? EG_SRCDIR : NULL;
	}
	for (int i = 0; i < 4; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		int n = snprintf(out, len, "%s/%s", roots[i], rel);
		if (n > 0 && (size_t)n < len && access(out, R_OK) == 0)
			return EG_OK;
	}
	/* relative to the current directory as a last resort */
	int n = snprintf(out, len, "%s", rel);
	if (n > 0 && (size_t)n < len && access(out, R_OK) == 0)
		return EG_OK;
	return EG_ENOENT;
}
