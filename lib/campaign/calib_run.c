/* The calibration replay (lib/campaign/calib.h): every comparison CI would
 * make, made again through the gate engine on measured campaigns.
 * Rows: a mode (history: the last N clean campaigns; baseline: the one
 * clean campaign before; ab: the job's own arms), a metric, a statistic
 * and a gate (every point, corrected; or the geometric mean).  Columns:
 * false alarms on unchanged code, detection of the campaigns' times
 * scaled by 5% and 10% (real noise, known effect), detection of the
 * planted slowdowns, and the smallest scaling caught 95% of the time.
 * The re-measurement the orchestrator does is replayed: a campaign holds
 * more launches than are judged, and a gate that does not pass on the
 * judged ones gets the rest of its arm's launches before its verdict
 * stands (geometric-mean gates and the shipped gate file). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gate.h"
#include "lib/campaign/calib.h"

#define EG__METRICS	   "dispatch_us,step_us,combine_us"
#define EG__VIEW_RESAMPLES 200

static const char *const eg__stat[] = {"bootstrap", "mann-whitney"};
/* the gates per metric and statistic: every point, and the two
 * aggregates over the points */
#define EG__KINDS 3
static const char *const eg__kind[] = {"points", "geomean", "median"};
static const char *const eg__agg[] = {"none", "geomean", "median"};

/* The calibration gates of one campaign kind: per metric and statistic,
 * every point and the geometric mean; arm judged by history or baseline,
 * or versus [b, a]. */
static int eg__campaign_gates(const char *metrics, const char *arm,
			      const char *b, const char *a, eg_gate_file_t *gf,
			      char *err, size_t errlen)
{
	char *text = NULL, m[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return EG_ENOMEM;
	fprintf(f, "profile: calibration\ngates:\n");
	for (const char *s = metrics; s && *s;) {
		const char *item = s;
		int n = (int)eg_calib_item(&s);

		snprintf(m, sizeof(m), "%.*s", n, item);
		for (int st = 0; st < 2; st++)
			for (int g = 0; g < EG__KINDS; g++) {
				fprintf(
				    f,
				    "  - {name: %s.%s.%s, sentence: c, rule: "
				    "regression, metric: %s, statistic: %s, "
				    "aggregate: %s, ",
				    m, eg__stat[st], eg__kind[g], m,
				    eg__stat[st], eg__agg[g]);
				/* every point as bench ab judges it */
				if (b)
					fprintf(f,
						"versus: [\"%s\", \"%s\"]%s}\n",
						b, a,
						g ? "" : ", effect: estimate");
				else
					fprintf(f, "arms: [\"%s\"]}\n", arm);
			}
	}
	fclose(f);
	rc = eg_gate_file_parse(gf, text, len, "calibration.gate", err, errlen);
	free(text);
	return rc;
}

/* Verdicts of the gates of gf on d (a gate that errs: skip); with
 * geomean_only, the geometric-mean gates alone. */
static void eg__judge(const eg_gate_file_t *gf, const eg_gate_data_t *d,
		      eg_gate_verdict_t *v, json_t **ids, int geomean_only)
{
	char err[EG_GATE_ERR_MAX];

	for (size_t i = 0; i < gf->n_gates; i++) {
		eg_gate_result_t res;

		v[i] = EG_VERDICT_SKIP;
		if (ids)
			ids[i] = NULL;
		if ((geomean_only && gf->gates[i].aggregate == EG_AGG_NONE) ||
		    eg_gate_eval(gf, &gf->gates[i], d, &res, err, sizeof(err)) <
			0)
			continue;
		v[i] = res.verdict;
		if (ids)
			ids[i] = json_incref(res.remeasure);
		eg_gate_result_fini(&res);
	}
}

/* ---- the tallies -------------------------------------------------------- */

enum { EG__FA, EG__S5, EG__S10, EG__PL, EG__N };

typedef struct eg__row {
	unsigned n[EG__N], fail[EG__N];
	double realized[64];
	unsigned n_real;
	double mde; /* NAN: not scanned, INFINITY: over the scan */
} eg__row_t;

typedef struct eg__cal {
	const eg_calib_opts_t *o;
	eg_calib_camp_t *c;
	size_t n;
	unsigned judged, total;
	eg_results_t *views;   /* judged view of each clean campaign */
	eg__row_t rows[3][64]; /* mode x gate */
	size_t n_gates;
	eg_gate_file_t gf_prof; /* gates for profile campaigns */
	char names[64][96];
	unsigned shipped_n[2], shipped_fail[2]; /* clean, planted */
	char shipped_which[256];
	char metric[8][32]; /* the judged metrics */
	size_t n_metric;
	double real[3][8][128]; /* realized change of each planted slowdown */
	unsigned n_real[3][8];
	unsigned ab_n[2], ab_fail[2]; /* A/A, A/B flagged by bootstrap gates */
} eg__cal_t;

static void eg__count(eg__row_t *r, int col, eg_gate_verdict_t v)
{
	if (v == EG_VERDICT_SKIP) /* not judged (no baseline, --quick) */
		return;
	r->n[col]++;
	r->fail[col] += v == EG_VERDICT_FAIL;
}

/* The judged launches, the number of launches of the campaign. */
static unsigned eg__launches(const eg_results_t *r)
{
	size_t L = 1;

	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].n_passes > L)
			L = r->points[i].n_passes;
	return (unsigned)L;
}

