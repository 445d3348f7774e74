/* The CUDA entry points for builds without CUDA (Makefile.am compiles
 * this file only then): they report ENOSYS, and no device is ever
 * available. */
#include <stddef.h>

#include "epgate/error.h"
#include "epgate/gen.h"

int eg_gen_tokens_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
		       void *d_x, float *d_scales, void *stream)
{
	(void)g, (void)rank, (void)tokens, (void)d_x, (void)d_scales;
	(void)stream;
	return EG_ENOSYS;
}

int eg_gen_routing_cuda(const eg_gen_t *g, uint32_t rank, uint32_t tokens,
			int32_t *d_topk_idx, float *d_topk_w, void *stream)
{
	(void)g, (void)rank, (void)tokens, (void)d_topk_idx, (void)d_topk_w;
	(void)stream;
	return EG_ENOSYS;
}

int eg_cuda_available(void)
{
	return 0;
}
