/* CUDA generation kernels: the recipe of gen_core.h on the device, bit for
 * bit the same as the host twins in gen_host.c (built with --fmad=false,
 * so no contraction changes a rounding). */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* C++ parts (Random123 templates) outside the C-linkage block. */
#include <Random123/philox.h>
#include "epgate/gen_core.h"

extern "C" {
#include "epgate/error.h"
#include "epgate/gen.h"
}

#define EG__THREADS  256
#define EG__WARPS    (EG__THREADS / 32)
#define EG__PER_LANE (EG_FP8_BLOCK / 32)

static __device__ float eg__abs(float v)
{
	return eg_u2f(eg_f2u(v) & 0x7fffffffu);
}

/* bf16/fp32: one thread per element, grid-stride. */
static __global__ void eg__tokens_kernel(eg_gen_params_t p, uint32_t rank,
					 uint32_t tokens, void *x)
{
	size_t n = (size_t)tokens * p.hidden;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride) {
		uint32_t t = (uint32_t)(i / p.hidden);
		uint32_t h = (uint32_t)(i % p.hidden);
		float v = eg_gen_value(&p, rank, t, h);

		if (p.dtype == EG_GEN_BF16)
			((uint16_t *)x)[i] = eg_core_f32_to_bf16(v);
		else
			((float *)x)[i] = v;
	}
}

/* fp8: one warp per (token, 128-channel block). The max of non-NaN values
 * does not depend on the order, so the warp reduction matches the host's
 * sequential scan. */
static __global__ void eg__tokens_fp8_kernel(eg_gen_params_t p, uint32_t rank,
					     uint32_t tokens, uint8_t *x,
					     float *scales)
{
	uint32_t nb = p.hidden / EG_FP8_BLOCK;
	size_t nblk = (size_t)tokens * nb;
	size_t stride = (size_t)gridDim.x * EG__WARPS;
	uint32_t lane = threadIdx.x & 31u;

	for (size_t blk = (size_t)blockIdx.x * EG__WARPS + threadIdx.x / 32;
	     blk < nblk; blk += stride) {
		uint32_t t = (uint32_t)(blk / nb);
		uint32_t h0 = (uint32_t)(blk % nb) * EG_FP8_BLOCK;
		size_t o = (size_t)t * p.hidden + h0;
		float v[EG__PER_LANE];
		float amax = 0.0f;

		for (uint32_t i = 0; i < EG__PER_LANE; i++) {
			v[i] = eg_gen_value(&p, rank, t, h0 + i * 32 + lane);
			float a = eg__abs(v[i]);
			if (a > amax)
				amax = a;
		}
		for (int off = 16; off > 0; off >>= 1) {
			float o2 = __shfl_xor_sync(0xffffffffu, amax, off);
			if (o2 > amax)
				amax = o2;
		}
		float s = eg_fp8_scale(&p, amax);
		for (uint32_t i = 0; i < EG__PER_LANE; i++)
			x[o + i * 32 + lane] = eg_core_f32_to_e4m3(v[i] / s);
		if (lane == 0)
			scales[blk] = s;
	}
}

/* One thread per token, writing top-k straight into the output (K is not
 * bounded small enough for a local array). */
static __global__ void eg__routing_kernel(eg_gen_params_t p, uint32_t rank,
					  uint32_t tokens, int32_t *idx,
					  float *w)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	     t < tokens; t += stride)
		eg_gen_route(&p, rank, (uint32_t)t, idx + t * p.topk,
			     w + t * p.topk);
}

static unsigned eg__grid(size_t work, size_t per_block)
{
	size_t g = (work + per_block - 1) / per_block;

	if (g < 1)
		g = 1;
	return g > 65535u ? 65535u : (unsigned)g;
}

extern "C" int eg_gen_tokens_cuda(const eg_gen_t *g, uint32_t rank,
				  uint32_t tokens, void *d_x, float *d_scales,
				  void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	eg_gen_params_t p = g->p;

	if (!tokens)
		return 0;
	p.expert_weight = NULL; /* token values never read it */
	if (p.dtype == EG_GEN_FP8) {
		size_t nblk = (size_t)tokens * (p.hidden / EG_FP8_BLOCK);

		eg__tokens_fp8_kernel<<<eg__grid(nblk, EG__WARPS), EG__THREADS,
					0, s>>>(p, rank, tokens, (uint8_t *)d_x,
						d_scales);
	} else {
		size_t n = (size_t)tokens * p.hidden;

		eg__tokens_kernel<<<eg__grid(n, EG__THREADS), EG__THREADS, 0,
				    s>>>(p, rank, tokens, d_x);
	}
	return cudaGetLastError() == cudaSuccess ? 0 : EG_ECUDA;
}

/* The zipf table lives in a stream-ordered device copy owned by the call,
 * freed in stream order after the kernel. */
extern "C" int eg_gen_routing_cuda(const eg_gen_t *g, uint32_t rank,
				   uint32_t tokens, int32_t *d_topk_idx,
				   float *d_topk_w, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	eg_gen_params_t p = g->p;
	uint32_t *d_table = NULL;
	size_t tb = (size_t)p.experts * sizeof(uint32_t);
	int rc = 0;

	if (!tokens)
		return 0;
	if (p.expert_weight) {
		if (cudaMallocAsync((void **)&d_table, tb, s) != cudaSuccess)
			return EG_ECUDA;
		if (cudaMemcpyAsync(d_table, p.expert_weight, tb,
				    cudaMemcpyHostToDevice, s) != cudaSuccess) {
			rc = EG_ECUDA;
			goto out;
		}
		p.expert_weight = d_table;
	}
	eg__routing_kernel<<<eg__grid(tokens, 128), 128, 0, s>>>(
	    p, rank, tokens, d_topk_idx, d_topk_w);
	if (cudaGetLastError() != cudaSuccess)
		rc = EG_ECUDA;
out:
	if (d_table && cudaFreeAsync(d_table, s) != cudaSuccess)
		rc = EG_ECUDA;
	return rc;
}

extern "C" int eg_cuda_available(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* clear the sticky-free error state */
		return 0;
	}
	return n > 0;
}
