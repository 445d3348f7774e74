/* Launches as the unit (docs/gates.md, "Launches"): a campaign measures
 * every point in several launches, fresh processes and communicators
 * each time, because what changes from one launch to the next (placement,
 * clocks, transport setup, other people's jobs) is the larger part of the
 * noise and one launch's samples cannot show it.  A pass runs every point
 * once: one `epgate launch` job per (world, nodes) holding all of its
 * points, jobs and points in an order shuffled by (seed, pass), so that a
 * drift of the machine lands on every point alike.  Each job's rank 0
 * spools its points; each spooled point is added to the point held for
 * its id as one more launch, and the results file is rewritten (a crash
 * keeps every launch measured before it). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/clock.h"
#include "epgate/error.h"
#include "epgate/job.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep_int.h"

#define EG__PROG "epgate bench"

static int eg__unit_add(eg__run_t *r, size_t i, const char *engine,
			const char *label)
{
	eg_bench_point_t q = r->pts[i];
	eg__unit_t *u = &r->units[r->n_units++];

	eg_bench_point_set_arm(r->p, &q, label);
	*u = (eg__unit_t){.idx = i,
			  .group = i,
			  .engine = engine,
			  .label = label,
			  .launches = q.launches ? q.launches : 1,
			  .W = q.v[EG_AXIS_WORLD].num,
			  .N = q.v[EG_AXIS_NODES].num};
	snprintf(u->id, sizeof(u->id), "%s", q.id);
	/* the first point of this shape leads the group */
	for (size_t j = 0; r->p->interleave && j < i; j++)
		if (eg_bench_point_same_shape(&r->pts[j], &r->pts[i])) {
			u->group = j;
			break;
		}
	if (r->o->launches)
		u->launches = r->o->launches;
	if (u->launches > r->launches)
		r->launches = u->launches;
	r->total += u->launches;
	return 0;
}

/* Is sweep name one of list's (comma-separated)? */
static int eg__in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; s;
	     s = strchr(s, ',') ? strchr(s, ',') + 1 : 0)
		if (!strncmp(s, name, n) && (s[n] == ',' || !s[n]))
			return 1;
	return 0;
}

/* --sweep: every name one of the profile's sweeps. */
static int eg__sweeps_known(const eg__run_t *r, char *err, size_t errlen)
{
	const char *s = r->o->sweep;

	while (s && *s) {
		size_t n = strcspn(s, ",");
		int known = 0;

		for (size_t i = 0; i < r->p->n_sweeps; i++)
			known |= strlen(r->p->sweeps[i].name) == n &&
				 !strncmp(r->p->sweeps[i].name, s, n);
		if (!known)
			return eg_err_set(err, errlen, EG_EINVAL,
					  "--sweep: no sweep \"%.*s\" in "
					  "profile %s",
					  (int)n, s, r->p->name);
		s += n + (s[n] == ',');
	}
	return 0;
}

int eg__campaign_units(eg__run_t *r, char *err, size_t errlen)
{
	const eg_bench_run_opts_t *o = r->o;
	const char *plant_arm = NULL, *ab_arm = o->ab_arm ? o->ab_arm : "a2a";
	double f, t;

	if (o->plant && eg_slow_parse(o->plant, &f, &t, &plant_arm) < 0) {
		snprintf(err, errlen,
			 "--plant %s: want slow:N%%:ARM or slow:Nus:ARM",
			 o->plant);
		return EG_EINVAL;
	}
	if (eg__sweeps_known(r, err, errlen) < 0)
		return EG_EINVAL;
	r->units = calloc(2 * r->n_pts + 1, sizeof(*r->units));
	if (!r->units)
		return EG_ENOMEM;
	for (size_t i = 0; i < r->n_pts; i++) {
		const char *arm = r->pts[i].arm;

		if ((o->ab[0] && strcmp(arm, ab_arm)) ||
		    (o->sweep && !eg__in_list(o->sweep, r->pts[i].suite)))
			continue;
		if (o->ab[0]) {
			eg__unit_add(r, i, o->ab[0], o->ab[0]);
			eg__unit_add(r, i, o->ab[1], o->ab[1]);
		} else {
			eg__unit_add(r, i,
				     plant_arm && !strcmp(arm, plant_arm)
					 ? o->plant
					 : arm,
				     arm);
		}
	}
	if (!r->n_units) {
		snprintf(err, errlen, "no point of arm %s in profile %s",
			 ab_arm, r->p->name);
		return EG_EINVAL;
	}
	return 0;
}

