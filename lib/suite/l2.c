/* L2 orchestration: one `epgate launch` of `epgate l2-rank` per
 * configuration (world, virtual nodes, provider, comms, engine). Each
 * job's rank 0 appends a JSON line per workload; after each job those
 * lines become TAP points and JUnit cases, so what ran before a crash is
 * already reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/clock.h"
#include "epgate/evidence.h"
#include "epgate/job.h"
#include "lib/base/data_path.h"
#include "lib/suite/job_crash.h"
#include "lib/suite/job_report.h"
#include "lib/suite/l1_int.h"

/* make check and `epgate run`: 4 ranks in 2 virtual nodes in every
 * engine x provider x comms combination, plus a non-power-of-two world
 * and a single node. */
static const eg_l2_config_t eg__quick[] = {
    {4, 2, 1, "a2a", "shm", NULL},   {4, 2, 4, "a2a", "shm", NULL},
    {4, 2, 1, "a2a", "tcp", NULL},   {4, 2, 4, "a2a", "tcp", NULL},
    {4, 2, 1, "dense", "shm", NULL}, {4, 2, 4, "dense", "shm", NULL},
    {4, 2, 1, "dense", "tcp", NULL}, {4, 2, 4, "dense", "tcp", NULL},
    {4, 2, 4, "a2a", NULL, NULL},    {3, 2, 1, "a2a", NULL, NULL},
    {3, 3, 4, "dense", "shm", NULL}, {2, 2, 1, "a2a", "tcp", NULL},
};

/* epgate run's GPU stage: NVLink within a node, and NCCL's network
 * between two virtual nodes with 4 communicators. */
static const eg_l2_config_t eg__gpu[] = {
    {2, 2, 1, "a2a", NULL, "nvlink"},
    {2, 2, 1, "dense", NULL, "nvlink"},
    {2, 1, 4, "a2a", NULL, "xnode"},
};

/* The full matrix: W in {2,3,4,8} x one or two nodes x shm/tcp x K 1/4
 * x both engines. */
static size_t eg__full(eg_l2_config_t *c, size_t cap)
{
	static const uint32_t worlds[] = {2, 3, 4, 8};
	static const char *const provs[] = {"shm", "tcp"};
	static const char *const engines[] = {"a2a", "dense"};
	static const uint32_t comms[] = {1, 4};
	size_t n = 0;
	for (size_t a = 0; a < 4; a++)
		for (uint32_t nodes = 1; nodes <= 2; nodes++)
			for (size_t p = 0; p < 2; p++)
				for (size_t k = 0; k < 2; k++)
					for (size_t e = 0; e < 2 && n < cap;
					     e++) {
						uint32_t W = worlds[a];
						c[n++] = (eg_l2_config_t){
						    W,
						    (W + nodes - 1) / nodes,
						    comms[k],
						    engines[e],
						    provs[p],
						    NULL};
					}
	return n;
}

/* "a2a.w4.n2.shm.k1", "gpu-a2a.w2.n1.nvlink.k1", "plugin-libfoo.so,
 * mode=ll.w2.n1.auto.k1": names are files, so a plugin's folder is
 * dropped and anything but letters, digits and "._,=+-" becomes '-' */
static void eg__config_name(const eg_l2_config_t *c, char *buf, size_t len)
{
	const char *e = c->engine, *opts = strchr(e, ','), *base = e;
	const char *end = opts ? opts : e + strlen(e);
	char eng[200];

	if (!strncmp(e, "plugin:", 7))
		for (const char *p = base = e + 7; p < end; p++)
			if (*p == '/')
				base = p + 1;
	snprintf(eng, sizeof(eng), "%s%.*s%s", base != e ? "plugin-" : "",
		 (int)(end - base), base, opts ? opts : "");
	for (char *p = eng; *p; p++)
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._,=+-",
			*p))
			*p = '-';
	snprintf(buf, len, "%s%s.w%u.n%u.%s.k%u", c->path ? "gpu-" : "", eng,
		 c->world,
		 (c->world + c->ranks_per_node - 1) / c->ranks_per_node,
		 c->path       ? c->path
		 : c->provider ? c->provider
			       : "auto",
		 c->num_comms);
}

/* Runs one job (lib/world/job.c); returns the launcher's exit code or
 * <0. */
