/* Change points of a series (docs/gates.md, "History"): where the level of
 * a metric moved between campaigns, for the report's reading of a
 * history.  E-divisive as MongoDB's Otava uses it (Matteson and James
 * 2014): the split of a segment that maximizes the energy distance
 * between its two sides, kept when a permutation test (the series
 * shuffled, the best split's statistic recomputed) finds it significant,
 * then the same on each side (binary segmentation: the simpler search,
 * enough for series of tens of campaigns).  Distances |x - y| (alpha 1):
 * no assumption about the shape of the noise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/stats.h"

/* The best split of x[0..n) with both sides >= m: its index and energy
 * statistic (-1 when none). */
static double eg__best(const double *x, size_t n, size_t m, size_t *at)
{
	double a = 0, b = 0, c = 0, best = -1;

	/* tau = 1 first: left {x0}, right the rest */
	for (size_t j = 1; j < n; j++) {
		a += fabs(x[0] - x[j]);
		for (size_t k = j + 1; k < n; k++)
			c += fabs(x[j] - x[k]);
	}
	for (size_t t = 1; t + 1 <= n; t++) {
		/* left x[0..t), right x[t..n) */
		double nl = (double)t, nr = (double)(n - t), q;

		if (t >= m && n - t >= m) {
			q = 2 * a / (nl * nr) -
			    (t > 1 ? b / (nl * (nl - 1) / 2) : 0) -
			    (n - t > 1 ? c / (nr * (nr - 1) / 2) : 0);
			q *= nl * nr / (double)n;
			if (q > best) {
				best = q;
				*at = t;
			}
		}
		if (t + 1 == n)
			break;
		/* move x[t] from the right to the left */
		for (size_t i = 0; i < t; i++) {
			double d = fabs(x[i] - x[t]);

			a -= d;
			b += d;
		}
		for (size_t j = t + 1; j < n; j++) {
			double d = fabs(x[t] - x[j]);

			a += d;
			c -= d;
		}
	}
	return best;
}

/* The permutation p-value of the best split of x[0..n). */
static double eg__perm_p(const double *x, size_t n, size_t m, double q,
			 unsigned perms, eg_rng_t *g, double *buf)
{
	unsigned ge = 0;
	size_t at;

	memcpy(buf, x, n * sizeof(*buf));
	for (unsigned r = 0; r < perms; r++) {
		for (size_t i = n; i > 1; i--) {
			size_t j = eg_rng_below(g, i);
			double t = buf[i - 1];

			buf[i - 1] = buf[j];
			buf[j] = t;
		}
		ge += eg__best(buf, n, m, &at) >= q;
	}
	return (ge + 1.0) / (perms + 1.0);
}

static int eg__cmp_cp(const void *a, const void *b)
{
	size_t x = ((const eg_changepoint_t *)a)->at;
	size_t y = ((const eg_changepoint_t *)b)->at;

	return (x > y) - (x < y);
}

int eg_stats_changepoints(const double *x, size_t n, size_t min_size,
			  double alpha, unsigned perms, uint64_t seed,
			  eg_changepoint_t *out, size_t max, size_t *n_out)
{
	size_t lo[64], hi[64], top = 0, at = 0;
	double *buf;
	eg_rng_t *g;

	*n_out = 0;
	if (!x || !out || !min_size || !(alpha > 0 && alpha < 1) || !perms)
		return EG_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return EG_ERANGE;
	buf = malloc((n ? n : 1) * sizeof(*buf));
	g = eg_rng_new(seed);
	if (!buf || !g) {
		free(buf);
		eg_rng_free(g);
		return EG_ENOMEM;
	}
	lo[0] = 0;
	hi[0] = n;
	top = 1;
	while (top && *n_out < max) {
		size_t a = lo[--top], b = hi[top], len = b - a;
		double q, p;

		if (len < 2 * min_size ||
		    (q = eg__best(x + a, len, min_size, &at)) <= 0)
			continue;
		p = eg__perm_p(x + a, len, min_size, q, perms, g, buf);
		if (p > alpha)
			continue;
		out[(*n_out)++] = (eg_changepoint_t){a + at, p};
		if (top + 2 <= 64) {
			lo[top] = a;
			hi[top++] = a + at;
			lo[top] = a + at;
			hi[top++] = b;
		}
	}
	qsort(out, *n_out, sizeof(*out), eg__cmp_cp);
	free(buf);
	eg_rng_free(g);
	return EG_OK;
}