size_t eg__campaign_pick(eg__run_t *r, const json_t *ids)
{
	size_t k, n = 0;
	json_t *v;

	for (size_t i = 0; i < r->n_units; i++)
		r->units[i].pick = 0;
	json_array_foreach(ids, k, v)
	{
		const char *id = json_string_value(v);

		for (size_t i = 0; id && i < r->n_units; i++)
			if (!strcmp(r->units[i].id, id))
				r->units[i].pick = 1;
	}
	/* every arm of a group (A/B, interleave): the pairing is the
	 * measurement */
	for (size_t i = 0; i < r->n_units; i++)
		for (size_t j = 0; j < r->n_units; j++)
			if (r->units[i].pick &&
			    r->units[j].group == r->units[i].group)
				r->units[j].pick = 1;
	for (size_t i = 0; i < r->n_units; i++)
		n += r->units[i].pick;
	return n;
}

/* ---- progress -------------------------------------------------------- */

/* How the job ended, for its last progress line: "done, 4 point(s)"
 * only when every point was measured. */
static void eg__ending(const eg__run_t *r, char *buf, size_t len)
{
	unsigned ok = r->job_done - r->job_failed;

	if (r->job_skipped)
		snprintf(buf, len,
			 "skipped, nothing measurable here (%u "
			 "point(s))",
			 r->job_total);
	else if (r->job_failed)
		snprintf(buf, len,
			 "ended, %u of %u point(s) measured, %u "
			 "failed",
			 ok - r->job_skips, r->job_total, r->job_failed);
	else if (r->job_skips)
		snprintf(buf, len,
			 "done, %u point(s), %u of them skipped (not "
			 "runnable here)",
			 r->job_done, r->job_skips);
	else
		snprintf(buf, len, "done, %u point(s)", r->job_done);
}

static void eg__progress(eg__run_t *r, int final)
{
	double el = eg_now() - r->t0;
	double per = r->done ? el / r->done : NAN;
	double eta_j = per * (r->job_total - r->job_done);
	double eta_all = per * (r->total - r->done);
	char eta[64] = "ETA -", end[128];

	if (r->done)
		snprintf(eta, sizeof(eta), "ETA %.0f s (run %.0f s)", eta_j,
			 eta_all);
	eg__ending(r, end, sizeof(end));
	if (r->tty && !final) {
		char line[512];

		/* one terminal row: a wrapped line cannot be redrawn */
		snprintf(line, sizeof(line),
			 "[%s] %s: point %u of %u, elapsed %.0f s, %s%s%s",
			 r->p->name, r->job, r->job_done, r->job_total,
			 eg_now() - r->t_job, eta, r->last[0] ? ", last " : "",
			 r->last);
		fprintf(stderr, "\r\033[K%.79s", line);
	} else if (!final) {
		fprintf(stderr,
			"[%s] %s: point %u of %u, elapsed %.1f s, %s: %s\n",
			r->p->name, r->job, r->job_done, r->job_total,
			eg_now() - r->t_job, eta, r->last);
	} else {
		fprintf(stderr, "%s[%s] %s: %s in %.1f s\n",
			r->tty ? "\r\033[K" : "", r->p->name, r->job, end,
			eg_now() - r->t_job);
	}
	fflush(stderr);
}

/* ---- ingest ------------------------------------------------------------ */

static eg_point_t *eg__held(eg__run_t *r, const char *id)
{
	for (size_t i = 0; i < r->held.n_points; i++)
		if (!strcmp(r->held.points[i].id, id))
			return &r->held.points[i];
	return NULL;
}

/* A launch of a point parsed once, added to the point held (*out),
 * written. */
static int eg__keep(eg__run_t *r, json_t *j, eg_point_t **out, char *err,
		    size_t errlen)
{
	eg_point_t pt, *h;
	int rc = eg_point_from_json(j, &pt, r->spool, "point", err, errlen);

	if (rc)
		return rc;
	if (!(h = eg__held(r, pt.id))) {
		eg_point_t fresh = {0};

		if ((rc = eg_point_add_launch(&fresh, &pt, r->pass,
					      r->remeasure)) < 0 ||
		    (rc = eg_results_push(&r->held, &fresh)) < 0) {
			eg_point_fini(&fresh);
			eg_point_fini(&pt);
			snprintf(err, errlen, "%s: out of memory", r->spool);
			return rc;
		}
		h = &r->held.points[r->held.n_points - 1];
	} else if ((rc = eg_point_add_launch(h, &pt, r->pass, r->remeasure)) <
		   0) {
		eg_point_fini(&pt);
		snprintf(err, errlen, "%s: %s: cannot add launch %u: %s",
			 r->spool, h->id, r->pass, eg_strerror(rc));
		return rc;
	}
	*out = h;
	return eg_results_put(r->wr, h, err, errlen);
}

/* The median step time of the point's last launch, for the progress. */
static double eg__last_step(const eg_point_t *p)
{
	const eg_metric_t *m = eg_point_metric(p, "step_us");
	size_t c;

	if (!m || !m->n_samples)
		return NAN;
	c = m->launch_n ? m->launch_n[m->n_launches - 1] : m->n_samples;
	return c ? eg_stats_median(m->samples + m->n_samples - c, c) : NAN;
}