static int eg__launch(const eg_l2_opts_t *o, const eg_l2_config_t *c,
		      const char *matrix, const char *results, const char *log)
{
	char k[16], it[16], to_env[32], err[256];
	char keys[EG_OVERRIDES_MAX][64];
	const char *argv[32 + 2 * EG_OVERRIDES_MAX];
	int a = 0, rc;

	snprintf(k, sizeof(k), "%u", c->num_comms);
	snprintf(it, sizeof(it), "%u", o->iters ? o->iters : 2);
	snprintf(to_env, sizeof(to_env), "%.1f", o->timeout_s);
	argv[a++] = c->path ? "l2-gpu-rank" : "l2-rank";
	argv[a++] = "--engine";
	argv[a++] = c->engine;
	if (c->provider) {
		argv[a++] = "--provider";
		argv[a++] = c->provider;
	}
	if (c->path) { /* NCCL's logs (the evidence) beside the job's */
		argv[a++] = "--path";
		argv[a++] = c->path;
		argv[a++] = "--log-dir";
		argv[a++] = o->workdir;
	}
	argv[a++] = "--num-comms";
	argv[a++] = k;
	argv[a++] = "--iters";
	argv[a++] = it;
	argv[a++] = "--workload";
	argv[a++] = matrix;
	if (o->filter) {
		argv[a++] = "--filter";
		argv[a++] = o->filter;
	}
	for (unsigned i = 0; o->overrides && i < o->overrides->n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "--%s",
			 o->overrides->key[i]);
		argv[a++] = keys[i];
		argv[a++] = o->overrides->val[i];
	}
	argv[a++] = "--results";
	argv[a++] = results;
	argv[a] = NULL;
	eg_job_env_t env = {"EPGATE_TIMEOUT", to_env, 0};
	/* the job's own deadline: generous over the per-step one */
	eg_job_t j = {.ranks = c->world,
		      .ranks_per_node = c->ranks_per_node,
		      .timeout_s = o->timeout_s * 4 + 30,
		      .args = argv,
		      .env = &env,
		      .n_env = 1,
		      .log = log};

	rc = eg_job_run(&j, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "epgate: L2 job: %s\n", err);
	return rc;
}

/* Last lines of a log, for a failed job's report. */
static json_t *eg__log_tail(const char *log, int lines)
{
	char *buf[64] = {0}, line[512];
	int n = 0;
	FILE *f = fopen(log, "r");
	json_t *arr = json_array();

	if (!f)
		return arr;
	if (lines > 64)
		lines = 64;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		free(buf[n % lines]);
		buf[n % lines] = strdup(line);
		n++;
	}
	fclose(f);
	for (int i = n > lines ? n - lines : 0; i < n; i++) {
		json_array_append_new(arr, json_string(buf[i % lines]));
		free(buf[i % lines]);
		buf[i % lines] = NULL;
	}
	return arr;
}

/* The configurations to run: the quick or full set; with an engine, that
 * engine in place of each one's own, each distinct run once. */
static size_t eg__configs(const eg_l2_opts_t *o, eg_l2_config_t *c, size_t cap)
{
	size_t n = 0, m = 0;

	if (o->set == EG_L2_FULL) {
		n = eg__full(c, cap);
	} else if (o->set == EG_L2_GPU) {
		n = sizeof(eg__gpu) / sizeof(eg__gpu[0]);
		memcpy(c, eg__gpu, n * sizeof(*c));
	} else {
		n = sizeof(eg__quick) / sizeof(eg__quick[0]);
		memcpy(c, eg__quick, n * sizeof(*c));
	}
	if (!o->engine)
		return n;
	for (size_t i = 0; i < n; i++) {
		char a[256], b[256];
		size_t j;

		c[i].engine = o->engine;
		eg__config_name(&c[i], a, sizeof(a));
		for (j = 0; j < m; j++) {
			eg__config_name(&c[j], b, sizeof(b));
			if (!strcmp(a, b))
				break;
		}
		if (j == m)
			c[m++] = c[i];
	}
	return m;
}

/* The workloads a job of world W runs (the filter is applied). */
static unsigned eg__expected(const eg_workload_list_t *wl, uint32_t W)
{
	unsigned n = 0;

	for (size_t j = 0; j < wl->n; j++)
		n += wl->items[j].world == W;
	return n;
}

