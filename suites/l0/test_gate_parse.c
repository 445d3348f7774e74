/* Gate file parser: a file with every rule parses into the expected
 * fields (defaults merged, line numbers kept); each error, planted as one
 * edit of that file, is rejected with "file:line: message". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "epgate/error.h"
#include "epgate/gate.h"

static const char *good =
    "# every rule once\n"				   /*  1 */
    "profile: local\n"					   /*  2 */
    "defaults:\n"					   /*  3 */
    "  alpha: 0.01\n"					   /*  4 */
    "  min_effect: 0.1\n"				   /*  5 */
    "  max_slope: 0.05\n"				   /*  6 */
    "  min_reps: 5\n"					   /*  7 */
    "  reps: 20\n"					   /*  8 */
    "  resamples: 500\n"				   /*  9 */
    "gates:\n"						   /* 10 */
    "  - name: b\n"					   /* 11 */
    "    sentence: \"Bound.\"\n"			   /* 12 */
    "    rule: bound\n"					   /* 13 */
    "    metric: step_us\n"				   /* 14 */
    "    arms: a2a\n"					   /* 15 */
    "    filter: {suite: s, world: [2, 4], dtype: bf16}\n" /* 16 */
    "    min: 1\n"					   /* 17 */
    "    max: 200\n"					   /* 18 */
    "  - name: p\n"					   /* 19 */
    "    sentence: \"Parity.\"\n"			   /* 20 */
    "    rule: parity\n"				   /* 21 */
    "    metric: tok_s\n"				   /* 22 */
    "    ratio: [a2a, dense]\n"				   /* 23 */
    "    band: [0.9, 1.1]\n"				   /* 24 */
    "  - name: f\n"					   /* 25 */
    "    sentence: \"Flat.\"\n"				   /* 26 */
    "    rule: flat\n"					   /* 27 */
    "    metric: tok_s\n"				   /* 28 */
    "    ratio: [a2a, dense]\n"				   /* 29 */
    "    axis: concurrency\n"				   /* 30 */
    "    band: [0.8, 1.2]\n"				   /* 31 */
    "    max_slope: 0.03\n"				   /* 32 */
    "    scale: linear\n"				   /* 33 */
    "    alpha: 0.1\n"					   /* 34 */
    "  - name: r\n"					   /* 35 */
    "    sentence: \"Recovery.\"\n"			   /* 36 */
    "    rule: recovery\n"				   /* 37 */
    "    metric: transport_so_gbps\n"			   /* 38 */
    "    arms: [a2a]\n"					   /* 39 */
    "    axis: num_comms\n"				   /* 40 */
    "    low: 1\n"					   /* 41 */
    "    high: 8\n"					   /* 42 */
    "    min_factor: 4\n"				   /* 43 */
    "  - name: t\n"					   /* 44 */
    "    sentence: \"Trend.\"\n"			   /* 45 */
    "    rule: trend\n"					   /* 46 */
    "    metric: so_gbps\n"				   /* 47 */
    "    axis: world\n"					   /* 48 */
    "    covary: [nodes]\n"				   /* 49 */
    "    direction: not-down\n"				   /* 50 */
    "    factor: 0.5\n"					   /* 51 */
    "  - name: g\n"					   /* 52 */
    "    sentence: \"Regression.\"\n"			   /* 53 */
    "    rule: regression\n"				   /* 54 */
    "    metric: step_us\n"				   /* 55 */
    "    statistic: mann-whitney\n"			   /* 56 */
    "    min_effect: 0.03\n"				   /* 57 */
    "    better: lower\n"				   /* 58 */
    "  - name: e\n"					   /* 59 */
    "    sentence: \"Evidence.\"\n"			   /* 60 */
    "    rule: evidence\n"				   /* 61 */
    "    field: provider\n"				   /* 62 */
    "    expect: [efa, shm]\n";				   /* 63 */

static int parse(const char *text, eg_gate_file_t *gf, char *err, size_t len)
{
	return eg_gate_file_parse(gf, text, strlen(text), "g.yml", err, len);
}

