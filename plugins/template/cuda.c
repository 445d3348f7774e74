/* The template plugin on CUDA memory: the same engine (template.c), its
 * inputs, native layout and results in device memory, moved through the
 * host around the template's host code, every copy on epgate's stream (an
 * earlier version copied on the legacy default stream: the pageable
 * host-to-device copies returned before landing, epgate read the layout
 * on its own stream too early, and the checks caught the rows as wrong).
 * It exists to run epgate's device path for plugins (copies in, the
 * layout read back, the stream, the NCCL communicator) on a GPU machine;
 * built when configure finds CUDA.
 * Options: the template's, and nccl=1 to ask for epgate's communicator. */
#define TPL_WRAPPED
#include "template.c"

#include <cuda_runtime_api.h>

typedef struct cu {
	tpl_t *t;
	cudaStream_t s;	       /* epgate's: everything runs on it */
	eg_plugin_input_t hin; /* the input, staged on the host */
	uint8_t *hx, *hy, *hout;
	float *hsc, *hw;
	int32_t *hidx;
	void *dev[7]; /* the native layout's arrays in device memory */
	char err[256];
} cu_t;

/* The options without nccl=1 (the template refuses unknown ones). */
static int split(const eg_plugin_opts_t *o, eg_plugin_opts_t *rest,
		 const char **k, const char **v, int *nccl)
{
	*nccl = 0;
	rest->n = 0;
	rest->key = k;
	rest->value = v;
	for (uint32_t i = 0; i < o->n && i < 16; i++) {
		if (!strcmp(o->key[i], "nccl")) {
			*nccl = !strcmp(o->value[i], "1");
			continue;
		}
		k[rest->n] = o->key[i];
		v[rest->n++] = o->value[i];
	}
	return o->n <= 16 ? EG_PLUGIN_OK : EG_PLUGIN_EFAIL;
}

static int cu_query(const eg_plugin_opts_t *o, eg_plugin_caps_t *c, char *err,
		    size_t len)
{
	const char *k[16], *v[16];
	eg_plugin_opts_t rest;
	int nccl;

	if (split(o, &rest, k, v, &nccl) || query(&rest, c, err, len))
		return EG_PLUGIN_EFAIL;
	c->memory = EG_PLUGIN_MEM_CUDA;
	c->flags |= nccl ? EG_PLUGIN_WANTS_NCCL : 0;
	return EG_PLUGIN_OK;
}

static void cu_destroy(void *inst)
{
	cu_t *c = inst;

	if (c->t)
		destroy(c->t);
#ifdef EG_FAULT_LEAK_PER_INSTANCE
	/* the planted leak on the device too: 4 MiB destroy forgets (a
	 * workspace, an IPC buffer), besides the template's 1 MiB and
	 * descriptor (intermittent.h) */
	{
		void *d = NULL;

		if (cudaMalloc(&d, 4u << 20) == cudaSuccess)
			cudaMemset(d, 0, 4u << 20);
	}
#endif
	for (int i = 0; i < 7; i++)
		cudaFree(c->dev[i]);
	free(c->hx), free(c->hy), free(c->hout), free(c->hsc), free(c->hw);
	free(c->hidx), free(c);
}

static int cu_create(const eg_plugin_env_t *e, void **inst, char *err,
		     size_t len)
{
	cu_t *c = calloc(1, sizeof(*c));
	eg_plugin_env_t he = *e;
	const char *k[16], *v[16];
	int nccl;
	size_t T = e->tokens, slots;

	*inst = NULL;
	if (!c || split(&e->opts, &he.opts, k, v, &nccl))
		return free(c), EG_PLUGIN_EFAIL;
	if (nccl && !e->nccl_comm) {
		snprintf(err, len, "asked for an NCCL communicator, got none");
		return free(c), EG_PLUGIN_EFAIL;
	}
	if (create(&he, (void **)&c->t, err, len))
		return cu_destroy(c), EG_PLUGIN_EFAIL;
	c->s = (cudaStream_t)e->cuda_stream;
	slots = (size_t)c->t->G * c->t->S + 1;
	c->hx = malloc(T * c->t->xb + 1);
	c->hsc = malloc(T * c->t->sb + 4);
	c->hidx = malloc(T * e->topk * 4 + 4);
	c->hw = malloc(T * e->topk * 4 + 4);
	c->hy = malloc(slots * c->t->cb);
	c->hout = malloc(T * c->t->cb + 1);
	if (!c->hx || !c->hsc || !c->hidx || !c->hw || !c->hy || !c->hout) {
		snprintf(err, len, "out of memory");
		return cu_destroy(c), EG_PLUGIN_EFAIL;
	}
	*inst = c;
	return EG_PLUGIN_OK;
}

