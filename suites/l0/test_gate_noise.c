/* Gates that hold on real noise (docs/gates.md): values that cannot be
 * judged fail, a band is closed, evidence compares whole strings,
 * bound/parity/recovery judge intervals (inside passes, outside fails,
 * straddling is inconclusive and listed for re-measurement), a gate over
 * many points corrects for them, and the regression rule treats the
 * launch as the unit: launch-paired A/B (versus), a history of
 * campaigns, the geometric mean over the points, a Mann-Whitney detail
 * with numbers in it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "epgate/error.h"
#include "epgate/gate.h"

static json_t *doc;

static void doc_new(void)
{
	doc = json_pack("{s:s, s:b, s:{}, s:[]}", "schema", EG_RESULTS_SCHEMA,
			"recorded", 0, "context", "points");
	ck_assert_ptr_nonnull(doc);
}

/* A point with a summary metric: median, a 95% interval med*(1+-rel)
 * (rel 0: none), n; axes a JSON text; evidence transport or NULL. */
static void add(const char *id, const char *suite, const char *arm,
		const char *axes, const char *metric, double med, double rel,
		const char *transport)
{
	json_t *m = json_pack("{s:f, s:i}", "median", med, "n", 20), *p;

	if (rel > 0) {
		json_object_set_new(m, "ci_lo", json_real(med * (1 - rel)));
		json_object_set_new(m, "ci_hi", json_real(med * (1 + rel)));
	}
	p = json_pack("{s:s, s:s, s:s, s:o, s:{s:o}}", "id", id, "suite", suite,
		      "arm", arm, "axes", json_loads(axes, 0, NULL), "metrics",
		      metric, m);
	ck_assert_ptr_nonnull(p);
	if (transport)
		json_object_set_new(p, "evidence",
				    json_pack("{s:s}", "transport", transport));
	json_array_append_new(json_object_get(doc, "points"), p);
}

/* A point of L launches of k lognormal samples each: launch j's level is
 * med * exp(between * z_j), its samples vary by within; passes 0..L-1. */
static void add_launches(const char *id, const char *arm, const char *axes,
			 const char *metric, double med, double between,
			 double within, int L, int k, gsl_rng *r)
{
	json_t *a = json_array(), *ln = json_array(), *ps = json_array(), *p;
	double *x = malloc((size_t)(L * k) * sizeof(*x));

	for (int j = 0; j < L; j++) {
		double lvl = med * exp(between * gsl_ran_gaussian(r, 1));

		for (int i = 0; i < k; i++) {
			x[j * k + i] =
			    lvl * exp(within * gsl_ran_gaussian(r, 1));
			json_array_append_new(a, json_real(x[j * k + i]));
		}
		json_array_append_new(ln, json_integer(k));
		json_array_append_new(ps, json_integer(j));
	}
	p = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:{s:f, s:i, s:o, s:o}}}",
		      "id", id, "suite", "s", "arm", arm, "axes",
		      json_loads(axes, 0, NULL), "passes", ps, "metrics",
		      metric, "median", eg_stats_median(x, (size_t)(L * k)),
		      "n", L * k, "samples", a, "launches", ln);
	free(x);
	ck_assert_ptr_nonnull(p);
	json_array_append_new(json_object_get(doc, "points"), p);
}

static void doc_load(eg_results_t *r)
{
	char *s = json_dumps(doc, 0), err[EG_RESULTS_ERR_MAX];

	ck_assert_msg(eg_results_parse(r, s, "t.json", err, sizeof(err)) == 0,
		      "%s", err);
	free(s);
	json_decref(doc);
	doc = NULL;
}

static eg_results_t cur, base[12];
static size_t n_base;
static int history;
static char err[EG_GATE_ERR_MAX];