/* One spool line: a point, a point that failed verification, or one
 * whose arm cannot run here (said once, in the first pass). */
static void eg__ingest_line(eg__run_t *r, const char *line)
{
	char err[sizeof(r->spool) + EG_RESULTS_ERR_MAX];
	json_error_t je;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	const json_t *failed = json_object_get(j, "failed");
	const json_t *skipped = json_object_get(j, "skipped");
	eg_point_t *pt = NULL;
	int rc;

	r->done++;
	r->job_done++;
	r->job_points++;
	if (json_is_string(skipped)) {
		r->job_skips++;
		if (!r->pass && !r->remeasure) {
			r->tot->skipped++;
			fprintf(stderr, "%s" EG__PROG ": %s: skipped: %s\n",
				r->tty ? "\n" : "", json_string_value(skipped),
				json_string_value(json_object_get(j, "why")));
		}
		snprintf(r->last, sizeof(r->last), "%s skipped",
			 json_string_value(skipped));
		json_decref(j);
		return;
	}
	if (json_is_string(failed)) {
		r->tot->failed++;
		r->job_failed++;
		snprintf(r->last, sizeof(r->last), "%s FAILED",
			 json_string_value(failed));
		json_decref(j);
		return;
	}
	if (j) {
		rc = eg__keep(r, j, &pt, err, sizeof(err));
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
		r->job_failed++;
		return;
	}
	r->tot->launches++;
	r->tot->remeasured += r->remeasure ? 1 : 0;
	snprintf(r->last, sizeof(r->last), "%s %.0f us", pt->id,
		 eg__last_step(pt));
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
	r->job_failed += missing;
	r->done += missing;
	r->job_done += missing;
	fprintf(stderr,
		"%s" EG__PROG ": job %s exited %d after %u of %u point(s); "
		"log %s\n",
		r->tty ? "\n" : "", r->job, status, r->job_points, points, log);
	(void)W;
	(void)N;
}

/* One launch of the units of (W, N) listed in plan: launch, watch its
 * output, ingest its points.  Returns the launcher's exit status. */
static int eg__job(eg__run_t *r, uint32_t W, uint32_t N, const char *plan,
		   unsigned points)
{
	const char *args[] = {"bench-rank", "--profile", r->path,
			      "--spool",    r->spool,	 NULL};
	eg_job_env_t *env = calloc(r->p->n_env + 3, sizeof(*env));
	char env_t[32], env_p[16], log[4200], err[256];
	/* the job's deadline backs up the per-step ones */
	eg_job_t j = {.ranks = W,
		      .ranks_per_node = W / N,
		      .timeout_s = 120 + 4 * r->p->timeout_s + 60.0 * points,
		      .args = args,
		      .env = env,
		      .n_env = r->p->n_env + 3,
		      .log = log,
		      .on_line = eg__on_line,
		      .arg = r};
	int status;

	if (!env)
		return EG_EXIT_HARD;
	snprintf(env_t, sizeof(env_t), "%.0f", r->p->timeout_s);
	env[0] = (eg_job_env_t){"EPGATE_TIMEOUT", env_t, 0};
	env[1] = (eg_job_env_t){"EPGATE_BENCH_PLAN", plan, 0};
	/* the launch's pass: the sim backend's seeded draws (backend_null.c) */
	snprintf(env_p, sizeof(env_p), "%u", r->pass);
	env[2] = (eg_job_env_t){"EPGATE_BENCH_PASS", env_p, 0};
	for (size_t i = 0; i < r->p->n_env; i++)
		env[i + 3] =
		    (eg_job_env_t){r->p->env_keys[i], r->p->env_vals[i], 1};
	snprintf(r->spool, sizeof(r->spool), "%s/bench-p%u.w%u.n%u.spool",
		 r->run_dir, r->pass, W, N);
	snprintf(log, sizeof(log), "%s/bench-p%u.w%u.n%u.log", r->run_dir,
		 r->pass, W, N);
	unlink(r->spool);
	r->off = 0;
	r->job_points = r->job_skips = 0;
	status = eg_job_run(&j, err, sizeof(err));
	if (status < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		status = EG_EXIT_HARD;
	}
	free(env);
	eg__ingest(r);
	unlink(r->spool);
	if (status == EG_EXIT_SKIP && r->job_points == r->job_skips) {
		/* nothing measurable here (no device, every arm's plugin
		 * absent): not a failure */
		r->skipped++;
		r->job_skipped = 1;
		r->done += points - r->job_points;
		r->job_done += points - r->job_points;
		return status;
	}
	if (r->job_points < points)
		eg__missing(r, W, N, points, status, log);
	return status;
}

