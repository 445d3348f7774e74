/* One comparison for a whole gate (aggregate: median or geomean,
 * docs/gates.md): the typical change over its points.  A slowdown of a
 * code path shows at every point that runs it; one point at a time, the
 * noise of one point (a launch on a busy core) hides 10% easily, while
 * over 20 points the points' own noise averages out.  Each point's launch
 * medians are put on one scale, log(median / the point's reference), so
 * that points of 0.5 ms and 5 ms count alike; then
 *   median:  every point's value of a launch is a sample of that launch
 *            (robust: one point's wild launch moves nothing);
 *   geomean: the mean over the points is the launch's one value.
 * The unit stays the launch (a pass: one launch of every point): the
 * bootstrap draws passes, then (median) points inside them; the rank
 * tests take one value per pass.  For an A/B pair the value is the
 * launch's ratio B/A, point by point: what the launch did to both arms
 * cancels.  Against a history the unit is the campaign: each campaign's
 * median (or mean) over the points of log(median / the history's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "gate_int.h"

/* Is pass k one of p's launches?  Its index, or -1. */
static long eg__pass_at(const eg_point_t *p, uint32_t k)
{
	for (size_t i = 0; p->passes && i < p->n_passes; i++)
		if (p->passes[i] == k)
			return (long)i;
	return -1;
}

/* The log median of launch i of m (NAN when it has no samples). */
static double eg__launch_log(const eg_metric_t *m, long i)
{
	size_t off = 0;

	if (i < 0 || !m->launch_n || (size_t)i >= m->n_launches ||
	    !m->launch_n[i])
		return NAN;
	for (long j = 0; j < i; j++)
		off += m->launch_n[j];
	return log(eg_stats_median(m->samples + off, m->launch_n[i]));
}

/* What one side holds: its points, metrics, the passes to use. */
typedef struct eg__side {
	const eg_point_t **p;
	const eg_metric_t **m;
	const double *ref; /* per point */
	/* an A/B pair: the other arm's side; zero: this is A (its value
	 * is 0 where both arms have the launch) */
	const struct eg__side *other;
	int zero;
} eg__side_t;

/* The value of point j at pass k (log, minus its reference, or minus
 * its twin's value at the same pass); NAN when missing. */
static double eg__value(const eg__side_t *s, size_t j, uint32_t k)
{
	double v = eg__launch_log(s->m[j], eg__pass_at(s->p[j], k)), w;

	if (!s->other)
		return v - s->ref[j];
	w = eg__launch_log(s->other->m[j], eg__pass_at(s->other->p[j], k));
	if (s->zero)
		return isfinite(v) && isfinite(w) ? 0 : NAN;
	return v - w;
}

/* The synthetic metric of one side: one launch per pass every point has
 * (in p[0]'s order), its samples the points' values (median) or their
 * mean (geomean), as exp() so that the ratio statistics apply. */
static int eg__units(const eg__side_t *s, size_t n, int median, eg_metric_t *o)
{
	size_t L = s->p[0]->passes ? s->p[0]->n_passes : 0, k = 0;

	memset(o, 0, sizeof(*o));
	o->samples = malloc((L * n + 1) * sizeof(double));
	o->launch_n = calloc(L + 1, sizeof(uint32_t));
	if (!o->samples || !o->launch_n)
		return EG_ENOMEM;
	for (size_t i = 0; i < L; i++) {
		uint32_t pass = s->p[0]->passes[i];
		double sum = 0, *x = o->samples + o->n_samples;
		size_t j;

		for (j = 0; j < n; j++) {
			double v = eg__value(s, j, pass);

			if (!isfinite(v))
				break;
			x[j] = v;
			sum += v;
		}
		if (j < n)
			continue; /* a pass some point lacks */
		if (median) {
			for (j = 0; j < n; j++)
				x[j] = exp(x[j]);
		} else {
			x[0] = exp(sum / (double)n);
		}
		o->launch_n[k++] = median ? (uint32_t)n : 1;
		o->n_samples += median ? n : 1;
	}
	o->name = s->m[0]->name;
	o->n_launches = k;
	o->s.n = o->n_samples;
	o->s.median =
	    o->n_samples ? eg_stats_median(o->samples, o->n_samples) : NAN;
	o->s.ci_lo = o->s.ci_hi = NAN;
	return 0;
}

