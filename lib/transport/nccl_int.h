/* The NCCL transport's state, shared by lib/nccl/ only (built with CUDA
 * and NCCL). */
#ifndef EG_NCCL_INT_H
#define EG_NCCL_INT_H

#include <cuda_runtime_api.h>
/* nccl.h declares a few functions without prototypes (f()) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "epgate/error.h"
#include "epgate/nccl.h"

struct eg_nccl {
	eg_world_t world;
	uint32_t K;
	double timeout_s;
	int device;
	eg_nccl_path_t path;
	ncclComm_t comm[EG_COMMS_MAX];
	cudaStream_t stream[EG_COMMS_MAX];
	int broken;
	char err[512];
	char version[32];
	uint64_t ops[EG_COMMS_MAX];
	uint64_t bytes_sent, bytes_sent_xnode;
};

/* A CUDA call's result as an epgate error recorded against the step. */
static inline int eg__nccl_cuda(eg_nccl_t *n, cudaError_t e, const char *step)
{
	if (e == cudaSuccess)
		return EG_OK;
	return eg_nccl_fail(n, EG_ECUDA, step, cudaGetErrorString(e));
}

/* An NCCL call: success and ncclInProgress (nonblocking) are fine. */
static inline int eg__nccl_call(eg_nccl_t *n, ncclResult_t r, uint32_t k,
				const char *step)
{
	if (r == ncclSuccess || r == ncclInProgress)
		return EG_OK;
	const char *last = n->comm[k] ? ncclGetLastError(n->comm[k]) : NULL;
	char msg[300];
	snprintf(msg, sizeof(msg), "NCCL: %s%s%s (comm %u)",
		 ncclGetErrorString(r), last && *last ? ": " : "",
		 last ? last : "", k);
	return eg_nccl_fail(n, EG_EPEER, step, msg);
}

/* Rows [lo, hi) of n for communicator k of K. */
static inline void eg__nccl_slice(uint64_t n, uint32_t k, uint32_t K,
				  uint64_t *lo, uint64_t *hi)
{
	*lo = n * k / K;
	*hi = n * (k + 1) / K;
}

/* Device buffer of at least need bytes (grown, never shrunk; contents
 * not kept). Growing frees and allocates, which synchronizes the device:
 * callers grow only between steps. */
static inline int eg__nccl_grow(eg_nccl_t *n, void **p, size_t *cap,
				size_t need, const char *step)
{
	if (need <= *cap && *p)
		return EG_OK;
	cudaFree(*p);
	*p = NULL;
	*cap = 0;
	if (need < 256)
		need = 256;
	if (cudaMalloc(p, need) != cudaSuccess) {
		cudaGetLastError();
		return eg_nccl_fail(n, EG_ENOMEM, step,
				    "device memory exhausted");
	}
	*cap = need;
	return EG_OK;
}

#endif
