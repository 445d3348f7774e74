/* After `epgate bench ab`: what the per-point gate could see at each
 * point (lib/campaign/sweep.h, eg_bench_ab_mde). Per launch k, B's change
 * against A at a point is r_k = log(median_B,k / median_A,k) (the two arms
 * ran in the same launch, step by step); over L launches the change has
 * a standard error s / sqrt(L). The per-point gate fails B when the
 * change is above min_effect with confidence, corrected by Holm over the
 * m points (its first threshold alpha / m), so with this spread a
 * slowdown is caught 95% of the time from
 *   MDE95 = exp(log(1 + min_effect) + (z(1 - alpha/m) + z(0.95)) s/sqrt(L))
 * - 1 (effect: interval); with effect: estimate (the default) it fails B
 * when the change is worse than none with that confidence and its
 * estimate beyond min_effect, so from
 *   MDE95 = exp(max((z(1 - alpha/m) + z(0.95)) s/sqrt(L),
 *                   log(1 + min_effect) + z(0.95) s/sqrt(L))) - 1.
 * A normal approximation of the gate's bootstrap; the calibration
 * (docs/gates.md) and suites/gates/ab-power.sh measure the gates
 * themselves. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "epgate/stats.h"
#include "lib/campaign/sweep.h"

#define EG__LAUNCHES_MAX 256

/* Launch k's median of m, for k < *L (the launches of the metric). */
static void eg__launch_medians(const eg_metric_t *m, double *med, size_t *L)
{
	size_t off = 0, n = m->launch_n ? m->n_launches : 1;

	*L = 0;
	for (size_t k = 0; k < n && k < EG__LAUNCHES_MAX; k++) {
		size_t c = m->launch_n ? m->launch_n[k] : m->n_samples;

		if (c && off + c <= m->n_samples)
			med[(*L)++] = eg_stats_median(m->samples + off, c);
		off += c;
	}
}

/* A's point with the axes of B's point p, or NULL. */
static const eg_point_t *eg__twin(const eg_results_t *r, const char *a,
				  const eg_point_t *p)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (!strcmp(r->points[i].arm, a) &&
		    json_equal(r->points[i].axes, p->axes))
			return &r->points[i];
	return NULL;
}

/* One row: the change (median over launches), its spread, the MDE. */
static void eg__row(FILE *f, const char *metric, const eg_point_t *pa,
		    const eg_point_t *pb, double z, double min_effect,
		    int estimate)
{
	const eg_metric_t *ma = eg_point_metric(pa, metric);
	const eg_metric_t *mb = eg_point_metric(pb, metric);
	double a[EG__LAUNCHES_MAX], b[EG__LAUNCHES_MAX], r[EG__LAUNCHES_MAX];
	size_t la, lb, L;
	double sd, mde;

	if (!ma || !mb || !ma->n_samples || !mb->n_samples)
		return;
	eg__launch_medians(ma, a, &la);
	eg__launch_medians(mb, b, &lb);
	L = la < lb ? la : lb;
	for (size_t k = 0; k < L; k++)
		r[k] = log(b[k] / a[k]);
	if (L < 2) {
		fprintf(f, "  %-12s %-40s %8zu %+7.1f%% %7s %7s\n", metric,
			pb->id, L, L ? 100 * expm1(r[0]) : NAN, "-", "-");
		return;
	}
	sd = gsl_stats_sd(r, 1, L);
	mde = expm1(log1p(min_effect) + z * sd / sqrt((double)L));
	if (estimate)
		mde = expm1(
		    fmax(z * sd / sqrt((double)L),
			 log1p(min_effect) + gsl_cdf_ugaussian_Pinv(0.95) * sd /
						 sqrt((double)L)));
	fprintf(f, "  %-12s %-40s %8zu %+7.1f%% %6.1f%% %6.1f%%\n", metric,
		pb->id, L, 100 * expm1(eg_stats_median(r, L)), 100 * sd,
		100 * mde);
}

void eg_bench_ab_mde(FILE *f, const char *results, const eg_bench_run_opts_t *o,
		     const eg_bench_ab_opts_t *a)
{
	eg_results_t r;
	char err[512];
	size_t m = 0;
	double z;

	if (!results || eg_results_read(&r, results, err, sizeof(err)) < 0)
		return;
	for (size_t i = 0; i < r.n_points; i++)
		m += !strcmp(r.points[i].arm, o->ab[1]);
	if (!m) {
		eg_results_free(&r);
		return;
	}
	z = gsl_cdf_ugaussian_Pinv(1 - a->alpha / (double)m) +
	    gsl_cdf_ugaussian_Pinv(0.95);
	fprintf(f,
		"epgate bench ab: per point, B against A launch by launch, and "
		"the slowdown the per-point gate catches 95%% of the time with "
		"this job's spread (MDE95: Holm over %zu point(s) at alpha %g, "
		"min_effect %g%% on the %s; a normal approximation)\n",
		m, a->alpha, 100 * a->min_effect,
		a->effect && !strcmp(a->effect, "interval") ? "interval"
							    : "estimate");
	fprintf(f, "  %-12s %-40s %8s %8s %7s %7s\n", "metric", "point",
		"launches", "change", "sd", "MDE95");
	for (size_t q = 0; q < a->n_metrics; q++)
		for (size_t i = 0; i < r.n_points; i++) {
			const eg_point_t *pb = &r.points[i], *pa;

			if (strcmp(pb->arm, o->ab[1]) ||
			    !(pa = eg__twin(&r, o->ab[0], pb)))
				continue;
			eg__row(f, a->metric[q], pa, pb, z, a->min_effect,
				!a->effect || !strcmp(a->effect, "estimate"));
		}
	fflush(f);
	eg_results_free(&r);
}
