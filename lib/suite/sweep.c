/* The sweep orchestrator (docs/profiles.md): a profile's points run as
 * one `epgate launch` job per (sweep, world, nodes) (lib/world/job.c),
 * every point of the job measured inside the same ranks (a launch costs
 * about 0.3 s here and a point about as much, so one job per point would
 * double the run).  Rank 0 of each job spools each point as one JSON
 * line; the orchestrator reads the job's output line by line, and on
 * every "bench: point" line parses the new spool lines (once) and appends
 * the points to the results file (incremental and atomic, lib/results/),
 * so a crash keeps every point measured before it.  It keeps the points
 * it wrote: the table and the gates (lib/gate/run.c, in process) judge
 * those.  Under Slurm nothing is forked: the srun'd ranks run the
 * points. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBFABRIC
#include <rdma/fabric.h>
#endif

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/gate.h"
#include "epgate/job.h"
#include "epgate/report_html.h"
#include "lib/suite/suite.h"
#include "lib/suite/sweep.h"

#define EG__PROG "epgate bench"

int eg_bench_find_profile(const char *name, char *path, size_t len)
{
	char rel[512];
	size_t n = strlen(name);

	if (strchr(name, '/') || (n > 8 && !strcmp(name + n - 8, ".profile"))) {
		if (snprintf(path, len, "%s", name) >= (int)len)
			return EG_ERANGE;
		return access(path, R_OK) ? EG_ENOENT : EG_OK;
	}
	snprintf(rel, sizeof(rel), "profiles/%s.profile", name);
	return eg_find_data(rel, path, len);
}

/* git describe of the source tree, when it is a git tree. */
static void eg__build(char *out, size_t len)
{
	char cmd[4200], line[128] = "";
	FILE *f;

	snprintf(out, len, "epgate %s", PACKAGE_VERSION);
	snprintf(cmd, sizeof(cmd),
		 "git -C '%s' describe --always --dirty 2>/dev/null",
		 EG_SRCDIR);
	if (strchr(EG_SRCDIR, '\'') || !(f = popen(cmd, "r")))
		return;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (*line)
			snprintf(out, len, "epgate %s (%s)", PACKAGE_VERSION,
				 line);
	}
	pclose(f);
}

json_t *eg_bench_context(const eg_profile_t *p, json_t *hosts)
{
	static const char *const prefixes[] = {"EPGATE_", "FI_", "NCCL_", "EP_",
					       NULL};
	extern char **environ;
	json_t *c = json_object(), *env = json_object();
	char build[256], host[256] = "", notes[512];
	int bad = !c || !env;

	if (bad)
		goto fail;
	if (hosts) {
		bad |= json_object_set(c, "hosts", hosts);
	} else {
		gethostname(host, sizeof(host) - 1);
		bad |= json_object_set_new(c, "hosts", json_pack("[s]", host));
	}
	if (getenv("SLURM_JOB_NODELIST"))
		bad |= json_object_set_new(
		    c, "node_list", json_string(getenv("SLURM_JOB_NODELIST")));
	if (getenv("SLURM_JOB_ID"))
		bad |= json_object_set_new(c, "slurm_job_id",
					   json_string(getenv("SLURM_JOB_ID")));
#ifdef HAVE_LIBFABRIC
	char v[32];

	snprintf(v, sizeof(v), "%u.%u", FI_MAJOR(fi_version()),
		 FI_MINOR(fi_version()));
	bad |= json_object_set_new(c, "libfabric", json_string(v));
#endif
	eg__build(build, sizeof(build));
	bad |= json_object_set_new(c, "build", json_string(build));
	bad |= json_object_set_new(c, "profile", json_string(p->name));
	bad |= json_object_set_new(c, "transport", json_string(p->transport));
	/* the knobs that were set (the secret is not a knob) */
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !strncmp(*e, "EPGATE_SECRET=", 14))
			continue;
		for (int i = 0; prefixes[i]; i++)
			if (!strncmp(*e, prefixes[i], strlen(prefixes[i]))) {
				char key[128];

				snprintf(key, sizeof(key), "%.*s",
					 (int)(eq - *e), *e);
				bad |= json_object_set_new(env, key,
							   json_string(eq + 1));
				break;
			}
	}
	for (size_t i = 0; i < p->n_env; i++)
		if (!json_object_get(env, p->env_keys[i]))
			bad |= json_object_set_new(env, p->env_keys[i],
						   json_string(p->env_vals[i]));
	bad |= json_object_set_new(c, "env", env);
	env = NULL;
	snprintf(notes, sizeof(notes),
		 "provider asked: %s; what ran at each point is in its "
		 "evidence (transport, provider, bound); times are the "
		 "slowest rank's per step (docs/metrics.md)",
		 p->provider ? p->provider : "auto");
	bad |= json_object_set_new(c, "notes", json_string(notes));
	if (bad)
		goto fail;
	return c;
