/* Each gate rule on small results documents built here: a pass, a fail
 * and a skip (no data) for every rule, inconclusive for regression, and
 * the hard errors (unknown names, ambiguous pairing, a trend along a
 * non-numeric axis). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "epgate/error.h"
#include "epgate/gate.h"

/* ---- building results documents ---- */

static json_t *doc;

static void doc_new(void)
{
	doc =
	    json_pack("{s:s, s:b, s:{s:s}, s:[]}", "schema", EG_RESULTS_SCHEMA,
		      "recorded", 0, "context", "provider", "shm", "points");
	ck_assert_ptr_nonnull(doc);
}

/* A point with one summary metric: 95% interval median * (1 +- rel)
 * (rel = 0: none).  axes: a JSON text.  evidence: provider or NULL. */
static void add(const char *id, const char *suite, const char *arm,
		const char *axes, const char *metric, double med, double rel,
		int n, const char *provider)
{
	json_t *m = json_pack("{s:f, s:i}", "median", med, "n", n);
	json_t *p;

	if (rel > 0) {
		json_object_set_new(m, "ci_lo", json_real(med * (1 - rel)));
		json_object_set_new(m, "ci_hi", json_real(med * (1 + rel)));
	}
	p = json_pack("{s:s, s:s, s:s, s:o, s:{s:o}}", "id", id, "suite", suite,
		      "arm", arm, "axes", json_loads(axes, 0, NULL), "metrics",
		      metric, m);
	ck_assert_ptr_nonnull(p);
	if (provider)
		json_object_set_new(p, "evidence",
				    json_pack("{s:s}", "provider", provider));
	json_array_append_new(json_object_get(doc, "points"), p);
}

/* A point whose metric is n lognormal samples around med (cv). */
static void add_samples(const char *id, const char *arm, const char *metric,
			double med, double cv, int n, unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	json_t *a = json_array(), *p;

	gsl_rng_set(r, seed);
	for (int i = 0; i < n; i++)
		json_array_append_new(
		    a, json_real(med * exp(cv * gsl_ran_gaussian(r, 1))));
	gsl_rng_free(r);
	{
		/* the file must carry the median of its samples */
		double *x = malloc((size_t)n * sizeof(*x));

		for (int i = 0; i < n; i++)
			x[i] = json_real_value(json_array_get(a, (size_t)i));
		med = eg_stats_median(x, (size_t)n);
		free(x);
	}
	p = json_pack("{s:s, s:s, s:s, s:{s:i}, s:{s:{s:f, s:i, s:o}}}", "id",
		      id, "suite", "reg", "arm", arm, "axes", "world", 4,
		      "metrics", metric, "median", med, "n", n, "samples", a);
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

/* ---- running one gate ---- */

static eg_results_t cur, base;
static int have_base;
static char err[EG_GATE_ERR_MAX];

/* Parses "profile: t\ngates:\n  - " + item, checks names, evaluates
 * the one gate; returns the first nonzero rc. */
static int run(const char *item, eg_gate_result_t *res)
{
	char text[4096];
	eg_gate_file_t gf;
	eg_gate_data_t d = {&cur, 1, have_base ? &base : NULL,
			    (size_t)have_base};
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

/* verdict and a substring of the summary */
static void expect(const char *item, eg_gate_verdict_t want, const char *says)
{
	eg_gate_result_t res;

	ck_assert_msg(run(item, &res) == 0, "%s", err);
	ck_assert_msg(res.verdict == want, "%s: %s, want %s (%s)", item,
		      eg_gate_verdict_name(res.verdict),
		      eg_gate_verdict_name(want), res.summary);
	ck_assert_msg(!says || strstr(res.summary, says),
		      "%s: \"%s\" lacks \"%s\"", item, res.summary, says);
	ck_assert_ptr_nonnull(json_object_get(res.diag, "verdict"));
	eg_gate_result_fini(&res);
}

static void teardown(void)
{
	eg_results_free(&cur);
	if (have_base)
		eg_results_free(&base);
	have_base = 0;
}

/* ---- bound and parity ---- */

static void pair_setup(void)
{
	doc_new();
	add("pa", "pair", "a2a", "{\"world\": 8}", "tok_s", 98, 0.02, 20,
	    "efa");
	add("pd", "pair", "dense", "{\"world\": 8}", "tok_s", 100, 0.02, 20,
	    "efa");
	add("lone", "lone", "a2a", "{\"world\": 8}", "tok_s", 50, 0, 20, NULL);
	doc_load(&cur);
}

START_TEST(bound_rule)
{
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, arms: a2a, "
	       "filter: {suite: pair}, min: 90}",
	       EG_VERDICT_PASS, "98 >= 90");
	/* 98 +- 2%: within noise of 99 (inconclusive), beyond 101 (fail) */
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, arms: a2a, "
	       "filter: {suite: pair}, min: 99}",
	       EG_VERDICT_INCONCLUSIVE, "98 at pair world=8 straddles >= 99");
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, arms: a2a, "
	       "filter: {suite: pair}, min: 101}",
	       EG_VERDICT_FAIL, "98 at pair world=8, want >= 101");
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, "
	       "filter: {suite: pair}, max: 99}",
	       EG_VERDICT_INCONCLUSIVE, "straddles <= 99");
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, "
	       "filter: {suite: pair}, max: 96}",
	       EG_VERDICT_FAIL, "at pair world=8, want <= 96");
	/* a ratio within [min, max] */
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, "
	       "ratio: [a2a, dense], min: 0.9, max: 1.05}",
	       EG_VERDICT_PASS, "0.98");
	/* known metric, no point has it: no data */
	expect("{name: b, sentence: s, rule: bound, metric: step_us, max: 9}",
	       EG_VERDICT_SKIP, "no data");
	expect("{name: b, sentence: s, rule: bound, metric: tok_s, "
	       "filter: {suite: nope}, max: 9}",
	       EG_VERDICT_SKIP, "no data");
}
END_TEST