/* n bytes of host array h into device mirror i, queued on epgate's
 * stream (h stays valid: the template keeps its arrays); its address. */
static const void *mirror(cu_t *c, int i, const void *h, size_t n)
{
	if (!h)
		return NULL;
	if (!c->dev[i] && cudaMalloc(&c->dev[i], n + 4) != cudaSuccess)
		return NULL;
	cudaMemcpyAsync(c->dev[i], h, n, cudaMemcpyHostToDevice, c->s);
	return c->dev[i];
}

/* Device to host, complete on return. */
static void fetch(cu_t *c, void *h, const void *d, size_t n)
{
	cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, c->s);
	cudaStreamSynchronize(c->s);
}

static int cu_dispatch(void *inst, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out)
{
	cu_t *c = inst;
	tpl_t *t = c->t;
	size_t T = in->tokens, K = t->env.topk, slots = (size_t)t->G * t->S;
	int rc;

	fetch(c, c->hx, in->x, T * t->xb);
	if (in->scales)
		fetch(c, c->hsc, in->scales, T * t->sb);
	fetch(c, c->hidx, in->topk_idx, T * K * 4);
	fetch(c, c->hw, in->topk_w, T * K * 4);
	c->hin = *in;
	c->hin.x = c->hx;
	c->hin.scales = in->scales ? c->hsc : NULL;
	c->hin.topk_idx = c->hidx;
	c->hin.topk_w = c->hw;
	if ((rc = dispatch(t, &c->hin, out)) != EG_PLUGIN_OK)
		return rc;
	out->count = mirror(c, 0, out->count, 4 * t->G);
	out->x = mirror(c, 1, out->x, slots * t->xb);
	out->scales = mirror(c, 2, out->scales, slots * t->sb);
	out->src_rank = mirror(c, 3, out->src_rank, slots * 4);
	out->src_token = mirror(c, 4, out->src_token, slots * 4);
	out->topk_idx = mirror(c, 5, out->topk_idx, slots * K * 4);
	out->topk_w = mirror(c, 6, out->topk_w, slots * K * 4);
	cudaError_t ce = cudaGetLastError();
	if (ce != cudaSuccess) {
		snprintf(c->err, sizeof(c->err), "CUDA: %s",
			 cudaGetErrorString(ce));
		return EG_PLUGIN_EFAIL;
	}
	return EG_PLUGIN_OK;
}

static int cu_combine(void *inst, const eg_plugin_input_t *in, const void *y,
		      void *out)
{
	cu_t *c = inst;
	tpl_t *t = c->t;
	int rc;

	(void)in; /* staged at dispatch */
	fetch(c, c->hy, y, (size_t)t->G * t->S * t->cb);
	if ((rc = combine(t, &c->hin, c->hy, c->hout)) != EG_PLUGIN_OK)
		return rc;
	if (cudaMemcpyAsync(out, c->hout, c->hin.tokens * t->cb,
			    cudaMemcpyHostToDevice, c->s) != cudaSuccess) {
		snprintf(c->err, sizeof(c->err), "CUDA: combine output");
		return EG_PLUGIN_EFAIL;
	}
	return EG_PLUGIN_OK;
}

static const char *cu_error(void *inst)
{
	cu_t *c = inst;

	return c->err[0] ? c->err : error(c->t);
}

static const eg_plugin_t cu_plugin = {
    .size = sizeof(eg_plugin_t),
    .abi_version = EG_PLUGIN_ABI_VERSION,
    .name = "template-cuda",
    .version = "1.0",
    .query = cu_query,
    .create = cu_create,
    .dispatch = cu_dispatch,
    .combine = cu_combine,
    .destroy = cu_destroy,
    .error = cu_error,
};

const eg_plugin_t *eg_plugin_entry(uint32_t host_abi)
{
	(void)host_abi;
	return &cu_plugin;
}
