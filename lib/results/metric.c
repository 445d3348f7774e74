/* One metric object of a results point, read and validated
 * (docs/results-v1.md): the summary, the samples, their launches, and
 * the point's launch records.  What cannot be judged is refused here,
 * with its JSON path, before any gate sees it: a number that is not
 * finite, a negative value of a quantity that cannot be negative (every
 * metric the schema knows), a summary that does not describe its
 * samples or has none. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "results_int.h"

/* Optional finite number member (NAN when absent). */
static int eg__json_num(json_t *o, const char *key, const char *p, double *out,
			eg__rerr_t *e)
{
	json_t *v = json_object_get(o, key);
	char q[320];

	*out = NAN;
	if (!v)
		return 0;
	eg__results_fmt(q, sizeof(q), "%s.%s", p, key);
	if (!json_is_number(v))
		return eg__results_rbad(e, q, "expected a number");
	*out = json_number_value(v);
	if (!isfinite(*out))
		return eg__results_rbad(e, q, "not a finite number");
	return 0;
}

static int eg__samples(json_t *a, const char *p, eg_metric_t *m, eg__rerr_t *e)
{
	char q[320];
	size_t i;
	json_t *v;

	eg__results_fmt(q, sizeof(q), "%s.samples", p);
	if (!json_is_array(a) || !json_array_size(a))
		return eg__results_rbad(
		    e, q, "expected a non-empty array of numbers");
	m->n_samples = json_array_size(a);
	m->samples = malloc(m->n_samples * sizeof(*m->samples));
	if (!m->samples)
		return EG_ENOMEM;
	json_array_foreach(a, i, v)
	{
		eg__results_fmt(q, sizeof(q), "%s.samples[%zu]", p, i);
		if (!json_is_number(v))
			return eg__results_rbad(e, q, "expected a number");
		m->samples[i] = json_number_value(v);
		if (!isfinite(m->samples[i]))
			return eg__results_rbad(e, q, "not a finite number");
	}
	return 0;
}

/* "launches": samples per launch, integers >= 0 adding up to n. */
static int eg__launch_counts(json_t *a, const char *p, eg_metric_t *m,
			     eg__rerr_t *e)
{
	char q[320];
	size_t i, sum = 0;
	json_t *v;

	eg__results_fmt(q, sizeof(q), "%s.launches", p);
	if (!m->samples)
		return eg__results_rbad(e, q, "launch counts without samples");
	if (!json_is_array(a) || !json_array_size(a))
		return eg__results_rbad(e, q,
					"expected a non-empty array of counts");
	m->n_launches = json_array_size(a);
	m->launch_n = calloc(m->n_launches, sizeof(*m->launch_n));
	if (!m->launch_n)
		return EG_ENOMEM;
	json_array_foreach(a, i, v)
	{
		json_int_t c = json_is_integer(v) ? json_integer_value(v) : -1;

		if (c < 0 || c > 0x7fffffff) {
			eg__results_fmt(q, sizeof(q), "%s.launches[%zu]", p, i);
			return eg__results_rbad(e, q,
						"expected an integer >= 0");
		}
		m->launch_n[i] = (uint32_t)c;
		sum += (size_t)c;
	}
	if (sum != m->n_samples)
		return eg__results_rbad(e, q,
					"they add up to %zu, but there are %zu "
					"samples",
					sum, m->n_samples);
	return 0;
}

/* Values of a quantity the schema knows are never negative.  (A time of
 * 0 is what the null backend's empty step measures: it is read, and the
 * rules fail on the 0/0 it makes.) */
static int eg__known_range(const eg_metric_t *m, const char *p, eg__rerr_t *e)
{
	const eg_metric_info_t *mi = eg_metric_info(m->name);
	const eg_summary_t *s = &m->s;
	const double v[] = {s->median, s->p10, s->p90, s->ci_lo, s->ci_hi};
	static const char *const k[] = {"median", "p10", "p90", "ci_lo",
					"ci_hi"};
	char q[320];

	if (!mi)
		return 0;
	for (int i = 0; i < 5; i++)
		if (v[i] < 0) {
			eg__results_fmt(q, sizeof(q), "%s.%s", p, k[i]);
			return eg__results_rbad(
			    e, q, "%g: %s (%s) cannot be negative", v[i],
			    m->name, mi->unit);
		}
	for (size_t i = 0; i < m->n_samples; i++)
		if (m->samples[i] < 0) {
			eg__results_fmt(q, sizeof(q), "%s.samples[%zu]", p, i);
			return eg__results_rbad(
			    e, q, "%g: %s (%s) cannot be negative",
			    m->samples[i], m->name, mi->unit);
		}
	return 0;
}

