/* The CUDA generation kernels against their host twins, byte for byte,
 * over all dtypes, data modes and routings. Exit 0 all equal, 1 any
 * mismatch, 77 no CUDA (build or device), 99 CUDA error. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#ifndef HAVE_CUDA

int main(void)
{
	puts("skip: built without CUDA");
	return 77;
}

#else

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gen.h"

typedef struct gcase {
	const char *name;
	uint32_t W, E, K, H, T;
	eg_dtype_t dtype;
	eg_data_mode_t data;
	eg_routing_t routing;
	double mask, hot, zipf_s;
	uint32_t hot_target, iter;
	uint64_t seed;
	double dup; /* duplicate expert ids (its own stream) */
	double nf;  /* nonfinite=input:P (its own stream), 0: none */
} gcase_t;

#define U  EG_ROUTING_UNIFORM
#define Z  EG_ROUTING_ZIPF
#define HE EG_ROUTING_HOT_EXPERT
#define HR EG_ROUTING_HOT_RANK
#define EX EG_DATA_EXACT
#define RD EG_DATA_RANDOM

static const gcase_t cases[] = {
    {"bf16-exact-uniform", 4, 16, 4, 1024, 1000, EG_DTYPE_BF16, EX, U, 0.0, 0.0,
     1.0, 0, 0, 1, 0.0, 0.0},
    {"bf16-random-zipf-mask", 8, 256, 8, 2048, 777, EG_DTYPE_BF16, RD, Z, 0.3,
     0.0, 1.2, 0, 3, 0xdeadbeefcafef00dull, 0.0, 0.0},
    {"fp32-exact-hotexpert", 4, 64, 6, 512, 1500, EG_DTYPE_FP32, EX, HE, 0.1,
     0.7, 1.0, 17, 0, 7, 0.0, 0.0},
    {"fp32-random-hotrank", 4, 32, 12, 384, 999, EG_DTYPE_FP32, RD, HR, 0.0,
     0.8, 1.0, 3, 2, 99, 0.0, 0.0},
    {"fp8-exact-zipf", 2, 16, 2, 7168, 300, EG_DTYPE_FP8, EX, Z, 0.25, 0.0, 2.0,
     0, 0, 5, 0.0, 0.0},
    {"fp8-random-uniform-mask1", 2, 8, 8, 4096, 513, EG_DTYPE_FP8, RD, U, 1.0,
     0.0, 1.0, 0, 1, 11, 0.0, 0.0},
    {"fp8-random-hotexpert", 8, 64, 8, 1024, 640, EG_DTYPE_FP8, RD, HE, 0.05,
     1.0, 1.0, 63, 0, 12, 0.0, 0.0},
    {"fp8-exact-hotrank-K1", 4, 16, 1, 128, 2048, EG_DTYPE_FP8, EX, HR, 0.0,
     0.5, 1.0, 1, 0, 13, 0.0, 0.0},
    /* more work than one grid covers: exercises the grid-stride loops */
    {"bf16-large", 2, 8, 2, 1024, 20000, EG_DTYPE_BF16, RD, U, 0.0, 0.0, 1.0, 0,
     0, 21, 0.0, 0.0},
    {"fp8-large", 2, 8, 2, 1024, 70000, EG_DTYPE_FP8, RD, U, 0.0, 0.0, 1.0, 0,
     0, 22, 0.0, 0.0},
    {"bf16-zero-tokens", 2, 8, 2, 256, 0, EG_DTYPE_BF16, EX, Z, 0.0, 0.0, 1.0,
     0, 0, 23, 0.0, 0.0},
    {"bf16-exact-dup-mask", 4, 1040, 8, 256, 3000, EG_DTYPE_BF16, EX, U, 0.2,
     0.0, 1.0, 0, 0, 24, 0.3, 0.0},
    {"fp8-random-hotexpert-dup1", 2, 16, 4, 512, 700, EG_DTYPE_FP8, RD, HE, 0.0,
     0.5, 1.0, 5, 1, 25, 1.0, 0.0},
    /* NaN and +-Inf in chosen tokens (docs/semantics.md); fp8: an Inf
     * is its block's scale */
    {"bf16-exact-nonfinite", 4, 16, 4, 1000, 900, EG_DTYPE_BF16, EX, U, 0.3,
     0.0, 1.0, 0, 2, 26, 0.0, 0.25},
    {"fp8-exact-nonfinite", 2, 16, 4, 512, 700, EG_DTYPE_FP8, EX, U, 0.0, 0.0,
     1.0, 0, 1, 27, 0.0, 0.5},
    {"fp8-random-nonfinite", 2, 16, 4, 512, 700, EG_DTYPE_FP8, RD, U, 0.0, 0.0,
     1.0, 0, 0, 28, 0.0, 0.5},
};

