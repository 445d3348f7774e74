/* EP kernels: layout, pack, receive finishing, expert stage, combine, the
 * dense scatter (the device verifier: kernels/verify.cu). Each has a host
 * twin with the same bits (lib/core/ep_host.c, lib/core/ep.c's
 * eg_expert_stage); built with --fmad=false like gen.cu. Small per-call
 * tables (views, token counts, y pointers, the receive prefix) travel as kernel
 * parameters, so no wrapper copies from pageable host memory: such a copy
 * would wait for the stream, and a stream held by a dead peer's NCCL
 * kernel would hang the host past every deadline. */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* C++ parts (Random123 templates) outside the C-linkage block. */
#include <Random123/philox.h>
#include "epgate/gen_core.h"
#include "lib/core/ep_core.h"
#include "kernels/grid.h"

extern "C" {
#include "epgate/cuda_ep.h"
#include "epgate/error.h"
}

#define EG__TILE 512 /* tokens per layout block */
#define EG__FULL 0xffffffffu

static int eg__launched(void)
{
	return cudaGetLastError() == cudaSuccess ? EG_OK : EG_ECUDA;
}

extern "C" void eg_cuda_free_all(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cudaFree(p[i]);
}

/* ---------------------------------------------------------------- layout */

struct eg__lay {
	const int32_t *idx;
	uint32_t nsrc, stride, K, L, d0, nd, ntiles;
	uint32_t tokens[EG_EP_WORLD_MAX];
};

static __device__ int eg__flag(const eg__lay &a, uint32_t s, uint32_t j,
			       uint32_t t)
{
	if (t >= a.stride || t >= a.tokens[s])
		return 0;
	const int32_t *ti = a.idx + ((size_t)s * a.stride + t) * a.K;
	return eg_ep_on(ti, a.K, (int32_t)((a.d0 + j) * a.L), (int32_t)a.L);
}

/* Exclusive scan of v over the block (blockDim.x a multiple of 32). */
static __device__ uint32_t eg__block_scan(uint32_t v)
{
	__shared__ uint32_t wsum[32];
	uint32_t lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
	uint32_t nw = blockDim.x >> 5, x = v;

	for (uint32_t o = 1; o < 32; o <<= 1) {
		uint32_t y = __shfl_up_sync(EG__FULL, x, o);
		if (lane >= o)
			x += y;
	}
	if (lane == 31)
		wsum[wid] = x;
	__syncthreads();
	if (wid == 0) {
		uint32_t s = lane < nw ? wsum[lane] : 0;
		for (uint32_t o = 1; o < 32; o <<= 1) {
			uint32_t y = __shfl_up_sync(EG__FULL, s, o);
			if (lane >= o)
				s += y;
		}
		if (lane < nw)
			wsum[lane] = s;
	}
	__syncthreads();
	return (wid ? wsum[wid - 1] : 0) + x - v;
}

static __global__ void eg__lay_count(eg__lay a, uint32_t *tile)
{
	uint32_t s = blockIdx.z, j = blockIdx.y;
	uint32_t t = blockIdx.x * EG__TILE + threadIdx.x;
	int c = __syncthreads_count(eg__flag(a, s, j, t));

	if (threadIdx.x == 0)
		tile[((size_t)s * a.nd + j) * a.ntiles + blockIdx.x] =
		    (uint32_t)c;
}

/* One thread per (source, destination): tile counts become bases. */
static __global__ void eg__lay_scan(uint32_t npairs, uint32_t ntiles,
				    uint32_t *tile, uint32_t *count)
{
	uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t base = 0;

	if (q >= npairs)
		return;
	uint32_t *c = tile + (size_t)q * ntiles;
	for (uint32_t i = 0; i < ntiles; i++) {
		uint32_t n = c[i];
		c[i] = base;
		base += n;
	}
	count[q] = base;
}

static __global__ void eg__lay_pos(eg__lay a, const uint32_t *tile,
				   int32_t *pos)
{
	uint32_t s = blockIdx.z, j = blockIdx.y;
	uint32_t t = blockIdx.x * EG__TILE + threadIdx.x;
	size_t q = (size_t)s * a.nd + j;
	int f = eg__flag(a, s, j, t);
	uint32_t ex = eg__block_scan((uint32_t)f);

	if (t < a.stride)
		pos[q * a.stride + t] =
		    f ? (int32_t)(tile[q * a.ntiles + blockIdx.x] + ex) : -1;
}

