/* The nonfinite workload key (docs/workloads.md, docs/semantics.md,
 * "Non-finite values"): none, input:P or expert:E. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/workload.h"

/* err may be NULL, as for every workload key */
#define eg__fail(err, rc, ...)                                                 \
	eg_err_set((err), (err) ? EG_ERRMSG_MAX : 0, (rc), __VA_ARGS__)

int eg_nonfinite_set(eg_workload_t *w, const char *v, char err[EG_ERRMSG_MAX])
{
	eg_nonfinite_t mode = EG_NONFINITE_NONE;
	double p = 0.0;
	uint64_t e = 0;
	int rc = 0;

	if (!*v)
		return eg__fail(err, EG_EINVAL, "nonfinite: empty value");
	if (!strncmp(v, "input:", 6)) {
		mode = EG_NONFINITE_INPUT;
		rc = eg_parse_double("nonfinite: input probability", v + 6, 0.0,
				     1.0, EG_NUM_SIGNED, &p, err,
				     err ? EG_ERRMSG_MAX : 0);
		if (!rc && !(p > 0.0))
			rc = eg__fail(err, EG_ERANGE,
				      "nonfinite: input probability 0 carries "
				      "none (use nonfinite=none)");
	} else if (!strncmp(v, "expert:", 7)) {
		mode = EG_NONFINITE_EXPERT;
		rc = eg_parse_u64("nonfinite: expert", v + 7, 0,
				  EG_EXPERTS_MAX - 1, EG_NUM_HEX, &e, err,
				  err ? EG_ERRMSG_MAX : 0);
	} else if (strcmp(v, "none")) {
		return eg__fail(err, EG_EINVAL,
				"nonfinite: unknown mode \"%.40s%s\" (none, "
				"input:P, expert:E)",
				v, strlen(v) > 40 ? "..." : "");
	}
	if (rc)
		return rc;
	w->nonfinite = mode;
	w->nonfinite_p = p;
	w->nonfinite_expert = (uint32_t)e;
	return 0;
}

int eg_nonfinite_check(const eg_workload_t *w, char err[EG_ERRMSG_MAX])
{
	if ((unsigned)w->nonfinite > EG_NONFINITE_EXPERT ||
	    (w->nonfinite == EG_NONFINITE_INPUT &&
	     !(w->nonfinite_p > 0.0 && w->nonfinite_p <= 1.0)))
		return eg__fail(err, EG_ERANGE,
				"nonfinite: input probability %g is outside "
				"(0, 1]",
				w->nonfinite_p);
	if (w->nonfinite == EG_NONFINITE_EXPERT &&
	    w->nonfinite_expert >= w->experts)
		return eg__fail(err, EG_EINVAL,
				"nonfinite: expert %" PRIu32
				" is not below experts=%" PRIu32,
				w->nonfinite_expert, w->experts);
	return 0;
}
