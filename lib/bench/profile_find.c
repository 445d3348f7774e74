/* A profile by name (profiles/NAME.profile among epgate's data files)
 * or by path: the bench, the page and the suites all ask here. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/profile.h"
#include "lib/base/data_path.h"

int eg_bench_find_profile(const char *name, char *path, size_t len)
{
	char rel[512];
	size_t n = strlen(name);

	if (strchr(name, '/') || (n > 8 && !strcmp(name + n - 8, ".profile"))) {
		if (snprintf(path, len, "%s", name) >= (int)len)
			return EG_ERANGE;
		return access(path, R_OK) ? EG_ENOENT : EG_OK;
	}
	snprintf(rel, sizeof(rel), "profiles/%s.profile", name);
	return eg_find_data(rel, path, len);
}
