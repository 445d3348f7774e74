/* L1: each workload through an in-process engine (all ranks in this
 * process), dispatch and combine verified against the dense reference by
 * the verified step (include/epgate/step.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/evidence.h"
#include "lib/suite/l1_int.h"

#define EG__DETAIL_MAX 4096

/* The reports and totals of one run. */
typedef struct eg__l1 {
	const eg_l1_opts_t *o;
	const eg_engine_ops_t *ops;
	eg_tap_t *tap;
	eg_junit_t *junit;
	char classname[300];
	eg_l1_totals_t *tot;
	int hard;
	unsigned said;	   /* failures said in full on o->out */
	double t0, t_said; /* start, last progress line */
	size_t n;	   /* workloads */
} eg__l1_t;

/* A failure on the terminal: the first few in full, every one with -v. */
static void eg__l1_say(eg__l1_t *L, const eg_workload_t *w, const json_t *d)
{
	if (!L->o->out || (L->said >= EG_SAY_FAILURES && !L->o->verbose))
		return;
	eg_case_say(L->o->out, w->name, d, L->o->verbose);
	L->said++;
	fflush(L->o->out);
}

/* Every few seconds, how far the run is. */
static void eg__l1_progress(eg__l1_t *L)
{
	double now = eg_now();

	if (!L->o->out || !L->o->progress || now - L->t_said < 5.0)
		return;
	L->t_said = now;
	fprintf(L->o->out, "%s%u of %zu workloads, %u failed, %.0f s ...\n",
		L->o->progress, L->tot->run, L->n,
		L->tot->failed + L->tot->errors, now - L->t0);
	fflush(L->o->out);
}

/* One workload: every iteration through the step, host memory. */
static void eg__l1_case(const eg__l1_t *L, const eg_workload_t *w,
			eg_rank_verdict_t *v)
{
	const char *t = getenv("EPGATE_TIMEOUT");
	eg_step_opts_t so = {
	    .size = sizeof(so),
	    .w = w,
	    .engine = L->ops,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = w->world},
	    .space = &eg_space_host,
	    /* refused up front over the budgets; a deadline per iteration */
	    .budget = 1,
	    .deadline_s = t && atof(t) > 0 ? atof(t) : 60.0};
	eg_step_t *st = NULL;

	eg_rank_verdict_init(v);
	v->iter = w->iter;
	if (eg_step_open(&st, &so, v) < 0)
		return;
	eg_step_verify_iters(st, L->o->iters ? L->o->iters : 1, v);
	eg_step_close(st);
}

static void eg__l1_harness(eg__l1_t *L, const eg_workload_t *w,
			   const char *desc, const eg_rank_verdict_t *v,
			   const char *repro, double dt)
{
	json_t *d = json_object();
	char msg[256];

	snprintf(msg, sizeof(msg), "harness error: %s%s%s",
		 eg_strerror(v->harness_err), *v->stage ? " in " : "",
		 v->stage);
	json_object_set_new(d, "error", json_string(msg));
	json_object_set_new(d, "repro", json_string(repro));
	eg__l1_say(L, w, d);
	eg_tap_point(L->tap, EG_STATUS_FAIL, desc, NULL, d);
	eg_junit_case(L->junit, L->classname, w->name, dt, EG_STATUS_ERROR, msg,
		      repro);
	json_decref(d);
	L->tot->errors++;
	L->hard = 1;
}

static void eg__l1_fail(eg__l1_t *L, const eg_workload_t *w, const char *desc,
			const eg_rank_verdict_t *v, const char *repro,
			double dt)
{
	json_t *d =
	    eg_case_diag(w, &v->v, v->stage, v->iter, v->engine_err, repro);
	char *detail = malloc(EG__DETAIL_MAX);
	char msg[1400], st[32] = "";

	if (v->engine_msg[0])
		json_object_set_new(d, "engine_message",
				    json_string(v->engine_msg));
	if (w->steps > 1) {
		json_object_set_new(d, "step", json_integer(v->step));
		snprintf(st, sizeof(st), "step %u, ", v->step + 1);
	}
	if (v->engine_err)
		snprintf(msg, sizeof(msg),
			 "%s returned %s (%siteration %u)%s%s", v->stage,
			 eg_err_name(v->engine_err), st, v->iter,
			 v->engine_msg[0] ? ": " : "", v->engine_msg);
	else
		snprintf(msg, sizeof(msg), "%s: %llu wrong (%siteration %u)",
			 v->stage,
			 (unsigned long long)eg_verdict_total_wrong(&v->v), st,
			 v->iter);
	if (detail) {
		int n = eg_verdict_format(&v->v, detail, EG__DETAIL_MAX);
		if (n >= 0 && n < EG__DETAIL_MAX)
			snprintf(detail + n, (size_t)(EG__DETAIL_MAX - n),
				 "\nrepro: %s\n", repro);
	}
	eg_tap_point(L->tap, EG_STATUS_FAIL, desc, NULL, d);
	eg_junit_case(L->junit, L->classname, w->name, dt, EG_STATUS_FAIL, msg,
		      detail);
	eg__l1_say(L, w, d);
	if (L->o->verbose && detail && L->o->out)
		fprintf(L->o->out, "%s", detail);
	free(detail);
	json_decref(d);
	L->tot->failed++;
}