static int run(const char *item, eg_gate_result_t *res)
{
	char text[4096];
	eg_gate_file_t gf;
	eg_gate_data_t d = {&cur, 1, n_base ? base : NULL, n_base};

	for (size_t i = 0; i < n_base; i++)
		base[i].history = history;
	int rc;

	snprintf(text, sizeof(text), "profile: t\ngates:\n  - %s\n", item);
	rc = eg_gate_file_parse(&gf, text, strlen(text), "t.gate", err,
				sizeof(err));
	ck_assert_msg(rc == 0, "%s", err);
	memset(res, 0, sizeof(*res));
	rc = eg_gate_file_check(&gf, &d, err, sizeof(err));
	if (!rc)
		rc = eg_gate_eval(&gf, &gf.gates[0], &d, res, err, sizeof(err));
	eg_gate_file_free(&gf);
	return rc;
}

/* The verdict, a piece of the summary; returns the diagnostics' text. */
static void expect(const char *item, eg_gate_verdict_t want, const char *says)
{
	eg_gate_result_t res;

	ck_assert_msg(run(item, &res) == 0, "%s", err);
	ck_assert_msg(res.verdict == want, "%s: %s, want %s (%s)", item,
		      eg_gate_verdict_name(res.verdict),
		      eg_gate_verdict_name(want), res.summary);
	ck_assert_msg(!says || strstr(res.summary, says),
		      "%s: \"%s\" lacks \"%s\"", item, res.summary, says);
	eg_gate_result_fini(&res);
}

static void teardown(void)
{
	eg_results_free(&cur);
	for (size_t i = 0; i < n_base; i++)
		eg_results_free(&base[i]);
	n_base = 0;
	history = 0;
}

/* ---- issue 17: what cannot be judged fails ---- */

START_TEST(nan_fails)
{
	doc_new();
	add("a0", "z", "a2a", "{\"nodes\": 1, \"num_comms\": 1}", "so_bytes", 0,
	    0, NULL);
	add("d0", "z", "dense", "{\"nodes\": 1}", "so_bytes", 0, 0, NULL);
	add("a8", "z", "a2a", "{\"nodes\": 1, \"num_comms\": 8}", "so_bytes", 0,
	    0, NULL);
	doc_load(&cur);
	/* 0/0: parity printed "PASS -nan in [0.95, 1.05]" */
	expect("{name: p, sentence: s, rule: parity, metric: so_bytes, ratio: "
	       "[a2a, dense], filter: {num_comms: 1}, band: [0.95, 1.05]}",
	       EG_VERDICT_FAIL, "not a number");
	expect("{name: b, sentence: s, rule: bound, metric: so_bytes, ratio: "
	       "[a2a, dense], filter: {num_comms: 8}, min: 1.05}",
	       EG_VERDICT_FAIL, "not a number");
	/* recovery 0/0 passed with an empty detail */
	expect("{name: r, sentence: s, rule: recovery, metric: so_bytes, arms: "
	       "[a2a], axis: num_comms, low: 1, high: 8, min_factor: 2}",
	       EG_VERDICT_FAIL, "not a number");
	expect("{name: t, sentence: s, rule: trend, metric: so_bytes, arms: "
	       "[a2a], axis: num_comms, direction: up, factor: 1}",
	       EG_VERDICT_FAIL, NULL);
}
END_TEST

START_TEST(x_over_zero_fails)
{
	doc_new();
	add("a1", "z", "a2a", "{\"num_comms\": 1}", "so_gbps", 0, 0, NULL);
	add("a8", "z", "a2a", "{\"num_comms\": 8}", "so_gbps", 5, 0, NULL);
	doc_load(&cur);
	/* 5/0 is infinite: no recovery and no trend passes on it */
	expect("{name: r, sentence: s, rule: recovery, metric: so_gbps, arms: "
	       "[a2a], axis: num_comms, low: 1, high: 8, min_factor: 2}",
	       EG_VERDICT_FAIL, "not a number");
	expect("{name: t, sentence: s, rule: trend, metric: so_gbps, arms: "
	       "[a2a], axis: num_comms, direction: up, factor: 1}",
	       EG_VERDICT_FAIL, NULL);
}
END_TEST

