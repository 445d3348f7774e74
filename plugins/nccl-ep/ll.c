/* NCCL EP low-latency mode, expert-major: dispatch writes each token once
 * per local expert it selected into [L, W*B, H] with per-expert counters
 * (rows packed from 0 in arrival order) and returns no source map, so
 * epgate keys the rows by content; the combine takes the unweighted expert
 * outputs in the same layout and applies the source's weights. */
#include "nep.h"

int eg_nep_ll_setup(eg_nep_t *n)
{
	size_t H = n->env.hidden, L = n->p.L, rows = n->p.stride;
	int rc;

	if ((rc = eg_nep_setup_common(n, L * rows)))
		return rc;
	eg_nep_tensor(&n->rcv, ncclBfloat16, n->recv, 3, L, rows, H);
	return EG_PLUGIN_OK;
}

int eg_nep_ll_dispatch(eg_nep_t *n, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out)
{
	ncclEpDispatchInputs_t di = NCCL_EP_DISPATCH_INPUTS_INIT;
	ncclEpDispatchOutputs_t dout = NCCL_EP_DISPATCH_OUTPUTS_INIT;
	ncclEpLayoutInfo_t li = NCCL_EP_LAYOUT_INFO_INIT;
	int rc;

	if ((rc = eg_nep_routing(n, in, NULL)) != EG_PLUGIN_OK)
		return rc;
	eg_nep_tensor(&n->x, ncclBfloat16, (void *)in->x, 2, in->tokens,
		      n->env.hidden, 0);
	di.tokens = &n->x.t;
	dout.tokens = &n->rcv.t;
	li.expert_counters = &n->cnt.t;
	if ((rc = eg_nep_dispatch_run(n, &di, &dout, &li)) != EG_PLUGIN_OK)
		return rc;
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
	eg_nep_tensor(&n->yt, ncclBfloat16, (void *)y, 3, n->p.L, n->p.stride,
		      n->env.hidden);
	return eg_nep_combine_run(n, in, out, 1);
}
