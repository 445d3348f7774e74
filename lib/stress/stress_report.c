/* `epgate stress`: a case as the reports carry it -- JSON (every
 * failure), the TAP point's diagnostics (the first ones) and the
 * terminal's lines (lib/stress/stress.h). */
#include <stdio.h>
#include <string.h>

#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

static const char *eg__replay_word(int r)
{
	return r > 0 ? "failed again" : r == 0 ? "passed" : "not replayed";
}

static json_t *eg__fail_json(const eg_stress_fail_t *f)
{
	return json_pack("{sI sI ss si ss ss ss ss}", "call",
			 (json_int_t)f->call, "iteration", (json_int_t)f->iter,
			 "mode", eg_stress_mode_names[f->mode], "instance",
			 f->instance, "stage", f->stage, "kind",
			 eg_stress_fail_kind(f), "what", f->what, "replay",
			 eg__replay_word(f->replay));
}

/* A state fault's category: where it starts, whether it stays. */
static void eg__category_seq(const eg_stress_case_t *c, char *buf, size_t len)
{
	const eg_stress_fail_t *f = &c->fails[0];
	/* every checked call from the first failure on failed (replays are
	 * not counted as calls) */
	int stays = c->failures == c->checked - c->checked_before;

	snprintf(buf, len,
		 "call-count/state dependent: %s call %llu of an instance%s: "
		 "the %llu calls up to and including it fail it again, one "
		 "call on its inputs in a fresh process does not",
		 stays ? "from" : "first at", (unsigned long long)f->call,
		 stays ? " on (every checked call from it failed)"
		       : " (not every later call failed)",
		 (unsigned long long)eg_stress_repro_calls(f));
}

/* Which replay command failed it again, for the categories that say
 * where it failed rather than what it depends on. */
static const char *eg__repro_clause(const eg_stress_case_t *c)
{
	return c->repro_in == EG_STRESS_RERUN_AGAIN
		   ? "; one call on its inputs fails it again"
	       : c->repro_seq == EG_STRESS_RERUN_AGAIN
		   ? "; only the calls up to it fail it again"
	       : c->repro_in == EG_STRESS_RERUN_NOT &&
		       c->repro_seq == EG_STRESS_RERUN_NOT
		   ? "; not reproduced when its replay commands were run"
		   : "";
}

/* What kind of failure the case shows: where it failed, how its replay
 * at once went, and which replay command failed it again when run. */
static void eg__category(const eg_stress_case_t *c, char *buf, size_t len)
{
	size_t passed = 0;

	for (size_t i = 0; i < c->n_fails; i++)
		passed += c->fails[i].replay == 0;
	if (!c->failures)
		snprintf(buf, len, "%s",
			 c->promised && c->same_differ ? "nondeterministic"
			 : eg_stress_runs_failed(c)    ? "nondeterministic run "
							 "to run"
						       : "none");
	else if (c->ended && c->failures == 1)
		snprintf(buf, len,
			 "error: the call failed and ended the case%s",
			 eg__repro_clause(c));
	else if (c->mode_failed[EG_STRESS_OVERLAP] == c->failures &&
		 c->checked > c->mode_checked[EG_STRESS_OVERLAP])
		snprintf(buf, len,
			 "overlap only: wrong only when two instances' calls "
			 "interleave%s",
			 eg__repro_clause(c));
	else if (c->repro_in == EG_STRESS_RERUN_AGAIN && !passed)
		snprintf(buf, len,
			 "input-dependent: every failure failed again on its "
			 "inputs, and one call on them in a fresh process "
			 "fails it again");
	else if (c->repro_in == EG_STRESS_RERUN_AGAIN)
		snprintf(buf, len,
			 "intermittent: some failures passed when replayed at "
			 "once, yet one call on the first one's inputs in a "
			 "fresh process failed again (state or timing)");
	else if (c->repro_seq == EG_STRESS_RERUN_AGAIN)
		eg__category_seq(c, buf, len);
	else if (c->repro_in == EG_STRESS_RERUN_NOT &&
		 c->repro_seq == EG_STRESS_RERUN_NOT)
		snprintf(
		    buf, len,
		    "intermittent: not reproduced: neither one call on its "
		    "inputs nor the %llu calls up to it failed it again in "
		    "a fresh process (state or timing)",
		    (unsigned long long)eg_stress_repro_calls(&c->fails[0]));
	else /* a replay command could not run: the replays at once alone */
		snprintf(buf, len,
			 "unknown: not every replay command could run; %s",
			 passed ? "some failures passed when replayed at once"
				: "every failure failed again when replayed at "
				  "once");
}

