/* A caller whose buffers live in device memory: the GPU measurement
 * backend ("nccl") runs its engines on the cuda space, so a CUDA plugin's
 * adapter gets device pointers for the input, the receive layout, the
 * expert outputs and the combine result. In verified steps only, the
 * adapter reads the input and the expert outputs back to the host (after
 * the device is idle: the caller's work is on a stream of its own), maps
 * the native layout on the host as always, and writes the canonical
 * layout to the caller's device buffers. The native findings (native_key,
 * native_copy, ...) are kept with the host copy: the device verifier
 * reads the canonical layout only, where a wrong row still shows as
 * missing, unknown or different. Timed steps touch none of this. */
#include <stdlib.h>
#include <string.h>

#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "epgate/mem.h"
#include "plugin_int.h"

int eg_plug_dev_probe(eg_plug_run_t *r, const eg_rank_input_t *in)
{
	if (r->n_disp || r->pl->caps.memory != EG_PLUGIN_MEM_CUDA)
		return EG_OK;
	r->dev_caller = eg_plug_on_device(in->topk_w);
	return EG_OK;
}

int eg_plug_dev_input(eg_plug_run_t *r, const eg_rank_input_t *in,
		      const eg_rank_input_t **use)
{
	eg_rank_input_t *h = &r->hin;
	size_t T = r->T, nk = T * r->K;
	size_t xb = T * r->H * eg_dtype_size(r->w.dtype);
	size_t sb = T * (r->H / EG_FP8_BLOCK) * sizeof(float);
	int rc;

	*use = in;
	if (!r->dev_caller)
		return EG_OK;
	if (!h->topk_w) {
		h->x = malloc(xb + 1);
		h->scales = in->scales ? malloc(sb + 4) : NULL;
		h->topk_idx = malloc(nk * 4 + 4);
		h->topk_w = malloc(nk * 4 + 4);
		if (!h->x || (in->scales && !h->scales) || !h->topk_idx ||
		    !h->topk_w)
			return EG_ENOMEM;
	}
	*h = (eg_rank_input_t){.rank = in->rank,
			       .tokens = in->tokens,
			       .iter = in->iter,
			       .dtype = in->dtype,
			       .hidden = in->hidden,
			       .topk = in->topk,
			       .x = h->x,
			       .scales = h->scales,
			       .topk_idx = h->topk_idx,
			       .topk_w = h->topk_w};
	if ((rc = eg_plug_dev_copy(h->x, in->x, xb)) < 0 ||
	    (in->scales &&
	     (rc = eg_plug_dev_copy(h->scales, in->scales, sb)) < 0) ||
	    (rc = eg_plug_dev_copy(h->topk_idx, in->topk_idx, nk * 4)) < 0 ||
	    (rc = eg_plug_dev_copy(h->topk_w, in->topk_w, nk * 4)) < 0)
		return eg_plug_run_err(
		    r, rc, "the input from device memory: %s", eg_strerror(rc));
	*use = h;
	return EG_OK;
}

int eg_plug_dev_recv(eg_plug_run_t *r, eg_recv_t *out, eg_recv_t **host)
{
	int rc;

	*host = out;
	if (!r->dev_caller)
		return EG_OK;
	if (r->hrecv.capacity < out->capacity) {
		eg_recv_free(&r->hrecv);
		if ((rc = eg_recv_alloc(&r->hrecv, &r->w, r->me,
					out->capacity)) < 0)
			return rc;
	}
	*host = &r->hrecv;
	return EG_OK;
}

int eg_plug_dev_recv_put(eg_plug_run_t *r, eg_recv_t *out)
{
	int rc;

	if (!r->dev_caller)
		return EG_OK;
	out->num_rows = r->hrecv.num_rows;
	/* a copy from pageable memory may return before it lands: the
	 * caller reads the layout on a stream of its own */
	if ((rc = eg_recv_copy_cuda(out, &r->hrecv, 1)) < 0 ||
	    (rc = eg_plug_dev_copy(NULL, NULL, 0)) < 0)
		return eg_plug_run_err(r, rc, "the layout to device memory: %s",
				       eg_strerror(rc));
	return EG_OK;
}

int eg_plug_dev_y(eg_plug_run_t *r, const void *y, const void **host)
{
	size_t n = (size_t)r->hrecv.num_rows * r->H *
		   eg_dtype_size(eg_combine_dtype(r->w.dtype));
	int rc;

	*host = y;
	if (!r->dev_caller)
		return EG_OK;
	if (n + 1 > r->hy_cap) {
		free(r->hy);
		r->hy_cap = 0;
		if (!(r->hy = malloc(n + 1)))
			return EG_ENOMEM;
		r->hy_cap = n + 1;
	}
	if ((rc = eg_plug_dev_copy(r->hy, y, n)) < 0)
		return eg_plug_run_err(r, rc,
				       "the expert outputs from device memory: "
				       "%s",
				       eg_strerror(rc));
	*host = r->hy;
	return EG_OK;
}

void eg_plug_dev_free(eg_plug_run_t *r)
{
	EG_FREE(r->hin.x, r->hin.scales, r->hin.topk_idx, r->hin.topk_w, r->hy);
	eg_recv_free(&r->hrecv);
}
