/* One gate run (what `epgate gate` and the sweep orchestrator do): the
 * gate file judged on results already in memory, one TAP point and one
 * JUnit case per gate, a verdict table on stdout, the exit code
 * (docs/gates.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/clock.h"
#include "epgate/error.h"
#include "epgate/evidence.h"
#include "epgate/gate.h"
#include "epgate/num.h"
#include "epgate/report.h"
#include "lib/gate/gate_int.h"
#include "lib/gate/run_record.h"

typedef struct eg__run {
	const eg_gate_run_opts_t *o;
	eg_gate_file_t gf;
	eg_tap_t *tap;
	eg_junit_t *junit;
	unsigned count[4], errors;
	json_t *remeasure;
	json_t *failures; /* what failed or erred, for summary.json */
	char *repro;	  /* the command that judges these results again */
	char tap_path[4200], junit_path[4200];
	char run[4096]; /* the run folder made for the reports, or "" */
} eg__run_t;

static const char *const eg__verdict_upper[] = {"PASS", "FAIL", "INCONCLUSIVE",
						"SKIP"};

/* ---- the verdict table (for people; TAP and JUnit are for machines) -- */

#define EG__FAILING_SHOWN 6

/* One failing value of a gate's diag, worse when bad is larger. */
typedef struct eg__bad {
	char what[160];
	double bad;
} eg__bad_t;

/* bound, parity: the values outside the threshold. */
static size_t eg__bad_values(const eg_gate_t *g, const json_t *d, eg__bad_t *b,
			     size_t cap, size_t *n)
{
	int parity = g->rule == EG_RULE_PARITY;
	double lo = parity ? g->band[0] : g->min,
	       hi = parity ? g->band[1] : g->max;
	size_t k, all = 0;
	json_t *v;

	json_array_foreach(json_object_get(d, "values"), k, v)
	{
		double x = json_number_value(json_object_get(v, "value"));
		const char *id = json_string_value(json_object_get(v, "point"));

		all++;
		if (!(x < lo || x > hi))
			continue;
		if (*n < cap) {
			char num[32];

			snprintf(b[*n].what, sizeof(b[*n].what), "%s %s",
				 id ? id : "?",
				 eg_fmt_num(x, num, sizeof(num)));
			b[*n].bad = x < lo ? lo - x : x - hi;
		}
		(*n)++;
	}
	return all;
}

/* evidence: the points that ran something else; recovery, trend, flat:
 * the series that broke the rule. */
static size_t eg__bad_series(const eg_gate_t *g, const json_t *d, eg__bad_t *b,
			     size_t cap, size_t *n)
{
	int ev = g->rule == EG_RULE_EVIDENCE;
	const json_t *arr = json_object_get(d, ev ? "mismatch" : "series");
	int ge =
	    g->direction == EG_TREND_UP || g->direction == EG_TREND_NOT_DOWN;
	size_t k,
	    all = ev ? (size_t)json_integer_value(json_object_get(d, "points"))
		     : json_array_size(arr);
	json_t *v;

	json_array_foreach((json_t *)arr, k, v)
	{
		const char *name =
		    json_string_value(json_object_get(v, ev ? "at" : "series"));
		double f = json_number_value(json_object_get(
		    v, g->rule == EG_RULE_RECOVERY ? "factor" : "change"));
		int fail = ev ||
			   (g->rule == EG_RULE_RECOVERY && f < g->min_factor) ||
			   (g->rule == EG_RULE_TREND &&
			    (ge ? f < g->factor : f > g->factor)) ||
			   (g->rule == EG_RULE_FLAT &&
			    json_is_true(json_object_get(v, "trend")));

		if (!fail)
			continue;
		if (*n < cap) {
			if (ev)
				snprintf(b[*n].what, sizeof(b[*n].what),
					 "%s: %s", name ? name : "?",
					 json_string_value(
					     json_object_get(v, "got")));
			else if (g->rule == EG_RULE_FLAT)
				snprintf(b[*n].what, sizeof(b[*n].what), "%s",
					 name ? name : "?");
			else
				snprintf(b[*n].what, sizeof(b[*n].what),
					 "%s %.3gx", name ? name : "?", f);
			b[*n].bad = ev || g->rule == EG_RULE_FLAT
					? 0
					: fabs(f - (g->rule == EG_RULE_RECOVERY
							? g->min_factor
							: g->factor));
		}
		(*n)++;
	}
	return all;
}

