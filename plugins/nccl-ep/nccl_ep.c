/* The NCCL EP adapter: NVIDIA's EP library (contrib/nccl_ep of NCCL
 * 2.30.7) as an epgate plugin, on CUDA memory with the NCCL communicator
 * epgate opens over the world. Two modes (option mode=):
 *  - ll (low latency, default): expert-major [L, W*B, H] with per-expert
 *    counters, no source map (epgate keys rows by content), the combine
 *    applies the weights;
 *  - ht (high throughput): flat [N, H] rows with their received top-k
 *    ids (local experts ascending: slots in any order) and weights; its
 *    kernels are compiled by nvcc at run time.
 * NCCL EP asserts, throws or exits on what it does not take, so every
 * shape is checked first (shape.c, comm.c) and the verdict agreed by all
 * ranks: a case NCCL EP cannot run is a skip with the reason. Options:
 * mode=ll|ht, sms=N, qps=N, recv=N (docs/plugins.md, "NCCL EP"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nep.h"

#define EG__STR2(x) #x
#define EG__STR(x)  EG__STR2(x)

void eg_nep_tensor(eg_nep_tensor_t *t, ncclDataType_t dt, void *data,
		   unsigned ndim, size_t a, size_t b, size_t c)
{
	t->t = NCCL_EP_TENSOR_INIT;
	t->sizes[0] = a;
	t->sizes[1] = b;
	t->sizes[2] = c;
	t->t.ndim = ndim;
	t->t.datatype = dt;
	t->t.data = data;
	t->t.sizes = t->sizes;
}

int eg_nep_fail(eg_nep_t *n, const char *what, ncclResult_t r)
{
	snprintf(n->err, sizeof(n->err), "%s: %s", what, ncclGetErrorString(r));
	return EG_PLUGIN_EFAIL;
}

int eg_nep_cuda(eg_nep_t *n, const char *what, cudaError_t e)
{
	if (e == cudaSuccess)
		return EG_PLUGIN_OK;
	snprintf(n->err, sizeof(n->err), "%s: %s", what, cudaGetErrorString(e));
	return EG_PLUGIN_EFAIL;
}

int eg_nep_setup_common(eg_nep_t *n, size_t rows)
{
	size_t T = n->env.tokens, K = n->env.topk, H = n->env.hidden;
	size_t L = n->p.L;
	int rc;

	if ((rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->topk,
					 (T * K + 1) * sizeof(int64_t)))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc(&n->recv, rows * H * 2 + 16))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc(&n->y, rows * H * 2 + 16))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->count, L * 4 + 4))))
		return rc;
	eg_nep_tensor(&n->tk, ncclInt64, n->topk, 2, T, K, 0);
	eg_nep_tensor(&n->cnt, ncclInt32, n->count, 1, L, 0, 0);
	return EG_PLUGIN_OK;
}

/* A dispatch or combine that returned r (what), then its completion. */
static int eg__completed(eg_nep_t *n, const char *what, ncclResult_t r)
{
	if (r != ncclSuccess)
		return eg_nep_fail(n, what, r);
	if ((r = ncclEpComplete(n->handle, NULL, n->s)) != ncclSuccess)
		return eg_nep_fail(n, "ncclEpComplete", r);
	return EG_PLUGIN_OK;
}

int eg_nep_dispatch_run(eg_nep_t *n, const ncclEpDispatchInputs_t *di,
			const ncclEpDispatchOutputs_t *dout,
			const ncclEpLayoutInfo_t *li)
{
	return eg__completed(
	    n, "ncclEpDispatch",
	    ncclEpDispatch(n->handle, di, dout, li, NULL, n->s));
}

int eg_nep_combine_run(eg_nep_t *n, const eg_plugin_input_t *in, void *out,
		       int weighted)
{
	ncclEpCombineInputs_t ci = NCCL_EP_COMBINE_INPUTS_INIT;
	ncclEpCombineOutputs_t co = NCCL_EP_COMBINE_OUTPUTS_INIT;

	eg_nep_tensor(&n->out, ncclBfloat16, out, 2, in->tokens, n->env.hidden,
		      0);
	ci.tokens = &n->yt.t;
	co.tokens = &n->out.t;
	if (weighted) {
		eg_nep_tensor(&n->w, ncclFloat32, (void *)in->topk_w, 2,
			      in->tokens, n->env.topk, 0);
		co.topk_weights = &n->w.t; /* read: the combine applies them */
	}
	return eg__completed(n, "ncclEpCombine",
			     ncclEpCombine(n->handle, &ci, &co, NULL, n->s));
}

