/* The sweep's table (lib/campaign/sweep.h, eg_bench_table): for people, one
 * block per sweep with the step's median and its 95% interval, the
 * phases, throughput, the a2a/dense ratios the profile's gates judge and
 * what bounds the point, every number in one fixed format per column
 * with its unit in the header; --wide: every metric with its interval;
 * --json: one JSON object per point, for machines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/gate.h"
#include "epgate/stats.h"
#include "lib/campaign/sweep.h"

#define EG__COLS_MAX 64
#define EG__CELL     64
#define EG__RATIOS   3

/* A column: header, unit scale and decimals, chosen from its values. */
typedef struct eg__col {
	char head[48];
	int text; /* left-aligned text, not a number */
	size_t width;
} eg__col_t;

typedef struct eg__tab {
	size_t ncols, nrows;
	eg__col_t col[EG__COLS_MAX];
	char (*cell)[EG__COLS_MAX][EG__CELL]; /* nrows rows */
} eg__tab_t;

/* A metric's unit and the scale its column shows it in. */
typedef struct eg__unit {
	const char *unit;
	double scale;
	int decimals;
} eg__unit_t;

/* The metric's base unit by name (docs/metrics.md). */
static const char *eg__base_unit(const char *m)
{
	size_t n = strlen(m);

	if (n > 3 && !strcmp(m + n - 3, "_us"))
		return "us";
	if (n > 5 && !strcmp(m + n - 5, "_gbps"))
		return "GB/s";
	if (!strcmp(m, "tok_s"))
		return "tok/s";
	if (n > 6 && !strcmp(m + n - 6, "_bytes"))
		return "B";
	if (strstr(m, "rate"))
		return "ops/s";
	return "";
}

/* The scale that keeps the column's largest value under 10000, then the
 * decimals that show 4 significant digits of it (at most 3). */
static eg__unit_t eg__unit_for(const char *base, double max)
{
	static const struct {
		const char *base, *unit;
		double scale, from;
	} up[] = {{"us", "ms", 1e3, 1e4},
		  {"tok/s", "Mtok/s", 1e6, 1e7},
		  {"tok/s", "ktok/s", 1e3, 1e4},
		  {"B", "MB", 1e6, 1e7},
		  {"B", "kB", 1e3, 1e4},
		  {"ops/s", "Mops/s", 1e6, 1e7},
		  {"ops/s", "kops/s", 1e3, 1e4},
		  {"GB/s", "MB/s", 1e-3, -1},
		  {NULL, NULL, 0, 0}};
	eg__unit_t u = {base, 1, 0};

	for (int i = 0; up[i].base; i++)
		if (!strcmp(base, up[i].base) &&
		    (up[i].from < 0 ? max < 1 : max >= up[i].from)) {
			u.unit = up[i].unit;
			u.scale = up[i].scale;
			break;
		}
	max /= u.scale;
	u.decimals = max > 0 ? 3 - (int)floor(log10(max)) : 0;
	if (u.decimals < 0)
		u.decimals = 0;
	if (u.decimals > 3)
		u.decimals = 3;
	return u;
}

static void eg__unit_numn(char *buf, size_t len, double v, const eg__unit_t *u)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", u->decimals, v / u->scale);
}

static void eg__unit_cell(char *buf, double v, const eg__unit_t *u)
{
	eg__unit_numn(buf, EG__CELL, v, u);
}

/* The dense point with a2a point p's suite and axes, or NULL. */
static const eg_point_t *eg__twin(const eg_results_t *r, const eg_point_t *p)
{
	for (size_t i = 0; i < r->n_points; i++) {
		const eg_point_t *q = &r->points[i];

		if (!strcmp(q->arm, "dense") && !strcmp(q->suite, p->suite) &&
		    json_equal(q->axes, p->axes))
			return q;
	}
	return NULL;
}

double eg_bench_point_median(const eg_point_t *p, const char *name)
{
	const eg_metric_t *m = eg_point_metric(p, name);

	if (!m)
		return NAN;
	return m->n_samples ? eg_stats_median(m->samples, m->n_samples)
			    : m->s.median;
}

static double eg__median(const eg_point_t *p, const char *m)
{
	const eg_metric_t *x = p ? eg_point_metric(p, m) : NULL;

	return x ? x->s.median : NAN;
}