/* A permutation of 0..n-1 from g (Fisher-Yates). */
static void eg__shuffle(size_t *a, size_t n, eg_rng_t *g)
{
	for (size_t i = 0; i < n; i++)
		a[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = eg_rng_below(g, i), t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* Does unit u run in this pass? */
static int eg__in_pass(const eg__run_t *r, const eg__unit_t *u)
{
	return r->remeasure ? u->pick : u->launches > r->pass;
}

/* Is unit u of this job's plan, in group g? */
static int eg__in_job(const eg__run_t *r, const eg__unit_t *u, size_t g,
		      uint32_t W, uint32_t N)
{
	return u->group == g && u->W == W && u->N == N && eg__in_pass(r, u);
}

/* The plan of one job: the pass's units of (W, N), groups in the order
 * perm gives them; the units of a group together (the first unit first
 * in even passes, the last in odd ones), marked "+" to be measured
 * together, step by step, when the group is more than one point (docs/
 * gates.md, "A/B in one job"; docs/profiles.md, interleave).  Returns the
 * number of units. */
static unsigned eg__plan(const eg__run_t *r, uint32_t W, uint32_t N,
			 const size_t *perm, char *plan, size_t len)
{
	size_t at = 0;
	unsigned n = 0;

	plan[0] = 0;
	for (size_t k = 0; k < r->n_pts; k++) {
		unsigned left = 0; /* this point's units still to write */

		for (size_t h = 0; h < r->n_units; h++)
			left += eg__in_job(r, &r->units[h], perm[k], W, N);
		for (size_t h = 0; h < r->n_units; h++) {
			size_t i = r->pass % 2 ? r->n_units - 1 - h : h;
			const eg__unit_t *u = &r->units[i];
			int w;

			if (!eg__in_job(r, u, perm[k], W, N))
				continue;
			left--;
			w = snprintf(plan + at, len - at, "%zu\t%s\t%s%s\n",
				     u->idx, u->engine, u->label,
				     left ? "\t+" : "");
			if (w < 0 || (size_t)w >= len - at)
				return n;
			at += (size_t)w;
			n++;
		}
	}
	return n;
}

/* The distinct (W, N) of the units in this pass, shuffled. */
static size_t eg__groups(const eg__run_t *r, uint32_t (*g)[2], size_t max,
			 eg_rng_t *rng)
{
	size_t ng = 0, perm[64];
	uint32_t t[64][2];

	for (size_t i = 0; i < r->n_units; i++) {
		const eg__unit_t *u = &r->units[i];
		size_t k = 0;

		if (!eg__in_pass(r, u))
			continue;
		while (k < ng && (g[k][0] != u->W || g[k][1] != u->N))
			k++;
		if (k == ng && ng < max && ng < 64) {
			g[ng][0] = u->W;
			g[ng++][1] = u->N;
		}
	}
	eg__shuffle(perm, ng, rng);
	memcpy(t, g, ng * sizeof(*t));
	for (size_t k = 0; k < ng; k++) {
		g[k][0] = t[perm[k]][0];
		g[k][1] = t[perm[k]][1];
	}
	return ng;
}

void eg__campaign_pass(eg__run_t *r, uint32_t pass, int remeasure)
{
	eg_rng_t *g = eg_rng_new(r->seed * 0x9e3779b97f4a7c15ull + pass + 1);
	size_t *perm = calloc(r->n_pts + 1, sizeof(*perm)), ng;
	size_t len = 64 + r->n_units * 512;
	char *plan = malloc(len);
	uint32_t groups[64][2];

	r->pass = pass;
	r->remeasure = remeasure;
	if (!g || !perm || !plan) {
		r->hard = 1;
		goto out;
	}
	ng = eg__groups(r, groups, 64, g);
	for (size_t k = 0; k < ng; k++) {
		uint32_t W = groups[k][0], N = groups[k][1];
		int jrc;

		eg__shuffle(perm, r->n_pts, g);
		r->job_total = eg__plan(r, W, N, perm, plan, len);
		r->job_done = r->job_failed = 0;
		r->job_skipped = 0;
		r->last[0] = 0;
		r->t_job = eg_now();
		snprintf(r->job, sizeof(r->job), "%s %u of %u, w%u n%u",
			 remeasure ? "re-measure" : "pass",
			 remeasure ? pass - r->launches + 1 : pass + 1,
			 remeasure ? r->remeasure_total : r->launches, W, N);
		eg__progress(r, 0);
		jrc = eg__job(r, W, N, plan, r->job_total);
		r->tot->jobs++;
		if (jrc != EG_EXIT_PASS && jrc != EG_EXIT_FAIL &&
		    jrc != EG_EXIT_SKIP) {
			r->tot->jobs_failed++;
			r->hard = 1;
		}
		eg__progress(r, 1);
	}
out:
	eg_rng_free(g);
	free(perm);
	free(plan);
}
