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
 * expert_count[e] = slots naming e (a token naming it twice counts 2, as
 * DeepEP's num_tokens_per_expert), in_rank[t * W + d] = 0/1.
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

/* What an engine's dispatch sends per source token: the rows (and so the
 * bytes, docs/metrics.md) of its layout. Engines declare it in their ops
 * table (eg_engine_ops_t.dispatch_rows). */
typedef enum eg_rows_rule {
	EG_ROWS_NONE = 0,      /* not declared: no byte counts */
	EG_ROWS_PER_RANK = 1,  /* one row per (token, destination rank that
				  owns at least one of its unmasked experts):
				  the sparse all-to-all */
	EG_ROWS_ALL_RANKS = 2, /* every token to every rank: the allgather */
} eg_rows_rule_t;

/* Rows one source rank's tokens send to each rank d (rows_to[d], W
 * entries; d == source is its own share) by rule, from its top-k ids
 * (tokens * topk, -1 masked; unused for EG_ROWS_ALL_RANKS). EG_ENOSYS for
 * EG_ROWS_NONE. */
int eg_layout_rows_to(const eg_workload_t *w, eg_rows_rule_t rule,
		      const int32_t *topk_idx, uint32_t tokens,
		      uint64_t *rows_to);

#endif