extern "C" int eg_ep_layout_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
				 uint32_t d0, uint32_t nd, int32_t *d_pos,
				 uint32_t *d_count, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	eg__lay a;
	uint32_t *tile = NULL;
	size_t npairs;
	int rc;

	if (!src->nsrc || !nd || src->nsrc > EG_EP_WORLD_MAX ||
	    nd > EG_EP_WORLD_MAX || !src->stride)
		return EG_ERANGE;
	memset(&a, 0, sizeof(a));
	a.idx = src->topk_idx;
	a.nsrc = src->nsrc;
	a.stride = src->stride;
	a.K = w->topk;
	a.L = eg_workload_local_experts(w);
	a.d0 = d0;
	a.nd = nd;
	a.ntiles = (src->stride + EG__TILE - 1) / EG__TILE;
	memcpy(a.tokens, src->tokens, sizeof(a.tokens));
	npairs = (size_t)a.nsrc * nd;
	if (cudaMallocAsync((void **)&tile, npairs * a.ntiles * 4, st) !=
	    cudaSuccess)
		return EG_ECUDA;
	dim3 grid(a.ntiles, nd, a.nsrc);
	eg__lay_count<<<grid, EG__TILE, 0, st>>>(a, tile);
	eg__lay_scan<<<eg__grid(npairs, 64), 64, 0, st>>>(
	    (uint32_t)npairs, a.ntiles, tile, d_count);
	eg__lay_pos<<<grid, EG__TILE, 0, st>>>(a, tile, d_pos);
	rc = eg__launched();
	if (cudaFreeAsync(tile, st) != cudaSuccess)
		rc = EG_ECUDA;
	return rc;
}

/* ------------------------------------------------------------------ pack */

struct eg__pack {
	const uint8_t *x;
	const float *scales;
	const int32_t *idx;
	const float *w;
	uint32_t nsrc, stride, first_src, d0, nd, K, L, nb;
	size_t xb;
	uint32_t tokens[EG_EP_WORLD_MAX];
	eg_ep_rows_t v[EG_EP_WORLD_MAX];
	/* windowed: only rows of slice k of K of cnt[q] (eg__nccl_slice) */
	uint32_t windowed, slice, nslices;
	uint32_t cnt[EG_EP_WORLD_MAX];
};

/* n bytes by one warp, 16-byte accesses when everything is aligned. */
static __device__ void eg__warp_copy(void *dst, const void *src, size_t n,
				     uint32_t lane)
{
	uintptr_t al = (uintptr_t)dst | (uintptr_t)src | (uintptr_t)n;

	if (!(al & 15u)) {
		uint4 *d = (uint4 *)dst;
		const uint4 *s = (const uint4 *)src;
		for (size_t i = lane; i < n / 16; i += 32)
			d[i] = s[i];
	} else if (!(al & 3u)) {
		uint32_t *d = (uint32_t *)dst;
		const uint32_t *s = (const uint32_t *)src;
		for (size_t i = lane; i < n / 4; i += 32)
			d[i] = s[i];
	} else {
		uint8_t *d = (uint8_t *)dst;
		const uint8_t *s = (const uint8_t *)src;
		for (size_t i = lane; i < n; i += 32)
			d[i] = s[i];
	}
}

/* One warp per source token; it writes the token's row for every
 * destination that takes it. */
static __global__ void eg__pack_kernel(eg__pack a, const int32_t *pos)
{
	uint32_t lane = threadIdx.x & 31u, wpb = blockDim.x / 32;
	size_t ntask = (size_t)a.nsrc * a.stride;
	size_t step = (size_t)gridDim.x * wpb;

	for (size_t task = (size_t)blockIdx.x * wpb + threadIdx.x / 32;
	     task < ntask; task += step) {
		uint32_t s = (uint32_t)(task / a.stride);
		uint32_t t = (uint32_t)(task % a.stride);

		if (t >= a.tokens[s])
			continue;
		for (uint32_t j = 0; j < a.nd; j++) {
			size_t q = (size_t)s * a.nd + j;
			int32_t p = pos[q * a.stride + t];
			const eg_ep_rows_t *v = &a.v[q];
			int32_t lo = (int32_t)((a.d0 + j) * a.L);

			if (p < 0)
				continue;
			if (a.windowed) {
				uint64_t n = a.cnt[q];
				if ((uint64_t)p < n * a.slice / a.nslices ||
				    (uint64_t)p >=
					n * (a.slice + 1) / a.nslices)
					continue;
			}
			eg__warp_copy((uint8_t *)v->x + (size_t)p * a.xb,
				      a.x + task * a.xb, a.xb, lane);
			for (uint32_t b = lane; b < a.nb; b += 32)
				v->scales[(size_t)p * a.nb + b] =
				    a.scales[task * a.nb + b];
			if (lane == 0) {
				if (v->src_rank)
					v->src_rank[p] =
					    (int32_t)(a.first_src + s);
				v->src_token[p] = (int32_t)t;
			}
			for (uint32_t k = lane; k < a.K; k += 32) {
				int32_t e = a.idx[task * a.K + k];
				int loc = e >= lo && e < lo + (int32_t)a.L;

				v->topk_idx[(size_t)p * a.K + k] =
				    loc ? e - lo : -1;
				v->topk_w[(size_t)p * a.K + k] =
				    loc ? a.w[task * a.K + k] : 0.0f;
			}
		}
	}
}