int eg_nep_routing(eg_nep_t *n, const eg_plugin_input_t *in,
		   const ncclEpLayoutInfo_t *li)
{
	size_t nk = (size_t)in->tokens * n->env.topk;
	ncclEpLayout_t lay = n->o.mode == EG_NEP_HT
				 ? NCCL_EP_LAYOUT_FLAT
				 : NCCL_EP_LAYOUT_EXPERT_MAJOR;
	ncclResult_t r;
	int rc;

	if (n->handle && n->epoch == in->routing_epoch)
		return EG_PLUGIN_OK;
	/* our own copy: LL reads it at every dispatch and combine */
	if (nk && (rc = eg_nep_cuda(n, "copying the routing",
				    cudaMemcpyAsync(n->topk, in->topk_idx,
						    nk * sizeof(int64_t),
						    cudaMemcpyDeviceToDevice,
						    n->s))) != EG_PLUGIN_OK)
		return rc;
	if (!n->handle)
		r = ncclEpCreateHandle(&n->handle, n->group, lay, &n->tk.t, li,
				       NULL, n->s);
	else
		r = ncclEpUpdateHandle(n->handle, &n->tk.t, li, n->s);
	if (r != ncclSuccess)
		return eg_nep_fail(
		    n, n->epoch ? "ncclEpUpdateHandle" : "ncclEpCreateHandle",
		    r);
	n->epoch = in->routing_epoch;
	return EG_PLUGIN_OK;
}

static int nep_query(const eg_plugin_opts_t *o, eg_plugin_caps_t *c, char *err,
		     size_t len)
{
	eg_nep_opts_t op;

	if (eg_nep_opts_parse(o, &op, err, len) != EG_PLUGIN_OK)
		return EG_PLUGIN_EFAIL;
	eg_nep_caps(&op, c);
	return EG_PLUGIN_OK;
}

static void nep_destroy(void *inst)
{
	eg_nep_t *n = inst;
	void *bufs[] = {n ? n->topk : NULL,  n ? n->recv : NULL,
			n ? n->y : NULL,     n ? n->count : NULL,
			n ? n->total : NULL, n ? n->ridx : NULL,
			n ? n->rw : NULL};

	if (!n)
		return;
	if (n->s)
		cudaStreamSynchronize(n->s);
	if (n->handle)
		ncclEpHandleDestroy(n->handle);
	if (n->group)
		ncclEpGroupDestroy(n->group);
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		cudaFree(bufs[i]);
	free(n);
}

/* Every rank's verdict to every rank: all go on, or all stop with the
 * first failing rank's reason (NCCL EP's calls are collective). */
static int eg__agree(eg_nep_t *n, int rc, char *err, size_t len)
{
	const eg_plugin_boot_t *b = n->env.boot;
	struct {
		int32_t rc;
		char msg[252];
	} mine, *all = calloc(n->env.world, sizeof(mine));

	memset(&mine, 0, sizeof(mine));
	mine.rc = rc;
	if (rc != EG_PLUGIN_OK)
		snprintf(mine.msg, sizeof(mine.msg), "%s", err);
	if (!all || b->allgather(b->ctx, &mine, sizeof(mine), all) < 0) {
		snprintf(err, len, "agreeing on the case: %s",
			 all ? b->error(b->ctx) : "out of memory");
		free(all);
		return EG_PLUGIN_EFAIL;
	}
	rc = EG_PLUGIN_OK;
	for (uint32_t r = 0; r < n->env.world && rc == EG_PLUGIN_OK; r++)
		if (all[r].rc != EG_PLUGIN_OK) {
			rc = all[r].rc;
			if (n->env.world > 1)
				snprintf(err, len, "rank %u: %s", r,
					 all[r].msg);
			else
				snprintf(err, len, "%s", all[r].msg);
		}
	free(all);
	return rc;
}

