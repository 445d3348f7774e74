/* The values a gate judged, read back from its diagnostics (the same
 * YAML the TAP carries), each with the point it belongs to and whether
 * it passed: what the charts colour.  The verdict itself stays the gate
 * engine's; a value is marked failed only where the gate's own
 * threshold says so, or where its series failed the gate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/report/page.h"

static int eg__cells_push(eg__cells_t *c, const eg__cell_t *x)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		eg__cell_t *p = realloc(c->c, cap * sizeof(*p));

		if (!p)
			return EG_ENOMEM;
		c->c = p;
		c->cap = cap;
	}
	c->c[c->n++] = *x;
	return EG_OK;
}

void eg__cells_fini(eg__cells_t *c)
{
	free(c->c);
	memset(c, 0, sizeof(*c));
}

/* One judged value {value, ci95, point, over}; NULL when not one. */
static int eg__cell_read(const json_t *o, eg__cell_t *x)
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

/* Within the gate's own bounds: bound's [min, max], the band. */
static int eg__inside(const eg_gate_t *g, double v)
{
	if (g->rule == EG_RULE_BOUND)
		return !(v < g->min) && !(v > g->max);
	return v >= g->band[0] && v <= g->band[1];
}

/* The values of a list, each judged against the bounds (all failed
 * when the series failed as a whole: a flat rule's trend). */
static int eg__values(const eg_gate_t *g, const json_t *vals, int series,
		      int series_failed, eg__cells_t *out)
{
	size_t i;
	json_t *o;

	json_array_foreach(vals, i, o)
	{
		eg__cell_t x;

		if (eg__cell_read(o, &x))
			continue;
		x.series = series;
		x.st = series_failed || !eg__inside(g, x.v) ? EG__ST_FAIL
							    : EG__ST_PASS;
		if (eg__cells_push(out, &x))
			return EG_ENOMEM;
	}
	return EG_OK;
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
static int eg__ends(const eg_gate_t *g, const json_t *s, int k,
		    eg__cells_t *out)
{
	const json_t *vals = json_object_get(s, "values");
	const json_t *a, *b;
	eg__cell_t x, y;
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
	x.series = y.series = k;
	x.ref = 1;
	y.st = ok ? EG__ST_PASS : EG__ST_FAIL;
	if (eg__cells_push(out, &x) || eg__cells_push(out, &y))
		return EG_ENOMEM;
	return EG_OK;
}

/* Regression: one comparison per current point (named by its baseline
 * twin's id, which the campaigns share). */
static int eg__comparisons(const json_t *cmp, eg__cells_t *out)
{
	size_t i;
	json_t *o;

	json_array_foreach(cmp, i, o)
	{
		const char *v =
		    json_string_value(json_object_get(o, "verdict"));
		eg__cell_t x = {.lo = NAN, .hi = NAN, .series = -1};

		x.id = json_string_value(json_object_get(o, "baseline"));
		x.v = json_number_value(json_object_get(o, "median"));
		if (!x.id || !v)
			continue;
		x.st = !strcmp(v, "pass")   ? EG__ST_PASS
		       : !strcmp(v, "fail") ? EG__ST_FAIL
					    : EG__ST_NONE;
		if (eg__cells_push(out, &x))
			return EG_ENOMEM;
	}
	return EG_OK;
}

int eg__gate_cells(const eg__gres_t *gr, eg__cells_t *out)
{
	const eg_gate_t *g = gr->g;
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
		return eg__values(g, json_object_get(d, "values"), -1, 0, out);
	case EG_RULE_FLAT:
		json_array_foreach(series, k, s)
		{
			int trend = json_is_true(json_object_get(s, "trend"));

			if (!rc)
				rc = eg__values(g, json_object_get(s, "values"),
						(int)k, trend, out);
		}
		return rc;
	case EG_RULE_TREND:
	case EG_RULE_RECOVERY:
		json_array_foreach(series, k, s)
		{
			if (!rc)
				rc = eg__ends(g, s, (int)k, out);
		}
		return rc;
	case EG_RULE_REGRESSION:
		return eg__comparisons(json_object_get(d, "comparisons"), out);
	default:
		return EG_OK;
	}
}