extern "C" int eg_ep_pack_slice_cuda(const eg_workload_t *w,
				     const eg_ep_src_t *src, uint32_t d0,
				     uint32_t nd, const int32_t *d_pos,
				     const eg_ep_rows_t *views,
				     const uint32_t *counts, uint32_t k,
				     uint32_t K, void *stream)
{
	eg__pack a;
	size_t b[5], ntask;

	if ((size_t)src->nsrc * nd > EG_EP_WORLD_MAX || !src->stride ||
	    (counts && k >= K))
		return EG_ERANGE;
	memset(&a, 0, sizeof(a));
	if (counts) {
		a.windowed = 1;
		a.slice = k;
		a.nslices = K;
		memcpy(a.cnt, counts,
		       (size_t)src->nsrc * nd * sizeof(uint32_t));
	}
	eg_ep_section_bytes(w, b);
	a.x = (const uint8_t *)src->x;
	a.scales = src->scales;
	a.idx = src->topk_idx;
	a.w = src->topk_w;
	a.nsrc = src->nsrc;
	a.stride = src->stride;
	a.first_src = src->first_src;
	a.d0 = d0;
	a.nd = nd;
	a.K = w->topk;
	a.L = eg_workload_local_experts(w);
	a.nb = (uint32_t)(b[1] / sizeof(float));
	a.xb = b[0];
	memcpy(a.tokens, src->tokens, sizeof(a.tokens));
	memcpy(a.v, views, (size_t)src->nsrc * nd * sizeof(eg_ep_rows_t));
	ntask = (size_t)src->nsrc * src->stride;
	eg__pack_kernel<<<eg__grid(ntask, 8), 256, 0, (cudaStream_t)stream>>>(
	    a, d_pos);
	return eg__launched();
}

extern "C" int eg_ep_pack_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
			       uint32_t d0, uint32_t nd, const int32_t *d_pos,
			       const eg_ep_rows_t *views, void *stream)
{
	return eg_ep_pack_slice_cuda(w, src, d0, nd, d_pos, views, NULL, 0, 1,
				     stream);
}

/* ---------------------------------------------------------------- finish */

struct eg__prefix {
	uint32_t p[EG_EP_WORLD_MAX + 1];
};

/* expert_count through a per-block histogram in shared memory when it
 * fits: one global atomic per expert and block instead of one per slot
 * (the counts are integers: any order gives the same result). */
#define EG__HIST_MAX 8192

static __global__ void eg__finish_kernel(eg__prefix pre, uint32_t W, uint32_t K,
					 uint32_t L, uint32_t *rank_prefix,
					 int32_t *src_rank, const int32_t *idx,
					 uint32_t *ecount, int shared)
{
	extern __shared__ uint32_t hist[];
	size_t rows = pre.p[W];
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t *cnt = shared ? hist : ecount;

	if (shared) {
		for (uint32_t j = threadIdx.x; j < L; j += blockDim.x)
			hist[j] = 0;
		__syncthreads();
	}
	if (i0 <= W)
		rank_prefix[i0] = pre.p[i0];
	for (size_t i = i0; i < rows; i += stride) {
		uint32_t s = 0;

		while (s + 1 < W && i >= pre.p[s + 1])
			s++;
		src_rank[i] = (int32_t)s;
		for (uint32_t k = 0; k < K; k++) {
			int32_t id = idx[i * K + k];
			if (id >= 0 && (uint32_t)id < L)
				atomicAdd(&cnt[id], 1u);
		}
	}
	if (shared) {
		__syncthreads();
		for (uint32_t j = threadIdx.x; j < L; j += blockDim.x)
			if (hist[j])
				atomicAdd(&ecount[j], hist[j]);
	}
}