/* The case's process ended under it (a plugin's forked child): CRASH,
 * with how it ended and what it said last. */
static void eg__l1_crash(eg__l1_t *L, const eg_workload_t *w, const char *desc,
			 const eg_rank_verdict_t *v, const char *repro,
			 double dt)
{
	eg_crash_t c;
	json_t *d;
	char *txt;

	eg_crash_from_msg(v->engine_msg, &c);
	d = eg_crash_diag(w, v->stage, v->step, v->iter, &c, repro);
	txt = malloc(sizeof(c.output) + strlen(repro) + 16);
	if (txt)
		sprintf(txt, "%s%srepro: %s\n", c.output, *c.output ? "\n" : "",
			repro);
	eg_tap_point(L->tap, EG_STATUS_CRASH, desc, c.what, d);
	eg_junit_case(L->junit, L->classname, w->name, dt, EG_STATUS_CRASH,
		      c.what, txt);
	eg__l1_say(L, w, d);
	free(txt);
	json_decref(d);
	L->tot->crashed++;
}

/* The command that replays the case alone: the environment that
 * mattered, the engine, the iterations up to the one that failed (an
 * engine's state carries from one to the next: stale buffers fail only
 * after a first iteration) and every key of the workload. */
void eg__l1_repro(const char *engine, const eg_workload_t *w, uint32_t iter,
		  char *buf, size_t len)
{
	static const char cmd[] = "epgate check ";
	char args[4096], eng[512], its[32];

	eg_workload_to_args(w, args, sizeof(args));
	buf[0] = '\0';
	eg_repro_env(buf, len);
	eg_shell_append(buf, len, "epgate");
	eg_shell_append(buf, len, "check");
	snprintf(eng, sizeof(eng), "--engine=%s", engine);
	eg_shell_append(buf, len, eng);
	snprintf(its, sizeof(its), "--iters=%u",
		 iter >= w->iter ? iter - w->iter + 1 : 1);
	eg_shell_append(buf, len, its);
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, " %s",
		 strncmp(args, cmd, sizeof(cmd) - 1) ? args
						     : args + sizeof(cmd) - 1);
}

/* A case skipped with why (the engine declined it, or check stopped
 * after its hangs). */
static void eg__l1_skip(eg__l1_t *L, const eg_workload_t *w, const char *desc,
			const char *why, double dt)
{
	eg_tap_point(L->tap, EG_STATUS_SKIP, desc, why, NULL);
	eg_junit_case(L->junit, L->classname, w->name, dt, EG_STATUS_SKIP, why,
		      NULL);
	if (!L->tot->skipped++ && snprintf(L->tot->why, sizeof(L->tot->why),
					   "%s: %s", w->name, why) < 0)
		L->tot->why[0] = '\0';
}

/* One workload, run and reported. */
static void eg__l1_one(eg__l1_t *L, const eg_workload_t *w)
{
	eg_rank_verdict_t v;
	char sum[256], desc[384], repro[4800];
	double t0 = eg_now();

	eg_workload_summary(w, sum, sizeof(sum));
	snprintf(desc, sizeof(desc), "%s: %s", w->name, sum);
	eg__l1_case(L, w, &v);
	eg__l1_repro(L->o->engine, w, v.iter, repro, sizeof(repro));
	double dt = eg_now() - t0;
	L->tot->run++;
	if (v.harness_err) {
		eg__l1_harness(L, w, desc, &v, repro, dt);
	} else if (v.engine_err == EG_ENOSYS && !strcmp(v.stage, "create")) {
		/* the engine does not take this workload (a plugin's declared
		 * limits): a skip, with why */
		eg__l1_skip(L, w, desc,
			    v.engine_msg[0] ? v.engine_msg : "not supported",
			    dt);
	} else if (v.engine_err == EG_ECRASH) {
		eg__l1_crash(L, w, desc, &v, repro, dt);
	} else if (eg_rank_verdict_failed(&v)) {
		/* a call past its deadline (a forked plugin's): a hang */
		L->tot->hangs += v.engine_err == EG_ETIMEDOUT;
		eg__l1_fail(L, w, desc, &v, repro, dt);
	} else {
		eg_tap_point(L->tap, EG_STATUS_PASS, desc, NULL, NULL);
		eg_junit_case(L->junit, L->classname, w->name, dt,
			      EG_STATUS_PASS, NULL, NULL);
		L->tot->passed++;
	}
}

