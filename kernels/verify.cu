/* The device verifier: dispatch's received rows and combine's output
 * checked against the expected ones on the GPU, with the host verifier's
 * verdict, counts and first mismatches in its order (lib/core/verify.c,
 * the host twin); built with --fmad=false like ep.cu. */
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

/* -------------------------------------------------------------- verifier */

/* A recorded mismatch with its place in the host verifier's walk:
 * (section, major, minor) ascending is the order lib/core/verify.c finds them
 * in (1 rank_prefix, 2 expert_count, 3 rows, 4 row set; combine 0). */
struct eg__vrec {
	uint32_t sec, minor;
	uint64_t major;
	eg_mismatch_t m;
};

struct eg__vdev {
	unsigned long long wrong[EG_FIELD__COUNT];
	unsigned long long missing, duplicate, unknown, nonfinite;
	unsigned long long max_abs, max_ratio; /* bits of doubles >= 0 */
	unsigned int nrec, bad_order;
	eg__vrec rec[EG_EP_VERIFY_CAP];
};

static __device__ void eg__rec(eg__vdev *v, eg_field_t f, uint32_t sec,
			       uint64_t major, uint32_t minor, int32_t rank,
			       int32_t sr, int32_t st, int32_t ex, int64_t row,
			       int64_t col, uint64_t e, uint64_t a)
{
	atomicAdd(&v->wrong[f], 1ull);
	unsigned slot = atomicAdd(&v->nrec, 1u);
	if (slot >= EG_EP_VERIFY_CAP)
		return;
	eg__vrec *r = &v->rec[slot];
	r->sec = sec;
	r->major = major;
	r->minor = minor;
	r->m.field = f;
	r->m.rank = rank;
	r->m.src_rank = sr;
	r->m.src_token = st;
	r->m.expert = ex;
	r->m.row = row;
	r->m.col = col;
	r->m.expected = e;
	r->m.actual = a;
}

static __device__ uint64_t eg__key(int32_t sr, int32_t st)
{
	return (uint64_t)(uint32_t)sr << 32 | (uint32_t)st;
}

static __device__ int eg__f32_nonfinite(uint32_t b)
{
	return (b & 0x7f800000u) == 0x7f800000u;
}

struct eg__vd {
	eg_recv_t e, a; /* device arrays */
	uint32_t n, ne, na, nb;
	int32_t d;
};

static __global__ void eg__v_meta(eg__vd q, eg__vdev *v)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t W = q.e.world, L = q.e.local_experts;

	if (i <= W && q.e.rank_prefix[i] != q.a.rank_prefix[i])
		eg__rec(v, EG_FIELD_RANK_PREFIX, 1, i, 0, q.d,
			i < W ? (int32_t)i : -1, -1, -1, -1, i,
			q.e.rank_prefix[i], q.a.rank_prefix[i]);
	if (i < L && q.e.expert_count[i] != q.a.expert_count[i])
		eg__rec(v, EG_FIELD_EXPERT_COUNT, 2, i, 0, q.d, -1, -1,
			q.d * (int32_t)L + (int32_t)i, -1, i,
			q.e.expert_count[i], q.a.expert_count[i]);
}

static __global__ void eg__v_src(eg__vd q, eg__vdev *v)
{
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < q.n;
	     i += step) {
		int32_t sr = q.e.src_rank[i], st = q.e.src_token[i];
		int32_t ar = q.a.src_rank[i], at = q.a.src_token[i];

		if (ar != sr || at != st)
			eg__rec(v, EG_FIELD_SRC, 3, i, 0, q.d, sr, st, -1, i,
				-1, eg__key(sr, st), eg__key(ar, at));
	}
}

static __global__ void eg__v_x(eg__vd q, eg__vdev *v)
{
	uint32_t H = q.e.hidden, dt = (uint32_t)q.e.dtype;
	size_t n = (size_t)q.n * H, step = (size_t)gridDim.x * blockDim.x;

	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
	     j += step) {
		size_t i = j / H, h = j % H;
		uint64_t eb = eg_ep_bits(dt, q.e.x, j);
		uint64_t ab = eg_ep_bits(dt, q.a.x, j);
		/* a non-finite value where the reference has none */
		int nf = eg_ep_nonfinite(dt, ab) && !eg_ep_nonfinite(dt, eb);

		if (nf)
			atomicAdd(&v->nonfinite, 1ull);
		if (eb != ab)
			eg__rec(v, EG_FIELD_X, 3, i, 1 + (uint32_t)h, q.d,
				q.e.src_rank[i], q.e.src_token[i], -1, i, h, eb,
				ab);
	}
}