/* a2a/dense of metric m at a2a point p; NAN when either is missing. */
static double eg__ratio(const eg_results_t *r, const eg_point_t *p,
			const char *m)
{
	const eg_point_t *q;
	double a, d;

	if (strcmp(p->arm, "a2a") || !(q = eg__twin(r, p)))
		return NAN;
	a = eg__median(p, m);
	d = eg__median(q, m);
	if (isnan(a) || isnan(d))
		return NAN;
	return d != 0 ? a / d : (a == 0 ? 1.0 : NAN);
}

/* The metrics the profile's gates judge as a2a/dense ratios (tok_s when
 * none does, or the file cannot be read). */
static size_t eg__ratio_metrics(const char *gates, char m[][32])
{
	eg_gate_file_t gf;
	char err[512];
	size_t n = 0;

	if (gates && eg_gate_file_load(&gf, gates, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < gf.n_gates && n < EG__RATIOS; i++) {
			const eg_gate_t *g = &gf.gates[i];
			size_t k;

			if (!g->metric || !g->ratio[0] ||
			    strcmp(g->ratio[0], "a2a") ||
			    strcmp(g->ratio[1], "dense"))
				continue;
			for (k = 0; k < n && strcmp(m[k], g->metric); k++)
				;
			if (k == n)
				snprintf(m[n++], 32, "%s", g->metric);
		}
		eg_gate_file_free(&gf);
	}
	if (!n)
		snprintf(m[n++], 32, "tok_s");
	return n;
}

/* ---- cells and their printing ------------------------------------------ */

static int eg__col(eg__tab_t *t, int text, const char *fmt, const char *a,
		   const char *b)
{
	eg__col_t *c;

	if (t->ncols >= EG__COLS_MAX)
		return -1;
	c = &t->col[t->ncols];
	snprintf(c->head, sizeof(c->head), fmt, a, b);
	c->text = text;
	return (int)t->ncols++;
}

/* The largest median of metric m over the points (the column's scale). */
static double eg__max(const eg_results_t *r, const char *m)
{
	double max = 0;

	for (size_t i = 0; i < r->n_points; i++) {
		double v = eg__median(&r->points[i], m);

		if (!isnan(v) && fabs(v) > max)
			max = fabs(v);
	}
	return max;
}

/* A metric's median in column c and, with ci >= 0, its interval in
 * column ci ("[lo, hi]"), for every point. */
static void eg__metric_cols(eg__tab_t *t, const eg_results_t *r, const char *m,
			    const eg__unit_t *u, int c, int ci)
{
	for (size_t i = 0; i < r->n_points; i++) {
		const eg_metric_t *x = eg_point_metric(&r->points[i], m);
		char lo[24], hi[24];

		eg__unit_cell(t->cell[i][c], x ? x->s.median : NAN, u);
		if (ci < 0)
			continue;
		if (!x || isnan(x->s.ci_lo) || x->s.n < 2) {
			snprintf(t->cell[i][ci], EG__CELL, "-");
			continue;
		}
		eg__unit_numn(lo, sizeof(lo), x->s.ci_lo, u);
		eg__unit_numn(hi, sizeof(hi), x->s.ci_hi, u);
		snprintf(t->cell[i][ci], EG__CELL, "[%s, %s]", lo, hi);
	}
}

static void eg__ratio_col(eg__tab_t *t, const eg_results_t *r, const char *m)
{
	static const eg__unit_t u = {"", 1, 3};
	int c = eg__col(t, 0, "a2a/%s%s", "dense ", m);

	for (size_t i = 0; c >= 0 && i < r->n_points; i++)
		eg__unit_cell(t->cell[i][c], eg__ratio(r, &r->points[i], m),
			      &u);
}

static const char *eg__ev(const eg_point_t *p, const char *k)
{
	const char *s = p->evidence
			    ? json_string_value(json_object_get(p->evidence, k))
			    : NULL;

	return s ? s : "-";
}

