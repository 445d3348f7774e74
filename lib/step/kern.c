/* Kernel time of a call through CUPTI's activity API (include/epgate/
 * window.h): concurrent-kernel records, flushed after the call's work is
 * done; the call's time is the union of its kernels' [start, end) on the
 * device, epgate's own hold (eg_hold) left out, as DeepEP's kineto and
 * ep_bench's CUPTI build count kernels. Where the plugin marks its
 * library's own call (the Python bridge's env.library()), only the kernels
 * the API calls inside the marks queued count: CUPTI's external
 * correlation tags those API calls, and a kernel record names the API call
 * that queued it (the adapter's own casts and copies are left out).
 * libcupti is opened at run time so that a build runs where it is missing
 * (the boundary then says why). */
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
#define EG__IDS	  8192
/* the external id of the library's span (CUPTI's CUSTOM0 kind) */
#define EG__SPAN_ID 0x6567u

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
	CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
	CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
	/* the call's kernels, since eg_kern_begin */
	eg_kern_iv_t iv[EG__IV];
	size_t n_iv;
	/* the correlation ids of the API calls inside the library's marks */
	uint32_t ids[EG__IDS];
	size_t n_ids;
	int spans;  /* API tracing on: marks narrow the call to the span */
	int inside; /* between the marks now */
	int keep;   /* records flushed now belong to the call */
	uint32_t lost, spanned;
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

		if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
			const CUpti_ActivityExternalCorrelation *x =
			    (const CUpti_ActivityExternalCorrelation *)r;

			if (!k->keep ||
			    x->externalKind !=
				CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 ||
			    x->externalId != EG__SPAN_ID)
				continue;
			if (k->n_ids < EG__IDS)
				k->ids[k->n_ids++] = x->correlationId;
			else
				k->lost++;
			continue;
		}
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		name = a->name ? a->name : "?";
		if (!k->keep || strstr(name, "eg_hold") || a->end <= a->start)
			continue;
		if (k->n_iv < EG__IV)
			k->iv[k->n_iv++] =
			    (eg_kern_iv_t){.start = a->start,
					   .end = a->end,
					   .corr = a->correlationId};
		else
			k->lost++;
		eg__name_add(k, name, (double)(a->end - a->start) * 1e-9);
	}
	if (k && k->dropped && k->dropped(ctx, stream, &lost) == CUPTI_SUCCESS)
		k->lost += (uint32_t)lost;
	free(buf);
}

/* API tracing for the library's spans: off again where CUPTI refuses a
 * kind (the call's whole union is then its time) */
static void eg__spans_on(eg_kern_t *k)
{
	static const CUpti_ActivityKind kinds[] = {
	    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
	    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
	size_t i;

	*(void **)&k->push =
	    dlsym(k->dl, "cuptiActivityPushExternalCorrelationId");
	*(void **)&k->pop =
	    dlsym(k->dl, "cuptiActivityPopExternalCorrelationId");
	if (!k->push || !k->pop)
		return;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (k->enable(kinds[i]) != CUPTI_SUCCESS)
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		k->spans = 1;
		return;
	}
	while (i--)
		k->disable(kinds[i]);
}

static void eg__spans_off(eg_kern_t *k)
{
	if (!k->spans)
		return;
	k->disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	k->disable(CUPTI_ACTIVITY_KIND_DRIVER);
	k->disable(CUPTI_ACTIVITY_KIND_RUNTIME);
	k->spans = 0;
}

int eg_kern_open(eg_kern_t **out, int spans, char *err, size_t errlen)
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
	if (spans)
		eg__spans_on(k);
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
	if (k->inside)
		k->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL);
	eg__spans_off(k);
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
	k->n_iv = k->n_ids = 0;
	k->keep = 1;
	return EG_OK;
}

static int eg__cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int eg_kern_end(eg_kern_t *k, double *s)
{
	int span;

	if (k->inside) { /* a mark left open: the span ends with the call */
		k->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL);
		k->inside = 0;
	}
	if (k->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
		return EG_ECUDA;
	k->keep = 0;
	/* ids are tagged only inside a mark: none is an unmarked call, or a
	 * span whose tracing did not work (a library queues nothing without
	 * an API call): the whole call's union then, and the evidence does
	 * not say "span" for it */
	span = k->n_ids > 0;
	if (span)
		qsort(k->ids, k->n_ids, sizeof(k->ids[0]), eg__cmp_id);
	*s = (double)eg_kern_union(k->iv, k->n_iv, span ? k->ids : NULL,
				   k->n_ids) *
	     1e-9;
	k->spanned += (uint32_t)span;
	k->n_iv = k->n_ids = 0;
	return EG_OK;
}

void eg_kern_mark(int end)
{
	eg_kern_t *k = eg__k;

	if (!k || !k->spans || !k->keep || k->inside == !end)
		return;
	if (end) {
		k->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL);
		k->inside = 0;
	} else if (k->push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
			   EG__SPAN_ID) == CUPTI_SUCCESS) {
		k->inside = 1;
	}
}

uint32_t eg_kern_spanned(const eg_kern_t *k)
{
	return k->spanned;
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
	k->lost = k->spanned = 0;
}

#else /* no CUDA */

int eg_kern_open(eg_kern_t **k, int spans, char *err, size_t errlen)
{
	(void)spans;
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

uint32_t eg_kern_spanned(const eg_kern_t *k)
{
	(void)k;
	return 0;
}

void eg_kern_reset(eg_kern_t *k)
{
	(void)k;
}

void eg_kern_mark(int end)
{
	(void)end;
}

#endif

static int eg__by_start(const void *a, const void *b)
{
	const eg_kern_iv_t *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int eg__has(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (ids[m] == id)
			return 1;
		if (ids[m] < id)
			lo = m + 1;
		else
			hi = m;
	}
	return 0;
}

uint64_t eg_kern_union(eg_kern_iv_t *iv, size_t n, const uint32_t *ids,
		       size_t nids)
{
	uint64_t sum = 0, lo = 0, hi = 0;
	int open = 0;

	if (n > 1)
		qsort(iv, n, sizeof(iv[0]), eg__by_start);
	for (size_t i = 0; i < n; i++) {
		if (ids && !eg__has(ids, nids, iv[i].corr))
			continue;
		if (!open || iv[i].start > hi) {
			sum += hi - lo;
			lo = iv[i].start;
			hi = iv[i].end;
			open = 1;
		} else if (iv[i].end > hi)
			hi = iv[i].end;
	}
	return sum + (hi - lo);
}