START_TEST(every_rule)
{
	char err[EG_GATE_ERR_MAX];
	eg_gate_file_t gf;
	const eg_gate_t *g;

	ck_assert_msg(parse(good, &gf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(gf.profile, "local");
	ck_assert_str_eq(gf.path, "g.yml");
	ck_assert_uint_eq(gf.n_gates, 7);
	ck_assert_double_eq(gf.defaults.alpha, 0.01);
	ck_assert_uint_eq(gf.defaults.reps, 20);

	g = &gf.gates[0];
	ck_assert_str_eq(g->name, "b");
	ck_assert_str_eq(g->sentence, "Bound.");
	ck_assert_int_eq(g->rule, EG_RULE_BOUND);
	ck_assert_int_eq(g->line, 11);
	ck_assert_int_eq(g->metric_line, 14);
	ck_assert_uint_eq(g->n_arms, 1);
	ck_assert_str_eq(g->arms[0], "a2a");
	ck_assert_double_eq(g->min, 1);
	ck_assert_double_eq(g->max, 200);
	ck_assert_uint_eq(g->n_filter, 3);
	ck_assert_str_eq(g->filter[0].key, "suite");
	ck_assert_int_eq(g->filter[1].line, 16);
	/* plain numbers are numbers, words are strings */
	ck_assert(json_is_number(json_array_get(g->filter[1].values, 1)));
	ck_assert_double_eq(
	    json_number_value(json_array_get(g->filter[1].values, 1)), 4);
	ck_assert(json_is_string(json_array_get(g->filter[2].values, 0)));
	/* defaults reach every gate */
	ck_assert_double_eq(g->st.max_slope, 0.05);
	ck_assert_double_eq(g->st.min_effect, 0.1);

	g = &gf.gates[1];
	ck_assert_int_eq(g->rule, EG_RULE_PARITY);
	ck_assert_str_eq(g->ratio[0], "a2a");
	ck_assert_str_eq(g->ratio[1], "dense");
	ck_assert_int_eq(g->ratio_line, 23);
	ck_assert_double_eq(g->band[0], 0.9);
	ck_assert_double_eq(g->band[1], 1.1);
	ck_assert(isnan(g->min));

	g = &gf.gates[2];
	ck_assert_int_eq(g->rule, EG_RULE_FLAT);
	ck_assert_str_eq(g->axis, "concurrency");
	ck_assert_int_eq(g->axis_line, 30);
	ck_assert_int_eq(g->scale, EG_SCALE_LINEAR);
	/* a gate's own setting wins over the default */
	ck_assert_double_eq(g->st.alpha, 0.1);
	ck_assert_double_eq(g->st.max_slope, 0.03);

	g = &gf.gates[3];
	ck_assert_int_eq(g->rule, EG_RULE_RECOVERY);
	ck_assert_double_eq(g->low, 1);
	ck_assert_double_eq(g->high, 8);
	ck_assert_double_eq(g->min_factor, 4);

	g = &gf.gates[4];
	ck_assert_int_eq(g->rule, EG_RULE_TREND);
	ck_assert_int_eq(g->direction, EG_TREND_NOT_DOWN);
	ck_assert_double_eq(g->factor, 0.5);
	ck_assert_uint_eq(g->n_covary, 1);
	ck_assert_str_eq(g->covary[0], "nodes");

	g = &gf.gates[5];
	ck_assert_int_eq(g->rule, EG_RULE_REGRESSION);
	ck_assert_int_eq(g->statistic, EG_REGRESS_MWU);
	ck_assert_int_eq(g->better, EG_BETTER_LOWER);
	ck_assert_double_eq(g->st.min_effect, 0.03);
	ck_assert_double_eq(g->st.alpha, 0.01);
	ck_assert_uint_eq(g->st.min_reps, 5);
	ck_assert_uint_eq(g->st.resamples, 500);

	g = &gf.gates[6];
	ck_assert_int_eq(g->rule, EG_RULE_EVIDENCE);
	ck_assert_ptr_null(g->metric);
	ck_assert_str_eq(g->field, "provider");
	ck_assert_uint_eq(g->n_expect, 2);
	ck_assert_str_eq(g->expect[1], "shm");
	eg_gate_file_free(&gf);
}
END_TEST

START_TEST(built_in_defaults)
{
	const char *t =
	    "profile: x\n"
	    "gates:\n"
	    "  - {name: a, sentence: s, rule: regression, metric: "
	    "tok_s}\n"
	    "  - {name: b, sentence: s, rule: trend, metric: tok_s, "
	    "axis: experts, direction: up}\n";
	char err[EG_GATE_ERR_MAX];
	eg_gate_file_t gf;

	ck_assert_msg(parse(t, &gf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_double_eq(gf.gates[0].st.alpha, EG_GATE_ALPHA);
	ck_assert_double_eq(gf.gates[0].st.min_effect, EG_GATE_MIN_EFFECT);
	ck_assert_uint_eq(gf.gates[0].st.min_reps, EG_GATE_MIN_REPS);
	ck_assert_uint_eq(gf.gates[0].st.reps, EG_GATE_REPS);
	ck_assert_uint_eq(gf.gates[0].st.resamples, EG_GATE_RESAMPLES);
	ck_assert_int_eq(gf.gates[0].statistic, EG_REGRESS_BOOTSTRAP);
	ck_assert_int_eq(gf.gates[0].better, EG_BETTER_NONE);
	ck_assert_double_eq(gf.gates[1].st.max_slope, EG_GATE_MAX_SLOPE);
	/* a trend without a factor: 1 (no change either way) */
	ck_assert_double_eq(gf.gates[1].factor, 1);
	ck_assert_int_eq(gf.gates[1].scale, EG_SCALE_AUTO);
	eg_gate_file_free(&gf);
}
END_TEST

static const struct bad {
	const char *from, *to, *msg;
} bads[] = {
    {"rule: bound", "rule: bund", "g.yml:13: unknown rule \"bund\""},
    {"    min: 1\n", "    min: one\n",
     "g.yml:17: min: \"one\" is not a number"},
    {"    min: 1\n", "    min: 0x10\n",
     "g.yml:17: min: \"0x10\" is not a number"},
    {"    min: 1\n", "    min: .nan\n",
     "g.yml:17: min: \".nan\" is not a number"},
    {"    min: 1\n", "    mn: 1\n", "g.yml:17: unknown key \"mn\""},
    {"band: [0.9, 1.1]", "band: [0.9]", "g.yml:24: band: expected [low, high]"},
    {"band: [0.9, 1.1]", "band: [1.1, 0.9]",
     "g.yml:24: band: low 1.1 is above high 0.9"},
    {"ratio: [a2a, dense]\n    band: [0.9", "ratio: [a2a, a2a]\n    band: [0.9",
     "g.yml:23: ratio: the same arm twice"},
    {"  alpha: 0.01", "  alpha: 0",
     "g.yml:4: alpha: 0 is out of range (0, 0.5)"},
    {"  min_reps: 5", "  min_reps: 50",
     "g.yml:4: defaults: min_reps 50 is above reps 20"},
    {"  resamples: 500", "  resamples: 5",
     "g.yml:9: resamples: 5 is out of range [100, 1000000]"},
    {"  reps: 20", "  reps: -1",
     "g.yml:8: reps: \"-1\" is not a non-negative integer"},
    {"  reps: 20", "  reps: [20]", "g.yml:8: reps: expected an integer"},
    {"  reps: 20", "  reps: \"20\"",
     "g.yml:8: reps: \"20\" is not a non-negative integer"},
    {"  reps: 20", "  repz: 20", "g.yml:8: defaults: unknown key \"repz\""},
    {"    sentence: \"Bound.\"\n", "", "g.yml:11: gate \"b\": no sentence"},
    {"  - name: p\n", "  - name: b\n",
     "g.yml:19: gate name \"b\" already used at line 11"},
    {"name: p", "name: P Q", "g.yml:19: name: \"P Q\": use [a-z0-9._-]"},
    {"    axis: concurrency\n", "", "g.yml:25: gate \"f\": flat needs an axis"},
    {"scale: linear", "scale: log", "g.yml:33: unknown scale \"log\""},
    {"direction: not-down", "direction: sideways",
     "g.yml:50: unknown direction \"sideways\""},
    {"factor: 0.5", "factor: 2",
     "g.yml:51: factor: 2 does not fit direction not-down"},
    {"direction: not-down", "direction: up",
     "g.yml:51: factor: 0.5 does not fit direction up"},
    {"statistic: mann-whitney", "statistic: t-test",
     "g.yml:56: unknown statistic \"t-test\""},
    {"better: lower", "better: less", "g.yml:58: unknown better \"less\""},
    {"    min_factor: 4\n", "",
     "g.yml:35: gate \"r\": recovery needs axis, low, high and min_factor"},
    {"    low: 1\n", "    low: 8\n",
     "g.yml:35: gate \"r\": low and high are the same knob value"},
    {"    min_factor: 4\n", "    min_factor: 0\n",
     "g.yml:43: min_factor: 0 is out of range (0, 1e+09]"},
    {"expect: [efa, shm]", "expect: []", "g.yml:63: expect: empty list"},
    {"field: provider", "field: Provider",
     "g.yml:62: field: \"Provider\" is not a name"},
    {"    min: 1\n    max: 200\n", "    min: 300\n    max: 200\n",
     "g.yml:11: gate \"b\": min 300 is above max 200"},
    {"    min: 1\n    max: 200\n", "",
     "g.yml:11: gate \"b\": bound needs min, max or both"},
    {"    metric: step_us\n    arms: a2a", "    arms: a2a",
     "g.yml:11: gate \"b\": rule bound needs a metric"},
    {"    ratio: [a2a, dense]\n    band: [0.9", "    band: [0.9",
     "g.yml:19: gate \"p\": parity needs a ratio"},
    {"    ratio: [a2a, dense]\n    band: [0.9",
     "    ratio: [a2a, dense]\n    arms: [a2a]\n    band: [0.9",
     "g.yml:19: gate \"p\": give ratio or arms, not both"},
    {"    band: [0.8, 1.2]", "    min: 0.8",
     "g.yml:31: key \"min\" does not apply to rule flat"},
    {"    metric: step_us\n    statistic",
     "    axis: world\n    metric: step_us\n    statistic",
     "g.yml:55: key \"axis\" does not apply to rule regression"},
    {"    field: provider", "    metric: tok_s\n    field: provider",
     "g.yml:62: key \"metric\" does not apply to rule evidence"},
    {"    covary: [nodes]", "    covary: [Nodes]",
     "g.yml:49: covary: \"Nodes\" is not an axis name"},
    {"world: [2, 4], dtype", "world: [2, 4], world: 8, dtype",
     "g.yml:16: filter: \"world\" given twice"},
    {"{suite: s, world: [2, 4], dtype: bf16}", "{arm: a2a}",
     "g.yml:16: filter: select arms with"},
    {"{suite: s, world: [2, 4], dtype: bf16}", "[1, 2]",
     "g.yml:16: filter: expected a mapping"},
    {"world: [2, 4]", "world: []",
     "g.yml:16: filter: world: expected a value or a non-empty list"},
    {"gates:", "gatez:", "g.yml:10: unknown key \"gatez\""},
    {"profile: local", "profile: [a]", "g.yml:2: profile: expected a string"},
    {"profile: local\n", "", "g.yml:2: no profile: key"},
    {"profile: local\n", "profile: local\nprofile: other\n",
     "g.yml:3: key \"profile\" repeats line 2"},
    {"    rule: bound\n", "", "g.yml:11: gate without a rule"},
    {"band: [0.9, 1.1]", "band: [0.9, 1.1", "g.yml:25: YAML syntax"},
    {"    min: 1\n", "\tmin: 1\n", "g.yml:17: YAML syntax"},
    {"  - name: b\n    sentence: \"Bound.\"\n    rule: bound\n"
     "    metric: step_us\n    arms: a2a\n"
     "    filter: {suite: s, world: [2, 4], dtype: bf16}\n"
     "    min: 1\n    max: 200\n",
     "  - [b, c]\n", "g.yml:11: a gate is a mapping"},
    {"  - name: b\n", "  - name: b\n    name: c\n",
     "g.yml:12: key \"name\" repeats line 11"},
    /* many points, A/B, aggregates */
    {"  resamples: 500", "  resamples: 500\n  correction: sidak",
     "g.yml:10: unknown correction \"sidak\""},
    {"    better: lower\n", "    better: lower\n    versus: [b]\n",
     "g.yml:59: versus: expected [arm judged, arm it is judged against]"},
    {"    better: lower\n", "    better: lower\n    versus: [b, b]\n",
     "g.yml:59: versus: the same arm twice"},
    {"    better: lower\n",
     "    better: lower\n    versus: [b, a]\n    arms: [a]\n",
     "g.yml:52: gate \"g\": versus names the arms; no arms: or ratio: with it"},
    {"    better: lower\n", "    better: lower\n    aggregate: mean\n",
     "g.yml:59: unknown aggregate \"mean\""},
    {"    field: provider", "    aggregate: geomean\n    field: provider",
     "g.yml:62: key \"aggregate\" does not apply to rule evidence"},
    {"    max_slope: 0.03", "    correction: bh\n    max_slope: 0.03",
     "g.yml:32: key \"correction\" does not apply to rule flat"},
};

/* good with the first occurrence of from replaced by to */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(good, from);
	size_t n = strlen(good) - strlen(from) + strlen(to) + 1;
	char *s = malloc(n);

	ck_assert_msg(at != NULL, "\"%s\" is not in the file", from);
	snprintf(s, n, "%.*s%s%s", (int)(at - good), good, to,
		 at + strlen(from));
	return s;
}

/* The keys of many points and of A/B jobs, and their defaults. */
START_TEST(noise_keys)
{
	static const char *t =
	    "profile: p\ndefaults: {correction: bh}\ngates:\n"
	    "  - {name: a, sentence: s, rule: regression, metric: step_us, "
	    "versus: [\"slow:10%:a2a\", a2a], aggregate: median}\n"
	    "  - {name: b, sentence: s, rule: parity, metric: tok_s, ratio: "
	    "[a2a, dense], band: [0.9, 1.1], correction: holm}\n"
	    "  - {name: c, sentence: s, rule: recovery, metric: so_gbps, axis: "
	    "num_comms, low: 1, high: 8, min_factor: 2}\n";
	char err[EG_GATE_ERR_MAX];
	eg_gate_file_t gf;

	ck_assert_msg(parse(t, &gf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(gf.gates[0].versus[0], "slow:10%:a2a");
	ck_assert_str_eq(gf.gates[0].versus[1], "a2a");
	ck_assert_int_eq(gf.gates[0].aggregate, EG_AGG_MEDIAN);
	ck_assert_int_eq(gf.gates[0].st.correction, EG_CORRECT_BH);
	ck_assert_int_eq(gf.gates[1].st.correction, EG_CORRECT_HOLM);
	ck_assert_int_eq(gf.gates[2].st.correction, EG_CORRECT_BH);
	eg_gate_file_free(&gf);
	/* the default, stated in docs/gates.md */
	ck_assert_msg(parse(good, &gf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(gf.gates[0].st.correction, EG_GATE_CORRECTION);
	ck_assert_int_eq(EG_GATE_CORRECTION, EG_CORRECT_HOLM);
	ck_assert_int_eq(gf.gates[5].aggregate, EG_AGG_NONE);
	eg_gate_file_free(&gf);
}
END_TEST

START_TEST(rejects)
{
	const struct bad *b = &bads[_i];
	char err[EG_GATE_ERR_MAX];
	eg_gate_file_t gf;
	char *t = edit(b->from, b->to);
	int rc = parse(t, &gf, err, sizeof(err));

	ck_assert_msg(rc == EG_EPARSE, "case %d accepted:\n%s", _i, t);
	ck_assert_msg(strstr(err, b->msg) == err,
		      "case %d: \"%s\", want \"%s\"", _i, err, b->msg);
	ck_assert_ptr_null(strchr(err, '\n'));
	/* nothing is left allocated on failure */
	ck_assert_ptr_null(gf.gates);
	free(t);
}
END_TEST

START_TEST(whole_file_errors)
{
	static const struct {
		const char *text, *msg;
	} c[] = {
	    {"", "g.yml:1: empty gate file"},
	    {"# only a comment\n", "g.yml:1: empty gate file"},
	    {"- a\n- b\n", "g.yml:1: expected a mapping with profile"},
	    {"{}", "g.yml:1: no profile: key"},
	    {"profile: x\n", "g.yml:1: no gates: list"},
	    {"profile: x\ngates: []\n", "g.yml:2: gates: expected a non-empty"},
	    {"profile: x\ngates:\n  - 3\n", "g.yml:3: a gate is a mapping"},
	    {"profile: x\ngates:\n  - {name: a, sentence: s, rule: bound, "
	     "metric: m, min: 1}\n---\nprofile: y\n",
	     "g.yml:5: a second YAML document"},
	    {"profile: x\ndefaults: 3\ngates: [1]\n",
	     "g.yml:2: defaults: expected a mapping"},
	};
	char err[EG_GATE_ERR_MAX];
	eg_gate_file_t gf;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_int_eq(parse(c[i].text, &gf, err, sizeof(err)),
				 EG_EPARSE);
		ck_assert_msg(strstr(err, c[i].msg) == err,
			      "\"%s\": got \"%s\"", c[i].text, err);
	}
	ck_assert_int_eq(
	    eg_gate_file_load(&gf, "/nonexistent/g.gate", err, sizeof(err)),
	    EG_ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/g.gate: cannot open"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gate_parse");
	TCase *t = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(t, every_rule);
	tcase_add_test(t, built_in_defaults);
	tcase_add_test(t, whole_file_errors);
	tcase_add_test(t, noise_keys);
	tcase_add_loop_test(t, rejects, 0,
			    (int)(sizeof(bads) / sizeof(bads[0])));
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
