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
#include <time.h>
#include <unistd.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/evidence.h"
#include "epgate/gate.h"
#include "epgate/job.h"
#include "epgate/report_html.h"
#include "lib/suite/run_report.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep.h"
#include "lib/campaign/sweep_int.h"

#define EG__PROG "epgate bench"

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

/* The versions this process has loaded (the ranks' own are each point's
 * evidence) and the knobs of its environment. */
static int eg__context_loaded(json_t *c, json_t *env)
{
	static const char *const keys[] = {"nccl", "libfabric", "cuda",
					   "driver", NULL};
	eg_loaded_t l;
	json_t *all = json_object();
	int bad = !all;

	eg_loaded_read(&l);
	if (!bad)
		bad = eg_loaded_to_json(&l, all) < 0;
	for (int i = 0; !bad && keys[i]; i++) {
		const char *v =
		    json_string_value(json_object_get(all, keys[i]));

		if (v && strcmp(v, EG_NOT_LOADED) && strcmp(v, "none"))
			bad |= json_object_set_new(c, keys[i], json_string(v));
	}
	json_decref(all);
	return bad || eg_env_knobs(env) < 0 ? EG_ENOMEM : EG_OK;
}

json_t *eg_bench_context(const eg_profile_t *p, json_t *hosts)
{
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
	bad |= eg__context_loaded(c, env) < 0;
	bad |= json_object_set_new(c, "revision",
				   json_integer(EG_RESULTS_REVISION));
	eg__build(build, sizeof(build));
	bad |= json_object_set_new(c, "build", json_string(build));
	bad |= json_object_set_new(c, "profile", json_string(p->name));
	bad |= json_object_set_new(c, "transport", json_string(p->transport));
	for (size_t i = 0; i < p->n_env; i++)
		if (!json_object_get(env, p->env_keys[i]))
			bad |= json_object_set_new(env, p->env_keys[i],
						   json_string(p->env_vals[i]));
	bad |= json_object_set_new(c, "env", env);
	env = NULL;
	snprintf(notes, sizeof(notes),
		 "provider asked: %s; what ran at each point is in its "
		 "evidence (transport, provider, bound; the libraries as "
		 "loaded, host, gpu); times are the slowest rank's per step "
		 "(docs/metrics.md)",
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

/* The table of the measured points (lib/campaign/sweep_table.c), with the
 * ratios the profile's gates judge. */
static void eg__table(const eg__run_t *r)
{
	eg_bench_table(stdout, &r->held, r->gates[0] ? r->gates : NULL,
		       r->o->table);
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

/* The campaign's own context: how it was measured, where, and what
 * stood in for what. */
static int eg__context_run(const eg__run_t *r, json_t *ctx)
{
	const eg_bench_run_opts_t *o = r->o;
	char mach[256];
	int bad = 0;

	if (eg_machine_id(mach, sizeof(mach)) == EG_OK)
		bad |= json_object_set_new(ctx, "machine", json_string(mach));
	bad |= json_object_set_new(
	    ctx, "plan",
	    json_pack("{s:i, s:s, s:I, s:i, s:i}", "launches", (int)r->launches,
		      "order", "shuffled", "seed", (json_int_t)r->seed,
		      "remeasure_rounds", (int)r->rounds, "remeasure_launches",
		      (int)r->round_launches));
	if (o->plant)
		bad |=
		    json_object_set_new(ctx, "planted", json_string(o->plant));
	if (o->ab[0])
		bad |= json_object_set_new(
		    ctx, "ab",
		    json_pack("{s:s, s:s, s:s}", "a", o->ab[0], "b", o->ab[1],
			      "arm", o->ab_arm ? o->ab_arm : "a2a"));
	return bad ? EG_ENOMEM : EG_OK;
}

/* The results file, with the profile's context, and the held copy. */
static int eg__start(eg__run_t *r)
{
	char err[EG_RESULTS_ERR_MAX];
	json_t *ctx = eg_bench_context(r->p, NULL);
	int rc = ctx ? eg__context_run(r, ctx) : EG_ENOMEM;

	if (!rc)
		rc = eg_results_create(&r->wr, r->tot->results, 0, ctx, err,
				       sizeof(err));
	r->held.path = strdup(r->tot->results);
	r->held.context = ctx;
	if (!rc && !r->held.path)
		rc = EG_ENOMEM;
	if (rc < 0)
		fprintf(stderr, EG__PROG ": %s\n",
			rc == EG_ENOMEM ? "out of memory" : err);
	return rc;
}

/* The points held in the profile's order (they arrive shuffled). */
static void eg__sort_held(eg__run_t *r)
{
	size_t k = 0;

	for (size_t u = 0; u < r->n_units; u++)
		for (size_t i = k; i < r->held.n_points; i++)
			if (!strcmp(r->held.points[i].id, r->units[u].id)) {
				eg_point_t t = r->held.points[k];

				r->held.points[k++] = r->held.points[i];
				r->held.points[i] = t;
				break;
			}
}

/* Every pass, the re-measurements, then the table and the gates; the
 * exit code. */
static int eg__run(eg__run_t *r)
{
	eg_bench_totals_t *tot = r->tot;
	int ex;

	printf("epgate bench: profile %s (%s), %zu point(s), %u launch(es) "
	       "each, order seed %llu; results %s\n",
	       r->p->name, r->path, r->n_units, r->launches,
	       (unsigned long long)r->seed, tot->results);
	fflush(stdout);
	r->t0 = eg_now();
	for (uint32_t k = 0; k < r->launches; k++)
		eg__campaign_pass(r, k, 0);
	if (!r->hard && r->gates[0])
		eg__campaign_remeasure(r);
	eg_results_close(r->wr);
	r->wr = NULL;
	tot->seconds = eg_now() - r->t0;
	tot->measured = (unsigned)r->held.n_points;
	eg__sort_held(r);
	eg__table(r);
	printf("epgate bench: %u of %u point(s) measured (%u launches, %u of "
	       "them re-measurements), %u failed, %u skipped (not runnable "
	       "here), %.1f s; results %s\n",
	       tot->measured, tot->points, tot->launches, tot->remeasured,
	       tot->failed, tot->skipped, tot->seconds, tot->results);
	ex = r->hard ? EG_EXIT_HARD : tot->failed ? EG_EXIT_FAIL : EG_EXIT_PASS;
	if (!r->hard && !tot->launches && r->skipped) {
		fprintf(stderr,
			EG__PROG ": profile %s: nothing could be measured "
				 "here (see the jobs' logs)\n",
			r->p->name);
		return EG_EXIT_SKIP;
	}
	if (r->gates[0]) {
		tot->gate_exit = eg__campaign_gates(r);
		if (tot->gate_exit == EG_EXIT_HARD)
			ex = EG_EXIT_HARD;
		else if (tot->gate_exit == EG_EXIT_FAIL && ex == EG_EXIT_PASS)
			ex = EG_EXIT_FAIL;
	}
	if (r->o->history && !tot->failed && !r->hard &&
	    eg__campaign_history_store(r) < 0)
		ex = EG_EXIT_HARD;
	/* the verdict kept before the page reads it */
	if (!r->o->no_summary &&
	    eg_bench_summary(r->run_dir, r->p->name, tot, ex, r->gates) < 0)
		ex = EG_EXIT_HARD;
	eg_report_run_folder(r->run_dir); /* report.html, summary.md */
	return ex;
}

/* The order seed: given, EPGATE_BENCH_SEED, or the clock and the pid. */
static uint64_t eg__seed(const eg_bench_run_opts_t *o)
{
	const char *e = getenv("EPGATE_BENCH_SEED");
	struct timespec ts;

	if (o->seed)
		return o->seed;
	if (e && *e)
		return strtoull(e, NULL, 0) & 0x7fffffffffffffffull;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* 48 bits: a JSON integer any reader keeps exactly */
	return (((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^
		((uint64_t)getpid() << 20)) &
	       0xffffffffffffull;
}

/* The run's plan: units, passes, re-measurement, gate file. */
static int eg__plan_run(eg__run_t *r)
{
	const eg_profile_t *p = r->p;
	const char *gates = r->o->gates ? r->o->gates : p->gates;
	char err[512];
	int rc;

	r->seed = eg__seed(r->o);
	if ((rc = eg__campaign_units(r, err, sizeof(err))) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return rc;
	}
	r->rounds = r->o->remeasure < 0	  ? 0
		    : r->o->remeasure > 0 ? (unsigned)r->o->remeasure
					  : p->remeasure_rounds;
	r->round_launches = p->remeasure_launches ? p->remeasure_launches
						  : (r->launches + 1) / 2;
	r->gates[0] = 0;
	if (!r->o->apply_gates || !gates)
		return 0;
	if ((r->o->gates
		 ? snprintf(r->gates, sizeof(r->gates), "%s", gates) < 0
		 : eg_find_data(gates, r->gates, sizeof(r->gates)) < 0)) {
		fprintf(stderr, EG__PROG ": profile %s: no gate file %s\n",
			p->name, gates);
		return EG_EINVAL;
	}
	return 0;
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
			.pts = pts,
			.n_pts = n};
	r.tty = o->progress < 0 ? isatty(2) : o->progress;
	if (eg__plan_run(&r) == 0) {
		tot->points = (unsigned)r.n_units;
		if (eg__start(&r) == 0)
			ex = eg__run(&r);
	}
out:
	eg_results_close(r.wr);
	eg_results_free(&r.held);
	free(r.units);
	free(pts);
	eg_profile_free(&p);
	return ex;
}
