/* Calibration campaigns (lib/campaign/calib.h): loading and classifying
 * them, and views of one -- fewer launches, fewer metrics, an arm's times
 * scaled -- for the replay of every comparison through the gate engine
 * (calib_run.c). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/gate.h"
#include "lib/campaign/calib.h"

static int eg__cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of dir, sorted by name (their time order). */
static char **eg__list(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
			continue;
		if (*n == cap) {
			char **t =
			    realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!t)
				break;
			v = t;
		}
		if (!(v[*n] = malloc(strlen(dir) + l + 2)))
			break;
		sprintf(v[(*n)++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), eg__cmp_name);
	return v;
}

/* The kind of a campaign from its context. */
static void eg__classify(eg_calib_camp_t *c)
{
	json_t *ab = json_object_get(c->r.context, "ab");
	const char *pl =
	    json_string_value(json_object_get(c->r.context, "planted"));
	const char *inner = NULL;
	double f = 0, t = 0;

	c->kind = EG_CALIB_CLEAN;
	if (ab) {
		c->a = json_string_value(json_object_get(ab, "a"));
		c->b = json_string_value(json_object_get(ab, "b"));
		pl = c->b;
		c->kind = EG_CALIB_AA;
	}
	if (pl && eg_slow_parse(pl, &f, &t, &inner) == 0) {
		snprintf(c->arm, sizeof(c->arm), "%s", inner);
		c->amount = f;
		if (f > 0 || t > 0)
			c->kind = ab ? EG_CALIB_AB : EG_CALIB_PLANT;
	} else if (c->a) {
		snprintf(c->arm, sizeof(c->arm), "%s", c->a);
	}
}

/* One arm of an A/B job as a campaign of its own: the points of arm
 * `from`, written as arm `as`; planted when `planted`.  A history needs
 * campaigns of one arm over time, and every A/B job holds two: its A
 * arm (unchanged code) and its B arm (unchanged for A/A, slowed for
 * A/B). */
static int eg__derive(const eg_calib_camp_t *c, const char *from,
		      const char *as, const char *planted, const char *tag,
		      eg_calib_camp_t *o)
{
	char path[4200];
	int rc;

	memset(o, 0, sizeof(*o));
	rc = eg_calib_view(&c->r, 1u << 30, NULL, 0, NULL, NULL, 0, 0, &o->r);
	if (rc)
		return rc;
	json_decref(o->r.context);
	o->r.context = json_deep_copy(c->r.context);
	json_object_del(o->r.context, "ab");
	if (planted)
		json_object_set_new(o->r.context, "planted",
				    json_string(planted));
	snprintf(path, sizeof(path), "%s#%s", c->r.path, tag);
	free(o->r.path);
	o->r.path = strdup(path);
	for (size_t i = 0; i < o->r.n_points;) {
		eg_point_t *p = &o->r.points[i];
		const char *rest = strstr(p->id, from);
		char id[512];

		if (strcmp(p->arm, from) || !rest) {
			eg_point_fini(p);
			*p = o->r.points[--o->r.n_points];
			continue;
		}
		snprintf(id, sizeof(id), "%.*s%s%s", (int)(rest - p->id), p->id,
			 as, rest + strlen(from));
		free(p->id);
		free(p->arm);
		p->id = strdup(id);
		p->arm = strdup(as);
		i++;
	}
	eg__classify(o);
	return 0;
}

/* The A/B jobs' arms as campaigns of one arm each, B first (so that a
 * B arm's history never holds the A arm measured beside it). */
static int eg__derive_all(eg_calib_camp_t **c, size_t *n)
{
	size_t m = *n, k = 0;
	eg_calib_camp_t *d = calloc(3 * m + 1, sizeof(*d));

	if (!d)
		return EG_ENOMEM;
	for (size_t i = 0; i < m; i++) {
		eg_calib_camp_t *x = &(*c)[i];

		d[k++] = *x;
		if (x->kind != EG_CALIB_AA && x->kind != EG_CALIB_AB)
			continue;
		if (eg__derive(x, x->b, x->a,
			       x->kind == EG_CALIB_AB ? x->b : NULL, "b",
			       &d[k]) == 0)
			d[k++].derived = 1;
		if (eg__derive(x, x->a, x->a, NULL, "a", &d[k]) == 0)
			d[k++].derived = 1;
	}
	free(*c);
	*c = d;
	*n = k;
	return 0;
}

