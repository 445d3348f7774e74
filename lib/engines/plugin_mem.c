/* A plugin's memory space: host memory here, CUDA device memory when
 * built with CUDA. epgate moves its generated inputs in and the plugin's
 * outputs out through this table, in verification steps only. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/clock.h"
#include "epgate/error.h"
#include "plugin_int.h"

/* The host space's state: its timing marks. */
typedef struct eg__host {
	double t[EG_PLUG_MARKS];
} eg__host_t;

static int eg__h_open(void **st, int device, uint32_t local_rank, void *stream,
		      char *err, size_t errlen)
{
	(void)device;
	(void)local_rank;
	(void)stream;
	(void)err;
	(void)errlen;
	*st = calloc(1, sizeof(eg__host_t));
	return *st ? EG_OK : EG_ENOMEM;
}

static void eg__h_close(void *st)
{
	free(st);
}

static int eg__h_alloc(void *st, void **p, size_t n)
{
	(void)st;
	*p = calloc(1, n ? n : 1);
	return *p ? EG_OK : EG_ENOMEM;
}

static void eg__h_free(void *st, void *p)
{
	(void)st;
	free(p);
}

static int eg__h_copy(void *st, void *dst, const void *src, size_t n)
{
	(void)st;
	if (n)
		memcpy(dst, src, n);
	return EG_OK;
}

static int eg__h_sync(void *st)
{
	(void)st;
	return EG_OK;
}

static int eg__h_device(void *st)
{
	(void)st;
	return -1;
}

static void *eg__h_stream(void *st)
{
	(void)st;
	return NULL;
}

static int eg__h_mark(void *st, unsigned i)
{
	if (i >= EG_PLUG_MARKS)
		return EG_EINVAL;
	((eg__host_t *)st)->t[i] = eg_now();
	return EG_OK;
}

static int eg__h_elapsed(void *st, unsigned a, unsigned b, double *ms)
{
	const eg__host_t *h = st;

	if (a >= EG_PLUG_MARKS || b >= EG_PLUG_MARKS)
		return EG_EINVAL;
	*ms = (h->t[b] - h->t[a]) * 1e3;
	return EG_OK;
}

const eg_plug_mem_t eg_plug_mem_host = {
    .name = "host",
    .open = eg__h_open,
    .close = eg__h_close,
    .alloc = eg__h_alloc,
    .free = eg__h_free,
    .put = eg__h_copy,
    .get = eg__h_copy,
    .sync = eg__h_sync,
    .device = eg__h_device,
    .stream = eg__h_stream,
    .mark = eg__h_mark,
    .elapsed = eg__h_elapsed,
};

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

typedef struct eg__cu {
	int device;
	cudaStream_t stream;
	int own_stream;
	cudaEvent_t ev[EG_PLUG_MARKS];
} eg__cu_t;

static int eg__cu_err(cudaError_t e)
{
	return e == cudaSuccess ? EG_OK : EG_ECUDA;
}

static int eg__cu_open(void **st, int device, uint32_t local_rank, void *stream,
		       char *err, size_t errlen)
{
	eg__cu_t *c;
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);

	*st = NULL;
	if (e != cudaSuccess || ndev < 1) {
		snprintf(err, errlen, "no CUDA device (%s)",
			 e != cudaSuccess ? cudaGetErrorString(e) : "0 found");
		return EG_ENOSYS;
	}
	if (device < 0)
		device = (int)(local_rank % (uint32_t)ndev);
	if (device >= ndev || cudaSetDevice(device) != cudaSuccess) {
		snprintf(err, errlen, "cannot use CUDA device %d of %d", device,
			 ndev);
		return EG_ECUDA;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return EG_ENOMEM;
	c->device = device;
	c->stream = (cudaStream_t)stream;
	if (!c->stream) {
		e = cudaStreamCreateWithFlags(&c->stream,
					      cudaStreamNonBlocking);
		if (e != cudaSuccess) {
			snprintf(err, errlen, "cudaStreamCreate: %s",
				 cudaGetErrorString(e));
			free(c);
			return EG_ECUDA;
		}
		c->own_stream = 1;
	}
	*st = c;
	for (int i = 0; i < EG_PLUG_MARKS; i++)
		if ((e = cudaEventCreate(&c->ev[i])) != cudaSuccess) {
			c->ev[i] = NULL;
			snprintf(err, errlen, "cudaEventCreate: %s",
				 cudaGetErrorString(e));
			return EG_ECUDA;
		}
	return EG_OK;
}

