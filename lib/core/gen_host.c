/* Host twins of the generation kernels (kernels/gen.cu): the same recipe
 * from gen_core.h, element by element, so the bits match the device. */
#include <stddef.h>

#include "epgate/gen.h"

/* |v| by clearing the sign bit: no libm, same bits as the device. */
static float eg__abs(float v)
{
	return eg_u2f(eg_f2u(v) & 0x7fffffffu);
}

static void eg__tokens_fp8(const eg_gen_params_t *p, uint32_t rank,
			   uint32_t tokens, uint8_t *x, float *scales)
{
	uint32_t H = p->hidden, nb = H / EG_FP8_BLOCK;
	float v[EG_FP8_BLOCK];

	for (uint32_t t = 0; t < tokens; t++) {
		for (uint32_t b = 0; b < nb; b++) {
			uint32_t h0 = b * EG_FP8_BLOCK;
			size_t o = (size_t)t * H + h0;
			float amax = 0.0f;

			for (uint32_t i = 0; i < EG_FP8_BLOCK; i++) {
				float a;

				v[i] = eg_gen_value(p, rank, t, h0 + i);
				a = eg__abs(v[i]);
				if (a > amax)
					amax = a;
			}
			float s = eg_fp8_scale(p, amax);
			for (uint32_t i = 0; i < EG_FP8_BLOCK; i++)
				x[o + i] = eg_core_f32_to_e4m3(v[i] / s);
			scales[(size_t)t * nb + b] = s;
		}
	}
}

/* Columns h .. h+n-1 (n <= 4, h a multiple of 4) of token t: exact data
 * takes its four columns from one Philox draw (eg_gen_value's h >> 2),
 * drawn once here rather than once a column, which made the host's
 * generation most of a stress call's time (2026-12-07: 37% of `epgate
 * stress --engine self` at 128 x 7168); the rest column by column. */
static void eg__four(const eg_gen_params_t *p, uint32_t rank, uint32_t t,
		     uint32_t h, uint32_t n, float v[4])
{
	if (p->data == EG_GEN_EXACT && !p->nf_threshold) {
		philox4x32_ctr_t r =
		    eg_philox(p, t, h >> 2, rank, EG_STREAM_VALUE);

		for (uint32_t j = 0; j < n; j++)
			v[j] = eg_gen_exact(p, r, j);
		return;
	}
	for (uint32_t j = 0; j < n; j++)
		v[j] = eg_gen_value(p, rank, t, h + j);
}

void eg_gen_tokens_host(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			void *x, float *scales)
{
	const eg_gen_params_t *p = &g->p;
	uint32_t H = p->hidden;

	if (p->dtype == EG_GEN_FP8) {
		eg__tokens_fp8(p, rank, tokens, x, scales);
		return;
	}
	for (uint32_t t = 0; t < tokens; t++) {
		size_t o = (size_t)t * H;
		float v[4];

		for (uint32_t h = 0; h < H; h += 4) {
			uint32_t n = H - h < 4 ? H - h : 4;

			eg__four(p, rank, t, h, n, v);
			for (uint32_t j = 0; j < n; j++) {
				if (p->dtype == EG_GEN_BF16)
					((uint16_t *)x)[o + h + j] =
					    eg_core_f32_to_bf16(v[j]);
				else
					((float *)x)[o + h + j] = v[j];
			}
		}
	}
}

void eg_gen_routing_host(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			 int32_t *topk_idx, float *topk_w)
{
	uint32_t K = g->p.topk;

	for (uint32_t t = 0; t < tokens; t++)
		eg_gen_route(&g->p, rank, t, topk_idx + (size_t)t * K,
			     topk_w + (size_t)t * K);
}