int eg_calib_load(const char *dir, int derive, eg_calib_camp_t **out, size_t *n,
		  char *err, size_t errlen)
{
	size_t nf = 0;
	char **files = eg__list(dir, &nf);
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!files || !nf) {
		snprintf(err, errlen, "%s: no campaign (*.json)", dir);
		free(files);
		return EG_ENOENT;
	}
	*out = calloc(nf, sizeof(**out));
	for (size_t i = 0; i < nf; i++) {
		if (!*out) {
			rc = EG_ENOMEM;
		} else if (!rc) {
			eg_calib_camp_t *c = &(*out)[*n];

			rc = eg_results_read(&c->r, files[i], err, errlen);
			if (!rc) {
				eg__classify(c);
				(*n)++;
			}
		}
		free(files[i]);
	}
	free(files);
	if (!rc && derive && (rc = eg__derive_all(out, n)) < 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

void eg_calib_free(eg_calib_camp_t *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		eg_results_free(&c[i].r);
	free(c);
}

size_t eg_calib_item(const char **list)
{
	const char *s = *list, *e = strchr(s, ',');

	*list = e ? e + 1 : NULL;
	return e ? (size_t)(e - s) : strlen(s);
}

/* Is name in the comma list keep? */
static int eg__kept(const char *keep, const char *name)
{
	size_t l = strlen(name);

	for (const char *s = keep; s && *s;) {
		const char *item = s;

		if (eg_calib_item(&s) == l && !strncmp(item, name, l))
			return 1;
	}
	return 0;
}

static int eg__is_time(const char *name)
{
	size_t l = strlen(name);

	return l >= 3 && !strcmp(name + l - 3, "_us");
}

/* m restricted to the launches keep[] says, times scaled by k. */
static int eg__metric_view(const eg_metric_t *m, const int *keep, size_t L,
			   double k, uint64_t seed, unsigned resamples,
			   eg_metric_t *o)
{
	size_t off = 0, nl = 0;
	eg_samples_t s;

	memset(o, 0, sizeof(*o));
	o->name = strdup(m->name);
	o->samples = malloc((m->n_samples + 1) * sizeof(double));
	o->launch_n = calloc(L + 1, sizeof(uint32_t));
	if (!o->name || !o->samples || !o->launch_n)
		return EG_ENOMEM;
	for (size_t i = 0; i < L; i++) {
		uint32_t c =
		    m->launch_n ? m->launch_n[i] : (uint32_t)m->n_samples;

		if (keep[i]) {
			for (uint32_t j = 0; j < c; j++)
				o->samples[o->n_samples++] =
				    m->samples[off + j] * k;
			o->launch_n[nl++] = c;
		}
		off += c;
	}
	o->n_launches = nl;
	o->cv_within = o->cv_between = NAN;
	if (!o->n_samples)
		return EG_EINVAL;
	s = eg_metric_samples(o);
	o->s = (eg_summary_t){o->n_samples, 0, NAN, NAN, NAN, NAN, NAN};
	o->s.median = eg_stats_median(o->samples, o->n_samples);
	if (!resamples) /* no interval wanted */
		return 0;
	return eg_stats_hboot_median_ci(&s, resamples, EG_STATS_CI_LEVEL, seed,
					&o->s.ci_lo, &o->s.ci_hi);
}

/* One point of a view; *skip when none of its metrics is kept. */
static int eg__point_view(const eg_point_t *p, unsigned max, const char *keep,
			  double k, unsigned resamples, eg_point_t *o,
			  int *skip)
{
	size_t L = p->passes ? p->n_passes : 1;
	int *kl = calloc(L + 1, sizeof(*kl)), rc = EG_ENOMEM;

	memset(o, 0, sizeof(*o));
	*skip = 0;
	if (!kl)
		return rc;
	o->id = strdup(p->id);
	o->suite = strdup(p->suite);
	o->arm = strdup(p->arm);
	o->axes = json_deep_copy(p->axes);
	o->evidence = p->evidence ? json_deep_copy(p->evidence) : NULL;
	o->metrics = calloc(p->n_metrics + 1, sizeof(*o->metrics));
	o->passes = calloc(L + 1, sizeof(*o->passes));
	if (!o->id || !o->suite || !o->arm || !o->axes || !o->metrics ||
	    !o->passes)
		goto out;
	for (size_t i = 0; i < L; i++)
		if ((kl[i] = !p->passes || p->passes[i] < max))
			o->passes[o->n_passes++] = p->passes ? p->passes[i] : 0;
	rc = 0;
	for (size_t i = 0; !rc && i < p->n_metrics; i++) {
		const eg_metric_t *m = &p->metrics[i];

		if (keep && !eg__kept(keep, m->name))
			continue;
		if (!m->n_samples) { /* a count: as it is */
			eg_metric_t *o2 = &o->metrics[o->n_metrics++];

			*o2 = (eg_metric_t){.s = m->s};
			o2->cv_within = o2->cv_between = NAN;
			if (!(o2->name = strdup(m->name)))
				rc = EG_ENOMEM;
			continue;
		}
		/* a slowdown scales the times, not the counts or rates */
		rc = eg__metric_view(m, kl, L, eg__is_time(m->name) ? k : 1,
				     (uint64_t)i * 7919 + L, resamples,
				     &o->metrics[o->n_metrics++]);
	}
	*skip = !o->n_metrics || !o->n_passes;
out:
	free(kl);
	return rc;
}

int eg_calib_view(const eg_results_t *src, unsigned max_pass,
		  const json_t *extra, unsigned max_extra, const char *keep,
		  const char *arm, double shift, unsigned resamples,
		  eg_results_t *out)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->path = strdup(src->path);
	out->context = json_incref(src->context);
	out->points = calloc(src->n_points + 1, sizeof(*out->points));
	if (!out->path || !out->points)
		return EG_ENOMEM;
	for (size_t i = 0; !rc && i < src->n_points; i++) {
		const eg_point_t *p = &src->points[i];
		unsigned max = extra && eg_gate_ids_has(extra, p->id)
				   ? max_extra
				   : max_pass;
		double k = arm && !strcmp(p->arm, arm) ? 1 + shift : 1;
		int skip;

		rc = eg__point_view(p, max, keep, k, resamples,
				    &out->points[out->n_points], &skip);
		if (rc || skip)
			eg_point_fini(&out->points[out->n_points]);
		else
			out->n_points++;
	}
	return rc;
}