static __global__ void eg__v_scales(eg__vd q, eg__vdev *v)
{
	uint32_t H = q.e.hidden, nb = q.nb;
	size_t n = (size_t)q.n * nb, step = (size_t)gridDim.x * blockDim.x;

	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
	     j += step) {
		size_t i = j / nb, b = j % nb;
		uint32_t eb = ((const uint32_t *)q.e.scales)[j];
		uint32_t ab = ((const uint32_t *)q.a.scales)[j];
		int nf = eg__f32_nonfinite(ab) && !eg__f32_nonfinite(eb);

		if (nf)
			atomicAdd(&v->nonfinite, 1ull);
		if (eb != ab)
			eg__rec(v, EG_FIELD_SCALES, 3, i, 1 + H + (uint32_t)b,
				q.d, q.e.src_rank[i], q.e.src_token[i], -1, i,
				b, eb, ab);
	}
}

static __global__ void eg__v_topk(eg__vd q, eg__vdev *v)
{
	uint32_t H = q.e.hidden, K = q.e.topk, L = q.e.local_experts;
	size_t n = (size_t)q.n * K, step = (size_t)gridDim.x * blockDim.x;

	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
	     j += step) {
		size_t i = j / K, k = j % K;
		int32_t sr = q.e.src_rank[i], st = q.e.src_token[i];
		int32_t ei = q.e.topk_idx[j], ai = q.a.topk_idx[j];
		int32_t ex = ei >= 0 ? q.d * (int32_t)L + ei : -1;
		uint32_t ew = ((const uint32_t *)q.e.topk_w)[j];
		uint32_t aw = ((const uint32_t *)q.a.topk_w)[j];
		uint32_t mi = 1 + H + q.nb + 2 * (uint32_t)k;
		int nf = eg__f32_nonfinite(aw);

		if (ei != ai)
			eg__rec(v, EG_FIELD_TOPK_IDX, 3, i, mi, q.d, sr, st, ex,
				i, k, (uint64_t)(int64_t)ei,
				(uint64_t)(int64_t)ai);
		if (nf)
			atomicAdd(&v->nonfinite, 1ull);
		if (ew != aw || nf)
			eg__rec(v, EG_FIELD_TOPK_W, 3, i, mi + 1, q.d, sr, st,
				ex, i, k, ew, aw);
	}
}

static __global__ void eg__v_order(eg__vd q, eg__vdev *v)
{
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x + 1;
	     i < q.ne; i += step)
		if (eg__key(q.e.src_rank[i], q.e.src_token[i]) <=
		    eg__key(q.e.src_rank[i - 1], q.e.src_token[i - 1]))
			atomicAdd(&v->bad_order, 1u);
}

/* Index of key among the expected rows (sorted), or -1. */
static __device__ int64_t eg__find(const eg__vd &q, uint64_t key)
{
	uint32_t lo = 0, hi = q.ne;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t k = eg__key(q.e.src_rank[mid], q.e.src_token[mid]);
		if (k == key)
			return mid;
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* pass 0: hits, first row per expected key, unknown rows; pass 1: the
 * second row of each duplicated key. */
static __global__ void eg__v_rows(eg__vd q, eg__vdev *v, uint32_t *hits,
				  uint32_t *first, uint32_t *second, int pass)
{
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < q.na;
	     j += step) {
		int32_t sr = q.a.src_rank[j], st = q.a.src_token[j];
		int64_t f = eg__find(q, eg__key(sr, st));

		if (pass == 1) {
			if (f >= 0 && first[f] != (uint32_t)j)
				atomicMin(&second[f], (uint32_t)j);
			continue;
		}
		if (f >= 0) {
			atomicAdd(&hits[f], 1u);
			atomicMin(&first[f], (uint32_t)j);
			continue;
		}
		atomicAdd(&v->unknown, 1ull);
		eg__rec(v, EG_FIELD_ROW_SET, 4, eg__key(sr, st), (uint32_t)j,
			q.d, sr, st, -1, j, -1, 0, 1);
	}
}