static int eg__group(eg_nep_t *n)
{
	ncclEpGroupConfig_t c = NCCL_EP_GROUP_CONFIG_INIT;
	ncclResult_t r;

	c.algorithm = n->o.mode == EG_NEP_HT ? NCCL_EP_ALGO_HIGH_THROUGHPUT
					     : NCCL_EP_ALGO_LOW_LATENCY;
	c.num_experts = n->env.experts;
	c.max_dispatch_tokens_per_rank = n->p.B;
	c.max_recv_tokens_per_rank = n->p.recv;
	c.max_token_bytes = n->env.hidden * 2;
	c.rdma_buffer_size = NCCL_EP_AUTO;
	c.num_qp_per_rank = n->p.qps;
	c.max_num_sms = n->p.sms;
	/* its kernels' wait loops trap at epgate's deadline, not ~100 s */
	if (n->env.timeout_s > 0)
		c.timeout_ns = (uint64_t)(n->env.timeout_s * 1e9);
	r = ncclEpCreateGroup(&n->group, n->comm, &c);
	if (r != ncclSuccess) {
		n->group = NULL;
		return eg_nep_fail(n, "ncclEpCreateGroup", r);
	}
	return n->o.mode == EG_NEP_HT ? eg_nep_ht_setup(n) : eg_nep_ll_setup(n);
}

static int nep_create(const eg_plugin_env_t *e, void **inst, char *err,
		      size_t len)
{
	eg_nep_t *n = calloc(1, sizeof(*n));
	eg_nep_shape_t s = {0};
	int rc;

	*inst = NULL;
	if (!n) {
		snprintf(err, len, "out of memory");
		return EG_PLUGIN_EFAIL;
	}
	n->env = *e;
	n->comm = (ncclComm_t)e->nccl_comm;
	n->s = (cudaStream_t)e->cuda_stream;
	s = (eg_nep_shape_t){.world = e->world,
			     .experts = e->experts,
			     .topk = e->topk,
			     .hidden = e->hidden,
			     .dtype = e->dtype,
			     .max_tokens = e->max_tokens};
	rc = eg_nep_opts_parse(&e->opts, &n->o, err, len);
	if (rc == EG_PLUGIN_OK && !n->comm) {
		snprintf(err, len, "epgate gave no NCCL communicator");
		rc = EG_PLUGIN_EFAIL;
	}
	if (rc == EG_PLUGIN_OK)
		rc = eg_nep_comm_check(n, &s, err, len);
	if (rc == EG_PLUGIN_OK)
		rc = eg_nep_plan(&n->o, &s, &n->p, err, len);
	if ((rc = eg__agree(n, rc, err, len)) == EG_PLUGIN_OK &&
	    (rc = eg__group(n)) != EG_PLUGIN_OK)
		snprintf(err, len, "%s", n->err);
	if (rc != EG_PLUGIN_OK) {
		nep_destroy(n);
		return rc;
	}
	*inst = n;
	return EG_PLUGIN_OK;
}

static int nep_dispatch(void *inst, const eg_plugin_input_t *in,
			eg_plugin_recv_t *out)
{
	eg_nep_t *n = inst;

	n->err[0] = '\0';
	if (in->tokens != n->env.tokens) {
		snprintf(n->err, sizeof(n->err),
			 "dispatch of %u tokens, created for %u", in->tokens,
			 n->env.tokens);
		return EG_PLUGIN_EFAIL;
	}
	return n->o.mode == EG_NEP_HT ? eg_nep_ht_dispatch(n, in, out)
				      : eg_nep_ll_dispatch(n, in, out);
}

static int nep_combine(void *inst, const eg_plugin_input_t *in, const void *y,
		       void *out)
{
	eg_nep_t *n = inst;

	n->err[0] = '\0';
	return n->o.mode == EG_NEP_HT ? eg_nep_ht_combine(n, in, y, out)
				      : eg_nep_ll_combine(n, in, y, out);
}

static const char *nep_error(void *inst)
{
	eg_nep_t *n = inst;

	return n && n->err[0] ? n->err : NULL;
}

static const eg_plugin_t nep_plugin = {
    .size = sizeof(eg_plugin_t),
    .abi_version = EG_PLUGIN_ABI_VERSION,
    .name = "nccl-ep",
    .version =
	"NCCL EP " EG__STR(NCCL_EP_MAJOR) "." EG__STR(NCCL_EP_MINOR) "." EG__STR(NCCL_EP_PATCH) " (built with NCCL " EG__STR(
	    NCCL_MAJOR) "." EG__STR(NCCL_MINOR) "." EG__STR(NCCL_PATCH) ")",
    .query = nep_query,
    .create = nep_create,
    .dispatch = nep_dispatch,
    .combine = nep_combine,
    .destroy = nep_destroy,
    .error = nep_error,
};

const eg_plugin_t *eg_plugin_entry(uint32_t host_abi)
{
	(void)host_abi;
	return &nep_plugin;
}
