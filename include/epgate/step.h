/* One verified step: the single place where a rank (or the ranks an
 * in-process engine holds) runs an engine on one workload and checks it
 * against the dense reference. L1, the L2 rank program (host and GPU) and
 * the measurement backends all go through it (docs/semantics.md, "The
 * verified step").
 *
 * A step holds, for ranks [first_rank, first_rank + n_ranks) of a
 * workload, the engine instance, the generator, the inputs, the receive
 * buffers, the expert outputs and the combine outputs, all in one memory
 * space (include/epgate/space.h), allocated once and reused by every
 * iteration (so an engine that leaves a stale row behind is caught). */
#ifndef EPGATE_STEP_H
#define EPGATE_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/bench.h"
#include "epgate/engine.h"
#include "epgate/space.h"
#include "epgate/verify.h"

/* ---- the combine comparison policy ------------------------------------ */

#define EG_CHECK_BITS  0x1u /* bit for bit against the reference */
#define EG_CHECK_BOUND 0x2u /* within the fp64 bound (verify.h) */
/* dispatch, expert stage and combine run again on the same inputs: the
 * same combine bytes (an engine that promises a fixed order) */
#define EG_CHECK_REPEAT 0x4u

/* The comparisons a combine output gets: bits when the data is exact
 * (every order gives the same bits) or the engine's flags promise
 * EG_ENGINE_CANONICAL_ORDER; the fp64 bound whenever the data is random
 * (it holds for any order, and cross-checks the reference itself), scaled
 * by the engine's combine_bound where it is not canonical; and with
 * EG_ENGINE_FIXED_ORDER on random data, the repeat. */
unsigned eg_combine_checks(const eg_workload_t *w, uint32_t engine_flags);

/* ---- a verdict -------------------------------------------------------- */

/* What one process found on one workload: its first failure (stage and
 * iteration) and the counts of every comparison up to it. Plain data, so
 * a multi-process job allgathers it over the bootstrap. */
typedef struct eg_rank_verdict {
	int32_t harness_err; /* epgate itself failed (no memory, ...) */
	int32_t engine_err;  /* the engine returned an error */
	uint32_t iter;	     /* iteration of the failure (else the last) */
	uint32_t step;	     /* the step of a steps workload (0: the first) */
	char stage[24];	     /* "create", "dispatch", "combine", ... */
	eg_verdict_t v;
	/* the engine's own message with engine_err (a plugin's error
	 * string, eg_engine_error; after EG_ECRASH, the lines after the
	 * first are the process's last output), or "" */
	char engine_msg[1024];
} eg_rank_verdict_t;

void eg_rank_verdict_init(eg_rank_verdict_t *v);
/* 1 if v holds an error or a mismatch. */
int eg_rank_verdict_failed(const eg_rank_verdict_t *v);

/* ---- the step --------------------------------------------------------- */

typedef struct eg_step eg_step_t;

typedef struct eg_step_opts {
	size_t size; /* sizeof(eg_step_opts_t) */
	const eg_workload_t *w;
	const eg_engine_ops_t *engine;
	/* the ranks held and, for a multi-process engine, its world and
	 * ready transport (kept by the caller for the step's life) */
	eg_engine_ctx_t ctx;
	const eg_space_ops_t *space;
	void *stream; /* the space's stream (cuda), or NULL */
	/* When set, engine errors are said on stderr where they happen:
	 * "<say>: rank R: <workload>: <stage>: <error>: <transport's
	 * error>", the diagnosis if the job is then stopped. */
	const char *say;
	/* eg_step_run reads the transport's byte counter around dispatch
	 * (t->wire_dispatch); off where reading it costs (libfabric). */
	int count_wire;
	/* --- appended: read only when size covers them --- */
	/* set: the workload is refused up front (stage "budget", the reason
	 * on stderr) when verifying it would exceed this process's budgets
	 * (eg_workload_budget) */
	int budget;
	/* > 0: eg_step_verify_iters fails with EG_ETIMEDOUT (stage
	 * "deadline") when an iteration ends past this many seconds from
	 * its start, and says so; a workload large enough to take a while
	 * reports its progress on stderr */
	double deadline_s;
} eg_step_opts_t;

/* Allocates every buffer and creates the engine. On failure returns <0,
 * *st is NULL and v (initialized by the caller) says why: harness_err
 * (stage "setup") or engine_err (stage "create"). */
int eg_step_open(eg_step_t **st, const eg_step_opts_t *o, eg_rank_verdict_t *v);
void eg_step_close(eg_step_t *st);

/* Makes step s of the workload's sequence (eg_workload_step: new
 * routing, new token counts) the one run from now on; the engine
 * instance and the buffers stay. Step 0 is the workload itself. */
int eg_step_select(eg_step_t *st, uint32_t s);

/* Makes the workload with another seed (another routing and other
 * values, the same token counts) the one run from now on. */
