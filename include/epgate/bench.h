/* Measurement backends: what the performance suites time. A backend sets
 * up one rank of one engine arm on one workload over one transport
 * (host memory over libfabric, or GPU memory over NCCL), verifies a step
 * against the reference, then runs timed steps. The per-rank driver
 * (barriers, slowest rank per step, statistics, results files) is shared
 * and lives in lib/bench/. Ops table with a size field: grow by
 * appending. */
#ifndef EPGATE_BENCH_H
#define EPGATE_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/boot.h"
#include "epgate/window.h"
#include "epgate/workload.h"
#include "epgate/world.h"

typedef struct eg_bench_setup {
	size_t size;	       /* sizeof(eg_bench_setup_t) */
	const char *engine;    /* arm: "a2a", "dense" */
	const char *transport; /* "fabric" (host memory), "nccl" (GPU) */
	const char *provider;  /* fabric provider, or NULL for auto */
	uint32_t num_comms;    /* K endpoints / communicators */
	double timeout_s;      /* deadline per blocking step */
	int device;	       /* CUDA device ordinal (nccl), -1 = local rank */
	/* nccl: the path ("auto", "nvlink", "xnode") and the virtual nodes'
	 * mode ("hostid", "nop2p") a command was given; NULL: the
	 * environment's (EPGATE_NCCL_PATH, EPGATE_NCCL_XNODE: a profile's
	 * env block), else the defaults */
	const char *nccl_path, *nccl_xnode;
	/* 1: the engine times its phases (bench engine --phases; the nccl
	 * a2a engine's CUDA events, opt-in); 0: EPGATE_NCCL_PHASES's */
	int phases;
	/* 1: blocking NCCL communicators (bench engine --vs-alltoall, as
	 * nccl-tests' alltoall beside it); 0: the default;
	 * EPGATE_NCCL_BLOCKING overrides either (eg_nccl_opts_t) */
	int nccl_blocking;
} eg_bench_setup_t;

/* Times of one step on this rank, seconds. */
typedef struct eg_bench_times {
	double dispatch_s, expert_s, combine_s;
	/* bytes handed the transport for other ranks during dispatch
	 * (payload, metadata, counts), when the step counts them; else 0 */
	uint64_t wire_dispatch;
	/* The engine's own calls (docs/metrics.md, "Boundaries"), when the
	 * engine times them itself (call_timed: a plugin's calls by marks
	 * on its stream, the wait for the stream outside); else the marks
	 * around each call above are its boundary. Zero-filled by callers. */
	int call_timed;
	double call_dispatch_s, call_combine_s;
	/* appended: the boundary of the gated times (eg_boundary_t,
	 * include/epgate/window.h), and the kernel time of each call
	 * (CUPTI) when have_kernel */
	int boundary;
	int have_kernel;
	double kern_dispatch_s, kern_combine_s;
} eg_bench_times_t;

/* One phase of the engine's steps (eg_engine_ops_t.phases). */
#define EG_BENCH_PHASES_MAX 8
typedef struct eg_bench_phase {
	char name[24];
	double ms; /* summed over the timed steps */
} eg_bench_phase_t;

/* Counters over the timed steps on this rank (after warm-up). */
typedef struct eg_bench_counters {
	uint32_t num_comms;
	uint64_t ops_posted[16]; /* transport operations per endpoint */
	uint64_t bytes_so;	 /* payload bytes to other nodes */
	uint64_t bytes_su;	 /* payload bytes to other ranks, same node */
	char transport_evidence[128]; /* e.g. "fabric shm/tcp;ofi_rxm",
					 "nccl P2P/NVLink", "nccl NET/Socket" */
	char versions[128];	      /* "libfabric 1.17", "NCCL 2.28.3" */
	/* bytes this rank handed the transport for other ranks during
	 * dispatch (payload, metadata and counts); 0: not counted */
	uint64_t wire_dispatch;
	/* the engine's phases, when it times them */
	uint32_t n_phases;
	eg_bench_phase_t phase[EG_BENCH_PHASES_MAX];
	/* the GPU this rank ran on ("NVIDIA H200"), "" on the host */
	char gpu[96];
	/* appended: the boundary, the window's holds, the kernels */
	eg_timing_sum_t timing;
} eg_bench_counters_t;

typedef struct eg_bench_backend_ops {
	size_t size;
	const char *name; /* "fabric", "nccl" */
	/* Creates the transport and engine for this rank and generates its
	 * input. err gets one line on failure. */
	int (*setup)(const eg_world_t *world, eg_boot_t *boot,
		     const eg_bench_setup_t *s, const eg_workload_t *w,
		     void **state, char *err, size_t errlen);
	/* One step, checked against the reference: EG_OK, EG_EMISMATCH, or
	 * another error. */
	int (*verify)(void *state, char *err, size_t errlen);
	/* One step, timed (device events on GPU, monotonic clock on host). */
	int (*step)(void *state, eg_bench_times_t *t);
	/* Reset / read the counters. */
	void (*counters_reset)(void *state);
	int (*counters)(void *state, eg_bench_counters_t *c);
	void (*teardown)(void *state);
} eg_bench_backend_ops_t;

/* Built-in backends; "nccl" exists only when built with CUDA and NCCL. */
const eg_bench_backend_ops_t *eg_bench_backend_find(const char *transport);

#endif
