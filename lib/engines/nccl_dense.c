/* The "nccl-dense" engine: lib/engines/dense.c on device buffers over
 * NCCL, on communicator 0. Dispatch: an ncclAllGather of the token counts,
 * then of every rank's tokens and routing, each padded to the largest
 * count (ncclAllGather moves equal blocks), a layout of all gathered
 * sources for this rank, and the pack kernel selecting its rows straight
 * into the canonical layout. Combine: the expert outputs scattered to a
 * partial output of every token of every rank (zero where this rank had
 * nothing), summed back to the owners by ncclReduceScatter in NCCL's own
 * order. That order is not the canonical one, so the engine does not
 * claim EG_ENGINE_CANONICAL_ORDER: bit-exact in exact mode (every partial
 * sum is representable), bounded in random mode. Built with CUDA and
 * NCCL only (Makefile.am); nccl_none.c stands in without them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>

#include "nccl_eng.h"

#define WMAX EG_EP_WORLD_MAX

/* Four sections: x, scales, topk_idx, topk_w (gathered and staged). */
typedef struct eg__nd_buf {
	void *p[4];
	size_t cap[4];
} eg__nd_buf_t;

typedef struct eg__ndense {
	eg__nccl_eng_t e;
	uint32_t T[WMAX], stride;
	uint32_t *d_tok; /* 1 + W: mine, then everyone's */
	uint32_t *h_tok; /* pinned, 1 + W */
	uint32_t *d_cnt, *h_cnt;
	int32_t *d_pos;
	size_t pos_cap;
	eg__nd_buf_t stage, gath;
	void *partial, *rsout;
	size_t partial_cap, rsout_cap;
} eg__ndense_t;

static void eg__ndense_destroy(void *state)
{
	eg__ndense_t *a = state;

	if (!a)
		return;
	EG_CUDA_FREE(a->d_tok, a->d_cnt, a->d_pos, a->partial, a->rsout);
	eg_cuda_free_all(a->stage.p, 4);
	eg_cuda_free_all(a->gath.p, 4);
	cudaFreeHost(a->h_tok);
	cudaFreeHost(a->h_cnt);
	eg__nccl_eng_free(&a->e);
}

/* The token and count buffers (nonzero: one failed). */
static int eg__ndense_init(void *state)
{
	eg__ndense_t *a = state;
	int bad = 0;

	bad |= cudaMalloc((void **)&a->d_tok, (WMAX + 1) * 4) != cudaSuccess;
	bad |= cudaMalloc((void **)&a->d_cnt, WMAX * 4) != cudaSuccess;
	bad |=
	    cudaMallocHost((void **)&a->h_tok, (WMAX + 1) * 4) != cudaSuccess;
	bad |= cudaMallocHost((void **)&a->h_cnt, WMAX * 4) != cudaSuccess;
	return bad;
}

static int eg__ndense_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			     void **state)
{
	return eg__nccl_eng_create(sizeof(eg__ndense_t), w, ctx,
				   eg__ndense_init, eg__ndense_destroy, state);
}

/* One collective on communicator 0, closed and taken by NCCL. */
static int eg__coll(eg__ndense_t *a, ncclResult_t r, const char *step)
{
	int rc = eg__nccl_call(a->e.n, r, 0, step);
	int rc2 = eg_nccl_group_end(a->e.n, 0, step);

	return rc < 0 ? rc : rc2;
}

static int eg__tokens(eg__ndense_t *a, uint32_t T)
{
	eg_nccl_t *n = a->e.n;
	cudaStream_t s0 = n->stream[0];
	int rc;

	a->h_tok[0] = T;
	if ((rc = eg__nccl_cuda(n,
				cudaMemcpyAsync(a->d_tok, a->h_tok, 4,
						cudaMemcpyHostToDevice, s0),
				"dispatch counts")) < 0)
		return rc;
	ncclGroupStart();
	rc = eg__coll(a,
		      ncclAllGather(a->d_tok, a->d_tok + 1, 1, ncclUint32,
				    n->comm[0], s0),
		      "dispatch counts");
	eg_nccl_count(n, 0, 1, a->e.me, 0);
	if (rc < 0)
		return rc;
	if ((rc = eg__nccl_cuda(n,
				cudaMemcpyAsync(a->h_tok + 1, a->d_tok + 1,
						a->e.W * 4,
						cudaMemcpyDeviceToHost, s0),
				"dispatch counts")) < 0)
		return rc;
	return eg_nccl_sync(n, "dispatch counts");
}

