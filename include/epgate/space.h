/* Memory spaces: where a rank's EP buffers live and the operations that
 * touch them there. "host" is plain memory with the host twins and the
 * host verifiers; "cuda" (built with CUDA) is device memory with the
 * kernels of kernels/ and the device verifiers, on one stream. The
 * verified step (include/epgate/step.h) and the measurement backends run
 * the same code on either through this table. Ops table with a size
 * field: grow by appending. */
#ifndef EPGATE_SPACE_H
#define EPGATE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/ep.h"
#include "epgate/gen.h"
#include "epgate/verify.h"

/* Step timing marks: 0 before dispatch, 1 after it, 2 after the expert
 * stage, 3 after combine; a plugin's own marks around its library's call
 * (include/epgate/plugin.h, env.mark): 4 and 5. */
#define EG_SPACE_MARKS 6

typedef struct eg_space_ops {
	size_t size; /* sizeof(eg_space_ops_t) as built */
	const char *name;
	/* An instance working on stream (a cudaStream_t for "cuda", whose
	 * device is current; NULL on the host). */
	int (*open)(void **state, void *stream);
	void (*close)(void *state);
	/* bytes may be 0; *p is never NULL on success */
	int (*alloc)(void *state, void **p, size_t bytes);
	void (*free)(void *state, void *p);
	/* host -> space, complete on return */
	int (*upload)(void *state, void *dst, const void *src, size_t bytes);
	/* eg_recv_alloc / eg_recv_alloc_cuda: poisoned arrays in the space */
	int (*recv_alloc)(void *state, eg_recv_t *r, const eg_workload_t *w,
			  uint32_t rank, uint32_t capacity);
	void (*recv_free)(void *state, eg_recv_t *r);
	/* in->rank's tokens and routing into in's buffers (allocated in
	 * this space for in->tokens tokens) */
	int (*generate)(void *state, const eg_gen_t *g, eg_rank_input_t *in);
	/* the expert stage of r's rows into y (num_rows * hidden combine
	 * elements) */
	int (*expert)(void *state, const eg_gen_t *g, const eg_recv_t *r,
		      void *y);
	/* The verifiers of verify.h on buffers of this space: expected,
	 * ref64 and mag64 are host memory (the reference's), actual is in
	 * the space. Same returns: EG_OK, EG_EMISMATCH, or an error. */
	int (*verify_dispatch)(void *state, const eg_workload_t *w,
			       const eg_recv_t *expected,
			       const eg_recv_t *actual, eg_verdict_t *v);
	int (*verify_combine)(void *state, const eg_workload_t *w, uint32_t s,
			      eg_compare_t mode, const void *expected,
			      const double *ref64, const double *mag64,
			      const void *actual, eg_verdict_t *v);
	/* Timing: mark i (< EG_SPACE_MARKS) is taken now (host: monotonic
	 * clock) or when the stream reaches it (cuda: an event); elapsed
	 * waits for mark n-1 and gives s[i] = seconds from mark i to i+1,
	 * i < n-1. */
	int (*mark)(void *state, unsigned i);
	int (*elapsed)(void *state, unsigned n, double *s);
	/* --- appended: what the plugin engine stages a plugin's buffers
	 * with (lib/engines/plugin_run.c, plugin_step.c) --- */
	/* open on a device picked here: *device < 0 takes local_rank modulo
	 * the device count; *stream NULL gets a non-blocking stream of the
	 * instance's own (close destroys it). On success *device and
	 * *stream are what it runs on (host: -1 and NULL); on failure err
	 * says why where there is more to say than the code. */
	int (*open_on)(void **state, int *device, uint32_t local_rank,
		       void **stream, char *err, size_t errlen);
	/* alloc, zero-filled */
	int (*zalloc)(void *state, void **p, size_t bytes);
	/* bytes either way between host memory and the space, on the stream
	 * (cuda: between any two of host and device memory, as a GPU
	 * caller's buffers may be on the device), complete on return */
	int (*copy)(void *state, void *dst, const void *src, size_t bytes);
	/* waits for all the work on the stream */
	int (*sync)(void *state);
	/* once the stream has passed mark b: milliseconds from mark a to
	 * mark b */
	int (*span_ms)(void *state, unsigned a, unsigned b, double *ms);
	/* --- appended: the device window (docs/metrics.md, "Boundaries") */
	/* queues a hold of us microseconds on the stream, so that what is
	 * queued after it starts no earlier (cuda: one thread spinning on
	 * the GPU's global timer; host: a modelled stream, busy until now +
	 * us, which the marks after it wait for) */
	int (*hold)(void *state, double us);
	/* *done: the stream has passed mark i (cuda: its event completed) */
	int (*passed)(void *state, unsigned i, int *done);
	/* --- appended: graph replay (docs/metrics.md, "Boundaries") --- */
	/* end 0: the stream's work is captured from now on (cuda: in
	 * thread-local mode, so that a call that waits on the host or
	 * allocates fails the capture); end 1: the capture ends, *graph the
	 * executable graph of what was queued. Ends the capture whatever
	 * happened; a failure's CUDA error in err. NULL (host): no graphs,
	 * the plugin engine models a replay by calling again. */
	int (*capture)(void *state, int end, void **graph, char *err,
		       size_t errlen);
	/* queues graph on the stream */
	int (*replay)(void *state, void *graph);
	void (*graph_free)(void *state, void *graph);
} eg_space_ops_t;

/* Host memory: malloc, the host twins and verifiers. */
extern const eg_space_ops_t eg_space_host;
/* Device memory of the current device (lib/core/space_cuda.c); only
 * built with CUDA (HAVE_CUDA). */
extern const eg_space_ops_t eg_space_cuda;

/* "host", and "cuda" when built with CUDA; NULL otherwise. */
const eg_space_ops_t *eg_space_find(const char *name);

#endif
