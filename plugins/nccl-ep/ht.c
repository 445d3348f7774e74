/* NCCL EP high-throughput mode, flat layout: the handle (per routing
 * epoch) all-gathers the routing and computes, on the device, how many
 * rows arrive and how many use each local expert (expert_count, passed
 * as it is: a (token, expert) pair once, so not the slots' count where
 * a token names an expert twice: docs/plugins.md); dispatch writes one row
 * per (source token, this rank) into [N, H] with its received top-k ids
 * (int64: the local experts ascending, then -1) and weights; epgate keys
 * the rows by content, applies the weights in its expert stage, and the
 * combine sums each token's rows back. Kernels are JIT-compiled by nvcc
 * at their first call. */
#include "nep.h"

int eg_nep_ht_setup(eg_nep_t *n)
{
	size_t K = n->env.topk, H = n->env.hidden, N = n->p.recv;
	int rc;

	if ((rc = eg_nep_setup_common(n, N)) ||
	    (rc = eg_nep_cuda(
		 n, "cudaMalloc",
		 cudaMalloc((void **)&n->ridx, N * K * sizeof(int64_t) + 8))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->rw, N * K * 4 + 4))) ||
	    (rc = eg_nep_cuda(n, "cudaMalloc",
			      cudaMalloc((void **)&n->total, 8))))
		return rc;
	eg_nep_tensor(&n->rcv, ncclBfloat16, n->recv, 2, N, H, 0);
	eg_nep_tensor(&n->ri, ncclInt64, n->ridx, 2, N, K, 0);
	eg_nep_tensor(&n->rwt, ncclFloat32, n->rw, 2, N, K, 0);
	eg_nep_tensor(&n->tot, ncclInt32, n->total, 1, 1, 0, 0);
	return EG_PLUGIN_OK;
}

int eg_nep_ht_dispatch(eg_nep_t *n, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out)
{
	ncclEpDispatchInputs_t di = NCCL_EP_DISPATCH_INPUTS_INIT;
	ncclEpDispatchOutputs_t dout = NCCL_EP_DISPATCH_OUTPUTS_INIT;
	ncclEpLayoutInfo_t li = NCCL_EP_LAYOUT_INFO_INIT;
	int rc;

	/* the counters come with the handle: the routing fixes them */
	li.expert_counters = &n->cnt.t;
	li.recv_total_counter = &n->tot.t;
	if ((rc = eg_nep_routing(n, in, &li)) != EG_PLUGIN_OK)
		return rc;
	eg_nep_tensor(&n->x, ncclBfloat16, (void *)in->x, 2, in->tokens,
		      n->env.hidden, 0);
	eg_nep_tensor(&n->w, ncclFloat32, (void *)in->topk_w, 2, in->tokens,
		      n->env.topk, 0);
	di.tokens = &n->x.t;
	di.topk_weights = &n->w.t;
	dout.tokens = &n->rcv.t;
	dout.topk_weights = &n->rwt.t;
	dout.topk_idx = &n->ri.t;
	if ((rc = eg_nep_dispatch_run(n, &di, &dout, NULL)) != EG_PLUGIN_OK)
		return rc;
	out->stride = n->p.recv;
	out->count = n->total;
	out->count_bytes = 4;
	out->x = n->recv;
	out->topk_idx = n->ridx;
	out->idx_bytes = 8;
	out->topk_w = n->rw;
	out->expert_count = n->count;
	out->y = n->y;
	return EG_PLUGIN_OK;
}

int eg_nep_ht_combine(eg_nep_t *n, const eg_plugin_input_t *in, const void *y,
		      void *out)
{
	eg_nep_tensor(&n->yt, ncclBfloat16, (void *)y, 2, n->p.recv,
		      n->env.hidden, 0);
	return eg_nep_combine_run(n, in, out, 0);
}
