/* Launches of a point (docs/results-v1.md, "Launches"): the orchestrator
 * measures each point in several launches and adds each one's point to
 * the one it holds and writes.  Samples keep their order and their launch
 * counts, so the statistics can resample launches first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "results_int.h"

eg_samples_t eg_metric_samples(const eg_metric_t *m)
{
	return (eg_samples_t){m->samples, m->n_samples, m->launch_n,
			      m->launch_n ? m->n_launches : 0};
}

size_t eg_point_launches(const eg_point_t *p)
{
	return p->passes ? p->n_passes : 1;
}

/* m with one more launch of c samples from x (x NULL: a launch without
 * this metric, count 0).  L: launches m had before. */
static int eg__append(eg_metric_t *m, size_t L, const double *x, size_t c)
{
	uint32_t *ln = realloc(m->launch_n, (L + 1) * sizeof(*ln));
	double *s;

	if (!ln)
		return EG_ENOMEM;
	m->launch_n = ln;
	if (!m->n_launches && L) {
		/* a metric without counts so far: all in the first launch
		 * it was seen in, zeros before that are set by the caller */
		for (size_t i = 0; i < L; i++)
			ln[i] = 0;
		ln[L - 1] = (uint32_t)m->n_samples;
	}
	ln[L] = (uint32_t)c;
	m->n_launches = L + 1;
	if (!c)
		return EG_OK;
	s = realloc(m->samples, (m->n_samples + c) * sizeof(*s));
	if (!s)
		return EG_ENOMEM;
	memcpy(s + m->n_samples, x, c * sizeof(*s));
	m->samples = s;
	m->n_samples += c;
	m->s.n = m->n_samples;
	return EG_OK;
}

/* A summary metric of one more launch: kept when equal (counts are the
 * same in every launch), else the mean over the launches (model times
 * move a little with each launch's raw phase). */
static void eg__summary_add(eg_metric_t *m, const eg_metric_t *a, size_t L)
{
	if (m->s.median != a->s.median)
		m->s.median =
		    (m->s.median * (double)L + a->s.median) / (double)(L + 1);
	m->s.n += a->s.n;
	m->s.ci_lo = m->s.ci_hi = m->s.p10 = m->s.p90 = m->s.cv = NAN;
}

static eg_metric_t *eg__find(eg_point_t *p, const char *name)
{
	for (size_t i = 0; i < p->n_metrics; i++)
		if (!strcmp(p->metrics[i].name, name))
			return &p->metrics[i];
	return NULL;
}

/* A metric of add that acc does not have yet: moved over, with zero
 * counts for the launches before. */
static int eg__adopt(eg_point_t *acc, eg_metric_t *a, size_t L)
{
	eg_metric_t *t = realloc(acc->metrics,
				 (acc->n_metrics + 1) * sizeof(*t)),
		    *m;

	if (!t)
		return EG_ENOMEM;
	acc->metrics = t;
	m = &t[acc->n_metrics];
	*m = *a;
	memset(a, 0, sizeof(*a));
	acc->n_metrics++;
	if (!m->n_samples)
		return EG_OK;
	free(m->launch_n);
	if (!(m->launch_n = calloc(L + 1, sizeof(*m->launch_n))))
		return EG_ENOMEM;
	m->launch_n[L] = (uint32_t)m->n_samples;
	m->n_launches = L + 1;
	return EG_OK;
}

/* Is a one of the " | "-joined values of b? */
static int eg__has_value(const char *b, const char *a)
{
	size_t n = strlen(a);

	for (const char *s = b; s;) {
		const char *e = strstr(s, " | ");
		size_t k = e ? (size_t)(e - s) : strlen(s);

		if (k == n && !strncmp(s, a, n))
			return 1;
		s = e ? e + 3 : NULL;
	}
	return 0;
}