static json_t *eg__nondet_json(const eg_stress_case_t *c)
{
	const char *v = !c->same_compared ? "not judged (no identical calls)"
			: !c->same_differ ? "none: identical inputs gave "
					    "identical bytes"
			: c->promised ? "nondeterministic: identical inputs "
					"gave different bytes"
				      : "not promised (no fixed order): "
					"identical inputs gave different "
					"bytes";
	json_t *o =
	    json_pack("{sb sI sI ss}", "promised", c->promised, "compared",
		      (json_int_t)c->same_compared, "differing",
		      (json_int_t)c->same_differ, "verdict", v);

	if (o && c->same_differ) {
		json_object_set_new(o, "first_call",
				    json_integer((json_int_t)c->differ_call));
		json_object_set_new(o, "first_iteration",
				    json_integer((json_int_t)c->differ_iter));
	}
	return o;
}

static json_t *eg__watch_json(const eg_stress_case_t *c)
{
	const double mib = 1024.0 * 1024.0;
	json_t *o;

	if (!c->watched)
		return json_pack("{sb ss}", "watched", 0, "verdict",
				 "not watched (fewer calls than one cycle)");
	o = json_pack(
	    "{sb sI sf sf si si si ss ss}", "watched", 1, "calls",
	    (json_int_t)c->watch_calls, "rss_mib_start", c->w0.rss_bytes / mib,
	    "rss_mib_end", c->w1.rss_bytes / mib, "fds_start", (int)c->w0.fds,
	    "fds_end", (int)c->w1.fds, "processes", (int)c->w1.procs, "verdict",
	    c->grew ? "grew past the bound" : "within bound", "detail",
	    c->watch);
	if (o && c->w0.have_dev && c->w1.have_dev) {
		json_object_set_new(o, "device_mib_start",
				    json_real(c->w0.dev_bytes / mib));
		json_object_set_new(o, "device_mib_end",
				    json_real(c->w1.dev_bytes / mib));
	}
	return o;
}

static json_t *eg__trend_json(const eg_stress_case_t *c)
{
	const eg_stress_trend_t *t = &c->trend;

	if (!t->judged)
		return json_pack("{sb ss}", "judged", 0, "verdict", t->say);
	return json_pack("{sb sb sI sI sf sf sf sf si ss}", "judged", 1, "grew",
			 t->grew, "calls", (json_int_t)(t->last - t->first + 1),
			 "points", (json_int_t)t->n, "growth", t->growth,
			 "growth_lo", t->lo, "growth_hi", t->hi, "early_us",
			 1e6 * t->early_s, "cycles_per_point", (int)t->per,
			 "verdict", t->say);
}

/* Instance cycling: the instances, their calls, what they left. */
static void eg__cycle_say(const eg_stress_opts_t *o, const eg_stress_case_t *c,
			  char *buf, size_t len)
{
	const eg_stress_cycle_t *y = &c->cyc;

	snprintf(buf, len,
		 "%u of %u created, called (%u checked calls each) and "
		 "destroyed in one process, %llu of %llu calls failed%s%s; "
		 "resources from the first's end to the last's: %s",
		 y->instances, o->instances, o->instance_calls,
		 (unsigned long long)y->failures, (unsigned long long)y->calls,
		 y->first[0] ? ": first " : "", y->first,
		 y->watched ? y->watch
			    : "not watched (fewer than 2 instances, an "
			      "error, or EPGATE_WATCH=0)");
}

static json_t *eg__cycle_json(const eg_stress_opts_t *o,
			      const eg_stress_case_t *c)
{
	const eg_stress_cycle_t *y = &c->cyc;
	char say[1600];

	eg__cycle_say(o, c, say, sizeof(say));
	return json_pack(
	    "{si si sI sI sb sb sb ss}", "instances", (int)y->instances,
	    "calls_each", (int)o->instance_calls, "calls", (json_int_t)y->calls,
	    "failures", (json_int_t)y->failures, "ended", y->ended, "watched",
	    y->watched, "grew", y->grew, "verdict", say);
}

