/* The per-rank measurement driver of the performance suites
 * (docs/metrics.md): one point = setup, one verified step (outside the
 * timed loop), warm-up, N timed steps each started after a bootstrap
 * barrier; the per-step times of every rank meet at rank 0, which takes
 * the slowest rank per step and turns them into the metrics of one
 * results point (include/epgate/results.h).  Backend-agnostic: it runs
 * any eg_bench_backend_ops_t. */
#ifndef EPGATE_BENCH_DRIVER_H
#define EPGATE_BENCH_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "epgate/bench.h"
#include "epgate/boot.h"
#include "epgate/evidence.h"
#include "epgate/layout.h"
#include "epgate/transport.h"
#include "epgate/profile.h"
#include "epgate/results.h"
#include "epgate/world.h"

/* ---- byte accounting (docs/metrics.md, "Bytes") ---------------------- */

/* Payload of one dispatched row: H elements of the payload dtype, plus
 * H/128 fp32 scales for fp8.  Metadata (source token, top-k ids and
 * weights, row counts) is not payload and is not counted. */
size_t eg_bench_dispatch_row_bytes(const eg_workload_t *w);
/* One combine row: H elements of the combine dtype. */
size_t eg_bench_combine_row_bytes(const eg_workload_t *w);

/* Dispatch rows that a source rank sends to each rank d (rows_to[d], W
 * entries; d == the source is the rank's own share) under an engine's
 * rows rule (include/epgate/layout.h, declared in its ops table), from
 * its routing (tokens x topk global ids, -1 masked):
 *  - EG_ROWS_PER_RANK (a2a): one row per (token, destination rank owning
 *    at least one of the token's unmasked experts);
 *  - EG_ROWS_ALL_RANKS (dense): every token to every rank.
 * EG_ENOSYS for EG_ROWS_NONE. */
int eg_bench_count_rows(const eg_workload_t *w, eg_rows_rule_t rows,
			uint32_t tokens, const int32_t *topk_idx,
			uint64_t *rows_to);

/* Payload bytes one rank sends in one step, split by destination: to
 * other (virtual) nodes (SO) and to other ranks of its node (SU). */
typedef struct eg_bench_bytes {
	uint64_t disp_so, disp_su; /* dispatch rows, payload dtype */
	uint64_t comb_so, comb_su; /* combine rows sent back, combine dtype */
} eg_bench_bytes_t;

/* Bytes of rank `rank` under a rows rule, from the generated routing of
 * every rank (the combine rows it sends are the rows the others
 * dispatched to it).  ranks_per_node decides what is another node.
 * EG_ENOSYS for EG_ROWS_NONE. */
int eg_bench_rank_bytes_rule(const eg_workload_t *w, eg_rows_rule_t rows,
			     uint32_t rank, uint32_t ranks_per_node,
			     eg_bench_bytes_t *b);
/* The same for an arm: the rows its built-in engine declares
 * (eg_engine_rows_by_name); EG_ENOSYS for an arm with none ("empty"). */
int eg_bench_rank_bytes(const eg_workload_t *w, const char *arm, uint32_t rank,
			uint32_t ranks_per_node, eg_bench_bytes_t *b);

/* NCCL EP's ep_bench byte definitions (docs/metrics.md, "Beside
 * ep_bench"), per rank and step, mean over the ranks, counting a rank's
 * own share too: sel = its valid (token, top-k slot) selections (the LL
 * count: no deduplication per destination); recv = the tokens it receives
 * (one per source token with at least one expert on it, its own tokens
 * included) plus its (token, other node) pairs (the HT count). Both times
 * one dispatch row (eg_bench_dispatch_row_bytes). */
int eg_bench_epb_bytes(const eg_workload_t *w, uint32_t ranks_per_node,
		       double *sel, double *recv);

/* ---- the transport's raw numbers behind the model line --------------- */

/* One raw phase of the fabric transport alone (collective; built with
 * libfabric): a fresh transport with K endpoints (messages chunked at
 * chunk bytes, 0 = its default), warmup untimed then iters timed
 * all-to-all-v calls of bytes to every other rank, each after a bootstrap
 * barrier. t (iters entries, caller's) gets the slowest rank's time per
 * call; s0/s1 this rank's counters before and after the timed calls.
 * Used by `epgate bench --raw` and the sweeps' model line. */
typedef struct eg_raw_phase {
	double *t;
	eg_xport_stats_t s0, s1;
} eg_raw_phase_t;
int eg_raw_phase(const eg_world_t *w, eg_boot_t *b, const char *provider,
		 uint32_t K, double timeout_s, unsigned warmup, unsigned iters,
		 size_t bytes, size_t chunk, eg_raw_phase_t *ph, char *err,
		 size_t errlen);