fail:
	json_decref(env);
	json_decref(c);
	return NULL;
}

/* ---- one run ------------------------------------------------------------ */

typedef struct eg__run {
	const eg_profile_t *p;
	const char *path; /* the profile file */
	const char *run_dir;
	const eg_bench_run_opts_t *o;
	eg_results_writer_t *wr;
	eg_results_t held; /* the points wr wrote: table and gates */
	eg_bench_totals_t *tot;
	int tty;
	double t0, t_sweep;
	const char *sweep;
	unsigned sweep_total, sweep_done, total, done;
	char last[200];
	/* the current job's spool and how far it was read */
	char spool[4200];
	long off;
	unsigned job_points;
} eg__run_t;

static void eg__progress(eg__run_t *r, int final)
{
	double el = eg_now() - r->t0;
	double per = r->done ? el / r->done : NAN;
	double eta_s = per * (r->sweep_total - r->sweep_done);
	double eta_all = per * (r->total - r->done);
	char eta[64] = "ETA -";

	if (r->done)
		snprintf(eta, sizeof(eta), "ETA %.0f s (run %.0f s)", eta_s,
			 eta_all);
	if (r->tty) {
		char line[512];

		/* one terminal row: a wrapped line cannot be redrawn */
		snprintf(line, sizeof(line),
			 "[%s] %s: point %u of %u, elapsed %.0f s, %s%s%s",
			 r->p->name, r->sweep, r->sweep_done, r->sweep_total,
			 eg_now() - r->t_sweep, final ? "done" : eta,
			 r->last[0] && !final ? ", last " : "",
			 final ? "" : r->last);
		fprintf(stderr, "\r\033[K%.79s%s", line, final ? "\n" : "");
	} else if (!final) {
		fprintf(stderr,
			"[%s] %s: point %u of %u, elapsed %.1f s, %s: %s\n",
			r->p->name, r->sweep, r->sweep_done, r->sweep_total,
			eg_now() - r->t_sweep, eta, r->last);
	} else {
		fprintf(stderr, "[%s] %s: done, %u point(s) in %.1f s\n",
			r->p->name, r->sweep, r->sweep_done,
			eg_now() - r->t_sweep);
	}
	fflush(stderr);
}

/* A point parsed once, written, and kept (or the reason it was not). */
static int eg__keep(eg__run_t *r, json_t *j, char *err, size_t errlen)
{
	eg_point_t pt;
	int rc = eg_point_from_json(j, &pt, r->spool, "point", err, errlen);

	if (!rc && (rc = eg_results_append(r->wr, &pt, err, errlen)) < 0)
		eg_point_fini(&pt);
	if (!rc && (rc = eg_results_push(&r->held, &pt)) < 0) {
		snprintf(err, errlen, "%s: out of memory", r->spool);
		eg_point_fini(&pt);
	}
	return rc;
}

/* One spool line: a point, or a point that failed verification. */
static void eg__ingest_line(eg__run_t *r, const char *line)
{
	char err[sizeof(r->spool) + EG_RESULTS_ERR_MAX];
	json_error_t je;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	const json_t *failed = json_object_get(j, "failed");
	int rc;

	r->done++;
	r->sweep_done++;
	r->job_points++;
	if (json_is_string(failed)) {
		r->tot->failed++;
		snprintf(r->last, sizeof(r->last), "%s FAILED",
			 json_string_value(failed));
		json_decref(j);
		return;
	}
	if (j) {
		rc = eg__keep(r, j, err, sizeof(err));
	} else {
		snprintf(err, sizeof(err), "%s: malformed point: %s", r->spool,
			 je.text);
		rc = EG_EPARSE;
	}
	json_decref(j);
	if (rc < 0) {
		fprintf(stderr, "%s%s: %s\n", r->tty ? "\n" : "", EG__PROG,
			err);
		r->tot->failed++;
		return;
	}
	const eg_point_t *pt = &r->held.points[r->held.n_points - 1];
	const eg_metric_t *m = eg_point_metric(pt, "step_us");

	r->tot->measured++;
	snprintf(r->last, sizeof(r->last), "%s %.0f us", pt->id,
		 m ? m->s.median : NAN);
}