static json_t *eg__modes_json(const eg_stress_case_t *c)
{
	json_t *o = json_object();

	for (int m = 0; o && m < EG_STRESS_MODES; m++)
		json_object_set_new(o, eg_stress_mode_names[m],
				    json_pack("{sI sI}", "checked",
					      (json_int_t)c->mode_checked[m],
					      "failed",
					      (json_int_t)c->mode_failed[m]));
	return o;
}

/* Why no replay command is printed. */
static const char *eg__repro_none(const eg_stress_case_t *c)
{
	return c->repro_in == EG_STRESS_RERUN_NOT &&
		       c->repro_seq == EG_STRESS_RERUN_NOT
		   ? "neither replay command failed it again when run"
		   : "not every replay command could run";
}

/* The first failure with the replay commands that reproduced it (only
 * those) and what running each saw. */
static json_t *eg__first_json(const eg_stress_opts_t *o,
			      const eg_stress_case_t *c)
{
	char in[6000], seq[6000];
	json_t *f;

	if (!c->n_fails)
		return json_null();
	eg_stress_repro(o, c, NULL, in, sizeof(in), seq, sizeof(seq));
	f = eg__fail_json(&c->fails[0]);
	if (c->repro_in == EG_STRESS_RERUN_AGAIN)
		json_object_set_new(f, "repro_inputs", json_string(in));
	if (c->repro_seq == EG_STRESS_RERUN_AGAIN)
		json_object_set_new(f, "repro_sequence", json_string(seq));
	if (c->repro_in != EG_STRESS_RERUN_AGAIN &&
	    c->repro_seq != EG_STRESS_RERUN_AGAIN)
		json_object_set_new(f, "repro_none",
				    json_string(eg__repro_none(c)));
	json_object_set_new(f, "repro_check",
			    json_pack("{ss ss sI}", "inputs", c->repro_in_saw,
				      "sequence", c->repro_seq_saw, "calls",
				      (json_int_t)c->repro_calls));
	return f;
}

json_t *eg_stress_case_json(const eg_stress_opts_t *o,
			    const eg_stress_case_t *c, size_t max_fails)
{
	json_t *j, *all = json_array();
	char sum[256], cat[600];

	eg_workload_summary(c->w, sum, sizeof(sum));
	j = json_pack("{ss ss ss}", "workload", c->w->name, "shape", sum,
		      "status",
		      c->skipped		 ? "skip"
		      : c->hard			 ? "error"
		      : eg_stress_case_failed(c) ? "fail"
						 : "pass");
	if (!j || !all)
		return json_decref(j), json_decref(all), NULL;
	if (c->skipped) {
		json_object_set_new(j, "skip", json_string(c->skip_why));
		json_decref(all);
		return j;
	}
	json_object_set_new(j, "calls", json_integer((json_int_t)c->calls));
	json_object_set_new(j, "checked", json_integer((json_int_t)c->checked));
	json_object_set_new(j, "failures",
			    json_integer((json_int_t)c->failures));
	json_object_set_new(j, "rate", json_real(c->rate));
	json_object_set_new(j, "ci95", json_pack("[f f]", c->lo, c->hi));
	json_object_set_new(j, "replays", json_integer((json_int_t)c->replays));
	json_object_set_new(j, "seconds", json_real(c->seconds));
	json_object_set_new(j, "modes", eg__modes_json(c));
	eg__category(c, cat, sizeof(cat));
	json_object_set_new(j, "category", json_string(cat));
	json_object_set_new(j, "first_failure", eg__first_json(o, c));
	json_object_set_new(j, "nondeterminism", eg__nondet_json(c));
	json_object_set_new(j, "run_to_run", eg_stress_runs_json(c));
	json_object_set_new(j, "resources", eg__watch_json(c));
	json_object_set_new(j, "one_instance_calls",
			    json_integer((json_int_t)c->long_calls));
	json_object_set_new(j, "trend", eg__trend_json(c));
	if (o && o->instances)
		json_object_set_new(j, "instance_cycling",
				    eg__cycle_json(o, c));
	if (c->ended)
		json_object_set_new(j, "error", json_string(c->end));
	for (size_t i = 0; i < c->n_fails && i < max_fails; i++)
		json_array_append_new(all, eg__fail_json(&c->fails[i]));
	json_object_set_new(j, "failures_listed", all);
	json_object_set_new(
	    j, "failures_not_listed",
	    json_integer((json_int_t)(c->failures - json_array_size(all))));
	return j;
}

