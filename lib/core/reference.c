/* Dense reference, straight from the definition (docs/semantics.md):
 * loops over every (source rank, token, slot) and keeps what belongs to
 * the rank asked for. Deliberately naive; shares nothing with engines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/reference.h"

/* 1 if token's slots include an expert owned by d. */
static int eg__on_rank(const eg_workload_t *w, const int32_t *idx, uint32_t d)
{
	uint32_t L = eg_workload_local_experts(w);
	for (uint32_t k = 0; k < w->topk; k++)
		if (idx[k] >= 0 && (uint32_t)idx[k] / L == d)
			return 1;
	return 0;
}

static float eg__payload(const eg_rank_input_t *in, uint32_t t, uint32_t h)
{
	size_t i = (size_t)t * in->hidden + h;
	float x = eg_load_f32(in->dtype, in->x, i);
	if (in->dtype == EG_DTYPE_FP8)
		x = x * in->scales[(size_t)t * (in->hidden / EG_FP8_BLOCK) +
				   h / EG_FP8_BLOCK];
	return x;
}

int eg_ref_dispatch(const eg_workload_t *w, const eg_gen_t *g, uint32_t d,
		    eg_recv_t *out)
{
	uint32_t W = w->world, K = w->topk, H = w->hidden;
	uint32_t L = eg_workload_local_experts(w), rows = 0;
	size_t esz = eg_dtype_size(w->dtype), nb = H / EG_FP8_BLOCK;
	eg_rank_input_t *in = calloc(W, sizeof(*in));
	int rc = EG_ENOMEM;

	if (!in)
		return EG_ENOMEM;
	for (uint32_t s = 0; s < W; s++) {
		rc = eg_gen_rank_input(g, w, s, &in[s]);
		if (rc < 0)
			goto out;
		for (uint32_t t = 0; t < in[s].tokens; t++)
			rows += (uint32_t)eg__on_rank(
			    w, in[s].topk_idx + (size_t)t * K, d);
	}
	rc = eg_recv_alloc(out, w, d, rows);
	if (rc < 0)
		goto out;
	memset(out->expert_count, 0, L * sizeof(uint32_t));
	uint32_t r = 0;
	for (uint32_t s = 0; s < W; s++) {
		out->rank_prefix[s] = r;
		for (uint32_t t = 0; t < in[s].tokens; t++) {
			const int32_t *idx = in[s].topk_idx + (size_t)t * K;
			const float *wt = in[s].topk_w + (size_t)t * K;
			if (!eg__on_rank(w, idx, d))
				continue;
			memcpy((char *)out->x + (size_t)r * H * esz,
			       (const char *)in[s].x + (size_t)t * H * esz,
			       H * esz);
			if (w->dtype == EG_DTYPE_FP8)
				memcpy(out->scales + (size_t)r * nb,
				       in[s].scales + (size_t)t * nb,
				       nb * sizeof(float));
			out->src_rank[r] = (int32_t)s;
			out->src_token[r] = (int32_t)t;
			for (uint32_t k = 0; k < K; k++) {
				int local =
				    idx[k] >= 0 && (uint32_t)idx[k] / L == d;
				out->topk_idx[(size_t)r * K + k] =
				    local ? idx[k] - (int32_t)(d * L) : -1;
				out->topk_w[(size_t)r * K + k] =
				    local ? wt[k] : 0.0f;
				if (local)
					out->expert_count[idx[k] -
							  (int32_t)(d * L)]++;
			}
			r++;
		}
	}
	out->rank_prefix[W] = r;
	out->num_rows = r;
	rc = EG_OK;
out:
	for (uint32_t s = 0; s < W; s++)
		eg_rank_input_free(&in[s]);
	free(in);
	return rc;
}

int eg_ref_combine(const eg_workload_t *w, const eg_gen_t *g, uint32_t s,
		   void *out, double *out64, double *mag64)
{
	uint32_t W = w->world, K = w->topk, H = w->hidden;
	uint32_t L = eg_workload_local_experts(w);
	eg_dtype_t ct = eg_combine_dtype(w->dtype);
	eg_rank_input_t in;
	int rc = eg_gen_rank_input(g, w, s, &in);

	if (rc < 0)
		return rc;
	for (uint32_t t = 0; t < in.tokens; t++) {
		const int32_t *idx = in.topk_idx + (size_t)t * K;
		const float *wt = in.topk_w + (size_t)t * K;
		for (uint32_t h = 0; h < H; h++) {
			float x = eg__payload(&in, t, h), acc = 0.0f;
			double v64 = 0.0, m64 = 0.0;
			for (uint32_t d = 0; d < W; d++) {
				float y = 0.0f;
				int any = 0;
				for (uint32_t k = 0; k < K; k++) {
					if (idx[k] < 0 ||
					    (uint32_t)idx[k] / L != d)
						continue;
					float b = eg_expert_bias(
					    &g->p, (uint32_t)idx[k]);
					y = y + wt[k] * (x + b);
					double term = (double)wt[k] *
						      ((double)x + (double)b);
					v64 += term;
					m64 += fabs(term);
					any = 1;
				}
				if (!any)
					continue;
				/* the expert output travels in the combine
				 * dtype */
				float q[1];
				eg_store_f32(ct, q, 0, y);
				acc = acc + eg_load_f32(ct, q, 0);
			}
			size_t i = (size_t)t * H + h;
			eg_store_f32(ct, out, i, acc);
			if (out64)
				out64[i] = v64;
			if (mag64)
				mag64[i] = m64;
		}
	}
	eg_rank_input_free(&in);
	return EG_OK;
}