/* Every rank's tokens gathered into a->gath, section by section: mine
 * padded to stride rows first (in place when they fill it). rb: bytes
 * per row of each of the four sections. */
static int eg__gather(eg__ndense_t *a, const eg_rank_input_t *in,
		      const size_t *rb)
{
	eg_nccl_t *n = a->e.n;
	cudaStream_t s0 = n->stream[0];
	uint32_t W = a->e.W, me = a->e.me;
	const void *mine[4] = {in->x, in->scales, in->topk_idx, in->topk_w};
	const void *srcp[4];
	int rc;

	for (int i = 0; i < 4; i++) {
		size_t need = rb[i] * a->stride;

		srcp[i] = mine[i];
		if (!rb[i])
			continue;
		rc = eg__nccl_grow(n, &a->gath.p[i], &a->gath.cap[i], need * W,
				   "dispatch");
		if (rc == EG_OK && in->tokens != a->stride) {
			rc = eg__nccl_grow(n, &a->stage.p[i], &a->stage.cap[i],
					   need, "dispatch");
			if (rc == EG_OK && in->tokens)
				rc = eg__nccl_cuda(
				    n,
				    cudaMemcpyAsync(a->stage.p[i], mine[i],
						    rb[i] * in->tokens,
						    cudaMemcpyDeviceToDevice,
						    s0),
				    "dispatch");
			srcp[i] = a->stage.p[i];
		}
		if (rc < 0)
			return rc;
	}
	ncclGroupStart();
	rc = EG_OK;
	for (int i = 0; i < 4 && rc == EG_OK; i++) {
		if (!rb[i])
			continue;
		rc = eg__nccl_call(n,
				   ncclAllGather(srcp[i], a->gath.p[i],
						 rb[i] * a->stride, ncclUint8,
						 n->comm[0], s0),
				   0, "dispatch gather");
		for (uint32_t p = 0; p < W; p++)
			eg_nccl_count(n, 0, 0, p, rb[i] * a->stride);
		eg_nccl_count(n, 0, 1, me, 0);
	}
	int rc2 = eg_nccl_group_end(n, 0, "dispatch gather");
	return rc < 0 ? rc : rc2;
}

/* Which gathered tokens are mine, packed in canonical order into out. */
static int eg__select(eg__ndense_t *a, eg_recv_t *out)
{
	eg_nccl_t *n = a->e.n;
	cudaStream_t s0 = n->stream[0];
	uint32_t W = a->e.W, me = a->e.me, total = 0;
	uint32_t prefix[WMAX + 1];
	eg_ep_rows_t views[WMAX];
	eg_ep_src_t src;
	int rc;

	rc = eg__nccl_grow(n, (void **)&a->d_pos, &a->pos_cap,
			   (size_t)W * a->stride * 4, "dispatch");
	if (rc < 0)
		return rc;
	src = (eg_ep_src_t){.x = a->gath.p[0],
			    .scales = a->gath.p[1],
			    .topk_idx = a->gath.p[2],
			    .topk_w = a->gath.p[3],
			    .nsrc = W,
			    .stride = a->stride};
	memcpy(src.tokens, a->T, W * sizeof(uint32_t));
	rc = eg_ep_layout_cuda(&a->e.w, &src, me, 1, a->d_pos, a->d_cnt, s0);
	if (rc < 0)
		return eg_nccl_fail(n, rc, "dispatch layout", "kernel launch");
	if ((rc = eg__nccl_cuda(n,
				cudaMemcpyAsync(a->h_cnt, a->d_cnt, W * 4,
						cudaMemcpyDeviceToHost, s0),
				"dispatch select")) < 0 ||
	    (rc = eg_nccl_sync(n, "dispatch select")) < 0)
		return rc;
	for (uint32_t s = 0; s < W; s++) {
		prefix[s] = total;
		total += a->h_cnt[s];
	}
	prefix[W] = total;
	if (total > out->capacity)
		return eg_nccl_fail(n, EG_ERANGE, "dispatch",
				    "more rows than the receive buffer holds");
	for (uint32_t s = 0; s < W; s++)
		eg_ep_rows_recv(out, prefix[s], &views[s]);
	rc = eg_ep_pack_cuda(&a->e.w, &src, me, 1, a->d_pos, views, s0);
	if (rc == EG_OK)
		rc = eg_ep_finish_cuda(out, prefix, s0);
	if (rc < 0)
		return eg_nccl_fail(n, rc, "dispatch select", "kernel launch");
	return eg_nccl_sync(n, "dispatch select");
}