/* The failing points (or series) of a failed gate: every one, or their
 * count and the worst. */
static void eg__failing(const eg_gate_t *g, const json_t *d)
{
	eg__bad_t b[64];
	size_t n = 0, all, worst = 0;

	if (g->rule == EG_RULE_BOUND || g->rule == EG_RULE_PARITY)
		all = eg__bad_values(g, d, b, 64, &n);
	else if (g->rule == EG_RULE_REGRESSION)
		return; /* its summary names what regressed */
	else
		all = eg__bad_series(g, d, b, 64, &n);
	if (!n)
		return;
	printf("%-12s failing: %zu of %zu%s", "", n, all,
	       n <= EG__FAILING_SHOWN ? ":" : "; worst:");
	for (size_t i = 1; i < n && i < 64; i++)
		if (b[i].bad > b[worst].bad)
			worst = i;
	if (n > EG__FAILING_SHOWN) {
		printf(" %s\n", b[worst].what);
		return;
	}
	for (size_t i = 0; i < n; i++)
		printf("%s %s", i ? "," : "", b[i].what);
	putchar('\n');
}

/* A gate's rows: verdict, name, rule, metric and result; the sentence;
 * for a failure every failing point. */
static void eg__row(const eg_gate_t *g, const char *verdict, const char *result,
		    const json_t *diag)
{
	char metric[128];

	printf("%-12s %-30s %-9s %-22s %s\n", verdict, g->name,
	       eg_rule_name(g->rule),
	       eg__gate_metric_label(g, metric, sizeof(metric)), result);
	printf("%-12s \"%s\"\n", "", g->sentence ? g->sentence : "");
	if (diag && !strcmp(verdict, "FAIL"))
		eg__failing(g, diag);
}

/* A gate that could not be evaluated: an error point and case. */
static int eg__report_hard(eg__run_t *r, const eg_gate_t *g, const char *desc,
			   const char *cls, const char *hard)
{
	json_t *d = json_pack("{s:s, s:s}", "rule", eg_rule_name(g->rule),
			      "error", hard);
	int rc = eg_tap_point(r->tap, EG_STATUS_ERROR, desc, hard, d);

	json_decref(d);
	json_array_append_new(r->failures,
			      json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind",
					"error", "class", cls, "case", g->name,
					"message", hard, "repro", r->repro));
	if (rc >= 0)
		rc = eg_junit_case(r->junit, cls, g->name, 0, EG_STATUS_ERROR,
				   hard, desc);
	eg__row(g, "ERROR", hard, NULL);
	return rc < 0 ? rc : 0;
}

/* Status, TAP reason and JUnit message of a verdict. */
static eg_status_t eg__status(const eg_gate_result_t *res, char *reason,
			      size_t rlen, char *msg, size_t mlen)
{
	switch (res->verdict) {
	case EG_VERDICT_PASS:
		snprintf(reason, rlen, "%s", res->summary);
		snprintf(msg, mlen, "%s", res->summary);
		return EG_STATUS_PASS;
	case EG_VERDICT_FAIL:
		/* a short message (viewers cut long ones); the sentence and
		 * the repro go into the body, each on its own line */
		snprintf(reason, rlen, "%s", res->summary);
		snprintf(msg, mlen, "FAILED: %s", res->summary);
		return EG_STATUS_FAIL;
	case EG_VERDICT_INCONCLUSIVE:
		/* not ok # TODO: visible, never silently a pass, and
		 * automake counts it as an expected failure (XFAIL) */
		snprintf(reason, rlen, "inconclusive: %s", res->summary);
		snprintf(msg, mlen, "INCONCLUSIVE: %s", res->summary);
		return EG_STATUS_TODO;
	default:
		snprintf(reason, rlen, "%s", res->summary);
		snprintf(msg, mlen, "%s", res->summary);
		return EG_STATUS_SKIP;
	}
}