/* The L2 run's reports and totals. */
typedef struct eg__l2 {
	const eg_l2_opts_t *o;
	eg_tap_t *tap;
	eg_junit_t *junit;
	struct eg_l1_totals *tot;
	const eg_workload_list_t *wl; /* what the jobs owe */
	int hard;
	unsigned said;	     /* failures said in full on o->out */
	unsigned job, njobs; /* progress: this job of how many */
	double t0;
	char skip_why[600]; /* the last skipped job's reason */
} eg__l2_t;

/* A job's counts into the run's. */
static void eg__count(eg__l2_t *L, const eg_job_totals_t *t)
{
	L->tot->run += t->passed + t->failed + t->errors + t->crashed;
	L->tot->passed += t->passed;
	L->tot->failed += t->failed;
	L->tot->errors += t->errors;
	L->tot->skipped += t->skipped;
	L->tot->crashed += t->crashed;
}

/* The lines a job's rank 0 wrote, as TAP points and JUnit cases, then
 * the workload its end cut short, when cut (lib/suite/job_report.c,
 * shared with the batch job's report); done marks what is reported.
 * Returns how many workloads the lines reported. */
static unsigned eg__collect(eg__l2_t *L, const eg_l2_config_t *c,
			    const char *name, const char *cls,
			    const char *results, double dt, unsigned char *done,
			    eg_job_cut_t *cut)
{
	FILE *f = fopen(results, "r");
	char prefix[300];
	eg_job_totals_t t = {0};
	unsigned seen;

	snprintf(prefix, sizeof(prefix), "l2 %s", name);
	seen = eg_l2_lines_collect(f, L->wl, c->world, done, L->tap, L->junit,
				   cls, prefix, dt, cut, &t);
	if (f)
		fclose(f);
	eg__count(L, &t);
	if (t.errors) /* a rank's harness error: epgate's own */
		L->hard = 1;
	return seen;
}

/* The workloads of the configuration no job reported: skips, why. */
static void eg__missing(eg__l2_t *L, const eg_l2_config_t *c, const char *name,
			const char *cls, unsigned char *done, const char *why)
{
	char prefix[300];
	eg_job_totals_t t = {0};

	snprintf(prefix, sizeof(prefix), "l2 %s", name);
	eg_l2_lines_missing(L->wl, c->world, done, L->tap, L->junit, cls,
			    prefix, why, &t);
	eg__count(L, &t);
}

/* The command that replays workload w of this job alone (arg: the
 * job), as the ranks' own repro lines say it. */
typedef struct eg__job_ref {
	const eg_l2_opts_t *o;
	const eg_l2_config_t *c;
	const char *file;
} eg__job_ref_t;

static void eg__repro(const eg_workload_t *w, void *arg, char *buf, size_t len)
{
	const eg__job_ref_t *j = arg;
	size_t n;

	buf[0] = '\0';
	eg_repro_env(buf, len);
	n = strlen(buf);
	snprintf(buf + n, len - n,
		 "%sepgate launch -n %u --ranks-per-node %u -- epgate %s "
		 "--engine",
		 n ? " " : "", j->c->world, j->c->ranks_per_node,
		 j->c->path ? "l2-gpu-rank" : "l2-rank");
	eg_shell_append(buf, len, j->c->engine);
	n = strlen(buf);
	snprintf(buf + n, len - n,
		 "%s%s%s%s --num-comms %u --iters %u --workload",
		 j->c->provider ? " --provider " : "",
		 j->c->provider ? j->c->provider : "",
		 j->c->path ? " --path " : "", j->c->path ? j->c->path : "",
		 j->c->num_comms, j->o->iters ? j->o->iters : 2);
	eg_shell_append(buf, len, j->file);
	eg_shell_append(buf, len, "--filter");
	eg_shell_append(buf, len, w->name);
	for (unsigned i = 0; j->o->overrides && i < j->o->overrides->n; i++) {
		char kv[512];

		snprintf(kv, sizeof(kv), "--%s=%s", j->o->overrides->key[i],
			 j->o->overrides->val[i]);
		eg_shell_append(buf, len, kv);
	}
}

/* The job itself failed: say how (the rank that ended and where, when
 * its log says), with its log. */