/* The summary's own fields; median and n are required. */
static int eg__summary(json_t *o, const char *p, eg_summary_t *s, eg__rerr_t *e)
{
	char q[320];
	json_t *n;
	int rc;

	if ((rc = eg__json_num(o, "median", p, &s->median, e)) ||
	    (rc = eg__json_num(o, "p10", p, &s->p10, e)) ||
	    (rc = eg__json_num(o, "p90", p, &s->p90, e)) ||
	    (rc = eg__json_num(o, "cv", p, &s->cv, e)) ||
	    (rc = eg__json_num(o, "ci_lo", p, &s->ci_lo, e)) ||
	    (rc = eg__json_num(o, "ci_hi", p, &s->ci_hi, e)))
		return rc;
	eg__results_fmt(q, sizeof(q), "%s.median", p);
	if (isnan(s->median))
		return eg__results_rbad(e, q, "missing (a number is required)");
	eg__results_fmt(q, sizeof(q), "%s.n", p);
	n = json_object_get(o, "n");
	if (!n)
		return eg__results_rbad(
		    e, q, "missing (an integer >= 1 is required)");
	if (!json_is_integer(n) || json_integer_value(n) < 1)
		return eg__results_rbad(e, q, "expected an integer >= 1");
	s->n = (size_t)json_integer_value(n);
	if (isnan(s->ci_lo) != isnan(s->ci_hi))
		return eg__results_rbad(e, p, "ci_lo and ci_hi come together");
	eg__results_fmt(q, sizeof(q), "%s.ci_hi", p);
	if (s->ci_lo > s->ci_hi)
		return eg__results_rbad(e, q, "below ci_lo");
	eg__results_fmt(q, sizeof(q), "%s.p90", p);
	if (s->p10 > s->p90)
		return eg__results_rbad(e, q, "below p10");
	eg__results_fmt(q, sizeof(q), "%s.cv", p);
	if (s->cv < 0)
		return eg__results_rbad(e, q, "negative");
	return 0;
}

int eg_metric_summary(const char *id, const eg_metric_t *m, eg_summary_t *s)
{
	eg_samples_t x = eg_metric_samples(m);

	if (!m->n_samples) {
		*s = m->s;
		return EG_OK;
	}
	if (eg_samples_check(&x) < 0)
		return EG_EINVAL;
	return eg_stats_summarize_launches(&x, eg__results_seed(id, m->name),
					   s);
}

/* A summary must describe its samples: the median is checked, what is
 * absent is computed (the bootstrap only when the interval is missing,
 * hierarchical over launches when there are several). */
static int eg__fill(json_t *o, const char *p, const char *id, eg_metric_t *m,
		    eg__rerr_t *e)
{
	eg_summary_t *s = &m->s;
	eg_samples_t x = eg_metric_samples(m);
	double med = eg_stats_median(m->samples, m->n_samples), cw, cb;
	double tol = 1e-9 * fabs(med) + 1e-12;
	eg_summary_t c;
	char q[320];
	int rc;

	if (isnan(med))
		return EG_ENOMEM;
	eg__results_fmt(q, sizeof(q), "%s.median", p);
	if (fabs(med - s->median) > tol)
		return eg__results_rbad(
		    e, q, "%.17g, but the median of the samples is %.17g",
		    s->median, med);
	if ((rc = eg__json_num(o, "cv_within", p, &m->cv_within, e)) ||
	    (rc = eg__json_num(o, "cv_between", p, &m->cv_between, e)))
		return rc;
	eg__results_fmt(q, sizeof(q), "%s.cv_within", p);
	if (m->cv_within < 0 || m->cv_between < 0)
		return eg__results_rbad(e, q, "negative spread");
	if (!m->launch_n && (!isnan(m->cv_within) || !isnan(m->cv_between)))
		return eg__results_rbad(e, q, "spread without launch counts");
	if (m->launch_n && isnan(m->cv_within) && isnan(m->cv_between) &&
	    (rc = eg_stats_launch_spread(&x, &cw, &cb)) == 0) {
		m->cv_within = cw;
		m->cv_between = cb;
	}
	if (!isnan(s->p10) && !isnan(s->p90) && !isnan(s->cv) &&
	    !isnan(s->ci_lo))
		return 0;
	if ((rc = eg_metric_summary(id, m, &c)) < 0)
		return rc;
	if (isnan(s->p10))
		s->p10 = c.p10;
	if (isnan(s->p90))
		s->p90 = c.p90;
	if (isnan(s->cv))
		s->cv = c.cv;
	if (isnan(s->ci_lo)) {
		s->ci_lo = c.ci_lo;
		s->ci_hi = c.ci_hi;
	}
	return 0;
}