/* Every complete new line of the job's spool. */
static void eg__ingest(eg__run_t *r)
{
	FILE *f = fopen(r->spool, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f)
		return;
	if (fseek(f, r->off, SEEK_SET) < 0) {
		fclose(f);
		return;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break; /* rank 0 is still writing it */
		r->off += len;
		eg__ingest_line(r, line);
		eg__progress(r, 0);
	}
	free(line);
	fclose(f);
}

/* Each line of the job's output. */
static void eg__on_line(const char *line, void *arg)
{
	eg__run_t *r = arg;

	if (r->o->verbose)
		fprintf(stderr, "%s%s", r->tty ? "\r\033[K" : "", line);
	if (strstr(line, "bench: point "))
		eg__ingest(r);
}

/* The points a job did not report: failed, and said where. */
static void eg__missing(eg__run_t *r, uint32_t W, uint32_t N, unsigned points,
			int status, const char *log)
{
	unsigned missing = points - r->job_points;

	r->tot->failed += missing;
	r->done += missing;
	r->sweep_done += missing;
	fprintf(stderr,
		"%s" EG__PROG ": job %s w%u n%u exited %d after %u of %u "
		"point(s); log %s\n",
		r->tty ? "\n" : "", r->sweep, W, N, status, r->job_points,
		points, log);
}

/* One job: launch, watch its output, ingest its points.  Returns the
 * launcher's exit status (or 99). */
static int eg__job(eg__run_t *r, uint32_t W, uint32_t N, unsigned points)
{
	const char *args[] = {"bench-rank", "--profile", r->path,  "--sweep",
			      r->sweep,	    "--spool",	 r->spool, NULL};
	eg_job_env_t *env = calloc(r->p->n_env + 1, sizeof(*env));
	char env_t[32], log[4200], err[256];
	/* the job's deadline backs up the per-step ones */
	eg_job_t j = {.ranks = W,
		      .ranks_per_node = W / N,
		      .timeout_s = 120 + 4 * r->p->timeout_s + 60.0 * points,
		      .args = args,
		      .env = env,
		      .n_env = r->p->n_env + 1,
		      .log = log,
		      .on_line = eg__on_line,
		      .arg = r};
	int status;

	if (!env)
		return EG_EXIT_HARD;
	snprintf(env_t, sizeof(env_t), "%.0f", r->p->timeout_s);
	env[0] = (eg_job_env_t){"EPGATE_TIMEOUT", env_t, 0};
	for (size_t i = 0; i < r->p->n_env; i++)
		env[i + 1] =
		    (eg_job_env_t){r->p->env_keys[i], r->p->env_vals[i], 1};
	snprintf(r->spool, sizeof(r->spool), "%s/bench-%s.w%u.n%u.spool",
		 r->run_dir, r->sweep, W, N);
	snprintf(log, sizeof(log), "%s/bench-%s.w%u.n%u.log", r->run_dir,
		 r->sweep, W, N);
	unlink(r->spool);
	r->off = 0;
	r->job_points = 0;
	status = eg_job_run(&j, err, sizeof(err));
	if (status < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		status = EG_EXIT_HARD;
	}
	free(env);
	eg__ingest(r);
	unlink(r->spool);
	if (r->job_points < points)
		eg__missing(r, W, N, points, status, log);
	return status;
}

/* The table of the measured points (lib/suite/sweep_table.c), with the
 * ratios the profile's gates judge. */
static void eg__table(const eg__run_t *r)
{
	char gates[4096];
	int have =
	    r->p->gates && eg_find_data(r->p->gates, gates, sizeof(gates)) == 0;

	eg_bench_table(stdout, &r->held, have ? gates : NULL, r->o->table);
}

/* The profile's gates on the points written, reports into the run
 * folder: the same run as `epgate gate` (lib/gate/run.c), in process. */
