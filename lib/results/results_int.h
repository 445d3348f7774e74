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

int eg__rbad(eg__rerr_t *e, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Bootstrap seed of one metric at one point: a hash of both names, so
 * writer and reader compute the same interval. */
uint64_t eg__results_seed(const char *id, const char *metric);

/* Validates one point object (jpath names it in messages, e.g.
 * "points[3]") and converts it; p is zeroed first and freed on error. */
int eg__point_from_json(json_t *o, const char *jpath, eg_point_t *p,
			eg__rerr_t *e);
/* Validates the context object. */
int eg__context_check(json_t *o, eg__rerr_t *e);

#endif
