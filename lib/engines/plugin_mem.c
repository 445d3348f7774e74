/* A caller's memory as the plugin engine sees it: whether a pointer is
 * device memory, and copies between any two of host and device memory
 * for a caller whose buffers are on the device (plugin_devcall.c). The
 * plugin's own buffers are in its memory space (epgate/space.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "epgate/error.h"
#include "plugin_int.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

int eg_plug_on_device(const void *p)
{
	struct cudaPointerAttributes a;

	if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError(); /* not a CUDA pointer: no sticky error */
		return 0;
	}
	return a.type == cudaMemoryTypeDevice ||
	       a.type == cudaMemoryTypeManaged;
}

int eg_plug_dev_copy(void *dst, const void *src, size_t n)
{
	/* the caller's work runs on its own stream: wait for all of it */
	if (cudaDeviceSynchronize() != cudaSuccess)
		return EG_ECUDA;
	if (n && cudaMemcpy(dst, src, n, cudaMemcpyDefault) != cudaSuccess)
		return EG_ECUDA;
	return EG_OK;
}
#else
int eg_plug_on_device(const void *p)
{
	(void)p;
	return 0;
}

int eg_plug_dev_copy(void *dst, const void *src, size_t n)
{
	(void)dst;
	(void)src;
	(void)n;
	return EG_ENOSYS;
}
#endif
