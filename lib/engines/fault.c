/* Planted-fault engines ("fault:<kind>"): the self engine with one known
 * defect injected after each dispatch or combine. They prove, end to end
 * through `epgate check`, that every fault class is caught and reported. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/error.h"

#define EG__FAULTS(X)                                                          \
	X(drop_row, "drop-row")                                                \
	X(dup_row, "dup-row")                                                  \
	X(swap_src, "swap-src")                                                \
	X(src_id, "src-id")                                                    \
	X(weight_slot, "weight-slot")                                          \
	X(prefix, "prefix")                                                    \
	X(bitflip, "bitflip")                                                  \
	X(nan, "nan")                                                          \
	X(stale, "stale")                                                      \
	X(combine_ulp, "combine-ulp")

typedef enum {
#define EG__F_ENUM(id, s) EG__F_##id,
	EG__FAULTS(EG__F_ENUM)
#undef EG__F_ENUM
} eg__fault_t;

typedef struct eg__fault_state {
	void *inner;
	eg__fault_t kind;
	unsigned calls;
	size_t row_bytes;
	uint8_t *saved; /* stale: row 0 payload of the previous dispatch */
	uint32_t saved_rank;
} eg__fault_state_t;

static size_t eg__row_bytes(const eg_recv_t *r)
{
	return (size_t)r->hidden * eg_dtype_size(r->dtype);
}

/* Copies row j of r over row i (payload and metadata). */
static void eg__copy_row(eg_recv_t *r, uint32_t i, uint32_t j)
{
	size_t rb = eg__row_bytes(r), K = r->topk,
	       nb = r->hidden / EG_FP8_BLOCK;
	memmove((uint8_t *)r->x + i * rb, (uint8_t *)r->x + j * rb, rb);
	if (r->scales)
		memmove(r->scales + i * nb, r->scales + j * nb,
			nb * sizeof(float));
	r->src_rank[i] = r->src_rank[j];
	r->src_token[i] = r->src_token[j];
	memmove(r->topk_idx + i * K, r->topk_idx + j * K, K * sizeof(int32_t));
	memmove(r->topk_w + i * K, r->topk_w + j * K, K * sizeof(float));
}

static void eg__swap_rows(eg_recv_t *r, uint32_t i, uint32_t j, uint32_t tmp)
{
	eg__copy_row(r, tmp, i);
	eg__copy_row(r, i, j);
	eg__copy_row(r, j, tmp);
}

/* First rank with at least n rows, or NULL. */
static eg_recv_t *eg__victim(eg_recv_t *out, uint32_t W, uint32_t n)
{
	for (uint32_t d = 0; d < W; d++)
		if (out[d].num_rows >= n)
			return &out[d];
	return NULL;
}

static void eg__plant_dispatch(eg__fault_state_t *f, eg_recv_t *out, uint32_t W)
{
	eg_recv_t *r = eg__victim(out, W, 1);
	uint32_t K;

	if (!r)
		return;
	K = r->topk;
	switch (f->kind) {
	case EG__F_drop_row:
		for (uint32_t i = 0; i + 1 < r->num_rows; i++)
			eg__copy_row(r, i, i + 1);
		r->num_rows--;
		break;
	case EG__F_dup_row:
		if ((r = eg__victim(out, W, 2)))
			eg__copy_row(r, 0, 1);
		break;
	case EG__F_swap_src:
		for (uint32_t d = 0; d < W; d++) {
			eg_recv_t *q = &out[d];
			uint32_t a = q->rank_prefix[0], b = 0, s;
			for (s = 1; s < W; s++)
				if (q->rank_prefix[s + 1] > q->rank_prefix[s])
					break;
			if (q->num_rows < 2 || q->num_rows >= q->capacity ||
			    s >= W || q->rank_prefix[1] == 0)
				continue;
			b = q->rank_prefix[s];
			eg__swap_rows(q, a, b, q->num_rows);
			break;
		}
		break;
	case EG__F_src_id:
		r->src_token[0]++;
		break;
	case EG__F_weight_slot:
		for (uint32_t i = 0; i < r->num_rows; i++)
			for (uint32_t k = 0; k + 1 < K; k++) {
				float *wt = r->topk_w + (size_t)i * K;
				if (wt[k] != wt[k + 1]) {
					float t = wt[k];
					wt[k] = wt[k + 1];
					wt[k + 1] = t;
					return;
				}
			}
		break;
	case EG__F_prefix:
		r->rank_prefix[1]++;
		break;
	case EG__F_bitflip:
		((uint8_t *)r->x)[0] ^= 1u;
		break;
	case EG__F_nan:
		eg_store_f32(
		    r->dtype == EG_DTYPE_FP8 ? EG_DTYPE_FP32 : r->dtype,
		    r->dtype == EG_DTYPE_FP8 ? (void *)r->scales : r->x, 0,
		    NAN);
		break;
	case EG__F_stale:
		/* keep row 0 of the previous iteration, as an engine that
		 * skips rewriting a slot would */
		if (f->saved && f->saved_rank == r->rank)
			memcpy(r->x, f->saved, f->row_bytes);
		break;
	case EG__F_combine_ulp:
		break;
	}
}

