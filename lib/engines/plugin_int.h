/* The plugin engine's insides, shared by lib/engines/plugin_*.c: a loaded
 * plugin (plugin_load.c), one instance run in this process (plugin_run.c,
 * its buffers in a memory space of epgate/space.h) or in a forked child
 * (plugin_fork.c), and the mapping of its native layout onto the
 * canonical one (plugin_map.c, plugin_keys.c). */
#ifndef EPGATE_PLUGIN_INT_H
#define EPGATE_PLUGIN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/engine.h"
#include "epgate/gen.h"
#include "epgate/nccl.h"
#include "epgate/plugin.h"
#include "epgate/space.h"
#include "epgate/verify.h"

#define EG_PLUG_OPTS_MAX 32
#define EG_PLUG_ERR_MAX	 1024
/* distinct plugin specs one process may load (each keeps its slot until
 * exit: a create() trampoline per slot, plugin_engine.c) */
#define EG_PLUG_SLOTS 32

/* One loaded plugin with one option set: what "plugin:PATH,k=v" names. */
typedef struct eg_plug {
	eg_engine_ops_t ops; /* name = spec */
	char *spec, *path;
	void *dl;
	const eg_plugin_t *p;
	size_t psize; /* p->size: slots past it are absent */
	eg_plugin_caps_t caps;
	uint32_t order; /* EG_PLUGIN_ORDER_*, never UNSTATED once loaded */
	uint32_t nopts;
	const char *key[EG_PLUG_OPTS_MAX], *val[EG_PLUG_OPTS_MAX];
	char *optbuf;
	char *file; /* a plugin named without a path: the file found */
	char create_err[EG_PLUG_ERR_MAX]; /* the last create failure */
} eg_plug_t;

/* "canonical", "fixed", "any" (and "unstated") */
const char *eg_plug_order_name(uint32_t order);

/* The table's slot is there (inside the size it was built with). */
#define EG_PLUG_HAS(pl, slot)                                                  \
	((pl)->psize >= offsetof(eg_plugin_t, slot) + sizeof((pl)->p->slot) && \
	 (pl)->p->slot)

/* A caller's memory, whatever space it is in (plugin_mem.c). p is CUDA
 * device (or managed) memory; 0 without CUDA. */
int eg_plug_on_device(const void *p);
/* n bytes between any two of host and device memory, complete on
 * return, after the whole device is idle (EG_ENOSYS without CUDA). */
int eg_plug_dev_copy(void *dst, const void *src, size_t n);

/* A host copy of one dispatch's native output and what epgate made of it:
 * per slot (row of the layout, G * stride of them) its key and its row in
 * the canonical layout. */
typedef struct eg_plug_native {
	uint32_t layout, G, S;
	uint32_t W, L, K, H, rank;
	eg_dtype_t dtype;
	int slots_any;	/* EG_PLUGIN_SLOTS_ANY_ORDER: a row's slots as a set */
	int64_t *count; /* G, clamped to [0, S] */
	uint8_t *x;	/* G * S * H payload */
	float *scales;	/* fp8 */
	int32_t *src_rank, *src_token; /* NULL when not given */
	int64_t *topk_idx;	       /* FLAT, RANK_MAJOR: G * S * K */
	float *topk_w;
	int64_t *expert_count;	    /* L or NULL */
	int32_t *key_src, *key_tok; /* per slot; -1: no valid key */
	int32_t *row;		    /* per slot: canonical row or -1 */
} eg_plug_native_t;

void eg_plug_native_free(eg_plug_native_t *n);
/* Source s's routing (tokens * topk global ids and weights), generated
 * once per instance: routing does not change with the iteration. */
typedef struct eg_plug_routes {
	uint32_t W, K;
	uint32_t *tokens, *base; /* W; base[s]: first key of source s */
	uint64_t total;
	int32_t *idx; /* total * K */
	float *wt;
} eg_plug_routes_t;

