/* The launch grid shared by the CUDA files of kernels/ (ep.cu, verify.cu):
 * blocks for work items at per_block each, at least 1, at most 65535. */
#ifndef EG_KERNELS_GRID_H
#define EG_KERNELS_GRID_H

#include <stddef.h>

static inline unsigned eg__grid(size_t work, size_t per_block)
{
	size_t g = (work + per_block - 1) / per_block;

	if (g < 1)
		g = 1;
	return g > 65535u ? 65535u : (unsigned)g;
}

#endif