START_TEST(parity_rule)
{
	eg_gate_result_t res;

	expect("{name: p, sentence: s, rule: parity, metric: tok_s, "
	       "ratio: [a2a, dense], band: [0.95, 1.05]}",
	       EG_VERDICT_PASS, "0.98 in [0.95, 1.05]");
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, "
	       "ratio: [a2a, dense], band: [0.99, 1.01]}",
	       EG_VERDICT_INCONCLUSIVE, "0.98 at pair world=8 straddles");
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, "
	       "ratio: [a2a, dense], band: [1.05, 1.1]}",
	       EG_VERDICT_FAIL, "0.98 at pair world=8");
	/* the a2a point of "lone" has no dense twin: left out, counted */
	ck_assert_int_eq(run("{name: p, sentence: s, rule: parity, metric: "
			     "tok_s, ratio: [a2a, dense], band: [0.9, 1.1]}",
			     &res),
			 0);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(res.diag, "unpaired")), 1);
	/* the ratio's interval from the two 2% intervals: 0.98 +- 2.8% */
	{
		json_t *v =
		    json_array_get(json_object_get(res.diag, "values"), 0);
		json_t *ci = json_object_get(v, "ci95");

		ck_assert_double_eq_tol(json_real_value(json_array_get(ci, 0)),
					0.98 * exp(-0.02 * sqrt(2)), 1e-3);
	}
	eg_gate_result_fini(&res);
	expect("{name: p, sentence: s, rule: parity, metric: tok_s, "
	       "ratio: [a2a, dense], filter: {suite: lone}, band: [0.9, 1.1]}",
	       EG_VERDICT_SKIP, "1 a2a point(s) without a dense twin");
}
END_TEST

/* ---- flat ---- */

/* suite conc: a2a/dense at concurrency 32..256 with the given ratios;
 * phase names the series. */
static void series(const char *phase, const double *ratio, double rel)
{
	static const int conc[] = {32, 64, 128, 256};
	char id[64], axes[128];

	for (int i = 0; i < 4; i++) {
		snprintf(axes, sizeof(axes),
			 "{\"concurrency\": %d, \"phase\": \"%s\"}", conc[i],
			 phase);
		snprintf(id, sizeof(id), "%s-%d-a", phase, conc[i]);
		add(id, "conc", "a2a", axes, "tok_s", 1000 * ratio[i], rel, 20,
		    NULL);
		snprintf(id, sizeof(id), "%s-%d-d", phase, conc[i]);
		add(id, "conc", "dense", axes, "tok_s", 1000, rel, 20, NULL);
	}
}

#define FLAT(extra)                                                            \
	"{name: f, sentence: s, rule: flat, metric: tok_s, "                   \
	"ratio: [a2a, dense], axis: concurrency, band: [0.85, 1.2]" extra "}"

