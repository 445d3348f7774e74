/* The "nccl" measurement backend: GPU memory, one rank per process and
 * GPU, the NCCL engines (a2a, dense) over eg_xport_nccl. The input is
 * generated on the device; a step is dispatch, the expert stage (a kernel)
 * and combine, timed with CUDA events on the engines' stream (dispatch and
 * combine end synchronized, so each interval is the whole call, host
 * gaps included); verification is one step checked on the GPU against
 * the dense reference. NCCL counts no operations: the engines count the
 * sends, receives and collectives they issue per communicator. Payload
 * bytes come from the routing and the rows the engine declares
 * (eg_perf_rank_bytes_rule), as for the fabric backend; the wire bytes of
 * dispatch (payload, metadata, counts) are what the engine hands NCCL
 * for other ranks during dispatch, and an engine that times its phases
 * (nccl-a2a with EPGATE_NCCL_PHASES=1) reports them per step too. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench.h"
#include "epgate/bench_driver.h"
#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "epgate/nccl.h"
#include "epgate/reference.h"
#include "epgate/verify.h"

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

#include "lib/transport/nccl_int.h"

typedef struct eg__nb {
	const eg_engine_ops_t *ops;
	void *eng;
	eg_nccl_t *n;
	eg_world_t world;
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in; /* device arrays */
	eg_recv_t recv;	    /* device arrays */
	void *y, *out;
	cudaEvent_t ev[4];
	eg_perf_bytes_t bytes;
	uint64_t steps;
	uint64_t ops0[EG_COMMS_MAX];
	uint64_t wire_dispatch; /* since the last reset */
	uint32_t n_phases;
	eg_bench_phase_t phase[EG_BENCH_PHASES_MAX]; /* sums since reset */
} eg__nb_t;

static void eg__nb_teardown(void *state)
{
	eg__nb_t *f = state;

	if (!f)
		return;
	if (f->eng)
		f->ops->destroy(f->eng);
	eg_recv_free_cuda(&f->recv);
	cudaFree(f->in.x);
	cudaFree(f->in.scales);
	cudaFree(f->in.topk_idx);
	cudaFree(f->in.topk_w);
	cudaFree(f->y);
	cudaFree(f->out);
	for (int i = 0; i < 4; i++)
		if (f->ev[i])
			cudaEventDestroy(f->ev[i]);
	eg_nccl_close(f->n);
	eg_gen_fini(&f->g);
	eg_workload_fini(&f->w);
	free(f);
}

static void *eg__nb_dmalloc(size_t n, int *bad)
{
	void *p = NULL;

	if (cudaMalloc(&p, n + 16) != cudaSuccess) {
		cudaGetLastError();
		*bad = 1;
		return NULL;
	}
	return p;
}