static void eg__print(FILE *f, const eg__tab_t *t, const eg_results_t *r,
		      int blocks)
{
	const char *suite = NULL;

	for (size_t c = 0; c < t->ncols; c++) {
		size_t w = strlen(t->col[c].head);

		for (size_t i = 0; i < t->nrows; i++)
			if (strlen(t->cell[i][c]) > w)
				w = strlen(t->cell[i][c]);
		((eg__tab_t *)t)->col[c].width = w;
	}
	for (size_t i = 0; i <= t->nrows; i++) {
		if (i && blocks &&
		    (!suite || strcmp(suite, r->points[i - 1].suite))) {
			suite = r->points[i - 1].suite;
			fprintf(f, "sweep %s\n", suite);
		}
		for (size_t c = 0; c < t->ncols; c++) {
			const eg__col_t *col = &t->col[c];
			const char *s = i ? t->cell[i - 1][c] : col->head;

			if (c + 1 == t->ncols && col->text)
				fprintf(f, "  %s", s); /* no trailing blanks */
			else
				fprintf(f, "  %*s",
					col->text ? -(int)col->width
						  : (int)col->width,
					s);
		}
		fputc('\n', f);
	}
}

/* ---- the three forms ---------------------------------------------------- */

/* The point's label within its sweep: "concurrency=8" of
 * "concurrency/a2a/concurrency=8". */
static const char *eg__label(const eg_point_t *p)
{
	size_t n = strlen(p->suite), a = strlen(p->arm);

	if (!strncmp(p->id, p->suite, n) && p->id[n] == '/' &&
	    !strncmp(p->id + n + 1, p->arm, a) && p->id[n + 1 + a] == '/')
		return p->id + n + a + 2;
	return p->id;
}

static void eg__people(FILE *f, eg__tab_t *t, const eg_results_t *r,
		       char ratios[][32], size_t nr)
{
	eg__unit_t ut = eg__unit_for("us", eg__max(r, "step_us"));
	eg__unit_t uk = eg__unit_for("tok/s", eg__max(r, "tok_s"));
	int cp = eg__col(t, 1, "%s%s", "point", "");
	int ca = eg__col(t, 1, "%s%s", "arm", "");
	int cs = eg__col(t, 0, "step (%s)%s", ut.unit, "");
	int ci = eg__col(t, 0, "%s%s", "95% CI", "");
	int cd = eg__col(t, 0, "dispatch (%s)%s", ut.unit, "");
	int cc = eg__col(t, 0, "combine (%s)%s", ut.unit, "");
	int ck = eg__col(t, 0, "%s%s", uk.unit, "");
	int cb, cw;

	for (size_t i = 0; i < r->n_points; i++) {
		snprintf(t->cell[i][cp], EG__CELL, "%s",
			 eg__label(&r->points[i]));
		snprintf(t->cell[i][ca], EG__CELL, "%s", r->points[i].arm);
	}
	eg__metric_cols(t, r, "step_us", &ut, cs, ci);
	eg__metric_cols(t, r, "dispatch_us", &ut, cd, -1);
	eg__metric_cols(t, r, "combine_us", &ut, cc, -1);
	eg__metric_cols(t, r, "tok_s", &uk, ck, -1);
	for (size_t k = 0; k < nr; k++)
		eg__ratio_col(t, r, ratios[k]);
	/* where each arm's times were taken (docs/metrics.md, "Boundaries"):
	 * a library's window beside an engine's call is said, not hidden */
	cw = eg__col(t, 1, "%s%s", "timed at", "");
	for (size_t i = 0; cw >= 0 && i < r->n_points; i++)
		snprintf(t->cell[i][cw], EG__CELL, "%s",
			 eg__ev(&r->points[i], "boundary"));
	cb = eg__col(t, 1, "%s%s", "bound", "");
	for (size_t i = 0; cb >= 0 && i < r->n_points; i++)
		snprintf(t->cell[i][cb], EG__CELL, "%s",
			 eg__ev(&r->points[i], "bound"));
	fprintf(f, "medians over the timed steps, the step's 95%% interval "
		   "beside it; the slowest rank's time per step "
		   "(docs/metrics.md)\n");
	eg__print(f, t, r, 1);
}

/* Every metric of any point, in the order they first appear. */
static size_t eg__all_metrics(const eg_results_t *r, const char **m, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_points; i++)
		for (size_t k = 0; k < r->points[i].n_metrics; k++) {
			const char *name = r->points[i].metrics[k].name;
			size_t j;

			for (j = 0; j < n && strcmp(m[j], name); j++)
				;
			if (j == n && n < cap)
				m[n++] = name;
		}
	return n;
}