START_TEST(flat_rule)
{
	static const double flat[] = {1.00, 0.99, 1.01, 1.00};
	static const double rising[] = {0.92, 0.98, 1.02, 1.08};
	static const double noisy[] = {1.17, 0.95, 0.94, 1.10};
	static const double high[] = {1.00, 1.05, 1.25, 1.00};
	static const double zigzag[] = {0.90, 1.12, 0.98, 1.16};
	eg_gate_result_t res;

	doc_new();
	series("decode", flat, 0.02);
	doc_load(&cur);
	expect(FLAT(""), EG_VERDICT_PASS, "no significant trend");
	teardown();

	/* rising inside the band: only the trend test sees it; the
	 * slope is per doubling of concurrency (log2 scale) */
	doc_new();
	series("decode", rising, 0.02);
	doc_load(&cur);
	ck_assert_int_eq(run(FLAT(""), &res), 0);
	ck_assert_int_eq(res.verdict, EG_VERDICT_FAIL);
	ck_assert_ptr_nonnull(strstr(res.summary, "per doubling"));
	{
		json_t *s =
		    json_array_get(json_object_get(res.diag, "series"), 0);

		ck_assert_double_eq_tol(
		    json_real_value(json_object_get(s, "slope_per_doubling")),
		    0.052, 1e-3);
		ck_assert(json_is_true(json_object_get(s, "trend")));
	}
	eg_gate_result_fini(&res);
	/* the same slope below max_slope is not a trend */
	expect(FLAT(", max_slope: 0.06"), EG_VERDICT_PASS, NULL);
	/* on a linear scale the slope per unit of concurrency is tiny */
	expect(FLAT(", scale: linear"), EG_VERDICT_PASS, NULL);
	teardown();

	/* scatter without a trend: the errors are inflated, no flag */
	doc_new();
	series("prefill", noisy, 0.02);
	doc_load(&cur);
	expect(FLAT(""), EG_VERDICT_PASS, NULL);
	teardown();

	/* a zigzag whose fitted slope (+0.064 per doubling) is steep but
	 * not significant given how far the points scatter about it */
	doc_new();
	series("decode", zigzag, 0.02);
	doc_load(&cur);
	expect(FLAT(""), EG_VERDICT_PASS, NULL);
	teardown();

	/* one point outside the band */
	doc_new();
	series("decode", high, 0.02);
	doc_load(&cur);
	expect(FLAT(""), EG_VERDICT_FAIL, "1.25 at conc concurrency=128");
	teardown();

	/* two series (phases): each judged on its own */
	doc_new();
	series("decode", flat, 0.02);
	series("prefill", rising, 0.02);
	doc_load(&cur);
	expect(FLAT(""), EG_VERDICT_FAIL, "phase=prefill");
	expect(FLAT(", filter: {phase: decode}"), EG_VERDICT_PASS,
	       "no significant trend");
	/* one point per series: nothing to judge along the axis */
	expect(FLAT(", filter: {concurrency: 64}"), EG_VERDICT_SKIP,
	       "2 or more points");
}
END_TEST

START_TEST(flat_categorical)
{
	eg_gate_result_t res;

	doc_new();
	add("a1", "trt", "a2a", "{\"shape\": \"conc4\"}", "tok_s", 67, 0.03, 5,
	    NULL);
	add("d1", "trt", "dense", "{\"shape\": \"conc4\"}", "tok_s", 100, 0.03,
	    5, NULL);
	add("a2", "trt", "a2a", "{\"shape\": \"isl2048\"}", "tok_s", 68, 0.03,
	    5, NULL);
	add("d2", "trt", "dense", "{\"shape\": \"isl2048\"}", "tok_s", 100,
	    0.03, 5, NULL);
	doc_load(&cur);
	ck_assert_int_eq(run("{name: f, sentence: s, rule: flat, metric: "
			     "tok_s, ratio: [a2a, dense], axis: shape, band: "
			     "[0.6, 0.75]}",
			     &res),
			 0);
	ck_assert_int_eq(res.verdict, EG_VERDICT_PASS);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(res.diag, "series"), 0),
		"trend")),
	    "not tested (categorical axis)");
	eg_gate_result_fini(&res);
	expect("{name: f, sentence: s, rule: flat, metric: tok_s, ratio: "
	       "[a2a, dense], axis: shape, band: [0.6, 0.675]}",
	       EG_VERDICT_FAIL, "0.68 at trt shape=isl2048");
	/* log2 of a name: a hard error naming the axis line */
	ck_assert_int_eq(run("{name: f, sentence: s, rule: trend, metric: "
			     "tok_s, ratio: [a2a, dense], axis: shape, "
			     "direction: up}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "t.gate:3: gate \"f\": trend needs "
					  "numbers on axis shape"));
}
END_TEST

