/* Host twins of the EP kernels of kernels/ep.cu, and the wire-section
 * helpers both sides use. Sequential loops over the same per-element
 * arithmetic (lib/core/ep_core.h), so the bits agree with the device. */
#include <string.h>

#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "lib/core/ep_core.h"

static size_t eg__al16(size_t n)
{
	return (n + 15u) & ~(size_t)15u;
}

void eg_ep_section_bytes(const eg_workload_t *w, size_t b[5])
{
	b[0] = (size_t)w->hidden * eg_dtype_size(w->dtype);
	b[1] = w->dtype == EG_DTYPE_FP8
		   ? (size_t)(w->hidden / EG_FP8_BLOCK) * sizeof(float)
		   : 0;
	b[2] = sizeof(int32_t);
	b[3] = (size_t)w->topk * sizeof(int32_t);
	b[4] = (size_t)w->topk * sizeof(float);
}

size_t eg_ep_wire_bytes(const eg_workload_t *w, uint32_t n)
{
	size_t b[5], total = 0;

	eg_ep_section_bytes(w, b);
	for (int i = 0; i < 5; i++)
		total += eg__al16(b[i] * n);
	return total;
}

void eg_ep_rows_wire(const eg_workload_t *w, void *base, uint32_t n,
		     eg_ep_rows_t *v)
{
	size_t b[5];
	uint8_t *p = base;

	eg_ep_section_bytes(w, b);
	v->x = p;
	p += eg__al16(b[0] * n);
	v->scales = b[1] ? (float *)p : NULL;
	p += eg__al16(b[1] * n);
	v->src_rank = NULL;
	v->src_token = (int32_t *)p;
	p += eg__al16(b[2] * n);
	v->topk_idx = (int32_t *)p;
	p += eg__al16(b[3] * n);
	v->topk_w = (float *)p;
}

void eg_ep_rows_recv(const eg_recv_t *r, uint32_t row, eg_ep_rows_t *v)
{
	size_t H = r->hidden, K = r->topk;

	v->x = (uint8_t *)r->x + (size_t)row * H * eg_dtype_size(r->dtype);
	v->scales =
	    r->scales ? r->scales + (size_t)row * (H / EG_FP8_BLOCK) : NULL;
	v->src_rank = r->src_rank + row;
	v->src_token = r->src_token + row;
	v->topk_idx = r->topk_idx + (size_t)row * K;
	v->topk_w = r->topk_w + (size_t)row * K;
}

void eg_ep_rows_advance(const eg_workload_t *w, eg_ep_rows_t *v, uint32_t n)
{
	size_t H = w->hidden, K = w->topk;

	v->x = (uint8_t *)v->x + (size_t)n * H * eg_dtype_size(w->dtype);
	if (v->scales)
		v->scales += (size_t)n * (H / EG_FP8_BLOCK);
	if (v->src_rank)
		v->src_rank += n;
	v->src_token += n;
	v->topk_idx += (size_t)n * K;
	v->topk_w += (size_t)n * K;
}

static const int32_t *eg__src_idx(const eg_workload_t *w,
				  const eg_ep_src_t *src, uint32_t s,
				  uint32_t t)
{
	return src->topk_idx + ((size_t)s * src->stride + t) * w->topk;
}

void eg_ep_layout_host(const eg_workload_t *w, const eg_ep_src_t *src,
		       uint32_t d0, uint32_t nd, int32_t *pos, uint32_t *count)
{
	int32_t L = (int32_t)eg_workload_local_experts(w);

	for (uint32_t s = 0; s < src->nsrc; s++)
		for (uint32_t j = 0; j < nd; j++) {
			int32_t *p = pos + ((size_t)s * nd + j) * src->stride;
			int32_t lo = (int32_t)(d0 + j) * L;
			uint32_t n = 0;

			for (uint32_t t = 0; t < src->stride; t++) {
				int on = t < src->tokens[s] &&
					 eg_ep_on(eg__src_idx(w, src, s, t),
						  w->topk, lo, L);
				p[t] = on ? (int32_t)n++ : -1;
			}
			count[(size_t)s * nd + j] = n;
		}
}

