/* The EP data contract: what dispatch delivers to a destination rank (the
 * canonical receive layout), the test-defined expert stage, and the buffers
 * combine fills. See docs/semantics.md. */
#ifndef EPGATE_EP_H
#define EPGATE_EP_H

#include <stdint.h>

#include "epgate/gen.h"
#include "epgate/workload.h"

struct eg_verdict;

/* Dispatch output of destination rank d. Canonical order: rows grouped by
 * source rank ascending, then source token ascending; one row per token
 * that has at least one (non-masked) expert on d. */
typedef struct eg_recv {
	uint32_t rank;	   /* d */
	uint32_t capacity; /* rows allocated */
	uint32_t num_rows;
	eg_dtype_t dtype;
	uint32_t world, hidden, topk, local_experts;
	void *x;	    /* capacity * hidden elements of dtype */
	float *scales;	    /* fp8: capacity * hidden/128, else NULL */
	int32_t *src_rank;  /* capacity */
	int32_t *src_token; /* capacity: token index on the source rank */
	int32_t
	    *topk_idx; /* capacity * topk: local expert id, -1 if not on d */
	float *topk_w; /* capacity * topk: weight, 0 where idx == -1 */
	uint32_t *expert_count; /* local_experts: slots per local expert */
	uint32_t *rank_prefix;	/* world + 1: rows of source s are
				   [rank_prefix[s], rank_prefix[s+1]) */
	/* What an engine found wrong in its own last call, or NULL: after
	 * dispatch, before producing this layout (a plugin's native
	 * layout: counters, keys, copies; eg_verify_dispatch adds it to the
	 * verdict); after combine, in that combine (a plugin's guard bytes,
	 * inputs, unwritten output; the verified step adds it). Host memory
	 * (malloc), freed by eg_recv_free. */
	struct eg_verdict *findings;
} eg_recv_t;

/* Allocates for capacity rows; fills every array with a poison pattern
 * (0xA5 bytes) so unwritten rows never look valid. */
int eg_recv_alloc(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		  uint32_t capacity);
void eg_recv_free(eg_recv_t *r);
/* r zeroed, with the shape of rank's receive layout of w (capacity rows):
 * what every allocator (host, CUDA) fills in before the arrays. */
void eg_recv_shape(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		   uint32_t capacity);
/* Capacity that always suffices: total tokens over all ranks. */
uint32_t eg_recv_max_rows(const eg_workload_t *w);

/* Expert stage on rank r's received rows: for each row,
 * y = sum over k with topk_idx[k] >= 0, k ascending, of
 * topk_w[k] * (x + b_e) with e = r.rank * local_experts + topk_idx[k],
 * x dequantized (fp8: times its block scale), fp32 accumulation, cast to
 * the combine dtype. y holds num_rows * hidden combine elements. */
int eg_expert_stage(const eg_gen_t *g, const eg_recv_t *r, void *y);

/* Bytes of one rank's combine output: tokens * hidden combine elements. */
size_t eg_combine_bytes(const eg_workload_t *w, uint32_t rank);

#endif
