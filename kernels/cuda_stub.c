/* The CUDA entry points for builds without CUDA: they report ENOSYS, and
 * no device is ever available. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifndef HAVE_CUDA

#include <stddef.h>

#include "epgate/error.h"
#include "epgate/gen.h"

int eg_gen_tokens_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
		       void *d_x, float *d_scales, void *stream)
{
	(void)g;
	(void)rank;
	(void)tokens;
	(void)d_x;
	(void)d_scales;
	(void)stream;
	return EG_ENOSYS;
}

int eg_gen_routing_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			int32_t *d_topk_idx, float *d_topk_w, void *stream)
{
	(void)g;
	(void)rank;
	(void)tokens;
	(void)d_topk_idx;
	(void)d_topk_w;
	(void)stream;
	return EG_ENOSYS;
}

int eg_cuda_available(void)
{
	return 0;
}

#else

/* ISO C wants at least one declaration per translation unit. */
typedef int eg__cuda_stub_unused;

#endif
