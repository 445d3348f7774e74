/* Where epgate finds the files it ships. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/suite/suite.h"

int eg_find_data(const char *rel, char *out, size_t len)
{
	const char *roots[3] = {getenv("EPGATE_DATADIR"), EG_SRCDIR,
				EG_PKGDATADIR};

	for (int i = 0; i < 3; i++) {
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