static int eg__gates(const eg__run_t *r)
{
	char gates[4096], tap[4200], junit[4200];
	eg_gate_data_t d = {.cur = &r->held, .n_cur = 1};
	eg_gate_run_opts_t go = {.gates = gates,
				 .data = &d,
				 .tap = tap,
				 .junit = junit,
				 .prog = "epgate gate"};

	if (eg_find_data(r->p->gates, gates, sizeof(gates)) < 0) {
		fprintf(stderr, EG__PROG ": profile %s: no gate file %s\n",
			r->p->name, r->p->gates);
		return EG_EXIT_HARD;
	}
	snprintf(tap, sizeof(tap), "%s/bench-gates.tap", r->run_dir);
	snprintf(junit, sizeof(junit), "%s/bench-gates.junit.xml", r->run_dir);
	printf("gates: %s\n", gates);
	fflush(stdout);
	return eg_gate_run(&go);
}

static int eg__slurm(const char *path, const eg_profile_t *p,
		     const eg_bench_run_opts_t *o, const char *run_dir,
		     eg_bench_totals_t *tot)
{
	eg_bench_rank_opts_t ro = {.profile = path, .results = tot->results};

	if (!getenv("SLURM_PROCID") || !getenv("SLURM_STEP_ID")) {
		fprintf(stderr,
			EG__PROG ": under Slurm the ranks run the points: "
				 "srun -N NODES -n WORLD epgate bench-rank "
				 "--profile %s --results FILE, once per "
				 "(world, nodes) of `epgate bench list %s` "
				 "(slurm/epgate.sbatch does it)\n",
			p->name, p->name);
		return EG_EXIT_HARD;
	}
	if (o->results)
		snprintf(tot->results, sizeof(tot->results), "%s", o->results);
	else
		snprintf(tot->results, sizeof(tot->results),
			 "%s/bench-%s.w%s.n%s.json", run_dir, p->name,
			 getenv("SLURM_NTASKS") ? getenv("SLURM_NTASKS") : "",
			 getenv("SLURM_NNODES") ? getenv("SLURM_NNODES") : "");
	return eg_bench_rank_run(&ro);
}

/* Whether this host runs the profile's points: 99 (-1: yes), 77 or the
 * Slurm path's own exit code. */
static int eg__where(const char *path, const eg_profile_t *p,
		     const eg_bench_run_opts_t *o, const char *run_dir,
		     eg_bench_totals_t *tot)
{
	/* a task of a step runs the points itself; inside an allocation
	 * but not a task (sbatch's script, salloc's shell), the jobs go
	 * through srun (lib/world/job_srun.c) */
	if (getenv("SLURM_JOB_ID") && getenv("SLURM_STEP_ID"))
		return eg__slurm(path, p, o, run_dir, tot);
	if (p->launcher == EG_LAUNCHER_SLURM && !getenv("SLURM_JOB_ID")) {
		fprintf(stderr,
			EG__PROG ": profile %s runs under Slurm: sbatch "
				 "slurm/epgate.sbatch %s\n",
			p->name, p->name);
		return EG_EXIT_SKIP;
	}
	if (!eg_bench_backend_find(p->transport)) {
		fprintf(stderr,
			EG__PROG ": profile %s: transport %s is not built into "
				 "this epgate\n",
			p->name, p->transport);
		return EG_EXIT_SKIP;
	}
	if (!eg_self_exe()) {
		fprintf(stderr, EG__PROG ": cannot find its own executable\n");
		return EG_EXIT_HARD;
	}
	return -1;
}

/* The results file, with the profile's context, and the held copy. */
static int eg__start(eg__run_t *r)
{
	char err[EG_RESULTS_ERR_MAX];
	json_t *ctx = eg_bench_context(r->p, NULL);
	int rc = ctx ? eg_results_create(&r->wr, r->tot->results, 0, ctx, err,
					 sizeof(err))
		     : EG_ENOMEM;

	r->held.path = strdup(r->tot->results);
	r->held.context = ctx;
	if (!rc && !r->held.path)
		rc = EG_ENOMEM;
	if (rc < 0)
		fprintf(stderr, EG__PROG ": %s\n",
			rc == EG_ENOMEM ? "out of memory" : err);
	return rc;
}

/* One sweep: one job per (world, nodes), in the order the points first
 * name them.  Returns 1 when a job failed hard. */
