/* One rank of an L2 job, host or GPU (epgate l2-rank, l2-gpu-rank; argv
 * in src/cmd_rank.c). Each rank generates its own input, runs the engine
 * over the transport and verifies its own outputs against the reference
 * (which needs no communication) through the verified step; the verdicts
 * meet at rank 0 over the bootstrap, and rank 0 appends one JSON line per
 * workload to the results file as it goes. The memory (lib/suite/
 * rank_int.h) says which engines, transport and evidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/watch.h"
#include "lib/suite/rank_int.h"
#include "lib/step/where.h"

/* The bound on the plugin's calls: EPGATE_TIMEOUT and a grace (a quarter,
 * at least 2 s), so that a rank whose call waits in epgate's bootstrap
 * for a peer that stalled names that peer first, at EPGATE_TIMEOUT. */
#define EG__GRACE(t) ((t) / 4 > 2.0 ? (t) / 4 : 2.0)

static struct {
	const char *prog;
	uint32_t rank;
	double timeout;
} eg__wt;

/* The watch's word on a call past its bound (lib/base/watch.h): the
 * rank, the plugin, the call, the workload, step, iteration and phase;
 * then the step's own line for an engine error (lib/step/step.c), which
 * the orchestrators read (lib/suite/job_crash.c). One write, no stdio
 * lock (the stuck thread may hold one). */
static void eg__stalled(const char *who, const char *call, double bound)
{
	char line[1200], at[48] = "";
	eg_where_pos_t p;
	int n;

	eg_where_now(&p);
	if (ftrylockfile(stdout) == 0) { /* lines rank 0 still holds */
		fflush(stdout);
		funlockfile(stdout);
	}
	n = snprintf(line, sizeof(line),
		     "epgate: rank %u: plugin %s: %s did not return within "
		     "%.1f s (EPGATE_TIMEOUT %g s and a grace of %g s) in %s; "
		     "the rank ends (exit 1)\n",
		     eg__wt.rank, who, call, bound, eg__wt.timeout,
		     bound - eg__wt.timeout, p.line);
	if (p.steps > 1)
		snprintf(at, sizeof(at), "step %u of %u, ", p.step + 1,
			 p.steps);
	if (*p.workload && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n,
			 "%s: rank %u: %s: %s: %s (%siteration %u)\n",
			 eg__wt.prog, eg__wt.rank, p.workload, call,
			 eg_strerror(EG_ETIMEDOUT), at, p.iter);
	if (write(STDERR_FILENO, line, strlen(line)) < 0) {
		/* nowhere left to say it */
	}
}

/* A plugin runs in this process: each of its calls gets a bound. */
static void eg__watch(const eg_rank_job_t *J)
{
	double t = J->world.timeout_s;

	if (strncmp(J->o->engine, "plugin:", 7))
		return;
	eg__wt.prog = J->o->prog;
	eg__wt.rank = J->world.rank;
	eg__wt.timeout = t;
	if (eg_watch_start(t + EG__GRACE(t), eg__stalled) < 0)
		fprintf(stderr,
			"%s: rank %u: warning: the plugin's calls are not "
			"bounded (no thread for the watch)\n",
			J->o->prog, J->world.rank);
}

static const eg_rank_memory_t *eg__memory(const char *name)
{
	if (!name || !strcmp(name, "host"))
		return &eg_rank_memory_host;
	if (!strcmp(name, "cuda"))
		return &eg_rank_memory_cuda;
	return NULL;
}

/* Everything that needs no peer: memory, engine, world, workloads.
 * Returns 0 or an exit code. */
static int eg__prepare(eg_rank_job_t *J, char *dpath, size_t dlen)
{
	const eg_rank_opts_t *o = J->o;
	char err[512];
	int rc, wrc;

	J->mem = eg__memory(o->memory);
	if (!J->mem) {
		fprintf(stderr, "%s: --memory: \"%s\": want host or cuda\n",
			o->prog, o->memory);
		return EG_EXIT_HARD;
	}
	/* the world first (its error said in its turn, below): the
	 * plugin's query, at load, is bounded too */
	if ((wrc = eg_world_from_env(&J->world, err, sizeof(err))) == 0)
		eg__watch(J);
	J->ops = eg_step_engine(J->mem->engines, o->engine);
	if (!J->ops) {
		fprintf(stderr,
			"%s: --engine: \"%s\" is not a multi-process engine "
			"(%s)\n",
			o->prog, o->engine, J->mem->engines->names);
		return EG_EXIT_HARD;
	}
	if ((rc = J->mem->built(o)) != 0)
		return rc;
	if (wrc < 0) {
		fprintf(stderr, "%s: %s\n", o->prog, err);
		return EG_EXIT_HARD;
	}
	J->file = o->file;
	if (!J->file) {
		if (eg_find_data("fixtures/workloads/l2-matrix.ini", dpath,
				 dlen) < 0) {
			fprintf(stderr,
				"%s: cannot find "
				"fixtures/workloads/l2-matrix.ini\n",
				o->prog);
			return EG_EXIT_HARD;
		}
		J->file = dpath;
	}
	if (eg_cli_load_filtered(o->prog, J->file, o->filter, &o->overrides,
				 &J->wl) < 0)
		return EG_EXIT_HARD;
	return 0;
}

