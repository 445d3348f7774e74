/* The engine measurement backend: one rank of a multi-process engine on
 * one workload, as a verified step (include/epgate/step.h) in a memory
 * space over a transport. The "fabric" backend (host memory, libfabric)
 * and the "nccl" backend (GPU memory, NCCL) are this one backend with
 * their own transport and evidence. Internal to lib/bench/. */
#ifndef EG_BENCH_BACKEND_ENGINE_H
#define EG_BENCH_BACKEND_ENGINE_H

#include <stddef.h>

#include "epgate/bench.h"
#include "epgate/engine.h"
#include "epgate/step.h"
#include "epgate/transport.h"

typedef struct eg_engine_backend {
	size_t size;	  /* sizeof(eg_engine_backend_t) */
	const char *name; /* "fabric", "nccl": the start of messages */
	/* the memory space and its engines (step.h) */
	const eg_step_engines_t *engines;
	/* This rank's transport (and the space's stream, or NULL); err
	 * gets one line on failure. */
	int (*open)(const eg_world_t *world, eg_boot_t *boot,
		    const eg_bench_setup_t *s, const eg_xport_ops_t **x,
		    void **xs, void **stream, char *err, size_t errlen);
	/* transport_evidence and versions of c */
	void (*describe)(const eg_xport_ops_t *x, void *xs,
			 eg_bench_counters_t *c);
	/* count the transport's bytes around dispatch (wire_dispatch) */
	int count_wire;
} eg_engine_backend_t;

/* The slots of eg_bench_backend_ops_t; setup takes the kind. */
int eg_engine_backend_setup(const eg_engine_backend_t *kind,
			    const eg_world_t *world, eg_boot_t *boot,
			    const eg_bench_setup_t *s, const eg_workload_t *w,
			    void **state, char *err, size_t errlen);
int eg_engine_backend_verify(void *state, char *err, size_t errlen);
int eg_engine_backend_step(void *state, eg_bench_times_t *t);
void eg_engine_backend_reset(void *state);
int eg_engine_backend_counters(void *state, eg_bench_counters_t *c);
void eg_engine_backend_teardown(void *state);

#endif