int eg_plug_routes_build(eg_plug_routes_t *r, const eg_workload_t *w,
			 const eg_gen_t *g);
void eg_plug_routes_free(eg_plug_routes_t *r);

/* Keys from the plugin's source info, checked (plugin_keys.c). */
void eg_plug_keys_given(eg_plug_native_t *n, const eg_plug_routes_t *rt,
			eg_verdict_t *f);
/* Keys by content against the reference of this iteration. */
int eg_plug_keys_content(eg_plug_native_t *n, const eg_workload_t *w,
			 const eg_gen_t *g, eg_verdict_t *f);
/* With slots_any: every keyed row's (local id, weight) pairs put back in
 * its token's slot order, a permutation of what the plugin returned
 * (plugin_slots.c); nothing otherwise. */
int eg_plug_slots_canon(eg_plug_native_t *n, const eg_plug_routes_t *rt);
/* The K (id, weight) pairs of a row sorted (ids ascending, -1 first; then
 * weight bits) into id/w: a row's slots as a set. */
void eg_plug_slots_sorted(const int32_t *idx, const float *w, uint32_t K,
			  int32_t *sid, uint32_t *sw);
/* The canonical layout from the keyed slots (plugin_map.c): one row per
 * distinct (source rank, source token), with the checks of copies and
 * duplicates recorded in f. */
int eg_plug_project(eg_plug_native_t *n, const eg_plug_routes_t *rt,
		    eg_recv_t *out, eg_verdict_t *f);
/* Expert outputs in the native layout: FLAT and RANK_MAJOR take the
 * canonical rows y (num_rows rows); EXPERT_MAJOR computes f_e(x) of each
 * copy. Slots without a row get zeros. */
int eg_plug_native_y(const eg_plug_native_t *n, const eg_gen_t *g,
		     const void *y, void *ynat);

/* Equal routes: the same tokens per rank, ids and weight bits. */
int eg_plug_routes_equal(const eg_plug_routes_t *a, const eg_plug_routes_t *b);

/* A buffer epgate hands a plugin (plugin_guard.c): a copy in the
 * plugin's space, EG_PLUG_GUARD guard bytes right after the n bytes of
 * the call. */
#define EG_PLUG_GUARD 256
typedef struct eg_plug_buf {
	void *p;       /* cap + EG_PLUG_GUARD bytes in the plugin's space */
	size_t cap, n; /* bytes allocated; bytes of this call */
} eg_plug_buf_t;
/* The buffers: inputs, epgate's expert outputs, the combine output. */
enum {
	EG_PLUG_B_X,
	EG_PLUG_B_SCALES,
	EG_PLUG_B_IDX,
	EG_PLUG_B_W,
	EG_PLUG_B_Y,
	EG_PLUG_B_OUT,
	EG_PLUG_B__N
};
#define EG_PLUG_B_INPUTS                                                       \
	(1u << EG_PLUG_B_X | 1u << EG_PLUG_B_SCALES | 1u << EG_PLUG_B_IDX |    \
	 1u << EG_PLUG_B_W)

/* One instance in this process (plugin_run.c: setup; plugin_step.c:
 * dispatch and combine). */