static int eg__nb_setup(const eg_world_t *world, eg_boot_t *boot,
			const eg_bench_setup_t *s, const eg_workload_t *w,
			void **state, char *err, size_t errlen)
{
	eg_nccl_opts_t o = {.size = sizeof(o),
			    .num_comms = s->num_comms ? s->num_comms : 1,
			    .timeout_s = s->timeout_s,
			    .device = s->device,
			    .xnode_mode = getenv("EPGATE_NCCL_XNODE")};
	eg__nb_t *f;
	uint32_t me = world->rank, T, cap;
	size_t xb, nb;
	int rc, bad = 0;

	*state = NULL;
	if (s->size < sizeof(*s) || w->world != world->size) {
		snprintf(err, errlen,
			 "nccl: the workload's world %u is not "
			 "the job's %u",
			 w->world, world->size);
		return EG_EINVAL;
	}
	if (eg_nccl_path_parse(getenv("EPGATE_NCCL_PATH"), &o.path) < 0) {
		snprintf(err, errlen,
			 "nccl: EPGATE_NCCL_PATH: want auto, "
			 "nvlink or xnode");
		return EG_EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return EG_ENOMEM;
	f->world = *world;
	f->ops = eg_engine_nccl_find(s->engine);
	if (!f->ops) {
		snprintf(err, errlen, "nccl: no engine \"%s\" (a2a, dense)",
			 s->engine);
		rc = EG_EINVAL;
		goto fail;
	}
	if ((rc = eg_workload_copy(&f->w, w)) < 0)
		goto fail_mem;
	rc = eg_nccl_open(&f->n, world, boot, &o, err, errlen);
	if (rc < 0)
		goto fail;
	T = eg_workload_tokens(&f->w, me);
	cap = eg_recv_max_rows(&f->w);
	xb = (size_t)f->w.hidden * eg_dtype_size(f->w.dtype);
	nb = f->w.dtype == EG_DTYPE_FP8 ? f->w.hidden / EG_FP8_BLOCK : 0;
	f->in.rank = me;
	f->in.tokens = T;
	f->in.dtype = f->w.dtype;
	f->in.hidden = f->w.hidden;
	f->in.topk = f->w.topk;
	f->in.x = eg__nb_dmalloc(T * xb, &bad);
	f->in.scales = nb ? eg__nb_dmalloc(T * nb * 4, &bad) : NULL;
	f->in.topk_idx = eg__nb_dmalloc((size_t)T * f->w.topk * 4, &bad);
	f->in.topk_w = eg__nb_dmalloc((size_t)T * f->w.topk * 4, &bad);
	f->y = eg__nb_dmalloc((size_t)cap * eg_perf_combine_row_bytes(&f->w),
			      &bad);
	f->out = eg__nb_dmalloc(eg_combine_bytes(&f->w, me), &bad);
	for (int i = 0; i < 4; i++)
		bad |= cudaEventCreate(&f->ev[i]) != cudaSuccess;
	if (bad || (rc = eg_recv_alloc_cuda(&f->recv, &f->w, me, cap)) < 0) {
		rc = bad ? EG_ENOMEM : rc;
		goto fail_mem;
	}
	if ((rc = eg_gen_init(&f->g, &f->w)) < 0 ||
	    (rc = eg_gen_tokens_cuda(&f->g, me, T, f->in.x, f->in.scales,
				     f->n->stream[0])) < 0 ||
	    (rc = eg_gen_routing_cuda(&f->g, me, T, f->in.topk_idx,
				      f->in.topk_w, f->n->stream[0])) < 0 ||
	    (rc = eg_nccl_sync(f->n, "setup")) < 0)
		goto fail_mem;
	rc = eg_perf_rank_bytes_rule(&f->w, eg_engine_rows(f->ops), me,
				     world->ranks_per_node, &f->bytes);
	if (rc < 0 && rc != EG_ENOSYS)
		goto fail_mem;
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .first_rank = me,
			       .n_ranks = 1,
			       .world = &f->world,
			       .xport = &eg_xport_nccl,
			       .xport_state = f->n};
	if ((rc = f->ops->create(&f->w, &ctx, &f->eng)) < 0) {
		f->eng = NULL;
		snprintf(err, errlen, "nccl: engine %s: %s", s->engine,
			 eg_strerror(rc));
		goto fail;
	}
	*state = f;
	return EG_OK;
fail_mem:
	snprintf(err, errlen, "nccl: setup on rank %u: %s", me,
		 f->n && eg_nccl_error(f->n)[0] ? eg_nccl_error(f->n)
						: eg_strerror(rc));
fail:
	eg__nb_teardown(f);
	return rc;
}

static float eg__ms(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;

	cudaEventElapsedTime(&ms, a, b);
	return ms;
}

/* The engine's phases of the step just done, added to the sums. */
static void eg__nb_phases(eg__nb_t *f)
{
	eg_engine_phase_t p[EG_BENCH_PHASES_MAX];
	int n;

	if (f->ops->size <
		offsetof(eg_engine_ops_t, phases) + sizeof(f->ops->phases) ||
	    !f->ops->phases)
		return;
	n = f->ops->phases(f->eng, p, EG_BENCH_PHASES_MAX);
	for (int i = 0; i < n; i++) {
		snprintf(f->phase[i].name, sizeof(f->phase[i].name), "%s",
			 p[i].name);
		f->phase[i].ms += p[i].ms;
	}
	if (n > 0)
		f->n_phases = (uint32_t)n;
}