static __global__ void eg__v_missing(eg__vd q, eg__vdev *v,
				     const uint32_t *hits,
				     const uint32_t *second)
{
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < q.ne;
	     i += step) {
		int32_t sr = q.e.src_rank[i], st = q.e.src_token[i];
		uint64_t key = eg__key(sr, st);
		uint32_t h = hits[i];

		if (h == 0) {
			atomicAdd(&v->missing, 1ull);
			eg__rec(v, EG_FIELD_ROW_SET, 4, key, 0, q.d, sr, st, -1,
				-1, -1, 1, 0);
		}
		if (h > 1)
			atomicAdd(&v->duplicate, (unsigned long long)(h - 1));
		for (uint32_t c = 1; c < h; c++)
			eg__rec(v, EG_FIELD_ROW_SET, 4, key, c, q.d, sr, st, -1,
				second[i], -1, 1, h);
	}
}

static int eg__vrec_cmp(const void *pa, const void *pb)
{
	const eg__vrec *a = (const eg__vrec *)pa, *b = (const eg__vrec *)pb;

	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	return a->minor < b->minor ? -1 : a->minor > b->minor;
}

/* Device counts and sorted records into lv. */
static int eg__vdev_collect(eg__vdev *dv, eg_verdict_t *lv)
{
	eg__vdev *h = (eg__vdev *)malloc(sizeof(*h));
	double d;
	unsigned n;

	if (!h)
		return EG_ENOMEM;
	if (cudaMemcpy(h, dv, sizeof(*h), cudaMemcpyDeviceToHost) !=
	    cudaSuccess) {
		free(h);
		return EG_ECUDA;
	}
	for (int f = 0; f < EG_FIELD__COUNT; f++)
		lv->wrong[f] += h->wrong[f];
	lv->missing_rows += h->missing;
	lv->duplicate_rows += h->duplicate;
	lv->unknown_rows += h->unknown;
	lv->nonfinite += h->nonfinite;
	memcpy(&d, &h->max_abs, sizeof(d));
	if (d > lv->max_abs_err)
		lv->max_abs_err = d;
	memcpy(&d, &h->max_ratio, sizeof(d));
	if (d > lv->max_err_ratio)
		lv->max_err_ratio = d;
	n = h->nrec < EG_EP_VERIFY_CAP ? h->nrec : EG_EP_VERIFY_CAP;
	qsort(h->rec, n, sizeof(h->rec[0]), eg__vrec_cmp);
	for (unsigned i = 0; i < n && lv->n_first < EG_VERIFY_MAX_FIRST; i++)
		lv->first[lv->n_first++] = h->rec[i].m;
	n = h->bad_order;
	free(h);
	return n ? EG_EINVAL : EG_OK;
}

/* After the kernels: the device's counts and records merged into v. */
static int eg__vdev_finish(eg__vdev *dv, eg_verdict_t *lv, eg_verdict_t *v)
{
	int rc;

	if (cudaGetLastError() != cudaSuccess ||
	    cudaDeviceSynchronize() != cudaSuccess)
		return EG_ECUDA;
	rc = eg__vdev_collect(dv, lv);
	if (rc < 0)
		return rc;
	eg_verdict_merge(v, lv);
	return eg_verdict_total_wrong(lv) ? EG_EMISMATCH : EG_OK;
}

/* Whether expected and actual are two receive layouts of one rank of w. */
static int eg__vd_shapes_ok(const eg_workload_t *w, const eg_recv_t *expected,
			    const eg_recv_t *actual)
{
	return !(expected->rank != actual->rank || expected->rank >= w->world ||
		 expected->num_rows > expected->capacity ||
		 expected->world != w->world || actual->world != w->world ||
		 expected->hidden != w->hidden || actual->hidden != w->hidden ||
		 expected->topk != w->topk || actual->topk != w->topk ||
		 expected->dtype != w->dtype || actual->dtype != w->dtype ||
		 expected->local_experts != eg_workload_local_experts(w) ||
		 actual->local_experts != expected->local_experts);
}

/* The scalar checks, on the host, in the host verifier's order, and the
 * counts of what the kernels check; q.n: the rows both sides have. */
