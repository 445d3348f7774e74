/* The charts of a profile: for every suite (sweep), its metric per arm
 * against the suite's axis, and the ratio wherever a gate judges one,
 * each point with its interval and coloured by the gates that judged
 * it, and the gates' bands, bounds and targets drawn on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "lib/page/page.h"

typedef struct eg__key {
	const char *metric, *num, *den; /* num, den: a ratio's arms */
} eg__key_t;

#define EG__KEYS_MAX 16

static int eg__key_eq(const eg__key_t *a, const eg__key_t *b)
{
	return !strcmp(a->metric, b->metric) && !a->num == !b->num &&
	       (!a->num ||
		(!strcmp(a->num, b->num) && !strcmp(a->den, b->den)));
}

static eg__key_t eg__gate_key(const eg_gate_t *g)
{
	return (eg__key_t){g->metric, g->ratio[0], g->ratio[1]};
}

int eg__page_gate_judges(const eg__prof_t *p, size_t i, const char *suite)
{
	const eg__cells_t *c = p->cells ? &p->cells[i] : NULL;

	for (size_t k = 0; c && k < c->n; k++) {
		const eg_point_t *pt = eg__prof_point(p, c->c[k].id);

		if (pt && !strcmp(pt->suite, suite))
			return 1;
	}
	return 0;
}

static size_t eg__key_add(eg__key_t *keys, size_t n, eg__key_t k)
{
	for (size_t i = 0; i < n; i++)
		if (eg__key_eq(&keys[i], &k))
			return n;
	if (n < EG__KEYS_MAX)
		keys[n++] = k;
	return n;
}

/* Every point of the suite that has the metric has the same median. */
static int eg__constant(const eg__axes_t *a, const char *metric)
{
	double first = NAN;

	for (size_t i = 0; i < a->n; i++) {
		const eg_metric_t *m = eg_point_metric(a->pts[i], metric);

		if (!m)
			continue;
		if (isnan(first))
			first = m->s.median;
		else if (m->s.median != first)
			return 0;
	}
	return 1;
}

/* A metric every point would show when no gate judges the suite. */
static const char *eg__default_metric(const eg__axes_t *a)
{
	static const char *const pref[] = {"tok_s", "step_us", NULL};

	for (const char *const *m = pref; *m; m++)
		for (size_t i = 0; i < a->n; i++)
			if (eg_point_metric(a->pts[i], *m))
				return *m;
	return a->n && a->pts[0]->n_metrics ? a->pts[0]->metrics[0].name : NULL;
}

/* The charts of a suite: throughput per arm (what every sweep is
 * about), then each metric a gate judges, each followed by its ratio;
 * a metric that never changes (bytes that must stay 0) is a table row
 * and a verdict, not a chart. */
static size_t eg__keys(const eg__prof_t *p, const eg__axes_t *a,
		       const char *suite, eg__key_t *keys)
{
	eg__key_t flat[EG__KEYS_MAX], ratio[EG__KEYS_MAX];
	size_t nf = 0, nr = 0, n = 0;
	const char *first = eg__default_metric(a);

	if (first)
		flat[nf++] = (eg__key_t){first, NULL, NULL};
	for (size_t i = 0; p->have_gf && p->cells && i < p->gf.n_gates; i++) {
		const eg_gate_t *g = &p->gf.gates[i];

		if (!g->metric || !eg__page_gate_judges(p, i, suite))
			continue;
		nf = eg__key_add(flat, nf, (eg__key_t){g->metric, NULL, NULL});
		if (g->ratio[0])
			nr = eg__key_add(ratio, nr, eg__gate_key(g));
	}
	for (size_t i = 0; i < nf; i++) {
		if (!eg__constant(a, flat[i].metric) || nf + nr == 1)
			keys[n++] = flat[i];
		for (size_t k = 0; k < nr && n < EG__KEYS_MAX; k++)
			if (!strcmp(ratio[k].metric, flat[i].metric))
				keys[n++] = ratio[k];
	}
	return n;
}

