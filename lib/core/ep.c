/* Receive buffers and the test-defined expert stage. */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/ep.h"
#include "epgate/mem.h"

#define EG__POISON 0xA5

uint32_t eg_recv_max_rows(const eg_workload_t *w)
{
	return (uint32_t)eg_workload_total_tokens(w);
}

static void *eg__poisoned(size_t n)
{
	/* at least one byte, so a zero-row buffer is still a valid pointer */
	void *p = malloc(n ? n : 1);
	if (p)
		memset(p, EG__POISON, n ? n : 1);
	return p;
}

void eg_recv_shape(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		   uint32_t capacity)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->capacity = capacity;
	r->dtype = w->dtype;
	r->world = w->world;
	r->hidden = w->hidden;
	r->topk = w->topk;
	r->local_experts = eg_workload_local_experts(w);
}

int eg_recv_alloc(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		  uint32_t capacity)
{
	size_t rows = capacity, H = w->hidden, K = w->topk;
	uint32_t L = eg_workload_local_experts(w);

	eg_recv_shape(r, w, rank, capacity);
	r->x = eg__poisoned(rows * H * eg_dtype_size(w->dtype));
	if (w->dtype == EG_DTYPE_FP8)
		r->scales =
		    eg__poisoned(rows * (H / EG_FP8_BLOCK) * sizeof(float));
	r->src_rank = eg__poisoned(rows * sizeof(int32_t));
	r->src_token = eg__poisoned(rows * sizeof(int32_t));
	r->topk_idx = eg__poisoned(rows * K * sizeof(int32_t));
	r->topk_w = eg__poisoned(rows * K * sizeof(float));
	r->expert_count = eg__poisoned(L * sizeof(uint32_t));
	r->rank_prefix = eg__poisoned((w->world + 1u) * sizeof(uint32_t));
	if (!r->x || (w->dtype == EG_DTYPE_FP8 && !r->scales) || !r->src_rank ||
	    !r->src_token || !r->topk_idx || !r->topk_w || !r->expert_count ||
	    !r->rank_prefix) {
		eg_recv_free(r);
		return EG_ENOMEM;
	}
	return EG_OK;
}

void eg_recv_free(eg_recv_t *r)
{
	EG_FREE(r->x, r->scales, r->src_rank, r->src_token, r->topk_idx,
		r->topk_w, r->expert_count, r->rank_prefix, r->findings);
	memset(r, 0, sizeof(*r));
}

size_t eg_combine_bytes(const eg_workload_t *w, uint32_t rank)
{
	return (size_t)eg_workload_tokens(w, rank) * w->hidden *
	       eg_dtype_size(eg_combine_dtype(w->dtype));
}

int eg_expert_stage(const eg_gen_t *g, const eg_recv_t *r, void *y)
{
	eg_dtype_t out_t = eg_combine_dtype(r->dtype);
	size_t H = r->hidden, K = r->topk, nb = H / EG_FP8_BLOCK;

	if (r->num_rows > r->capacity)
		return EG_EINVAL;
	/* a row's experts and their biases, once a row rather than once an
	 * element: the same terms in the same order, a third of a host
	 * stress call's time before (2026-12-07, 128 x 7168, top-8) */
	float *bias = malloc((K ? K : 1) * sizeof(*bias));
	float *wsel = malloc((K ? K : 1) * sizeof(*wsel));
	int rc = EG_OK;

	if (!bias || !wsel) {
		rc = EG_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->num_rows; i++) {
		const int32_t *idx = r->topk_idx + i * K;
		const float *wt = r->topk_w + i * K;
		size_t n = 0;

		for (size_t k = 0; k < K; k++) {
			if (idx[k] < 0)
				continue;
			if ((uint32_t)idx[k] >= r->local_experts) {
				rc = EG_ERANGE;
				goto out;
			}
			wsel[n] = wt[k];
			bias[n++] =
			    eg_expert_bias(&g->p, r->rank * r->local_experts +
						      (uint32_t)idx[k]);
		}
		for (size_t h = 0; h < H; h++) {
			float x = eg_load_f32(r->dtype, r->x, i * H + h);
			float acc = 0.0f;
			if (r->dtype == EG_DTYPE_FP8)
				x = x * r->scales[i * nb + h / EG_FP8_BLOCK];
			for (size_t j = 0; j < n; j++)
				acc = acc + wsel[j] * (x + bias[j]);
			eg_store_f32(out_t, y, i * H + h, acc);
		}
	}
out:
	free(bias);
	free(wsel);
	return rc;
}
