/* What a suite's points vary along: the chart's x axis (the one a gate
 * looks along, else the first numeric axis that varies, else a word
 * axis), the axes that move with it (nodes with world), and those that
 * split the points into series (phase, dtype, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/page/page.h"

/* The distinct values of axis over the points (a JSON array, new). */
static json_t *eg__distinct(const eg__axes_t *a, const char *axis)
{
	json_t *vals = json_array();

	for (size_t i = 0; vals && i < a->n; i++) {
		json_t *v = json_object_get(a->pts[i]->axes, axis);
		size_t k;
		json_t *w;
		int seen = 0;

		if (!v)
			v = json_null();
		json_array_foreach(vals, k, w) seen |= json_equal(v, w);
		if (!seen)
			json_array_append(vals, v);
	}
	return vals;
}

/* Numbers, leaving out points without the axis (null). */
static int eg__all_numbers(const json_t *vals)
{
	size_t k, n = 0;
	json_t *w;

	json_array_foreach(vals, k, w)
	{
		if (json_is_null(w))
			continue;
		if (!json_is_number(w))
			return 0;
		n++;
	}
	return n > 0;
}

/* Doubling-like: every value > 0, and sorted, each at least 1.5 times
 * the one before. */
static int eg__geometric(const json_t *vals)
{
	size_t n = json_array_size(vals);
	double *v = malloc((n + 1) * sizeof(*v));
	int ok = n >= 2 && v;

	for (size_t i = 0, k = 0; ok && k < json_array_size(vals); k++) {
		if (json_is_null(json_array_get(vals, k))) {
			n--;
			continue;
		}
		v[i] = json_number_value(json_array_get(vals, k));
		ok = v[i++] > 0;
	}
	ok = ok && n >= 2;
	for (size_t i = 1; ok && i < n; i++) /* insertion sort: n small */
		for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (size_t i = 1; ok && i < n; i++)
		ok = v[i] >= 1.5 * v[i - 1];
	free(v);
	return ok;
}

/* Do a and b partition the points the same way (world 16 <-> nodes 2)? */
static int eg__covaries(const eg__axes_t *a, const char *x, const char *y)
{
	json_t *nx = eg__distinct(a, x), *ny = eg__distinct(a, y);
	json_t *pairs = json_array();
	int same;

	for (size_t i = 0; pairs && i < a->n; i++) {
		json_t *p =
		    json_pack("[OO]", json_object_get(a->pts[i]->axes, x),
			      json_object_get(a->pts[i]->axes, y));
		size_t k;
		json_t *w;
		int seen = 0;

		if (!p)
			continue;
		json_array_foreach(pairs, k, w) seen |= json_equal(p, w);
		if (!seen)
			json_array_append(pairs, p);
		json_decref(p);
	}
	same = json_array_size(pairs) == json_array_size(nx) &&
	       json_array_size(pairs) == json_array_size(ny);
	json_decref(nx);
	json_decref(ny);
	json_decref(pairs);
	return same;
}

/* The varying axes in a stable order: the known ones first. */
static size_t eg__varying(const eg__axes_t *a, const char **out, size_t cap)
{
	size_t n = 0;

	for (const char *const *k = eg_known_axes; *k && n < cap; k++) {
		json_t *v = eg__distinct(a, *k);

		if (json_array_size(v) > 1)
			out[n++] = *k;
		json_decref(v);
	}
	for (size_t i = 0; i < a->n && n < cap; i++) {
		const char *key;
		json_t *val;

		json_object_foreach(a->pts[i]->axes, key, val)
		{
			size_t j;
			json_t *v;

			(void)val;
			for (j = 0; j < n && strcmp(out[j], key); j++)
				;
			if (j < n || eg_axis_known(key) || n >= cap)
				continue;
			v = eg__distinct(a, key);
			if (json_array_size(v) > 1)
				out[n++] = key;
			json_decref(v);
		}
	}
	return n;
}

/* x: the preferred axis if it varies, else the first numeric one,
 * else the first that varies at all. */
static const char *eg__pick_x(const eg__axes_t *a, const char *const *var,
			      size_t n, const char *prefer)
{
	for (size_t i = 0; prefer && i < n; i++)
		if (!strcmp(var[i], prefer))
			return var[i];
	for (size_t i = 0; i < n; i++) {
		json_t *v = eg__distinct(a, var[i]);
		int num = eg__all_numbers(v);

		json_decref(v);
		if (num)
			return var[i];
	}
	return n ? var[0] : NULL;
}