int eg__page_cell_status(const eg__prof_t *p, const char *metric,
			 const char *num, const char *den, const char *id,
			 const eg__page_cell_t **cell)
{
	eg__key_t k = {metric, num, den};
	int st = EG__ST_NONE;

	if (cell)
		*cell = NULL;
	for (size_t i = 0; p->have_gf && p->cells && i < p->gf.n_gates; i++) {
		eg__key_t gk = eg__gate_key(&p->gf.gates[i]);

		if (!gk.metric || !eg__key_eq(&gk, &k))
			continue;
		for (size_t j = 0; j < p->cells[i].n; j++) {
			const eg__page_cell_t *x = &p->cells[i].c[j];

			if (strcmp(x->id, id))
				continue;
			if (cell && !*cell)
				*cell = x;
			st = x->st > st ? x->st : st;
		}
	}
	return st;
}

/* The worst status the gates of key gave point id (FAIL > PASS). */
static int eg__status(const eg__prof_t *p, const eg__key_t *k, const char *id)
{
	return eg__page_cell_status(p, k->metric, k->num, k->den, id, NULL);
}

static int eg__arm_color(const char *arm)
{
	if (!strcmp(arm, "a2a"))
		return 0;
	if (!strcmp(arm, "dense"))
		return 1;
	return 2 + (int)(strlen(arm) % 5);
}

/* Line style of a series' split values: one dash pattern each. */
static int eg__dash(json_t *dashes, const char *split)
{
	json_t *d = json_object_get(dashes, split);
	size_t n = json_object_size(dashes);

	if (d)
		return (int)json_integer_value(d);
	json_object_set_new(dashes, split, json_integer((json_int_t)(n % 8)));
	return (int)(n % 8);
}

/* A point without the chart's axis (dense does not vary along
 * num_comms): its median as a line across, "what the other arm does". */
static int eg__ref(eg__chart_t *c, const eg__axes_t *a, const eg_point_t *pt,
		   const eg_metric_t *m)
{
	eg__mark_t *k = eg__chart_mark(c, EG__MK_REF, m->s.median, NAN);
	char v[32];

	if (!k)
		return EG_ENOMEM;
	k->color = eg__arm_color(pt->arm);
	snprintf(k->label, sizeof(k->label), "%s (any %s): %s", pt->arm, a->x,
		 eg_fmt_num(m->s.median, v, sizeof(v)));
	return EG_OK;
}

/* The arms' medians with their intervals. */
static int eg__fill_metric(const eg__prof_t *p, const eg__axes_t *a,
			   const eg__key_t *k, eg__chart_t *c)
{
	json_t *dashes = json_object();
	int rc = dashes ? EG_OK : EG_ENOMEM;

	for (size_t i = 0; !rc && i < a->n; i++) {
		const eg_point_t *pt = a->pts[i];
		const eg_metric_t *m = eg_point_metric(pt, k->metric);
		char label[160], split[160];
		double x;
		int s, dash;

		if (!m)
			continue;
		eg__page_axes_label(a, pt, pt->arm, label, sizeof(label));
		eg__page_axes_label(a, pt, "", split, sizeof(split));
		dash = 1 + eg__dash(dashes, split);
		s = eg__page_axes_x(a, c, pt, pt->arm, &x);
		if (s == 1) { /* not along the axis: a line across */
			rc = eg__ref(c, a, pt, m);
			continue;
		}
		if (s < 0 ||
		    (s = eg__chart_series(c, label, eg__arm_color(pt->arm),
					  dash)) < 0 ||
		    eg__page_series_add(&c->s[s], x, m->s.median, m->s.ci_lo,
					m->s.ci_hi, eg__status(p, k, pt->id)))
			rc = EG_ENOMEM;
	}
	json_decref(dashes);
	return rc;
}

