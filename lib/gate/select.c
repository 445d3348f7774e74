/* Selecting what a gate judges: the points of its arms that pass its
 * filter, each turned into a cell (the metric's median, or the ratio of
 * two arms' medians at matching axis values), with a series key for the
 * rules that look along an axis. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

int eg__gate_gerr(const eg_gate_file_t *gf, int line, char *err, size_t len,
		  const char *fmt, ...)
{
	char msg[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && len)
		snprintf(err, len, "%s:%d: %s", gf->path, line, msg);
	return EG_EPARSE;
}

static int eg__value_eq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_is_string(a) && json_is_string(b))
		return !strcmp(json_string_value(a), json_string_value(b));
	return 0;
}

static int eg__in_values(const json_t *values, const json_t *v)
{
	size_t i;
	json_t *e;

	json_array_foreach(values, i, e)
	{
		if (eg__value_eq(e, v))
			return 1;
	}
	return 0;
}

int eg__gate_filter_match(const eg_gate_t *g, const eg_point_t *p, int strict)
{
	for (size_t i = 0; i < g->n_filter; i++) {
		const eg_gate_filter_t *f = &g->filter[i];
		json_t *v;
		int ok;

		if (!strcmp(f->key, "suite")) {
			json_t *s = json_string(p->suite);

			ok = s && eg__in_values(f->values, s);
			json_decref(s);
			if (!ok)
				return 0;
			continue;
		}
		v = json_object_get(p->axes, f->key);
		if (!v) {
			if (strict)
				return 0;
			continue;
		}
		if (!eg__in_values(f->values, v))
			return 0;
	}
	return 1;
}

int eg__gate_arm_selected(const eg_gate_t *g, const char *arm)
{
	if (g->ratio[0])
		return !strcmp(arm, g->ratio[0]);
	if (g->versus[0])
		return !strcmp(arm, g->versus[0]);
	if (!g->arms)
		return 1;
	for (size_t i = 0; i < g->n_arms; i++)
		if (!strcmp(g->arms[i], arm))
			return 1;
	return 0;
}

int eg__gate_axes_agree(const eg_point_t *a, const eg_point_t *b,
			int (*eq)(const json_t *, const json_t *))
{
	const char *k;
	json_t *v;

	json_object_foreach(a->axes, k, v)
	{
		json_t *w = json_object_get(b->axes, k);

		if (w && !eq(v, w))
			return 0;
	}
	return 1;
}

static void eg__append(char **s, size_t *len, size_t *cap, const char *t)
{
	size_t n = strlen(t);

	if (!*s)
		return;
	if (*len + n + 1 > *cap) {
		char *r = realloc(*s, 2 * (*len + n + 1));

		if (!r) {
			free(*s);
			*s = NULL;
			return;
		}
		*s = r;
		*cap = 2 * (*len + n + 1);
	}
	memcpy(*s + *len, t, n + 1);
	*len += n;
}

static int eg__skipped(const eg_gate_t *g, const char *key)
{
	if (!g)
		return 0;
	if (g->axis && !strcmp(key, g->axis))
		return 1;
	for (size_t i = 0; i < g->n_covary; i++)
		if (!strcmp(key, g->covary[i]))
			return 1;
	return 0;
}

/* "suite [arm] k=v k=v" with keys sorted; with g, leaving out the gate's
 * axis and the axes that covary with it (the series key). */
static char *eg__label(const char *suite, const char *arm, json_t *axes,
		       const eg_gate_t *g)
{
	size_t len = 0, cap = 64, n = json_object_size(axes), k = 0;
	const char **keys = calloc(n ? n : 1, sizeof(*keys));
	char *s = malloc(cap), buf[128];
	const char *key;
	json_t *v;

	if (!keys || !s) {
		free(keys);
		free(s);
		return NULL;
	}
	s[0] = '\0';
	eg__append(&s, &len, &cap, suite);
	if (arm) {
		eg__append(&s, &len, &cap, " ");
		eg__append(&s, &len, &cap, arm);
	}
	json_object_foreach(axes, key, v)
	{
		keys[k++] = key;
	}
	/* insertion sort: a handful of axes */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0;
		     j--) {
			const char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (eg__skipped(g, keys[i]))
			continue;
		v = json_object_get(axes, keys[i]);
		if (json_is_string(v))
			snprintf(buf, sizeof(buf), " %s=%s", keys[i],
				 json_string_value(v));
		else
			snprintf(buf, sizeof(buf), " %s=%g", keys[i],
				 json_number_value(v));
		eg__append(&s, &len, &cap, buf);
	}
	free(keys);
	return s;
}

void eg__gate_cells_free(eg__cells_t *c)
{
	for (size_t i = 0; c->c && i < c->n; i++) {
		free(c->c[i].group);
		free(c->c[i].at);
	}
	free(c->c);
	c->c = NULL;
	c->n = 0;
}

/* The denominator point for numerator p; NULL with *amb set when two
 * match. */
static const eg_point_t *eg__partner(const eg_gate_t *g,
				     const eg_results_t *files, size_t nf,
				     const eg_point_t *p,
				     const eg_point_t **amb)
{
	const eg_point_t *found = NULL;

	*amb = NULL;
	for (size_t f = 0; f < nf; f++)
		for (size_t i = 0; i < files[f].n_points; i++) {
			const eg_point_t *q = &files[f].points[i];

			if (strcmp(q->arm, g->ratio[1]) ||
			    strcmp(q->suite, p->suite) ||
			    !eg_point_metric(q, g->metric) ||
			    !eg__gate_filter_match(g, q, 0) ||
			    !eg__gate_axes_agree(p, q, eg__value_eq))
				continue;
			if (found) {
				*amb = q;
				return found;
			}
			found = q;
		}
	return found;
}

