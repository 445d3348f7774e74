/* The "nccl" measurement backend: GPU memory, one rank per process and
 * GPU, the NCCL engines (a2a, dense) over eg_xport_nccl, as the engine
 * backend (lib/bench/backend_engine.c) runs them: the input is generated
 * on the device, the verified step checks on the GPU, a timed step is
 * timed with CUDA events on the engines' stream (dispatch and combine
 * end synchronized, so each interval is the whole call, host gaps
 * included). NCCL counts no operations: the engines count the sends,
 * receives and collectives they issue per communicator. The path and the
 * xnode mode come from the setup (bench engine's --path, --xnode-mode),
 * else EPGATE_NCCL_PATH and EPGATE_NCCL_XNODE (a profile's env); the
 * evidence is the path NCCL's log shows. Built with CUDA and NCCL only
 * (Makefile.am). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "epgate/bench.h"
#include "epgate/error.h"
#include "epgate/evidence.h"
#include "epgate/nccl.h"
#include "epgate/sized.h"
#include "lib/bench/backend_engine.h"

static int eg__nb_open(const eg_world_t *world, eg_boot_t *boot,
		       const eg_bench_setup_t *s, const eg_xport_ops_t **x,
		       void **xs, void **stream, char *err, size_t errlen)
{
	eg_nccl_opts_t o = {.size = sizeof(o),
			    .num_comms = s->num_comms ? s->num_comms : 1,
			    .timeout_s = s->timeout_s,
			    .device = s->device,
			    .xnode_mode = getenv("EPGATE_NCCL_XNODE")};
	const char *path = getenv("EPGATE_NCCL_PATH");
	eg_nccl_t *n = NULL;
	int rc;

	*x = &eg_xport_nccl;
	*xs = NULL;
	*stream = NULL;
	/* a command's options, else the environment (a profile's env) */
	if (EG_HAS(s, eg_bench_setup_t, nccl_xnode) && s->nccl_xnode)
		o.xnode_mode = s->nccl_xnode;
	if (EG_HAS(s, eg_bench_setup_t, nccl_path) && s->nccl_path)
		path = s->nccl_path;
	if (EG_HAS(s, eg_bench_setup_t, nccl_blocking))
		o.blocking = s->nccl_blocking;
	if (eg_nccl_path_parse(path, &o.path) < 0) {
		snprintf(err, errlen,
			 "nccl: path \"%s\": want auto, nvlink or xnode", path);
		return EG_EINVAL;
	}
	if ((rc = eg_nccl_open(&n, world, boot, &o, err, errlen)) < 0)
		return rc;
	*xs = n;
	*stream = eg_nccl_stream(n, 0);
	return EG_OK;
}

static void eg__nb_describe(const eg_xport_ops_t *x, void *xs,
			    eg_bench_counters_t *c)
{
	eg_nccl_t *n = xs;
	eg_nccl_evidence_t e;
	char sum[96];
	int rt = 0, drv = 0, dev = -1;

	(void)x;
	if (eg_nccl_evidence(n, &e) < 0)
		snprintf(sum, sizeof(sum), "unknown (no NCCL log)");
	else
		eg_nccl_evidence_summary(&e, sum, sizeof(sum));
	snprintf(c->transport_evidence, sizeof(c->transport_evidence),
		 "nccl %s", sum);
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	snprintf(c->versions, sizeof(c->versions),
		 "%s, CUDA runtime %d.%d, driver API %d.%d", eg_nccl_version(n),
		 rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
	if (cudaGetDevice(&dev) == cudaSuccess)
		eg_gpu_name(dev, c->gpu, sizeof(c->gpu));
}

static const eg_engine_backend_t eg__nccl = {
    .size = sizeof(eg_engine_backend_t),
    .name = "nccl",
    .engines = &eg_step_engines_cuda,
    .open = eg__nb_open,
    .describe = eg__nb_describe,
    .count_wire = 1,
};

static int eg__nb_setup(const eg_world_t *world, eg_boot_t *boot,
			const eg_bench_setup_t *s, const eg_workload_t *w,
			void **state, char *err, size_t errlen)
{
	return eg_engine_backend_setup(&eg__nccl, world, boot, s, w, state, err,
				       errlen);
}

const eg_bench_backend_ops_t eg_bench_backend_nccl = {
    .size = sizeof(eg_bench_backend_ops_t),
    .name = "nccl",
    .setup = eg__nb_setup,
    .verify = eg_engine_backend_verify,
    .step = eg_engine_backend_step,
    .counters_reset = eg_engine_backend_reset,
    .counters = eg_engine_backend_counters,
    .teardown = eg_engine_backend_teardown,
};