static void eg__job_error(eg__l2_t *L, const char *name, const char *cls,
			  int rc, unsigned seen, unsigned expected,
			  const char *log, double dt, const eg_job_crash_t *jc)
{
	json_t *d = json_object();
	char desc[320], msg[900], how[700] = "";

	if (jc->end != EG_JOB_END_NONE) {
		eg_job_crash_line(jc, how, sizeof(how));
		json_object_set_new(d, "ended", json_string(how));
	}
	json_object_set_new(d, "exit", json_integer(rc));
	json_object_set_new(d, "workloads_reported", json_integer(seen));
	json_object_set_new(d, "workloads_expected", json_integer(expected));
	json_object_set_new(d, "log", json_string(log));
	json_object_set_new(d, "log_tail", eg__log_tail(log, 12));
	snprintf(desc, sizeof(desc), "l2 %s: job", name);
	snprintf(msg, sizeof(msg), "job exited %d after %u of %u workloads%s%s",
		 rc, seen, expected, *how ? ": " : "", how);
	char *txt = json_dumps(d, JSON_INDENT(2));
	eg_tap_point(L->tap, EG_STATUS_FAIL, desc, NULL, d);
	eg_junit_case(L->junit, cls, "job", dt, EG_STATUS_ERROR, msg, txt);
	free(txt);
	json_decref(d);
	L->tot->errors++;
	L->hard = 1;
	if (L->o->verbose)
		fprintf(stderr, "  L2 %s: %s (log %s)\n", name, msg, log);
}

/* The job's failed workloads on the terminal: the first few in full
 * (every one with -v), from its results lines. */
static void eg__say_failures(eg__l2_t *L, const char *name, const char *results)
{
	FILE *f = L->o->out ? fopen(results, "r") : NULL;
	char *line = NULL, who[512];
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		const char *st =
		    json_string_value(json_object_get(j, "status"));
		const char *w =
		    json_string_value(json_object_get(j, "workload"));

		if (st && w && strcmp(st, "pass") && strcmp(st, "skip") &&
		    (L->said < EG_SAY_FAILURES || L->o->verbose)) {
			snprintf(who, sizeof(who), "l2 %s: %s", name, w);
			eg_case_say(L->o->out, who, json_object_get(j, "diag"),
				    L->o->verbose);
			L->said++;
		}
		json_decref(j);
	}
	free(line);
	if (f)
		fclose(f);
}

/* The job ran nothing and said why (77: no GPU, a transport not built):
 * a skip with its reason, the log's last line. */
/* Why a job's owed cases never ran: a job that skipped says why in the
 * last line of its log (no CUDA device, a provider absent); any other
 * ended before them. */
static void eg__why(int rc, const char *log, char *why, size_t len)
{
	json_t *tail = rc == EG_EXIT_SKIP ? eg__log_tail(log, 1) : NULL;
	const char *last = json_string_value(json_array_get(tail, 0));

	if (last && last[0] == '[' && strstr(last, "] ")) /* "[0] " */
		last = strstr(last, "] ") + 2;
	if (rc == EG_EXIT_SKIP)
		snprintf(why, len, "%s", last ? last : "the job skipped");
	else
		snprintf(why, len,
			 "never ran: the job ended (exit %d) before it", rc);
	json_decref(tail);
}

/* A job that did not end as its workloads did: an exit code of its own,
 * or every rank gone (exit 0) before its last workload. */
static int eg__broken(int rc, unsigned seen, unsigned expected)
{
	if (rc == EG_EXIT_SKIP && !seen)
		return 0;
	if (rc == EG_EXIT_PASS || rc == EG_EXIT_FAIL)
		return seen < expected;
	return 1;
}

/* A line per job as it ends: its counts, time and how far the run is;
 * a job that ended early, with the rank that ended, where, and the
 * command that replays that workload; again: the job's number after a
 * first one that ended early (0: the first). */
static void eg__job_line(eg__l2_t *L, const char *name, unsigned again,
			 const struct eg_l1_totals *before, int rc,
			 unsigned seen, unsigned expected, const char *log,
			 double dt, const eg_job_crash_t *jc, const char *repro)
{
	const eg_l2_opts_t *o = L->o;
	unsigned bad = L->tot->failed + L->tot->errors + L->tot->crashed -
		       before->failed - before->errors - before->crashed;
	char how[700] = "", job[32] = "";

	if (!o->out)
		return;
	if (again)
		snprintf(job, sizeof(job), " (job %u)", again + 1);
	fprintf(o->out, "%s[%u/%u] %s%s: %u passed, %u failed, %.1f s",
		o->progress ? o->progress : "", L->job, L->njobs, name, job,
		L->tot->passed - before->passed, bad, dt);
	if (rc == EG_EXIT_SKIP && !seen) {
		fprintf(o->out, "; skipped: %s", L->skip_why);
	} else if (eg__broken(rc, seen, expected)) {
		if (jc->end != EG_JOB_END_NONE)
			eg_job_crash_line(jc, how, sizeof(how));
		fprintf(o->out,
			"; the job exited %d after %u of %u "
			"workloads%s%s (log %s)",
			rc, seen, expected, *how ? ": " : "", how, log);
		if (*repro)
			fprintf(o->out, "\n    repro: %s", repro);
		L->said++; /* its error, said here */
	}
	fprintf(o->out, "\n");
	fflush(o->out);
}

