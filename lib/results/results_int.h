/* Internals shared by the results reader and writer. */
#ifndef EG_RESULTS_INT_H
#define EG_RESULTS_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "epgate/results.h"

/* Error sink: "name: path: message" into err. */
typedef struct eg__rerr {
	const char *name;
	char *err;
	size_t len;
} eg__rerr_t;

int eg__results_rbad(eg__rerr_t *e, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Bootstrap seed of one metric at one point: a hash of both names, so
 * writer and reader compute the same interval. */
uint64_t eg__results_seed(const char *id, const char *metric);

/* Validates one point object (jpath names it in messages, e.g.
 * "points[3]") and converts it; p is zeroed first and freed on error. */
int eg__results_point_from_json(json_t *o, const char *jpath, eg_point_t *p,
				eg__rerr_t *e);
/* snprintf for JSON paths: truncating a long path is fine. */
void eg__results_fmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every key of o is in allowed (NULL-terminated). */
int eg__results_keys_allowed(json_t *o, const char *const *allowed,
			     const char *jpath, eg__rerr_t *e);
/* One metric object (jpath p) of point id into m (lib/results/metric.c). */
int eg__metric(json_t *o, const char *p, const char *id, eg_metric_t *m,
	       eg__rerr_t *e);
/* The point's launch records (passes, remeasured) against its metrics. */
int eg__results_point_launches(json_t *o, const char *jpath, eg_point_t *pt,
			       eg__rerr_t *e);
/* Validates the context object. */
int eg__results_context_check(json_t *o, eg__rerr_t *e);
/* The revision of a file just read and, for an older one, what its
 * fields determine (lib/results/older.c). */
int eg__results_older_read(eg_results_t *r);

#endif
