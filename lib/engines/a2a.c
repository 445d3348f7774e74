/* The "a2a" engine: sparse dispatch (one copy of a token per destination
 * rank that owns one of its experts) and combine, one rank per process,
 * over a transport's all-to-all-v. Produces the canonical layout and
 * reduces in destination order, so results are bit-exact. */
#include <stdlib.h>
#include <string.h>

#include "a2a_int.h"
#include "epgate/engine.h"
#include "epgate/error.h"
#include "pack.h"
#include "xchg.h"

typedef struct eg__a2a {
	eg_xeng_t e;
	uint32_t *n_sent; /* W: rows sent to each destination */
	uint32_t **sent;  /* W lists of source tokens, in send order */
	uint32_t *n_recv; /* W: rows received from each source */
	uint32_t T;	  /* this rank's tokens in the last dispatch */
	int fault;	  /* EG_A2A_FAULT_* (docs/faults.md) */
	int routed;	  /* fault:route-cache: the send lists are built */
} eg__a2a_t;

static void eg__a2a_destroy(void *state)
{
	eg__a2a_t *a = state;
	if (!a)
		return;
	for (uint32_t p = 0; a->sent && p < a->e.x.W; p++)
		free(a->sent[p]);
	free(a->sent);
	free(a->n_sent);
	free(a->n_recv);
	eg_xeng_fini(&a->e);
	free(a);
}

static int eg__a2a_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			  void **state)
{
	uint32_t W = w->world;
	int rc;
	eg__a2a_t *a = eg_xeng_new(sizeof(*a), w, ctx, &rc);

	if (!a)
		return rc;
	a->n_sent = calloc(W, sizeof(uint32_t));
	a->n_recv = calloc(W, sizeof(uint32_t));
	a->sent = calloc(W, sizeof(uint32_t *));
	if (!a->n_sent || !a->n_recv || !a->sent) {
		eg__a2a_destroy(a);
		return EG_ENOMEM;
	}
	*state = a;
	return EG_OK;
}

int eg_a2a_create_fault(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			void **state, int fault)
{
	int rc = eg__a2a_create(w, ctx, state);

	if (rc == EG_OK)
		((eg__a2a_t *)*state)->fault = fault;
	return rc;
}

/* fault:order: the same engine, still claiming the canonical order, but
 * summing combine in destination-descending order with the partial sum
 * rounded to the combine dtype after each addition, as a reduction over
 * the wire in that dtype would. Exact data cannot tell; random data must
 * fail bit for bit while staying within the fp64 bound. */
static int eg__fault_order_create(const eg_workload_t *w,
				  const eg_engine_ctx_t *ctx, void **state)
{
	return eg_a2a_create_fault(w, ctx, state, EG_A2A_FAULT_ORDER);
}

/* 1 if token t goes to rank d. fault:shift maps an expert to its rank
 * with a shift by log2 of the experts per rank: right only when that is
 * a power of two. */
static int eg__goes_to(const eg__a2a_t *a, const eg_rank_input_t *in,
		       uint32_t t, uint32_t d)
{
	const eg_workload_t *w = &a->e.w;
	uint32_t L = w->experts / w->world, sh = 0;
	const int32_t *ti = in->topk_idx + (size_t)t * w->topk;

	if (a->fault != EG_A2A_FAULT_SHIFT)
		return eg__token_on(w, in, t, d);
	while ((2u << sh) <= L)
		sh++;
	for (uint32_t k = 0; k < w->topk; k++)
		if (ti[k] >= 0 && ((uint32_t)ti[k] >> sh) == d)
			return 1;
	return 0;
}

static float eg__round(eg_dtype_t t, float v)
{
	uint8_t b[sizeof(float)];

	eg_store_f32(t, b, 0, v);
	return eg_load_f32(t, b, 0);
}

/* fault:tail: a row summed 16 elements at a time, the tail of 8 or more
 * from one block too early once the row has a whole block and a half
 * (H >= 24, not a multiple of 16): an unrolled loop's remainder gone
 * wrong. Every other hidden size sums right. */
static void eg__tail_sum(eg_dtype_t ct, float *o, const uint8_t *y, size_t at,
			 size_t H)
{
	size_t main = H / 16 * 16, h = 0;

	for (; h < main; h += 16)
		for (size_t u = 0; u < 16; u++)
			o[h + u] += eg_load_f32(ct, y, at + h + u);
	for (; h < H; h++)
		o[h] += eg_load_f32(
		    ct, y, at + (H >= 24 && H - main >= 8 ? h - 8 : h));
}

