/* epgate check of a one-rank-per-process engine (a plugin) beyond world
 * 1 (lib/suite/l1_int.h): the cases of each world size run as one job of
 * that many ranks, `<self> launch -n W -- <self> l2-rank` over a
 * workloads file of exactly those cases (the local launcher, or srun
 * inside an allocation: lib/world/job.c). Each results line is a case;
 * a job that ends before its last case gives the case it ended in its
 * own verdict from the job's log (lib/suite/job_crash.h) and runs again
 * for the cases after it, so one crash costs one case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/job.h"
#include "lib/suite/job_crash.h"
#include "lib/suite/l1_int.h"

int eg__suite_l1_by_job(const eg_engine_ops_t *ops, const eg_workload_t *w)
{
	return ops && (ops->flags & EG_ENGINE_MULTI_PROCESS) &&
	       (ops->flags & EG_ENGINE_WORLD1) && w->world > 1;
}

void eg__suite_l1_ini_section(FILE *f, const eg_workload_t *w)
{
	char args[4096], *p;

	if (eg_workload_to_args(w, args, sizeof(args)) < 0)
		return;
	for (p = strstr(args, " --"); p; p = strstr(p, " --")) {
		char *kv = p + 3, *end = strstr(kv, " --"), *eq;

		if (end)
			*end = '\0';
		eq = strchr(kv, '=');
		if (eq && eq[1] && !strncmp(kv, "name=", 5))
			fprintf(f, "[%s]\n", eq + 1);
		else if (eq && eq[1])
			fprintf(f, "%.*s = %s\n", (int)(eq - kv), kv, eq + 1);
		if (!end)
			break;
		*end = ' ';
		p = end;
	}
}

/* The cases of world W not done yet, as a workloads file; how many. */
static unsigned eg__ini(const char *path, const eg_workload_list_t *wl,
			uint32_t W, const unsigned char *done)
{
	FILE *f = fopen(path, "w");
	unsigned n = 0;

	if (!f)
		return 0;
	fprintf(f, "# epgate check: the cases of world %u left to run\n", W);
	for (size_t i = 0; i < wl->n; i++)
		if (wl->items[i].world == W && !done[i]) {
			eg__suite_l1_ini_section(f, &wl->items[i]);
			n++;
		}
	return fclose(f) == 0 ? n : 0;
}

/* One job of W ranks over the file; the launcher's exit code or <0. */
static int eg__launch(const eg_l1_sink_t *s, uint32_t W, const char *ini,
		      const char *results, const char *log, double timeout)
{
	char it[16], to[32], err[256];
	const char *argv[] = {
	    "l2-rank",	  "--engine", s->o->engine, "--iters", it,
	    "--workload", ini,	      "--results",  results,   NULL};
	eg_job_env_t env = {"EPGATE_TIMEOUT", to, 0};
	eg_job_t j = {.ranks = W,
		      .ranks_per_node = W,
		      .timeout_s = timeout * 4 + 30,
		      .args = argv,
		      .env = &env,
		      .n_env = 1,
		      .log = log};
	int rc;

	snprintf(it, sizeof(it), "%u", s->o->iters ? s->o->iters : 1);
	snprintf(to, sizeof(to), "%.1f", timeout);
	unlink(results);
	rc = eg_job_run(&j, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "epgate check: job of %u ranks: %s\n", W, err);
	return rc;
}

/* One case into both reports and the counts; said on o->out when it
 * failed (the first few, every one with -v). */
static void eg__case(const eg_l1_sink_t *s, const eg_workload_t *w,
		     eg_status_t st, const char *msg, json_t *diag, double dt)
{
	char sum[256], desc[400],
	    *txt = diag ? json_dumps(diag, JSON_INDENT(2)) : NULL;

	eg_workload_summary(w, sum, sizeof(sum));
	snprintf(desc, sizeof(desc), "%s: %s", w->name, sum);
	eg_tap_point(s->tap, st, desc,
		     st == EG_STATUS_SKIP || st == EG_STATUS_CRASH ? msg : NULL,
		     diag);
	eg_junit_case(s->junit, s->classname, w->name, dt, st, msg, txt);
	free(txt);
	s->tot->run += st != EG_STATUS_SKIP;
	s->tot->passed += st == EG_STATUS_PASS;
	s->tot->failed += st == EG_STATUS_FAIL;
	s->tot->errors += st == EG_STATUS_ERROR;
	s->tot->crashed += st == EG_STATUS_CRASH;
	if (st == EG_STATUS_SKIP && !s->tot->skipped++)
		snprintf(s->tot->why, sizeof(s->tot->why), "%s: %s", w->name,
			 msg ? msg : "");
	if (st == EG_STATUS_ERROR)
		*s->hard = 1;
	if (st != EG_STATUS_PASS && st != EG_STATUS_SKIP && s->o->out &&
	    (*s->said < EG_SAY_FAILURES || s->o->verbose)) {
		eg_case_say(s->o->out, w->name, diag, s->o->verbose);
		(*s->said)++;
		fflush(s->o->out);
	}
}

