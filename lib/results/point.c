/* One results point, one codec: the JSON object of results v1 both ways
 * (the file's points and the spool lines of sweep jobs are the same
 * object), and the point's memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "results_int.h"

static int eg__set_num(json_t *o, const char *k, double v)
{
	if (isnan(v))
		return 0;
	return json_object_set_new(o, k, json_real(v)) ? EG_ENOMEM : 0;
}

/* The launch counts and the spread they imply. */
static int eg__launches_json(json_t *o, const eg_metric_t *m)
{
	eg_samples_t x = eg_metric_samples(m);
	json_t *a = json_array();
	double cw, cb;

	if (!a || json_object_set_new(o, "launches", a))
		return EG_ENOMEM;
	for (size_t i = 0; i < m->n_launches; i++)
		if (json_array_append_new(a, json_integer(m->launch_n[i])))
			return EG_ENOMEM;
	if (eg_stats_launch_spread(&x, &cw, &cb) < 0)
		return EG_ENOMEM;
	if (eg__set_num(o, "cv_within", cw) || eg__set_num(o, "cv_between", cb))
		return EG_ENOMEM;
	return 0;
}

/* JSON of one metric: the summary (computed from samples when given)
 * then the samples. */
static json_t *eg__metric_json(const char *id, const eg_metric_t *m, int *rc)
{
	json_t *o = json_object(), *a = NULL;
	eg_summary_t s = m->s;

	*rc = EG_ENOMEM;
	if (!o)
		return NULL;
	if (m->n_samples) {
		if ((*rc = eg_metric_summary(id, m, &s)) < 0)
			goto fail;
		*rc = EG_ENOMEM;
	}
	if (!isfinite(s.median) || !s.n) {
		*rc = EG_EINVAL;
		goto fail;
	}
	if (eg__set_num(o, "median", s.median) ||
	    eg__set_num(o, "p10", s.p10) || eg__set_num(o, "p90", s.p90) ||
	    eg__set_num(o, "cv", s.cv) || eg__set_num(o, "ci_lo", s.ci_lo) ||
	    eg__set_num(o, "ci_hi", s.ci_hi) ||
	    json_object_set_new(o, "n", json_integer((json_int_t)s.n)))
		goto fail;
	if (m->n_samples) {
		a = json_array();
		if (!a || json_object_set_new(o, "samples", a))
			goto fail;
		for (size_t i = 0; i < m->n_samples; i++)
			if (json_array_append_new(a, json_real(m->samples[i])))
				goto fail;
		if (m->launch_n && eg__launches_json(o, m))
			goto fail;
	}
	*rc = 0;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *eg__metrics_json(const eg_point_t *p, int *rc)
{
	json_t *ms = json_object();

	*rc = EG_ENOMEM;
	for (size_t i = 0; ms && i < p->n_metrics; i++) {
		json_t *m;

		*rc = EG_EINVAL;
		if (!p->metrics[i].name)
			break;
		if (!(m = eg__metric_json(p->id, &p->metrics[i], rc)))
			break;
		*rc = json_object_set_new(ms, p->metrics[i].name, m) ? EG_ENOMEM
								     : 0;
		if (*rc)
			break;
	}
	if (ms && !*rc)
		return ms;
	json_decref(ms);
	return NULL;
}

/* The launch numbers of a point and its re-measured count. */
static int eg__passes_json(json_t *o, const eg_point_t *p)
{
	json_t *a;

	if (!p->passes)
		return 0;
	if (!(a = json_array()) || json_object_set_new(o, "passes", a))
		return EG_ENOMEM;
	for (size_t i = 0; i < p->n_passes; i++)
		if (json_array_append_new(a, json_integer(p->passes[i])))
			return EG_ENOMEM;
	if (p->remeasured &&
	    json_object_set_new(o, "remeasured", json_integer(p->remeasured)))
		return EG_ENOMEM;
	return 0;
}

static json_t *eg__point_json(const eg_point_t *p, int *rc)
{
	json_t *o, *ms;

	*rc = EG_EINVAL;
	if (!p->id || !p->suite || !p->arm)
		return NULL;
	if (!(ms = eg__metrics_json(p, rc)))
		return NULL;
	*rc = EG_ENOMEM;
	o = json_object();
	if (!o || json_object_set_new(o, "id", json_string(p->id)) ||
	    json_object_set_new(o, "suite", json_string(p->suite)) ||
	    json_object_set_new(o, "arm", json_string(p->arm)) ||
	    json_object_set_new(
		o, "axes", p->axes ? json_deep_copy(p->axes) : json_object()) ||
	    (p->evidence &&
	     json_object_set_new(o, "evidence", json_deep_copy(p->evidence)))) {
		json_decref(ms);
		json_decref(o);
		return NULL;
	}
	if (eg__passes_json(o, p)) {
		json_decref(ms);
		json_decref(o);
		return NULL;
	}
	/* last: the file reads id, suite, arm, axes, evidence, metrics */
	if (json_object_set_new(o, "metrics", ms)) {
		json_decref(o);
		return NULL;
	}
	*rc = 0;
	return o;
}

int eg_point_to_json(const eg_point_t *p, json_t **out, const char *name,
		     const char *jpath, char *err, size_t errlen)
{
	eg__rerr_t e = {name, err, errlen};
	int rc;

	*out = eg__point_json(p, &rc);
	if (*out)
		return 0;
	if (rc == EG_EINVAL)
		eg__results_rbad(
		    &e, jpath,
		    "incomplete point (id, suite, arm, a finite median "
		    "and n are required)");
	else if (rc == EG_ERANGE)
		eg__results_rbad(&e, jpath, "a sample is not a finite number");
	else
		snprintf(err, errlen, "%s: %s: %s", name, jpath,
			 eg_strerror(rc));
	return rc;
}

int eg_point_from_json(json_t *o, eg_point_t *p, const char *name,
		       const char *jpath, char *err, size_t errlen)
{
	eg__rerr_t e = {name, err, errlen};

	return eg__results_point_from_json(o, jpath, p, &e);
}

int eg_point_line(const eg_point_t *p, char **line, const char *name, char *err,
		  size_t errlen)
{
	json_t *o;
	int rc = eg_point_to_json(p, &o, name, "point", err, errlen);

	*line = NULL;
	if (rc)
		return rc;
	*line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!*line) {
		snprintf(err, errlen, "%s: point: out of memory", name);
		return EG_ENOMEM;
	}
	return 0;
}

