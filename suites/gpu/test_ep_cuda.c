/* The device EP kernels (kernels/ep.cu) against their host twins, element
 * for element: layout, pack (wire buffers and receive views), finish,
 * expert stage, combine, the dense select and scatter, and the device
 * verifier against lib/core/verify.c on clean and planted-fault buffers.
 * Exit 0 all equal, 1 any difference, 77 no CUDA (build or device),
 * 99 CUDA error. */
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

#include "epgate/epgate.h"
#include "epgate/cuda_ep.h"

#define WMAX 8

static int failures;

static void fail(const char *wl, const char *what)
{
	printf("FAIL %s: %s\n", wl, what);
	failures++;
}

static void cuda_or_die(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return;
	fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
	exit(99);
}

static void *dalloc(size_t n)
{
	void *p = NULL;

	cuda_or_die(cudaMalloc(&p, n + 16), "cudaMalloc");
	cuda_or_die(cudaMemset(p, 0, n + 16), "cudaMemset");
	return p;
}

static void *h2d(const void *h, size_t n)
{
	void *d = dalloc(n);

	if (n)
		cuda_or_die(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "h2d");
	return d;
}

static void ok_rc(int rc, const char *what)
{
	if (rc == EG_OK)
		return;
	fprintf(stderr, "%s: %s\n", what, eg_strerror(rc));
	exit(rc == EG_ECUDA ? 99 : 1);
}

/* Device bytes against host bytes; prints the first difference. */
static size_t cmp_dev(const char *wl, const char *what, const void *host,
		      const void *dev, size_t n)
{
	unsigned char *c = malloc(n + 1);
	const unsigned char *h = host;
	size_t d = 0, first = 0;

	if (!c)
		exit(99);
	cuda_or_die(cudaDeviceSynchronize(), what);
	if (n)
		cuda_or_die(cudaMemcpy(c, dev, n, cudaMemcpyDeviceToHost),
			    "d2h");
	for (size_t i = 0; i < n; i++)
		if (c[i] != h[i] && !d++)
			first = i;
	if (d) {
		printf("FAIL %s: %s: %zu of %zu bytes differ, first at %zu "
		       "(host %02x device %02x)\n",
		       wl, what, d, n, first, h[first], c[first]);
		failures++;
	}
	free(c);
	return d;
}

/* Every array of a device receive buffer against a host one. */
static void cmp_recv(const char *wl, const char *what, const eg_recv_t *h,
		     const eg_recv_t *d)
{
	size_t rows = h->capacity, H = h->hidden, K = h->topk;
	char buf[128];

	if (h->num_rows != d->num_rows) {
		snprintf(buf, sizeof(buf), "%s: num_rows %u vs %u", what,
			 h->num_rows, d->num_rows);
		fail(wl, buf);
	}
	cmp_dev(wl, what, h->x, d->x, rows * H * eg_dtype_size(h->dtype));
	if (h->scales)
		cmp_dev(wl, what, h->scales, d->scales,
			rows * (H / EG_FP8_BLOCK) * 4);
	cmp_dev(wl, what, h->src_rank, d->src_rank, rows * 4);
	cmp_dev(wl, what, h->src_token, d->src_token, rows * 4);
	cmp_dev(wl, what, h->topk_idx, d->topk_idx, rows * K * 4);
	cmp_dev(wl, what, h->topk_w, d->topk_w, rows * K * 4);
	cmp_dev(wl, what, h->expert_count, d->expert_count,
		h->local_experts * 4);
	cmp_dev(wl, what, h->rank_prefix, d->rank_prefix, (h->world + 1) * 4);
}

/* The device verdict must be the host's: every count, and the first
 * mismatches (row_set entries of keys seen several times excepted, whose
 * row and copy count the device does not track). */