static void eg__vd_host(const eg_workload_t *w, const eg_recv_t *actual,
			eg__vd *q, eg_verdict_t *lv)
{
	uint32_t H = w->hidden, K = w->topk, L = q->e.local_experts;

	lv->checked[EG_FIELD_NUM_ROWS]++;
	if (q->ne != q->na)
		eg_verdict_wrong_at(lv, EG_FIELD_NUM_ROWS, q->d, -1, -1, -1, -1,
				    -1, q->ne, q->na);
	if (q->na > actual->capacity) {
		lv->checked[EG_FIELD_NUM_ROWS]++;
		eg_verdict_wrong_at(lv, EG_FIELD_NUM_ROWS, q->d, -1, -1, -1, -1,
				    0, actual->capacity, q->na);
		q->na = actual->capacity;
	}
	q->n = q->ne < q->na ? q->ne : q->na;
	lv->checked[EG_FIELD_RANK_PREFIX] += w->world + 1u;
	lv->checked[EG_FIELD_EXPERT_COUNT] += L;
	lv->checked[EG_FIELD_SRC] += q->n;
	lv->checked[EG_FIELD_X] += (uint64_t)q->n * H;
	lv->checked[EG_FIELD_SCALES] += (uint64_t)q->n * q->nb;
	lv->checked[EG_FIELD_TOPK_IDX] += (uint64_t)q->n * K;
	lv->checked[EG_FIELD_TOPK_W] += (uint64_t)q->n * K;
	lv->checked[EG_FIELD_ROW_SET] += q->ne > q->na ? q->ne : q->na;
}

/* The device checks of one dispatch, on the default stream. */
static void eg__vd_launch(const eg_workload_t *w, const eg__vd &q, eg__vdev *dv,
			  uint32_t *hits, uint32_t *first, uint32_t *second)
{
	uint32_t H = w->hidden, K = w->topk, L = q.e.local_experts;

	eg__v_meta<<<eg__grid(w->world + 1u + L, 256), 256>>>(q, dv);
	if (q.n) {
		eg__v_src<<<eg__grid(q.n, 256), 256>>>(q, dv);
		eg__v_x<<<eg__grid((size_t)q.n * H, 256), 256>>>(q, dv);
		if (q.nb)
			eg__v_scales<<<eg__grid((size_t)q.n * q.nb, 256),
				       256>>>(q, dv);
		if (K)
			eg__v_topk<<<eg__grid((size_t)q.n * K, 256), 256>>>(q,
									    dv);
	}
	if (q.ne > 1)
		eg__v_order<<<eg__grid(q.ne, 256), 256>>>(q, dv);
	if (q.na) {
		eg__v_rows<<<eg__grid(q.na, 256), 256>>>(q, dv, hits, first,
							 second, 0);
		eg__v_rows<<<eg__grid(q.na, 256), 256>>>(q, dv, hits, first,
							 second, 1);
	}
	if (q.ne)
		eg__v_missing<<<eg__grid(q.ne, 256), 256>>>(q, dv, hits,
							    second);
}

extern "C" int eg_verify_dispatch_cuda(const eg_workload_t *w,
				       const eg_recv_t *expected,
				       const eg_recv_t *actual, eg_verdict_t *v)
{
	eg_verdict_t lv;
	eg__vd q;
	eg__vdev *dv = NULL;
	uint32_t *hits = NULL, *first = NULL, *second = NULL;
	size_t ne;
	int rc = EG_ECUDA;

	if (!w || !expected || !actual || !v)
		return EG_EINVAL;
	if (!eg__vd_shapes_ok(w, expected, actual))
		return EG_EINVAL;
	/* the buffers' writers may be on non-blocking streams */
	if (cudaDeviceSynchronize() != cudaSuccess)
		return EG_ECUDA;
	eg_verdict_init(&lv);
	memset(&q, 0, sizeof(q));
	q.e = *expected;
	q.a = *actual;
	q.d = (int32_t)expected->rank;
	q.ne = expected->num_rows;
	q.na = actual->num_rows;
	q.nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	eg__vd_host(w, actual, &q, &lv);

	ne = q.ne ? q.ne : 1;
	if (cudaMalloc((void **)&dv, sizeof(*dv)) != cudaSuccess ||
	    cudaMalloc((void **)&hits, ne * 4) != cudaSuccess ||
	    cudaMalloc((void **)&first, ne * 4) != cudaSuccess ||
	    cudaMalloc((void **)&second, ne * 4) != cudaSuccess ||
	    cudaMemset(dv, 0, sizeof(*dv)) != cudaSuccess ||
	    cudaMemset(hits, 0, ne * 4) != cudaSuccess ||
	    cudaMemset(first, 0xff, ne * 4) != cudaSuccess ||
	    cudaMemset(second, 0xff, ne * 4) != cudaSuccess)
		goto out;
	eg__vd_launch(w, q, dv, hits, first, second);
	rc = eg__vdev_finish(dv, &lv, v);
out:
	void *const p[] = {dv, hits, first, second};

	eg_cuda_free_all(p, sizeof(p) / sizeof(p[0]));
	return rc;
}