/* The ratios the gates of k judged in the suite, once each. */
static int eg__fill_ratio(const eg__prof_t *p, const eg__axes_t *a,
			  const eg__key_t *k, eg__chart_t *c)
{
	json_t *seen = json_object();

	for (size_t i = 0; seen && p->cells && i < p->gf.n_gates; i++) {
		eg__key_t gk = eg__gate_key(&p->gf.gates[i]);

		if (!gk.metric || !eg__key_eq(&gk, k))
			continue;
		for (size_t j = 0; j < p->cells[i].n; j++) {
			const eg__page_cell_t *x = &p->cells[i].c[j];
			const eg_point_t *pt = eg__prof_point(p, x->id);
			char label[160];
			double xv;
			int s;

			if (!pt || strcmp(pt->suite, a->pts[0]->suite) ||
			    json_object_get(seen, x->id))
				continue;
			json_object_set_new(seen, x->id, json_true());
			eg__page_axes_label(a, pt, "", label, sizeof(label));
			if (!label[0])
				snprintf(label, sizeof(label), "%s/%s", k->num,
					 k->den);
			if (eg__page_axes_x(a, c, pt, label, &xv) != 0 ||
			    (s = eg__chart_series(c, label, 2 + (int)c->n_s,
						  1)) < 0 ||
			    eg__page_series_add(&c->s[s], xv, x->v, x->lo,
						x->hi,
						eg__status(p, k, x->id))) {
				json_decref(seen);
				return EG_ENOMEM;
			}
		}
	}
	json_decref(seen);
	return seen ? EG_OK : EG_ENOMEM;
}

/* Trend and recovery: each series' end must reach (or stay under) its
 * reference times the factor, drawn from the reference to the end. */
static int eg__targets(const eg__prof_t *p, const eg__axes_t *a, size_t gi,
		       eg__chart_t *c, int color)
{
	const eg_gate_t *g = &p->gf.gates[gi];
	const eg__cells_t *cl = &p->cells[gi];
	double f = g->rule == EG_RULE_RECOVERY ? g->min_factor : g->factor;
	int up = g->rule == EG_RULE_RECOVERY || g->direction == EG_TREND_UP ||
		 g->direction == EG_TREND_NOT_DOWN;
	char v[32], fb[32];

	for (size_t i = 0; i + 1 < cl->n; i++) {
		const eg__page_cell_t *r = &cl->c[i], *e = &cl->c[i + 1];
		const eg_point_t *pr = eg__prof_point(p, r->id);
		const eg_point_t *pe = eg__prof_point(p, e->id);
		eg__mark_t *m;
		double x0, x1;

		if (!r->ref || e->series != r->series || !pr || !pe ||
		    strcmp(pr->suite, a->pts[0]->suite) ||
		    eg__page_axes_x(a, c, pr, pr->arm, &x0) ||
		    eg__page_axes_x(a, c, pe, pe->arm, &x1))
			continue;
		m = eg__chart_mark(c,
				   up ? EG__MK_TARGET_MIN : EG__MK_TARGET_MAX,
				   r->v * f, NAN);
		if (!m)
			return EG_ENOMEM;
		m->x0 = x0;
		m->x1 = x1;
		m->color = color;
		m->fail = e->st == EG__ST_FAIL;
		snprintf(m->label, sizeof(m->label), "%s: %s %s\u00d7 %s = %s",
			 g->name, up ? "\u2265" : "\u2264",
			 eg_fmt_num(f, fb, sizeof(fb)),
			 g->rule == EG_RULE_RECOVERY ? "low" : "first",
			 eg_fmt_num(r->v * f, v, sizeof(v)));
	}
	return EG_OK;
}