/* The workloads of world W not done yet. */
static unsigned eg__left(const eg_workload_list_t *wl, uint32_t W,
			 const unsigned char *done)
{
	unsigned n = 0;

	for (size_t i = 0; i < wl->n; i++)
		n += wl->items[i].world == W && !done[i];
	return n;
}

/* The workloads of world W not done yet, as a workloads file; how many
 * (0: it could not be written). */
static unsigned eg__rest_file(const char *path, const eg_workload_list_t *wl,
			      uint32_t W, const unsigned char *done)
{
	FILE *f = fopen(path, "w");
	unsigned n = 0;

	if (!f)
		return 0;
	fprintf(f,
		"# epgate check --l2: the workloads of world %u left to "
		"run after a job that ended early\n",
		W);
	for (size_t i = 0; i < wl->n; i++)
		if (wl->items[i].world == W && !done[i]) {
			eg__suite_l1_ini_section(f, &wl->items[i]);
			n++;
		}
	return fclose(f) == 0 ? n : 0;
}

/* A job's files: its results, its log, and after the first job the
 * workloads left to run. */
typedef struct eg__job_paths {
	char results[4300], log[4300], ini[4300];
} eg__job_paths_t;

/* Names the files of a configuration's job k (from 0) into f; after the
 * first job, writes the left workloads of its world for it to read.  The
 * workloads file the job reads, or NULL (why says) when it cannot be
 * written. */
static const char *eg__job_files(eg__l2_t *L, const eg_l2_config_t *c,
				 const char *file, const char *name, unsigned k,
				 const unsigned char *done, unsigned left,
				 eg__job_paths_t *f, char *why, size_t whylen)
{
	const eg_l2_opts_t *o = L->o;

	if (k == 0) {
		snprintf(f->results, sizeof(f->results), "%s/l2-%s.jsonl",
			 o->workdir, name);
		snprintf(f->log, sizeof(f->log), "%s/l2-%s.log", o->workdir,
			 name);
		return file;
	}
	snprintf(f->results, sizeof(f->results), "%s/l2-%s.job%u.jsonl",
		 o->workdir, name, k + 1);
	snprintf(f->log, sizeof(f->log), "%s/l2-%s.job%u.log", o->workdir, name,
		 k + 1);
	snprintf(f->ini, sizeof(f->ini), "%s/l2-%s.job%u.ini", o->workdir, name,
		 k + 1);
	if (eg__rest_file(f->ini, L->wl, c->world, done) != left) {
		snprintf(why, whylen,
			 "never ran: cannot write the job's workloads file (in "
			 "%.200s)",
			 o->workdir);
		return NULL;
	}
	return f->ini;
}

/* 1 when check's hangs (L1's too) reached its limit: no more jobs, the
 * workloads left skips saying why (why: len bytes, or NULL). */
static int eg__hangs_stop(const eg__l2_t *L, char *why, size_t len)
{
	const eg_l2_opts_t *o = L->o;

	if (!eg_suite_hang_stop(o->hangs_before + L->tot->hangs,
				o->passed_before + L->tot->passed,
				o->max_hangs))
		return 0;
	if (why)
		eg_suite_hang_why(o->max_hangs, why, len);
	return 1;
}

/* The workloads of world W left when check stopped after its hangs:
 * counted (eg__missing skips them), the stop said once. */
static void eg__not_run(eg__l2_t *L, uint32_t W, const unsigned char *done)
{
	unsigned rest = eg__left(L->wl, W, done);

	if (!rest || !eg__hangs_stop(L, NULL, 0))
		return;
	if (!L->tot->not_run)
		eg_suite_hang_say(L->o->out, L->o->progress, L->o->max_hangs);
	L->tot->not_run += rest;
}