/* The clean campaigns before i, the last `want` of them, into idx. */
static size_t eg__before(const eg__cal_t *k, size_t i, size_t want, size_t *idx)
{
	size_t n = 0;

	/* campaigns of the same kind of run: a history of profile runs
	 * for a profile run, of A/B jobs' arms for an arm (their levels
	 * differ: two arms share each launch there) */
	for (size_t j = i; j-- > 0 && n < want;)
		if (k->c[j].kind == EG_CALIB_CLEAN &&
		    k->c[j].derived == k->c[i].derived)
			idx[n++] = j;
	/* oldest first */
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		size_t t = idx[a];

		idx[a] = idx[b];
		idx[b] = t;
	}
	return n;
}

/* The baseline of campaign i in a mode: the judged views of the last N
 * clean campaigns (history) or of the one before (baseline); *nb = 0
 * when the history is short. */
static eg_results_t *eg__baseline(const eg__cal_t *k, size_t i, int mode,
				  size_t *nb)
{
	size_t want = mode == 0 ? k->o->history : 1, idx[256];
	eg_results_t *b;

	*nb = eg__before(k, i, want, idx);
	if (*nb < want || !(b = calloc(*nb, sizeof(*b)))) {
		*nb = 0;
		return NULL;
	}
	for (size_t j = 0; j < *nb; j++) {
		b[j] = k->views[idx[j]]; /* shallow: owned by k->views */
		b[j].history = mode == 0;
	}
	return b;
}

/* The ids of the points of arm in r. */
static json_t *eg__arm_ids(const eg_results_t *r, const char *arm)
{
	json_t *ids = json_array();

	for (size_t i = 0; ids && i < r->n_points; i++)
		if (!strcmp(r->points[i].arm, arm))
			json_array_append_new(ids,
					      json_string(r->points[i].id));
	return ids;
}

/* Campaign i of a profile judged in a mode, its arm's times scaled by
 * 1 + shift: v[g] per calibration gate, the geometric-mean gates after
 * re-measurement.  Returns 0, or 1 when there is no baseline yet. */