/* What gate gi draws on chart c: its band, bound or targets. */
static int eg__gate_marks(const eg__prof_t *p, const eg__axes_t *a, size_t gi,
			  eg__chart_t *c, int color)
{
	const eg_gate_t *g = &p->gf.gates[gi];
	int fail = !p->gr[gi].hard && p->gr[gi].res.verdict == EG_VERDICT_FAIL;
	char lo[32], hi[32];
	eg__mark_t *m = NULL;

	switch (g->rule) {
	case EG_RULE_PARITY:
	case EG_RULE_FLAT:
		m = eg__chart_mark(c, EG__MK_BAND, g->band[0], g->band[1]);
		if (m)
			snprintf(m->label, sizeof(m->label), "%s: [%s, %s]",
				 g->name,
				 eg_fmt_num(g->band[0], lo, sizeof(lo)),
				 eg_fmt_num(g->band[1], hi, sizeof(hi)));
		break;
	case EG_RULE_BOUND:
		if (!isnan(g->min) &&
		    (m = eg__chart_mark(c, EG__MK_MIN, g->min, NAN)))
			snprintf(m->label, sizeof(m->label), "%s: \u2265 %s",
				 g->name, eg_fmt_num(g->min, lo, sizeof(lo)));
		if (m) {
			m->color = color;
			m->fail = fail;
		}
		if (!isnan(g->max) &&
		    (m = eg__chart_mark(c, EG__MK_MAX, g->max, NAN)))
			snprintf(m->label, sizeof(m->label), "%s: \u2264 %s",
				 g->name, eg_fmt_num(g->max, hi, sizeof(hi)));
		break;
	case EG_RULE_TREND:
	case EG_RULE_RECOVERY:
		return eg__targets(p, a, gi, c, color);
	default:
		return EG_OK;
	}
	if (m) {
		m->color = color;
		m->fail = fail;
	}
	return EG_OK;
}

/* A metric spanning more than 20x (tokens/s from 16 to 1024 tokens per
 * rank) reads better on a log scale. */
static int eg__want_logy(const eg__chart_t *c)
{
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; i < c->n_s; i++)
		for (size_t j = 0; j < c->s[i].n; j++) {
			double y = c->s[i].p[j].y;

			if (!(y > 0))
				return 0;
			lo = y < lo ? y : lo;
			hi = y > hi ? y : hi;
		}
	return hi > 0 && hi >= 20 * lo;
}

/* Tics that also say what moves with x: "32" over "nodes=4". */
static int eg__covary_tics(const eg__axes_t *a, eg__chart_t *c)
{
	for (size_t i = 0; i < a->n; i++) {
		const json_t *x = json_object_get(a->pts[i]->axes, a->x);
		char label[160], v[64];
		size_t n;

		if (!json_is_number(x))
			continue;
		n = (size_t)snprintf(label, sizeof(label), "%g",
				     json_number_value(x));
		for (size_t k = 0; k < a->n_covary && n < sizeof(label); k++)
			n += (size_t)snprintf(
			    label + n, sizeof(label) - n, "\n%s=%s",
			    a->covary[k],
			    eg__page_axis_str(
				json_object_get(a->pts[i]->axes, a->covary[k]),
				v, sizeof(v)));
		if (eg__chart_tic(c, json_number_value(x), label))
			return EG_ENOMEM;
	}
	return EG_OK;
}

/* One chart of the suite: the points, then what each gate draws. */
static int eg__chart(eg__prof_t *p, const eg__axes_t *a, const char *suite,
		     const eg__key_t *k, eg__chart_t *c)
{
	size_t n = 0;
	int color = 0, rc;

	if (k->num)
		snprintf(c->ylabel, sizeof(c->ylabel), "%s %s/%s", k->metric,
			 k->num, k->den);
	else if (*eg__page_unit(k->metric))
		snprintf(c->ylabel, sizeof(c->ylabel), "%s (%s)", k->metric,
			 eg__page_unit(k->metric));
	else
		snprintf(c->ylabel, sizeof(c->ylabel), "%s", k->metric);
	snprintf(c->xlabel, sizeof(c->xlabel), "%s", a->xlabel);
	snprintf(c->title, sizeof(c->title), "%s: %s by %s", suite, c->ylabel,
		 a->x ? a->x : "arm");
	if (a->x && a->x_numeric && a->n_covary && eg__covary_tics(a, c))
		return EG_ENOMEM;
	c->cat = !a->x || !a->x_numeric;
	c->by_arm = !a->x;
	c->logx = a->logx;
	rc = k->num ? eg__fill_ratio(p, a, k, c) : eg__fill_metric(p, a, k, c);
	c->logy = !k->num && eg__want_logy(c);
	if (!rc && k->num && !eg__chart_mark(c, EG__MK_TIE, 1, NAN))
		rc = EG_ENOMEM;
	for (size_t i = 0; !rc && p->cells && i < p->gf.n_gates; i++) {
		eg__key_t gk = eg__gate_key(&p->gf.gates[i]);

		if (!gk.metric || !eg__key_eq(&gk, k) ||
		    !eg__page_gate_judges(p, i, suite))
			continue;
		rc = eg__gate_marks(p, a, i, c, color++);
		n +=
		    (size_t)snprintf(c->gates + n, sizeof(c->gates) - n, "%s%s",
				     n ? ", " : "", p->gf.gates[i].name);
		if (n >= sizeof(c->gates))
			n = sizeof(c->gates) - 1;
	}
	return rc;
}