static void eg__say_counts(FILE *f, const eg_stress_case_t *c)
{
	fprintf(f,
		"%llu calls (%llu checked), %llu failed: rate %.3g%% [%.3g%%, "
		"%.3g%%] (95%%, Clopper-Pearson)",
		(unsigned long long)c->calls, (unsigned long long)c->checked,
		(unsigned long long)c->failures, 100 * c->rate, 100 * c->lo,
		100 * c->hi);
}

void eg_stress_case_say(FILE *f, const eg_stress_opts_t *o,
			const eg_stress_case_t *c)
{
	json_t *nd;
	char cat[600];

	if (c->skipped) {
		fprintf(f, "  SKIP %s: %s\n", c->w->name, c->skip_why);
		return;
	}
	fprintf(f, "  %s %s: ", eg_stress_case_failed(c) ? "FAIL" : "pass",
		c->w->name);
	eg__say_counts(f, c);
	nd = eg__nondet_json(c);
	fprintf(f, "\n    nondeterminism: %s (%llu identical calls)\n",
		json_string_value(json_object_get(nd, "verdict")),
		(unsigned long long)c->same_compared);
	json_decref(nd);
	eg_stress_runs_say(f, c);
	fprintf(f, "    resources: %s\n",
		c->watched ? c->watch
			   : "not watched (fewer calls than one "
			     "cycle)");
	fprintf(f, "    one instance: %llu calls; trend: %s\n",
		(unsigned long long)c->long_calls, c->trend.say);
	if (o && o->instances) {
		char say[1600];

		eg__cycle_say(o, c, say, sizeof(say));
		fprintf(f, "    instances: %s\n", say);
	}
	if (c->ended)
		fprintf(f, "    ended: %s\n", c->end);
	if (!c->n_fails)
		return;
	eg__category(c, cat, sizeof(cat));
	fprintf(f,
		"    first failure: call %llu (iteration %u, %s): %s: %s; "
		"replayed at once: %s\n    category: %s\n",
		(unsigned long long)c->fails[0].call, c->fails[0].iter,
		eg_stress_mode_names[c->fails[0].mode], c->fails[0].stage,
		c->fails[0].what, eg__replay_word(c->fails[0].replay), cat);
	eg_stress_repro_say(f, "    ", o, c);
}

void eg_stress_repro_say(FILE *f, const char *ind, const eg_stress_opts_t *o,
			 const eg_stress_case_t *c)
{
	char in[6000], seq[6000];

	if (!c->n_fails)
		return;
	eg_stress_repro(o, c, NULL, in, sizeof(in), seq, sizeof(seq));
	if (c->repro_in == EG_STRESS_RERUN_AGAIN)
		fprintf(f, "%sinputs:   %s\n", ind, in);
	if (c->repro_seq == EG_STRESS_RERUN_AGAIN)
		fprintf(f, "%ssequence: %s\n", ind, seq);
	if (c->repro_in != EG_STRESS_RERUN_AGAIN &&
	    c->repro_seq != EG_STRESS_RERUN_AGAIN)
		fprintf(f, "%sreproducer: none: %s\n", ind, eg__repro_none(c));
	fprintf(f,
		"%schecked before printing, each as printed in a fresh "
		"process (%llu call%s): one call on its inputs: %s; the "
		"sequence: %s\n",
		ind, (unsigned long long)c->repro_calls,
		c->repro_calls == 1 ? "" : "s",
		c->repro_in_saw[0] ? c->repro_in_saw : "not run",
		c->repro_seq_saw[0] ? c->repro_seq_saw : "not run");
}