static void eg__wide(FILE *f, eg__tab_t *t, const eg_results_t *r,
		     char ratios[][32], size_t nr)
{
	static const char *const ev[] = {"transport_class", "provider", "bound",
					 NULL};
	const char *m[20];
	size_t nm = eg__all_metrics(r, m, 20);
	int cp = eg__col(t, 1, "%s%s", "point", "");

	for (size_t i = 0; i < r->n_points; i++)
		snprintf(t->cell[i][cp], EG__CELL, "%s", r->points[i].id);
	for (size_t k = 0; k < nm; k++) {
		eg__unit_t u =
		    eg__unit_for(eg__base_unit(m[k]), eg__max(r, m[k]));
		int c = eg__col(t, 0, "%s (%s)", m[k], u.unit);
		int ci = eg__col(t, 0, "%s%s", m[k], " 95% CI");

		if (!*u.unit)
			snprintf(t->col[c].head, sizeof(t->col[c].head), "%s",
				 m[k]);
		if (c >= 0 && ci >= 0)
			eg__metric_cols(t, r, m[k], &u, c, ci);
	}
	for (size_t k = 0; k < nr; k++)
		eg__ratio_col(t, r, ratios[k]);
	for (int e = 0; ev[e]; e++) {
		int c = eg__col(t, 1, "%s%s", ev[e], "");

		for (size_t i = 0; c >= 0 && i < r->n_points; i++)
			snprintf(t->cell[i][c], EG__CELL, "%s",
				 eg__ev(&r->points[i], ev[e]));
	}
	eg__print(f, t, r, 0);
}

/* One JSON object per point: medians, intervals, the ratios, evidence. */
static void eg__json(FILE *f, const eg_results_t *r, char ratios[][32],
		     size_t nr)
{
	for (size_t i = 0; i < r->n_points; i++) {
		const eg_point_t *p = &r->points[i];
		json_t *o =
		    json_pack("{s:s, s:s, s:s, s:O}", "id", p->id, "suite",
			      p->suite, "arm", p->arm, "axes", p->axes);
		json_t *ms = json_object(), *rs = json_object();
		char *txt;

		for (size_t k = 0; k < p->n_metrics; k++) {
			const eg_summary_t *s = &p->metrics[k].s;

			json_object_set_new(
			    ms, p->metrics[k].name,
			    s->n > 1 && !isnan(s->ci_lo)
				? json_pack("{s:f, s:f, s:f, s:s}", "median",
					    s->median, "ci_lo", s->ci_lo,
					    "ci_hi", s->ci_hi, "unit",
					    eg__base_unit(p->metrics[k].name))
				: json_pack("{s:f, s:s}", "median", s->median,
					    "unit",
					    eg__base_unit(p->metrics[k].name)));
		}
		for (size_t k = 0; k < nr; k++) {
			double v = eg__ratio(r, p, ratios[k]);

			if (!isnan(v))
				json_object_set_new(rs, ratios[k],
						    json_real(v));
		}
		json_object_set_new(o, "metrics", ms);
		json_object_set_new(o, "a2a_over_dense", rs);
		if (p->evidence)
			json_object_set(o, "evidence", p->evidence);
		if ((txt = json_dumps(o, JSON_COMPACT))) {
			fprintf(f, "%s\n", txt);
			free(txt);
		}
		json_decref(o);
	}
}

void eg_bench_table(FILE *f, const eg_results_t *r, const char *gates,
		    eg_bench_table_t form)
{
	char ratios[EG__RATIOS][32];
	size_t nr = eg__ratio_metrics(gates, ratios);
	eg__tab_t t = {.nrows = r->n_points};

	if (form == EG_TABLE_JSON) {
		eg__json(f, r, ratios, nr);
		return;
	}
	if (!r->n_points)
		return;
	t.cell = calloc(r->n_points, sizeof(*t.cell));
	if (!t.cell)
		return;
	if (form == EG_TABLE_WIDE)
		eg__wide(f, &t, r, ratios, nr);
	else
		eg__people(f, &t, r, ratios, nr);
	free(t.cell);
	fflush(f);
}