extern "C" int eg_ep_finish_cuda(eg_recv_t *r, const uint32_t *prefix,
				 void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	eg__prefix pre;
	uint32_t W = r->world, L = r->local_experts;
	int shared = L <= EG__HIST_MAX;
	unsigned grid;

	if (W > EG_EP_WORLD_MAX || prefix[W] > r->capacity)
		return EG_ERANGE;
	memcpy(pre.p, prefix, (W + 1u) * sizeof(uint32_t));
	if (cudaMemsetAsync(r->expert_count, 0, L * sizeof(uint32_t), st) !=
	    cudaSuccess)
		return EG_ECUDA;
	grid = eg__grid((size_t)prefix[W] + W + 1, 256);
	if (grid > 1024)
		grid = 1024; /* grid-stride: fewer histograms to flush */
	eg__finish_kernel<<<grid, 256, shared ? L * 4 : 0, st>>>(
	    pre, W, r->topk, L, r->rank_prefix, r->src_rank, r->topk_idx,
	    r->expert_count, shared);
	r->num_rows = prefix[W];
	return eg__launched();
}

/* ---------------------------------------------------------------- expert */

static __global__ void eg__expert_kernel(eg_gen_params_t p, uint32_t rank,
					 uint32_t L, uint32_t dtype,
					 uint32_t rows, uint32_t H, uint32_t K,
					 const void *x, const float *scales,
					 const int32_t *idx, const float *wt,
					 void *y)
{
	size_t n = (size_t)rows * H, nb = H / EG_FP8_BLOCK;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	uint32_t ct = eg_ep_combine_dtype(dtype);

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride) {
		size_t r = i / H, h = i % H;
		float sc = dtype == EG_GEN_FP8
			       ? scales[r * nb + h / EG_FP8_BLOCK]
			       : 1.0f;
		float acc = eg_ep_expert_elem(&p, rank, L, dtype,
					      eg_ep_load(dtype, x, i), sc,
					      idx + r * K, wt + r * K, K);
		eg_ep_store(ct, y, i, acc);
	}
}

extern "C" int eg_ep_expert_cuda(const eg_gen_t *g, const eg_recv_t *r,
				 void *d_y, void *stream)
{
	eg_gen_params_t p = g->p;
	size_t n = (size_t)r->num_rows * r->hidden;

	if (r->num_rows > r->capacity)
		return EG_EINVAL;
	if (!n)
		return EG_OK;
	p.expert_weight = NULL; /* the bias never reads it */
	eg__expert_kernel<<<eg__grid(n, 256), 256, 0, (cudaStream_t)stream>>>(
	    p, r->rank, r->local_experts, (uint32_t)r->dtype, r->num_rows,
	    r->hidden, r->topk, r->x, r->scales, r->topk_idx, r->topk_w, d_y);
	return eg__launched();
}

/* --------------------------------------------------------------- combine */

struct eg__ys {
	const void *y[EG_EP_WORLD_MAX];
};

static __global__ void eg__combine_kernel(eg__ys ys, uint32_t W, uint32_t T,
					  uint32_t H, uint32_t ct,
					  const int32_t *pos, uint32_t stride,
					  void *out)
{
	size_t n = (size_t)T * H;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += step) {
		size_t t = i / H, h = i % H;
		float acc = 0.0f;

		for (uint32_t d = 0; d < W; d++) {
			int32_t p = pos[(size_t)d * stride + t];
			if (p >= 0)
				acc = acc + eg_ep_load(ct, ys.y[d],
						       (size_t)p * H + h);
		}
		eg_ep_store(ct, out, i, acc);
	}
}

/* The same sums, 16 bytes per access: each thread takes one uint4 of
 * the output (8 bf16 or 4 fp32) and reads the matching uint4 of every
 * source row. Per element the arithmetic is the scalar kernel's. Only
 * when H fills whole uint4s and every buffer is 16-byte aligned. */
