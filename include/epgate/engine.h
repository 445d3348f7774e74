/* Engines: EP implementations under test, behind a versioned ops table
 * (grow by appending; callers check size before using a slot). */
#ifndef EPGATE_ENGINE_H
#define EPGATE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/boot.h"
#include "epgate/ep.h"
#include "epgate/layout.h"
#include "epgate/transport.h"
#include "epgate/window.h"
#include "epgate/world.h"

/* What an engine is given: the ranks this process holds and, for
 * multi-process engines, the world and a ready transport. */
typedef struct eg_engine_ctx {
	size_t size;	     /* sizeof(eg_engine_ctx_t) */
	uint32_t first_rank; /* ranks [first_rank, first_rank + n_ranks) */
	uint32_t n_ranks;
	const eg_world_t *world;     /* NULL for in-process engines */
	const eg_xport_ops_t *xport; /* NULL for in-process engines */
	void *xport_state;
	/* appended: the job's bootstrap (multi-process runs; NULL
	 * in-process) and EG_ENGINE_CTX_* bits */
	eg_boot_t *boot;
	uint32_t flags;
	/* appended: the engine calls it where its library's own call
	 * begins (end 0) and has returned (1), on the calling thread, when
	 * it marks that span (a plugin's env.mark): the measurement's kernel
	 * time is then of the kernels queued in between. NULL: nobody asks */
	void (*lib_mark)(int end);
} eg_engine_ctx_t;

/* One timed phase of an engine's step. */
typedef struct eg_engine_phase {
	const char *name; /* [a-z_]+, e.g. "layout", "pack_exchange" */
	double ms;
} eg_engine_phase_t;

/* ctx flags. BENCH: a measurement: the first dispatch and combine are
 * the verified step, every later one is only timed, so an engine may skip
 * work that serves verification alone (a plugin's layout mapping). */
#define EG_ENGINE_CTX_BENCH 0x1u
/* PHASES: time the step's phases where the engine can, at a cost
 * (eg_engine_ops_t.phases; the nccl a2a engine's events) */
#define EG_ENGINE_CTX_PHASES 0x2u

typedef struct eg_engine_ops {
	size_t size; /* sizeof(eg_engine_ops_t) as built by the provider */
	const char *name;
	int (*create)(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
		      void **state);
	/* in[i], out[i] belong to rank first_rank + i. out[i] is allocated
	 * with eg_recv_max_rows capacity and poisoned. */
	int (*dispatch)(void *state, const eg_rank_input_t *in, eg_recv_t *out);
	/* y[i]: expert outputs of rank first_rank + i, in the row order of
	 * its dispatch output; out[i]: that rank's tokens, tokens * hidden
	 * combine elements. */
	int (*combine)(void *state, const eg_recv_t *recv, const void *const *y,
		       void *const *out);
	void (*destroy)(void *state);
	/* EG_ENGINE_* bits. */
	uint32_t flags;
	/* --- appended: read only when size covers them --- */
	/* What dispatch sends per source token (layout.h): the byte rule
	 * of the measurements; EG_ROWS_NONE: undeclared. */
	eg_rows_rule_t dispatch_rows;
	/* The last step's phases when the engine times them: up to max
	 * (name, ms) into p, returns how many (0: not timing). NULL: the
	 * engine has none. */
	int (*phases)(void *state, eg_engine_phase_t *p, size_t max);
	/* optional: the last failure of state as one line (a
	 * plugin's own message), or NULL */
	const char *(*error)(void *state);
	/* --- appended: read only where size covers it --- */
	/* Without EG_ENGINE_CANONICAL_ORDER: the error a combined element
	 * may have, as a factor of the reference's bound (verify.h); 0: 1
	 * (a plugin's caps.order_bound) */
	double combine_bound;
	/* --- appended: read only where size covers it --- */
	/* optional: the boundary the engine times its own calls at and its
	 * device window's counts since the last reset (include/epgate/
	 * window.h); reset: zero the counts after reading. NULL: the
	 * engine's calls return with their work done (the call boundary). */
	int (*timing)(void *state, eg_timing_sum_t *t, int reset);
} eg_engine_ops_t;

/* The engine's declared rows, or EG_ROWS_NONE (an older ops table). */
eg_rows_rule_t eg_engine_rows(const eg_engine_ops_t *e);
/* The rows rule of a built-in engine by name (eg_engine_find), or
 * EG_ROWS_NONE when there is no such engine. */
eg_rows_rule_t eg_engine_rows_by_name(const char *name);

/* The engine reduces combine in canonical order (destination rank
 * ascending, fp32), so random data must match the reference bit for bit;
 * without it random data is compared within error bounds. */
#define EG_ENGINE_CANONICAL_ORDER 0x1u
/* One rank per process over a transport (ctx->world, ctx->xport). */
#define EG_ENGINE_MULTI_PROCESS 0x2u
/* A multi-process engine that also runs in-process at world 1 (plugins,
 * each case in a forked child with a deadline). */
