/* The values a gate judged, read back from its diagnostics (the same
 * YAML the TAP carries), each with the point it belongs to and whether
 * it passed: what the charts colour.  The verdict itself stays the gate
 * engine's; a value is marked failed only where the gate's own
 * threshold says so, or where its series failed the gate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/page/page.h"

static int eg__cells_push(eg__cells_t *c, const eg__page_cell_t *x)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		eg__page_cell_t *p = realloc(c->c, cap * sizeof(*p));

		if (!p)
			return EG_ENOMEM;
		c->c = p;
		c->cap = cap;
	}
	c->c[c->n++] = *x;
	return EG_OK;
}

void eg__page_cells_fini(eg__cells_t *c)
{
	free(c->c);
	memset(c, 0, sizeof(*c));
}

/* One judged value {value, ci95, point, over}; NULL when not one. */
static int eg__cell_read(const json_t *o, eg__page_cell_t *x)
{
	const json_t *ci = json_object_get(o, "ci95");

	x->id = json_string_value(json_object_get(o, "point"));
	x->over = json_string_value(json_object_get(o, "over"));
	x->v = json_number_value(json_object_get(o, "value"));
	x->lo = x->hi = NAN;
	x->st = EG__ST_NONE;
	x->series = -1;
	x->ref = 0;
	if (!x->id || !json_is_number(json_object_get(o, "value")))
		return -1;
	if (json_array_size(ci) == 2) {
		x->lo = json_number_value(json_array_get(ci, 0));
		x->hi = json_number_value(json_array_get(ci, 1));
	}
	return 0;
}

/* Where the exact values come from. */
typedef struct eg__src {
	const eg_results_t *files;
	size_t nf;
} eg__src_t;

/* Within the gate's own bounds: bound's [min, max], the band. */
static int eg__inside(const eg_gate_t *g, double v)
{
	if (g->rule == EG_RULE_BOUND)
		return !(v < g->min) && !(v > g->max);
	return v >= g->band[0] && v <= g->band[1];
}

/* The value the gate judged, exactly: the median at id, or the ratio of
 * the medians at id and over (what the engine divides). */
static void eg__exact(const eg_gate_t *g, const eg__src_t *src,
		      eg__page_cell_t *x)
{
	const eg_metric_t *a = NULL, *b = NULL;

	for (size_t f = 0; g->metric && f < src->nf; f++)
		for (size_t i = 0; i < src->files[f].n_points; i++) {
			const eg_point_t *p = &src->files[f].points[i];

			if (!a && !strcmp(p->id, x->id))
				a = eg_point_metric(p, g->metric);
			if (x->over && !b && !strcmp(p->id, x->over))
				b = eg_point_metric(p, g->metric);
		}
	if (a && !x->over)
		x->v = a->s.median;
	else if (a && b && b->s.median != 0)
		x->v = a->s.median / b->s.median;
}

/* Is the value at "at" one the gate listed outside (bound, parity)? */
static int eg__listed(const json_t *outside, const json_t *o)
{
	const char *at = json_string_value(json_object_get(o, "at"));
	size_t i;
	json_t *s;

	json_array_foreach(outside, i, s)
	{
		if (at && !strcmp(at, json_string_value(s)))
			return 1;
	}
	return 0;
}

/* The values of a list, each judged against the bounds: as the gate
 * listed them (bound, parity), else exactly as the rule compares; all
 * failed when the series failed as a whole (a flat rule's trend). */
static int eg__values(const eg_gate_t *g, const eg__src_t *src,
		      const json_t *vals, const json_t *outside, int series,
		      int series_failed, eg__cells_t *out)
{
	size_t i;
	json_t *o;

	json_array_foreach(vals, i, o)
	{
		eg__page_cell_t x;
		int bad;

		if (eg__cell_read(o, &x))
			continue;
		eg__exact(g, src, &x);
		x.series = series;
		bad = outside ? eg__listed(outside, o) : !eg__inside(g, x.v);
		x.st = series_failed || bad ? EG__ST_FAIL : EG__ST_PASS;
		if (eg__cells_push(out, &x))
			return EG_ENOMEM;
	}
	return EG_OK;
}

