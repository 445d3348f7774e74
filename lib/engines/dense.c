/* The "dense" engine: the allgather / reduce-scatter alternative. Every
 * rank gathers every token with its routing, applies its local experts to
 * the tokens routed to them (its receive layout is the same canonical one
 * the sparse engine produces), and a reduce-scatter (destination order,
 * fp32) sums the partial outputs back to the tokens' owners. */
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "pack.h"
#include "xchg.h"

typedef struct eg__dense {
	eg_xeng_t e;
	uint32_t *tokens; /* W: tokens of each rank, exchanged */
} eg__dense_t;

static void eg__dense_destroy(void *state)
{
	eg__dense_t *a = state;
	if (!a)
		return;
	free(a->tokens);
	eg_xeng_fini(&a->e);
	free(a);
}

static int eg__dense_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			    void **state)
{
	int rc;
	eg__dense_t *a = eg_xeng_new(sizeof(*a), w, ctx, &rc);

	if (!a)
		return rc;
	a->tokens = calloc(w->world, sizeof(uint32_t));
	if (!a->tokens) {
		eg__dense_destroy(a);
		return EG_ENOMEM;
	}
	*state = a;
	return EG_OK;
}

/* A gathered token: [payload][scales][K int32 global ids][K float w]. */
static size_t eg__gather_row_bytes(const eg_workload_t *w)
{
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	return (size_t)w->hidden * eg_dtype_size(w->dtype) +
	       nb * sizeof(float) +
	       (size_t)w->topk * (sizeof(int32_t) + sizeof(float));
}

/* This rank's tokens as gathered rows (eg__gather_row_bytes). */
static void eg__gather_pack(const eg_workload_t *w, const eg_rank_input_t *in,
			    uint8_t *mine)
{
	uint32_t K = w->topk;
	size_t xb = (size_t)w->hidden * eg_dtype_size(w->dtype);
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	size_t gb = eg__gather_row_bytes(w);

	for (uint32_t t = 0; t < in->tokens; t++) {
		uint8_t *p = mine + (size_t)t * gb;
		memcpy(p, (const uint8_t *)in->x + (size_t)t * xb, xb);
		if (nb)
			memcpy(p + xb, in->scales + (size_t)t * nb,
			       nb * sizeof(float));
		memcpy(p + xb + nb * sizeof(float),
		       in->topk_idx + (size_t)t * K, K * sizeof(int32_t));
		memcpy(p + xb + nb * sizeof(float) + K * sizeof(int32_t),
		       in->topk_w + (size_t)t * K, K * sizeof(float));
	}
}

/* Keeps the gathered rows routed to my experts, in canonical order (by
 * source rank, then token), their routing narrowed to my experts; *rows
 * gets how many. */
static int eg__dense_keep(const eg__dense_t *a, eg_recv_t *out, uint32_t *rows)
{
	const eg_workload_t *w = &a->e.w;
	uint32_t W = a->e.x.W, K = w->topk, me = a->e.x.rank;
	int32_t L = (int32_t)(w->experts / W), lo = (int32_t)me * L;
	size_t xb = (size_t)w->hidden * eg_dtype_size(w->dtype);
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	size_t gb = eg__gather_row_bytes(w);
	uint32_t row = 0;

	memset(out->expert_count, 0, out->local_experts * sizeof(uint32_t));
	for (uint32_t s = 0; s < W; s++) {
		out->rank_prefix[s] = row;
		for (uint32_t t = 0; t < a->tokens[s]; t++) {
			const uint8_t *p = a->e.x.recv[s] + (size_t)t * gb;
			int32_t ids[EG_TOPK_WIRE_MAX];
			float wts[EG_TOPK_WIRE_MAX];
			int mine_tok = 0;
			if (K > EG_TOPK_WIRE_MAX)
				return EG_ERANGE;
			memcpy(ids, p + xb + nb * sizeof(float),
			       K * sizeof(int32_t));
			memcpy(wts,
			       p + xb + nb * sizeof(float) +
				   K * sizeof(int32_t),
			       K * sizeof(float));
			for (uint32_t k = 0; k < K; k++)
				mine_tok |= ids[k] >= lo && ids[k] < lo + L;
			if (!mine_tok)
				continue;
			if (row >= out->capacity)
				return EG_ERANGE;
			memcpy((uint8_t *)out->x + (size_t)row * xb, p, xb);
			if (nb)
				memcpy(out->scales + (size_t)row * nb, p + xb,
				       nb * sizeof(float));
			out->src_rank[row] = (int32_t)s;
			out->src_token[row] = (int32_t)t;
			for (uint32_t k = 0; k < K; k++) {
				int local = ids[k] >= lo && ids[k] < lo + L;
				int32_t id = local ? ids[k] - lo : -1;
				out->topk_idx[(size_t)row * K + k] = id;
				out->topk_w[(size_t)row * K + k] =
				    local ? wts[k] : 0.0f;
				if (local)
					out->expert_count[id]++;
			}
			row++;
		}
	}
	*rows = row;
	return EG_OK;
}

