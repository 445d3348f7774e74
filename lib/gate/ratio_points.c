/* Regression of a ratio of two arms (ratio: [a2a, dense] on a regression
 * gate, docs/gates.md): each numerator point and its partner of the same
 * campaign become one point whose samples are the launch-by-launch
 * ratios of their medians.  Both arms ran in the same launches, so what
 * a launch, or a whole campaign, did to the machine (a build beside it
 * made everything 3x slower) divides out; what is left is what one arm
 * changed against the other.  The regression rule then judges these
 * points like any others (history, aggregate, statistics). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

/* The median of launch i of m (NAN when it has none). */
static double eg__lmed(const eg_metric_t *m, size_t i)
{
	size_t off = 0;

	if (!m->launch_n)
		return i ? NAN : m->s.median;
	if (i >= m->n_launches || !m->launch_n[i])
		return NAN;
	for (size_t j = 0; j < i; j++)
		off += m->launch_n[j];
	return eg_stats_median(m->samples + off, m->launch_n[i]);
}

/* The launch of p at pass k, or -1; a point of one launch is pass 0. */
static long eg__at(const eg_point_t *p, uint32_t k)
{
	if (!p->passes)
		return k ? -1 : 0;
	for (size_t i = 0; i < p->n_passes; i++)
		if (p->passes[i] == k)
			return (long)i;
	return -1;
}

/* The ratio point of p over q (*o zeroed first); 0 with o->id NULL when
 * they share no launch. */
static int eg__ratio_point(const eg_gate_t *g, const char *label,
			   const eg_point_t *p, const eg_point_t *q,
			   eg_point_t *o)
{
	const eg_metric_t *mp = eg_point_metric(p, g->metric),
			  *mq = eg_point_metric(q, g->metric);
	size_t L = p->passes ? p->n_passes : 1, k = 0;
	eg_metric_t *m = calloc(1, sizeof(*m));
	eg_samples_t s;

	memset(o, 0, sizeof(*o));
	if (!m)
		return EG_ENOMEM;
	m->samples = calloc(L, sizeof(double));
	m->launch_n = calloc(L, sizeof(uint32_t));
	o->passes = calloc(L, sizeof(uint32_t));
	m->name = strdup(g->metric);
	o->metrics = m;
	o->n_metrics = 1;
	if (!m->samples || !m->launch_n || !o->passes || !m->name)
		return EG_ENOMEM;
	for (size_t i = 0; i < L; i++) {
		uint32_t pass = p->passes ? p->passes[i] : 0;
		long j = eg__at(q, pass);
		double r =
		    j < 0 ? NAN : eg__lmed(mp, i) / eg__lmed(mq, (size_t)j);

		if (!isfinite(r) || !(r > 0))
			continue;
		m->samples[k] = r;
		m->launch_n[k] = 1;
		o->passes[k++] = pass;
	}
	m->n_samples = m->n_launches = o->n_passes = k;
	if (!k)
		return 0; /* o->id NULL: no point */
	s = eg_metric_samples(m);
	if (eg_stats_summarize_launches(&s, 7, &m->s) < 0)
		return EG_ENOMEM;
	o->id = strdup(p->id);
	o->suite = strdup(p->suite);
	o->arm = strdup(label);
	o->axes = json_deep_copy(p->axes);
	/* the denominator, to be measured again with it */
	o->evidence = json_pack("{s:s}", "over", q->id);
	return o->id && o->suite && o->arm && o->axes && o->evidence
		   ? 0
		   : EG_ENOMEM;
}

/* The ratio points of one campaign file. */
static int eg__ratio_file(const eg_gate_t *g, const char *label,
			  const eg_results_t *f, eg_results_t *o)
{
	memset(o, 0, sizeof(*o));
	o->path = strdup(f->path ? f->path : "");
	o->context = json_incref(f->context);
	o->history = f->history;
	o->recorded = f->recorded;
	o->revision = f->revision; /* an older file's ratios are older too */
	o->points = calloc(f->n_points + 1, sizeof(*o->points));
	if (!o->path || !o->points)
		return EG_ENOMEM;
	for (size_t i = 0; i < f->n_points; i++) {
		const eg_point_t *p = &f->points[i], *q = NULL;
		int rc;

		if (strcmp(p->arm, g->ratio[0]) ||
		    !eg_point_metric(p, g->metric))
			continue;
		for (size_t j = 0; j < f->n_points && !q; j++) {
			const eg_point_t *c = &f->points[j];

			if (!strcmp(c->arm, g->ratio[1]) &&
			    !strcmp(c->suite, p->suite) &&
			    eg_point_metric(c, g->metric) &&
			    eg__gate_axes_agree(p, c, json_equal))
				q = c;
		}
		if (!q)
			continue;
		rc = eg__ratio_point(g, label, p, q, &o->points[o->n_points]);
		if (rc < 0 || !o->points[o->n_points].id) {
			eg_point_fini(&o->points[o->n_points]);
			if (rc < 0)
				return rc;
			continue;
		}
		o->n_points++;
	}
	return 0;
}

int eg__ratio_files(const eg_gate_t *g, const char *label,
		    const eg_results_t *in, size_t n, eg_results_t **out)
{
	int rc = 0;

	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return EG_ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		rc = eg__ratio_file(g, label, &in[i], &(*out)[i]);
	return rc;
}