START_TEST(flat_direct)
{
	const double x[] = {5, 6, 7, 8}, v[] = {1, 1.05, 1.1, 1.15};
	const double se[] = {0.01, 0.01, 0.01, 0.01};
	eg_flat_opts_t o = {{0.9, 1.2}, 0.05, 0.02};
	eg_flat_out_t out;

	ck_assert_int_eq(eg_flat_check(x, v, se, 4, &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_FAIL);
	ck_assert(out.trend && out.trend_tested);
	ck_assert_uint_eq(out.n_out_of_band, 0);
	/* without an axis scale (categorical) only the band counts */
	ck_assert_int_eq(eg_flat_check(NULL, v, se, 4, &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_PASS);
	ck_assert(!out.trend_tested);
	o.band[1] = 1.1;
	ck_assert_int_eq(eg_flat_check(NULL, v, se, 4, &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_FAIL);
	ck_assert_uint_eq(out.n_out_of_band, 1);
	ck_assert_uint_eq(out.first_out, 3);
	/* two points and no errors: no trend estimate */
	o.band[1] = 2;
	ck_assert_int_eq(eg_flat_check(x, v, NULL, 2, &o, &out), 0);
	ck_assert(!out.trend_tested);
	ck_assert_int_eq(out.verdict, EG_VERDICT_PASS);
}
END_TEST

/* ---- recovery and trend ---- */

static void knob_setup(void)
{
	doc_new();
	add("k1", "mc", "a2a", "{\"num_comms\": 1, \"nodes\": 2}",
	    "transport_so_gbps", 8, 0.03, 5, "efa");
	add("k8", "mc", "a2a", "{\"num_comms\": 8, \"nodes\": 2}",
	    "transport_so_gbps", 33, 0.03, 5, "efa");
	add("k4", "mc", "a2a", "{\"num_comms\": 4, \"nodes\": 2}",
	    "transport_so_gbps", 25, 0.03, 5, "efa");
	add("e128", "ex", "a2a", "{\"experts\": 128}", "transport_so_gbps", 36,
	    0.03, 5, "efa");
	add("e192", "ex", "a2a", "{\"experts\": 192}", "transport_so_gbps", 50,
	    0.03, 5, "efa");
	add("e256", "ex", "a2a", "{\"experts\": 256}", "transport_so_gbps", 13,
	    0.03, 5, "efa");
	add("w16", "w", "a2a", "{\"world\": 16, \"nodes\": 2}", "so_gbps", 33,
	    0.03, 5, "efa");
	add("w32", "w", "a2a", "{\"world\": 32, \"nodes\": 4}", "so_gbps", 22,
	    0.03, 5, "tcp");
	add("dup", "ex", "a2a", "{\"experts\": 256}", "step_us", 1, 0, 5, NULL);
	doc_load(&cur);
}

#define REC(f)                                                                 \
	"{name: r, sentence: s, rule: recovery, metric: transport_so_gbps, "   \
	"arms: [a2a], axis: num_comms, low: 1, high: 8, min_factor: " f "}"

START_TEST(recovery_rule)
{
	eg_gate_result_t res;

	/* 4.12x with +-3% at each end: inside 3.8, straddles 4, below 4.5 */
	expect(REC("3.8"), EG_VERDICT_PASS, "4.12x from num_comms=1 to 8");
	expect(REC("4"), EG_VERDICT_INCONCLUSIVE, "the interval straddles it");
	expect(REC("4.5"), EG_VERDICT_FAIL, "4.12x");
	expect("{name: r, sentence: s, rule: recovery, metric: "
	       "transport_so_gbps, axis: num_comms, low: 1, high: 16, "
	       "min_factor: 2}",
	       EG_VERDICT_SKIP,
	       "no series has both num_comms=1 and "
	       "num_comms=16");
	ck_assert_int_eq(run(REC("4"), &res), 0);
	ck_assert_double_eq_tol(
	    json_real_value(json_object_get(
		json_array_get(json_object_get(res.diag, "series"), 0),
		"factor")),
	    4.125, 1e-9);
	eg_gate_result_fini(&res);
}
END_TEST

#define TREND(dir, f)                                                          \
	"{name: t, sentence: s, rule: trend, metric: transport_so_gbps, "      \
	"axis: experts, direction: " dir ", factor: " f "}"

START_TEST(trend_rule)
{
	eg_gate_result_t res;

	/* first and last along the sorted axis: 13/36 */
	expect(TREND("not-down", "0.9"), EG_VERDICT_FAIL,
	       "0.361x from experts=128 to 256");
	expect(TREND("not-down", "0.3"), EG_VERDICT_PASS, "0.361x");
	expect(TREND("down", "0.5"), EG_VERDICT_PASS, NULL);
	expect(TREND("down", "0.2"), EG_VERDICT_FAIL, NULL);
	expect(TREND("up", "1"), EG_VERDICT_FAIL, NULL);
	expect(TREND("not-up", "1"), EG_VERDICT_PASS, NULL);
	/* world with nodes moving along: covary keeps one series */
	expect("{name: t, sentence: s, rule: trend, metric: so_gbps, axis: "
	       "world, direction: not-down, factor: 0.5}",
	       EG_VERDICT_SKIP, "no data");
	expect("{name: t, sentence: s, rule: trend, metric: so_gbps, axis: "
	       "world, covary: nodes, direction: not-down, factor: 0.5}",
	       EG_VERDICT_PASS, "0.667x from world=16 to 32");
	/* two points of one series at the same axis value */
	ck_assert_int_eq(run("{name: t, sentence: s, rule: trend, metric: "
			     "step_us, axis: experts, direction: up}",
			     &res),
			 0);
	ck_assert_int_eq(res.verdict, EG_VERDICT_SKIP);
	eg_gate_result_fini(&res);
}
END_TEST

START_TEST(same_series_twice)
{
	eg_gate_result_t res;

	doc_new();
	add("a", "ex", "a2a", "{\"experts\": 128}", "tok_s", 1, 0, 5, NULL);
	add("b", "ex", "a2a", "{\"experts\": 128}", "tok_s", 2, 0, 5, NULL);
	add("c", "ex", "a2a", "{\"experts\": 256}", "tok_s", 2, 0, 5, NULL);
	doc_load(&cur);
	ck_assert_int_eq(run("{name: t, sentence: s, rule: trend, metric: "
			     "tok_s, axis: experts, direction: up}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "t.gate:3: gate \"t\": points \"a\" "
					  "and \"b\" are the same series at "
					  "experts=128"));
}
END_TEST

/* ---- evidence ---- */

START_TEST(evidence_rule)
{
	expect("{name: e, sentence: s, rule: evidence, field: provider, "
	       "expect: efa, filter: {nodes: 2}}",
	       EG_VERDICT_PASS, "provider efa on all 4 points");
	/* w32 fell back to sockets */
	expect("{name: e, sentence: s, rule: evidence, field: provider, "
	       "expect: efa, filter: {suite: w}}",
	       EG_VERDICT_FAIL, "provider tcp at w nodes=4 world=32");
	expect("{name: e, sentence: s, rule: evidence, field: provider, "
	       "expect: [efa, tcp], filter: {suite: w}}",
	       EG_VERDICT_PASS, NULL);
	/* no evidence on the point: the file's context speaks (shm) */
	expect("{name: e, sentence: s, rule: evidence, field: provider, "
	       "expect: efa, filter: {suite: ex}}",
	       EG_VERDICT_FAIL, "provider shm at ex experts=256");
	/* nothing says: a failure, not a pass */
	expect("{name: e, sentence: s, rule: evidence, field: transport, "
	       "expect: NVLink, filter: {suite: w}}",
	       EG_VERDICT_FAIL, "(no evidence recorded)");
	expect("{name: e, sentence: s, rule: evidence, field: provider, "
	       "expect: efa, filter: {suite: none}}",
	       EG_VERDICT_SKIP, "no data");
}
END_TEST

/* ---- names checked against the data ---- */

START_TEST(unknown_names)
{
	eg_gate_result_t res;

	ck_assert_int_eq(run("{name: x, sentence: s, rule: bound,\n"
			     "     metric: tok_ss, min: 1}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "t.gate:4: gate \"x\": unknown "
					  "metric \"tok_ss\""));
	/* a metric that is in no schema list but in the data is fine */
	doc_new();
	add("a", "s", "a2a", "{\"world\": 4}", "my_metric", 3, 0, 5, NULL);
	add("b", "s", "custom_arm", "{\"world\": 4, \"knob\": 1}", "my_metric",
	    3, 0, 5, NULL);
	doc_load(&cur);
	expect("{name: x, sentence: s, rule: bound, metric: my_metric, min: 1}",
	       EG_VERDICT_PASS, NULL);
	expect("{name: x, sentence: s, rule: bound, metric: my_metric, "
	       "arms: custom_arm, filter: {knob: 1}, min: 1}",
	       EG_VERDICT_PASS, NULL);
	/* a standard arm without data: no data; an unknown one: error */
	expect("{name: x, sentence: s, rule: bound, metric: my_metric, "
	       "arms: dense, min: 1}",
	       EG_VERDICT_SKIP, NULL);
	ck_assert_int_eq(run("{name: x, sentence: s, rule: bound, metric: "
			     "my_metric, arms: [a2a, dens], min: 1}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "unknown arm \"dens\""));
	ck_assert_int_eq(run("{name: x, sentence: s, rule: parity, metric: "
			     "my_metric, ratio: [a2a, dens], band: [0, 2]}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "unknown arm \"dens\""));
	/* axes: in the schema list or in the data, else an error */
	expect("{name: x, sentence: s, rule: bound, metric: my_metric, "
	       "filter: {experts: 8}, min: 1}",
	       EG_VERDICT_SKIP, NULL);
	ck_assert_int_eq(run("{name: x, sentence: s, rule: bound, metric: "
			     "my_metric, filter: {knobb: 1}, min: 1}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "unknown axis \"knobb\""));
	ck_assert_int_eq(run("{name: x, sentence: s, rule: trend, metric: "
			     "my_metric, axis: knobb, direction: up}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "unknown axis \"knobb\""));
}
END_TEST

START_TEST(ambiguous_pairing)
{
	eg_gate_result_t res;

	doc_new();
	add("a1", "s", "a2a", "{\"num_comms\": 1}", "tok_s", 1, 0, 5, NULL);
	add("a8", "s", "a2a", "{\"num_comms\": 8}", "tok_s", 2, 0, 5, NULL);
	add("d", "s", "dense", "{}", "tok_s", 2, 0, 5, NULL);
	doc_load(&cur);
	/* dense lacks num_comms: it is every a2a point's twin */
	expect("{name: x, sentence: s, rule: bound, metric: tok_s, "
	       "ratio: [a2a, dense], filter: {num_comms: 8}, min: 1}",
	       EG_VERDICT_PASS, "1 >= 1");
	expect("{name: x, sentence: s, rule: bound, metric: tok_s, "
	       "ratio: [a2a, dense], min: 1}",
	       EG_VERDICT_FAIL, "0.5 at s num_comms=1");
	/* ...but the reverse ratio cannot tell which a2a point */
	ck_assert_int_eq(run("{name: x, sentence: s, rule: bound, metric: "
			     "tok_s, ratio: [dense, a2a], min: 1}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "t.gate:3: gate \"x\": point \"d\" "
					  "pairs with both \"a1\" and \"a8\""));
}
END_TEST

/* ---- regression ---- */

#define REG(extra)                                                             \
	"{name: g, sentence: s, rule: regression, metric: step_us" extra "}"

/* baseline and current: step_us samples, n each, current scaled; with
 * seed 0 the current samples are the baseline's draws times scale, so
 * the change is exactly scale - 1 */
static void reg_setup(int n, double scale, unsigned long seed)
{
	doc_new();
	add_samples("x", "a2a", "step_us", 100, 0.03, n, seed ? seed : 1);
	doc_load(&base);
	doc_new();
	add_samples("x", "a2a", "step_us", 100 * scale, 0.03, n,
		    seed ? seed + 1 : 1);
	doc_load(&cur);
	have_base = 1;
}

START_TEST(regression_bootstrap)
{
	eg_gate_result_t res;

	reg_setup(40, 1.0, 10);
	expect(REG(""), EG_VERDICT_PASS, "within 5% with confidence");
	teardown();
	reg_setup(40, 1.2, 20);
	expect(REG(""), EG_VERDICT_FAIL, "1 of 1 regressed");
	/* lower is better for step_us: 20% faster is not a regression */
	teardown();
	reg_setup(40, 0.8, 30);
	expect(REG(""), EG_VERDICT_PASS, NULL);
	/* declared the other way round, the same data regresses */
	expect(REG(", better: higher"), EG_VERDICT_FAIL, NULL);
	teardown();
	/* too few repetitions: inconclusive, and listed to re-measure */
	reg_setup(6, 1.2, 40);
	ck_assert_int_eq(run(REG(""), &res), 0);
	ck_assert_int_eq(res.verdict, EG_VERDICT_INCONCLUSIVE);
	ck_assert_ptr_nonnull(strstr(res.summary, "too few repetitions"));
	ck_assert_uint_eq(json_array_size(res.remeasure), 1);
	ck_assert_str_eq(json_string_value(json_array_get(res.remeasure, 0)),
			 "x");
	eg_gate_result_fini(&res);
	expect(REG(", min_reps: 5"), EG_VERDICT_FAIL, NULL);
	teardown();
	/* a change of exactly the threshold: the interval straddles it */
	reg_setup(40, 1.05, 0);
	expect(REG(""), EG_VERDICT_INCONCLUSIVE, "straddles the threshold");
}
END_TEST

START_TEST(regression_mann_whitney)
{
	reg_setup(40, 1.0, 60);
	expect(REG(", statistic: mann-whitney"), EG_VERDICT_PASS, NULL);
	teardown();
	reg_setup(40, 1.2, 70);
	expect(REG(", statistic: mann-whitney"), EG_VERDICT_FAIL, NULL);
	teardown();
	reg_setup(40, 1.05, 0);
	expect(REG(", statistic: mann-whitney"), EG_VERDICT_INCONCLUSIVE,
	       "neither side significant");
}
END_TEST

START_TEST(regression_summary_and_skips)
{
	/* recorded summaries: a normal interval from the stored ones */
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 100, 0.03, 20, NULL);
	doc_load(&base);
	have_base = 1;
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 100, 0.03, 20, NULL);
	add("q", "s", "a2a", "{\"world\": 8}", "tok_s", 10, 0.03, 20, NULL);
	doc_load(&cur);
	expect("{name: g, sentence: s, rule: regression, metric: tok_s}",
	       EG_VERDICT_PASS, NULL);
	teardown();
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 100, 0.03, 20, NULL);
	doc_load(&base);
	have_base = 1;
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 80, 0.03, 20, NULL);
	doc_load(&cur);
	/* tok_s: higher is better, 20% down */
	expect("{name: g, sentence: s, rule: regression, metric: tok_s}",
	       EG_VERDICT_FAIL, "-20.0%");
	teardown();
	/* 3% down with +-3% intervals on both sides: the one-sided 95%
	 * interval exp(ln 0.97 +- 1.645 sqrt(2) 0.03/1.96) - 1 =
	 * [-6.4%, +0.5%] reaches past -5%: inconclusive */
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 100, 0.03, 20, NULL);
	doc_load(&base);
	have_base = 1;
	doc_new();
	add("p", "s", "a2a", "{\"world\": 4}", "tok_s", 97, 0.03, 20, NULL);
	doc_load(&cur);
	{
		eg_gate_result_t res;
		json_t *c, *iv;

		ck_assert_int_eq(run("{name: g, sentence: s, rule: regression, "
				     "metric: tok_s}",
				     &res),
				 0);
		ck_assert_int_eq(res.verdict, EG_VERDICT_INCONCLUSIVE);
		c = json_array_get(json_object_get(res.diag, "comparisons"), 0);
		iv = json_object_get(c, "interval_pct");
		ck_assert_double_eq_tol(json_real_value(json_array_get(iv, 0)),
					-6.394, 0.01);
		ck_assert_double_eq_tol(json_real_value(json_array_get(iv, 1)),
					0.517, 0.01);
		eg_gate_result_fini(&res);
	}
	/* no twin (other axis values): no data */
	expect("{name: g, sentence: s, rule: regression, metric: tok_s, "
	       "arms: dense}",
	       EG_VERDICT_SKIP, "no data");
	teardown();
	/* no interval at all: inconclusive */
	doc_new();
	add("p", "s", "a2a", "{}", "tok_s", 100, 0, 20, NULL);
	doc_load(&base);
	have_base = 1;
	doc_new();
	add("p", "s", "a2a", "{}", "tok_s", 50, 0, 20, NULL);
	doc_load(&cur);
	expect("{name: g, sentence: s, rule: regression, metric: tok_s}",
	       EG_VERDICT_INCONCLUSIVE, "no interval");
	teardown();
	/* no baseline: skip */
	doc_new();
	add("p", "s", "a2a", "{}", "tok_s", 100, 0, 20, NULL);
	doc_load(&cur);
	expect("{name: g, sentence: s, rule: regression, metric: tok_s}",
	       EG_VERDICT_SKIP, "no baseline");
}
END_TEST