void eg_ep_pack_host(const eg_workload_t *w, const eg_ep_src_t *src,
		     uint32_t d0, uint32_t nd, const int32_t *pos,
		     const eg_ep_rows_t *views)
{
	size_t b[5], K = w->topk, nb;
	int32_t L = (int32_t)eg_workload_local_experts(w);

	eg_ep_section_bytes(w, b);
	nb = b[1] / sizeof(float);
	for (uint32_t s = 0; s < src->nsrc; s++)
		for (uint32_t j = 0; j < nd; j++) {
			const eg_ep_rows_t *v = &views[(size_t)s * nd + j];
			const int32_t *p =
			    pos + ((size_t)s * nd + j) * src->stride;
			int32_t lo = (int32_t)(d0 + j) * L;

			for (uint32_t t = 0; t < src->tokens[s]; t++) {
				size_t in = (size_t)s * src->stride + t;
				size_t r;

				if (p[t] < 0)
					continue;
				r = (size_t)p[t];
				memcpy((uint8_t *)v->x + r * b[0],
				       (const uint8_t *)src->x + in * b[0],
				       b[0]);
				if (nb)
					memcpy(v->scales + r * nb,
					       src->scales + in * nb, b[1]);
				if (v->src_rank)
					v->src_rank[r] =
					    (int32_t)(src->first_src + s);
				v->src_token[r] = (int32_t)t;
				for (size_t k = 0; k < K; k++) {
					int32_t e = src->topk_idx[in * K + k];
					int loc = e >= lo && e < lo + L;

					v->topk_idx[r * K + k] =
					    loc ? e - lo : -1;
					v->topk_w[r * K + k] =
					    loc ? src->topk_w[in * K + k]
						: 0.0f;
				}
			}
		}
}

void eg_ep_finish_host(eg_recv_t *r, const uint32_t *prefix)
{
	size_t K = r->topk;
	uint32_t s = 0;

	memcpy(r->rank_prefix, prefix, (r->world + 1u) * sizeof(uint32_t));
	memset(r->expert_count, 0, r->local_experts * sizeof(uint32_t));
	r->num_rows = prefix[r->world];
	for (uint32_t i = 0; i < r->num_rows; i++) {
		while (s + 1 < r->world && i >= prefix[s + 1])
			s++;
		r->src_rank[i] = (int32_t)s;
		for (size_t k = 0; k < K; k++) {
			int32_t id = r->topk_idx[i * K + k];
			if (id >= 0 && (uint32_t)id < r->local_experts)
				r->expert_count[id]++;
		}
	}
}

void eg_ep_combine_host(const eg_workload_t *w, uint32_t T, uint32_t W,
			const int32_t *pos, uint32_t stride,
			const void *const *y, void *out)
{
	uint32_t ct = eg_ep_combine_dtype((uint32_t)w->dtype);
	size_t H = w->hidden;

	for (uint32_t t = 0; t < T; t++)
		for (size_t h = 0; h < H; h++) {
			float acc = 0.0f;

			for (uint32_t d = 0; d < W; d++) {
				int32_t p = pos[(size_t)d * stride + t];
				if (p >= 0)
					acc =
					    acc + eg_ep_load(ct, y[d],
							     (size_t)p * H + h);
			}
			eg_ep_store(ct, out, (size_t)t * H + h, acc);
		}
}

void eg_ep_scatter_host(const eg_workload_t *w, const eg_recv_t *r,
			const void *y, uint32_t stride, void *partial)
{
	size_t rowb =
	    (size_t)w->hidden * eg_dtype_size(eg_combine_dtype(w->dtype));

	memset(partial, 0, (size_t)w->world * stride * rowb);
	for (uint32_t i = 0; i < r->num_rows; i++) {
		int32_t sr = r->src_rank[i], st = r->src_token[i];
		size_t dst = (size_t)sr * stride + (size_t)st;

		if (sr < 0 || (uint32_t)sr >= w->world || st < 0 ||
		    (uint32_t)st >= stride)
			continue; /* a wrong dispatch must not write wild */
		memcpy((uint8_t *)partial + dst * rowb,
		       (const uint8_t *)y + (size_t)i * rowb, rowb);
	}
}
