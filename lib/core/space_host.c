/* The host memory space: malloc, the host twins of the generator and the
 * expert stage, the host verifiers, the monotonic clock. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/space.h"
#include "epgate/world.h"

typedef struct eg__host {
	double t[EG_SPACE_MARKS];
	/* the modelled stream's hold ends then (eg_now's clock; 0: none) */
	double busy_until;
} eg__host_t;

static int eg__h_open(void **state, void *stream)
{
	(void)stream;
	*state = calloc(1, sizeof(eg__host_t));
	return *state ? EG_OK : EG_ENOMEM;
}

static int eg__h_open_on(void **state, int *device, uint32_t local_rank,
			 void **stream, char *err, size_t errlen)
{
	(void)local_rank;
	(void)err;
	(void)errlen;
	*device = -1;
	*stream = NULL;
	return eg__h_open(state, NULL);
}

static void eg__h_close(void *state)
{
	free(state);
}

static int eg__h_alloc(void *state, void **p, size_t bytes)
{
	(void)state;
	*p = malloc(bytes ? bytes : 1);
	return *p ? EG_OK : EG_ENOMEM;
}

static int eg__h_zalloc(void *state, void **p, size_t bytes)
{
	(void)state;
	*p = calloc(1, bytes ? bytes : 1);
	return *p ? EG_OK : EG_ENOMEM;
}

static void eg__h_free(void *state, void *p)
{
	(void)state;
	free(p);
}

/* upload and copy: host memory to host memory */
static int eg__h_copy(void *state, void *dst, const void *src, size_t bytes)
{
	(void)state;
	if (bytes)
		memcpy(dst, src, bytes);
	return EG_OK;
}

static int eg__h_recv_alloc(void *state, eg_recv_t *r, const eg_workload_t *w,
			    uint32_t rank, uint32_t capacity)
{
	(void)state;
	return eg_recv_alloc(r, w, rank, capacity);
}

static void eg__h_recv_free(void *state, eg_recv_t *r)
{
	(void)state;
	eg_recv_free(r);
}

static int eg__h_generate(void *state, const eg_gen_t *g, eg_rank_input_t *in)
{
	(void)state;
	eg_gen_tokens_host(g, in->rank, in->tokens, in->x, in->scales);
	eg_gen_routing_host(g, in->rank, in->tokens, in->topk_idx, in->topk_w);
	return EG_OK;
}

static int eg__h_expert(void *state, const eg_gen_t *g, const eg_recv_t *r,
			void *y)
{
	(void)state;
	return eg_expert_stage(g, r, y);
}

static int eg__h_verify_dispatch(void *state, const eg_workload_t *w,
				 const eg_recv_t *expected,
				 const eg_recv_t *actual, eg_verdict_t *v)
{
	(void)state;
	return eg_verify_dispatch(w, expected, actual, v);
}

static int eg__h_verify_combine(void *state, const eg_workload_t *w, uint32_t s,
				eg_compare_t mode, const void *expected,
				const double *ref64, const double *mag64,
				const void *actual, eg_verdict_t *v)
{
	(void)state;
	return eg_verify_combine(w, s, mode, expected, ref64, mag64, actual, v);
}

static int eg__h_mark(void *state, unsigned i)
{
	eg__host_t *h = state;

	if (i >= EG_SPACE_MARKS)
		return EG_EINVAL;
	h->t[i] = eg_now();
	/* a mark queued behind a hold is reached when the hold ends */
	if (h->t[i] < h->busy_until)
		h->t[i] = h->busy_until;
	return EG_OK;
}

static int eg__h_elapsed(void *state, unsigned n, double *s)
{
	eg__host_t *h = state;

	if (n > EG_SPACE_MARKS)
		return EG_EINVAL;
	for (unsigned i = 0; i + 1 < n; i++)
		s[i] = h->t[i + 1] - h->t[i];
	return EG_OK;
}

static int eg__h_sync(void *state)
{
	(void)state;
	return EG_OK;
}

static int eg__h_span_ms(void *state, unsigned a, unsigned b, double *ms)
{
	const eg__host_t *h = state;

	if (a >= EG_SPACE_MARKS || b >= EG_SPACE_MARKS)
		return EG_EINVAL;
	*ms = (h->t[b] - h->t[a]) * 1e3;
	return EG_OK;
}

static int eg__h_hold(void *state, double us)
{
	eg__host_t *h = state;

	if (!(us >= 0))
		return EG_EINVAL;
	h->busy_until = eg_now() + us * 1e-6;
	return EG_OK;
}

static int eg__h_passed(void *state, unsigned i, int *done)
{
	const eg__host_t *h = state;

	if (i >= EG_SPACE_MARKS)
		return EG_EINVAL;
	*done = h->t[i] <= eg_now();
	return EG_OK;
}

const eg_space_ops_t eg_space_host = {
    .size = sizeof(eg_space_ops_t),
    .name = "host",
    .open = eg__h_open,
    .close = eg__h_close,
    .alloc = eg__h_alloc,
    .free = eg__h_free,
    .upload = eg__h_copy,
    .recv_alloc = eg__h_recv_alloc,
    .recv_free = eg__h_recv_free,
    .generate = eg__h_generate,
    .expert = eg__h_expert,
    .verify_dispatch = eg__h_verify_dispatch,
    .verify_combine = eg__h_verify_combine,
    .mark = eg__h_mark,
    .elapsed = eg__h_elapsed,
    .open_on = eg__h_open_on,
    .zalloc = eg__h_zalloc,
    .copy = eg__h_copy,
    .sync = eg__h_sync,
    .span_ms = eg__h_span_ms,
    .hold = eg__h_hold,
    .passed = eg__h_passed,
};

const eg_space_ops_t *eg_space_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "host"))
		return &eg_space_host;
#ifdef HAVE_CUDA
	if (!strcmp(name, "cuda"))
		return &eg_space_cuda;
#endif
	return NULL;
}