/* "epgate gate --gates G [--baseline B]... R...": malloc'd. */
static char *eg__repro_line(const eg_gate_run_opts_t *o)
{
	const eg_gate_data_t *d = o->data;
	size_t len = strlen(o->gates) + 64, n;
	char *s;

	for (size_t i = 0; i < d->n_cur; i++)
		len += strlen(d->cur[i].path ? d->cur[i].path : "-") + 1;
	for (size_t i = 0; d->base && i < d->n_base; i++)
		len += strlen(d->base[i].path ? d->base[i].path : "-") + 12;
	if (!(s = malloc(len)))
		return NULL;
	n = (size_t)snprintf(s, len, "epgate gate --gates %s", o->gates);
	for (size_t i = 0; d->base && i < d->n_base; i++)
		n += (size_t)snprintf(s + n, len - n, " --baseline %s",
				      d->base[i].path ? d->base[i].path : "-");
	for (size_t i = 0; i < d->n_cur; i++)
		n += (size_t)snprintf(s + n, len - n, " %s",
				      d->cur[i].path ? d->cur[i].path : "-");
	return s;
}

/* The JUnit body of a verdict that is not a pass: the sentence, the
 * verdict and the repro on lines of their own, then the diagnostics. */
static char *eg__body(const eg__run_t *r, const eg_gate_t *g, const char *msg,
		      const char *yaml)
{
	size_t len = strlen(g->sentence) + strlen(msg) +
		     strlen(r->repro ? r->repro : "") +
		     strlen(yaml ? yaml : "") + 32;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s\n%s\nrepro: %s\n\n%s", g->sentence, msg,
			 r->repro ? r->repro : "", yaml ? yaml : "");
	return s;
}

/* Reports one gate: TAP point, JUnit case, table line. */
static int eg__report(eg__run_t *r, const eg_gate_t *g,
		      const eg_gate_result_t *res, const char *hard, double dt)
{
	char desc[640], msg[768], reason[400], cls[160];
	eg_status_t st;
	char *yaml, *body = NULL;
	int rc;

	snprintf(desc, sizeof(desc), "%s: %s", g->name, g->sentence);
	snprintf(cls, sizeof(cls), "gates.%s", r->gf.profile);
	if (hard)
		return eg__report_hard(r, g, desc, cls, hard);
	st = eg__status(res, reason, sizeof(reason), msg, sizeof(msg));
	rc = eg_tap_point(r->tap, st, desc, reason, res->diag);
	if (rc < 0)
		return rc;
	yaml = eg_json_to_yaml(res->diag, 0);
	if (st == EG_STATUS_FAIL || st == EG_STATUS_TODO)
		body = eg__body(r, g, msg, yaml);
	if (st == EG_STATUS_FAIL)
		json_array_append_new(r->failures,
				      json_pack("{s:s, s:s, s:s, s:s, s:s}",
						"kind", "failure", "class", cls,
						"case", g->name, "message", msg,
						"repro", r->repro));
	/* JUnit has no "inconclusive": a skipped case with the reason,
	 * visible in GitLab and Jenkins, that does not fail the job */
	rc = eg_junit_case(r->junit, cls, g->name, dt,
			   st == EG_STATUS_TODO ? EG_STATUS_SKIP : st, msg,
			   body ? body : yaml);
	free(body);
	free(yaml);
	eg__row(g, eg__verdict_upper[res->verdict], res->summary, res->diag);
	return rc < 0 ? rc : 0;
}