static void eg__cu_close(void *st)
{
	eg__cu_t *c = st;

	if (!c)
		return;
	for (int i = 0; i < EG_PLUG_MARKS; i++)
		if (c->ev[i])
			cudaEventDestroy(c->ev[i]);
	if (c->own_stream)
		cudaStreamDestroy(c->stream);
	free(c);
}

static int eg__cu_alloc(void *st, void **p, size_t n)
{
	eg__cu_t *c = st;

	*p = NULL;
	if (cudaMalloc(p, n ? n : 1) != cudaSuccess)
		return EG_ENOMEM;
	/* on our stream: a cudaMemset on the legacy stream is not ordered
	 * before copies on a non-blocking one and could land after them */
	if (cudaMemsetAsync(*p, 0, n ? n : 1, c->stream) != cudaSuccess)
		return EG_ECUDA;
	return eg__cu_err(cudaStreamSynchronize(c->stream));
}

static void eg__cu_free(void *st, void *p)
{
	(void)st;
	cudaFree(p);
}

/* put and get: cudaMemcpyDefault, as either side may be a GPU caller's
 * device buffer. */
static int eg__cu_copy(void *st, void *dst, const void *src, size_t n)
{
	eg__cu_t *c = st;

	if (!n)
		return EG_OK;
	if (cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c->stream) !=
	    cudaSuccess)
		return EG_ECUDA;
	return eg__cu_err(cudaStreamSynchronize(c->stream));
}

static int eg__cu_sync(void *st)
{
	eg__cu_t *c = st;

	return eg__cu_err(cudaStreamSynchronize(c->stream));
}

static int eg__cu_device(void *st)
{
	return ((eg__cu_t *)st)->device;
}

static void *eg__cu_stream(void *st)
{
	return ((eg__cu_t *)st)->stream;
}

static int eg__cu_mark(void *st, unsigned i)
{
	eg__cu_t *c = st;

	if (i >= EG_PLUG_MARKS)
		return EG_EINVAL;
	return eg__cu_err(cudaEventRecord(c->ev[i], c->stream));
}

static int eg__cu_elapsed(void *st, unsigned a, unsigned b, double *ms)
{
	eg__cu_t *c = st;
	float f = 0;
	int rc;

	if (a >= EG_PLUG_MARKS || b >= EG_PLUG_MARKS)
		return EG_EINVAL;
	if ((rc = eg__cu_err(cudaEventSynchronize(c->ev[b]))) < 0 ||
	    (rc = eg__cu_err(cudaEventElapsedTime(&f, c->ev[a], c->ev[b]))) < 0)
		return rc;
	*ms = f;
	return EG_OK;
}

static const eg_plug_mem_t eg__mem_cuda = {
    .name = "cuda",
    .open = eg__cu_open,
    .close = eg__cu_close,
    .alloc = eg__cu_alloc,
    .free = eg__cu_free,
    .put = eg__cu_copy,
    .get = eg__cu_copy,
    .sync = eg__cu_sync,
    .device = eg__cu_device,
    .stream = eg__cu_stream,
    .mark = eg__cu_mark,
    .elapsed = eg__cu_elapsed,
};

const eg_plug_mem_t *eg_plug_mem_cuda(void)
{
	return &eg__mem_cuda;
}

int eg_plug_on_device(const void *p)
{
	struct cudaPointerAttributes a;

	if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError(); /* not a CUDA pointer: no sticky error */
		return 0;
	}
	return a.type == cudaMemoryTypeDevice ||
	       a.type == cudaMemoryTypeManaged;
}

int eg_plug_dev_copy(void *dst, const void *src, size_t n)
{
	/* the caller's work runs on its own stream: wait for all of it */
	if (cudaDeviceSynchronize() != cudaSuccess)
		return EG_ECUDA;
	if (n && cudaMemcpy(dst, src, n, cudaMemcpyDefault) != cudaSuccess)
		return EG_ECUDA;
	return EG_OK;
}
#else
const eg_plug_mem_t *eg_plug_mem_cuda(void)
{
	return NULL;
}

int eg_plug_on_device(const void *p)
{
	(void)p;
	return 0;
}

int eg_plug_dev_copy(void *dst, const void *src, size_t n)
{
	(void)dst;
	(void)src;
	(void)n;
	return EG_ENOSYS;
}
#endif