/* a ratio exactly on a band edge is inside (a band treated as open
 * failed it) */
START_TEST(band_edges_are_inside)
{
	doc_new();
	add("lo", "lo", "a2a", "{\"w\": 1}", "tok_s", 95, 0, NULL);
	add("lod", "lo", "dense", "{\"w\": 1}", "tok_s", 100, 0, NULL);
	add("hi", "hi", "a2a", "{\"w\": 1}", "tok_s", 105, 0, NULL);
	add("hid", "hi", "dense", "{\"w\": 1}", "tok_s", 100, 0, NULL);
	add("k1", "rec", "a2a", "{\"num_comms\": 1}", "so_gbps", 2, 0, NULL);
	add("k8", "rec", "a2a", "{\"num_comms\": 8}", "so_gbps", 8, 0, NULL);
	doc_load(&cur);
	for (int s = 0; s < 2; s++) {
		char g[256];

		snprintf(g, sizeof(g),
			 "{name: p, sentence: s, rule: parity, metric: tok_s, "
			 "ratio: [a2a, dense], filter: {suite: %s}, band: "
			 "[0.95, 1.05]}",
			 s ? "hi" : "lo");
		expect(g, EG_VERDICT_PASS,
		       s ? "1.05 in [0.95, 1.05]" : "0.95 in [0.95, 1.05]");
	}
	expect(
	    "{name: b, sentence: s, rule: bound, metric: tok_s, arms: [a2a], "
	    "filter: {suite: lo}, min: 95, max: 95}",
	    EG_VERDICT_PASS, NULL);
	expect("{name: r, sentence: s, rule: recovery, metric: so_gbps, axis: "
	       "num_comms, low: 1, high: 8, min_factor: 4}",
	       EG_VERDICT_PASS, "4x");
	/* and just outside fails */
	expect("{name: r, sentence: s, rule: recovery, metric: so_gbps, axis: "
	       "num_comms, low: 1, high: 8, min_factor: 4.0001}",
	       EG_VERDICT_FAIL, NULL);
}
END_TEST

/* every pair of evidence strings that differs after the "/" (an evidence
 * rule that compared the transport family passed these) */
START_TEST(evidence_whole_strings)
{
	static const char *const pairs[][2] = {
	    {"nccl NET/IB", "nccl NET/Socket"},
	    {"nccl NET/Socket", "nccl NET/IB"},
	    {"nccl P2P/IPC", "nccl P2P/CUMEM"},
	    {"nccl P2P/CUMEM", "nccl P2P/IPC"},
	    {"nccl P2P/CUMEM (NVL)", "nccl P2P/CUMEM (PIX)"},
	};
	char g[256];

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		doc_new();
		add("p", "e", "a2a", "{}", "step_us", 10, 0, pairs[i][1]);
		doc_load(&cur);
		snprintf(g, sizeof(g),
			 "{name: e, sentence: s, rule: evidence, field: "
			 "transport, expect: [\"%s\"]}",
			 pairs[i][0]);
		expect(g, EG_VERDICT_FAIL, pairs[i][1]);
		snprintf(g, sizeof(g),
			 "{name: e, sentence: s, rule: evidence, field: "
			 "transport, expect: [\"%s\"]}",
			 pairs[i][1]);
		expect(g, EG_VERDICT_PASS, NULL);
		teardown();
	}
}
END_TEST

/* ---- intervals, not points ---- */