#define EG_ENGINE_WORLD1 0x4u
/* Combine sums in a fixed order of its own (not the canonical one):
 * random data within the error bound, and identical inputs give
 * identical output bytes call to call (a plugin's EG_PLUGIN_ORDER_FIXED). */
#define EG_ENGINE_FIXED_ORDER 0x8u
/* The engine's combine_bound, 1 where it states none. */
double eg_engine_combine_bound(const eg_engine_ops_t *e);
/* Largest top-k a multi-process engine carries per token. */
#define EG_TOPK_WIRE_MAX 1024

/* Engines by name: a built-in one ("self") or a plugin,
 * "plugin:PATH[,key=value...]" (lib/engines/plugin_load.c: loaded once
 * per process and kept until exit). NULL if unknown; for a plugin that
 * cannot be loaded the reason goes to stderr (once). */
const eg_engine_ops_t *eg_engine_find(const char *name);
/* After eg_engine_find gave NULL: "PROG: --engine: unknown engine
 * \"NAME\"" on stderr, unless NAME is a plugin, whose loader already
 * said why it could not be loaded (said once, not again). */
void eg_engine_say_unknown(const char *prog, const char *name);
/* The same, with the reason in err instead of on stderr. */
const eg_engine_ops_t *eg_engine_lookup(const char *name, char *err,
					size_t errlen);
/* A finder of engines by name (eg_engine_find, eg_engine_nccl_find). */
typedef const eg_engine_ops_t *(*eg_engine_find_fn)(const char *name);
/* Planted slowdowns (lib/engines/slow.c, docs/gates.md): "slow:N%:ENGINE"
 * makes every dispatch of ENGINE (as find names it) N% of its own time
 * longer, "slow:Nus:ENGINE" N microseconds longer; everything else is
 * ENGINE's.  NULL when the name does not parse or ENGINE is unknown. */
#define EG_SLOW_PREFIX "slow:"
const eg_engine_ops_t *eg_engine_slow_find(const char *name,
					   eg_engine_find_fn find);
/* The parts of a "slow:" name: a fraction or a fixed delay (seconds) and
 * the wrapped engine's name (points into name). EG_EINVAL if malformed. */
int eg_slow_parse(const char *name, double *frac, double *fixed_s,
		  const char **inner);
/* The engine's last error message (ops->error), or NULL. */
const char *eg_engine_error(const eg_engine_ops_t *ops, void *state);
/* Instances one after another in one process, as a framework re-creates
 * them (`epgate stress`'s instance cycling): while on, a world-1 plugin
 * instance run in a forked child (plugin_fork.c) is destroyed there and
 * the child stays, and the next instance of that plugin on the same
 * workload is created in it, so what a destroy leaves behind stays in
 * view. Off: a kept child ends. In-process engines need nothing. */
void eg_engine_keep_process(int on);
/* Names of the built-in engines, NULL-terminated. */
const char *const *eg_engine_names(void);

/* W ranks simulated inside one process. */
extern const eg_engine_ops_t eg_engine_self;
/* Sparse all-to-all and dense allgather/reduce-scatter, one rank per
 * process (lib/engines/a2a.c, dense.c). */
extern const eg_engine_ops_t eg_engine_a2a;
extern const eg_engine_ops_t eg_engine_dense;

/* Fault injection for the fault suites: EPGATE_FAULT="kill:R:WHERE[:N]"
 * or "stall:R:WHERE[:N]" makes rank R die (SIGKILL) or hang the N-th time
 * it reaches WHERE ("dispatch", "combine"). No effect when unset. */
void eg_fault_point(const char *where, uint32_t rank);

/* The self engine with one planted defect each ("fault:<kind>"): they
 * must fail `epgate check`; see docs/faults.md. */
#define EG_FAULT_ENGINES(X)                                                    \
	X(drop_row)                                                            \
	X(dup_row)                                                             \
	X(swap_src)                                                            \
	X(src_id)                                                              \
	X(weight_slot)                                                         \
	X(prefix)                                                              \
	X(bitflip)                                                             \
	X(nan)                                                                 \
	X(stale)                                                               \
	X(combine_ulp)
#define EG__FAULT_DECL(id) extern const eg_engine_ops_t eg_engine_fault_##id;
EG_FAULT_ENGINES(EG__FAULT_DECL)
#undef EG__FAULT_DECL
/* The a2a engine with a planted defect (one rank per process):
 * fault:order claims the canonical order, sums combine in another;
 * fault:route-cache keeps the first dispatch's send lists; fault:tail
 * sums a row's tail wrong (H >= 24, not a multiple of 16); fault:shift
 * maps an expert to its rank with a shift (lib/engines/fault_a2a.c). */
extern const eg_engine_ops_t eg_engine_fault_order;
extern const eg_engine_ops_t eg_engine_fault_route_cache;
extern const eg_engine_ops_t eg_engine_fault_tail;
extern const eg_engine_ops_t eg_engine_fault_shift;

#endif