static int eg__profile_one(eg__cal_t *k, size_t i, int mode, double shift,
			   int remeasure, eg_gate_verdict_t *v)
{
	const eg_calib_camp_t *c = &k->c[i];
	const char *keep = k->o->metrics ? k->o->metrics : EG__METRICS;
	size_t nb;
	eg_results_t *b = eg__baseline(k, i, mode, &nb), v1, v2;
	eg_gate_data_t d = {&v1, 1, b, nb};
	json_t *ids;
	int redo = 0;

	if (!b)
		return 1;
	eg_calib_view(&c->r, k->judged, NULL, 0, keep, c->arm, shift,
		      EG__VIEW_RESAMPLES, &v1);
	eg__judge(&k->gf_prof, &d, v, NULL, k->o->quick);
	for (size_t g = 0; g < k->n_gates; g++)
		redo |= k->gf_prof.gates[g].aggregate != EG_AGG_NONE &&
			v[g] != EG_VERDICT_PASS;
	if (remeasure && redo && k->total > k->judged) {
		eg_gate_verdict_t w[64];

		ids = eg__arm_ids(&c->r, c->arm);
		eg_calib_view(&c->r, k->judged, ids, k->total, keep, c->arm,
			      shift, EG__VIEW_RESAMPLES, &v2);
		d.cur = &v2;
		eg__judge(&k->gf_prof, &d, w, NULL, 1);
		for (size_t g = 0; g < k->n_gates; g++)
			if (k->gf_prof.gates[g].aggregate != EG_AGG_NONE &&
			    v[g] != EG_VERDICT_PASS)
				v[g] = w[g];
		eg_results_free(&v2);
		json_decref(ids);
	}
	eg_results_free(&v1);
	free(b);
	return 0;
}

/* The change the geometric-mean gate of metric dispatch_us saw (the
 * realized size of a planted slowdown), from a bootstrap comparison. */
static double eg__realized(const eg_results_t *cur, const eg_results_t *base,
			   size_t nb, const eg_calib_camp_t *c,
			   const char *metric, int versus)
{
	eg_gate_file_t gf;
	char text[512], err[256];
	eg_gate_data_t d = {cur, 1, versus ? NULL : base, versus ? 0 : nb};
	eg_gate_result_t res;
	json_t *cmp;
	double ch = NAN;

	snprintf(text, sizeof(text),
		 "profile: c\ngates:\n  - {name: r, sentence: r, rule: "
		 "regression, metric: %s, aggregate: median, %s%s%s%s%s}\n",
		 metric, versus ? "versus: [\"" : "arms: [\"",
		 versus ? c->b : c->arm, versus ? "\", \"" : "\"]",
		 versus ? c->a : "", versus ? "\"]" : "");
	if (eg_gate_file_parse(&gf, text, strlen(text), "r", err, sizeof(err)))
		return NAN;
	if (!eg_gate_eval(&gf, &gf.gates[0], &d, &res, err, sizeof(err))) {
		cmp =
		    json_array_get(json_object_get(res.diag, "comparisons"), 0);
		if (json_is_number(json_object_get(cmp, "change_pct")))
			ch = json_number_value(
			    json_object_get(cmp, "change_pct"));
		eg_gate_result_fini(&res);
	}
	eg_gate_file_free(&gf);
	return ch;
}

/* An A/B campaign judged by its own arms, B's times scaled by 1 +
 * shift. */
static void eg__ab_one(eg__cal_t *k, size_t i, const eg_gate_file_t *gf,
		       double shift, eg_gate_verdict_t *v)
{
	const eg_calib_camp_t *c = &k->c[i];
	const char *keep = k->o->metrics ? k->o->metrics : EG__METRICS;
	eg_results_t v1;
	eg_gate_data_t d = {&v1, 1, NULL, 0};

	eg_calib_view(&c->r, 1u << 30, NULL, 0, keep, c->b, shift,
		      EG__VIEW_RESAMPLES, &v1);
	eg__judge(gf, &d, v, NULL, k->o->quick);
	eg_results_free(&v1);
}