START_TEST(intervals_decide)
{
	eg_gate_result_t res;

	doc_new();
	/* ratios 0.96 (+-2% per arm: straddles 0.95), 0.90 (outside),
	 * 1.00 (inside) */
	add("s1", "a", "a2a", "{}", "tok_s", 96, 0.02, NULL);
	add("s1d", "a", "dense", "{}", "tok_s", 100, 0.02, NULL);
	add("s2", "b", "a2a", "{}", "tok_s", 90, 0.02, NULL);
	add("s2d", "b", "dense", "{}", "tok_s", 100, 0.02, NULL);
	add("s3", "c", "a2a", "{}", "tok_s", 100, 0.02, NULL);
	add("s3d", "c", "dense", "{}", "tok_s", 100, 0.02, NULL);
	doc_load(&cur);
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], filter: {suite: a}, band: [0.95, 1.05]}",
	       EG_VERDICT_INCONCLUSIVE, "straddles");
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], filter: {suite: b}, band: [0.95, 1.05]}",
	       EG_VERDICT_FAIL, "interval");
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], filter: {suite: c}, band: [0.95, 1.05]}",
	       EG_VERDICT_PASS, NULL);
	/* the straddling point and its partner are to be measured again */
	ck_assert_int_eq(run("{name: p, sentence: s, rule: parity, metric: "
			     "tok_s, ratio: [a2a, dense], filter: {suite: a}, "
			     "band: [0.95, 1.05]}",
			     &res),
			 0);
	ck_assert_uint_eq(json_array_size(res.remeasure), 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(res.diag, "correction")), "holm");
	eg_gate_result_fini(&res);
}
END_TEST

/* A positive value against an edge at 0: above it (or below a minimum
 * of 0) with certainty, however wide its interval.  Measured under load
 * (CI beside a calibration): a step of 130.7 us, interval [52.83,
 * 323.2], and a second point, Holm; judged on the linear scale (an
 * error of about 60 us or more) it "straddled" max: 0. */
START_TEST(zero_edges_of_positive_values)
{
	json_t *pts, *m;

	doc_new();
	add("z1", "z", "a2a", "{}", "step_us", 130.7, 0.5, NULL);
	add("z2", "z", "dense", "{}", "step_us", 130.7, 0.5, NULL);
	/* an interval as wide as a loaded host gives, wider above */
	pts = json_object_get(doc, "points");
	for (size_t i = 0; i < 2; i++) {
		m = json_object_get(
		    json_object_get(json_array_get(pts, i), "metrics"),
		    "step_us");
		json_object_set_new(m, "ci_lo", json_real(40));
		json_object_set_new(m, "ci_hi", json_real(430));
	}
	doc_load(&cur);
	expect("{name: b, sentence: s, rule: bound, metric: step_us, max: 0}",
	       EG_VERDICT_FAIL, NULL);
	expect("{name: b, sentence: s, rule: bound, metric: step_us, max: -1}",
	       EG_VERDICT_FAIL, NULL);
	expect("{name: b, sentence: s, rule: bound, metric: step_us, min: 0}",
	       EG_VERDICT_PASS, NULL);
	/* planted: the same points against a real budget still straddle */
	expect("{name: b, sentence: s, rule: bound, metric: step_us, max: 150}",
	       EG_VERDICT_INCONCLUSIVE, "straddles");
}
END_TEST

/* 20 points each a little below the band: alone each would fail
 * (p about 0.01), together Holm does not let chance decide */
START_TEST(many_points_corrected)
{
	char id[16], idd[16], ax[32];

	doc_new();
	for (int i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "a%d", i);
		snprintf(idd, sizeof(idd), "d%d", i);
		snprintf(ax, sizeof(ax), "{\"c\": %d}", i);
		add(id, "m", "a2a", ax, "tok_s", 91.9, 0.02, NULL);
		add(idd, "m", "dense", ax, "tok_s", 100, 0.02, NULL);
	}
	doc_load(&cur);
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], band: [0.95, 1.05], correction: none}",
	       EG_VERDICT_FAIL, NULL);
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], band: [0.95, 1.05]}",
	       EG_VERDICT_INCONCLUSIVE, NULL);
	/* BH: all 20 share p: the step-up rejects them all */
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, ratio: "
	       "[a2a, dense], band: [0.95, 1.05], correction: bh}",
	       EG_VERDICT_FAIL, NULL);
}
END_TEST

