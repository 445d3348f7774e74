/* L2 orchestration: one `epgate launch` of `epgate l2-rank` per
 * configuration (world, virtual nodes, provider, comms, engine), run by
 * the job helper (lib/world/job.c). Each
 * job's rank 0 appends a JSON line per workload; after each job those
 * lines become TAP points and JUnit cases, so what ran before a crash is
 * already reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/job.h"
#include "lib/suite/suite.h"

/* make check and `epgate run`: 4 ranks in 2 virtual nodes in every
 * engine x provider x comms combination, plus a non-power-of-two world
 * and a single node. */
static const eg_l2_config_t eg__quick[] = {
    {4, 2, 1, "a2a", "shm"},   {4, 2, 4, "a2a", "shm"},
    {4, 2, 1, "a2a", "tcp"},   {4, 2, 4, "a2a", "tcp"},
    {4, 2, 1, "dense", "shm"}, {4, 2, 4, "dense", "shm"},
    {4, 2, 1, "dense", "tcp"}, {4, 2, 4, "dense", "tcp"},
    {4, 2, 4, "a2a", NULL},    {3, 2, 1, "a2a", NULL},
    {3, 3, 4, "dense", "shm"}, {2, 2, 1, "a2a", "tcp"},
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
						    W, (W + nodes - 1) / nodes,
						    comms[k], engines[e],
						    provs[p]};
					}
	return n;
}

static void eg__config_name(const eg_l2_config_t *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s.w%u.n%u.%s.k%u", c->engine, c->world,
		 (c->world + c->ranks_per_node - 1) / c->ranks_per_node,
		 c->provider ? c->provider : "auto", c->num_comms);
}