static int eg__fault_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			    void **state, eg__fault_t kind)
{
	eg__fault_state_t *f = calloc(1, sizeof(*f));
	int rc;

	if (!f)
		return EG_ENOMEM;
	f->kind = kind;
	f->row_bytes = (size_t)w->hidden * eg_dtype_size(w->dtype);
	rc = eg_engine_self.create(w, ctx, &f->inner);
	if (rc < 0) {
		free(f);
		return rc;
	}
	*state = f;
	return EG_OK;
}

static int eg__fault_dispatch(void *state, const eg_rank_input_t *in,
			      eg_recv_t *out)
{
	eg__fault_state_t *f = state;
	uint32_t W = out[0].world;
	int rc = eg_engine_self.dispatch(f->inner, in, out);
	eg_recv_t *r;

	if (rc < 0)
		return rc;
	r = eg__victim(out, W, 1);
	uint8_t *fresh = NULL;
	if (f->kind == EG__F_stale && r) {
		fresh = malloc(f->row_bytes);
		if (!fresh)
			return EG_ENOMEM;
		memcpy(fresh, r->x, f->row_bytes);
	}
	if (f->calls++ > 0 || f->kind != EG__F_stale)
		eg__plant_dispatch(f, out, W);
	if (fresh) {
		free(f->saved);
		f->saved = fresh;
		f->saved_rank = r->rank;
	}
	return EG_OK;
}

static int eg__fault_combine(void *state, const eg_recv_t *recv,
			     const void *const *y, void *const *out)
{
	eg__fault_state_t *f = state;
	int rc = eg_engine_self.combine(f->inner, recv, y, out);
	if (rc < 0 || f->kind != EG__F_combine_ulp)
		return rc;
	/* one ulp on the first element of the first rank that has tokens
	 * (rank r's tokens are exactly those some destination sent back) */
	for (uint32_t s = 0; s < recv[0].world; s++)
		for (uint32_t d = 0; d < recv[0].world; d++)
			if (recv[d].rank_prefix[s + 1] >
			    recv[d].rank_prefix[s]) {
				((uint8_t *)out[s])[0] ^= 1u;
				return EG_OK;
			}
	return EG_OK;
}

static void eg__fault_destroy(void *state)
{
	eg__fault_state_t *f = state;
	if (!f)
		return;
	eg_engine_self.destroy(f->inner);
	free(f->saved);
	free(f);
}

#define EG__F_OPS(id, s)                                                       \
	static int eg__create_##id(const eg_workload_t *w,                     \
				   const eg_engine_ctx_t *ctx, void **state)   \
	{                                                                      \
		return eg__fault_create(w, ctx, state, EG__F_##id);            \
	}                                                                      \
	const eg_engine_ops_t eg_engine_fault_##id = {                         \
	    .size = sizeof(eg_engine_ops_t),                                   \
	    .name = "fault:" s,                                                \
	    .create = eg__create_##id,                                         \
	    .dispatch = eg__fault_dispatch,                                    \
	    .combine = eg__fault_combine,                                      \
	    .destroy = eg__fault_destroy,                                      \
	    .flags = EG_ENGINE_CANONICAL_ORDER,                                \
	    .dispatch_rows = EG_ROWS_PER_RANK,                                 \
	};
EG__FAULTS(EG__F_OPS)
#undef EG__F_OPS
