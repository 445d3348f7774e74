/* Row packing shared by the multi-process engines: one dispatched row on
 * the wire is [payload][fp8 scales][int32 src token][K int32 local ids]
 * [K float weights]. */
#ifndef EG_ENGINES_PACK_H
#define EG_ENGINES_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "epgate/ep.h"

static inline size_t eg__wire_row_bytes(const eg_workload_t *w)
{
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	return (size_t)w->hidden * eg_dtype_size(w->dtype) +
	       nb * sizeof(float) + sizeof(int32_t) +
	       (size_t)w->topk * (sizeof(int32_t) + sizeof(float));
}

/* Writes token t of in for destination d (local ids and weights kept
 * only for d's experts) at p. */
static inline void eg__wire_pack(const eg_workload_t *w,
				 const eg_rank_input_t *in, uint32_t t,
				 uint32_t d, uint8_t *p)
{
	size_t xb = (size_t)w->hidden * eg_dtype_size(w->dtype);
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	int32_t L = (int32_t)(w->experts / w->world), lo = (int32_t)d * L;
	const int32_t *ti = in->topk_idx + (size_t)t * w->topk;
	const float *tw = in->topk_w + (size_t)t * w->topk;
	int32_t tok = (int32_t)t;

	memcpy(p, (const uint8_t *)in->x + (size_t)t * xb, xb);
	p += xb;
	if (nb) {
		memcpy(p, in->scales + (size_t)t * nb, nb * sizeof(float));
		p += nb * sizeof(float);
	}
	memcpy(p, &tok, sizeof(tok));
	p += sizeof(tok);
	for (uint32_t k = 0; k < w->topk; k++) {
		int local = ti[k] >= lo && ti[k] < lo + L;
		int32_t id = local ? ti[k] - lo : -1;
		float wt = local ? tw[k] : 0.0f;
		memcpy(p + k * sizeof(int32_t), &id, sizeof(id));
		memcpy(p + w->topk * sizeof(int32_t) + k * sizeof(float), &wt,
		       sizeof(wt));
	}
}

/* Reads a wire row into row i of r, from source s. */
static inline void eg__wire_unpack(const eg_workload_t *w, const uint8_t *p,
				   uint32_t s, eg_recv_t *r, uint32_t i)
{
	size_t xb = (size_t)w->hidden * eg_dtype_size(w->dtype);
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	size_t K = w->topk;

	memcpy((uint8_t *)r->x + (size_t)i * xb, p, xb);
	p += xb;
	if (nb) {
		memcpy(r->scales + (size_t)i * nb, p, nb * sizeof(float));
		p += nb * sizeof(float);
	}
	r->src_rank[i] = (int32_t)s;
	memcpy(&r->src_token[i], p, sizeof(int32_t));
	p += sizeof(int32_t);
	memcpy(r->topk_idx + i * K, p, K * sizeof(int32_t));
	memcpy(r->topk_w + i * K, p + K * sizeof(int32_t), K * sizeof(float));
	for (size_t k = 0; k < K; k++) {
		int32_t id = r->topk_idx[i * K + k];
		if (id >= 0 && (uint32_t)id < r->local_experts)
			r->expert_count[id]++;
	}
}

/* 1 if token t of in has an expert on rank d. */
static inline int eg__token_on(const eg_workload_t *w,
			       const eg_rank_input_t *in, uint32_t t,
			       uint32_t d)
{
	int32_t L = (int32_t)(w->experts / w->world), lo = (int32_t)d * L;
	const int32_t *ti = in->topk_idx + (size_t)t * w->topk;
	for (uint32_t k = 0; k < w->topk; k++)
		if (ti[k] >= lo && ti[k] < lo + L)
			return 1;
	return 0;
}

#endif