typedef enum eg_bench_model_src {
	EG_BENCH_MODEL_NONE = 0,     /* no model */
	EG_BENCH_MODEL_MEASURED = 1, /* a raw phase on this world */
	EG_BENCH_MODEL_PROFILE = 2,  /* given by the profile (model:) */
} eg_bench_model_src_t;

typedef struct eg_bench_model {
	eg_bench_model_src_t src;
	double bw_gbps;	  /* median bytes/s per rank to other ranks / 1e9 */
	double post_rate; /* median ops/s per endpoint */
	/* per timed call of the raw phase (measured only) */
	double *gbps, *rate, *so_gbps; /* so_gbps: NULL on one node */
	size_t n;
	char provider[80]; /* what ran (measured only) */
} eg_bench_model_t;

void eg_bench_model_fini(eg_bench_model_t *r);

/* The raw phase over the fabric transport (collective): a message-rate
 * phase (msgs messages of msg_size bytes per peer per call, each one
 * tagged send) and a bandwidth phase (size bytes per peer per call), each
 * call after a bootstrap barrier, its time the slowest rank's.  Rates:
 * post_rate = sends + receives posted on rank 0's busiest endpoint per
 * call / call time; bw = bytes to other ranks per rank / call time.
 * EG_ENOSYS without libfabric. */
int eg_bench_model_fabric(const eg_world_t *w, eg_boot_t *b,
			  const char *provider, uint32_t num_comms,
			  const eg_profile_t *pf, eg_bench_model_t *out,
			  char *err, size_t errlen);

/* ---- metrics from the gathered measurements -------------------------- */

/* What each rank reports after its timed steps (per step: counters over
 * the timed steps / iters). */
typedef struct eg_bench_rank_report {
	int32_t status; /* EG_OK or the rank's error */
	uint32_t num_comms;
	double ops_total;  /* ops posted per step, all endpoints */
	double ops_max_ep; /* ops per step on its busiest endpoint */
	double so_bytes;   /* backend: dispatch payload to other nodes */
	double su_bytes;   /* backend: ... to other ranks of its node */
	double sent_bytes; /* driver: dispatch + combine payload to others */
	double wire_bytes; /* backend: dispatch wire bytes to others (0: not
			      counted) */
	char evidence[128];
	char versions[128];
	/* the libraries as this rank loaded them, its host and GPU
	 * (lib/bench/evidence.c) */
	eg_loaded_t loaded;
	/* the engine's phases: name and mean per timed step (us) */
	uint32_t n_phases;
	char phase_name[EG_BENCH_PHASES_MAX][24];
	double phase_us[EG_BENCH_PHASES_MAX];
	/* the engine timed its own calls (eg_bench_times_t.call_timed) */
	int32_t call_timed;
	/* the boundary, the window's holds and the kernel table */
	eg_timing_sum_t timing;
} eg_bench_rank_report_t;

/* The evidence of a point beyond its transport (docs/results-v1.md,
 * "Evidence"), into o on rank 0: each loaded library's version, host
 * and GPU over the W ranks' reports (values that differ joined with
 * " | "), the library under test of a plugin arm (engine names it), and
 * the transport of the raw phase when one was measured. */
int eg_bench_evidence_more(json_t *o, const eg_bench_rank_report_t *rep,
			   uint32_t W, const char *engine,
			   const eg_bench_model_t *raw);

typedef struct eg_bench_calc_in {
	uint32_t world, nodes;
	unsigned n;	     /* timed steps */
	const double *times; /* rank r: dispatch[i] at r*3n + i, expert at
				r*3n + n + i, combine at r*3n + 2n + i (s) */
	const eg_bench_rank_report_t *rep; /* world entries */
	uint64_t tokens;		   /* over all ranks, per step */
	const eg_bench_model_t *raw;	   /* NULL or NONE: no model */
	/* appended: NCCL EP's ep_bench byte counts per rank and step,
	 * mean over ranks (eg_bench_epb_bytes); 0: not reported */
	double sel_bytes, recv_bytes;
	/* appended: the same times at the step boundary (the marks around
	 * epgate's engine call, the wait for the stream and epgate's
	 * bookkeeping inside), laid out as times; NULL: the same as times.
	 * times are the gated boundary, the engine's own calls
	 * (docs/metrics.md, "Boundaries"). */
	const double *wall_times;
	/* appended: each call's kernel time (CUPTI), rank r's dispatch[i]
	 * at r*2n + i, combine at r*2n + n + i (s); NULL: not recorded */
	const double *kern_times;
	/* the boundary of times (eg_boundary_t): its metrics are also
	 * named for it (call_dispatch_us, window_dispatch_us, ...) */
	int boundary;
} eg_bench_calc_in_t;

#define EG_BENCH_METRICS_MAX 48

