/* Layout from routing: counts per destination rank and per expert, and the
 * canonical receive prefix offsets. */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/layout.h"

void eg_layout_source(const eg_workload_t *w, const int32_t *topk_idx,
		      uint32_t tokens, uint32_t *rank_count,
		      uint32_t *expert_count, uint8_t *in_rank)
{
	uint32_t W = w->world, K = w->topk, L = eg_workload_local_experts(w);

	memset(rank_count, 0, W * sizeof(*rank_count));
	memset(expert_count, 0, w->experts * sizeof(*expert_count));
	for (uint32_t t = 0; t < tokens; t++) {
		uint8_t *mark = in_rank ? in_rank + (size_t)t * W : NULL;
		if (mark)
			memset(mark, 0, W);
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = topk_idx[(size_t)t * K + k];
			if (e < 0)
				continue;
			expert_count[e]++;
			/* count the token once per destination: only the
			 * first slot that lands on d counts */
			uint32_t d = (uint32_t)e / L, seen = 0;
			for (uint32_t j = 0; j < k; j++) {
				int32_t ej = topk_idx[(size_t)t * K + j];
				if (ej >= 0 && (uint32_t)ej / L == d)
					seen = 1;
			}
			if (!seen)
				rank_count[d]++;
			if (mark)
				mark[d] = 1;
		}
	}
}

int eg_layout_rows_to(const eg_workload_t *w, eg_rows_rule_t rule,
		      const int32_t *topk_idx, uint32_t tokens,
		      uint64_t *rows_to)
{
	uint32_t W = w->world, K = w->topk;
	uint32_t L = eg_workload_local_experts(w), *seen;

	for (uint32_t d = 0; d < W; d++)
		rows_to[d] = rule == EG_ROWS_ALL_RANKS ? tokens : 0;
	if (rule == EG_ROWS_ALL_RANKS)
		return EG_OK;
	if (rule != EG_ROWS_PER_RANK)
		return EG_ENOSYS;
	if (!L)
		return EG_EINVAL;
	/* seen[d] == t + 1: token t already counted for rank d (dedup) */
	seen = calloc(W, sizeof(*seen));
	if (!seen)
		return EG_ENOMEM;
	for (uint32_t t = 0; t < tokens; t++)
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = topk_idx[(size_t)t * K + k];
			uint32_t d;

			if (e < 0 || (uint32_t)e >= w->experts)
				continue; /* masked */
			d = (uint32_t)e / L;
			if (seen[d] != t + 1) {
				seen[d] = t + 1;
				rows_to[d]++;
			}
		}
	free(seen);
	return EG_OK;
}

void eg_layout_free(eg_layout_t *l)
{
	EG_FREE(l->tokens, l->rank_count, l->expert_count, l->recv_prefix,
		l->recv_rows);
	memset(l, 0, sizeof(*l));
}

int eg_layout_build(eg_layout_t *l, const eg_workload_t *w, const eg_gen_t *g)
{
	uint32_t W = w->world, E = w->experts;
	int32_t *idx = NULL;
	float *wt = NULL;
	int rc = EG_ENOMEM;

	memset(l, 0, sizeof(*l));
	l->world = W;
	l->experts = E;
	l->tokens = calloc(W, sizeof(uint32_t));
	l->rank_count = calloc((size_t)W * W, sizeof(uint32_t));
	l->expert_count = calloc((size_t)W * E, sizeof(uint32_t));
	l->recv_prefix = calloc((size_t)W * (W + 1), sizeof(uint32_t));
	l->recv_rows = calloc(W, sizeof(uint32_t));
	if (!l->tokens || !l->rank_count || !l->expert_count ||
	    !l->recv_prefix || !l->recv_rows)
		goto fail;
	for (uint32_t s = 0; s < W; s++) {
		uint32_t T = eg_workload_tokens(w, s);
		size_t n = (size_t)(T ? T : 1) * w->topk;
		l->tokens[s] = T;
		idx = malloc(n * sizeof(*idx));
		wt = malloc(n * sizeof(*wt));
		if (!idx || !wt)
			goto fail;
		eg_gen_routing_host(g, s, T, idx, wt);
		eg_layout_source(w, idx, T, l->rank_count + (size_t)s * W,
				 l->expert_count + (size_t)s * E, NULL);
		free(idx);
		free(wt);
		idx = NULL;
		wt = NULL;
	}
	for (uint32_t d = 0; d < W; d++) {
		uint32_t *pre = l->recv_prefix + (size_t)d * (W + 1);
		pre[0] = 0;
		for (uint32_t s = 0; s < W; s++)
			pre[s + 1] = pre[s] + l->rank_count[(size_t)s * W + d];
		l->recv_rows[d] = pre[W];
	}
	return EG_OK;
fail:
	free(idx);
	free(wt);
	eg_layout_free(l);
	return rc;
}