template <typename E, int V>
static __global__ void eg__combine_vec_kernel(eg__ys ys, uint32_t W, uint32_t T,
					      uint32_t H, const int32_t *pos,
					      uint32_t stride, void *out)
{
	size_t hv = H / V, n = (size_t)T * hv;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += step) {
		size_t t = i / hv, c = i % hv;
		float acc[V];
		union {
			uint4 u;
			E e[V];
		} r;

		for (int j = 0; j < V; j++)
			acc[j] = 0.0f;
		for (uint32_t d = 0; d < W; d++) {
			int32_t p = pos[(size_t)d * stride + t];
			if (p < 0)
				continue;
			r.u = ((const uint4 *)ys.y[d])[(size_t)p * hv + c];
			for (int j = 0; j < V; j++)
				acc[j] =
				    acc[j] +
				    (sizeof(E) == 2
					 ? eg_core_bf16_to_f32((uint16_t)r.e[j])
					 : eg_u2f((uint32_t)r.e[j]));
		}
		for (int j = 0; j < V; j++)
			r.e[j] = sizeof(E) == 2 ? (E)eg_core_f32_to_bf16(acc[j])
						: (E)eg_f2u(acc[j]);
		((uint4 *)out)[i] = r.u;
	}
}

extern "C" int eg_ep_combine_cuda(const eg_workload_t *w, uint32_t T,
				  uint32_t W, const int32_t *d_pos,
				  uint32_t stride, const void *const *y,
				  void *d_out, void *stream)
{
	eg__ys ys;
	size_t n = (size_t)T * w->hidden;

	if (W > EG_EP_WORLD_MAX)
		return EG_ERANGE;
	if (!n)
		return EG_OK;
	memset(&ys, 0, sizeof(ys));
	memcpy(ys.y, y, W * sizeof(void *));
	uint32_t ct = eg_ep_combine_dtype((uint32_t)w->dtype);
	uint32_t V = ct == EG_GEN_BF16 ? 8 : 4;
	uintptr_t al = (uintptr_t)d_out;
	for (uint32_t d = 0; d < W; d++)
		al |= (uintptr_t)y[d];
	cudaStream_t st = (cudaStream_t)stream;
	if (w->hidden % V == 0 && !(al & 15u)) {
		size_t nv = n / V;
		if (ct == EG_GEN_BF16)
			eg__combine_vec_kernel<uint16_t, 8>
			    <<<eg__grid(nv, 256), 256, 0, st>>>(
				ys, W, T, w->hidden, d_pos, stride, d_out);
		else
			eg__combine_vec_kernel<uint32_t, 4>
			    <<<eg__grid(nv, 256), 256, 0, st>>>(
				ys, W, T, w->hidden, d_pos, stride, d_out);
		return eg__launched();
	}
	eg__combine_kernel<<<eg__grid(n, 256), 256, 0, st>>>(
	    ys, W, T, w->hidden, ct, d_pos, stride, d_out);
	return eg__launched();
}

/* --------------------------------------------------------------- scatter */

static __global__ void eg__scatter_kernel(uint32_t rows, uint32_t W,
					  uint32_t stride, size_t rowb,
					  const int32_t *sr, const int32_t *st,
					  const uint8_t *y, uint8_t *partial)
{
	uint32_t lane = threadIdx.x & 31u, wpb = blockDim.x / 32;
	size_t step = (size_t)gridDim.x * wpb;

	for (size_t i = (size_t)blockIdx.x * wpb + threadIdx.x / 32; i < rows;
	     i += step) {
		int32_t s = sr[i], t = st[i];

		if (s < 0 || (uint32_t)s >= W || t < 0 || (uint32_t)t >= stride)
			continue; /* a wrong dispatch must not write wild */
		eg__warp_copy(partial + ((size_t)s * stride + t) * rowb,
			      y + i * rowb, rowb, lane);
	}
}

extern "C" int eg_ep_scatter_cuda(const eg_workload_t *w, const eg_recv_t *r,
				  const void *d_y, uint32_t stride,
				  void *d_partial, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	size_t rowb =
	    (size_t)w->hidden * eg_dtype_size(eg_combine_dtype(w->dtype));

	if (cudaMemsetAsync(d_partial, 0, (size_t)w->world * stride * rowb,
			    st) != cudaSuccess)
		return EG_ECUDA;
	if (!r->num_rows)
		return EG_OK;
	eg__scatter_kernel<<<eg__grid(r->num_rows, 8), 256, 0, st>>>(
	    r->num_rows, w->world, stride, rowb, r->src_rank, r->src_token,
	    (const uint8_t *)d_y, (uint8_t *)d_partial);
	return eg__launched();
}

/* ---------------------------------------------------------------- hold */

/* The device window's hold: one thread reads the GPU's global timer (ns)
 * until ns have passed. Named eg_hold so that kernel-time accounting
 * (lib/step/kern.c) leaves it out. */
