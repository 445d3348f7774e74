/* The one clock: monotonic seconds, for deadlines and timed loops. */
#ifndef EPGATE_CLOCK_H
#define EPGATE_CLOCK_H

#include <stddef.h>

/* Seconds on CLOCK_MONOTONIC (never jumps with the wall clock). */
double eg_now(void);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (len >= 21). */
void eg_utc_stamp(char *buf, size_t len);

#endif
