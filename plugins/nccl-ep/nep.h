/* The NCCL EP adapter's instance, shared by its files: nccl_ep.c (the
 * plugin table, create and destroy), comm.c (what this process's NCCL
 * and communicator allow), ll.c and ht.c (the two modes' dispatch and
 * combine). Built only with NCCL EP (configure --with-nccl-ep=DIR). */
#ifndef EG_NEP_H
#define EG_NEP_H

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nccl_ep.h>

#include "shape.h"

/* One tensor descriptor with its sizes (NCCL EP keeps pointers to both). */
typedef struct eg_nep_tensor {
	ncclEpTensor_t t;
	size_t sizes[3];
} eg_nep_tensor_t;

typedef struct eg_nep {
	eg_plugin_env_t env;
	eg_nep_opts_t o;
	eg_nep_plan_t p;
	ncclComm_t comm;
	cudaStream_t s;
	ncclEpGroup_t group;
	ncclEpHandle_t handle;
	uint32_t epoch; /* the routing epoch of the handle; 0: none yet */
	/* device buffers: the routing (kept until the combine has run), the
	 * received rows, the expert outputs, counters; HT also the
	 * received top-k slots and the total received */
	int64_t *topk;
	void *recv, *y;
	int32_t *count, *total;
	int64_t *ridx;
	float *rw;
	/* descriptors: x, topk, w (inputs), recv, count, y, out, total,
	 * ridx, rw */
	eg_nep_tensor_t x, tk, w, rcv, cnt, yt, out, tot, ri, rwt;
	char err[512];
} eg_nep_t;

/* t as an ndim tensor of type dt over data (a..c its sizes). */
void eg_nep_tensor(eg_nep_tensor_t *t, ncclDataType_t dt, void *data,
		   unsigned ndim, size_t a, size_t b, size_t c);
/* A failed NCCL EP or CUDA call into n->err; EG_PLUGIN_EFAIL. */
int eg_nep_fail(eg_nep_t *n, const char *what, ncclResult_t r);
int eg_nep_cuda(eg_nep_t *n, const char *what, cudaError_t e);
/* The buffers both modes have: the routing (tokens x topk int64), the
 * received rows and the expert outputs (rows x hidden bf16 each) and
 * the per-expert counters, with the routing and counter tensors. */
int eg_nep_setup_common(eg_nep_t *n, size_t rows);
/* One dispatch / combine on the plugin's stream, then its completion.
 * The combine takes the expert outputs n->yt describes (the mode's
 * layout) into out (in's tokens x hidden bf16), applying in's weights
 * itself when weighted (LL). */
int eg_nep_dispatch_run(eg_nep_t *n, const ncclEpDispatchInputs_t *di,
			const ncclEpDispatchOutputs_t *dout,
			const ncclEpLayoutInfo_t *li);
int eg_nep_combine_run(eg_nep_t *n, const eg_plugin_input_t *in, void *out,
		       int weighted);
/* The routing of in into the handle, new for a new routing epoch. */
int eg_nep_routing(eg_nep_t *n, const eg_plugin_input_t *in,
		   const ncclEpLayoutInfo_t *li);

/* What this process's NCCL and the communicator allow (comm.c): the
 * NCCL EP was built against, the device's SMs, NCCL's NVLink team and
 * the device API and GIN it needs. EG_PLUGIN_OK, or ENOTSUP / EFAIL with
 * the reason. */
int eg_nep_comm_check(eg_nep_t *n, eg_nep_shape_t *s, char *why, size_t len);

/* The modes (ll.c, ht.c): buffers after the group exists, then the
 * calls. */
int eg_nep_ll_setup(eg_nep_t *n);
int eg_nep_ll_dispatch(eg_nep_t *n, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out);
int eg_nep_ll_combine(eg_nep_t *n, const eg_plugin_input_t *in, const void *y,
		      void *out);
int eg_nep_ht_setup(eg_nep_t *n);
int eg_nep_ht_dispatch(eg_nep_t *n, const eg_plugin_input_t *in,
		       eg_plugin_recv_t *out);
int eg_nep_ht_combine(eg_nep_t *n, const eg_plugin_input_t *in, const void *y,
		      void *out);

#endif