static void eg__fill(eg__gate_cell_t *c, const eg_gate_t *g)
{
	const eg_metric_t *a, *b;
	double z = 1.959963984540054; /* the stored intervals are 95% */

	c->v = c->se = c->lo = c->hi = NAN;
	if (!g->metric)
		return;
	a = eg_point_metric(c->p, g->metric);
	if (!c->q) {
		c->v = a->s.median;
		/* positive: the log-scale error, as the value is judged
		 * (lib/gate/band.c takes se / v as that error) */
		c->se = c->v > 0 ? c->v * eg_stats_rel_se(&a->s)
				 : eg_stats_se_from_ci(a->s.ci_lo, a->s.ci_hi);
		c->lo = a->s.ci_lo;
		c->hi = a->s.ci_hi;
		return;
	}
	b = eg_point_metric(c->q, g->metric);
	c->v = a->s.median / b->s.median;
	c->se = eg_stats_ratio_se(&a->s, &b->s);
	if (!isnan(c->se) && c->v > 0) {
		c->lo = c->v * exp(-z * c->se / c->v);
		c->hi = c->v * exp(z * c->se / c->v);
	}
}

int eg__select(const eg_gate_file_t *gf, const eg_gate_t *g,
	       const eg_results_t *files, size_t nf, int metric,
	       eg__cells_t *out, size_t *unpaired, char *err, size_t len)
{
	size_t total = 0;

	out->c = NULL;
	out->n = 0;
	*unpaired = 0;
	for (size_t f = 0; f < nf; f++)
		total += files[f].n_points;
	out->c = calloc(total ? total : 1, sizeof(*out->c));
	if (!out->c)
		return EG_ENOMEM;
	for (size_t f = 0; f < nf; f++)
		for (size_t i = 0; i < files[f].n_points; i++) {
			const eg_point_t *p = &files[f].points[i], *q = NULL,
					 *amb;
			eg__gate_cell_t *c;
			char armbuf[256];
			const char *arm = p->arm;

			if (!eg__gate_arm_selected(g, p->arm) ||
			    !eg__gate_filter_match(g, p, 1) ||
			    (metric && !eg_point_metric(p, g->metric)) ||
			    (g->axis && !json_object_get(p->axes, g->axis)))
				continue;
			if (g->ratio[0]) {
				q = eg__partner(g, files, nf, p, &amb);
				if (amb) {
					eg__gate_cells_free(out);
					return eg__gate_gerr(
					    gf, g->ratio_line, err, len,
					    "gate \"%s\": point \"%s\" pairs "
					    "with both \"%s\" and \"%s\" of "
					    "arm %s; filter on the axis that "
					    "tells them apart",
					    g->name, p->id, q->id, amb->id,
					    g->ratio[1]);
				}
				if (!q) {
					(*unpaired)++;
					continue;
				}
				snprintf(armbuf, sizeof(armbuf), "%s/%s",
					 g->ratio[0], g->ratio[1]);
				arm = armbuf;
			}
			c = &out->c[out->n++];
			c->p = p;
			c->q = q;
			c->file = &files[f];
			c->x =
			    g->axis ? json_object_get(p->axes, g->axis) : NULL;
			c->at = eg__label(p->suite, NULL, p->axes, NULL);
			c->group = eg__label(p->suite, arm, p->axes, g);
			if (!c->at || !c->group) {
				eg__gate_cells_free(out);
				return EG_ENOMEM;
			}
			if (metric)
				eg__fill(c, g);
			else
				c->v = c->se = c->lo = c->hi = NAN;
		}
	return 0;
}

int eg__gate_groups(const eg__cells_t *c, size_t *idx, size_t *start)
{
	size_t ng = 0, k = 0;
	char *seen = calloc(c->n ? c->n : 1, 1);

	if (!seen)
		return EG_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		if (seen[i])
			continue;
		start[ng++] = k;
		for (size_t j = i; j < c->n; j++)
			if (!seen[j] && !strcmp(c->c[i].group, c->c[j].group)) {
				seen[j] = 1;
				idx[k++] = j;
			}
	}
	start[ng] = k;
	free(seen);
	return (int)ng;
}

int eg__gate_axis_num(const eg__gate_cell_t *c, double *out)
{
	if (!c->x || !json_is_number(c->x))
		return 0;
	*out = json_number_value(c->x);
	return 1;
}

double eg__gate_r4(double v)
{
	char b[32];

	if (!isfinite(v))
		return v;
	snprintf(b, sizeof(b), "%.4g", v);
	return strtod(b, NULL);
}

void eg__gate_say(eg_gate_result_t *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->summary, sizeof(res->summary), fmt, ap);
	va_end(ap);
}

json_t *eg__gate_pair(double a, double b)
{
	return json_pack("[ff]", eg__gate_r4(a), eg__gate_r4(b));
}

json_t *eg__gate_cell_json(const eg__gate_cell_t *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "at", json_string(c->at));
	if (!isnan(c->v))
		json_object_set_new(o, "value", json_real(eg__gate_r4(c->v)));
	if (!isnan(c->lo))
		json_object_set_new(o, "ci95", eg__gate_pair(c->lo, c->hi));
	json_object_set_new(o, "point", json_string(c->p->id));
	if (c->q)
		json_object_set_new(o, "over", json_string(c->q->id));
	return o;
}

const char *eg__gate_metric_label(const eg_gate_t *g, char *buf, size_t len)
{
	if (!g->metric)
		snprintf(buf, len, "evidence.%s", g->field);
	else if (g->ratio[0])
		snprintf(buf, len, "%s %s/%s", g->metric, g->ratio[0],
			 g->ratio[1]);
	else
		snprintf(buf, len, "%s", g->metric);
	return buf;
}