/* A case left after check's hangs: a skip that says so. */
static void eg__l1_not_run(eg__l1_t *L, const eg_workload_t *w)
{
	char sum[256], desc[384], why[160];

	eg_workload_summary(w, sum, sizeof(sum));
	snprintf(desc, sizeof(desc), "%s: %s", w->name, sum);
	eg_suite_hang_why(L->o->max_hangs, why, sizeof(why));
	if (!L->tot->not_run++)
		eg_suite_hang_say(L->o->out, L->o->progress, L->o->max_hangs);
	L->tot->run++;
	eg__l1_skip(L, w, desc, why, 0);
}

/* The engine must be an in-process one with a current ops table. */
static int eg__l1_engine(const eg_l1_opts_t *o, const eg_engine_ops_t **ops)
{
	*ops = eg_engine_find(o->engine);
	if (!*ops) {
		eg_engine_say_unknown("epgate check", o->engine);
		return EG_EINVAL;
	}
	/* a world-1 engine (a plugin) runs here at world 1 */
	if (((*ops)->flags & EG_ENGINE_MULTI_PROCESS) &&
	    !((*ops)->flags & EG_ENGINE_WORLD1)) {
		fprintf(stderr,
			"epgate check: --engine %s runs one rank per process: "
			"use 'epgate check --l2' (or epgate launch ... "
			"epgate l2-rank)\n",
			o->engine);
		return EG_EINVAL;
	}
	if ((*ops)->size < sizeof(eg_engine_ops_t)) {
		fprintf(stderr, "epgate check: engine %s: ops table too old\n",
			o->engine);
		return EG_EINVAL;
	}
	return EG_OK;
}

int eg_l1_run(const eg_l1_opts_t *o, const eg_workload_list_t *wl,
	      eg_l1_totals_t *tot)
{
	eg__l1_t L = {.o = o, .tot = tot, .n = wl->n};
	int rc;

	memset(tot, 0, sizeof(*tot));
	if (eg__l1_engine(o, &L.ops) < 0)
		return EG_EXIT_HARD;
	rc = eg_tap_open(&L.tap, o->tap_path, (int)wl->n);
	if (rc < 0) {
		fprintf(stderr, "epgate check: --tap %s: %s\n", o->tap_path,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	snprintf(L.classname, sizeof(L.classname), "epgate.l1.%s", L.ops->name);
	rc = eg_junit_open(&L.junit, o->junit_path, "epgate-l1");
	if (rc < 0) {
		fprintf(stderr, "epgate check: --junit %s: %s\n", o->junit_path,
			eg_strerror(rc));
		eg_tap_close(L.tap);
		return EG_EXIT_HARD;
	}
	eg_suite_junit_evidence(L.junit, L.ops->name); /* what ran, where */
	L.t0 = L.t_said = eg_now();
	for (size_t i = 0; i < wl->n; i++) {
		if (eg__suite_l1_by_job(L.ops, &wl->items[i]))
			continue; /* below, as jobs of ranks */
		if (eg_suite_hang_stop(tot->hangs, tot->passed, o->max_hangs))
			eg__l1_not_run(&L, &wl->items[i]);
		else
			eg__l1_one(&L, &wl->items[i]);
		eg__l1_progress(&L);
	}
	eg_l1_sink_t sink = {.o = o,
			     .tap = L.tap,
			     .junit = L.junit,
			     .classname = L.classname,
			     .tot = tot,
			     .said = &L.said,
			     .hard = &L.hard};
	eg__suite_l1_jobs(&sink, L.ops, wl);
	eg_say_more_failures(o->out, L.said, tot);
	eg_tap_close(L.tap);
	eg_junit_close(L.junit);
	return eg_suite_exit(tot, L.hard);
}