/* The evidence of acc with add's: a value that differs is joined. */
static int eg__evidence(eg_point_t *acc, const eg_point_t *add)
{
	const char *k;
	json_t *v;

	if (!add->evidence)
		return EG_OK;
	if (!acc->evidence && !(acc->evidence = json_object()))
		return EG_ENOMEM;
	json_object_foreach(add->evidence, k, v)
	{
		json_t *o = json_object_get(acc->evidence, k);
		const char *a = json_string_value(v), *b;
		char *j;
		int rc;

		if (!o) {
			json_object_set(acc->evidence, k, v);
			continue;
		}
		b = json_string_value(o);
		if (!a || !b || eg__has_value(b, a))
			continue;
		if (!(j = malloc(strlen(a) + strlen(b) + 4)))
			return EG_ENOMEM;
		strcpy(j, b);
		strcat(j, " | ");
		strcat(j, a);
		rc = json_object_set_new(acc->evidence, k, json_string(j));
		free(j);
		if (rc)
			return EG_ENOMEM;
	}
	return EG_OK;
}

/* Every measured metric of p summarized anew over all its launches
 * (the summary a launch brought describes that launch alone), with the
 * spread inside and between them. */
static int eg__resummarize(eg_point_t *p)
{
	for (size_t i = 0; i < p->n_metrics; i++) {
		eg_metric_t *m = &p->metrics[i];
		eg_samples_t x = eg_metric_samples(m);
		int rc;

		if (!m->n_samples)
			continue;
		if ((rc = eg_metric_summary(p->id, m, &m->s)) < 0)
			return rc;
		m->cv_within = m->cv_between = NAN;
		if (m->launch_n && (rc = eg_stats_launch_spread(
					&x, &m->cv_within, &m->cv_between)) < 0)
			return rc;
	}
	return EG_OK;
}

/* The first launch: add becomes acc, with its launch records. */
static int eg__first(eg_point_t *acc, eg_point_t *add, uint32_t pass,
		     int remeasure)
{
	*acc = *add;
	memset(add, 0, sizeof(*add));
	if (!(acc->passes = malloc(sizeof(*acc->passes))))
		return EG_ENOMEM;
	acc->passes[0] = pass;
	acc->n_passes = 1;
	acc->remeasured = remeasure ? 1 : 0;
	for (size_t i = 0; i < acc->n_metrics; i++) {
		eg_metric_t *m = &acc->metrics[i];

		if (!m->n_samples)
			continue;
		free(m->launch_n);
		if (!(m->launch_n = malloc(sizeof(*m->launch_n))))
			return EG_ENOMEM;
		m->launch_n[0] = (uint32_t)m->n_samples;
		m->n_launches = 1;
	}
	return eg__resummarize(acc);
}

int eg_point_add_launch(eg_point_t *acc, eg_point_t *add, uint32_t pass,
			int remeasure)
{
	size_t L = acc->n_passes;
	uint32_t *ps;
	int rc;

	if (!acc || !add || !add->id || (acc->id && strcmp(acc->id, add->id)) ||
	    (L && pass <= acc->passes[L - 1]))
		return EG_EINVAL;
	if (!acc->id)
		return eg__first(acc, add, pass, remeasure);
	for (size_t i = 0; i < add->n_metrics; i++) {
		eg_metric_t *a = &add->metrics[i], *m = eg__find(acc, a->name);

		if (!m)
			rc = eg__adopt(acc, a, L);
		else if (m->n_samples || a->n_samples)
			rc = eg__append(m, L, a->samples, a->n_samples);
		else
			eg__summary_add(m, a, L), rc = EG_OK;
		if (rc < 0)
			return rc;
	}
	/* metrics this launch lacks: a count of 0 */
	for (size_t i = 0; i < acc->n_metrics; i++) {
		eg_metric_t *m = &acc->metrics[i];

		if (m->n_samples && m->n_launches == L &&
		    (rc = eg__append(m, L, NULL, 0)) < 0)
			return rc;
	}
	if ((rc = eg__evidence(acc, add)) < 0)
		return rc;
	if (!(ps = realloc(acc->passes, (L + 1) * sizeof(*ps))))
		return EG_ENOMEM;
	acc->passes = ps;
	ps[L] = pass;
	acc->n_passes = L + 1;
	acc->remeasured += remeasure ? 1 : 0;
	eg_point_fini(add);
	return eg__resummarize(acc);
}