void eg_calib_scale(eg_results_t *r, const char *arm, double k)
{
	for (size_t i = 0; i < r->n_points; i++) {
		eg_point_t *p = &r->points[i];

		if (strcmp(p->arm, arm))
			continue;
		for (size_t j = 0; j < p->n_metrics; j++) {
			eg_metric_t *m = &p->metrics[j];

			if (!eg__is_time(m->name))
				continue;
			for (size_t t = 0; t < m->n_samples; t++)
				m->samples[t] *= k;
			m->s.median *= k;
			m->s.p10 *= k;
			m->s.p90 *= k;
			m->s.ci_lo *= k;
			m->s.ci_hi *= k;
		}
	}
}

/* 4 significant digits: timings are not known better, and the fixtures
 * stay small. */
static double eg__round4(double v)
{
	char b[32];

	snprintf(b, sizeof(b), "%.4g", v);
	return strtod(b, NULL);
}

int eg_calib_save(const eg_calib_camp_t *c, size_t n, const eg_calib_opts_t *o)
{
	char path[4400], err[EG_RESULTS_ERR_MAX];

	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(c[i].r.path, '/');
		eg_results_writer_t *w = NULL;
		eg_results_t v;
		int rc;

		if (c[i].derived) /* derived again when read */
			continue;
		snprintf(path, sizeof(path), "%s/%s", o->save,
			 base ? base + 1 : c[i].r.path);
		rc = eg_calib_view(&c[i].r, 1u << 30, NULL, 0,
				   o->metrics ? o->metrics
					      : "dispatch_us,step_us",
				   NULL, 0, 1, &v);
		for (size_t p = 0; !rc && p < v.n_points; p++)
			for (size_t m = 0; m < v.points[p].n_metrics; m++) {
				eg_metric_t *x = &v.points[p].metrics[m];

				for (size_t s = 0; s < x->n_samples; s++)
					x->samples[s] =
					    eg__round4(x->samples[s]);
			}
		if (!rc)
			rc =
			    eg_results_create(&w, path, c[i].r.recorded,
					      c[i].r.context, err, sizeof(err));
		if (!rc)
			eg_results_set_digits(w, 6);
		for (size_t p = 0; !rc && p < v.n_points; p++)
			rc = eg_results_append(w, &v.points[p], err,
					       sizeof(err));
		eg_results_close(w);
		eg_results_free(&v);
		if (rc) {
			fprintf(stderr, "epgate bench calibrate: %s: %s\n",
				path, eg_strerror(rc));
			return rc;
		}
	}
	return 0;
}