static void cmp_verdict(const char *wl, const char *what, const eg_verdict_t *h,
			const eg_verdict_t *d, int counts_only)
{
	char buf[256];
	int bad =
	    memcmp(h->checked, d->checked, sizeof(h->checked)) ||
	    memcmp(h->wrong, d->wrong, sizeof(h->wrong)) ||
	    h->missing_rows != d->missing_rows ||
	    h->duplicate_rows != d->duplicate_rows ||
	    h->unknown_rows != d->unknown_rows ||
	    h->nonfinite != d->nonfinite || h->max_abs_err != d->max_abs_err ||
	    h->max_err_ratio != d->max_err_ratio || h->n_first != d->n_first;

	/* beyond the recorded mismatches the device keeps an arbitrary
	 * subset: then only the counts can agree */
	if (eg_verdict_total_wrong(h) > EG_EP_VERIFY_CAP)
		counts_only = 1;
	for (uint32_t i = 0; !bad && !counts_only && i < h->n_first; i++) {
		eg_mismatch_t a = h->first[i], b = d->first[i];
		if (a.field == EG_FIELD_ROW_SET && a.expected == 0 &&
		    a.actual > 1) {
			a.row = b.row;
			a.actual = b.actual;
		}
		bad = memcmp(&a, &b, sizeof(a)) != 0;
	}
	if (bad) {
		char hb[2048], db[2048];
		eg_verdict_format(h, hb, sizeof(hb));
		eg_verdict_format(d, db, sizeof(db));
		snprintf(buf, sizeof(buf), "%s: verdicts differ", what);
		fail(wl, buf);
		printf("--- host\n%s--- device\n%s", hb, db);
	}
}

typedef struct gw {
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in[WMAX];
	void *dx[WMAX];
	float *ds[WMAX], *dw[WMAX];
	int32_t *di[WMAX];
	uint32_t W, T[WMAX], stride[WMAX];
	size_t xb, nb, K, rowb;
} gw_t;

