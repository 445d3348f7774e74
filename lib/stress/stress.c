/* `epgate stress` (lib/stress/stress.h, docs/stress.md): the selected
 * workloads through one engine for a budget each, one TAP point and one
 * JUnit case per workload as it ends, and stress.json with every failure
 * (rewritten after every case, so a run that is stopped keeps what it
 * saw). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

#define EG__PROG       "epgate stress"
#define EG__TAP_FAILS  10 /* failures in a TAP point; all are in JSON */
#define EG__UNIT_FAILS 200

typedef struct eg__st {
	const eg_stress_opts_t *o;
	const eg_engine_ops_t *ops;
	eg_tap_t *tap;
	eg_junit_t *junit;
	json_t *doc, *cases;
	char tap_path[4200], junit_path[4200], json_path[4200], run[4096];
	eg_l1_totals_t tot;
	eg_stress_hashes_t *hashes; /* --hashes, --compare-hashes */
	int hard;
} eg__st_t;

/* The engine must run in this process (a plugin: in a child of it). */
static int eg__engine(const eg_stress_opts_t *o, const eg_engine_ops_t **ops)
{
	*ops = eg_engine_find(o->engine);
	if (!*ops) {
		eg_engine_say_unknown(EG__PROG, o->engine);
		return EG_EINVAL;
	}
	if ((((*ops)->flags & EG_ENGINE_MULTI_PROCESS) &&
	     !((*ops)->flags & EG_ENGINE_WORLD1)) ||
	    (*ops)->size < sizeof(eg_engine_ops_t)) {
		fprintf(stderr,
			EG__PROG ": --engine %s runs one rank per process: "
				 "stress takes in-process engines and world-1 "
				 "plugins\n",
			o->engine);
		return EG_EINVAL;
	}
	return EG_OK;
}

static int eg__json_write(const eg__st_t *s)
{
	char tmp[4300];

	snprintf(tmp, sizeof(tmp), "%s.tmp", s->json_path);
	if (json_dump_file(s->doc, tmp, JSON_INDENT(2)) < 0 ||
	    rename(tmp, s->json_path) < 0) {
		fprintf(stderr, EG__PROG ": cannot write %s\n", s->json_path);
		return EG_EIO;
	}
	return EG_OK;
}

/* The JUnit case's text: every failure listed (up to a bound), the
 * replay commands. */
static char *eg__details(const eg_stress_opts_t *o, const eg_stress_case_t *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (c->ended)
		fprintf(f, "ended: %s\n", c->end);
	for (size_t i = 0; i < c->n_fails && i < EG__UNIT_FAILS; i++)
		fprintf(f, "call %llu (iteration %u, %s%s): %s: %s\n",
			(unsigned long long)c->fails[i].call, c->fails[i].iter,
			eg_stress_mode_names[c->fails[i].mode],
			c->fails[i].instance ? ", second instance" : "",
			c->fails[i].stage, c->fails[i].what);
	if (c->n_fails > EG__UNIT_FAILS)
		fprintf(f, "... %zu more in stress.json\n",
			c->n_fails - EG__UNIT_FAILS);
	if (c->watched)
		fprintf(f, "resources: %s\n", c->watch);
	fprintf(f, "trend: %s\n", c->trend.say);
	if (c->cyc.first[0] || c->cyc.watched)
		fprintf(f, "instances: %u; %s%s%s\n", c->cyc.instances,
			c->cyc.first, c->cyc.first[0] ? "; " : "",
			c->cyc.watched ? c->cyc.watch : "");
	eg_stress_repro_say(f, "", o, c);
	fclose(f);
	return buf;
}

/* One case's TAP point, JUnit case and JSON entry. */
static void eg__report(eg__st_t *s, const eg_stress_case_t *c)
{
	json_t *full = eg_stress_case_json(s->o, c, EG_STRESS_FAILS_MAX);
	json_t *diag = eg_stress_case_json(s->o, c, EG__TAP_FAILS);
	int failed = eg_stress_case_failed(c);
	eg_status_t st = c->skipped ? EG_STATUS_SKIP
			 : c->hard  ? EG_STATUS_ERROR
			 : failed   ? EG_STATUS_FAIL
				    : EG_STATUS_PASS;
	char desc[400], msg[400], *details = failed ? eg__details(s->o, c) : 0;

	snprintf(desc, sizeof(desc), "%s: %llu calls, %llu failed", c->w->name,
		 (unsigned long long)c->calls, (unsigned long long)c->failures);
	snprintf(msg, sizeof(msg),
		 "%llu of %llu checked calls failed (rate %.3g%%, 95%% "
		 "[%.3g%%, %.3g%%])%s%s%s%s%s",
		 (unsigned long long)c->failures,
		 (unsigned long long)c->checked, 100 * c->rate, 100 * c->lo,
		 100 * c->hi, c->grew ? "; resources grew" : "",
		 c->promised && c->same_differ ? "; nondeterministic" : "",
		 eg_stress_runs_failed(c) ? "; other bytes run to run" : "",
		 c->cyc.grew || c->cyc.failures || c->cyc.ended
		     ? "; instance cycling failed"
		     : "",
		 c->trend.grew ? "; call time grows" : "");
	eg_tap_point(s->tap, st == EG_STATUS_ERROR ? EG_STATUS_FAIL : st, desc,
		     c->skipped ? c->skip_why : NULL, c->skipped ? NULL : diag);
	eg_junit_case(s->junit, "epgate.stress", c->w->name, c->seconds, st,
		      c->skipped ? c->skip_why
		      : failed	 ? msg
				 : NULL,
		      details);
	json_array_append_new(s->cases, full);
	s->tot.run++;
	s->tot.skipped += c->skipped;
	s->tot.failed += st == EG_STATUS_FAIL;
	s->tot.errors += st == EG_STATUS_ERROR;
	s->tot.passed += st == EG_STATUS_PASS;
	s->hard |= st == EG_STATUS_ERROR;
	json_decref(diag);
	free(details);
}