static int eg__nb_step(void *state, eg_bench_times_t *t)
{
	eg__nb_t *f = state;
	cudaStream_t s0 = f->n->stream[0];
	uint64_t sent0 = f->n->bytes_sent;
	int rc;

	cudaEventRecord(f->ev[0], s0);
	rc = f->ops->dispatch(f->eng, &f->in, &f->recv);
	if (rc < 0)
		return rc;
	f->wire_dispatch += f->n->bytes_sent - sent0;
	cudaEventRecord(f->ev[1], s0);
	if ((rc = eg_ep_expert_cuda(&f->g, &f->recv, f->y, s0)) < 0)
		return rc;
	cudaEventRecord(f->ev[2], s0);
	rc = f->ops->combine(f->eng, &f->recv, (const void *const *)&f->y,
			     (void *const *)&f->out);
	if (rc < 0)
		return rc;
	cudaEventRecord(f->ev[3], s0);
	if (cudaEventSynchronize(f->ev[3]) != cudaSuccess)
		return eg_nccl_fail(f->n, EG_ECUDA, "step", "event");
	t->dispatch_s = 1e-3 * eg__ms(f->ev[0], f->ev[1]);
	t->expert_s = 1e-3 * eg__ms(f->ev[1], f->ev[2]);
	t->combine_s = 1e-3 * eg__ms(f->ev[2], f->ev[3]);
	f->steps++;
	eg__nb_phases(f);
	return EG_OK;
}

static int eg__nb_verify(void *state, char *err, size_t errlen)
{
	eg__nb_t *f = state;
	uint32_t r = f->world.rank;
	size_t cb = eg_combine_bytes(&f->w, r);
	size_t n = (size_t)eg_workload_tokens(&f->w, r) * f->w.hidden;
	int bits = f->w.data == EG_DATA_EXACT ||
		   (f->ops->flags & EG_ENGINE_CANONICAL_ORDER);
	eg_bench_times_t t;
	eg_recv_t exp = {0}, dexp = {0};
	eg_verdict_t v;
	void *cexp = malloc(cb + 1), *dcexp = NULL;
	double *r64 = malloc((n + 1) * 8), *m64 = malloc((n + 1) * 8);
	double *dr64 = NULL, *dm64 = NULL;
	int rc = eg__nb_step(f, &t);

	if (rc < 0) {
		snprintf(err, errlen, "rank %u: step failed: %s", r,
			 eg_nccl_error(f->n)[0] ? eg_nccl_error(f->n)
						: eg_strerror(rc));
		goto out;
	}
	eg_verdict_init(&v);
	rc = EG_ENOMEM;
	if (!cexp || !r64 || !m64 ||
	    (rc = eg_ref_dispatch(&f->w, &f->g, r, &exp)) < 0 ||
	    (rc = eg_ref_combine(&f->w, &f->g, r, cexp, r64, m64)) < 0 ||
	    (rc = eg_recv_alloc_cuda(&dexp, &f->w, r, exp.capacity)) < 0 ||
	    (rc = eg_recv_copy_cuda(&dexp, &exp, 1)) < 0 ||
	    cudaMalloc(&dcexp, cb + 16) != cudaSuccess ||
	    cudaMalloc((void **)&dr64, n * 8 + 16) != cudaSuccess ||
	    cudaMalloc((void **)&dm64, n * 8 + 16) != cudaSuccess ||
	    cudaMemcpy(dcexp, cexp, cb, cudaMemcpyHostToDevice) !=
		cudaSuccess ||
	    cudaMemcpy(dr64, r64, n * 8, cudaMemcpyHostToDevice) !=
		cudaSuccess ||
	    cudaMemcpy(dm64, m64, n * 8, cudaMemcpyHostToDevice) !=
		cudaSuccess) {
		snprintf(err, errlen, "rank %u: reference: %s", r,
			 eg_strerror(rc < 0 ? rc : EG_ECUDA));
		rc = rc < 0 ? rc : EG_ECUDA;
		goto out;
	}
	eg_verify_dispatch_cuda(&f->w, &dexp, &f->recv, &v);
	if (bits)
		eg_verify_combine_cuda(&f->w, r, EG_COMPARE_BITS, dcexp, NULL,
				       NULL, f->out, &v);
	if (f->w.data == EG_DATA_RANDOM)
		eg_verify_combine_cuda(&f->w, r, EG_COMPARE_BOUNDED, NULL, dr64,
				       dm64, f->out, &v);
	rc = EG_OK;
	if (eg_verdict_total_wrong(&v)) {
		snprintf(err, errlen,
			 "rank %u: %llu wrong value(s) against the reference "
			 "(first in %s)",
			 r, (unsigned long long)eg_verdict_total_wrong(&v),
			 v.n_first ? eg_field_name(v.first[0].field) : "?");
		rc = EG_EMISMATCH;
	}
out:
	eg_recv_free(&exp);
	eg_recv_free_cuda(&dexp);
	cudaFree(dcexp);
	cudaFree(dr64);
	cudaFree(dm64);
	free(cexp);
	free(r64);
	free(m64);
	return rc;
}