/* Bound and parity: the values the gate listed outside failed. */
static int eg__bounded(const eg_gate_t *g, const eg__src_t *src,
		       const json_t *d, eg__cells_t *out)
{
	json_t *none = json_array(); /* no "outside": all inside */
	const json_t *o = json_object_get(d, "outside");
	int rc = none ? eg__values(g, src, json_object_get(d, "values"),
				   o ? o : none, -1, 0, out)
		      : EG_ENOMEM;

	json_decref(none);
	return rc;
}

/* Did a trend series' change go the stated way? */
static int eg__trend_ok(const eg_gate_t *g, double change)
{
	if (g->direction == EG_TREND_UP || g->direction == EG_TREND_NOT_DOWN)
		return change >= g->factor;
	return change <= g->factor;
}

/* Trend and recovery: the reference (first, or low) is not judged;
 * the other end passes or fails by the series' factor. */
static int eg__ends(const eg_gate_t *g, const eg__src_t *src, const json_t *s,
		    int k, eg__cells_t *out)
{
	const json_t *vals = json_object_get(s, "values");
	const json_t *a, *b;
	eg__page_cell_t x, y;
	int ok;

	if (g->rule == EG_RULE_RECOVERY) {
		a = json_object_get(s, "at_low");
		b = json_object_get(s, "at_high");
		ok = json_number_value(json_object_get(s, "factor")) >=
		     g->min_factor;
	} else {
		a = json_array_get(vals, 0);
		b = json_array_get(vals, json_array_size(vals) - 1);
		ok = eg__trend_ok(
		    g, json_number_value(json_object_get(s, "change")));
	}
	if (!a || !b || a == b || eg__cell_read(a, &x) || eg__cell_read(b, &y))
		return EG_OK;
	eg__exact(g, src, &x);
	eg__exact(g, src, &y);
	x.series = y.series = k;
	x.ref = 1;
	y.st = ok ? EG__ST_PASS : EG__ST_FAIL;
	if (eg__cells_push(out, &x) || eg__cells_push(out, &y))
		return EG_ENOMEM;
	return EG_OK;
}

/* Regression: one comparison per current point (named by its baseline
 * twin's id, which the campaigns share). */
static int eg__comparisons(const eg_gate_t *g, const eg__src_t *src,
			   const json_t *cmp, eg__cells_t *out)
{
	size_t i;
	json_t *o;

	json_array_foreach(cmp, i, o)
	{
		const char *v =
		    json_string_value(json_object_get(o, "verdict"));
		eg__page_cell_t x = {.lo = NAN, .hi = NAN, .series = -1};

		x.id = json_string_value(json_object_get(o, "baseline"));
		x.v = json_number_value(json_object_get(o, "median"));
		if (!x.id || !v)
			continue;
		eg__exact(g, src, &x);
		x.st = !strcmp(v, "pass")   ? EG__ST_PASS
		       : !strcmp(v, "fail") ? EG__ST_FAIL
					    : EG__ST_NONE;
		if (eg__cells_push(out, &x))
			return EG_ENOMEM;
	}
	return EG_OK;
}

int eg__gate_cells(const eg__gres_t *gr, const eg_results_t *files, size_t nf,
		   eg__cells_t *out)
{
	const eg_gate_t *g = gr->g;
	const eg__src_t src = {files, nf};
	const json_t *d, *series, *s;
	size_t k;
	int rc = EG_OK;

	memset(out, 0, sizeof(*out));
	if (gr->hard || gr->res.verdict == EG_VERDICT_SKIP || !gr->res.diag)
		return EG_OK;
	d = gr->res.diag;
	series = json_object_get(d, "series");
	switch (g->rule) {
	case EG_RULE_BOUND:
	case EG_RULE_PARITY:
		return eg__bounded(g, &src, d, out);
	case EG_RULE_FLAT:
		json_array_foreach(series, k, s)
		{
			int trend = json_is_true(json_object_get(s, "trend"));

			if (!rc)
				rc = eg__values(g, &src,
						json_object_get(s, "values"),
						NULL, (int)k, trend, out);
		}
		return rc;
	case EG_RULE_TREND:
	case EG_RULE_RECOVERY:
		json_array_foreach(series, k, s)
		{
			if (!rc)
				rc = eg__ends(g, &src, s, (int)k, out);
		}
		return rc;
	case EG_RULE_REGRESSION:
		return eg__comparisons(g, &src,
				       json_object_get(d, "comparisons"), out);
	default:
		return EG_OK;
	}
}