/* Table columns: every metric charted, then the ratios ("m a/b"). */
static int eg__columns(eg__psuite_t *s, const eg__key_t *keys, size_t n)
{
	s->cols = calloc(n + 1, sizeof(*s->cols));
	if (!s->cols)
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char buf[256];

		if (keys[i].num)
			snprintf(buf, sizeof(buf), "%s %s/%s", keys[i].metric,
				 keys[i].num, keys[i].den);
		else
			snprintf(buf, sizeof(buf), "%s", keys[i].metric);
		if (!(s->cols[s->n_cols++] = strdup(buf)))
			return EG_ENOMEM;
	}
	return EG_OK;
}

/* The axis a gate judging the suite looks along, if any. */
static const char *eg__gate_axis(const eg__prof_t *p, const char *suite)
{
	for (size_t i = 0; p->have_gf && p->cells && i < p->gf.n_gates; i++)
		if (p->gf.gates[i].axis && eg__page_gate_judges(p, i, suite))
			return p->gf.gates[i].axis;
	return NULL;
}

static int eg__suite(eg__prof_t *p, eg__psuite_t *s, unsigned *next)
{
	eg__key_t keys[EG__KEYS_MAX];
	eg__axes_t a;
	size_t n;
	int rc = eg__page_axes_of(p, s->name, eg__gate_axis(p, s->name), &a);

	if (rc)
		return rc;
	snprintf(s->axis, sizeof(s->axis), "%s", a.x ? a.x : "");
	n = eg__keys(p, &a, s->name, keys);
	s->first_chart = p->n_ch;
	for (size_t i = 0; !rc && i < n; i++) {
		eg__chart_t *ch = eg__page_push(&p->ch, p->n_ch, sizeof(*ch));

		if (!ch) {
			rc = EG_ENOMEM;
			break;
		}
		p->n_ch++;
		snprintf(ch->id, sizeof(ch->id), "c%u", (*next)++);
		rc = eg__chart(p, &a, s->name, &keys[i], ch);
		s->n_charts++;
	}
	if (!rc)
		rc = eg__columns(s, keys, n);
	eg__page_axes_fini(&a);
	return rc;
}

int eg__prof_charts(eg__prof_t *p, unsigned *next)
{
	int rc = EG_OK;

	for (size_t f = 0; f < p->n_cur; f++)
		for (size_t i = 0; i < p->cur[f].n_points; i++) {
			const char *name = p->cur[f].points[i].suite;
			size_t k;
			eg__psuite_t *su;

			for (k = 0; k < p->n_su && strcmp(p->su[k].name, name);
			     k++)
				;
			if (k < p->n_su)
				continue;
			if (!(su = eg__page_push(&p->su, p->n_su, sizeof(*su))))
				return EG_ENOMEM;
			snprintf(su->name, sizeof(su->name), "%s", name);
			p->n_su++;
		}
	for (size_t i = 0; !rc && i < p->n_su; i++)
		rc = eg__suite(p, &p->su[i], next);
	return rc;
}