/* Report files: as given, else in a new run folder. */
static int eg__open_reports(eg__st_t *s, size_t n)
{
	const eg_report_cli_t *r = &s->o->report;
	int rc;

	if ((!r->tap || !r->junit || !s->o->json) &&
	    eg_suite_run_dir(EG__PROG, r->reports, s->run, sizeof(s->run)) < 0)
		return EG_EIO;
	snprintf(s->tap_path, sizeof(s->tap_path), "%s",
		 r->tap ? r->tap : s->run);
	snprintf(s->junit_path, sizeof(s->junit_path), "%s",
		 r->junit ? r->junit : s->run);
	snprintf(s->json_path, sizeof(s->json_path), "%s",
		 s->o->json ? s->o->json : s->run);
	if (!r->tap)
		strncat(s->tap_path, "/stress.tap", 64);
	if (!r->junit)
		strncat(s->junit_path, "/stress.junit.xml", 64);
	if (!s->o->json)
		strncat(s->json_path, "/stress.json", 64);
	if ((rc = eg_tap_open(&s->tap, s->tap_path, (int)n)) < 0 ||
	    (rc = eg_junit_open(&s->junit, s->junit_path, "epgate-stress")) <
		0) {
		fprintf(stderr, EG__PROG ": the reports (%s, %s): %s\n",
			s->tap_path, s->junit_path, eg_strerror(rc));
		return rc;
	}
	s->cases = json_array();
	s->doc = json_pack("{ss ss sf sI sb so}", "tool", EG__PROG, "engine",
			   s->o->engine, "budget_s", s->o->for_s, "calls",
			   (json_int_t)s->o->calls, "overlap", s->o->overlap,
			   "cases", s->cases);
	return s->doc ? EG_OK : EG_ENOMEM;
}

static void eg__run_cases(eg__st_t *s, const eg_workload_list_t *wl)
{
	double share = s->o->for_s / (double)(wl->n ? wl->n : 1);
	FILE *out = stdout;

	fprintf(out, EG__PROG ": engine %s, %zu case(s), %s each%s\n",
		s->o->engine, wl->n,
		s->o->calls ? "a number of calls" : "a time share",
		s->o->overlap ? ", with overlap rounds" : "");
	for (size_t i = 0; i < wl->n; i++) {
		eg_stress_case_t c = {.w = &wl->items[i]};

		eg_stress_case_run(s->o, s->ops, share, &c);
		eg_stress_hashes_case(s->hashes, &c);
		eg_stress_case_say(out, s->o, &c);
		fflush(out);
		eg__report(s, &c);
		eg__json_write(s);
		eg_stress_case_fini(&c);
	}
}

/* The default cases (no --workload, no key): the L1 matrix, then the
 * scale tier (docs/stress.md, "What it runs"). */
static int eg__scale_tier(const eg_stress_opts_t *o, eg_workload_list_t *wl)
{
	eg_workload_list_t t;

	if (o->workload_file || o->overrides.n)
		return EG_OK;
	if (eg_cli_load_data(EG__PROG, EG_SCALE_TIER, &t) < 0 ||
	    eg_cli_list_append(wl, &t) < 0) {
		eg_workload_list_free(&t);
		return EG_EINVAL;
	}
	return EG_OK;
}

int eg_stress(const eg_stress_opts_t *o)
{
	eg__st_t s = {.o = o};
	eg_workload_list_t wl = {0};
	int rc = EG_EXIT_HARD;

	if (eg__engine(o, &s.ops) < 0 ||
	    eg_cli_load_workloads(EG__PROG, o->workload_file, &o->overrides,
				  &wl) < 0 ||
	    eg__scale_tier(o, &wl) < 0)
		goto out;
	eg_workload_list_filter(&wl, o->filter);
	if (!wl.n) {
		fprintf(stderr, EG__PROG ": no workload selected\n");
		rc = EG_EXIT_SKIP;
		goto out;
	}
	if (eg_stress_hashes_open(o, &s.hashes) < 0 ||
	    eg__open_reports(&s, wl.n) < 0)
		goto out;
	eg_stress_watchdog_start(eg_stress_timeout());
	eg__run_cases(&s, &wl);
	rc = eg_suite_exit(&s.tot, s.hard);
	printf("  TAP:   %s\n  JUnit: %s\n  JSON:  %s\n", s.tap_path,
	       s.junit_path, s.json_path);
	printf("%s: %u passed, %u failed, %u skipped (exit %d)\n",
	       eg_exit_word(rc), s.tot.passed, s.tot.failed + s.tot.errors,
	       s.tot.skipped, rc);
out:
	eg_stress_hashes_close(s.hashes);
	eg_tap_close(s.tap);
	eg_junit_close(s.junit);
	json_decref(s.doc);
	eg_workload_list_free(&wl);
	return rc;
}

void eg_stress_case_fini(eg_stress_case_t *c)
{
	free(c->fails);
	c->fails = NULL;
	c->n_fails = c->cap_fails = 0;
}