/* The command that replays workload w alone: the environment that
 * mattered, the job's shape, the engine, the transport's options, the
 * workloads file, the filter and every key given. */
static void eg__repro(const eg_rank_job_t *J, const eg_workload_t *w, char *buf,
		      size_t len)
{
	const eg_rank_opts_t *o = J->o;
	char mem[256] = "", head[160];
	size_t n;

	if (J->mem->repro)
		J->mem->repro(J, mem, sizeof(mem));
	buf[0] = '\0';
	eg_repro_env(buf, len);
	snprintf(head, sizeof(head),
		 "epgate launch -n %u --ranks-per-node %u -- %s --engine",
		 J->world.size, J->world.ranks_per_node, o->prog);
	n = strlen(buf);
	snprintf(buf + n, len - n, "%s%s", n ? " " : "", head);
	eg_shell_append(buf, len, o->engine);
	n = strlen(buf);
	snprintf(buf + n, len - n, "%s --num-comms %u --iters %u --workload",
		 mem, o->xport.num_comms, o->job.iters);
	eg_shell_append(buf, len, J->file);
	eg_shell_append(buf, len, "--filter");
	eg_shell_append(buf, len, w->name);
	for (unsigned i = 0; i < o->overrides.n; i++) {
		char kv[512];

		snprintf(kv, sizeof(kv), "--%s=%s", o->overrides.key[i],
			 o->overrides.val[i]);
		eg_shell_append(buf, len, kv);
	}
}

/* Rank 0: the workload's line, with its shape as the ranks saw it and
 * its time (from its step's start to every verdict at rank 0); a
 * failure is also said on stderr. */
static void eg__line(eg_rank_job_t *J, const eg_workload_t *w,
		     const eg_rank_verdict_t *all, double seconds)
{
	json_t *extra = J->mem->extra ? J->mem->extra(J) : NULL;
	char repro[4800], shape[256];
	json_t *line;
	const char *st;

	if (!extra)
		extra = json_object();
	eg_workload_summary(w, shape, sizeof(shape));
	json_object_set_new(extra, "shape", json_string(shape));
	json_object_set_new(extra, "seconds", json_real(seconds));
	eg__repro(J, w, repro, sizeof(repro));
	line = eg_rank_results_line(w, all, J->world.size, repro, extra);
	st = json_string_value(json_object_get(line, "status"));
	if (st && !strcmp(st, "skip")) {
		if (!J->rf) /* by hand: why, as check's SKIP says it */
			fprintf(stderr, "%s: %s: skipped: %s\n", J->o->prog,
				w->name, all[0].engine_msg);
	} else if (st && strcmp(st, "pass")) {
		J->nfailed++;
		/* by hand there is no orchestrator to say it: say it here */
		if (!J->rf)
			eg_case_say(stderr, w->name,
				    json_object_get(line, "diag"), 0);
	} else {
		J->npassed++;
	}
	eg_put_json_line(J->rf, line);
}