/* "dispatch returned EG_EPLUGIN (step 2, iteration 0): ..." or
 * "combine: 3 wrong (iteration 1)", from a results line's diag. */
static void eg__fail_msg(const json_t *d, char *msg, size_t len)
{
	const char *stage = json_string_value(json_object_get(d, "stage"));
	const char *err = json_string_value(json_object_get(d, "engine_error"));
	const char *em =
	    json_string_value(json_object_get(d, "engine_message"));
	const json_t *step = json_object_get(d, "step");
	char at[48] = "", said[80];

	if (json_is_integer(step))
		snprintf(at, sizeof(at), "step %lld, ",
			 (long long)json_integer_value(step) + 1);
	snprintf(
	    at + strlen(at), sizeof(at) - strlen(at), "iteration %lld",
	    (long long)json_integer_value(json_object_get(d, "iteration")));
	if (err)
		snprintf(msg, len, "%s %s (%s)%s%s", stage ? stage : "",
			 eg_suite_engine_said(err, said, sizeof(said)), at,
			 em ? ": " : "", em ? em : "");
	else
		snprintf(msg, len, "%s: wrong (%s)", stage ? stage : "", at);
}

/* The engine declined the shape at create (EG_ENOSYS: a plugin's
 * declared limits, its ENOTSUP): in L1 that is a skip with its reason. */
static int eg__declined(const json_t *d)
{
	const char *stage = json_string_value(json_object_get(d, "stage"));
	const char *err = json_string_value(json_object_get(d, "engine_error"));

	return stage && err && !strcmp(stage, "create") &&
	       !strcmp(err, eg_strerror(EG_ENOSYS)) &&
	       json_string_value(json_object_get(d, "engine_message"));
}

/* A rank's call past its deadline, said in a results line: a hang. */
static int eg__timed_out(const json_t *d)
{
	const char *err = json_string_value(json_object_get(d, "engine_error"));

	return err && !strcmp(err, eg_strerror(EG_ETIMEDOUT));
}

/* A results line of the job: its case, the repro line check's own. */
static int eg__line(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
		    uint32_t W, unsigned char *done, const char *line)
{
	json_t *j = json_loads(line, 0, NULL), *d;
	const char *name = json_string_value(json_object_get(j, "workload"));
	const char *st = json_string_value(json_object_get(j, "status"));
	double dt = json_number_value(json_object_get(j, "seconds"));
	char repro[4800], msg[1400];
	size_t i;

	for (i = 0; name && st && i < wl->n; i++)
		if (wl->items[i].world == W && !done[i] &&
		    !strcmp(wl->items[i].name, name))
			break;
	if (!name || !st || i == wl->n) {
		json_decref(j);
		return 0;
	}
	done[i] = 1;
	d = json_object_get(j, "diag");
	if (!strcmp(st, "pass")) {
		eg__case(s, &wl->items[i], EG_STATUS_PASS, NULL, NULL, dt);
	} else if (eg__declined(d)) {
		/* beyond what the engine declares: a skip, as in process */
		eg__case(
		    s, &wl->items[i], EG_STATUS_SKIP,
		    json_string_value(json_object_get(d, "engine_message")),
		    NULL, dt);
	} else {
		eg__l1_repro(s->o->engine, &wl->items[i],
			     (uint32_t)json_integer_value(
				 json_object_get(d, "iteration")),
			     repro, sizeof(repro));
		json_object_set_new(d, "repro", json_string(repro));
		eg__fail_msg(d, msg, sizeof(msg));
		s->tot->hangs += eg__timed_out(d);
		eg__case(s, &wl->items[i],
			 !strcmp(st, "error") ? EG_STATUS_ERROR
					      : EG_STATUS_FAIL,
			 msg, d, dt);
	}
	json_decref(j);
	return 1;
}

static unsigned eg__results(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
			    uint32_t W, unsigned char *done, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;

	while (f && getline(&line, &cap, f) > 0)
		n += (unsigned)eg__line(s, wl, W, done, line);
	free(line);
	if (f)
		fclose(f);
	return n;
}

/* The cases of world W left undone: each a skip (the job skipped) or an
 * error (it ended with nothing to name), with why. */
static void eg__rest(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
		     uint32_t W, unsigned char *done, eg_status_t st,
		     const char *why, const char *log)
{
	for (size_t i = 0; i < wl->n; i++) {
		json_t *d;

		if (wl->items[i].world != W || done[i])
			continue;
		d = st == EG_STATUS_SKIP
			? NULL
			: json_pack("{s:s, s:s}", "error", why, "log", log);
		eg__case(s, &wl->items[i], st, why, d, 0);
		json_decref(d);
		done[i] = 1;
	}
}

/* The case the job's end fell on, from its log; 0 when the log names
 * no cause and nothing ran (a job that cannot start: running it again
 * would end the same). */