typedef struct eg_plug_run {
	const eg_plug_t *pl;
	const char *name;
	eg_workload_t w;
	eg_gen_t g; /* base iteration: expert biases, routing */
	eg_plug_routes_t rt;
	uint32_t me, W, L, K, H, T, G;
	eg_world_t world;
	eg_boot_t *boot, *own_boot;
	eg_plugin_boot_t pboot;
	eg_plugin_env_t env;
	const eg_space_ops_t *mem; /* the plugin's memory space */
	void *ms;
	eg_nccl_t *nccl;
	void *inst;
	size_t ib; /* input id width */
	eg_plugin_input_t pin;
	void *h_idx; /* ids converted to ib bytes */
	/* what the plugin is handed, and epgate's originals (host) they
	 * are checked against after each verified call (NULL: an output) */
	eg_plug_buf_t buf[EG_PLUG_B__N];
	const void *orig[EG_PLUG_B__N];
	uint8_t *scratch; /* a buffer read back */
	size_t scratch_cap;
	eg_verdict_t found; /* what the last check found */
	/* 1, 2, ...: a new one when the routing of any rank changes, which
	 * every rank sees in the step's workload: decided together */
	uint32_t epoch;
	eg_plugin_recv_t prc;
	eg_plug_native_t nat;
	uint8_t *ynat; /* expert outputs in the native layout, host */
	size_t ynat_cap;
	const void *ysel; /* what the last verified combine passed */
	int y_ours;	  /* ysel is buf[EG_PLUG_B_Y] (not the plugin's y) */
	int bench, mapped;
	/* bench with the phases switch: each unverified dispatch and
	 * combine timed by marks around the plugin's call (the wait for
	 * its stream outside); ph_have: bit 0 dispatch, bit 1 combine */
	int timing, ph_have;
	double ph_ms[2];
	/* the boundary of those marks (EPGATE_BOUNDARY; a CUDA plugin's
	 * default is the device window, a host plugin's the call) and the
	 * window's hold (docs/metrics.md, "Boundaries") */
	eg_boundary_t boundary;
	eg_window_t win;
	/* the plugin's own marks of its library's call (env.mark) in the
	 * timed call now running (in_call): bit 0 start, bit 1 end, bit 2
	 * out of order; the span outside them per stage (ms) */
	int in_call;
	unsigned pm;
	void (*lib_mark)(int end); /* the engine ctx's, or NULL */
	double outer_ms[2];
	int outer_have;
	/* the replay boundary (docs/metrics.md, "Boundaries"): after the
	 * first (verified, direct) call each stage is captured once, per
	 * stage (0 dispatch, 1 combine) its graph (cuda; NULL on the host,
	 * whose model calls again), the input it captured and the recv the
	 * capture returned, from which every replay's rows are read; the
	 * replays verified on new data */
	void *graph[2];
	int captured[2];
	eg_plugin_input_t pin_cap;
	eg_plugin_recv_t prc_cap;
	const void *ys_cap;
	uint32_t cap_epoch, replays_ok;
	/* a caller with device buffers (the GPU measurement backend):
	 * host copies of its input, the mapped layout and the expert
	 * outputs (plugin_devcall.c) */
	int dev_caller;
	eg_rank_input_t hin;
	eg_recv_t hrecv;
	void *hy;
	size_t hy_cap;
	int last_mapped; /* the last dispatch filled the caller's layout */
	uint64_t n_disp, n_comb;
	/* a collective of epgate's bootstrap failed inside the plugin's
	 * call: a peer was lost (or out of step), whatever it says */
	int boot_lost;
	char err[EG_PLUG_ERR_MAX];
} eg_plug_run_t;

/* A caller with device buffers (plugin_devcall.c), CUDA plugins only:
 * probe decides at the first dispatch; input gives the host copy of in
 * to stage (in itself for a host caller); recv the host layout to map
 * into, put it to the caller's out after mapping; y the host copy of
 * the expert outputs of rows canonical rows. */
int eg_plug_dev_probe(eg_plug_run_t *r, const eg_rank_input_t *in);
int eg_plug_dev_input(eg_plug_run_t *r, const eg_rank_input_t *in,
		      const eg_rank_input_t **use);
int eg_plug_dev_recv(eg_plug_run_t *r, eg_recv_t *out, eg_recv_t **host);
int eg_plug_dev_recv_put(eg_plug_run_t *r, eg_recv_t *out);
int eg_plug_dev_y(eg_plug_run_t *r, const void *y, const void **host);
void eg_plug_dev_free(eg_plug_run_t *r);

/* n bytes of src (host or the caller's memory; NULL: of poison) into
 * buffer id, the guard after them; r->orig[id] = src (plugin_guard.c). */