/* The scenarios of one campaign into the rows of mode. */
static void eg__tally(eg__cal_t *k, int mode, int planted,
		      const eg_gate_verdict_t *v0, const eg_gate_verdict_t *v5,
		      const eg_gate_verdict_t *v10)
{
	for (size_t g = 0; g < k->n_gates; g++) {
		eg__row_t *r = &k->rows[mode][g];

		if (planted) {
			eg__count(r, EG__PL, v0[g]);
			continue;
		}
		eg__count(r, EG__FA, v0[g]);
		eg__count(r, EG__S5, v5[g]);
		eg__count(r, EG__S10, v10[g]);
	}
}

/* Was an A/B job flagged by the gates bench ab writes (bootstrap): the
 * median over the points, or any point (Holm over them; not judged with
 * --quick)? */
static void eg__ab_flag(eg__cal_t *k, const eg_gate_file_t *gf, int pl,
			const eg_gate_verdict_t *v)
{
	int flag = 0;

	for (size_t g = 0; g < gf->n_gates; g++)
		flag |= gf->gates[g].statistic == EG_REGRESS_BOOTSTRAP &&
			(gf->gates[g].aggregate == EG_AGG_MEDIAN ||
			 gf->gates[g].aggregate == EG_AGG_NONE) &&
			v[g] == EG_VERDICT_FAIL;
	k->ab_n[pl]++;
	k->ab_fail[pl] += (unsigned)flag;
}

/* The realized size of planted slowdown i, per metric: against its
 * history (profile) or its A arm (A/B). */
static void eg__planted_sizes(eg__cal_t *k, size_t i)
{
	const eg_calib_camp_t *c = &k->c[i];
	int versus = c->kind == EG_CALIB_AB, mode = versus ? 2 : 0;
	size_t nb = 0;
	eg_results_t *b = versus ? NULL : eg__baseline(k, i, 0, &nb), v1;

	if (!versus && !b)
		return;
	eg_calib_view(&c->r, versus ? 1u << 30 : k->total, NULL, 0, NULL, NULL,
		      0, EG__VIEW_RESAMPLES, &v1);
	for (size_t m = 0; m < k->n_metric; m++) {
		double ch = eg__realized(&v1, b, nb, c, k->metric[m], versus);

		if (!isnan(ch) && k->n_real[mode][m] < 128)
			k->real[mode][m][k->n_real[mode][m]++] = ch;
	}
	eg_results_free(&v1);
	free(b);
}

/* Every campaign in every mode it takes part in. */
static void eg__replay(eg__cal_t *k)
{
	eg_gate_verdict_t v0[64], v5[64], v10[64];

	for (size_t i = 0; i < k->n; i++) {
		const eg_calib_camp_t *c = &k->c[i];
		int pl = c->kind == EG_CALIB_PLANT || c->kind == EG_CALIB_AB;

		if (c->kind == EG_CALIB_CLEAN || c->kind == EG_CALIB_PLANT)
			/* --quick: the history, not one baseline */
			for (int mode = 0; mode < (k->o->quick ? 1 : 2);
			     mode++) {
				if (eg__profile_one(k, i, mode, 0, 1, v0))
					continue;
				if (!pl) {
					eg__profile_one(k, i, mode, 0.05, 1,
							v5);
					eg__profile_one(k, i, mode, 0.10, 1,
							v10);
				}
				eg__tally(k, mode, pl, v0, v5, v10);
			}
		else {
			eg_gate_file_t gf;
			char err[512];

			if (!c->a || !c->b ||
			    eg__campaign_gates(
				k->o->metrics ? k->o->metrics : EG__METRICS,
				NULL, c->b, c->a, &gf, err, sizeof(err)))
				continue;
			eg__ab_one(k, i, &gf, 0, v0);
			if (!pl) {
				eg__ab_one(k, i, &gf, 0.05, v5);
				eg__ab_one(k, i, &gf, 0.10, v10);
			}
			eg__tally(k, 2, pl, v0, v5, v10);
			eg__ab_flag(k, &gf, pl, v0);
			eg_gate_file_free(&gf);
		}
		if (pl)
			eg__planted_sizes(k, i);
	}
}