/* ---- regression with launches ---- */

#define AB(extra)                                                              \
	"{name: ab, sentence: s, rule: regression, metric: step_us, versus: "  \
	"[b, a]" extra "}"

/* An A/B job: arms a and b at 6 points, 8 launches of 10 steps, a large
 * launch-to-launch spread (25%) that both arms share in each launch
 * (paired) or not; b's level times k. */
static void ab_setup(double k, int shared, unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	char ax[32], ida[16], idb[16];

	gsl_rng_set(r, seed);
	doc_new();
	for (int i = 0; i < 6; i++) {
		unsigned long s = seed * 100 + (unsigned long)i;

		snprintf(ax, sizeof(ax), "{\"c\": %d}", i);
		snprintf(ida, sizeof(ida), "a%d", i);
		snprintf(idb, sizeof(idb), "b%d", i);
		gsl_rng_set(r, s);
		add_launches(ida, "a", ax, "step_us", 1000, 0.25, 0.05, 8, 10,
			     r);
		if (shared)
			gsl_rng_set(r, s);
		add_launches(idb, "b", ax, "step_us", 1000 * k, 0.25, 0.05, 8,
			     10, r);
	}
	gsl_rng_free(r);
	doc_load(&cur);
}

START_TEST(versus_paired_launches)
{
	/* the same launches on both sides: a 10% slowdown shows through a
	 * 25% spread between launches */
	ab_setup(1.10, 1, 1);
	expect(AB(""), EG_VERDICT_FAIL, "regressed");
	expect(AB(", statistic: mann-whitney"), EG_VERDICT_FAIL, "interval [+");
	expect(AB(", aggregate: geomean"), EG_VERDICT_FAIL, "geometric mean");
	expect(AB(", aggregate: median"), EG_VERDICT_FAIL, "the median of 6");
	teardown();
	ab_setup(1.0, 1, 2);
	expect(AB(""), EG_VERDICT_PASS, NULL);
	expect(AB(", statistic: mann-whitney"), EG_VERDICT_PASS, NULL);
	teardown();
	/* unpaired launches of that spread: 8 cannot tell 10% at a point;
	 * the geometric mean over the points can tell it from 0 but not
	 * from 5%: never a false verdict */
	ab_setup(1.0, 0, 3);
	expect(AB(""), EG_VERDICT_INCONCLUSIVE, "straddles");
	teardown();
}
END_TEST

/* An A/B job of 8 points, 6 launches of 10 steps, each arm's launches
 * with their own level (spread between, not shared: what a busy host
 * does to one arm and not the other); b's level times k at the upper
 * half of the points, times k_all at all of them. */
static void ab_half_setup(double k, double k_all, double between,
			  unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	char ax[32], ida[16], idb[16];

	gsl_rng_set(r, seed);
	doc_new();
	for (int i = 0; i < 8; i++) {
		snprintf(ax, sizeof(ax), "{\"c\": %d}", i);
		snprintf(ida, sizeof(ida), "a%d", i);
		snprintf(idb, sizeof(idb), "b%d", i);
		add_launches(ida, "a", ax, "step_us", 1000, between, 0.02, 6,
			     10, r);
		add_launches(idb, "b", ax, "step_us",
			     1000 * k_all * (i >= 4 ? k : 1), between, 0.02, 6,
			     10, r);
	}
	gsl_rng_free(r);
	doc_load(&cur);
}

/* effect: estimate (bench ab's per-point default): B 10% slower at half
 * of 8 points through a 5% launch spread per arm is caught 19 times in
 * 20 or more, where effect: interval (the whole interval beyond 5%)
 * misses it in more than 1 job in 4; A/A alarms at most once in 20;
 * and a change that is certain but below min_effect does not fail. */