static int eg__dense_dispatch(void *state, const eg_rank_input_t *in,
			      eg_recv_t *out)
{
	eg__dense_t *a = state;
	const eg_workload_t *w = &a->e.w;
	uint32_t W = a->e.x.W, me = a->e.x.rank, row = 0;
	size_t gb = eg__gather_row_bytes(w);
	int rc;

	/* allgather the token counts, then the tokens and their routing */
	rc = eg_xchg_u32(&a->e.x, &in->tokens, 1, a->tokens);
	if (rc < 0)
		return rc;
	uint8_t *mine = malloc((size_t)in->tokens * gb + 1);
	if (!mine)
		return EG_ENOMEM;
	eg__gather_pack(w, in, mine);
	for (uint32_t p = 0; p < W; p++) {
		a->e.x.send[p] = mine; /* the same buffer to everyone */
		a->e.x.sbytes[p] = (size_t)in->tokens * gb;
		a->e.x.rbytes[p] = (size_t)a->tokens[p] * gb;
		a->e.x.recv[p] = malloc(a->e.x.rbytes[p] + 1);
		if (!a->e.x.recv[p])
			return EG_ENOMEM;
	}
	eg_fault_point("dispatch", me);
	rc = eg_xchg_run(&a->e.x);
	if (rc < 0)
		return rc;
	/* keep what my experts need, in canonical order */
	rc = eg__dense_keep(a, out, &row);
	if (rc < 0)
		return rc;
	return eg_xchg_dispatched(&a->e.x, out, row);
}

static int eg__dense_combine(void *state, const eg_recv_t *recv,
			     const void *const *y, void *const *out)
{
	eg__dense_t *a = state;
	const eg_workload_t *w = &a->e.w;
	eg_dtype_t ct = eg_combine_dtype(w->dtype);
	size_t H = w->hidden, esz = eg_dtype_size(ct), rowb = H * esz;
	uint32_t W = a->e.x.W, T = a->tokens[a->e.x.rank];
	float *acc;
	int rc;

	eg_fault_point("combine", a->e.x.rank);
	/* partial outputs for every token of every rank (zero where my
	 * experts had nothing), reduce-scattered back */
	eg_xchg_release(&a->e.x);
	for (uint32_t p = 0; p < W; p++)
		if (eg_xchg_alloc(&a->e.x, p, (size_t)a->tokens[p] * rowb,
				  (size_t)T * rowb) < 0)
			return EG_ENOMEM;
	for (uint32_t i = 0; i < recv->num_rows; i++) {
		uint32_t s = (uint32_t)recv->src_rank[i];
		uint32_t t = (uint32_t)recv->src_token[i];
		memcpy(a->e.x.send[s] + (size_t)t * rowb,
		       (const uint8_t *)y[0] + (size_t)i * rowb, rowb);
	}
	acc = eg_xchg_run_acc(&a->e.x, (size_t)T * H, &rc);
	if (!acc)
		return rc;
	for (uint32_t d = 0; d < W; d++) /* destination order */
		for (size_t i = 0; i < (size_t)T * H; i++)
			acc[i] += eg_load_f32(ct, a->e.x.recv[d], i);
	return eg_xchg_combined(&a->e.x, ct, acc, (size_t)T * H, out[0]);
}

const eg_engine_ops_t eg_engine_dense = {
    .size = sizeof(eg_engine_ops_t),
    .name = "dense",
    .create = eg__dense_create,
    .dispatch = eg__dense_dispatch,
    .combine = eg__dense_combine,
    .destroy = eg__dense_destroy,
    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_ALL_RANKS,
};