/* Runs one job; returns the launcher's exit code or <0. */
static int eg__launch(const eg_l2_opts_t *o, const eg_l2_config_t *c,
		      const char *matrix, const char *results, const char *log)
{
	char k[16], it[16], to_env[32], err[256];
	const char *argv[32];
	int a = 0, rc;

	snprintf(k, sizeof(k), "%u", c->num_comms);
	snprintf(it, sizeof(it), "%u", o->iters ? o->iters : 2);
	snprintf(to_env, sizeof(to_env), "%.1f", o->timeout_s);
	argv[a++] = "l2-rank";
	argv[a++] = "--engine";
	argv[a++] = c->engine;
	if (c->provider) {
		argv[a++] = "--provider";
		argv[a++] = c->provider;
	}
	argv[a++] = "--num-comms";
	argv[a++] = k;
	argv[a++] = "--iters";
	argv[a++] = it;
	argv[a++] = "--workload";
	argv[a++] = matrix;
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

/* One run's reports and totals. */
typedef struct eg__l2 {
	const eg_l2_opts_t *o;
	eg_tap_t *tap;
	eg_junit_t *junit;
	eg_l1_totals_t *tot;
} eg__l2_t;

/* One results line of a job: a TAP point and a JUnit case.  1 when it
 * was a workload's line. */
static int eg__report_line(eg__l2_t *l, json_t *j, const char *name,
			   const char *cls, double per)
{
	const char *wname = json_string_value(json_object_get(j, "workload"));
	const char *st = json_string_value(json_object_get(j, "status"));
	json_t *diag = json_object_get(j, "diag");
	char desc[256], *txt;
	int err;

	if (!wname || !st)
		return 0;
	l->tot->run++;
	snprintf(desc, sizeof(desc), "l2 %s: %s", name, wname);
	if (!strcmp(st, "pass")) {
		l->tot->passed++;
		eg_tap_point(l->tap, EG_STATUS_PASS, desc, NULL, NULL);
		eg_junit_case(l->junit, cls, wname, per, EG_STATUS_PASS, NULL,
			      NULL);
		return 1;
	}
	txt = json_dumps(diag, JSON_INDENT(2));
	err = !strcmp(st, "error");
	if (err)
		l->tot->errors++;
	else
		l->tot->failed++;
	eg_tap_point(l->tap, EG_STATUS_FAIL, desc, NULL, diag);
	eg_junit_case(l->junit, cls, wname, per,
		      err ? EG_STATUS_ERROR : EG_STATUS_FAIL,
		      err ? "harness error" : "mismatch", txt);
	free(txt);
	return 1;
}

/* Every line of a job's results file; the workloads it reported. */
static unsigned eg__report_results(eg__l2_t *l, const char *results,
				   const char *name, const char *cls,
				   double per)
{
	FILE *f = fopen(results, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned seen = 0;

	while (f && getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);

		seen += (unsigned)eg__report_line(l, j, name, cls, per);
		json_decref(j);
	}
	free(line);
	if (f)
		fclose(f);
	return seen;
}

/* The job itself failed: say how, with its log. */
static void eg__report_job(eg__l2_t *l, int rc, unsigned seen,
			   unsigned expected, const char *name, const char *cls,
			   const char *log, double dt)
{
	json_t *d = json_object();
	char desc[256], msg[128], *txt;

	json_object_set_new(d, "exit", json_integer(rc));
	json_object_set_new(d, "workloads_reported", json_integer(seen));
	json_object_set_new(d, "workloads_expected", json_integer(expected));
	json_object_set_new(d, "log", json_string(log));
	json_object_set_new(d, "log_tail", eg__log_tail(log, 12));
	snprintf(desc, sizeof(desc), "l2 %s: job", name);
	snprintf(msg, sizeof(msg), "job exited %d after %u of %u workloads", rc,
		 seen, expected);
	txt = json_dumps(d, JSON_INDENT(2));
	eg_tap_point(l->tap, EG_STATUS_FAIL, desc, NULL, d);
	eg_junit_case(l->junit, cls, "job", dt, EG_STATUS_ERROR, msg, txt);
	free(txt);
	json_decref(d);
	l->tot->errors++;
	if (l->o->verbose)
		fprintf(stderr, "  L2 %s: %s (log %s)\n", name, msg, log);
}

/* One configuration: its job and its reports.  1 when the job failed. */
static int eg__config(eg__l2_t *l, const eg_l2_config_t *c, const char *matrix,
		      const eg_workload_list_t *wl)
{
	char name[96], results[4200], log[4200], cls[128];
	unsigned expected = 0, seen;
	double t0 = eg_now(), dt;
	int rc;

	eg__config_name(c, name, sizeof(name));
	snprintf(cls, sizeof(cls), "epgate.l2.%s", name);
	snprintf(results, sizeof(results), "%s/l2-%s.jsonl", l->o->workdir,
		 name);
	snprintf(log, sizeof(log), "%s/l2-%s.log", l->o->workdir, name);
	unlink(results);
	for (size_t j = 0; j < wl->n; j++)
		expected += wl->items[j].world == c->world;
	if (l->o->verbose)
		fprintf(stderr, "  L2 %s (%u workloads) ...\n", name, expected);
	rc = eg__launch(l->o, c, matrix, results, log);
	dt = eg_now() - t0;
	seen = eg__report_results(l, results, name, cls,
				  dt / (expected ? expected : 1));
	if (rc == EG_EXIT_PASS || (rc == EG_EXIT_FAIL && seen == expected))
		return 0;
	eg__report_job(l, rc, seen, expected, name, cls, log, dt);
	return 1;
}

int eg_l2_run(const eg_l2_opts_t *o, struct eg_l1_totals *tot)
{
	eg_l2_config_t full[64];
	const eg_l2_config_t *cfg = eg__quick;
	size_t ncfg = sizeof(eg__quick) / sizeof(eg__quick[0]);
	char matrix[4096];
	eg_workload_list_t wl = {0};
	eg_overrides_t ov = {0};
	eg__l2_t l = {.o = o, .tot = tot};
	int hard = 0;

	memset(tot, 0, sizeof(*tot));
	if (o->set == EG_L2_FULL) {
		ncfg = eg__full(full, 64);
		cfg = full;
	}
	if (!eg_self_exe()) {
		fprintf(stderr, "epgate: cannot find its own executable\n");
		return EG_EXIT_HARD;
	}
	if (eg_find_data("fixtures/workloads/l2-matrix.ini", matrix,
			 sizeof(matrix)) < 0) {
		fprintf(stderr, "epgate: cannot find "
				"fixtures/workloads/l2-matrix.ini\n");
		return EG_EXIT_HARD;
	}
	if (eg_cli_load_workloads("epgate", matrix, &ov, &wl) < 0)
		return EG_EXIT_HARD;
	if (eg_tap_open(&l.tap, o->tap_path, -1) < 0 ||
	    eg_junit_open(&l.junit, o->junit_path, "epgate-l2") < 0) {
		fprintf(stderr, "epgate: cannot write the L2 reports\n");
		if (l.tap)
			eg_tap_close(l.tap);
		eg_workload_list_free(&wl);
		return EG_EXIT_HARD;
	}
	for (size_t i = 0; i < ncfg; i++)
		hard |= eg__config(&l, &cfg[i], matrix, &wl);
	eg_tap_close(l.tap);
	eg_junit_close(l.junit);
	eg_workload_list_free(&wl);
	if (hard)
		return EG_EXIT_HARD;
	if (tot->failed)
		return EG_EXIT_FAIL;
	return tot->run ? EG_EXIT_PASS : EG_EXIT_SKIP;
}