/* One workload on this rank, then every rank's verdict at every rank. */
static int eg__workload(eg_rank_job_t *J, const eg_workload_t *w,
			eg_rank_verdict_t *all)
{
	eg_step_opts_t so = {
	    .size = sizeof(so),
	    .w = w,
	    .engine = J->ops,
	    .ctx = eg_step_rank_ctx(&J->world, J->xops, J->xstate, J->boot, 0),
	    .space = eg_space_find(J->mem->engines->space),
	    .stream = J->stream,
	    .say = J->o->prog,
	    /* refused up front over this rank's budgets */
	    .budget = 1};
	eg_rank_verdict_t mine;
	eg_step_t *st = NULL;
	double t0 = eg_now();
	int rc;

	eg_rank_verdict_init(&mine);
	mine.iter = w->iter;
	eg_where_workload(w->name, w->steps);
	if (eg_step_open(&st, &so, &mine) == EG_OK) {
		eg_step_verify_iters(st, J->o->job.iters, &mine);
		eg_step_close(st);
	}
	eg_where_at(mine.step, mine.iter, "verdict exchange");
	rc = eg_boot_allgather(J->boot, &mine, sizeof(mine), all,
			       J->world.timeout_s);
	eg_where_workload(NULL, 0);
	if (rc < 0) {
		fprintf(stderr, "%s: rank %u: %s: %s\n", J->o->prog,
			J->world.rank, w->name, eg_boot_error(J->boot));
		J->lost = w->name;
		/* this rank's engine failed (or was wrong) before the
		 * exchange: the engine's failure, which ended the job (a
		 * plugin that gave up, a peer it lost), not epgate's */
		if (!mine.harness_err &&
		    (mine.engine_err || eg_verdict_total_wrong(&mine.v))) {
			fprintf(stderr,
				"%s: rank %u: %s: its engine failed in %s "
				"(%s): the job cannot go on\n",
				J->o->prog, J->world.rank, w->name, mine.stage,
				mine.engine_err ? eg_strerror(mine.engine_err)
						: "wrong results");
			return EG_EXIT_FAIL;
		}
		return EG_EXIT_HARD;
	}
	J->ran++;
	if (eg_rank_declined(all, J->world.size))
		J->skipped++;
	else
		for (uint32_t r = 0; r < J->world.size; r++)
			J->failed |= eg_rank_verdict_failed(&all[r]);
	if (J->world.rank == 0)
		eg__line(J, w, all, eg_now() - t0);
	return 0;
}

/* Every workload of the job's size (and filter), in file order. */
static int eg__workloads(eg_rank_job_t *J)
{
	eg_rank_verdict_t *all = calloc(J->world.size, sizeof(*all));
	int rc = 0;

	if (!all)
		return EG_EXIT_HARD;
	for (size_t i = 0; i < J->wl.n && !rc; i++) {
		const eg_workload_t *w = &J->wl.items[i];

		if (w->world != J->world.size ||
		    (J->o->filter && !strstr(w->name, J->o->filter)))
			continue;
		rc = eg__workload(J, w, all);
		if (J->mem->broken && J->mem->broken(J))
			break; /* aborted communicators run nothing more */
	}
	free(all);
	if (rc)
		return rc;
	return J->failed ? EG_EXIT_FAIL
			 : (J->ran > J->skipped ? EG_EXIT_PASS : EG_EXIT_SKIP);
}

int eg_rank_run(const eg_rank_opts_t *o)
{
	eg_rank_job_t J = {.o = o};
	char dpath[4096];
	int rc = eg__prepare(&J, dpath, sizeof(dpath));

	if (rc)
		goto out;
	rc = eg_boot_open(&J.boot, &J.world, J.world.timeout_s);
	if (rc < 0) {
		fprintf(stderr, "%s: rank %u: bootstrap: %s\n", o->prog,
			J.world.rank,
			J.boot ? eg_boot_error(J.boot) : eg_strerror(rc));
		rc = EG_EXIT_HARD;
		goto out;
	}
	if ((rc = J.mem->open(&J)) != 0)
		goto out;
	/* after the transport, which resets dispositions (signals.h) */
	eg_where_arm(J.world.rank);
	if (J.world.rank == 0 && o->results &&
	    !(J.rf = fopen(o->results, "a"))) {
		fprintf(stderr, "%s: --results %s: cannot open\n", o->prog,
			o->results);
		rc = EG_EXIT_HARD;
		goto out;
	}
	rc = eg__workloads(&J);
	if (rc != EG_EXIT_HARD && !J.lost)
		rc = J.mem->finish(&J, rc);
	if (J.world.rank == 0 && rc != EG_EXIT_HARD)
		printf("%s: %s: %u passed, %u failed, %d skipped of %d "
		       "workload(s)%s%s%s%s\n",
		       o->prog, eg_exit_word(rc), J.npassed, J.nfailed,
		       J.skipped, J.ran,
		       J.lost ? ", then the job ended in " : "",
		       J.lost ? J.lost : "", o->results ? "; results " : "",
		       o->results ? o->results : "");
	fflush(stdout); /* before a peer's exit stops this rank */
out:
	/* leave together: nobody tears down endpoints a peer still reads */
	if (J.boot && J.xstate && rc != EG_EXIT_HARD && !J.lost &&
	    !(J.mem->broken && J.mem->broken(&J)))
		eg_boot_barrier(J.boot, J.world.timeout_s);
	if (J.mem)
		J.mem->close(&J);
	if (J.boot)
		eg_boot_close(J.boot);
	if (J.rf)
		fclose(J.rf);
	eg_workload_list_free(&J.wl);
	return rc;
}
