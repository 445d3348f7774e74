/* Results writer: the document lives in memory and after every point is
 * rewritten whole to PATH.tmp, fsync'ed and renamed over PATH, so readers
 * (and a crash) only ever see a complete, valid file.  One point per line
 * keeps the file readable and friendly to grep and sed.  Every point goes
 * through the reader's validation before it is written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "epgate/error.h"
#include "results_int.h"

struct eg_results_writer {
	char *path;
	int recorded;
	json_t *context;
	json_t *points; /* array of point objects */
	json_t *ids;	/* id -> index */
};

static int eg__err(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int eg__err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return 0;
}

static int eg__put(FILE *f, json_t *v)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY);
	int r;

	if (!s)
		return EG_ENOMEM;
	r = fputs(s, f);
	free(s);
	return r < 0 ? EG_EIO : 0;
}

/* Writes the whole document to path.tmp and renames it over path. */
static int eg__flush(eg_results_writer_t *w, char *err, size_t errlen)
{
	size_t n = strlen(w->path) + 5, i;
	char *tmp = malloc(n);
	json_t *p;
	FILE *f;
	int rc = 0;

	if (!tmp)
		return EG_ENOMEM;
	snprintf(tmp, n, "%s.tmp", w->path);
	f = fopen(tmp, "w");
	if (!f) {
		eg__err(err, errlen, "%s: cannot create: %s", tmp,
			strerror(errno));
		free(tmp);
		return EG_EIO;
	}
	if (fprintf(f, "{\"schema\": \"%s\", \"recorded\": %s,\n\"context\": ",
		    EG_RESULTS_SCHEMA, w->recorded ? "true" : "false") < 0)
		rc = EG_EIO;
	if (!rc)
		rc = eg__put(f, w->context);
	if (!rc && fputs(",\n\"points\": [", f) < 0)
		rc = EG_EIO;
	json_array_foreach(w->points, i, p)
	{
		if (rc)
			break;
		if (fputs(i ? ",\n  " : "\n  ", f) < 0)
			rc = EG_EIO;
		if (!rc)
			rc = eg__put(f, p);
	}
	if (!rc && fputs("\n]}\n", f) < 0)
		rc = EG_EIO;
	if (!rc && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		rc = EG_EIO;
	if (fclose(f) != 0 && !rc)
		rc = EG_EIO;
	if (!rc && rename(tmp, w->path) != 0)
		rc = EG_EIO;
	if (rc) {
		eg__err(err, errlen, "%s: write failed: %s", w->path,
			strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

static void eg__now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void eg_results_close(eg_results_writer_t *w)
{
	if (!w)
		return;
	json_decref(w->context);
	json_decref(w->points);
	json_decref(w->ids);
	free(w->path);
	free(w);
}

int eg_results_create(eg_results_writer_t **out, const char *path, int recorded,
		      json_t *context, char *err, size_t errlen)
{
	eg__rerr_t e = {path, err, errlen};
	eg_results_writer_t *w;
	char now[32];
	int rc = EG_ENOMEM;

	*out = NULL;
	if (!path || (context && !json_is_object(context)))
		return EG_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return EG_ENOMEM;
	w->recorded = !!recorded;
	w->path = strdup(path);
	w->context = context ? json_deep_copy(context) : json_object();
	w->points = json_array();
	w->ids = json_object();
	if (!w->path || !w->context || !w->points || !w->ids)
		goto fail;
	if (!json_object_get(w->context, "created")) {
		eg__now(now, sizeof(now));
		if (json_object_set_new(w->context, "created",
					json_string(now)))
			goto fail;
	}
	if ((rc = eg__context_check(w->context, &e)))
		goto fail;
	if ((rc = eg__flush(w, err, errlen)))
		goto fail;
	*out = w;
	return 0;
fail:
	eg_results_close(w);
	return rc;
}

static int eg__set_num(json_t *o, const char *k, double v)
{
	if (isnan(v))
		return 0;
	return json_object_set_new(o, k, json_real(v)) ? EG_ENOMEM : 0;
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
		*rc = eg_stats_summarize(m->samples, m->n_samples,
					 eg__results_seed(id, m->name), &s);
		if (*rc)
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
	}
	*rc = 0;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *eg__point_json(const eg_point_t *p, int *rc)
{
	json_t *o = json_object(), *ms = json_object();

	*rc = EG_ENOMEM;
	if (!o || !ms)
		goto fail;
	*rc = EG_EINVAL;
	if (!p->id || !p->suite || !p->arm)
		goto fail;
	*rc = EG_ENOMEM;
	if (json_object_set_new(o, "id", json_string(p->id)) ||
	    json_object_set_new(o, "suite", json_string(p->suite)) ||
	    json_object_set_new(o, "arm", json_string(p->arm)) ||
	    json_object_set_new(
		o, "axes", p->axes ? json_deep_copy(p->axes) : json_object()))
		goto fail;
	if (p->evidence &&
	    json_object_set_new(o, "evidence", json_deep_copy(p->evidence)))
		goto fail;
	for (size_t i = 0; i < p->n_metrics; i++) {
		json_t *m;

		if (!p->metrics[i].name) {
			*rc = EG_EINVAL;
			goto fail;
		}
		m = eg__metric_json(p->id, &p->metrics[i], rc);
		if (!m)
			goto fail;
		if (json_object_set_new(ms, p->metrics[i].name, m)) {
			*rc = EG_ENOMEM;
			goto fail;
		}
	}
	if (json_object_set(o, "metrics", ms))
		goto fail;
	json_decref(ms);
	*rc = 0;
	return o;
fail:
	json_decref(ms);
	json_decref(o);
	return NULL;
}

int eg_results_append(eg_results_writer_t *w, const eg_point_t *p, char *err,
		      size_t errlen)
{
	eg__rerr_t e = {w ? w->path : "", err, errlen};
	size_t idx;
	eg_point_t chk;
	char q[64];
	json_t *o;
	int rc;

	if (!w || !p)
		return EG_EINVAL;
	idx = json_array_size(w->points);
	snprintf(q, sizeof(q), "points[%zu]", idx);
	o = eg__point_json(p, &rc);
	if (!o) {
		if (rc == EG_EINVAL)
			eg__rbad(&e, q,
				 "incomplete point (id, suite, arm, a finite "
				 "median and n are required)");
		else if (rc == EG_ERANGE)
			eg__rbad(&e, q, "a sample is not a finite number");
		return rc;
	}
	/* what the reader would reject is never written */
	rc = eg__point_from_json(o, q, &chk, &e);
	if (!rc) {
		eg__point_fini(&chk);
		if (json_object_get(w->ids, p->id))
			rc =
			    eg__rbad(&e, q, "id \"%s\" already written", p->id);
	}
	if (!rc &&
	    (json_array_append(w->points, o) ||
	     json_object_set_new(w->ids, p->id, json_integer((json_int_t)idx))))
		rc = EG_ENOMEM;
	json_decref(o);
	if (rc)
		return rc;
	rc = eg__flush(w, err, errlen);
	if (rc) {
		/* keep memory and file in step: the point is not written */
		json_array_remove(w->points, idx);
		json_object_del(w->ids, p->id);
	}
	return rc;
}

size_t eg_results_count(const eg_results_writer_t *w)
{
	return w ? json_array_size(w->points) : 0;
}