int eg_point_parse_line(const char *line, eg_point_t *p, const char *name,
			char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	int rc;

	memset(p, 0, sizeof(*p));
	if (!o) {
		snprintf(err, errlen, "%s: malformed point: %s", name, je.text);
		return EG_EPARSE;
	}
	rc = eg_point_from_json(o, p, name, "point", err, errlen);
	json_decref(o);
	return rc;
}

static void eg__metric_fini(eg_metric_t *m)
{
	EG_FREE(m->name, m->samples, m->launch_n);
	memset(m, 0, sizeof(*m));
}

void eg_point_fini(eg_point_t *p)
{
	if (!p)
		return;
	EG_FREE(p->id, p->suite, p->arm);
	json_decref(p->axes);
	json_decref(p->evidence);
	for (size_t i = 0; i < p->n_metrics; i++)
		eg__metric_fini(&p->metrics[i]);
	EG_FREE(p->metrics, p->passes);
	memset(p, 0, sizeof(*p));
}

int eg_results_push(eg_results_t *r, eg_point_t *p)
{
	eg_point_t *t = realloc(r->points, (r->n_points + 1) * sizeof(*t));

	if (!t)
		return EG_ENOMEM;
	r->points = t;
	r->points[r->n_points++] = *p;
	memset(p, 0, sizeof(*p));
	return 0;
}