/* One gate: its verdict counted and reported, or its error. */
static int eg__one(eg__run_t *r, const eg_gate_t *g)
{
	char err[EG_GATE_ERR_MAX];
	eg_gate_result_t res;
	size_t k;
	json_t *id;
	double t0 = eg_now(); /* a gate case's time: its evaluation */
	int rc = eg_gate_eval(&r->gf, g, r->o->data, &res, err, sizeof(err));
	double dt = eg_now() - t0;

	if (rc) {
		if (rc != EG_EPARSE)
			snprintf(err, sizeof(err), "%s:%d: gate \"%s\": %s",
				 r->gf.path, g->line, g->name, eg_strerror(rc));
		fprintf(stderr, "%s: %s\n", r->o->prog, err);
		r->errors++;
		return eg__report(r, g, NULL, err, dt);
	}
	r->count[res.verdict]++;
	if (res.verdict == EG_VERDICT_INCONCLUSIVE) {
		json_array_foreach(res.remeasure, k, id)
		{
			size_t j;
			json_t *seen;
			int dup = 0;

			json_array_foreach(r->remeasure, j, seen)
			{
				dup |= json_equal(seen, id);
			}
			if (!dup)
				json_array_append(r->remeasure, id);
		}
	}
	rc = eg__report(r, g, &res, NULL, dt);
	eg_gate_result_fini(&res);
	return rc;
}

static int eg__exit_code(const eg__run_t *r)
{
	unsigned n = (unsigned)r->gf.n_gates;
	size_t k;
	json_t *id;

	fflush(stdout); /* the table before what follows on stderr */
	if (r->count[EG_VERDICT_INCONCLUSIVE]) {
		fprintf(stderr,
			"%s: warning: %u gate(s) inconclusive%s; measure "
			"again:",
			r->o->prog, r->count[EG_VERDICT_INCONCLUSIVE],
			r->o->strict ? " (--strict: a failure)" : "");
		json_array_foreach(r->remeasure, k, id)
		{
			fprintf(stderr, " %s", json_string_value(id));
		}
		fputc('\n', stderr);
	}
	if (r->errors)
		return EG_EXIT_HARD;
	if (r->count[EG_VERDICT_FAIL])
		return EG_EXIT_FAIL;
	if (r->o->strict && r->count[EG_VERDICT_INCONCLUSIVE])
		return EG_EXIT_FAIL;
	if (r->count[EG_VERDICT_SKIP] == n)
		return EG_EXIT_SKIP;
	return EG_EXIT_PASS;
}

/* The last line, the verdict in the word of the exit status: "FAIL: 16
 * gates: 9 pass, 3 fail, 3 inconclusive, 1 skip (exit 1)". */
static void eg__last_line(const eg__run_t *r, int rc)
{
	fflush(stderr);
	printf("%s: %zu gates: %u pass, %u fail, %u inconclusive, %u skip",
	       eg__gate_exit_word(rc), r->gf.n_gates, r->count[EG_VERDICT_PASS],
	       r->count[EG_VERDICT_FAIL], r->count[EG_VERDICT_INCONCLUSIVE],
	       r->count[EG_VERDICT_SKIP]);
	if (r->errors)
		printf(", %u could not be judged", r->errors);
	printf(" (exit %d)\n", rc);
	fflush(stdout);
}

/* What was judged, beside the reports; summary.json in a folder of its
 * own.  rc, or 99 when they cannot be written. */
static int eg__keep(const eg__run_t *r, int rc)
{
	eg__record_t rec = {r->o, r->junit_path, r->count, r->errors,
			    rc,	  r->failures};

	if (eg__gate_judged(&rec) < 0 ||
	    (r->run[0] && eg__gate_summary(&rec, r->run, r->gf.profile) < 0)) {
		fprintf(stderr, "%s: cannot write the record beside %s\n",
			r->o->prog, r->junit_path);
		return EG_EXIT_HARD;
	}
	return rc;
}

