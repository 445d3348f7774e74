/* EPGATE_FAULT: kill or stall one rank at a named point, so the fault
 * suites can prove that deaths and hangs become reported errors. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/engine.h"

void eg_fault_point(const char *where, uint32_t rank)
{
	const char *spec = getenv("EPGATE_FAULT");
	char kind[16], at[32];
	unsigned r;

	if (!spec || sscanf(spec, "%15[a-z]:%u:%31s", kind, &r, at) != 3)
		return;
	if (r != rank || strcmp(at, where) != 0)
		return;
	fprintf(stderr, "epgate: planted fault: %s rank %u at %s\n", kind, r,
		where);
	fflush(stderr);
	if (!strcmp(kind, "kill"))
		raise(SIGKILL);
	if (!strcmp(kind, "stall"))
		for (;;)
			pause();
}
