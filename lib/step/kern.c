/* Kernel time of a call through CUPTI's activity API (include/epgate/
 * window.h): concurrent-kernel records, flushed after the call's work is
 * done; the call's time is the union of its kernels' [start, end) on the
 * device, epgate's own hold (eg_hold) left out, as DeepEP's kineto and
 * ep_bench's CUPTI build count kernels. libcupti is opened at run time so
 * that a build runs where it is missing (the boundary then says why). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/window.h"

#if defined(HAVE_CUDA)
#include <dlfcn.h>

#include <cuda_runtime_api.h>
#include <cupti_activity.h>

#define EG__BUF	  (1u << 20)
#define EG__NAMES 32
#define EG__IV	  4096

typedef struct {
	char name[96];
	uint32_t n;
	double total_s;
} eg__kname_t;

struct eg_kern {
	void *dl;
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	/* the call's intervals, since eg_kern_begin */
	uint64_t iv[EG__IV][2];
	size_t n_iv;
	int keep; /* records flushed now belong to the call */
	uint32_t lost;
	eg__kname_t names[EG__NAMES];
	size_t n_names;
};

/* CUPTI's callbacks take no user pointer: one collector per process */
static eg_kern_t *eg__k;

static void eg__req(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = aligned_alloc(8, EG__BUF);
	*size = *buf ? EG__BUF : 0;
	*max = 0;
}

static void eg__name_add(eg_kern_t *k, const char *name, double s)
{
	size_t i;

	for (i = 0; i < k->n_names; i++)
		if (!strncmp(k->names[i].name, name,
			     sizeof(k->names[i].name) - 1))
			break;
	if (i == k->n_names) {
		if (k->n_names == EG__NAMES)
			return;
		snprintf(k->names[i].name, sizeof(k->names[i].name), "%s",
			 name);
		k->n_names++;
	}
	k->names[i].n++;
	k->names[i].total_s += s;
}

static void eg__done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
		     size_t valid)
{
	eg_kern_t *k = eg__k;
	CUpti_Activity *r = NULL;
	size_t lost = 0;

	(void)size;
	while (k && valid && k->next(buf, valid, &r) == CUPTI_SUCCESS) {
		const CUpti_ActivityKernel10 *a =
		    (const CUpti_ActivityKernel10 *)r;
		const char *name;

		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		name = a->name ? a->name : "?";
		if (!k->keep || strstr(name, "eg_hold") || a->end <= a->start)
			continue;
		if (k->n_iv < EG__IV) {
			k->iv[k->n_iv][0] = a->start;
			k->iv[k->n_iv][1] = a->end;
			k->n_iv++;
		} else
			k->lost++;
		eg__name_add(k, name, (double)(a->end - a->start) * 1e-9);
	}
	if (k && k->dropped && k->dropped(ctx, stream, &lost) == CUPTI_SUCCESS)
		k->lost += (uint32_t)lost;
	free(buf);
}

int eg_kern_open(eg_kern_t **out, char *err, size_t errlen)
{
	static const char *const libs[] = {
	    "libcupti.so.13", "libcupti.so.12", "libcupti.so",
	    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	    "/usr/local/cuda/lib64/libcupti.so"};
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc,
			   CUpti_BuffersCallbackCompleteFunc);
	const char *env = getenv("EPGATE_CUPTI_LIB");
	eg_kern_t *k;
	CUptiResult e;

	int ndev = 0;

	*out = NULL;
	/* no device: CUPTI is not loaded at all (nothing of it to leak) */
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		cudaGetLastError();
		snprintf(
		    err, errlen,
		    "kernel time needs CUPTI and a CUDA device: none here");
		return EG_ENOSYS;
	}
	if (eg__k) {
		snprintf(err, errlen, "kernel time: one collector per process");
		return EG_EINVAL;
	}
	if (!(k = calloc(1, sizeof(*k))))
		return EG_ENOMEM;
	if (env && *env)
		k->dl = dlopen(env, RTLD_NOW | RTLD_GLOBAL);
	for (size_t i = 0; !k->dl && !(env && *env) && i < 5; i++)
		k->dl = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
	if (!k->dl) {
		snprintf(err, errlen,
			 "kernel time needs CUPTI: %s not found (%.120s); set "
			 "EPGATE_CUPTI_LIB",
			 env && *env ? env : "libcupti.so", dlerror());
		free(k);
		return EG_ENOSYS;
	}
	*(void **)&reg = dlsym(k->dl, "cuptiActivityRegisterCallbacks");
	*(void **)&k->enable = dlsym(k->dl, "cuptiActivityEnable");
	*(void **)&k->disable = dlsym(k->dl, "cuptiActivityDisable");
	*(void **)&k->flush = dlsym(k->dl, "cuptiActivityFlushAll");
	*(void **)&k->next = dlsym(k->dl, "cuptiActivityGetNextRecord");
	*(void **)&k->dropped =
	    dlsym(k->dl, "cuptiActivityGetNumDroppedRecords");
	if (!reg || !k->enable || !k->disable || !k->flush || !k->next) {
		snprintf(err, errlen,
			 "kernel time: CUPTI lacks the activity "
			 "API");
		goto fail;
	}
	eg__k = k;
	if ((e = reg(eg__req, eg__done)) != CUPTI_SUCCESS ||
	    (e = k->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) !=
		CUPTI_SUCCESS) {
		snprintf(err, errlen,
			 "kernel time: CUPTI's activity API refused (CUPTI "
			 "error %d; no GPU, or another profiler holds it)",
			 (int)e);
		eg__k = NULL;
		goto fail;
	}
	*out = k;
	return EG_OK;