/* ---- the minimum detectable effect --------------------------------------- */

#define EG__MDE_MAX 40 /* percent */

/* Detections of the geometric-mean gates at 1..EG__MDE_MAX % on one
 * campaign's judged view (no re-measurement: the effect it takes to be
 * caught at once). */
static void eg__mde_one(eg__cal_t *k, size_t i, int mode,
			unsigned (*det)[EG__MDE_MAX + 1])
{
	const eg_calib_camp_t *c = &k->c[i];
	const char *keep = k->o->metrics ? k->o->metrics : EG__METRICS;
	const char *arm = mode == 2 ? c->b : c->arm;
	size_t nb = 0;
	eg_results_t *b = mode == 2 ? NULL : eg__baseline(k, i, mode, &nb), v1;
	eg_gate_data_t d = {&v1, 1, b, nb};
	eg_gate_file_t gf, *g = &k->gf_prof;
	eg_gate_verdict_t v[64];
	char err[256];
	double at = 1;

	if ((mode != 2 && !b) ||
	    (mode == 2 &&
	     eg__campaign_gates(keep, NULL, c->b, c->a, &gf, err, sizeof(err))))
		goto out;
	if (mode == 2)
		g = &gf;
	eg_calib_view(&c->r, mode == 2 ? 1u << 30 : k->judged, NULL, 0, keep,
		      NULL, 0, EG__VIEW_RESAMPLES, &v1);
	for (int s = 1; s <= EG__MDE_MAX; s++) {
		eg_calib_scale(&v1, arm, (1 + s / 100.0) / at);
		at = 1 + s / 100.0;
		eg__judge(g, &d, v, NULL, 1);
		for (size_t q = 0; q < k->n_gates; q++)
			det[q][s] += v[q] == EG_VERDICT_FAIL;
	}
	eg_results_free(&v1);
	if (mode == 2)
		eg_gate_file_free(&gf);
out:
	free(b);
}

static void eg__mde(eg__cal_t *k, int mode)
{
	unsigned det[64][EG__MDE_MAX + 1] = {{0}}, pop = 0;

	for (size_t i = 0; i < k->n; i++) {
		const eg_calib_camp_t *c = &k->c[i];
		size_t idx[256];

		if (mode == 2
			? c->kind != EG_CALIB_AA
			: c->kind != EG_CALIB_CLEAN ||
			      eg__before(k, i, mode ? 1 : k->o->history, idx) <
				  (mode ? 1 : k->o->history))
			continue;
		pop++;
		eg__mde_one(k, i, mode, det);
	}
	for (size_t q = 0; q < k->n_gates; q++) {
		eg__row_t *r = &k->rows[mode][q];

		r->mde = NAN;
		if (k->gf_prof.gates[q].aggregate == EG_AGG_NONE || !pop)
			continue;
		r->mde = INFINITY;
		for (int s = 1; s <= EG__MDE_MAX && isinf(r->mde); s++)
			if (det[q][s] * 100 >= 95 * pop)
				r->mde = s / 100.0;
	}
}

/* ---- the shipped gate file ----------------------------------------------- */

/* Campaign i judged by the shipped gate file against its history, the
 * points its gates do not settle re-measured: 1 if a gate fails (its
 * names added to which), 0 if none, -1 without a history yet. */