static int eg__a2a_dispatch(void *state, const eg_rank_input_t *in,
			    eg_recv_t *out)
{
	eg__a2a_t *a = state;
	const eg_workload_t *w = &a->e.w;
	size_t rb = eg__wire_row_bytes(w);
	uint32_t W = a->e.x.W, total = 0;
	int rc;

	/* which tokens go where (fault:route-cache: decided once, on the
	 * first dispatch, as if a handle's routing never changed) */
	for (uint32_t d = 0;
	     d < W && !(a->fault == EG_A2A_FAULT_ROUTE_CACHE && a->routed);
	     d++) {
		free(a->sent[d]);
		a->sent[d] =
		    malloc(((size_t)in->tokens + 1) * sizeof(uint32_t));
		if (!a->sent[d])
			return EG_ENOMEM;
		a->n_sent[d] = 0;
		for (uint32_t t = 0; t < in->tokens; t++)
			if (eg__goes_to(a, in, t, d))
				a->sent[d][a->n_sent[d]++] = t;
	}
	a->routed = 1;
	a->T = in->tokens;
	for (uint32_t d = 0; d < W; d++) /* (a stale list's tokens may be
					    gone) */
		while (a->n_sent[d] &&
		       a->sent[d][a->n_sent[d] - 1] >= in->tokens)
			a->n_sent[d]--;
	/* counts first, so every receive size is exact */
	rc = eg_xchg_u32(&a->e.x, a->n_sent, 0, a->n_recv);
	if (rc < 0)
		return rc;
	for (uint32_t s = 0; s < W; s++)
		total += a->n_recv[s];
	eg_fault_point("dispatch", a->e.x.rank);
	if (total > out->capacity)
		return EG_ERANGE;
	for (uint32_t p = 0; p < W; p++) {
		if (eg_xchg_alloc(&a->e.x, p, (size_t)a->n_sent[p] * rb,
				  (size_t)a->n_recv[p] * rb) < 0)
			return EG_ENOMEM;
		for (uint32_t j = 0; j < a->n_sent[p]; j++)
			eg__wire_pack(w, in, a->sent[p][j], p,
				      a->e.x.send[p] + (size_t)j * rb);
	}
	rc = eg_xchg_run(&a->e.x);
	if (rc < 0)
		return rc;
	memset(out->expert_count, 0, out->local_experts * sizeof(uint32_t));
	uint32_t row = 0;
	for (uint32_t s = 0; s < W; s++) {
		out->rank_prefix[s] = row;
		for (uint32_t j = 0; j < a->n_recv[s]; j++)
			eg__wire_unpack(w, a->e.x.recv[s] + (size_t)j * rb, s,
					out, row++);
	}
	return eg_xchg_dispatched(&a->e.x, out, row);
}

static int eg__a2a_combine(void *state, const eg_recv_t *recv,
			   const void *const *y, void *const *out)
{
	eg__a2a_t *a = state;
	const eg_workload_t *w = &a->e.w;
	eg_dtype_t ct = eg_combine_dtype(w->dtype);
	size_t H = w->hidden, rowb = H * eg_dtype_size(ct);
	uint32_t W = a->e.x.W, T = a->T; /* the last dispatch's tokens */
	float *acc;
	int rc;

	eg_fault_point("combine", a->e.x.rank);
	/* expert outputs go back to their source; rows of source s are
	 * contiguous in the canonical layout */
	eg_xchg_release(&a->e.x);
	for (uint32_t p = 0; p < W; p++) {
		uint32_t n = recv->rank_prefix[p + 1] - recv->rank_prefix[p];

		if (eg_xchg_alloc(&a->e.x, p, (size_t)n * rowb,
				  (size_t)a->n_sent[p] * rowb) < 0)
			return EG_ENOMEM;
		memcpy(a->e.x.send[p],
		       (const uint8_t *)y[0] + recv->rank_prefix[p] * rowb,
		       a->e.x.sbytes[p]);
	}
	acc = eg_xchg_run_acc(&a->e.x, (size_t)T * H, &rc);
	if (!acc)
		return rc;
	for (uint32_t i = 0; i < W; i++) { /* destination order */
		uint32_t d = a->fault == EG_A2A_FAULT_ORDER ? W - 1 - i : i;

		for (uint32_t j = 0; j < a->n_sent[d]; j++) {
			float *o = acc + (size_t)a->sent[d][j] * H;
			const uint8_t *yd = a->e.x.recv[d];

			if (a->fault == EG_A2A_FAULT_TAIL) {
				eg__tail_sum(ct, o, yd, (size_t)j * H, H);
				continue;
			}
			for (size_t h = 0; h < H; h++) {
				o[h] += eg_load_f32(ct, yd, (size_t)j * H + h);
				if (a->fault == EG_A2A_FAULT_ORDER)
					o[h] = eg__round(ct, o[h]);
			}
		}
	}
	return eg_xchg_combined(&a->e.x, ct, acc, (size_t)T * H, out[0]);
}

const eg_engine_ops_t eg_engine_a2a = {
    .size = sizeof(eg_engine_ops_t),
    .name = "a2a",
    .create = eg__a2a_create,
    .dispatch = eg__a2a_dispatch,
    .combine = eg__a2a_combine,
    .destroy = eg__a2a_destroy,
    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_PER_RANK,
};

const eg_engine_ops_t eg_engine_fault_order = {
    .size = sizeof(eg_engine_ops_t),
    .name = "fault:order",
    .create = eg__fault_order_create,
    .dispatch = eg__a2a_dispatch,
    .combine = eg__a2a_combine,
    .destroy = eg__a2a_destroy,
    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,
};
