/* EPGATE_FAULT: kill or stall one rank at a named point, so the fault
 * suites can prove that deaths and hangs become reported errors.
 * Syntax: KIND:RANK:WHERE[:N], KIND kill|stall, WHERE dispatch|combine,
 * N the occurrence that triggers (default 1), counted per process. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/engine.h"

void eg_fault_point(const char *where, uint32_t rank)
{
	static unsigned seen; /* occurrences of the named point */
	const char *spec = getenv("EPGATE_FAULT");
	char kind[16], at[32];
	unsigned r, nth = 1;

	if (!spec ||
	    sscanf(spec, "%15[a-z]:%u:%31[a-z]:%u", kind, &r, at, &nth) < 3)
		return;
	if (r != rank || strcmp(at, where) != 0 || ++seen != nth)
		return;
	fprintf(stderr, "epgate: planted fault: %s rank %u at %s #%u\n", kind,
		r, where, nth);
	fflush(stderr);
	if (!strcmp(kind, "kill"))
		raise(SIGKILL);
	if (!strcmp(kind, "stall"))
		for (;;)
			pause();
}