int eg_plug_buf_put(eg_plug_run_t *r, int id, const void *src, size_t n);
int eg_plug_buf_poison(eg_plug_run_t *r, int id, size_t n);
/* After a verified call of stage: the buffers of mask, their guards,
 * inputs against their originals, out against the poison; findings into
 * r->found (reset), each also said on stderr. */
int eg_plug_bufs_check(eg_plug_run_t *r, unsigned mask, const char *stage);
void eg_plug_bufs_free(eg_plug_run_t *r);

/* Records a message in r->err; returns rc. */
int eg_plug_run_err(eg_plug_run_t *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A plugin call that failed: its own message into r->err; EG_ENOSYS
 * for "not supported", EG_EPEER when epgate's bootstrap failed inside
 * the call (a peer lost: the message says so first), else EG_EPLUGIN. */
int eg_plug_run_fail(eg_plug_run_t *r, int prc, const char *stage);
int eg_plug_run_create(eg_plug_run_t **r, const eg_plug_t *pl,
		       const eg_workload_t *w, const eg_engine_ctx_t *ctx,
		       char *err, size_t errlen);
int eg_plug_run_dispatch(eg_plug_run_t *r, const eg_rank_input_t *in,
			 eg_recv_t *out);
int eg_plug_run_combine(eg_plug_run_t *r, const void *y, void *out);
/* What the last verified combine found wrong in the buffers it handed
 * the plugin (native_guard, native_input, native_unwritten). */
const eg_verdict_t *eg_plug_run_found(const eg_plug_run_t *r);
void eg_plug_run_destroy(eg_plug_run_t *r);
const char *eg_plug_run_error(const eg_plug_run_t *r);
/* The last step's phases when timing: plugin_dispatch, plugin_combine
 * (ms); 0 otherwise. */
int eg_plug_run_phases(const eg_plug_run_t *r, eg_engine_phase_t *p,
		       size_t max);
/* env.mark: the plugin's marks of its library's call (plugin.h). */
int eg_plug_run_mark(void *ctx, int end);
/* The boundary and the window's counts (eg_engine_ops_t.timing). */
int eg_plug_run_timing(eg_plug_run_t *r, eg_timing_sum_t *t, int reset);

/* The same instance in a forked child, every call with a deadline
 * (plugin_fork.c): for in-process suites, where a crash or hang must end
 * the case, not the run. */
typedef struct eg_plug_proxy eg_plug_proxy_t;
int eg_plug_proxy_create(eg_plug_proxy_t **p, const eg_plug_t *pl,
			 const eg_workload_t *w, uint32_t ctx_flags, char *err,
			 size_t errlen);
int eg_plug_proxy_dispatch(eg_plug_proxy_t *p, const eg_rank_input_t *in,
			   eg_recv_t *out);
/* found (may be NULL): what the child's combine found (as
 * eg_plug_run_found) */
int eg_plug_proxy_combine(eg_plug_proxy_t *p, const void *y, void *out,
			  eg_verdict_t *found);
void eg_plug_proxy_destroy(eg_plug_proxy_t *p);
const char *eg_plug_proxy_error(const eg_plug_proxy_t *p);

/* The engine ops of a loaded plugin (plugin_engine.c). */
void eg_plug_engine_init(eg_plug_t *pl, int slot);
/* Loads (once per spec) "plugin:PATH[,k=v...]" (plugin_load.c). */
const eg_engine_ops_t *eg_plug_find(const char *spec, char *err, size_t errlen);
/* 1 the first time a failed spec's reason is to be said. */
int eg_plug_say_once(const char *spec);
/* The plugin loaded in slot i, or NULL. */
eg_plug_t *eg_plug_slot(int i);
/* The last create failure of a plugin engine, or NULL (also for ops
 * that are not a plugin's). */
const char *eg_plug_create_error(const eg_engine_ops_t *ops);

/* EPGATE_TIMEOUT or the default deadline, seconds. */
double eg_plug_timeout(void);

#endif
