/* The built-in measurement backends by transport name. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>

#include "epgate/bench.h"
#include "epgate/bench_driver.h"

#if defined(HAVE_NCCL) && defined(HAVE_CUDA)
/* GPU memory over NCCL (lib/bench/backend_nccl.c). */
extern const eg_bench_backend_ops_t eg_bench_backend_nccl;
#endif

const eg_bench_backend_ops_t *eg_bench_backend_find(const char *transport)
{
	if (!transport)
		return NULL;
#ifdef HAVE_LIBFABRIC
	if (!strcmp(transport, "fabric"))
		return &eg_bench_backend_fabric;
#endif
#if defined(HAVE_NCCL) && defined(HAVE_CUDA)
	if (!strcmp(transport, "nccl"))
		return &eg_bench_backend_nccl;
#endif
	if (!strcmp(transport, "null"))
		return &eg_bench_backend_null;
	return NULL;
}