START_TEST(versus_effect_estimate)
{
	int est = 0, iv = 0, aa = 0;
	eg_gate_result_t res;

	for (unsigned long seed = 1; seed <= 20; seed++) {
		ab_half_setup(1.10, 1, 0.05, seed);
		ck_assert_int_eq(
		    run(AB(", effect: estimate, resamples: 500"), &res), 0);
		est += res.verdict == EG_VERDICT_FAIL;
		eg_gate_result_fini(&res);
		ck_assert_int_eq(run(AB(", resamples: 500"), &res), 0);
		iv += res.verdict == EG_VERDICT_FAIL;
		eg_gate_result_fini(&res);
		teardown();
		ab_half_setup(1.0, 1, 0.05, 100 + seed);
		ck_assert_int_eq(
		    run(AB(", effect: estimate, resamples: 500"), &res), 0);
		aa += res.verdict == EG_VERDICT_FAIL;
		eg_gate_result_fini(&res);
		teardown();
	}
	ck_assert_msg(est >= 19 && iv <= 15 && aa <= 1,
		      "effect: estimate caught %d of 20, interval %d of 20, "
		      "A/A false alarms %d of 20",
		      est, iv, aa);
	/* 3% everywhere, certain, below min_effect 5%: a pass (not worse by
	 * 5%, with confidence); at min_effect 2% a failure */
	ab_half_setup(1.0, 1.03, 0.002, 7);
	expect(AB(", effect: estimate"), EG_VERDICT_PASS, "within 5%");
	expect(AB(", effect: estimate, min_effect: 0.02"), EG_VERDICT_FAIL,
	       "beyond 2% and worse than no change");
	teardown();
}
END_TEST

/* The Mann-Whitney detail has an interval (it printed +nan%) */
START_TEST(mann_whitney_interval)
{
	eg_gate_result_t res;
	json_t *c;

	ab_setup(1.3, 0, 4);
	ck_assert_int_eq(run(AB(", statistic: mann-whitney"), &res), 0);
	ck_assert_msg(!strstr(res.summary, "nan"), "%s", res.summary);
	c = json_array_get(json_object_get(res.diag, "comparisons"), 0);
	ck_assert_ptr_nonnull(json_object_get(c, "interval_pct"));
	ck_assert(isfinite(json_number_value(
	    json_array_get(json_object_get(c, "interval_pct"), 0))));
	ck_assert_str_eq(json_string_value(json_object_get(c, "units")),
			 "paired launches");
	eg_gate_result_fini(&res);
	teardown();
}
END_TEST

#define HIST(extra)                                                            \
	"{name: h, sentence: s, rule: regression, metric: step_us, arms: "     \
	"[a]" extra "}"

/* A history of n campaigns: one point, each campaign's level moving by
 * 3% (a day's load), and the current campaign at level k. */
static void history_setup(int n, double k, unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

	gsl_rng_set(r, seed);
	for (int j = 0; j <= n; j++) {
		double lvl = 1000 * exp(0.03 * gsl_ran_gaussian(r, 1));

		doc_new();
		add_launches("a0", "a", "{\"c\": 0}", "step_us",
			     j == n ? lvl * k : lvl, 0.02, 0.02, 6, 10, r);
		doc_load(j == n ? &cur : &base[j]);
	}
	n_base = (size_t)n;
	history = 1;
	gsl_rng_free(r);
}

START_TEST(history_campaigns)
{
	eg_gate_result_t res;
	json_t *c;

	/* against one campaign, a 3% day-to-day move looks significant to
	 * the launches; against the history it is within the spread */
	history_setup(10, 1.0, 7);
	ck_assert_int_eq(run(HIST(""), &res), 0);
	c = json_array_get(json_object_get(res.diag, "comparisons"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "method")),
			 "history-t");
	ck_assert_str_eq(json_string_value(json_object_get(c, "units")),
			 "campaigns");
	ck_assert_msg(res.verdict != EG_VERDICT_FAIL, "%s", res.summary);
	eg_gate_result_fini(&res);
	teardown();
	history_setup(10, 1.25, 8);
	expect(HIST(""), EG_VERDICT_FAIL, "regressed");
	teardown();
	/* two campaigns: no spread to estimate, their launches pooled */
	history_setup(2, 1.0, 9);
	ck_assert_int_eq(run(HIST(""), &res), 0);
	c = json_array_get(json_object_get(res.diag, "comparisons"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "method")),
			 "bootstrap");
	eg_gate_result_fini(&res);
	teardown();
}
END_TEST

