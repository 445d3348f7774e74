/* Layout: who sends what where. Per source rank: tokens per destination
 * rank, tokens per expert, is_token_in_rank; per destination rank: where
 * each source's rows start in the canonical receive layout. Computed from
 * routing alone. */
#ifndef EPGATE_LAYOUT_H
#define EPGATE_LAYOUT_H

#include <stdint.h>

#include "epgate/gen.h"
#include "epgate/workload.h"

/* One source rank, from its top-k ids (tokens * topk, -1 masked):
 * rank_count[d] = tokens with >= 1 expert on d (each token once per d),
 * expert_count[e] = tokens with a slot on e, in_rank[t * W + d] = 0/1.
 * in_rank may be NULL. */
void eg_layout_source(const eg_workload_t *w, const int32_t *topk_idx,
		      uint32_t tokens, uint32_t *rank_count,
		      uint32_t *expert_count, uint8_t *in_rank);

/* Whole-world layout, regenerating every rank's routing. */
typedef struct eg_layout {
	uint32_t world, experts;
	uint32_t *tokens;	/* W */
	uint32_t *rank_count;	/* W*W, [s*W + d] */
	uint32_t *expert_count; /* W*E, [s*E + e] */
	uint32_t *recv_prefix;	/* W*(W+1), [d*(W+1) + s] */
	uint32_t *recv_rows;	/* W: rows rank d receives */
} eg_layout_t;

int eg_layout_build(eg_layout_t *l, const eg_workload_t *w, const eg_gen_t *g);
void eg_layout_free(eg_layout_t *l);

#endif