static int eg__shipped_one(eg__cal_t *k, const eg_gate_file_t *gf, size_t i,
			   char *which, size_t wlen)
{
	const eg_calib_camp_t *c = &k->c[i];
	size_t nb;
	eg_results_t *b = eg__baseline(k, i, 0, &nb), v1, v2;
	eg_gate_data_t d = {&v1, 1, b, nb};
	eg_gate_verdict_t v[128];
	json_t *ids[128], *all = json_array();
	int failed = 0;

	if (!b || gf->n_gates > 128) {
		json_decref(all);
		free(b);
		return -1;
	}
	eg_calib_view(&c->r, k->judged, NULL, 0, NULL, NULL, 0,
		      EG__VIEW_RESAMPLES, &v1);
	eg__judge(gf, &d, v, ids, 0);
	for (size_t g = 0; g < gf->n_gates; g++) {
		size_t q;
		json_t *id;

		if (v[g] != EG_VERDICT_PASS && ids[g])
			json_array_foreach(ids[g], q, id)
			{
				json_array_append(all, id);
			}
		json_decref(ids[g]);
	}
	eg_calib_view(&c->r, k->judged, all, k->total, NULL, NULL, 0,
		      EG__VIEW_RESAMPLES, &v2);
	d.cur = &v2;
	eg__judge(gf, &d, v, NULL, 0);
	for (size_t g = 0; g < gf->n_gates; g++)
		if (v[g] == EG_VERDICT_FAIL) {
			failed = 1;
			if (which && !strstr(which, gf->gates[g].name))
				snprintf(which + strlen(which),
					 wlen - strlen(which), "%s%s",
					 *which ? ", " : "", gf->gates[g].name);
		}
	eg_results_free(&v1);
	eg_results_free(&v2);
	json_decref(all);
	free(b);
	return failed;
}