static int cuda_ok(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 1;
	fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
	return 0;
}

static size_t diff_bytes(const char *what, const void *a, const void *b,
			 size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t d = 0, first = 0;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i] && !d++)
			first = i;
	if (d)
		printf("  %s: %zu of %zu bytes differ, first at %zu "
		       "(host %02x device %02x)\n",
		       what, d, n, first, x[first], y[first]);
	return d;
}

typedef struct bufs {
	size_t nx, ns, nk; /* bytes */
	void *hx, *dx, *cx;
	float *hs, *ds, *cs;
	int32_t *hi, *di, *ci;
	float *hw, *dw, *cw;
} bufs_t;

static void bufs_free(bufs_t *b)
{
	free(b->hx);
	free(b->cx);
	free(b->hs);
	free(b->cs);
	free(b->hi);
	free(b->ci);
	free(b->hw);
	free(b->cw);
	cudaFree(b->dx);
	cudaFree(b->ds);
	cudaFree(b->di);
	cudaFree(b->dw);
}

/* +1 byte so zero-sized cases still get real pointers */
static int bufs_alloc(bufs_t *b, const eg_workload_t *w, uint32_t T)
{
	size_t n = (size_t)T * w->hidden;

	memset(b, 0, sizeof(*b));
	b->nx = n * eg_dtype_size(w->dtype);
	b->ns = w->dtype == EG_DTYPE_FP8 ? n / EG_FP8_BLOCK * 4 : 0;
	b->nk = (size_t)T * w->topk * 4;
	b->hx = calloc(1, b->nx + 1);
	b->cx = calloc(1, b->nx + 1);
	b->hs = calloc(1, b->ns + 1);
	b->cs = calloc(1, b->ns + 1);
	b->hi = calloc(1, b->nk + 1);
	b->ci = calloc(1, b->nk + 1);
	b->hw = calloc(1, b->nk + 1);
	b->cw = calloc(1, b->nk + 1);
	if (!b->hx || !b->cx || !b->hs || !b->cs || !b->hi || !b->ci ||
	    !b->hw || !b->cw)
		return EG_ENOMEM;
	if (!cuda_ok(cudaMalloc(&b->dx, b->nx + 1), "cudaMalloc") ||
	    !cuda_ok(cudaMalloc((void **)&b->ds, b->ns + 1), "cudaMalloc") ||
	    !cuda_ok(cudaMalloc((void **)&b->di, b->nk + 1), "cudaMalloc") ||
	    !cuda_ok(cudaMalloc((void **)&b->dw, b->nk + 1), "cudaMalloc"))
		return EG_ECUDA;
	return 0;
}

static int copy_back(bufs_t *b)
{
	if (!cuda_ok(cudaMemcpy(b->cx, b->dx, b->nx, cudaMemcpyDeviceToHost),
		     "copy x") ||
	    !cuda_ok(cudaMemcpy(b->cs, b->ds, b->ns, cudaMemcpyDeviceToHost),
		     "copy scales") ||
	    !cuda_ok(cudaMemcpy(b->ci, b->di, b->nk, cudaMemcpyDeviceToHost),
		     "copy idx") ||
	    !cuda_ok(cudaMemcpy(b->cw, b->dw, b->nk, cudaMemcpyDeviceToHost),
		     "copy w"))
		return EG_ECUDA;
	return 0;
}