typedef struct eg_bench_calc {
	eg_metric_t m[EG_BENCH_METRICS_MAX];
	size_t n;
	char bound[16]; /* "bandwidth", "issue", or "" without a model */
} eg_bench_calc_t;

/* The metrics of one point (docs/metrics.md): dispatch_us, combine_us,
 * step_us, tok_s, post_rate (samples per step); with wall_times,
 * wall_dispatch_us, wall_combine_us, wall_step_us and harness_us (the
 * step boundary, and what lies between the two boundaries per step); so_bytes,
 * su_bytes, ops_posted (per-step summaries); so_gbps, su_gbps (samples, only
 * when the bytes are not zero); wire_bytes and wire_gbps when the backend
 * counts the dispatch's wire bytes; sel_bytes, recv_bytes and their
 * sel_gbps, recv_gbps when given; phase_NAME_us for each phase the
 * engine times; with a model: model_bw_us, model_issue_us, model_frac,
 * raw_gbps, raw_post_rate (and transport_so_gbps measured across nodes),
 * and the bound label. */
int eg_bench_compute(const eg_bench_calc_in_t *in, eg_bench_calc_t *out);
void eg_bench_calc_fini(eg_bench_calc_t *c);

/* The boundary lines of a point's evidence (boundary, its detail, the
 * window's holds, the kernel table), one per key, on stdout. */
void eg_bench_print_boundary(const json_t *evidence);

/* ---- one point ------------------------------------------------------- */

typedef struct eg_bench_ctx {
	const eg_world_t *world;
	eg_boot_t *boot;
	const eg_bench_backend_ops_t *backend;
	const char *provider; /* fabric provider, NULL = auto */
	double timeout_s;
	int device; /* CUDA device for nccl, -1 = local rank */
	const char *nccl_path, *nccl_xnode; /* eg_bench_setup_t's */
	int phases, nccl_blocking;	    /* eg_bench_setup_t's */
} eg_bench_ctx_t;

/* Measures one point on every rank (collective; every rank passes the
 * same point and workload).  On rank 0, *out receives the results point
 * (id, suite, arm, axes, evidence, metrics with raw samples); free it with
 * eg_point_fini.  raw: numbers for the model line, or NULL.
 * Returns EG_OK; EG_EMISMATCH when the verified step was wrong on some
 * rank (every rank returns it; err names the ranks and nothing is
 * measured); another code on an error, with one line in err. */
int eg_bench_measure(const eg_bench_ctx_t *c, const eg_bench_point_t *pt,
		     const eg_workload_t *w, const eg_bench_model_t *raw,
		     eg_point_t *out, char *err, size_t errlen);

/* One arm of a point measured beside others (eg_bench_measure_arms). */
typedef struct eg_bench_arm {
	const eg_bench_point_t *pt; /* the point; its arm is the engine */
	eg_point_t *out;	    /* rank 0: its results point, or NULL */
	int rc;			    /* out: EG_OK or EG_EMISMATCH */
	char err[512];		    /* out: why, when rc is not EG_OK */
} eg_bench_arm_t;

#define EG_BENCH_ARMS_MAX 4

/* Measures k arms (at most EG_BENCH_ARMS_MAX) of one point together, on
 * every rank (collective): each arm's setup and verified step, then the
 * warm-up and the timed steps interleaved step by step -- step i runs the
 * arms in the order i, i+1, ... (mod k): A B, B A, ... for two -- so that
 * what the machine does during the launch lands on every arm alike, at
 * the scale of one step rather than of one arm's whole run.  The point's
 * iters and warmup are arms[0].pt's.  An arm whose verified step is
 * wrong is left out of the timing (its rc EG_EMISMATCH, err says why);
 * the others are measured.  Returns EG_OK, or an error that ends every
 * arm, with one line in err. */
int eg_bench_measure_arms(const eg_bench_ctx_t *c, eg_bench_arm_t *arms,
			  size_t k, const eg_workload_t *w,
			  const eg_bench_model_t *raw, char *err,
			  size_t errlen);

/* The "null" backend: transport "null", arms "empty" (a step that does
 * nothing) and "work:US" (a calibrated busy loop of about US
 * microseconds), for the harness's own overhead. */
extern const eg_bench_backend_ops_t eg_bench_backend_null;
/* The fabric backend: host memory over libfabric, engines a2a/dense
 * (HAVE_LIBFABRIC).  Its transport evidence is "fabric INTRA/INTER", the
 * providers of pairs within and across nodes ("-" where no such pair). */
extern const eg_bench_backend_ops_t eg_bench_backend_fabric;

/* Busy work for the null backend and the overhead benchmark: loops
 * iterations of a loop the compiler cannot remove; calibrate returns the
 * iterations that take about us microseconds on this core. */
void eg_bench_spin(uint64_t iterations);
uint64_t eg_bench_spin_calibrate(double us);

#endif