int eg_step_reseed(eg_step_t *st, uint64_t seed);

/* Rank first+i's combine output of the last step and its bytes (host
 * memory only; EG_ENOSYS in another space). */
int eg_step_output(const eg_step_t *st, uint32_t i, const void **p,
		   size_t *bytes);

/* Generates iteration iter's inputs of the selected step (same routing,
 * new values per iteration) into the held input buffers. */
int eg_step_generate(eg_step_t *st, uint32_t iter);

/* One verified iteration: generate, dispatch, verify dispatch, expert
 * stage, combine, verify combine (eg_combine_checks). Findings go into
 * v, which keeps its first failure: once v has failed, the iteration runs
 * unchecked. An in-process engine whose dispatch is wrong does not run
 * combine. A multi-process engine whose ranks hold the job's bootstrap
 * (one rank per process) agrees over it after each dispatch: once any
 * rank's dispatch failed or was wrong, no rank combines and the
 * workload's iterations end on every rank (a combine on a wrong dispatch
 * may crash a library and lose the finding); without a bootstrap it
 * combines (unchecked), so the collective stays in step with its peers.
 * Returns EG_OK, EG_EMISMATCH (this iteration was wrong), or the engine's
 * or harness's error (v says which): the job must not go on. */
int eg_step_verify(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v);
/* eg_step_verify in two halves, for callers that interleave the steps of
 * two instances (`epgate stress --overlap`): generate, dispatch and its
 * check; then the expert stage, combine and its check. Same returns; a
 * combine without a dispatch before it is a harness error. */
int eg_step_verify_dispatch(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v);
int eg_step_verify_combine(eg_step_t *st, eg_rank_verdict_t *v);

/* For each step of the workload (w->steps, at least one), iters verified
 * iterations from the workload's iter on, all through the one engine
 * instance. In-process engines stop at the first failure; multi-process
 * engines run every step and iteration in lockstep with their peers
 * after a mismatch (keeping its verdict) and stop at an error, or where
 * the ranks agreed that a dispatch was wrong (eg_step_verify).
 * Returns EG_OK, EG_EMISMATCH or the error that stopped it. */
int eg_step_verify_iters(eg_step_t *st, unsigned iters, eg_rank_verdict_t *v);

/* A measurement at the replay boundary (docs/metrics.md, "Boundaries"):
 * after the first eg_step_verify, the engine's calls are replays of a
 * capture; this verifies the first of them, on the inputs of the
 * iterations after iter (collective, as eg_step_verify). Nothing to do
 * (EG_OK) at any other boundary. Same returns as eg_step_verify. */
int eg_step_verify_replays(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v);

/* One unverified step on the inputs in place (dispatch, expert stage,
 * combine), timed with the space's marks: monotonic clock on the host,
 * events on the stream for cuda. At the replay boundary, only after
 * eg_step_verify_replays (else EG_EINVAL). */
int eg_step_run(eg_step_t *st, eg_bench_times_t *t);

/* The engine's own message about its last failure, or NULL. */
const char *eg_step_engine_error(const eg_step_t *st);

/* The engine's phases of the last step (eg_engine_ops_t.phases): up to
 * max into p, returns how many; 0 when the engine times none. */
int eg_step_phases(eg_step_t *st, eg_engine_phase_t *p, size_t max);
/* A measurement's timing since the last reset (reset: zero the counts
 * after reading): the boundary of the gated times, the device window's
 * holds (an engine that times its own calls), the kernel table. */
int eg_step_timing(eg_step_t *st, eg_timing_sum_t *t, int reset);

/* ---- one rank of a multi-process engine ------------------------------- */

/* The multi-process engines of a memory space, one rank per process over
 * a transport: what the L2 rank program (lib/suite/rank_int.h) and the
 * engine measurement backends (lib/bench/backend_engine.h) run. */
typedef struct eg_step_engines {
	const char *space; /* the memory space (space.h) */
	/* an engine by name (NULL if unknown); names says which, for
	 * messages */
	const eg_engine_ops_t *(*find)(const char *engine);
	const char *names;
} eg_step_engines_t;

/* Host memory: the engines of eg_engine_find (a2a, dense, the planted
 * faults, plugins). */
extern const eg_step_engines_t eg_step_engines_host;
/* CUDA memory: the engines of eg_engine_nccl_find (the NCCL a2a and
 * dense, plugins). */
extern const eg_step_engines_t eg_step_engines_cuda;

/* e's engine called name when it is a multi-process one, else NULL. */
const eg_engine_ops_t *eg_step_engine(const eg_step_engines_t *e,
				      const char *name);

/* The context of this rank alone (world->rank) of a multi-process engine
 * over transport x (state xs), with EG_ENGINE_CTX_* flags. */
eg_engine_ctx_t eg_step_rank_ctx(const eg_world_t *world,
				 const eg_xport_ops_t *x, void *xs,
				 eg_boot_t *boot, uint32_t flags);

#endif