/* Against one campaign (or the A arm of an A/B job), pass by pass. */
static int eg__passes(const eg__twin_t *t, size_t n, int median,
		      const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	const eg_point_t **bp = calloc(n, sizeof(*bp)),
			 **cp = calloc(n, sizeof(*cp));
	const eg_metric_t **bm = calloc(n, sizeof(*bm)),
			  **cm = calloc(n, sizeof(*cm));
	double *ref = calloc(n, sizeof(*ref));
	eg_metric_t b = {0}, c = {0};
	eg_regress_opts_t oo = *o;
	int rc = EG_ENOMEM;

	if (!bp || !cp || !bm || !cm || !ref)
		goto out;
	for (size_t j = 0; j < n; j++) {
		bp[j] = t[j].bp[0];
		bm[j] = t[j].bm[0];
		cp[j] = t[j].cp;
		cm[j] = t[j].cm;
		ref[j] = log(bm[j]->s.median);
	}
	{
		eg__side_t sb = {bp, bm, ref, NULL, 0},
			   sc = {cp, cm, ref, NULL, 0};

		if (o->paired) { /* B/A per launch; A's side is 1 */
			sc.other = &sb;
			sb.other = &sc;
			sb.zero = 1;
		}
		if ((rc = eg__units(&sb, n, median, &b)) < 0 ||
		    (rc = eg__units(&sc, n, median, &c)) < 0)
			goto out;
	}
	if (b.n_launches < 2 || c.n_launches < 2 ||
	    (o->paired && b.n_launches != c.n_launches)) {
		eg__regress_init(out, b.n_launches, c.n_launches);
		snprintf(out->why, sizeof(out->why),
			 "the aggregate needs 2 launches of every point on "
			 "each side (%zu and %zu)",
			 b.n_launches, c.n_launches);
		rc = 0;
		goto out;
	}
	oo.min_reps = 2; /* the launches are the units */
	rc = eg_regress_compare(&b, &c, &oo, out);
out:
	EG_FREE(b.samples, b.launch_n, c.samples, c.launch_n, bp, cp, bm, cm,
		ref);
	return rc;
}

static int eg__cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median (or mean) of x[0..n). */
static double eg__center(double *x, size_t n, int median)
{
	double s = 0;

	if (median) {
		qsort(x, n, sizeof(*x), eg__cmp_d);
		return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	}
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* Against a history: each campaign's center over the points of
 * log(median / the history's mean of the point's log medians). */
static int eg__campaigns(const eg__twin_t *t, size_t n, size_t nb, int median,
			 const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double *x = calloc(nb, sizeof(*x)), *ref = calloc(n, sizeof(*ref));
	double *v = calloc(n, sizeof(*v)), y, se = 0;

	if (!x || !ref || !v) {
		EG_FREE(x, ref, v);
		return EG_ENOMEM;
	}
	eg__regress_init(out, nb, 1);
	for (size_t j = 0; j < n; j++) {
		double s = eg__gate_log_se(t[j].cm);

		for (size_t k = 0; k < nb; k++)
			ref[j] += log(t[j].bm[k]->s.median) / (double)nb;
		se += s * s / (double)(n * n);
	}
	for (size_t k = 0; k < nb; k++) {
		for (size_t j = 0; j < n; j++)
			v[j] = log(t[j].bm[k]->s.median) - ref[j];
		x[k] = eg__center(v, n, median);
	}
	for (size_t j = 0; j < n; j++)
		v[j] = log(t[j].cm->s.median) - ref[j];
	y = eg__center(v, n, median);
	eg__gate_history_t(x, nb, y, sqrt(se), o, out);
	EG_FREE(x, ref, v);
	return 0;
}

int eg__aggregate(const eg__twin_t *t, size_t n, size_t nb, int history,
		  int median, const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	for (size_t j = 0; j < n; j++)
		for (size_t k = 0; k < nb; k++)
			if (!t[j].bm[k])
				return EG_EINVAL; /* the caller keeps complete
						     twins only */
	if (history && nb >= EG_HISTORY_MIN)
		return eg__campaigns(t, n, nb, median, o, out);
	if (nb != 1) {
		eg__regress_init(out, nb, 1);
		snprintf(out->why, sizeof(out->why),
			 "%zu campaign(s) in the history: the aggregate needs "
			 "%d, or one baseline",
			 nb, EG_HISTORY_MIN);
		return 0;
	}
	return eg__passes(t, n, median, o, out);
}