extern "C" __global__ void eg_hold(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		__nanosleep(256);
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

extern "C" int eg_cuda_hold(void *stream, double us)
{
	if (!(us >= 0) || us > 1e7)
		return EG_EINVAL;
	eg_hold<<<1, 1, 0, (cudaStream_t)stream>>>(
	    (unsigned long long)(us * 1e3));
	return eg__launched();
}

/* ------------------------------------------------------- device buffers */

static void *eg__dev_poisoned(size_t n, int *bad)
{
	void *p = NULL;

	if (cudaMalloc(&p, n ? n : 1) != cudaSuccess) {
		*bad = 1;
		return NULL;
	}
	if (cudaMemset(p, 0xA5, n ? n : 1) != cudaSuccess)
		*bad = 1;
	return p;
}

extern "C" int eg_recv_alloc_cuda(eg_recv_t *r, const eg_workload_t *w,
				  uint32_t rank, uint32_t capacity)
{
	size_t rows = capacity, H = w->hidden, K = w->topk;
	uint32_t L = eg_workload_local_experts(w);
	int bad = 0;

	eg_recv_shape(r, w, rank, capacity);
	r->x = eg__dev_poisoned(rows * H * eg_dtype_size(w->dtype), &bad);
	if (w->dtype == EG_DTYPE_FP8)
		r->scales = (float *)eg__dev_poisoned(
		    rows * (H / EG_FP8_BLOCK) * sizeof(float), &bad);
	r->src_rank = (int32_t *)eg__dev_poisoned(rows * 4, &bad);
	r->src_token = (int32_t *)eg__dev_poisoned(rows * 4, &bad);
	r->topk_idx = (int32_t *)eg__dev_poisoned(rows * K * 4, &bad);
	r->topk_w = (float *)eg__dev_poisoned(rows * K * 4, &bad);
	r->expert_count = (uint32_t *)eg__dev_poisoned(L * 4, &bad);
	r->rank_prefix =
	    (uint32_t *)eg__dev_poisoned((w->world + 1u) * 4, &bad);
	if (bad) {
		eg_recv_free_cuda(r);
		return EG_ECUDA;
	}
	return EG_OK;
}

extern "C" void eg_recv_free_cuda(eg_recv_t *r)
{
	void *const p[] = {
	    r->x,	 r->scales, r->src_rank,     r->src_token,
	    r->topk_idx, r->topk_w, r->expert_count, r->rank_prefix};

	eg_cuda_free_all(p, sizeof(p) / sizeof(p[0]));
	memset(r, 0, sizeof(*r));
}

extern "C" int eg_recv_copy_cuda(eg_recv_t *dst, const eg_recv_t *src,
				 int to_device)
{
	cudaMemcpyKind k =
	    to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
	size_t rows =
	    dst->capacity < src->capacity ? dst->capacity : src->capacity;
	size_t H = src->hidden, K = src->topk;
	int bad = 0;

	if (dst->world != src->world || dst->hidden != src->hidden ||
	    dst->topk != src->topk || dst->dtype != src->dtype ||
	    dst->local_experts != src->local_experts)
		return EG_EINVAL;
	bad |= cudaMemcpy(dst->x, src->x, rows * H * eg_dtype_size(src->dtype),
			  k) != cudaSuccess;
	if (src->scales)
		bad |=
		    cudaMemcpy(dst->scales, src->scales,
			       rows * (H / EG_FP8_BLOCK) * 4, k) != cudaSuccess;
	bad |= cudaMemcpy(dst->src_rank, src->src_rank, rows * 4, k) !=
	       cudaSuccess;
	bad |= cudaMemcpy(dst->src_token, src->src_token, rows * 4, k) !=
	       cudaSuccess;
	bad |= cudaMemcpy(dst->topk_idx, src->topk_idx, rows * K * 4, k) !=
	       cudaSuccess;
	bad |= cudaMemcpy(dst->topk_w, src->topk_w, rows * K * 4, k) !=
	       cudaSuccess;
	bad |= cudaMemcpy(dst->expert_count, src->expert_count,
			  src->local_experts * 4, k) != cudaSuccess;
	bad |= cudaMemcpy(dst->rank_prefix, src->rank_prefix,
			  (src->world + 1u) * 4, k) != cudaSuccess;
	dst->num_rows = src->num_rows;
	dst->rank = src->rank;
	return bad ? EG_ECUDA : EG_OK;
}