static int eg__shipped(eg__cal_t *k)
{
	eg_gate_file_t gf;
	char err[EG_GATE_ERR_MAX];

	if (!k->o->gates)
		return 0;
	if (eg_gate_file_load(&gf, k->o->gates, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate bench calibrate: %s\n", err);
		return EG_EPARSE;
	}
	for (size_t i = 0; i < k->n; i++) {
		int pl = k->c[i].kind == EG_CALIB_PLANT, rc;

		if (k->c[i].kind != EG_CALIB_CLEAN && !pl)
			continue;
		rc = eg__shipped_one(k, &gf, i, pl ? k->shipped_which : NULL,
				     sizeof(k->shipped_which));
		if (rc < 0)
			continue;
		k->shipped_n[pl]++;
		k->shipped_fail[pl] += (unsigned)rc;
	}
	eg_gate_file_free(&gf);
	return 0;
}

/* ---- the table ------------------------------------------------------------
 */

static const char *eg__frac(const eg__row_t *r, int col, char *buf, size_t len)
{
	if (!r->n[col])
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%u/%u", r->fail[col], r->n[col]);
	return buf;
}

static int eg__cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void eg__table(eg__cal_t *k)
{
	static const char *const modes[] = {"history", "baseline", "a/b"};
	char a[32], b[32], c[32], d[32], mde[32], rz[32];

	printf("%-9s %-12s %-13s %-8s %-7s %-7s %-7s %-7s %-8s %s\n", "mode",
	       "metric", "statistic", "gate", "false", "det 5%", "det 10%",
	       "planted", "realized", "MDE95");
	for (int m = 0; m < 3; m++)
		for (size_t g = 0; g < k->n_gates; g++) {
			const eg__row_t *r = &k->rows[m][g];
			const eg_gate_t *gt = &k->gf_prof.gates[g];
			size_t mi = g / (2 * EG__KINDS), nr = k->n_real[m][mi];
			double *rv = k->real[m][mi];

			/* against a history the statistic is history-t */
			if ((!r->n[EG__FA] && !r->n[EG__PL]) ||
			    (m == 0 && gt->statistic == EG_REGRESS_MWU))
				continue;
			qsort(rv, nr, sizeof(*rv), eg__cmp_d);
			snprintf(rz, sizeof(rz), nr ? "%+.1f%%" : "-",
				 nr ? rv[nr / 2] : 0);
			if (isnan(r->mde))
				snprintf(mde, sizeof(mde), "-");
			else if (isinf(r->mde))
				snprintf(mde, sizeof(mde), ">%d%%",
					 EG__MDE_MAX);
			else
				snprintf(mde, sizeof(mde), "%.0f%%",
					 100 * r->mde);
			printf("%-9s %-12s %-13s %-8s %-7s %-7s %-7s %-7s %-8s "
			       "%s\n",
			       modes[m], gt->metric,
			       m == 0 ? "history-t" : eg__stat[gt->statistic],
			       eg__kind[gt->aggregate],
			       eg__frac(r, EG__FA, a, sizeof(a)),
			       eg__frac(r, EG__S5, b, sizeof(b)),
			       eg__frac(r, EG__S10, c, sizeof(c)),
			       eg__frac(r, EG__PL, d, sizeof(d)), rz, mde);
		}
}

/* ---- the whole calibration ----------------------------------------------- */

/* The judged metrics, split. */
static void eg__metrics(eg__cal_t *k)
{
	const char *s = k->o->metrics ? k->o->metrics : EG__METRICS;

	while (s && *s && k->n_metric < 8) {
		const char *item = s;
		int n = (int)eg_calib_item(&s);

		snprintf(k->metric[k->n_metric++], 32, "%.*s", n, item);
	}
}

/* Launches, the arm, the gates and the clean campaigns' judged views. */
static int eg__setup(eg__cal_t *k)
{
	const char *arm = "a2a",
		   *keep = k->o->metrics ? k->o->metrics : EG__METRICS;
	char err[EG_GATE_ERR_MAX];

	eg__metrics(k);
	for (size_t i = 0; i < k->n; i++) {
		unsigned L = eg__launches(&k->c[i].r);

		if (k->c[i].kind == EG_CALIB_CLEAN && L > k->total)
			k->total = L;
		if (k->c[i].arm[0])
			arm = k->c[i].arm;
	}
	/* the clean campaigns are scaled (and judged) in the planted arm */
	for (size_t i = 0; i < k->n; i++)
		if (!k->c[i].arm[0])
			snprintf(k->c[i].arm, sizeof(k->c[i].arm), "%s", arm);
	k->judged =
	    k->o->judged ? k->o->judged : (k->total * 2 + 2) / 3; /* 9 -> 6 */
	if (eg__campaign_gates(keep, arm, NULL, NULL, &k->gf_prof, err,
			       sizeof(err)))
		return EG_EPARSE;
	k->n_gates = k->gf_prof.n_gates;
	for (int m = 0; m < 3; m++)
		for (size_t g = 0; g < 64; g++)
			k->rows[m][g].mde = NAN; /* not scanned */
	k->views = calloc(k->n + 1, sizeof(*k->views));
	if (!k->views)
		return EG_ENOMEM;
	for (size_t i = 0; i < k->n; i++)
		if (k->c[i].kind == EG_CALIB_CLEAN &&
		    eg_calib_view(&k->c[i].r, k->judged, NULL, 0, keep, NULL, 0,
				  EG__VIEW_RESAMPLES, &k->views[i]) < 0)
			return EG_ENOMEM;
	return 0;
}

/* Targets: at most 1 false alarm in 20 (5%, at least 1 allowed), at
 * least 19 of 20 planted slowdowns caught (95%).  One way of judging
 * (the gate file, the A/B gates): its line, and what it missed (short
 * its name) appended to missed, else its name to met; 1 if met. */
static int eg__target(const char *what, const char *shrt, unsigned fa,
		      unsigned n_fa, unsigned det, unsigned n_det, char *missed,
		      char *met, size_t len)
{
	int f = fa * 20 <= (n_fa > 20 ? n_fa : 20);
	int d = n_det && det * 20 >= 19 * n_det;
	size_t m = strlen(missed), t = strlen(met);

	printf("%s: false alarms %u of %u (%s), planted caught %u of %u "
	       "(%s)\n",
	       what, fa, n_fa, f ? "target met" : "TARGET MISSED", det, n_det,
	       d ? "target met" : "target missed");
	if (f && d)
		snprintf(met + t, len - t, "%s%s", t ? ", " : "", shrt);
	if (!f)
		snprintf(missed + m, len - m, "%s%s false alarms %u of %u",
			 m ? "; " : "", shrt, fa, n_fa);
	m = strlen(missed);
	if (!d)
		snprintf(missed + m, len - m, "%s%s detection %u of %u",
			 m ? "; " : "", shrt, det, n_det);
	return f && d;
}

/* The targets of every way judged, and the last line that counts them
 * all: met only when each one met both.  The exit code. */
static int eg__targets(const eg__cal_t *k)
{
	char missed[1024] = "", met[1024] = "";
	int ways = 0, ok = 1;

	if (k->o->gates && (k->shipped_n[0] || k->shipped_n[1])) {
		ways++;
		ok &= eg__target(k->o->gates, k->o->gates, k->shipped_fail[0],
				 k->shipped_n[0], k->shipped_fail[1],
				 k->shipped_n[1], missed, met, sizeof(met));
	}
	if (k->o->gates && k->shipped_which[0])
		printf("  the gates that failed on the planted slowdowns: %s\n",
		       k->shipped_which);
	if (k->ab_n[0] || k->ab_n[1]) {
		ways++;
		ok &= eg__target(
		    k->o->quick ? "a/b gates (bench ab: bootstrap, the "
				  "median over the points; --quick: not "
				  "per point)"
				: "a/b gates (bench ab: bootstrap, every "
				  "point and the median over them)",
		    "a/b gates", k->ab_fail[0], k->ab_n[0], k->ab_fail[1],
		    k->ab_n[1], missed, met, sizeof(met));
	}
	if (!ways)
		printf("calibration: TARGETS MISSED: nothing judged (no gate "
		       "file with a history, no A/B job)\n");
	else if (ok)
		printf("calibration: targets met by every gate calibrated "
		       "(%s)\n",
		       met);
	else
		printf("calibration: TARGETS MISSED: %s%s%s\n", missed,
		       *met ? "; met: " : "", met);
	return ways && ok ? EG_EXIT_PASS : EG_EXIT_FAIL;
}

static void eg__cal_free(eg__cal_t *k)
{
	for (size_t i = 0; k->views && i < k->n; i++)
		eg_results_free(&k->views[i]);
	free(k->views);
	eg_gate_file_free(&k->gf_prof);
	eg_calib_free(k->c, k->n);
}

int eg_calibrate(const eg_calib_opts_t *o)
{
	eg__cal_t *k = calloc(1, sizeof(*k));
	char err[EG_RESULTS_ERR_MAX];
	unsigned n[4] = {0};
	int rc = EG_EXIT_HARD;

	if (!k)
		return rc;
	k->o = o;
	/* --quick: the A/B jobs judged by their own arms only */
	if (eg_calib_load(o->dir, !o->quick, &k->c, &k->n, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "epgate bench calibrate: %s\n", err);
		goto out;
	}
	if (eg__setup(k) < 0 || (o->save && eg_calib_save(k->c, k->n, o) < 0))
		goto out;
	for (size_t i = 0; i < k->n; i++)
		n[k->c[i].kind]++;
	printf("calibration: %s: %u clean, %u planted, %u A/A, %u A/B "
	       "campaign(s); %u of %u launches judged first, the rest "
	       "re-measure; history of %u\n",
	       o->dir, n[0], n[1], n[2], n[3], k->judged, k->total, o->history);
	eg__replay(k);
	for (int m = 0; m < 3 && !o->quick; m++)
		eg__mde(k, m);
	if (eg__shipped(k) < 0)
		goto out;
	eg__table(k);
	rc = eg__targets(k);
out:
	eg__cal_free(k);
	free(k);
	return rc;
}