fail:
	dlclose(k->dl);
	free(k);
	return EG_ENOSYS;
}

void eg_kern_close(eg_kern_t *k)
{
	if (!k)
		return;
	k->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->keep = 0;
	k->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	eg__k = NULL;
	/* libcupti stays loaded: its threads may still run */
	free(k);
}

int eg_kern_begin(eg_kern_t *k)
{
	k->keep = 0;
	if (k->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
		return EG_ECUDA;
	k->n_iv = 0;
	k->keep = 1;
	return EG_OK;
}

static int eg__cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int eg_kern_end(eg_kern_t *k, double *s)
{
	uint64_t sum = 0, lo = 0, hi = 0;

	if (k->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
		return EG_ECUDA;
	k->keep = 0;
	qsort(k->iv, k->n_iv, sizeof(k->iv[0]), eg__cmp);
	for (size_t i = 0; i < k->n_iv; i++) {
		if (i == 0 || k->iv[i][0] > hi) {
			sum += hi - lo;
			lo = k->iv[i][0];
			hi = k->iv[i][1];
		} else if (k->iv[i][1] > hi)
			hi = k->iv[i][1];
	}
	sum += hi - lo;
	*s = (double)sum * 1e-9;
	k->n_iv = 0;
	return EG_OK;
}

static int eg__by_total(const void *a, const void *b)
{
	const eg__kname_t *x = a, *y = b;

	return x->total_s < y->total_s ? 1 : x->total_s > y->total_s ? -1 : 0;
}

void eg_kern_table(const eg_kern_t *k, char *buf, size_t len, uint32_t *dropped)
{
	eg__kname_t t[EG__NAMES];
	size_t n = k->n_names, off = 0;

	memcpy(t, k->names, n * sizeof(t[0]));
	qsort(t, n, sizeof(t[0]), eg__by_total);
	buf[0] = 0;
	for (size_t i = 0; i < n && off + 1 < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%.60s n=%u %.2fus",
				 i ? "; " : "", t[i].name, t[i].n,
				 t[i].total_s * 1e6 / t[i].n);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
	}
	*dropped = k->lost;
}

void eg_kern_reset(eg_kern_t *k)
{
	k->n_names = 0;
	k->lost = 0;
}

#else /* no CUDA */

int eg_kern_open(eg_kern_t **k, char *err, size_t errlen)
{
	*k = NULL;
	snprintf(err, errlen,
		 "kernel time needs CUPTI: this epgate was "
		 "built without CUDA");
	return EG_ENOSYS;
}

void eg_kern_close(eg_kern_t *k)
{
	(void)k;
}

int eg_kern_begin(eg_kern_t *k)
{
	(void)k;
	return EG_ENOSYS;
}

int eg_kern_end(eg_kern_t *k, double *s)
{
	(void)k, (void)s;
	return EG_ENOSYS;
}

void eg_kern_table(const eg_kern_t *k, char *buf, size_t len, uint32_t *dropped)
{
	(void)k;
	if (len)
		buf[0] = 0;
	*dropped = 0;
}

void eg_kern_reset(eg_kern_t *k)
{
	(void)k;
}

#endif
