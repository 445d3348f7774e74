/* The CUDA memory space: device memory of the current device (open_on
 * picks one and makes it current), the generator, expert and verifier
 * kernels (kernels/gen.cu, ep.cu) on one stream, CUDA events as timing
 * marks. The device verifiers take device copies of
 * the expected data: this space uploads the host reference into scratch
 * buffers for each comparison. Built with CUDA only (Makefile.am). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "epgate/space.h"

typedef struct eg__cuda {
	cudaStream_t stream;
	int own_stream; /* made by open_on: close destroys it */
	cudaEvent_t ev[EG_SPACE_MARKS];
} eg__cuda_t;

/* A CUDA call's result: a failure is cleared (cudaGetLastError) and
 * becomes EG_ECUDA. */
static int eg__cu(cudaError_t e)
{
	if (e == cudaSuccess)
		return EG_OK;
	cudaGetLastError();
	return EG_ECUDA;
}

static void eg__c_close(void *state)
{
	eg__cuda_t *c = state;

	if (!c)
		return;
	for (unsigned i = 0; i < EG_SPACE_MARKS; i++)
		if (c->ev[i])
			cudaEventDestroy(c->ev[i]);
	if (c->own_stream)
		cudaStreamDestroy(c->stream);
	free(c);
}

/* An instance on stream, or with own on a non-blocking stream of its own
 * when stream is NULL; err (if given) names the CUDA call that failed. */
static int eg__c_new(void **state, cudaStream_t stream, int own, char *err,
		     size_t errlen)
{
	eg__cuda_t *c = calloc(1, sizeof(*c));
	const char *call = "cudaStreamCreate";
	cudaError_t e = cudaSuccess;

	*state = NULL;
	if (!c)
		return EG_ENOMEM;
	c->stream = stream;
	if (own && !stream) {
		e = cudaStreamCreateWithFlags(&c->stream,
					      cudaStreamNonBlocking);
		c->own_stream = e == cudaSuccess;
	}
	for (unsigned i = 0; i < EG_SPACE_MARKS && e == cudaSuccess; i++)
		if ((e = cudaEventCreate(&c->ev[i])) != cudaSuccess) {
			c->ev[i] = NULL;
			call = "cudaEventCreate";
		}
	if (e != cudaSuccess) {
		if (err)
			snprintf(err, errlen, "%s: %s", call,
				 cudaGetErrorString(e));
		eg__c_close(c);
		return eg__cu(e);
	}
	*state = c;
	return EG_OK;
}

static int eg__c_open(void **state, void *stream)
{
	return eg__c_new(state, (cudaStream_t)stream, 0, NULL, 0);
}

static int eg__c_open_on(void **state, int *device, uint32_t local_rank,
			 void **stream, char *err, size_t errlen)
{
	int ndev = 0, rc;
	cudaError_t e = cudaGetDeviceCount(&ndev);

	*state = NULL;
	if (e != cudaSuccess || ndev < 1) {
		snprintf(err, errlen, "no CUDA device (%s)",
			 e != cudaSuccess ? cudaGetErrorString(e) : "0 found");
		return EG_ENOSYS;
	}
	if (*device < 0)
		*device = (int)(local_rank % (uint32_t)ndev);
	if (*device >= ndev || cudaSetDevice(*device) != cudaSuccess) {
		snprintf(err, errlen, "cannot use CUDA device %d of %d",
			 *device, ndev);
		return EG_ECUDA;
	}
	if ((rc = eg__c_new(state, (cudaStream_t)*stream, 1, err, errlen)) < 0)
		return rc;
	*stream = ((eg__cuda_t *)*state)->stream;
	return EG_OK;
}

/* 16 spare bytes: the kernels' 16-byte accesses may read past a row */
static int eg__c_alloc(void *state, void **p, size_t bytes)
{
	(void)state;
	*p = NULL;
	if (eg__cu(cudaMalloc(p, bytes + 16)) < 0) {
		*p = NULL;
		return EG_ENOMEM;
	}
	return EG_OK;
}

static int eg__c_sync(void *state)
{
	eg__cuda_t *c = state;

	return eg__cu(cudaStreamSynchronize(c->stream));
}

/* zeroed on the stream: a cudaMemset on the legacy stream is not ordered
 * before copies on a non-blocking one and could land after them */
