/* The boundary names and the device window's hold (include/epgate/
 * window.h, docs/metrics.md "Boundaries"). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/window.h"

static const char *const eg__names[] = {"call", "window", "kernel", "replay"};
#define EG__NAMES (sizeof(eg__names) / sizeof(eg__names[0]))

const char *eg_boundary_name(eg_boundary_t b)
{
	return (unsigned)b < EG__NAMES ? eg__names[b] : "?";
}

int eg_boundary_parse(const char *s, eg_boundary_t *b)
{
	for (unsigned i = 0; s && i < EG__NAMES; i++)
		if (!strcmp(s, eg__names[i])) {
			*b = (eg_boundary_t)i;
			return EG_OK;
		}
	return EG_EINVAL;
}

int eg_boundary_env(eg_boundary_t dflt, eg_boundary_t *b, char *err,
		    size_t errlen)
{
	const char *s = getenv("EPGATE_BOUNDARY");

	*b = dflt;
	if (!s || !*s)
		return EG_OK;
	if (eg_boundary_parse(s, b) == EG_OK)
		return EG_OK;
	snprintf(err, errlen,
		 "EPGATE_BOUNDARY=%.40s: expected call, window, kernel or "
		 "replay",
		 s);
	return EG_EINVAL;
}

/* a microsecond count from name, 0 to 1e6 */
static int eg__us(const char *name, double dflt, double *v, char *err,
		  size_t errlen)
{
	const char *s = getenv(name);
	char *end;

	*v = dflt;
	if (!s || !*s)
		return EG_OK;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || end == s || !(*v >= 0 && *v <= 1e6)) {
		snprintf(err, errlen,
			 "%s=%.40s: expected microseconds, 0 to 1000000", name,
			 s);
		return EG_EINVAL;
	}
	return EG_OK;
}

int eg_window_init(eg_window_t *w, char *err, size_t errlen)
{
	int rc;

	memset(w, 0, sizeof(*w));
	if ((rc = eg__us("EPGATE_HOLD_US", 50, &w->hold_us, err, errlen)) < 0 ||
	    (rc = eg__us("EPGATE_HOLD_MAX_US", 5000, &w->max_us, err, errlen)) <
		0)
		return rc;
	if (w->hold_us > w->max_us)
		w->hold_us = w->max_us;
	return EG_OK;
}

int eg_window_after(eg_window_t *w, int passed)
{
	w->samples++;
	if (!passed)
		return 0;
	w->short_n++;
	if (w->synced)
		return 1;
	if (w->hold_us >= w->max_us)
		w->synced = 1;
	else
		w->hold_us = w->hold_us < 1 ? 1 : 2 * w->hold_us;
	if (w->hold_us > w->max_us)
		w->hold_us = w->max_us;
	return 1;
}

void eg_window_reset(eg_window_t *w)
{
	w->samples = w->short_n = 0;
}