/* One configuration: its job, then its results; the workload a job's
 * early end fell on is named with how it ended (lib/suite/job_crash.h).
 * An engine under test that is a library (a plugin): a job that it
 * ended (a rank that crashed, exited, hung, or whose plugin failed) is
 * that case's verdict, CRASH or FAIL, and a new job runs the workloads
 * after it (as check does for L1, lib/suite/check_jobs.c). epgate's own
 * engines, and a job whose log names no cause: a job error (exit 99),
 * the workloads after it skips that say why. */
static void eg__config(eg__l2_t *L, const eg_l2_config_t *c, const char *file,
		       unsigned expected)
{
	const eg_l2_opts_t *o = L->o;
	char name[256], cls[300];
	char why[600] = "", repro[4800];
	eg__job_paths_t f;
	eg__job_ref_t ref = {o, c, file};
	unsigned char *done = calloc(L->wl->n + 1, 1);
	int lib = eg_cli_is_plugin(c->engine);

	L->job++;
	eg__config_name(c, name, sizeof(name));
	snprintf(cls, sizeof(cls), "epgate.l2.%s", name);
	if (!done)
		return;
	for (size_t i = 0; i < L->wl->n; i++)
		done[i] = L->wl->items[i].world != c->world;
	if (o->verbose)
		fprintf(stderr, "  L2 %s (%u workloads) ...\n", name, expected);
	for (unsigned k = 0; !eg__hangs_stop(L, why, sizeof(why)); k++) {
		struct eg_l1_totals before = *L->tot;
		unsigned left = eg__left(L->wl, c->world, done), seen;
		const char *jf;
		eg_job_crash_t jc = {0};
		eg_job_cut_t cut = {&jc, f.log, 0, eg__repro, &ref, NULL};
		double t0 = eg_now(), dt;
		int rc, explained;

		jf = eg__job_files(L, c, file, name, k, done, left, &f, why,
				   sizeof(why));
		if (!jf)
			break;
		unlink(f.results);
		rc = eg__launch(o, c, jf, f.results, f.log);
		dt = eg_now() - t0;
		eg__why(rc, f.log, why, sizeof(why));
		cut.rc = rc;
		if (rc != EG_EXIT_SKIP)
			eg_job_crash_read(f.log, &jc);
		/* the cases owed and never run are skips with why: a job
		 * that skipped is its cases skipped, not one more case; the
		 * one its end fell on is a case of its own when the log
		 * says how, or when the job passed without it */
		seen = eg__collect(
		    L, c, name, cls, f.results, dt / (left ? left : 1), done,
		    jc.end != EG_JOB_END_NONE || rc == EG_EXIT_PASS ? &cut
								    : NULL);
		eg__say_failures(L, name, f.results);
		repro[0] = '\0';
		if (cut.at)
			eg__repro(cut.at, &ref, repro, sizeof(repro));
		if (rc == EG_EXIT_SKIP && !seen) {
			snprintf(L->skip_why, sizeof(L->skip_why), "%s", why);
			eg__job_line(L, name, k, &before, rc, seen, left, f.log,
				     dt, &jc, repro);
			break;
		}
		if (!eg__broken(rc, seen, left)) {
			eg__job_line(L, name, k, &before, rc, seen, left, f.log,
				     dt, &jc, repro);
			break;
		}
		/* the library ended the job in a case that has its verdict */
		explained = lib && jc.end != EG_JOB_END_NONE && cut.at;
		L->tot->hangs += explained && jc.end == EG_JOB_END_HANG;
		if (!explained)
			eg__job_error(L, name, cls, rc, seen, left, f.log, dt,
				      &jc);
		eg__job_line(L, name, k, &before, rc, seen, left, f.log, dt,
			     &jc, repro);
		if (!explained || !eg__left(L->wl, c->world, done))
			break;
	}
	eg__not_run(L, c->world, done);
	eg__missing(L, c, name, cls, done, why);
	free(done);
}

/* A plugin's L2 matrix: the L2 matrix, then the plugin battery over
 * ranks (fixtures/workloads/plugin-l2.ini: shapes that reach library
 * bugs the matrix does not), one workloads file in the run folder that
 * every job reads. */
