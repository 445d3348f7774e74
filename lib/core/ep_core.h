/* Per-element EP arithmetic shared by the CUDA kernels (kernels/ep.cu) and
 * their host twins (lib/core/ep_host.c): routing tests, typed loads and
 * stores through the bit conversions of gen_core.h, the expert function
 * and the combine sum. Buffers are aligned arrays of their element type
 * (device allocations, or host buffers of the same layout). */
#ifndef EG_KERNELS_EP_CORE_H
#define EG_KERNELS_EP_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/gen_core.h"

/* 1 if one of the K global expert ids is in [lo, lo + L). */
EG_HD int eg_ep_on(const int32_t *idx, uint32_t K, int32_t lo, int32_t L)
{
	for (uint32_t k = 0; k < K; k++)
		if (idx[k] >= lo && idx[k] < lo + L)
			return 1;
	return 0;
}

/* Element i of a buffer of dtype (EG_GEN_*) as fp32 (fp8 unscaled). */
EG_HD float eg_ep_load(uint32_t dtype, const void *p, size_t i)
{
	if (dtype == EG_GEN_BF16)
		return eg_core_bf16_to_f32(((const uint16_t *)p)[i]);
	if (dtype == EG_GEN_FP32)
		return ((const float *)p)[i];
	return eg_core_e4m3_to_f32(((const uint8_t *)p)[i]);
}

EG_HD void eg_ep_store(uint32_t dtype, void *p, size_t i, float v)
{
	if (dtype == EG_GEN_BF16)
		((uint16_t *)p)[i] = eg_core_f32_to_bf16(v);
	else if (dtype == EG_GEN_FP32)
		((float *)p)[i] = v;
	else
		((uint8_t *)p)[i] = eg_core_f32_to_e4m3(v);
}

EG_HD uint64_t eg_ep_bits(uint32_t dtype, const void *p, size_t i)
{
	if (dtype == EG_GEN_BF16)
		return ((const uint16_t *)p)[i];
	if (dtype == EG_GEN_FP32)
		return ((const uint32_t *)p)[i];
	return ((const uint8_t *)p)[i];
}

/* NaN or Inf, from the raw bits (e4m3 has no Inf; NaN is S.1111.111). */
EG_HD int eg_ep_nonfinite(uint32_t dtype, uint64_t b)
{
	if (dtype == EG_GEN_BF16)
		return (b & 0x7f80u) == 0x7f80u;
	if (dtype == EG_GEN_FP32)
		return (b & 0x7f800000u) == 0x7f800000u;
	return (b & 0x7fu) == 0x7fu;
}

/* NaN, from the raw bits. */
EG_HD int eg_ep_nan(uint32_t dtype, uint64_t b)
{
	if (dtype == EG_GEN_BF16)
		return (b & 0x7fffu) > 0x7f80u;
	if (dtype == EG_GEN_FP32)
		return (b & 0x7fffffffu) > 0x7f800000u;
	return (b & 0x7fu) == 0x7fu;
}

/* A combine element against its expected bits (docs/semantics.md,
 * "Non-finite values"): the same bits, or NaN where NaN is expected, its
 * sign and payload not compared (the hardware's and the order's: x86
 * makes -NaN of Inf - Inf, CUDA +NaN). An Inf keeps its sign. */
EG_HD int eg_ep_match(uint32_t dtype, uint64_t e, uint64_t a)
{
	return e == a || (eg_ep_nan(dtype, e) && eg_ep_nan(dtype, a));
}

/* The same for the fp64 reference r of the bounded comparison, where r is
 * NaN or Inf: NaN for NaN, the same Inf for an Inf. */
EG_HD int eg_ep_match_nonfinite(double r, double a)
{
	return r != r ? a != a : a == r;
}

EG_HD uint32_t eg_ep_combine_dtype(uint32_t dtype)
{
	return dtype == EG_GEN_FP8 ? EG_GEN_BF16 : dtype;
}

/* Expert output of element h of a received row (the order of lib/core/ep.c's
 * eg_expert_stage: dequantize, then k ascending, acc = acc + w * (x + b)).
 * Ids outside [0, L) are skipped. */
EG_HD float eg_ep_expert_elem(const eg_gen_params_t *p, uint32_t rank,
			      uint32_t L, uint32_t dtype, float x, float scale,
			      const int32_t *idx, const float *wt, uint32_t K)
{
	float acc = 0.0f;

	if (dtype == EG_GEN_FP8)
		x = x * scale;
	for (uint32_t k = 0; k < K; k++) {
		if (idx[k] < 0 || (uint32_t)idx[k] >= L)
			continue;
		uint32_t e = rank * L + (uint32_t)idx[k];
		acc = acc + wt[k] * (x + eg_expert_bias(p, e));
	}
	return acc;
}

#endif
