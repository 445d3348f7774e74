/* Many comparisons in one gate (docs/gates.md, "Many points"): a gate
 * over 30 points, each tested at alpha, flags one of them by chance more
 * often than not.  Holm's step-down keeps the chance of any false flag
 * (family-wise error) at alpha whatever the other points do;
 * Benjamini-Hochberg's step-up keeps the expected share of false flags
 * among the flagged at alpha, which on a run of unchanged code (no true
 * effect anywhere) is the same guarantee, and finds more of a slowdown
 * that touches many points. */
#include <stdlib.h>

#include "epgate/error.h"
#include "epgate/stats.h"

typedef struct eg__pi {
	double p;
	size_t i;
} eg__pi_t;

static int eg__cmp_p(const void *a, const void *b)
{
	const eg__pi_t *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

const char *eg_correction_name(eg_correction_t c)
{
	static const char *const n[] = {"holm", "bh", "none"};

	return (unsigned)c < 3 ? n[c] : "?";
}

int eg_stats_correct(const double *p, size_t n, double alpha, eg_correction_t c,
		     int *reject)
{
	eg__pi_t *s;
	size_t k;

	if ((!p && n) || (!reject && n) || !(alpha > 0 && alpha < 1) ||
	    (unsigned)c > EG_CORRECT_NONE)
		return EG_EINVAL;
	for (size_t i = 0; i < n; i++)
		reject[i] = 0;
	if (!n)
		return EG_OK;
	if (c == EG_CORRECT_NONE) {
		for (size_t i = 0; i < n; i++)
			reject[i] = p[i] <= alpha;
		return EG_OK;
	}
	if (!(s = malloc(n * sizeof(*s))))
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++)
		/* a p-value that is not a number rejects nothing */
		s[i] = (eg__pi_t){p[i] == p[i] ? p[i] : 2, i};
	qsort(s, n, sizeof(*s), eg__cmp_p);
	if (c == EG_CORRECT_HOLM) {
		/* step down: p_(k) <= alpha / (n - k), stop at the first
		 * that is not */
		for (k = 0; k < n && s[k].p <= alpha / (double)(n - k); k++)
			reject[s[k].i] = 1;
	} else {
		/* step up: the largest k with p_(k) <= k alpha / n, and
		 * every smaller one */
		size_t top = 0;

		for (k = 0; k < n; k++)
			if (s[k].p <= alpha * (double)(k + 1) / (double)n)
				top = k + 1;
		for (k = 0; k < top; k++)
			reject[s[k].i] = 1;
	}
	free(s);
	return EG_OK;
}