static int eg__ndense_dispatch(void *state, const eg_rank_input_t *in,
			       eg_recv_t *out)
{
	eg__ndense_t *a = state;
	eg_nccl_t *n = a->e.n;
	uint32_t Tmax = 0;
	size_t sb[5], rb[4];
	int rc;

	if ((rc = eg__nccl_eng_usable(n, "dispatch")) < 0)
		return rc;
	if ((rc = eg__tokens(a, in->tokens)) < 0)
		return rc;
	for (uint32_t s = 0; s < a->e.W; s++) {
		a->T[s] = a->h_tok[1 + s];
		if (a->T[s] > Tmax)
			Tmax = a->T[s];
	}
	a->stride = Tmax ? Tmax : 1;
	eg_fault_point("dispatch", a->e.me);
	eg_ep_section_bytes(&a->e.w, sb);
	rb[0] = sb[0];
	rb[1] = sb[1];
	rb[2] = sb[3];
	rb[3] = sb[4];
	if ((rc = eg__gather(a, in, rb)) < 0)
		return rc;
	return eg__select(a, out);
}

static int eg__ndense_combine(void *state, const eg_recv_t *recv,
			      const void *const *y, void *const *out)
{
	eg__ndense_t *a = state;
	eg_nccl_t *n = a->e.n;
	const eg_workload_t *w = &a->e.w;
	cudaStream_t s0 = n->stream[0];
	eg_dtype_t ct = eg_combine_dtype(w->dtype);
	size_t rowb = (size_t)w->hidden * eg_dtype_size(ct);
	uint32_t W = a->e.W, me = a->e.me, T = a->T[me];
	void *dst;
	int rc;

	if ((rc = eg__nccl_eng_usable(n, "combine")) < 0)
		return rc;
	eg_fault_point("combine", me);
	rc = eg__nccl_grow(n, &a->partial, &a->partial_cap,
			   (size_t)W * a->stride * rowb, "combine");
	if (rc == EG_OK && T != a->stride)
		rc = eg__nccl_grow(n, &a->rsout, &a->rsout_cap,
				   a->stride * rowb, "combine");
	if (rc < 0)
		return rc;
	rc = eg_ep_scatter_cuda(w, recv, y[0], a->stride, a->partial, s0);
	if (rc < 0)
		return eg_nccl_fail(n, rc, "combine", "kernel launch");
	dst = T == a->stride ? out[0] : a->rsout;
	ncclGroupStart();
	rc = eg__coll(
	    a,
	    ncclReduceScatter(a->partial, dst, (size_t)a->stride * w->hidden,
			      ct == EG_DTYPE_BF16 ? ncclBfloat16 : ncclFloat32,
			      ncclSum, n->comm[0], s0),
	    "combine");
	for (uint32_t p = 0; p < W; p++)
		eg_nccl_count(n, 0, 0, p, a->stride * rowb);
	eg_nccl_count(n, 0, 1, me, 0);
	if (rc < 0)
		return rc;
	if (dst != out[0] && T &&
	    (rc = eg__nccl_cuda(n,
				cudaMemcpyAsync(out[0], dst, T * rowb,
						cudaMemcpyDeviceToDevice, s0),
				"combine")) < 0)
		return rc;
	return eg_nccl_sync(n, "combine");
}

const eg_engine_ops_t eg_engine_nccl_dense = {
    .size = sizeof(eg_engine_ops_t),
    .name = "nccl-dense",
    .create = eg__ndense_create,
    .dispatch = eg__ndense_dispatch,
    .combine = eg__ndense_combine,
    .destroy = eg__ndense_destroy,
    .flags = EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_ALL_RANKS,
};