/* Opens the reports (a run folder for those not given). */
static int eg__open_reports(eg__run_t *r)
{
	const char *tap_path = r->o->tap, *junit_path = r->o->junit;
	const char *reports = r->o->reports ? r->o->reports : "reports/runs";
	char run[4096], tap[4200], junit[4200], suite[160];
	int rc;

	if (!tap_path || !junit_path) {
		rc = eg_run_dir_create(reports, run, sizeof(run));
		if (rc < 0) {
			fprintf(stderr,
				"%s: --reports %s: cannot create a run folder: "
				"%s\n",
				r->o->prog, reports, eg_strerror(rc));
			return rc;
		}
		snprintf(tap, sizeof(tap), "%s/gate.tap", run);
		snprintf(junit, sizeof(junit), "%s/gate.junit.xml", run);
		if (!tap_path && !junit_path) /* the folder is this run's */
			snprintf(r->run, sizeof(r->run), "%s", run);
		tap_path = tap_path ? tap_path : tap;
		junit_path = junit_path ? junit_path : junit;
	}
	snprintf(suite, sizeof(suite), "gates.%s", r->gf.profile);
	rc = eg_tap_open(&r->tap, tap_path, (int)r->gf.n_gates);
	if (rc < 0) {
		fprintf(stderr, "%s: --tap %s: %s\n", r->o->prog, tap_path,
			eg_strerror(rc));
		return rc;
	}
	rc = eg_junit_open(&r->junit, junit_path, suite);
	if (rc < 0) {
		fprintf(stderr, "%s: --junit %s: %s\n", r->o->prog, junit_path,
			eg_strerror(rc));
		return rc;
	}
	if (r->o->data) { /* what ran, as the suite's properties */
		json_t *ev =
		    eg_results_evidence(r->o->data->cur, r->o->data->n_cur);

		if (ev)
			eg_junit_evidence(r->junit, ev);
		json_decref(ev);
	}
	snprintf(r->tap_path, sizeof(r->tap_path), "%s", tap_path);
	snprintf(r->junit_path, sizeof(r->junit_path), "%s", junit_path);
	return 0;
}

/* Every gate, after the table's header. */
static int eg__evaluate(eg__run_t *r)
{
	printf("%-12s %-30s %-9s %-22s %s\n", "verdict", "gate", "rule",
	       "metric", "result");
	for (size_t i = 0; i < r->gf.n_gates; i++) {
		int rc = eg__one(r, &r->gf.gates[i]);

		if (rc) {
			fprintf(stderr, "%s: cannot write the reports\n",
				r->o->prog);
			return rc;
		}
	}
	return 0;
}

int eg_gate_run(const eg_gate_run_opts_t *o)
{
	eg__run_t r = {.o = o};
	char err[EG_GATE_ERR_MAX];
	int rc = EG_EXIT_HARD;

	if (eg_gate_file_load(&r.gf, o->gates, err, sizeof(err)) ||
	    eg_gate_file_check(&r.gf, o->data, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", o->prog, err);
		goto out;
	}
	r.remeasure = json_array();
	r.failures = json_array();
	r.repro = eg__repro_line(o);
	if (!r.remeasure || !r.failures || !r.repro || eg__open_reports(&r) ||
	    eg__evaluate(&r))
		goto out;
	rc = eg__exit_code(&r);
	fprintf(stderr, "%s: TAP %s, JUnit %s\n", o->prog, r.tap_path,
		r.junit_path);
	if (eg_tap_close(r.tap) < 0)
		rc = EG_EXIT_HARD;
	r.tap = NULL;
	if (eg_junit_close(r.junit) < 0)
		rc = EG_EXIT_HARD;
	r.junit = NULL;
	rc = eg__keep(&r, rc);
	eg__last_line(&r, rc);
out:
	if (r.tap)
		eg_tap_close(r.tap);
	if (r.junit && eg_junit_close(r.junit) < 0)
		rc = EG_EXIT_HARD;
	json_decref(r.remeasure);
	json_decref(r.failures);
	free(r.repro);
	eg_gate_file_free(&r.gf);
	return rc;
}
