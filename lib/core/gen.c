/* Generation parameters and per-rank inputs (host side). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gen.h"
#include "epgate/mem.h"

/* p * 2^32 rounded; p = 1 gives 2^32, which no 32-bit draw reaches. */
static uint64_t eg__threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return (uint64_t)1 << 32;
	return (uint64_t)llround(p * 4294967296.0);
}

/* Zipf weights as integers, computed once here: the only libm use in the
 * recipe, so host and device read the same table. */
static int eg__zipf_table(eg_gen_t *g, uint32_t experts, double s)
{
	g->table = malloc((size_t)experts * sizeof(*g->table));
	if (!g->table)
		return EG_ENOMEM;
	for (uint32_t e = 0; e < experts; e++) {
		double v = 16777216.0 / pow((double)e + 1.0, s);
		long long r = v < 4294967295.0 ? llround(v) : 4294967295LL;
		g->table[e] = r < 1 ? 1u : (uint32_t)r;
	}
	return 0;
}

int eg_gen_init(eg_gen_t *g, const eg_workload_t *w)
{
	eg_gen_params_t *p = &g->p;

	memset(g, 0, sizeof(*g));
	if (!w->world || !w->experts || w->experts % w->world || !w->topk ||
	    w->topk > w->experts || !w->hidden)
		return EG_EINVAL;
	if (w->dtype == EG_DTYPE_FP8 && w->hidden % EG_FP8_BLOCK)
		return EG_EINVAL;

	p->key0 = (uint32_t)w->seed;
	p->key1 = (uint32_t)(w->seed >> 32);
	p->iter = w->iter;
	p->world = w->world;
	p->experts = w->experts;
	p->local_experts = w->experts / w->world;
	p->topk = w->topk;
	p->hidden = w->hidden;
	p->dtype = (uint32_t)w->dtype;
	p->data = (uint32_t)w->data;
	p->routing = (uint32_t)w->routing;
	p->hot_target = w->hot_target;
	if (w->routing == EG_ROUTING_HOT_EXPERT ||
	    w->routing == EG_ROUTING_HOT_RANK) {
		uint32_t lim =
		    w->routing == EG_ROUTING_HOT_EXPERT ? w->experts : w->world;
		if (w->hot_target >= lim)
			return EG_EINVAL;
		p->hot_threshold = eg__threshold(w->hot_frac);
	}
	p->mask_threshold = eg__threshold(w->mask_ratio);
	p->dup_threshold = eg__threshold(w->dup_ratio);
	if (w->nonfinite == EG_NONFINITE_INPUT)
		p->nf_threshold = eg__threshold(w->nonfinite_p);
	if (w->nonfinite == EG_NONFINITE_EXPERT) {
		if (w->nonfinite_expert >= w->experts)
			return EG_EINVAL;
		p->nf_expert = w->nonfinite_expert + 1u;
	}

	if (w->data == EG_DATA_EXACT) {
		uint32_t a = eg_exact_budget(w);

		if (a < 1)
			return EG_EINVAL;
		p->bias_bound = (int32_t)(a / 2);
		p->value_bound = (int32_t)a - p->bias_bound;
		/* k * 2^j stays exact in e4m3 only for k < 16 */
		if (w->dtype == EG_DTYPE_FP8 && p->value_bound > 15)
			p->value_bound = 15;
	}

	if (w->routing == EG_ROUTING_ZIPF) {
		int rc = eg__zipf_table(g, w->experts, w->zipf_s);

		if (rc)
			return rc;
		p->expert_weight = g->table;
	}
	return 0;
}

void eg_gen_fini(eg_gen_t *g)
{
	free(g->table);
	g->table = NULL;
	g->p.expert_weight = NULL;
}

void eg_rank_input_free(eg_rank_input_t *in)
{
	EG_FREE(in->x, in->scales, in->topk_idx, in->topk_w);
	in->x = NULL;
	in->scales = NULL;
	in->topk_idx = NULL;
	in->topk_w = NULL;
}

int eg_gen_rank_input(const eg_gen_t *g, const eg_workload_t *w, uint32_t rank,
		      eg_rank_input_t *in)
{
	size_t n, nk;

	memset(in, 0, sizeof(*in));
	if (rank >= g->p.world)
		return EG_EINVAL;
	in->rank = rank;
	in->tokens = eg_workload_tokens(w, rank);
	in->iter = g->p.iter;
	in->dtype = (eg_dtype_t)g->p.dtype;
	in->hidden = g->p.hidden;
	in->topk = g->p.topk;
	if (!in->tokens)
		return 0;

	n = (size_t)in->tokens * in->hidden;
	nk = (size_t)in->tokens * in->topk;
	in->x = malloc(n * eg_dtype_size(in->dtype));
	in->topk_idx = malloc(nk * sizeof(*in->topk_idx));
	in->topk_w = malloc(nk * sizeof(*in->topk_w));
	if (!in->x || !in->topk_idx || !in->topk_w)
		goto nomem;
	if (in->dtype == EG_DTYPE_FP8) {
		in->scales = malloc(n / EG_FP8_BLOCK * sizeof(*in->scales));
		if (!in->scales)
			goto nomem;
	}
	eg_gen_tokens_host(g, rank, in->tokens, in->x, in->scales);
	eg_gen_routing_host(g, rank, in->tokens, in->topk_idx, in->topk_w);
	return 0;
nomem:
	eg_rank_input_free(in);
	return EG_ENOMEM;
}
