/* One comparison for a whole gate (aggregate: geomean, docs/gates.md):
 * the geometric mean over its points of the change.  A slowdown of a
 * code path shows at every point that runs it; one point at a time, the
 * noise of one point (a launch on a busy core) hides 10% easily, while
 * the mean over 20 points averages the points' own noise away.  The unit
 * stays the launch: for each pass (one launch of every point) the mean
 * of the points' log launch medians is one value, and those values are
 * what the statistic resamples or ranks; so what a launch does to all
 * of its points at once (a busy machine for its length) is in the
 * spread, not averaged away.  Against a history the unit is the
 * campaign: each campaign's mean over the same points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

/* Is pass k one of p's launches?  Its index, or -1. */
static long eg__pass_at(const eg_point_t *p, uint32_t k)
{
	for (size_t i = 0; i < p->n_passes; i++)
		if (p->passes[i] == k)
			return (long)i;
	return -1;
}

/* The median of launch i of m (NAN when it has no samples). */
static double eg__launch_median(const eg_metric_t *m, size_t i)
{
	size_t off = 0;

	if (!m->launch_n || i >= m->n_launches || !m->launch_n[i])
		return NAN;
	for (size_t j = 0; j < i; j++)
		off += m->launch_n[j];
	return eg_stats_median(m->samples + off, m->launch_n[i]);
}

/* The passes every point has on one side, and per pass the mean of the
 * points' log launch medians, as a metric of one-sample launches. */
static int eg__side(const eg_point_t *const *p, const eg_metric_t *const *m,
		    size_t n, eg_metric_t *out, uint32_t *passes, size_t *np)
{
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	*np = 0;
	if (!n || !p[0]->passes)
		return 0;
	out->samples = malloc(p[0]->n_passes * sizeof(double));
	out->launch_n = malloc(p[0]->n_passes * sizeof(uint32_t));
	if (!out->samples || !out->launch_n)
		return EG_ENOMEM;
	for (size_t i = 0; i < p[0]->n_passes; i++) {
		uint32_t pass = p[0]->passes[i];
		double sum = 0;
		size_t j;

		for (j = 0; j < n; j++) {
			long at = eg__pass_at(p[j], pass);
			double v =
			    at < 0 ? NAN : eg__launch_median(m[j], (size_t)at);

			if (!(v > 0))
				break;
			sum += log(v);
		}
		if (j < n)
			continue; /* a pass some point lacks */
		out->samples[k] = exp(sum / (double)n);
		out->launch_n[k] = 1;
		passes[k++] = pass;
	}
	out->name = m[0]->name;
	out->n_samples = out->n_launches = k;
	out->s.n = k;
	out->s.median = k ? eg_stats_median(out->samples, k) : NAN;
	*np = k;
	return 0;
}

/* Keeps the launches of a whose pass b has too (in b's order: the same
 * passes on both sides, for a paired comparison). */
static void eg__common(eg_metric_t *a, uint32_t *pa, size_t *na,
		       const uint32_t *pb, size_t nb)
{
	size_t k = 0;

	for (size_t i = 0; i < *na; i++)
		for (size_t j = 0; j < nb; j++)
			if (pa[i] == pb[j]) {
				a->samples[k] = a->samples[i];
				pa[k++] = pa[i];
			}
	*na = a->n_samples = a->n_launches = a->s.n = k;
	a->s.median = k ? eg_stats_median(a->samples, k) : NAN;
}

/* Against one campaign (or the A arm of an A/B job), pass by pass. */
static int eg__passes(const eg__twin_t *t, size_t n, const eg_regress_opts_t *o,
		      eg_regress_out_t *out)
{
	const eg_point_t **bp = calloc(n, sizeof(*bp)),
			 **cp = calloc(n, sizeof(*cp));
	const eg_metric_t **bm = calloc(n, sizeof(*bm)),
			  **cm = calloc(n, sizeof(*cm));
	uint32_t *pb = NULL, *pc = NULL;
	eg_metric_t b = {0}, c = {0};
	size_t nbp = 0, ncp = 0;
	eg_regress_opts_t oo = *o;
	int rc = EG_ENOMEM;

	if (!bp || !cp || !bm || !cm)
		goto out;
	for (size_t j = 0; j < n; j++) {
		bp[j] = t[j].bp[0];
		bm[j] = t[j].bm[0];
		cp[j] = t[j].cp;
		cm[j] = t[j].cm;
	}
	pb = calloc(bp[0]->n_passes + 1, sizeof(*pb));
	pc = calloc(cp[0]->n_passes + 1, sizeof(*pc));
	if (!pb || !pc || (rc = eg__side(bp, bm, n, &b, pb, &nbp)) < 0 ||
	    (rc = eg__side(cp, cm, n, &c, pc, &ncp)) < 0)
		goto out;
	if (o->paired) {
		eg__common(&b, pb, &nbp, pc, ncp);
		eg__common(&c, pc, &ncp, pb, nbp);
	}
	if (nbp < 2 || ncp < 2) {
		eg__regress_init(out, nbp, ncp);
		snprintf(out->why, sizeof(out->why),
			 "the aggregate needs 2 launches of every point on "
			 "each side (%zu and %zu)",
			 nbp, ncp);
		rc = 0;
		goto out;
	}
	oo.min_reps = 2; /* the launches are the units */
	rc = eg_regress_compare(&b, &c, &oo, out);
out:
	free(b.samples);
	free(b.launch_n);
	free(c.samples);
	free(c.launch_n);
	free(pb);
	free(pc);
	free(bp);
	free(cp);
	free(bm);
	free(cm);
	return rc;
}

/* Against a history: each campaign's mean over the points. */
static int eg__campaigns(const eg__twin_t *t, size_t n, size_t nb,
			 const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double *x = calloc(nb, sizeof(*x)), y = 0, se = 0;

	if (!x)
		return EG_ENOMEM;
	eg__regress_init(out, nb, 1);
	for (size_t j = 0; j < n; j++) {
		double s = eg__log_se(t[j].cm);

		y += log(t[j].cm->s.median) / (double)n;
		se += s * s / (double)(n * n);
		for (size_t k = 0; k < nb; k++)
			x[k] += log(t[j].bm[k]->s.median) / (double)n;
	}
	eg__history_t(x, nb, y, sqrt(se), o, out);
	free(x);
	return 0;
}

int eg__aggregate(const eg__twin_t *t, size_t n, size_t nb, int history,
		  const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	for (size_t j = 0; j < n; j++)
		for (size_t k = 0; k < nb; k++)
			if (!t[j].bm[k])
				return EG_EINVAL; /* the caller keeps complete
						     twins only */
	if (history && nb >= EG_HISTORY_MIN)
		return eg__campaigns(t, n, nb, o, out);
	if (nb != 1) {
		eg__regress_init(out, nb, 1);
		snprintf(out->why, sizeof(out->why),
			 "%zu campaign(s) in the history: the aggregate needs "
			 "%d, or one baseline",
			 nb, EG_HISTORY_MIN);
		return 0;
	}
	return eg__passes(t, n, o, out);
}
