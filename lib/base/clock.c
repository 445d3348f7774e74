/* The one clock (include/epgate/clock.h). */
#include <time.h>

#include "epgate/clock.h"

double eg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void eg_utc_stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (!strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) && len)
		buf[0] = '\0';
}