static size_t compare(const bufs_t *b)
{
	return diff_bytes("x", b->hx, b->cx, b->nx) +
	       diff_bytes("scales", b->hs, b->cs, b->ns) +
	       diff_bytes("topk_idx", b->hi, b->ci, b->nk) +
	       diff_bytes("topk_w", b->hw, b->cw, b->nk);
}

/* Runs one case for one rank. Returns mismatching bytes, or <0 on a
 * CUDA or allocation error. */
static long run_rank(const gcase_t *c, uint32_t rank, cudaStream_t st,
		     int plant)
{
	eg_workload_t w;
	eg_gen_t g;
	bufs_t b;
	long ret;
	int rc;

	eg_workload_init(&w);
	w.world = c->W;
	w.experts = c->E;
	w.topk = c->K;
	w.hidden = c->H;
	w.tokens = c->T;
	w.tokens_mode = EG_TOKENS_UNIFORM;
	w.dtype = c->dtype;
	w.data = c->data;
	w.routing = c->routing;
	w.mask_ratio = c->mask;
	w.dup_ratio = c->dup;
	if (c->nf > 0.0) {
		w.nonfinite = EG_NONFINITE_INPUT;
		w.nonfinite_p = c->nf;
	}
	w.hot_frac = c->hot;
	w.hot_target = c->hot_target;
	w.zipf_s = c->zipf_s;
	w.seed = c->seed;
	w.iter = c->iter;
	rc = eg_gen_init(&g, &w);
	if (rc) {
		fprintf(stderr, "%s: eg_gen_init: %s\n", c->name,
			eg_strerror(rc));
		return -1;
	}
	rc = bufs_alloc(&b, &w, c->T);
	if (rc)
		goto fail;
	eg_gen_tokens_host(&g, rank, c->T, b.hx, b.hs);
	eg_gen_routing_host(&g, rank, c->T, b.hi, b.hw);
	rc = eg_gen_tokens_cuda(&g, rank, c->T, b.dx, b.ds, st);
	if (!rc)
		rc = eg_gen_routing_cuda(&g, rank, c->T, b.di, b.dw, st);
	if (rc || !cuda_ok(cudaDeviceSynchronize(), "kernels"))
		goto fail;
	rc = copy_back(&b);
	if (rc)
		goto fail;
	if (plant && b.nx) /* the comparison must see a one-bit fault */
		((unsigned char *)b.cx)[b.nx / 2] ^= 1;
	ret = (long)compare(&b);
	bufs_free(&b);
	eg_gen_fini(&g);
	return ret;
fail:
	fprintf(stderr, "%s rank %u: %s\n", c->name, rank,
		eg_strerror(rc ? rc : EG_ECUDA));
	bufs_free(&b);
	eg_gen_fini(&g);
	return -1;
}

int main(void)
{
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	cudaStream_t st;
	int bad = 0;
	long d;

	if (!eg_cuda_available()) {
		puts("skip: no CUDA device");
		return 77;
	}
	if (!cuda_ok(cudaStreamCreate(&st), "cudaStreamCreate"))
		return 99;

	d = run_rank(&cases[0], 1, NULL, 1);
	if (d != 1) {
		printf("FAIL self-check: a planted 1-bit fault gave %ld "
		       "differing bytes, want 1\n",
		       d);
		return d < 0 ? 99 : 1;
	}
	printf("ok self-check (planted fault detected)\n");

	for (size_t i = 0; i < ncases; i++) {
		const gcase_t *c = &cases[i];
		uint32_t ranks[2] = {0, c->W - 1};

		for (int r = 0; r < 2; r++) {
			/* default stream for rank 0, a created one else */
			d = run_rank(c, ranks[r], r ? st : NULL, 0);
			if (d < 0)
				return 99;
			printf("%s %s rank %u (T=%u H=%u K=%u E=%u)\n",
			       d ? "MISMATCH" : "ok", c->name, ranks[r], c->T,
			       c->H, c->K, c->E);
			bad |= d != 0;
		}
	}
	cudaStreamDestroy(st);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}

#endif