int eg__metric(json_t *o, const char *p, const char *id, eg_metric_t *m,
	       eg__rerr_t *e)
{
	static const char *const allowed[] = {
	    "samples", "median", "p10",	     "p90",	  "cv",		"ci_lo",
	    "ci_hi",   "n",	 "launches", "cv_within", "cv_between", NULL};
	json_t *a;
	char q[320];
	int rc;

	m->cv_within = m->cv_between = NAN;
	if (!json_is_object(o))
		return eg__results_rbad(e, p, "expected an object");
	if ((rc = eg__results_keys_allowed(o, allowed, p, e)) ||
	    (rc = eg__summary(o, p, &m->s, e)))
		return rc;
	if ((a = json_object_get(o, "samples")) &&
	    (rc = eg__samples(a, p, m, e)))
		return rc;
	if ((rc = eg__known_range(m, p, e)))
		return rc;
	if ((a = json_object_get(o, "launches")) &&
	    (rc = eg__launch_counts(a, p, m, e)))
		return rc;
	if (!m->samples) {
		eg__results_fmt(q, sizeof(q), "%s.cv_within", p);
		if (json_object_get(o, "cv_within") ||
		    json_object_get(o, "cv_between"))
			return eg__results_rbad(e, q, "spread without samples");
		return 0;
	}
	eg__results_fmt(q, sizeof(q), "%s.n", p);
	if (m->s.n != m->n_samples)
		return eg__results_rbad(e, q, "%zu, but there are %zu samples",
					m->s.n, m->n_samples);
	return eg__fill(o, p, id, m, e);
}

/* "passes": distinct launch numbers, increasing. */
static int eg__passes(json_t *a, const char *q, eg_point_t *pt, eg__rerr_t *e)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || !json_array_size(a))
		return eg__results_rbad(e, q,
					"expected a non-empty array of launch "
					"numbers");
	pt->n_passes = json_array_size(a);
	if (!(pt->passes = calloc(pt->n_passes, sizeof(*pt->passes))))
		return EG_ENOMEM;
	json_array_foreach(a, i, v)
	{
		json_int_t c = json_is_integer(v) ? json_integer_value(v) : -1;

		if (c < 0 || c > 0x7fffffff)
			return eg__results_rbad(
			    e, q, "[%zu]: expected an integer >= 0", i);
		pt->passes[i] = (uint32_t)c;
		if (i && pt->passes[i] <= pt->passes[i - 1])
			return eg__results_rbad(
			    e, q,
			    "[%zu]: %u after %u (launch numbers "
			    "increase)",
			    i, pt->passes[i], pt->passes[i - 1]);
	}
	return 0;
}

int eg__results_point_launches(json_t *o, const char *jpath, eg_point_t *pt,
			       eg__rerr_t *e)
{
	json_t *a = json_object_get(o, "passes"), *r;
	char q[320];
	int rc;

	eg__results_fmt(q, sizeof(q), "%s.passes", jpath);
	if (a && (rc = eg__passes(a, q, pt, e)))
		return rc;
	for (size_t i = 0; a && i < pt->n_metrics; i++) {
		const eg_metric_t *m = &pt->metrics[i];

		if (m->launch_n && m->n_launches != pt->n_passes)
			return eg__results_rbad(
			    e, q,
			    "%zu launch(es), but metric %s has %zu "
			    "launch count(s)",
			    pt->n_passes, m->name, m->n_launches);
	}
	eg__results_fmt(q, sizeof(q), "%s.remeasured", jpath);
	if (!(r = json_object_get(o, "remeasured")))
		return 0;
	if (!json_is_integer(r) || json_integer_value(r) < 0 ||
	    (size_t)json_integer_value(r) > pt->n_passes)
		return eg__results_rbad(
		    e, q,
		    "expected an integer from 0 to the number of "
		    "launches (%zu)",
		    pt->n_passes);
	pt->remeasured = (unsigned)json_integer_value(r);
	return 0;
}
