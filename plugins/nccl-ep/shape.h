/* The NCCL EP adapter's options, what it declares, and the shapes NCCL EP
 * takes, checked before any NCCL EP call: NCCL EP asserts, throws or
 * exits on what it does not take, so a case it cannot run must be a skip
 * with the reason before it is called (docs/plugins.md, "NCCL EP"). Pure
 * host code without NCCL EP's headers: suites/l0/test_nccl_ep_shape runs
 * it everywhere. */
#ifndef EG_NEP_SHAPE_H
#define EG_NEP_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/plugin.h"

typedef enum eg_nep_mode {
	EG_NEP_LL = 0, /* low latency: expert-major [L, W*B, H] */
	EG_NEP_HT = 1, /* high throughput: flat [N, H] with top-k slots */
} eg_nep_mode_t;

/* plugin:libeg-nccl-ep.so,mode=ll|ht,sms=N,qps=N,recv=N */
typedef struct eg_nep_opts {
	eg_nep_mode_t mode;
	uint32_t sms;  /* max_num_sms; 0: NCCL EP's (LL all SMs, HT 16) */
	uint32_t qps;  /* num_qp_per_rank; 0: LL the local experts (as
			  ep_bench), HT NCCL EP's */
	uint32_t recv; /* max_recv_tokens_per_rank; 0: world x tokens (LL:
			  NCCL EP's default, the same) */
} eg_nep_opts_t;

int eg_nep_opts_parse(const eg_plugin_opts_t *o, eg_nep_opts_t *out, char *err,
		      size_t len);
/* What the adapter declares for these options (query). */
void eg_nep_caps(const eg_nep_opts_t *o, eg_plugin_caps_t *c);

/* One case: epgate's shape and what this rank knows of its device and
 * its communicator. */
typedef struct eg_nep_shape {
	uint32_t world, experts, topk, hidden, dtype, max_tokens;
	uint32_t device_sms; /* the device's SMs; 0: unknown */
	uint32_t lsa;	     /* ranks in NCCL's NVLink (LSA) team; 0:
				unknown */
} eg_nep_shape_t;

/* How NCCL EP is configured for it. */
typedef struct eg_nep_plan {
	uint32_t B;	 /* max_dispatch_tokens_per_rank */
	uint32_t L;	 /* local experts */
	uint32_t recv;	 /* max_recv_tokens_per_rank (LL 0: NCCL EP's) */
	uint32_t stride; /* rows per group of the native layout */
	uint32_t sms;	 /* max_num_sms (0: NCCL EP's) */
	uint32_t qps;	 /* num_qp_per_rank (0: NCCL EP's) */
} eg_nep_plan_t;

/* EG_PLUGIN_OK and the plan, or EG_PLUGIN_ENOTSUP and the reason. */
int eg_nep_plan(const eg_nep_opts_t *o, const eg_nep_shape_t *s,
		eg_nep_plan_t *p, char *why, size_t len);

/* HT compiles kernels with nvcc at run time: EG_PLUGIN_OK when the
 * compiler and the directories NCCL EP's JIT reads from its environment
 * are there (a directory left to the library's built-in default is not
 * checked), else EG_PLUGIN_ENOTSUP and what is missing. */
int eg_nep_jit_ready(char *why, size_t len);

#endif