START_TEST(regression_direction_needed)
{
	eg_gate_result_t res;

	doc_new();
	add("p", "s", "a2a", "{}", "so_bytes", 100, 0.03, 20, NULL);
	doc_load(&cur);
	ck_assert_int_eq(run("{name: g, sentence: s, rule: regression, "
			     "metric: so_bytes}",
			     &res),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "which way is better for so_bytes"));
	expect("{name: g, sentence: s, rule: regression, metric: so_bytes, "
	       "better: lower}",
	       EG_VERDICT_SKIP, "no baseline");
}
END_TEST

START_TEST(regress_compare_direct)
{
	double a[12], b[12];
	eg_metric_t mb = {.name = "m", .samples = a, .n_samples = 12},
		    mc = {.name = "m", .samples = b, .n_samples = 12};
	eg_regress_opts_t o = {.statistic = EG_REGRESS_BOOTSTRAP,
			       .better = EG_BETTER_HIGHER,
			       .alpha = 0.05,
			       .min_effect = 0.05,
			       .min_reps = 10,
			       .resamples = 1000,
			       .seed = 7};
	eg_regress_out_t out;

	for (int i = 0; i < 12; i++) {
		a[i] = 100 + (i % 4);
		b[i] = 0.5 * a[i];
	}
	mb.s.median = eg_stats_median(a, 12);
	mc.s.median = eg_stats_median(b, 12);
	ck_assert_int_eq(eg_regress_compare(&mb, &mc, &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_FAIL);
	ck_assert_double_eq_tol(out.change, -0.5, 1e-12);
	ck_assert(out.hi < -0.05);
	ck_assert_str_eq(out.method, "bootstrap");
	/* the same comparison the other way is an improvement */
	ck_assert_int_eq(eg_regress_compare(&mc, &mb, &o, &out), 0);
	ck_assert_int_eq(out.verdict, EG_VERDICT_PASS);
	o.better = EG_BETTER_NONE;
	ck_assert_int_eq(eg_regress_compare(&mb, &mc, &o, &out), EG_EINVAL);
	o.better = EG_BETTER_LOWER;
	o.alpha = 0.5;
	ck_assert_int_eq(eg_regress_compare(&mb, &mc, &o, &out), EG_EINVAL);
	o.alpha = 0.05;
	mb.s.median = 0;
	ck_assert_int_eq(eg_regress_compare(&mb, &mc, &o, &out), EG_ERANGE);
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(eg_gate_verdict_name(EG_VERDICT_INCONCLUSIVE),
			 "inconclusive");
	ck_assert_str_eq(eg_gate_verdict_name(EG_VERDICT_SKIP), "skip");
	ck_assert_str_eq(eg_rule_name(EG_RULE_RECOVERY), "recovery");
	ck_assert_str_eq(eg_rule_name(EG_RULE_EVIDENCE), "evidence");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gate_rules");
	TCase *pair = tcase_create("pair"), *knob = tcase_create("knob");
	TCase *t = tcase_create("rest");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(pair, pair_setup, teardown);
	tcase_add_test(pair, bound_rule);
	tcase_add_test(pair, parity_rule);
	tcase_add_checked_fixture(knob, knob_setup, teardown);
	tcase_add_test(knob, recovery_rule);
	tcase_add_test(knob, trend_rule);
	tcase_add_test(knob, evidence_rule);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, flat_rule);
	tcase_add_test(t, flat_categorical);
	tcase_add_test(t, flat_direct);
	tcase_add_test(t, same_series_twice);
	tcase_add_test(t, unknown_names);
	tcase_add_test(t, ambiguous_pairing);
	tcase_add_test(t, regression_bootstrap);
	tcase_add_test(t, regression_mann_whitney);
	tcase_add_test(t, regression_summary_and_skips);
	tcase_add_test(t, regression_direction_needed);
	tcase_add_test(t, regress_compare_direct);
	tcase_add_test(t, names);
	suite_add_tcase(s, pair);
	suite_add_tcase(s, knob);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