static int eg__cut(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
		   uint32_t W, unsigned char *done, const char *log, int rc,
		   unsigned ran)
{
	eg_job_crash_t jc;
	const eg_workload_t *w;
	char repro[4800], msg[800];
	json_t *d = NULL;
	eg_status_t st;
	size_t at;

	eg_job_crash_read(log, &jc);
	if (jc.end == EG_JOB_END_NONE && !ran)
		return 0;
	if (!(w = eg_job_cut_at(&jc, wl, W, done, &at)))
		return 1;
	eg__l1_repro(s->o->engine, w, w->iter, repro, sizeof(repro));
	st = eg_job_crash_case(&jc, w, repro, log, rc, &d, msg, sizeof(msg));
	s->tot->hangs += jc.end == EG_JOB_END_HANG;
	eg__case(s, w, st, msg, d, 0);
	json_decref(d);
	done[at] = 1;
	return 1;
}

static unsigned eg__left(const eg_workload_list_t *wl, uint32_t W,
			 const unsigned char *done)
{
	unsigned n = 0;

	for (size_t i = 0; i < wl->n; i++)
		n += wl->items[i].world == W && !done[i];
	return n;
}

/* After a job that left cases: the one it ended in, then again. */
static void eg__after(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
		      uint32_t W, unsigned char *done, const char *log, int rc,
		      unsigned ran)
{
	char why[4800];

	if (rc == EG_EXIT_SKIP && !ran) {
		snprintf(why, sizeof(why),
			 "the job of %u ranks skipped (exit 77): see %s", W,
			 log);
		eg__rest(s, wl, W, done, EG_STATUS_SKIP, why, log);
	} else if (!eg__cut(s, wl, W, done, log, rc, ran)) {
		snprintf(why, sizeof(why),
			 "the job of %u ranks ended (exit %d) before any case, "
			 "and its log names no cause: see %s",
			 W, rc, log);
		eg__rest(s, wl, W, done, EG_STATUS_ERROR, why, log);
	}
}

/* Every case of world W, as many jobs as it takes, or until check's
 * hangs stop it (the cases left: eg__not_run). */
static void eg__world(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
		      uint32_t W, unsigned char *done, double timeout)
{
	char ini[4300], res[4300], log[4300];
	unsigned jobs = 0, left;
	double t0 = eg_now();

	while ((left = eg__left(wl, W, done)) > 0 &&
	       !eg_suite_hang_stop(s->tot->hangs, s->tot->passed,
				   s->o->max_hangs)) {
		const char *dir = s->o->workdir ? s->o->workdir : ".";

		snprintf(ini, sizeof(ini), "%s/l1-w%u-%u.ini", dir, W, jobs);
		snprintf(res, sizeof(res), "%s/l1-w%u-%u.jsonl", dir, W, jobs);
		snprintf(log, sizeof(log), "%s/l1-w%u-%u.log", dir, W, jobs);
		jobs++;
		if (eg__ini(ini, wl, W, done) != left) {
			eg__rest(s, wl, W, done, EG_STATUS_ERROR,
				 "cannot write the job's workloads file", ini);
			break;
		}
		int rc = eg__launch(s, W, ini, res, log, timeout);
		unsigned ran = eg__results(s, wl, W, done, res);
		if (ran < left)
			eg__after(s, wl, W, done, log, rc, ran);
	}
	if (s->o->out && jobs)
		fprintf(s->o->out,
			"%sworld %u: %u job(s) of %u ranks, %.1f s\n",
			s->o->progress ? s->o->progress : "", W, jobs, W,
			eg_now() - t0);
}

/* The cases of world W left when check stopped after its hangs: skips
 * that say so. */
static void eg__not_run(const eg_l1_sink_t *s, const eg_workload_list_t *wl,
			uint32_t W, unsigned char *done)
{
	char why[160];

	eg_suite_hang_why(s->o->max_hangs, why, sizeof(why));
	if (!s->tot->not_run)
		eg_suite_hang_say(s->o->out, s->o->progress, s->o->max_hangs);
	s->tot->not_run += eg__left(wl, W, done);
	eg__rest(s, wl, W, done, EG_STATUS_SKIP, why, NULL);
}

void eg__suite_l1_jobs(const eg_l1_sink_t *s, const eg_engine_ops_t *ops,
		       const eg_workload_list_t *wl)
{
	unsigned char *done = calloc(wl->n + 1, 1);
	const char *t = getenv("EPGATE_TIMEOUT");
	double timeout = t && atof(t) > 0 ? atof(t) : 60.0;

	if (!done)
		return;
	for (size_t i = 0; i < wl->n; i++)
		done[i] = !eg__suite_l1_by_job(ops, &wl->items[i]);
	/* one world after another, in the order they first appear */
	for (size_t i = 0; i < wl->n; i++)
		if (!done[i])
			eg__world(s, wl, wl->items[i].world, done, timeout);
	for (size_t i = 0; i < wl->n; i++)
		if (!done[i]) /* check stopped after its hangs */
			eg__not_run(s, wl, wl->items[i].world, done);
	free(done);
}