/* The stated power (docs/gates.md, "Gate power"): campaigns whose log
 * medians scatter by sd around 0, a history of nb of them, and a
 * campaign slower by the MDE that history states: the fraction of
 * trials that fail.  An MDE of the stated power fails 19 times in 20;
 * the threshold at the edge of the interval (no power term, what a
 * wrong MDE would say) fails about half the time. */
static double fails_at_stated(gsl_rng *rng, size_t nb, double sd,
			      int power_term, unsigned trials)
{
	eg_metric_t m[11];
	const eg_metric_t *b[10];
	eg_regress_opts_t o = {.statistic = EG_REGRESS_BOOTSTRAP,
			       .better = EG_BETTER_LOWER,
			       .alpha = 0.05,
			       .min_effect = 0.05,
			       .min_reps = 3,
			       .resamples = 200};
	eg_regress_out_t out;
	unsigned failed = 0;

	for (unsigned k = 0; k < trials; k++) {
		double d;

		memset(m, 0, sizeof(m));
		for (size_t i = 0; i <= nb; i++) {
			m[i].s.median = 100 * exp(gsl_ran_gaussian(rng, sd));
			m[i].s.n = 20;
			m[i].s.ci_lo = m[i].s.ci_hi = NAN;
			if (i < nb)
				b[i] = &m[i];
		}
		/* what the history states, asked with an unchanged campaign */
		ck_assert_int_eq(eg_regress_history(b, nb, &m[nb], &o, &out),
				 0);
		ck_assert(out.mde > o.min_effect && isfinite(out.mde));
		d = power_term ? log(1 + out.mde)
			       : log(1 + o.min_effect) +
				     gsl_cdf_tdist_Pinv(0.95, (double)nb - 1) *
					 out.spread;
		m[nb].s.median = 100 * exp(d + gsl_ran_gaussian(rng, sd));
		ck_assert_int_eq(eg_regress_history(b, nb, &m[nb], &o, &out),
				 0);
		failed += out.verdict == EG_VERDICT_FAIL;
	}
	return (double)failed / trials;
}

START_TEST(history_mde_is_its_power)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double hit, edge;

	gsl_rng_set(rng, 20261204);
	/* the H200's spread: 2.4% from campaign to campaign, 10 of them */
	hit = fails_at_stated(rng, 10, 0.024, 1, 2000);
	edge = fails_at_stated(rng, 10, 0.024, 0, 2000);
	ck_assert_msg(hit >= 0.92 && hit <= 0.99,
		      "a slowdown of the stated MDE fails %.3f of the time",
		      hit);
	ck_assert_msg(edge < 0.7, "the planted MDE (no power) fails %.3f",
		      edge);
	gsl_rng_free(rng);
}
END_TEST