struct eg__vc {
	const void *e, *a;
	const double *r64, *m64;
	uint32_t T, H, ct, mode;
	int32_t s;
	double u, tiny;
};

static __global__ void eg__v_combine(eg__vc q, eg__vdev *v)
{
	size_t n = (size_t)q.T * q.H, step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += step) {
		uint64_t ab = eg_ep_bits(q.ct, q.a, i), eb;
		int nf = eg_ep_nonfinite(q.ct, ab), bad;

		if (q.mode == EG_COMPARE_BITS) {
			eb = eg_ep_bits(q.ct, q.e, i);
			nf = nf && !eg_ep_nonfinite(q.ct, eb);
			bad = !eg_ep_match(q.ct, eb, ab);
		} else {
			double r = q.r64[i];
			double a = eg_ep_load(q.ct, q.a, i);
			double bound = 4.0 * q.u * q.m64[i] + q.u * fabs(r);
			double err = fabs(a - r);
			int rnf = !isfinite(r);

			if (bound == 0.0)
				bound = q.tiny;
			/* nonfinite data: the class, not a bound */
			if (rnf)
				nf = 0;
			bad = rnf ? !eg_ep_match_nonfinite(r, a)
				  : nf || !(err <= bound);
			if (!nf && !rnf) {
				double ratio = err / bound;

				atomicMax(&v->max_abs,
					  (unsigned long long)
					      __double_as_longlong(err));
				atomicMax(&v->max_ratio,
					  (unsigned long long)
					      __double_as_longlong(ratio));
			}
			if (q.e) {
				eb = eg_ep_bits(q.ct, q.e, i);
			} else {
				uint32_t tmp = 0;
				eg_ep_store(q.ct, &tmp, 0, (float)r);
				eb = eg_ep_bits(q.ct, &tmp, 0);
			}
		}
		if (nf)
			atomicAdd(&v->nonfinite, 1ull);
		if (bad)
			eg__rec(v, EG_FIELD_COMBINE, 0, i, 0, q.s, q.s,
				(int32_t)(i / q.H), -1, (int64_t)(i / q.H),
				(int64_t)(i % q.H), eb, ab);
	}
}

extern "C" int eg_verify_combine_cuda(const eg_workload_t *w, uint32_t s,
				      eg_compare_t mode, const void *d_expected,
				      const double *d_ref64,
				      const double *d_mag64,
				      const void *d_actual, eg_verdict_t *v)
{
	eg_verdict_t lv;
	eg__vc q;
	eg__vdev *dv = NULL;
	eg_dtype_t cdt;
	int rc = EG_ECUDA;

	if (!eg_verify_combine_args_ok(w, s, mode, d_expected, d_ref64, d_mag64,
				       d_actual, v))
		return EG_EINVAL;
	if (cudaDeviceSynchronize() != cudaSuccess)
		return EG_ECUDA;
	eg_verdict_init(&lv);
	cdt = eg_combine_dtype(w->dtype);
	memset(&q, 0, sizeof(q));
	q.e = d_expected;
	q.a = d_actual;
	q.r64 = d_ref64;
	q.m64 = d_mag64;
	q.T = eg_workload_tokens(w, s);
	q.H = w->hidden;
	q.ct = (uint32_t)cdt;
	q.mode = (uint32_t)mode;
	q.s = (int32_t)s;
	if (mode == EG_COMPARE_BOUNDED) {
		/* the host's u = 2^-(p-1) and its smallest normal */
		int p = (int)eg_dtype_mantissa_bits(cdt);
		q.u = 1.0;
		for (int i = 0; i < p - 1; i++)
			q.u = q.u * 0.5;
		q.tiny = 1.0;
		for (int i = 0; i < (cdt == EG_DTYPE_FP8 ? 6 : 126); i++)
			q.tiny = q.tiny * 0.5;
	}
	lv.checked[EG_FIELD_COMBINE] += (uint64_t)q.T * q.H;
	if (cudaMalloc((void **)&dv, sizeof(*dv)) != cudaSuccess ||
	    cudaMemset(dv, 0, sizeof(*dv)) != cudaSuccess)
		goto out;
	if (q.T && q.H)
		eg__v_combine<<<eg__grid((size_t)q.T * q.H, 256), 256>>>(q, dv);
	rc = eg__vdev_finish(dv, &lv, v);
out:
	cudaFree(dv);
	return rc;
}
