/* What a gate says of a results file an older epgate measured
 * (docs/results-v1.md, "Older files"): where such a file lacks what a
 * rule needs, the verdict is not a failure of the code under test but
 * of the record, so the rule says "FILE: recorded by an older epgate:
 * FIELD missing; re-record" and leaves the gate inconclusive. */
#include <stdio.h>

#include "gate_int.h"

void eg__older_say(char *buf, size_t len, const eg_results_t *f,
		   const char *field)
{
	snprintf(buf, len,
		 "%s: recorded by an older epgate: %s missing; "
		 "re-record",
		 f->path ? f->path : "(results)", field);
}

const eg_results_t *eg__gate_file_of(const eg_gate_data_t *d,
				     const eg_point_t *p)
{
	const eg_results_t *sets[2] = {d->cur, d->base};
	size_t ns[2] = {d->n_cur, d->base ? d->n_base : 0};

	for (int s = 0; p && s < 2; s++)
		for (size_t f = 0; f < ns[s]; f++)
			if (p >= sets[s][f].points &&
			    p < sets[s][f].points + sets[s][f].n_points)
				return &sets[s][f];
	return NULL;
}

/* An older file's point measured in one launch, the rank tests' unit. */
static const eg_results_t *eg__one_launch(const eg_gate_data_t *d,
					  const eg_point_t *p)
{
	const eg_results_t *f = eg__gate_file_of(d, p);

	return f && eg_results_older(f) && !p->passes ? f : NULL;
}

int eg__older_launches(const eg_gate_data_t *d, const eg_point_t *cur,
		       const eg_point_t *const *bp, size_t nb, char *why,
		       size_t len)
{
	const eg_results_t *f = eg__one_launch(d, cur);

	for (size_t k = 0; !f && k < nb; k++)
		f = bp[k] ? eg__one_launch(d, bp[k]) : NULL;
	if (!f)
		return 0;
	eg__older_say(why, len, f, "launches");
	return 1;
}