static int eg__c_zalloc(void *state, void **p, size_t bytes)
{
	eg__cuda_t *c = state;
	int rc = eg__c_alloc(state, p, bytes);

	if (rc == EG_OK)
		rc = eg__cu(cudaMemsetAsync(*p, 0, bytes + 16, c->stream));
	return rc == EG_OK ? eg__c_sync(state) : rc;
}

static void eg__c_free(void *state, void *p)
{
	(void)state;
	if (p)
		cudaFree(p);
}

static int eg__c_upload(void *state, void *dst, const void *src, size_t bytes)
{
	(void)state;
	if (!bytes)
		return EG_OK;
	return eg__cu(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

/* cudaMemcpyDefault: either side may be host or device memory */
static int eg__c_memcpy(void *state, void *dst, const void *src, size_t bytes)
{
	eg__cuda_t *c = state;
	int rc;

	if (!bytes)
		return EG_OK;
	rc = eg__cu(
	    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c->stream));
	return rc == EG_OK ? eg__c_sync(state) : rc;
}

static int eg__c_recv_alloc(void *state, eg_recv_t *r, const eg_workload_t *w,
			    uint32_t rank, uint32_t capacity)
{
	(void)state;
	return eg_recv_alloc_cuda(r, w, rank, capacity);
}

static void eg__c_recv_free(void *state, eg_recv_t *r)
{
	(void)state;
	eg_recv_free_cuda(r);
}

static int eg__c_generate(void *state, const eg_gen_t *g, eg_rank_input_t *in)
{
	eg__cuda_t *c = state;
	int rc = eg_gen_tokens_cuda(g, in->rank, in->tokens, in->x, in->scales,
				    c->stream);

	if (rc == EG_OK)
		rc = eg_gen_routing_cuda(g, in->rank, in->tokens, in->topk_idx,
					 in->topk_w, c->stream);
	return rc;
}

static int eg__c_expert(void *state, const eg_gen_t *g, const eg_recv_t *r,
			void *y)
{
	eg__cuda_t *c = state;

	return eg_ep_expert_cuda(g, r, y, c->stream);
}

static int eg__c_verify_dispatch(void *state, const eg_workload_t *w,
				 const eg_recv_t *expected,
				 const eg_recv_t *actual, eg_verdict_t *v)
{
	eg_recv_t d = {0};
	int rc;

	(void)state;
	rc = eg_recv_alloc_cuda(&d, w, expected->rank, expected->capacity);
	if (rc == EG_OK)
		rc = eg_recv_copy_cuda(&d, expected, 1);
	if (rc == EG_OK)
		rc = eg_verify_dispatch_cuda(w, &d, actual, v);
	eg_recv_free_cuda(&d);
	return rc;
}

/* A device copy of n host bytes (NULL stays NULL). */
static int eg__c_copy(void **d, const void *h, size_t n)
{
	int rc;

	*d = NULL;
	if (!h)
		return EG_OK;
	if ((rc = eg__c_alloc(NULL, d, n)) < 0)
		return rc;
	return eg__c_upload(NULL, *d, h, n);
}

static int eg__c_verify_combine(void *state, const eg_workload_t *w, uint32_t s,
				eg_compare_t mode, const void *expected,
				const double *ref64, const double *mag64,
				const void *actual, eg_verdict_t *v)
{
	size_t n = (size_t)eg_workload_tokens(w, s) * w->hidden;
	void *de = NULL, *dr = NULL, *dm = NULL;
	int rc;

	(void)state;
	if ((rc = eg__c_copy(&de, expected, eg_combine_bytes(w, s))) == EG_OK &&
	    (rc = eg__c_copy(&dr, ref64, n * sizeof(double))) == EG_OK &&
	    (rc = eg__c_copy(&dm, mag64, n * sizeof(double))) == EG_OK)
		rc = eg_verify_combine_cuda(w, s, mode, de, dr, dm, actual, v);
	eg__c_free(NULL, de);
	eg__c_free(NULL, dr);
	eg__c_free(NULL, dm);
	return rc;
}

static int eg__c_mark(void *state, unsigned i)
{
	eg__cuda_t *c = state;

	if (i >= EG_SPACE_MARKS)
		return EG_EINVAL;
	return eg__cu(cudaEventRecord(c->ev[i], c->stream));
}

static int eg__c_elapsed(void *state, unsigned n, double *s)
{
	eg__cuda_t *c = state;
	int rc;

	if (n > EG_SPACE_MARKS)
		return EG_EINVAL;
	if (n == 0)
		return EG_OK;
	if ((rc = eg__cu(cudaEventSynchronize(c->ev[n - 1]))) < 0)
		return rc;
	for (unsigned i = 0; i + 1 < n; i++) {
		float ms = 0;

		if ((rc = eg__cu(cudaEventElapsedTime(&ms, c->ev[i],
						      c->ev[i + 1]))) < 0)
			return rc;
		s[i] = 1e-3 * ms;
	}
	return EG_OK;
}

static int eg__c_span_ms(void *state, unsigned a, unsigned b, double *ms)
{
	eg__cuda_t *c = state;
	float f = 0;
	int rc;

	if (a >= EG_SPACE_MARKS || b >= EG_SPACE_MARKS)
		return EG_EINVAL;
	if ((rc = eg__cu(cudaEventSynchronize(c->ev[b]))) < 0 ||
	    (rc = eg__cu(cudaEventElapsedTime(&f, c->ev[a], c->ev[b]))) < 0)
		return rc;
	*ms = f;
	return EG_OK;
}

static int eg__c_hold(void *state, double us)
{
	eg__cuda_t *c = state;

	if (!(us >= 0))
		return EG_EINVAL;
	return eg_cuda_hold(c->stream, us);
}

static int eg__c_passed(void *state, unsigned i, int *done)
{
	eg__cuda_t *c = state;
	cudaError_t e;

	if (i >= EG_SPACE_MARKS)
		return EG_EINVAL;
	e = cudaEventQuery(c->ev[i]);
	if (e == cudaErrorNotReady) {
		*done = 0;
		return EG_OK;
	}
	*done = e == cudaSuccess;
	return eg__cu(e);
}

/* a CUDA failure's name and text into err */
static int eg__c_why(cudaError_t e, const char *call, char *err, size_t errlen)
{
	if (e == cudaSuccess)
		return EG_OK;
	if (err && errlen)
		snprintf(err, errlen, "%s: %s (%s)", call, cudaGetErrorName(e),
			 cudaGetErrorString(e));
	cudaGetLastError();
	return EG_ECUDA;
}

static int eg__c_capture(void *state, int end, void **graph, char *err,
			 size_t errlen)
{
	eg__cuda_t *c = state;
	cudaGraph_t g = NULL;
	cudaGraphExec_t x = NULL;
	cudaError_t e;
	int rc;

	if (!end)
		return eg__c_why(
		    cudaStreamBeginCapture(c->stream,
					   cudaStreamCaptureModeThreadLocal),
		    "cudaStreamBeginCapture", err, errlen);
	*graph = NULL;
	e = cudaStreamEndCapture(c->stream, &g);
	if ((rc = eg__c_why(e, "cudaStreamEndCapture", err, errlen)) < 0)
		goto out;
	if (!g) {
		snprintf(err, errlen, "cudaStreamEndCapture: no graph");
		rc = EG_ECUDA;
		goto out;
	}
	rc = eg__c_why(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate",
		       err, errlen);
	if (rc == EG_OK)
		*graph = x;
out:
	if (g)
		cudaGraphDestroy(g);
	return rc;
}

static int eg__c_replay(void *state, void *graph)
{
	eg__cuda_t *c = state;

	return eg__cu(cudaGraphLaunch((cudaGraphExec_t)graph, c->stream));
}

static void eg__c_graph_free(void *state, void *graph)
{
	(void)state;
	if (graph)
		cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

const eg_space_ops_t eg_space_cuda = {
    .size = sizeof(eg_space_ops_t),
    .name = "cuda",
    .open = eg__c_open,
    .close = eg__c_close,
    .alloc = eg__c_alloc,
    .free = eg__c_free,
    .upload = eg__c_upload,
    .recv_alloc = eg__c_recv_alloc,
    .recv_free = eg__c_recv_free,
    .generate = eg__c_generate,
    .expert = eg__c_expert,
    .verify_dispatch = eg__c_verify_dispatch,
    .verify_combine = eg__c_verify_combine,
    .mark = eg__c_mark,
    .elapsed = eg__c_elapsed,
    .open_on = eg__c_open_on,
    .zalloc = eg__c_zalloc,
    .copy = eg__c_memcpy,
    .sync = eg__c_sync,
    .span_ms = eg__c_span_ms,
    .hold = eg__c_hold,
    .passed = eg__c_passed,
    .capture = eg__c_capture,
    .replay = eg__c_replay,
    .graph_free = eg__c_graph_free,
};
