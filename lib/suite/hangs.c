/* A plugin that hangs costs a deadline per case (a whole job's when
 * every rank hangs): `epgate check` stops running cases after a few
 * hangs and says so, the cases left skips with the reason
 * (docs/plugins.md, "Hangs"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/suite/suite.h"

long eg_suite_max_hangs(const char *prog, unsigned given)
{
	const char *v = getenv("EPGATE_MAX_HANGS");
	unsigned long n;
	char *end;

	if (given != EG_MAX_HANGS_UNSET)
		return given;
	if (!v || !*v)
		return EG_MAX_HANGS_DEFAULT;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || *v == '-' || n > 1000000) {
		fprintf(stderr,
			"%s: EPGATE_MAX_HANGS \"%s\": want a count of hangs, "
			"0 to 1000000 (0: never stop)\n",
			prog, v);
		return EG_EINVAL;
	}
	return (long)n;
}

const char *eg_suite_engine_said(const char *err, char *buf, size_t len)
{
	if (err && !strcmp(err, eg_strerror(EG_ETIMEDOUT)))
		snprintf(buf, len, "did not return (%s)", err);
	else
		snprintf(buf, len, "returned \"%s\"", err ? err : "");
	return buf;
}

int eg_suite_hang_stop(unsigned hangs, unsigned passed, unsigned max)
{
	return max && hangs >= max && hangs > passed;
}

void eg_suite_hang_why(unsigned max, char *buf, size_t len)
{
	snprintf(buf, len,
		 "not run: epgate check stopped after %u hang%s "
		 "(--max-hangs %u; 0 runs every case)",
		 max, max == 1 ? "" : "s", max);
}

void eg_suite_hang_say(FILE *out, const char *progress, unsigned max)
{
	if (!out)
		return;
	fprintf(out,
		"%sstopped after %u hang%s (--max-hangs %u; 0 runs every "
		"case): the cases left are skipped\n",
		progress ? progress : "", max, max == 1 ? "" : "s", max);
	fflush(out);
}