static int eg__sweep(eg__run_t *r, size_t s, const eg_bench_point_t *pts,
		     size_t n)
{
	uint32_t groups[256][2];
	unsigned cnt[256], ng = 0;
	int hard = 0;

	r->sweep = r->p->sweeps[s].name;
	r->sweep_total = r->sweep_done = 0;
	r->last[0] = 0;
	r->t_sweep = eg_now();
	for (size_t i = 0; i < n; i++) {
		uint32_t W = pts[i].v[EG_AXIS_WORLD].num;
		uint32_t N = pts[i].v[EG_AXIS_NODES].num;
		unsigned g = 0;

		if (pts[i].sweep != s)
			continue;
		r->sweep_total++;
		while (g < ng && (groups[g][0] != W || groups[g][1] != N))
			g++;
		if (g == ng && ng < 256) {
			groups[ng][0] = W;
			groups[ng][1] = N;
			cnt[ng++] = 0;
		}
		if (g < 256)
			cnt[g]++;
	}
	eg__progress(r, 0);
	for (unsigned g = 0; g < ng; g++) {
		int jrc = eg__job(r, groups[g][0], groups[g][1], cnt[g]);

		r->tot->jobs++;
		if (jrc != EG_EXIT_PASS && jrc != EG_EXIT_FAIL) {
			r->tot->jobs_failed++;
			hard = 1;
		}
	}
	eg__progress(r, 1);
	return hard;
}

/* Every sweep, then the table and the gates; the exit code. */
static int eg__run(eg__run_t *r, const eg_bench_point_t *pts, size_t n)
{
	eg_bench_totals_t *tot = r->tot;
	int hard = 0, ex;

	printf("epgate bench: profile %s (%s), %zu point(s) in %zu sweep(s); "
	       "results %s\n",
	       r->p->name, r->path, n, r->p->n_sweeps, tot->results);
	fflush(stdout);
	r->t0 = eg_now();
	for (size_t s = 0; s < r->p->n_sweeps; s++)
		hard |= eg__sweep(r, s, pts, n);
	eg_results_close(r->wr);
	r->wr = NULL;
	tot->seconds = eg_now() - r->t0;
	eg__table(r);
	printf("epgate bench: %u of %u point(s) measured, %u failed, %.1f s; "
	       "results %s\n",
	       tot->measured, tot->points, tot->failed, tot->seconds,
	       tot->results);
	ex = hard ? EG_EXIT_HARD : tot->failed ? EG_EXIT_FAIL : EG_EXIT_PASS;
	if (r->o->apply_gates && r->p->gates) {
		tot->gate_exit = eg__gates(r);
		if (tot->gate_exit == EG_EXIT_HARD)
			ex = EG_EXIT_HARD;
		else if (tot->gate_exit == EG_EXIT_FAIL && ex == EG_EXIT_PASS)
			ex = EG_EXIT_FAIL;
	}
	eg_report_run_folder(r->run_dir); /* report.html, summary.md */
	return ex;
}

int eg_bench_run_profile(const char *profile, const char *run_dir,
			 const eg_bench_run_opts_t *o, eg_bench_totals_t *tot)
{
	static const eg_bench_run_opts_t defaults = {.progress = -1};
	char path[4096], err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_bench_point_t *pts = NULL;
	size_t n = 0;
	eg__run_t r = {0};
	int ex = EG_EXIT_HARD;

	memset(tot, 0, sizeof(*tot));
	tot->gate_exit = -1;
	if (!o)
		o = &defaults;
	if (eg_bench_find_profile(profile, path, sizeof(path)) < 0) {
		fprintf(stderr,
			EG__PROG ": no profile \"%s\" (profiles/%s.profile)\n",
			profile, profile);
		return EG_EXIT_HARD;
	}
	if (eg_profile_load(&p, path, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	if (eg_profile_points(&p, &pts, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		goto out;
	}
	tot->points = (unsigned)n;
	if ((ex = eg__where(path, &p, o, run_dir, tot)) >= 0)
		goto out;
	ex = EG_EXIT_HARD;
	if (o->results)
		snprintf(tot->results, sizeof(tot->results), "%s", o->results);
	else
		snprintf(tot->results, sizeof(tot->results), "%s/bench-%s.json",
			 run_dir, p.name);
	r = (eg__run_t){.p = &p,
			.path = path,
			.run_dir = run_dir,
			.o = o,
			.tot = tot,
			.total = (unsigned)n};
	r.tty = o->progress < 0 ? isatty(2) : o->progress;
	if (eg__start(&r) == 0)
		ex = eg__run(&r, pts, n);
out:
	eg_results_close(r.wr);
	eg_results_free(&r.held);
	free(pts);
	eg_profile_free(&p);
	return ex;
}