static void eg__fixed_label(eg__axes_t *a)
{
	static const char *const show[] = {"world", "nodes", "concurrency",
					   NULL};
	size_t n = 0;

	a->fixed[0] = '\0';
	for (const char *const *k = show; *k && a->n; k++) {
		json_t *v = json_object_get(a->pts[0]->axes, *k);
		char buf[64];

		if (!v)
			continue;
		n += (size_t)snprintf(a->fixed + n, sizeof(a->fixed) - n,
				      "%s%s=%s", n ? " " : "", *k,
				      eg__page_axis_str(v, buf, sizeof(buf)));
		if (n >= sizeof(a->fixed))
			break;
	}
	if (!a->fixed[0])
		snprintf(a->fixed, sizeof(a->fixed), "all points");
}

/* The x label: the axis, and what moves with it. */
static void eg__xlabel(eg__axes_t *a)
{
	size_t n =
	    a->x ? (size_t)snprintf(a->xlabel, sizeof(a->xlabel), "%s", a->x)
		 : (size_t)snprintf(a->xlabel, sizeof(a->xlabel),
				    "every point at %s", a->fixed);

	for (size_t i = 0; i < a->n_covary && n < sizeof(a->xlabel); i++)
		n +=
		    (size_t)snprintf(a->xlabel + n, sizeof(a->xlabel) - n,
				     "%s%s", i ? ", " : " (and ", a->covary[i]);
	if (a->n_covary && n < sizeof(a->xlabel))
		n +=
		    (size_t)snprintf(a->xlabel + n, sizeof(a->xlabel) - n, ")");
	if (a->logx && n < sizeof(a->xlabel) - 12)
		strncat(a->xlabel, ", log scale",
			sizeof(a->xlabel) - strlen(a->xlabel) - 1);
}

int eg__page_axes_of(const eg__prof_t *p, const char *suite, const char *prefer,
		     eg__axes_t *a)
{
	const char *var[EG__AXES_MAX];
	size_t nv;

	memset(a, 0, sizeof(*a));
	for (size_t f = 0; f < p->n_cur; f++)
		for (size_t i = 0; i < p->cur[f].n_points; i++) {
			const eg_point_t *pt = &p->cur[f].points[i];
			const eg_point_t **q;

			if (strcmp(pt->suite, suite))
				continue;
			q = realloc(a->pts, (a->n + 1) * sizeof(*q));
			if (!q)
				return EG_ENOMEM;
			a->pts = q;
			a->pts[a->n++] = pt;
		}
	nv = eg__varying(a, var, EG__AXES_MAX);
	a->x = eg__pick_x(a, var, nv, prefer);
	if (a->x) {
		json_t *v = eg__distinct(a, a->x);

		a->x_numeric = eg__all_numbers(v);
		a->logx = a->x_numeric && eg__geometric(v);
		json_decref(v);
	}
	for (size_t i = 0; i < nv; i++) {
		if (var[i] == a->x)
			continue;
		if (a->x && eg__covaries(a, a->x, var[i]))
			a->covary[a->n_covary++] = var[i];
		else
			a->split[a->n_split++] = var[i];
	}
	eg__fixed_label(a);
	eg__xlabel(a);
	return EG_OK;
}

void eg__page_axes_fini(eg__axes_t *a)
{
	free(a->pts);
	memset(a, 0, sizeof(*a));
}

const char *eg__page_axis_str(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_number(v))
		snprintf(buf, len, "%g", json_number_value(v));
	else
		snprintf(buf, len, "-");
	return buf;
}

void eg__page_axes_label(const eg__axes_t *a, const eg_point_t *pt,
			 const char *first, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", first ? first : "");

	for (size_t i = 0; i < a->n_split && n < len; i++) {
		char v[64];

		n += (size_t)snprintf(
		    buf + n, len - n, "%s%s=%s", n ? " " : "", a->split[i],
		    eg__page_axis_str(json_object_get(pt->axes, a->split[i]), v,
				      sizeof(v)));
	}
}

int eg__page_axes_x(const eg__axes_t *a, eg__chart_t *c, const eg_point_t *pt,
		    const char *none, double *x)
{
	char buf[64];
	const json_t *v = a->x ? json_object_get(pt->axes, a->x) : NULL;
	int k;

	if (a->x && a->x_numeric) {
		if (!json_is_number(v))
			return 1;
		*x = json_number_value(v);
		return EG_OK;
	}
	k = eg__chart_cat(c,
			  a->x ? eg__page_axis_str(v, buf, sizeof(buf)) : none);
	if (k < 0)
		return k;
	*x = k;
	return EG_OK;
}