START_TEST(regress_history_direct)
{
	eg_metric_t m[5];
	const eg_metric_t *b[4] = {&m[0], &m[1], &m[2], &m[3]};
	double med[5] = {100, 102, 98, 101, 130};
	eg_regress_opts_t o = {.statistic = EG_REGRESS_BOOTSTRAP,
			       .better = EG_BETTER_LOWER,
			       .alpha = 0.05,
			       .min_effect = 0.05,
			       .min_reps = 10,
			       .resamples = 1000};
	eg_regress_out_t out;

	memset(m, 0, sizeof(m));
	for (int i = 0; i < 5; i++) {
		m[i].s.median = med[i];
		m[i].s.n = 40;
		m[i].s.ci_lo = m[i].s.ci_hi = NAN;
	}
	ck_assert_int_eq(eg_regress_history(b, 4, &m[4], &o, &out), 0);
	ck_assert_str_eq(out.method, "history-t");
	ck_assert_int_eq(out.verdict, EG_VERDICT_FAIL);
	ck_assert(out.p_worse < 0.05);
	m[4].s.median = 100.5;
	ck_assert_int_eq(eg_regress_history(b, 4, &m[4], &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_PASS);
	m[4].s.median = 0;
	ck_assert_int_eq(eg_regress_history(b, 4, &m[4], &o, &out), EG_ERANGE);
}
END_TEST

/* A campaign of arms a and b at 6 points, 8 launches, in which every
 * launch moves both arms alike (a busy machine): levels scaled by
 * machine, b's by slow. */
static void pair_campaign(eg_results_t *r, double machine, double slow,
			  unsigned long seed)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	char ax[32], ida[16], idb[16];

	doc_new();
	for (int i = 0; i < 6; i++) {
		unsigned long s = seed * 100 + (unsigned long)i;

		snprintf(ax, sizeof(ax), "{\"c\": %d}", i);
		snprintf(ida, sizeof(ida), "a%d", i);
		snprintf(idb, sizeof(idb), "b%d", i);
		gsl_rng_set(g, s);
		add_launches(ida, "a", ax, "step_us", 1000 * machine, 0.25,
			     0.02, 8, 5, g);
		gsl_rng_set(g, s);
		add_launches(idb, "b", ax, "step_us", 1000 * machine * slow,
			     0.25, 0.02, 8, 5, g);
	}
	gsl_rng_free(g);
	doc_load(r);
}

#define RATIO(agg)                                                             \
	"{name: r, sentence: s, rule: regression, metric: step_us, ratio: "    \
	"[b, a]" agg "}"

/* ratio: [b, a] on a regression: the machine 3x slower moves both arms
 * (an absolute gate fails, the ratio does not); b 20% slower fails it */
START_TEST(ratio_regression)
{
	pair_campaign(&base[0], 1, 1, 11);
	n_base = 1;
	pair_campaign(&cur, 3, 1, 12);
	expect("{name: x, sentence: s, rule: regression, metric: step_us, "
	       "arms: [b], aggregate: median}",
	       EG_VERDICT_FAIL, "regressed");
	expect(RATIO(", aggregate: median"), EG_VERDICT_PASS, NULL);
	eg_results_free(&cur);
	pair_campaign(&cur, 3, 1.2, 13);
	expect(RATIO(", aggregate: median"), EG_VERDICT_FAIL,
	       "+20.0% at the median");
	expect(RATIO(""), EG_VERDICT_FAIL, "regressed");
}
END_TEST

START_TEST(versus_needs_its_arms)
{
	eg_gate_result_t res;

	ab_setup(1.0, 1, 5);
	ck_assert_int_eq(run("{name: v, sentence: s, rule: regression, "
			     "metric: step_us, versus: [b, c]}",
			     &res),
			 EG_EPARSE);
	ck_assert_msg(strstr(err, "unknown arm \"c\""), "%s", err);
	teardown();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gate_noise");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, nan_fails);
	tcase_add_test(t, x_over_zero_fails);
	tcase_add_test(t, band_edges_are_inside);
	tcase_add_test(t, evidence_whole_strings);
	tcase_add_test(t, intervals_decide);
	tcase_add_test(t, zero_edges_of_positive_values);
	tcase_add_test(t, many_points_corrected);
	tcase_add_test(t, versus_paired_launches);
	tcase_add_test(t, versus_effect_estimate);
	tcase_add_test(t, mann_whitney_interval);
	tcase_add_test(t, history_campaigns);
	tcase_add_test(t, regress_history_direct);
	tcase_add_test(t, history_mde_is_its_power);
	tcase_add_test(t, versus_needs_its_arms);
	tcase_add_test(t, ratio_regression);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
