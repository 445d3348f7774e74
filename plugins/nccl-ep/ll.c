/* NCCL EP low-latency mode, expert-major: dispatch writes each token once
 * per local expert it selected into [L, W*B, H] with per-expert counters
 * (rows packed from 0 in arrival order) and returns no source map, so
 * epgate keys the rows by content; the combine takes the unweighted expert
 * outputs in the same layout and applies the source's weights. */
#include "nep.h"

int eg_nep_ll_setup(eg_nep_t *n)
{
	size_t T = n->env.tokens, K = n->env.topk, H = n->env.hidden;
	size_t L = n->p.L, rows = n->p.stride;
	int rc;

	if ((rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->topk,
					 (T * K + 1) * sizeof(int64_t)))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc(&n->recv, L * rows * H * 2 + 16))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc(&n->y, L * rows * H * 2 + 16))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->count, L * 4 + 4))))
		return rc;
	eg_nep_tensor(&n->tk, ncclInt64, n->topk, 2, T, K, 0);
	eg_nep_tensor(&n->rcv, ncclBfloat16, n->recv, 3, L, rows, H);
	eg_nep_tensor(&n->cnt, ncclInt32, n->count, 1, L, 0, 0);
	return EG_PLUGIN_OK;
}

int eg_nep_ll_dispatch(eg_nep_t *n, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out)
{
	ncclEpDispatchInputs_t di = NCCL_EP_DISPATCH_INPUTS_INIT;
	ncclEpDispatchOutputs_t dout = NCCL_EP_DISPATCH_OUTPUTS_INIT;
	ncclEpLayoutInfo_t li = NCCL_EP_LAYOUT_INFO_INIT;
	ncclResult_t r;
	int rc;

	if ((rc = eg_nep_routing(n, in, NULL)) != EG_PLUGIN_OK)
		return rc;
	eg_nep_tensor(&n->x, ncclBfloat16, (void *)in->x, 2, in->tokens,
		      n->env.hidden, 0);
	di.tokens = &n->x.t;
	dout.tokens = &n->rcv.t;
	li.expert_counters = &n->cnt.t;
	if ((r = ncclEpDispatch(n->handle, &di, &dout, &li, NULL, n->s)) !=
	    ncclSuccess)
		return eg_nep_fail(n, "ncclEpDispatch", r);
	if ((r = ncclEpComplete(n->handle, NULL, n->s)) != ncclSuccess)
		return eg_nep_fail(n, "ncclEpComplete", r);
	out->stride = n->p.stride;
	out->count = n->count;
	out->count_bytes = 4;
	out->x = n->recv;
	out->y = n->y;
	return EG_PLUGIN_OK;
}

int eg_nep_ll_combine(eg_nep_t *n, const eg_plugin_input_t *in, const void *y,
		      void *out)
{
	ncclEpCombineInputs_t ci = NCCL_EP_COMBINE_INPUTS_INIT;
	ncclEpCombineOutputs_t co = NCCL_EP_COMBINE_OUTPUTS_INIT;
	size_t H = n->env.hidden;
	ncclResult_t r;

	eg_nep_tensor(&n->yt, ncclBfloat16, (void *)y, 3, n->p.L, n->p.stride,
		      H);
	eg_nep_tensor(&n->out, ncclBfloat16, out, 2, in->tokens, H, 0);
	eg_nep_tensor(&n->w, ncclFloat32, (void *)in->topk_w, 2, in->tokens,
		      n->env.topk, 0);
	ci.tokens = &n->yt.t;
	co.tokens = &n->out.t;
	co.topk_weights = &n->w.t; /* read: the combine applies them */
	if ((r = ncclEpCombine(n->handle, &ci, &co, NULL, n->s)) != ncclSuccess)
		return eg_nep_fail(n, "ncclEpCombine", r);
	if ((r = ncclEpComplete(n->handle, NULL, n->s)) != ncclSuccess)
		return eg_nep_fail(n, "ncclEpComplete", r);
	return EG_PLUGIN_OK;
}
