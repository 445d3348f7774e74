/* Counter-based generation of every rank's input (Philox4x32-10 from
 * Random123). Any element is a pure function of (seed, rank, index), so
 * any process can regenerate any rank's input; the bit-level recipe is in
 * include/epgate/gen_core.h and shared by the host twin and the CUDA kernel. */
#ifndef EPGATE_GEN_H
#define EPGATE_GEN_H

#include <stdint.h>

#include "epgate/workload.h"
#include "epgate/gen_core.h"

typedef struct eg_gen {
	eg_gen_params_t p; /* p.expert_weight points into table */
	uint32_t *table;   /* per-expert integer weights (zipf), or NULL */
} eg_gen_t;

/* Derives the parameters (keys, thresholds, exact-mode bounds, zipf
 * table) from a validated workload. */
int eg_gen_init(eg_gen_t *g, const eg_workload_t *w);
void eg_gen_fini(eg_gen_t *g);

/* One rank's dispatch input. */
typedef struct eg_rank_input {
	uint32_t rank;
	uint32_t tokens;
	uint32_t iter; /* the iteration its values were generated for */
	eg_dtype_t dtype;
	uint32_t hidden, topk;
	void *x;	   /* tokens * hidden elements of dtype */
	float *scales;	   /* fp8: tokens * hidden/128, else NULL */
	int32_t *topk_idx; /* tokens * topk global expert ids, -1 masked */
	float *topk_w;	   /* tokens * topk, 0 where masked */
	/* the workload of the step these inputs belong to (a multi-step
	 * case, eg_step_select), or NULL: the one the engine was made for.
	 * Only a harness that regenerates every rank's routing (the plugin
	 * adapter) reads it. */
	const struct eg_workload *step;
} eg_rank_input_t;

/* Allocates and fills rank's input (host twin). */
int eg_gen_rank_input(const eg_gen_t *g, const eg_workload_t *w, uint32_t rank,
		      eg_rank_input_t *in);
void eg_rank_input_free(eg_rank_input_t *in);

/* Host twins, writing into caller buffers. x holds tokens*hidden
 * elements of the payload dtype; scales tokens*hidden/128 for fp8. */
void eg_gen_tokens_host(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			void *x, float *scales);
void eg_gen_routing_host(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			 int32_t *topk_idx, float *topk_w);

/* CUDA kernels (kernels/gen.cu), same bits as the host twins; buffers are
 * device memory; stream is a cudaStream_t or NULL. Return EG_ENOSYS when
 * built without CUDA. */
int eg_gen_tokens_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
		       void *d_x, float *d_scales, void *stream);
int eg_gen_routing_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			int32_t *d_topk_idx, float *d_topk_w, void *stream);
/* 1 if a CUDA device can be used, 0 otherwise (no error). */
int eg_cuda_available(void);

#endif