static int gw_init(gw_t *x, const char *const *kv)
{
	char err[EG_ERRMSG_MAX], key[64];

	memset(x, 0, sizeof(*x));
	eg_workload_init(&x->w);
	for (; *kv; kv++) {
		const char *eq = strchr(*kv, '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *kv), *kv);
		if (eg_workload_set(&x->w, key, eq + 1, err) < 0) {
			fprintf(stderr, "%s: %s\n", *kv, err);
			exit(99);
		}
	}
	if (eg_workload_validate(&x->w, err) < 0) {
		fprintf(stderr, "%s: %s\n", x->w.name, err);
		exit(99);
	}
	x->W = x->w.world;
	x->K = x->w.topk;
	x->xb = (size_t)x->w.hidden * eg_dtype_size(x->w.dtype);
	x->nb = x->w.dtype == EG_DTYPE_FP8 ? x->w.hidden / EG_FP8_BLOCK : 0;
	x->rowb =
	    (size_t)x->w.hidden * eg_dtype_size(eg_combine_dtype(x->w.dtype));
	ok_rc(eg_gen_init(&x->g, &x->w), "eg_gen_init");
	for (uint32_t s = 0; s < x->W; s++) {
		eg_rank_input_t *in = &x->in[s];
		ok_rc(eg_gen_rank_input(&x->g, &x->w, s, in), "input");
		x->T[s] = in->tokens;
		x->stride[s] = in->tokens ? in->tokens : 1;
		x->dx[s] = h2d(in->x, in->tokens * x->xb);
		x->ds[s] = h2d(in->scales ? (void *)in->scales : (void *)"",
			       in->scales ? in->tokens * x->nb * 4 : 0);
		x->di[s] = h2d(in->topk_idx, in->tokens * x->K * 4);
		x->dw[s] = h2d(in->topk_w, in->tokens * x->K * 4);
	}
	return 0;
}

static void gw_fini(gw_t *x)
{
	for (uint32_t s = 0; s < x->W; s++) {
		cudaFree(x->dx[s]);
		cudaFree(x->ds[s]);
		cudaFree(x->di[s]);
		cudaFree(x->dw[s]);
		eg_rank_input_free(&x->in[s]);
	}
	eg_gen_fini(&x->g);
	eg_workload_fini(&x->w);
}

static eg_ep_src_t src_of(const gw_t *x, uint32_t s, int dev)
{
	eg_ep_src_t src;

	memset(&src, 0, sizeof(src));
	src.x = dev ? x->dx[s] : x->in[s].x;
	src.scales = dev ? x->ds[s] : x->in[s].scales;
	src.topk_idx = dev ? x->di[s] : x->in[s].topk_idx;
	src.topk_w = dev ? x->dw[s] : x->in[s].topk_w;
	src.nsrc = 1;
	src.stride = x->stride[s];
	src.first_src = s;
	src.tokens[0] = x->T[s];
	return src;
}

/* a2a: layout, pack to wire, pack to receive views, finish, expert,
 * combine; device against host at every stage. */
static void a2a_stages(gw_t *x)
{
	const char *wl = x->w.name;
	uint32_t W = x->W, cap = eg_recv_max_rows(&x->w);
	int32_t *hpos[WMAX], *dpos[WMAX];
	uint32_t cnt[WMAX][WMAX], pre[WMAX][WMAX + 1];
	eg_recv_t hr[WMAX], dr[WMAX];
	void *hy[WMAX], *dy[WMAX];

	for (uint32_t s = 0; s < W; s++) {
		eg_ep_src_t hs = src_of(x, s, 0), ds = src_of(x, s, 1);
		uint32_t *dcnt = dalloc(W * 4);
		size_t np = (size_t)W * x->stride[s] * 4;

		hpos[s] = malloc(np);
		dpos[s] = dalloc(np);
		eg_ep_layout_host(&x->w, &hs, 0, W, hpos[s], cnt[s]);
		ok_rc(eg_ep_layout_cuda(&x->w, &ds, 0, W, dpos[s], dcnt, NULL),
		      "layout");
		cmp_dev(wl, "layout pos", hpos[s], dpos[s], np);
		cmp_dev(wl, "layout count", cnt[s], dcnt, W * 4);
		cudaFree(dcnt);

		/* wire buffers, zeroed so padding compares */
		eg_ep_rows_t hv[WMAX], dv[WMAX];
		void *hwb[WMAX], *dwb[WMAX];
		size_t wb[WMAX];
		for (uint32_t d = 0; d < W; d++) {
			wb[d] = eg_ep_wire_bytes(&x->w, cnt[s][d]);
			hwb[d] = calloc(1, wb[d] + 16);
			dwb[d] = dalloc(wb[d]);
			eg_ep_rows_wire(&x->w, hwb[d], cnt[s][d], &hv[d]);
			eg_ep_rows_wire(&x->w, dwb[d], cnt[s][d], &dv[d]);
		}
		eg_ep_pack_host(&x->w, &hs, 0, W, hpos[s], hv);
		ok_rc(eg_ep_pack_cuda(&x->w, &ds, 0, W, dpos[s], dv, NULL),
		      "pack");
		for (uint32_t d = 0; d < W; d++)
			cmp_dev(wl, "pack wire", hwb[d], dwb[d], wb[d]);
		/* the same rows in 3 slices (what the engine sends by) */
		for (uint32_t d = 0; d < W; d++)
			cuda_or_die(cudaMemset(dwb[d], 0, wb[d]), "memset");
		for (uint32_t k = 0; k < 3; k++)
			ok_rc(eg_ep_pack_slice_cuda(&x->w, &ds, 0, W, dpos[s],
						    dv, cnt[s], k, 3, NULL),
			      "pack slice");
		for (uint32_t d = 0; d < W; d++) {
			cmp_dev(wl, "pack wire in 3 slices", hwb[d], dwb[d],
				wb[d]);
			free(hwb[d]);
			cudaFree(dwb[d]);
		}
		/* one slice alone writes only its rows */
		if (cnt[s][W - 1] >= 3) {
			uint32_t d = W - 1, n = cnt[s][d], c1[WMAX] = {0};
			eg_ep_rows_t one = dv[d];
			void *t = dalloc(eg_ep_wire_bytes(&x->w, n));
			int32_t first = -7, last = -7;

			eg_ep_rows_wire(&x->w, t, n, &one);
			cuda_or_die(cudaMemset(one.src_token, 0xff, 4 * n),
				    "memset");
			dv[d] = one;
			c1[d] = n; /* the other views' buffers are gone */
			ok_rc(eg_ep_pack_slice_cuda(&x->w, &ds, 0, W, dpos[s],
						    dv, c1, 1, 3, NULL),
			      "pack slice");
			cuda_or_die(cudaMemcpy(&first, one.src_token, 4,
					       cudaMemcpyDeviceToHost),
				    "d2h");
			cuda_or_die(cudaMemcpy(&last, one.src_token + n * 2 / 3,
					       4, cudaMemcpyDeviceToHost),
				    "d2h");
			if (first != -1 || last != -1)
				fail(wl, "a slice wrote rows outside it");
			cudaFree(t);
		}
	}
	/* every source packs straight into every destination's rows */
	for (uint32_t d = 0; d < W; d++) {
		pre[d][0] = 0;
		for (uint32_t s = 0; s < W; s++)
			pre[d][s + 1] = pre[d][s] + cnt[s][d];
		ok_rc(eg_recv_alloc(&hr[d], &x->w, d, cap), "recv");
		ok_rc(eg_recv_alloc_cuda(&dr[d], &x->w, d, cap), "recv cuda");
	}
	for (uint32_t s = 0; s < W; s++) {
		eg_ep_src_t hs = src_of(x, s, 0), ds = src_of(x, s, 1);
		eg_ep_rows_t hv[WMAX], dv[WMAX];

		for (uint32_t d = 0; d < W; d++) {
			eg_ep_rows_recv(&hr[d], pre[d][s], &hv[d]);
			eg_ep_rows_recv(&dr[d], pre[d][s], &dv[d]);
		}
		eg_ep_pack_host(&x->w, &hs, 0, W, hpos[s], hv);
		ok_rc(eg_ep_pack_cuda(&x->w, &ds, 0, W, dpos[s], dv, NULL),
		      "pack recv");
	}
	for (uint32_t d = 0; d < W; d++) {
		eg_recv_t e, de;
		eg_verdict_t vh, vd;

		eg_ep_finish_host(&hr[d], pre[d]);
		ok_rc(eg_ep_finish_cuda(&dr[d], pre[d], NULL), "finish");
		cmp_recv(wl, "pack+finish", &hr[d], &dr[d]);
		/* both verifiers against the reference: clean, equal */
		ok_rc(eg_ref_dispatch(&x->w, &x->g, d, &e), "ref");
		ok_rc(eg_recv_alloc_cuda(&de, &x->w, d, e.capacity), "alloc");
		ok_rc(eg_recv_copy_cuda(&de, &e, 1), "copy");
		eg_verdict_init(&vh);
		eg_verdict_init(&vd);
		if (eg_verify_dispatch(&x->w, &e, &hr[d], &vh) != EG_OK)
			fail(wl, "host twins differ from the reference");
		if (eg_verify_dispatch_cuda(&x->w, &de, &dr[d], &vd) != EG_OK)
			fail(wl, "device dispatch differs from the reference");
		cmp_verdict(wl, "clean dispatch", &vh, &vd, 0);
		eg_recv_free(&e);
		eg_recv_free_cuda(&de);

		hy[d] = malloc((size_t)(hr[d].num_rows + 1) * x->rowb);
		dy[d] = dalloc((size_t)(hr[d].num_rows + 1) * x->rowb);
		ok_rc(eg_expert_stage(&x->g, &hr[d], hy[d]), "expert host");
		ok_rc(eg_ep_expert_cuda(&x->g, &dr[d], dy[d], NULL), "expert");
		cmp_dev(wl, "expert stage", hy[d], dy[d],
			(size_t)hr[d].num_rows * x->rowb);
	}
	for (uint32_t s = 0; s < W; s++) {
		size_t nbytes = eg_combine_bytes(&x->w, s);
		const void *hys[WMAX], *dys[WMAX];
		void *ho = malloc(nbytes + 1), *dout = dalloc(nbytes);
		void *ref = malloc(nbytes + 1), *dref;
		eg_verdict_t vd;

		for (uint32_t d = 0; d < W; d++) {
			hys[d] = (uint8_t *)hy[d] + pre[d][s] * x->rowb;
			dys[d] = (uint8_t *)dy[d] + pre[d][s] * x->rowb;
		}
		eg_ep_combine_host(&x->w, x->T[s], W, hpos[s], x->stride[s],
				   hys, ho);
		ok_rc(eg_ep_combine_cuda(&x->w, x->T[s], W, dpos[s],
					 x->stride[s], dys, dout, NULL),
		      "combine");
		cmp_dev(wl, "combine", ho, dout, nbytes);
		ok_rc(eg_ref_combine(&x->w, &x->g, s, ref, NULL, NULL), "ref");
		dref = h2d(ref, nbytes);
		eg_verdict_init(&vd);
		if (eg_verify_combine_cuda(&x->w, s, EG_COMPARE_BITS, dref,
					   NULL, NULL, dout, &vd) != EG_OK)
			fail(wl, "device combine differs from the reference");
		free(ho);
		free(ref);
		cudaFree(dout);
		cudaFree(dref);
	}
	for (uint32_t d = 0; d < W; d++) {
		eg_recv_free(&hr[d]);
		eg_recv_free_cuda(&dr[d]);
		free(hy[d]);
		cudaFree(dy[d]);
	}
	for (uint32_t s = 0; s < W; s++) {
		free(hpos[s]);
		cudaFree(dpos[s]);
	}
}

/* dense: select from gathered sources, finish, scatter. */
static void dense_stages(gw_t *x)
{
	const char *wl = x->w.name;
	uint32_t W = x->W, Tmax = 1, cap = eg_recv_max_rows(&x->w);
	size_t K = x->K;

	for (uint32_t s = 0; s < W; s++)
		if (x->T[s] > Tmax)
			Tmax = x->T[s];
	size_t nrow = (size_t)W * Tmax;
	uint8_t *gx = calloc(nrow, x->xb + 1);
	float *gs = calloc(nrow * (x->nb + 1), 4), *gw = calloc(nrow * K, 4);
	int32_t *gi = calloc(nrow * K, 4);
	for (uint32_t s = 0; s < W; s++) {
		size_t o = (size_t)s * Tmax;

		if (!x->T[s])
			continue; /* an empty rank's arrays may be NULL */
		memcpy(gx + o * x->xb, x->in[s].x, x->T[s] * x->xb);
		if (x->nb)
			memcpy(gs + o * x->nb, x->in[s].scales,
			       x->T[s] * x->nb * 4);
		memcpy(gi + o * K, x->in[s].topk_idx, x->T[s] * K * 4);
		memcpy(gw + o * K, x->in[s].topk_w, x->T[s] * K * 4);
	}
	eg_ep_src_t hs, ds;
	memset(&hs, 0, sizeof(hs));
	hs.nsrc = W;
	hs.stride = Tmax;
	for (uint32_t s = 0; s < W; s++)
		hs.tokens[s] = x->T[s];
	ds = hs;
	hs.x = gx;
	hs.scales = gs;
	hs.topk_idx = gi;
	hs.topk_w = gw;
	ds.x = h2d(gx, nrow * x->xb);
	ds.scales = h2d(gs, nrow * x->nb * 4);
	ds.topk_idx = h2d(gi, nrow * K * 4);
	ds.topk_w = h2d(gw, nrow * K * 4);
	int32_t *hpos = malloc(nrow * 4), *dpos = dalloc(nrow * 4);
	uint32_t *dcnt = dalloc(W * 4);
	for (uint32_t d = 0; d < W; d++) {
		uint32_t cnt[WMAX], pre[WMAX + 1] = {0};
		eg_ep_rows_t hv[WMAX], dv[WMAX];
		eg_recv_t hr, dr;

		eg_ep_layout_host(&x->w, &hs, d, 1, hpos, cnt);
		ok_rc(eg_ep_layout_cuda(&x->w, &ds, d, 1, dpos, dcnt, NULL),
		      "dense layout");
		cmp_dev(wl, "dense layout pos", hpos, dpos, nrow * 4);
		cmp_dev(wl, "dense layout count", cnt, dcnt, W * 4);
		for (uint32_t s = 0; s < W; s++)
			pre[s + 1] = pre[s] + cnt[s];
		ok_rc(eg_recv_alloc(&hr, &x->w, d, cap), "recv");
		ok_rc(eg_recv_alloc_cuda(&dr, &x->w, d, cap), "recv cuda");
		for (uint32_t s = 0; s < W; s++) {
			eg_ep_rows_recv(&hr, pre[s], &hv[s]);
			eg_ep_rows_recv(&dr, pre[s], &dv[s]);
		}
		eg_ep_pack_host(&x->w, &hs, d, 1, hpos, hv);
		ok_rc(eg_ep_pack_cuda(&x->w, &ds, d, 1, dpos, dv, NULL),
		      "select");
		eg_ep_finish_host(&hr, pre);
		ok_rc(eg_ep_finish_cuda(&dr, pre, NULL), "finish");
		cmp_recv(wl, "dense select+finish", &hr, &dr);

		void *hy = malloc((hr.num_rows + 1) * x->rowb);
		void *dy = dalloc((hr.num_rows + 1) * x->rowb);
		void *hp = malloc(nrow * x->rowb), *dp = dalloc(nrow * x->rowb);
		ok_rc(eg_expert_stage(&x->g, &hr, hy), "expert");
		ok_rc(eg_ep_expert_cuda(&x->g, &dr, dy, NULL), "expert");
		eg_ep_scatter_host(&x->w, &hr, hy, Tmax, hp);
		ok_rc(eg_ep_scatter_cuda(&x->w, &dr, dy, Tmax, dp, NULL),
		      "scatter");
		cmp_dev(wl, "dense scatter", hp, dp, nrow * x->rowb);
		free(hy);
		free(hp);
		cudaFree(dy);
		cudaFree(dp);
		eg_recv_free(&hr);
		eg_recv_free_cuda(&dr);
	}
	free(hpos);
	cudaFree(dpos);
	cudaFree(dcnt);
	cudaFree((void *)ds.x);
	cudaFree((void *)ds.scales);
	cudaFree((void *)ds.topk_idx);
	cudaFree((void *)ds.topk_w);
	free(gx);
	free(gs);
	free(gw);
	free(gi);
}

enum {
	F_NONE,
	F_XBIT,
	F_XNAN,
	F_WEIGHT,
	F_IDX,
	F_DUPKEY,
	F_DROP,
	F_COUNT,
	F_PREFIX,
	F_UNKNOWN,
	F_SCALE,
	F_MANY,
	F__N
};
static const char *const fault_name[F__N] = {
    "none", "x-bit", "x-nan",  "weight",  "topk-idx", "dup-key",
    "drop", "count", "prefix", "unknown", "scale",    "many"};

static void plant(gw_t *x, eg_recv_t *a, int f)
{
	size_t H = x->w.hidden, K = x->K;
	uint32_t n = a->num_rows;

	switch (f) {
	case F_XBIT:
		((uint8_t *)a->x)[(n / 2) * x->xb + x->xb - 1] ^= 0x04;
		break;
	case F_XNAN:
		if (x->w.dtype == EG_DTYPE_FP8)
			((uint8_t *)a->x)[H + 1] = 0x7f;
		else
			eg_store_f32(x->w.dtype, a->x, H + 1,
				     eg_bf16_to_f32(0x7fc0));
		break;
	case F_WEIGHT:
		a->topk_w[(n - 1) * K] += 1.0f;
		break;
	case F_IDX:
		a->topk_idx[K - 1] = a->topk_idx[K - 1] >= 0 ? -1 : 0;
		break;
	case F_DUPKEY:
		a->src_rank[1] = a->src_rank[0];
		a->src_token[1] = a->src_token[0];
		break;
	case F_DROP:
		a->num_rows--;
		break;
	case F_COUNT:
		a->expert_count[a->local_experts - 1]++;
		break;
	case F_PREFIX:
		a->rank_prefix[1]++;
		break;
	case F_UNKNOWN:
		a->src_rank[n - 1] = 77;
		break;
	case F_SCALE:
		if (a->scales)
			a->scales[0] = a->scales[0] * 2.0f;
		break;
	case F_MANY:
		for (size_t i = 0; i < (size_t)n * x->xb; i++)
			((uint8_t *)a->x)[i] ^= 0x01;
		break;
	}
}

/* Both verifiers on planted faults: equal verdicts, and they see them. */
static void verifier_faults(gw_t *x, uint32_t d)
{
	const char *wl = x->w.name;
	eg_recv_t e, de, a, da;

	ok_rc(eg_ref_dispatch(&x->w, &x->g, d, &e), "ref");
	if (e.num_rows < 3)
		return; /* the faults need a few rows */
	ok_rc(eg_recv_alloc_cuda(&de, &x->w, d, e.capacity), "alloc");
	ok_rc(eg_recv_copy_cuda(&de, &e, 1), "copy");
	for (int f = 0; f < F__N; f++) {
		eg_verdict_t vh, vd;
		char what[64];

		if (f == F_SCALE && x->w.dtype != EG_DTYPE_FP8)
			continue;
		ok_rc(eg_recv_alloc(&a, &x->w, d, e.capacity), "alloc");
		ok_rc(eg_recv_alloc_cuda(&da, &x->w, d, e.capacity), "alloc");
		/* host copy of expected, then the fault, then to device */
		ok_rc(eg_recv_copy_cuda(&a, &de, 0), "copy back");
		plant(x, &a, f);
		ok_rc(eg_recv_copy_cuda(&da, &a, 1), "copy");
		eg_verdict_init(&vh);
		eg_verdict_init(&vd);
		eg_verify_dispatch(&x->w, &e, &a, &vh);
		eg_verify_dispatch_cuda(&x->w, &de, &da, &vd);
		snprintf(what, sizeof(what), "verify %s", fault_name[f]);
		cmp_verdict(wl, what, &vh, &vd, f == F_MANY);
		if ((f == F_NONE) != (eg_verdict_total_wrong(&vd) == 0))
			fail(wl, f == F_NONE ? "clean buffer reported"
					     : "planted fault not seen");
		eg_recv_free(&a);
		eg_recv_free_cuda(&da);
	}
	eg_recv_free_cuda(&de);
	eg_recv_free(&e);
}

/* Combine verifier: bits and bounded, clean and planted. */
static void verifier_combine(gw_t *x, uint32_t s)
{
	const char *wl = x->w.name;
	size_t n = (size_t)x->T[s] * x->w.hidden,
	       nbytes = n * x->rowb / x->w.hidden;
	void *ref = malloc(nbytes + 1), *act = malloc(nbytes + 1);
	double *r64 = malloc((n + 1) * 8), *m64 = malloc((n + 1) * 8);
	eg_dtype_t ct = eg_combine_dtype(x->w.dtype);

	if (n < 4)
		goto out;
	ok_rc(eg_ref_combine(&x->w, &x->g, s, ref, r64, m64), "ref");
	void *dref = h2d(ref, nbytes), *dr64 = h2d(r64, n * 8);
	void *dm64 = h2d(m64, n * 8);
	for (int f = 0; f < 4; f++) {
		eg_verdict_t vh, vd;
		char what[64];

		memcpy(act, ref, nbytes);
		if (f == 1)
			eg_store_f32(ct, act, n / 3,
				     eg_load_f32(ct, act, n / 3) + 1.0f);
		if (f == 2)
			eg_store_f32(ct, act, n - 1, eg_bf16_to_f32(0xff80));
		if (f == 3) /* a few ulps on many: within the bound */
			for (size_t i = 0; i < n; i += 7)
				eg_store_f32(ct, act, i,
					     eg_load_f32(ct, act, i) * 1.01f);
		void *dact = h2d(act, nbytes);
		for (int m = 0; m < 2; m++) {
			eg_compare_t mode =
			    m ? EG_COMPARE_BOUNDED : EG_COMPARE_BITS;
			eg_verdict_init(&vh);
			eg_verdict_init(&vd);
			eg_verify_combine(&x->w, s, mode, m ? NULL : ref, r64,
					  m64, act, &vh);
			eg_verify_combine_cuda(&x->w, s, mode, m ? NULL : dref,
					       dr64, dm64, dact, &vd);
			snprintf(what, sizeof(what), "verify combine %d/%s", f,
				 m ? "bounded" : "bits");
			cmp_verdict(wl, what, &vh, &vd, 0);
			/* f 3 scales values: zeros stay zero */
			if (!m && f < 3 &&
			    (f == 0) != (eg_verdict_total_wrong(&vd) == 0))
				fail(wl, "combine bits verdict wrong way");
		}
		cudaFree(dact);
	}
	cudaFree(dref);
	cudaFree(dr64);
	cudaFree(dm64);
out:
	free(ref);
	free(act);
	free(r64);
	free(m64);
}

#define WL(...)                                                                \
	(const char *const[])                                                  \
	{                                                                      \
		__VA_ARGS__, NULL                                              \
	}

int main(void)
{
	const char *const *cases[] = {
	    WL("name=bf16-exact", "world=4", "experts=16", "topk=4",
	       "hidden=256", "tokens=300"),
	    WL("name=fp8-random-zipf", "world=2", "experts=8", "topk=4",
	       "hidden=512", "tokens=257", "dtype=fp8", "data=random",
	       "routing=zipf:1.2", "mask=0.2"),
	    WL("name=fp32-uneven-h7", "world=3", "experts=12", "topk=5",
	       "hidden=7", "tokens=uneven:40", "dtype=fp32", "data=random",
	       "routing=hot-rank:1:0.6"),
	    WL("name=w8-hot-expert-zero", "world=8", "experts=64", "topk=8",
	       "hidden=128", "tokens=700", "routing=hot-expert:9:0.5",
	       "zero_ranks=2"),
	    WL("name=bf16-large", "world=2", "experts=256", "topk=8",
	       "hidden=7168", "tokens=1500", "data=random"),
	    WL("name=tiny", "world=2", "experts=2", "topk=1", "hidden=3",
	       "tokens=1"),
	    WL("name=all-masked", "world=2", "experts=8", "topk=2", "tokens=9",
	       "mask=1"),
	    WL("name=bf16-odd-h", "world=3", "experts=9", "topk=3", "hidden=33",
	       "tokens=1100", "mask=0.1"),
	};
	size_t nc = sizeof(cases) / sizeof(cases[0]);

	if (!eg_cuda_available()) {
		puts("skip: no CUDA device");
		return 77;
	}
	for (size_t i = 0; i < nc; i++) {
		gw_t x;
		int before = failures;

		gw_init(&x, cases[i]);
		a2a_stages(&x);
		dense_stages(&x);
		verifier_faults(&x, 0);
		verifier_faults(&x, x.W - 1);
		verifier_combine(&x, 0);
		printf("%s %s (W=%u E=%u K=%u H=%u %s)\n",
		       failures == before ? "ok" : "FAILED", x.w.name, x.W,
		       x.w.experts, x.w.topk, x.w.hidden,
		       eg_dtype_name(x.w.dtype));
		gw_fini(&x);
	}
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

#endif
