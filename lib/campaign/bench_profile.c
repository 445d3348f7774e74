/* `epgate bench profile` and `epgate bench list`: a profile's sweeps
 * into a new run folder, and its plan (points and jobs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/report.h"
#include "lib/suite/run_report.h"
#include "lib/campaign/sweep.h"
#include "lib/suite/suite.h"

#define EG__PROG "epgate bench"

/* The distinct (world, nodes) jobs, in the order the points name them. */
static void eg__jobs(const eg_profile_t *p, const eg_bench_point_t *pts,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t W = pts[i].v[EG_AXIS_WORLD].num;
		uint32_t N = pts[i].v[EG_AXIS_NODES].num;
		int seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= pts[j].v[EG_AXIS_WORLD].num == W &&
				pts[j].v[EG_AXIS_NODES].num == N;
		if (seen)
			continue;
		printf("  job   world %u nodes %u: srun -N %u -n %u epgate "
		       "bench-rank --profile %s --results "
		       "bench-%s.w%u.n%u.json\n",
		       W, N, N, W, p->name, p->name, W, N);
	}
}

/* The named arms, each with whether its engine loads here: a plugin
 * absent here (or its adapter) makes its points skips, said now. */
static void eg__arms(const eg_profile_t *p)
{
	for (size_t i = 0; i < p->n_arm_names; i++) {
		char why[1024] = "", eng[1024];
		eg_bench_point_t pt = {.arm = p->arm_names[i]};
		int ok;

		/* the knobs as the base's num_comms would set them */
		pt.v[EG_AXIS_NUM_COMMS] = p->base[EG_AXIS_NUM_COMMS];
		if (eg_profile_arm_engine(p, &pt, eng, sizeof(eng)) < 0)
			snprintf(eng, sizeof(eng), "%s", p->arm_specs[i]);
		/* a2a, dense: built in */
		ok = strncmp(eng, "plugin:", 7) ||
		     eg_engine_lookup(eng, why, sizeof(why));
		printf("  arm   %s = %s: %s%s\n", p->arm_names[i],
		       p->arm_specs[i],
		       ok ? "loads here"
			  : "not runnable here, its points "
			    "skip: ",
		       ok ? "" : why);
	}
}

int eg_bench_list(const char *name)
{
	char path[4096], err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_bench_point_t *pts;
	size_t n;

	if (eg_bench_find_profile(name, path, sizeof(path)) < 0) {
		fprintf(stderr, EG__PROG ": no profile \"%s\"\n", name);
		return EG_EXIT_HARD;
	}
	if (eg_profile_load(&p, path, err, sizeof(err)) < 0 ||
	    eg_profile_points(&p, &pts, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		eg_profile_free(&p);
		return EG_EXIT_HARD;
	}
	printf("profile %s (%s): transport %s, provider %s, launcher %s, "
	       "gates %s\n",
	       p.name, path, p.transport, p.provider ? p.provider : "auto",
	       p.launcher == EG_LAUNCHER_SLURM ? "slurm" : "local",
	       p.gates ? p.gates : "-");
	{
		char py[4096];
		const char *v = eg_profile_python(&p, py, sizeof(py));
		const char *env = getenv("EPGATE_PYTHON");

		/* the bridge's interpreter, as bench-rank sets it (and
		 * slurm/epgate.sbatch reads it here) */
		if (v && !(env && *env))
			setenv("EPGATE_PYTHON", v, 0);
		if (v)
			printf("  python: %s\n", env && *env ? env : v);
	}
	eg__arms(&p);
	for (size_t i = 0; i < n; i++)
		printf(
		    "  point %-50s world %u nodes %u, %u warm-up + %u timed\n",
		    pts[i].id, pts[i].v[EG_AXIS_WORLD].num,
		    pts[i].v[EG_AXIS_NODES].num, pts[i].warmup, pts[i].iters);
	eg__jobs(&p, pts, n);
	free(pts);
	eg_profile_free(&p);
	return EG_EXIT_PASS;
}

int eg_bench_profile_new_run(const char *name, const eg_bench_run_opts_t *o)
{
	eg_bench_totals_t tot;
	char run[4096];
	const char *procid = getenv("SLURM_PROCID");
	int rc;

	/* under srun only rank 0 writes: the others make no folder */
	if (getenv("SLURM_STEP_ID") && procid && strcmp(procid, "0"))
		return eg_bench_run_profile(name, o->report.reports, o, &tot);
	if (eg_suite_run_dir(EG__PROG, o->report.reports, run, sizeof(run)) < 0)
		return EG_EXIT_HARD;
	rc = eg_bench_run_profile(name, run, o, &tot);
	/* a profile that ran nothing (not found, bad, or not for this host)
	 * leaves no empty folder behind */
	if (!eg_suite_run_dir_drop(run))
		printf("epgate bench: run folder %s\n", run);
	/* the verdict, as summary.json and the page keep it */
	eg_bench_last_line(stdout, run, &tot, rc);
	return rc;
}