static int eg__plugin_matrix(const eg_l2_opts_t *o, char *file, size_t len)
{
	eg_workload_list_t all = {0}, bat = {0};
	FILE *f;
	int rc;

	snprintf(file, len, "%s/l2-workloads.ini", o->workdir);
	if ((rc = eg_cli_load_data("epgate check --l2",
				   "fixtures/workloads/l2-matrix.ini", &all)) <
		0 ||
	    (rc = eg_cli_load_data("epgate check --l2", EG_PLUGIN_BATTERY_L2,
				   &bat)) < 0 ||
	    (rc = eg_cli_list_append(&all, &bat)) < 0)
		goto out;
	if (!(f = fopen(file, "w"))) {
		fprintf(stderr, "epgate check --l2: cannot write %s\n", file);
		rc = EG_EIO;
		goto out;
	}
	fprintf(f,
		"# epgate check --l2 of a plugin: the L2 matrix "
		"(fixtures/workloads/l2-matrix.ini), then the plugin "
		"battery (%s)\n",
		EG_PLUGIN_BATTERY_L2);
	for (size_t i = 0; i < all.n; i++)
		eg__suite_l1_ini_section(f, &all.items[i]);
	if (fclose(f) != 0) {
		fprintf(stderr, "epgate check --l2: cannot write %s\n", file);
		rc = EG_EIO;
	}
out:
	eg_workload_list_free(&all);
	eg_workload_list_free(&bat);
	return rc;
}

/* What the jobs will run, checked here first: bad input is said once. */
static int eg__prepare(const eg_l2_opts_t *o, char *file, size_t len,
		       eg_workload_list_t *wl)
{
	const eg_engine_ops_t *ops =
	    o->engine ? eg_engine_find(o->engine) : NULL;

	if (o->engine && (!ops || !(ops->flags & EG_ENGINE_MULTI_PROCESS))) {
		fprintf(stderr,
			"epgate check --l2: --engine: \"%s\" does not run one "
			"rank per process\n",
			o->engine);
		return EG_EINVAL;
	}
	if (!eg_self_exe()) {
		fprintf(stderr, "epgate: cannot find its own executable\n");
		return EG_ENOENT;
	}
	if (o->file) {
		snprintf(file, len, "%s", o->file);
	} else if (o->engine && eg_cli_is_plugin(o->engine)) {
		int rc = eg__plugin_matrix(o, file, len);

		if (rc < 0)
			return rc;
	} else if (eg_find_data("fixtures/workloads/l2-matrix.ini", file, len) <
		   0) {
		fprintf(stderr, "epgate: cannot find "
				"fixtures/workloads/l2-matrix.ini\n");
		return EG_ENOENT;
	}
	return eg_cli_load_filtered("epgate", file, o->filter, o->overrides,
				    wl);
}

int eg_l2_run(const eg_l2_opts_t *o, struct eg_l1_totals *tot)
{
	eg_l2_config_t cfg[64];
	size_t ncfg = eg__configs(o, cfg, 64);
	char file[4096];
	eg_workload_list_t wl = {0};
	eg__l2_t L = {.o = o, .tot = tot, .wl = &wl};

	memset(tot, 0, sizeof(*tot));
	if (eg__prepare(o, file, sizeof(file), &wl) < 0) {
		eg_workload_list_free(&wl);
		return EG_EXIT_HARD;
	}
	if (eg_tap_open(&L.tap, o->tap_path, -1) < 0 ||
	    eg_junit_open(&L.junit, o->junit_path, "epgate-l2") < 0) {
		fprintf(stderr, "epgate: cannot write the L2 reports\n");
		if (L.tap)
			eg_tap_close(L.tap);
		eg_workload_list_free(&wl);
		return EG_EXIT_HARD;
	}
	eg_suite_junit_evidence(L.junit, NULL); /* where the jobs ran */
	for (size_t i = 0; i < ncfg; i++)
		L.njobs += eg__expected(&wl, cfg[i].world) > 0;
	for (size_t i = 0; i < ncfg; i++) {
		unsigned expected = eg__expected(&wl, cfg[i].world);

		if (expected) /* a job with nothing to run is not launched */
			eg__config(&L, &cfg[i], file, expected);
	}
	eg_say_more_failures(o->out, L.said, tot);
	eg_tap_close(L.tap);
	eg_junit_close(L.junit);
	eg_workload_list_free(&wl);
	if (o->skip_why)
		snprintf(o->skip_why, 600, "%s", L.skip_why);
	return eg_suite_exit(tot, L.hard);
}