static void eg__nb_reset(void *state)
{
	eg__nb_t *f = state;
	eg_xport_stats_t s;

	eg_nccl_stats(f->n, &s);
	memcpy(f->ops0, s.ops_posted, sizeof(f->ops0));
	f->steps = 0;
	f->wire_dispatch = 0;
	f->n_phases = 0;
	memset(f->phase, 0, sizeof(f->phase));
}

static int eg__nb_counters(void *state, eg_bench_counters_t *c)
{
	eg__nb_t *f = state;
	eg_xport_stats_t s;
	eg_nccl_evidence_t e;
	char sum[96];
	int rt = 0, drv = 0;

	memset(c, 0, sizeof(*c));
	eg_nccl_stats(f->n, &s);
	c->num_comms = s.num_comms;
	for (uint32_t k = 0; k < s.num_comms && k < 16; k++)
		c->ops_posted[k] = s.ops_posted[k] - f->ops0[k];
	c->bytes_so = f->steps * f->bytes.disp_so;
	c->bytes_su = f->steps * f->bytes.disp_su;
	c->wire_dispatch = f->wire_dispatch;
	c->n_phases = f->n_phases;
	memcpy(c->phase, f->phase, sizeof(c->phase));
	if (eg_nccl_evidence(f->n, &e) < 0)
		snprintf(sum, sizeof(sum), "unknown (no NCCL log)");
	else
		eg_nccl_evidence_summary(&e, sum, sizeof(sum));
	snprintf(c->transport_evidence, sizeof(c->transport_evidence),
		 "nccl %s", sum);
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	snprintf(c->versions, sizeof(c->versions),
		 "%s, CUDA runtime %d.%d, driver API %d.%d",
		 eg_nccl_version(f->n), rt / 1000, rt % 1000 / 10, drv / 1000,
		 drv % 1000 / 10);
	return EG_OK;
}

const eg_bench_backend_ops_t eg_bench_backend_nccl = {
    .size = sizeof(eg_bench_backend_ops_t),
    .name = "nccl",
    .setup = eg__nb_setup,
    .verify = eg__nb_verify,
    .step = eg__nb_step,
    .counters_reset = eg__nb_reset,
    .counters = eg__nb_counters,
    .teardown = eg__nb_teardown,
};

#else
/* Built without CUDA or NCCL: no nccl backend. */
typedef int eg__nccl_backend_unused;
#endif
