/* The "nccl-a2a" engine: the sparse dispatch and combine of lib/engines/
 * a2a.c on device buffers over NCCL. Per step: the layout kernel finds
 * where each token goes; one uint32 per peer (grouped ncclSend/ncclRecv on
 * communicator 0) tells every rank how many rows it gets, copied to the
 * host once; the pack kernel writes each destination's rows in wire
 * sections (x | scales | src_token | topk_idx | topk_w), and this rank's
 * own rows straight into its receive buffer; every section is sent in K
 * row slices, slice k on communicator k right after its own pack kernel
 * (packing slice k+1 overlaps sending slice k), and received directly at
 * its canonical place (rows of source s from rank_prefix[s]), so there is
 * no unpack copy; a finish kernel fills src_rank, expert_count and
 * rank_prefix. Combine sends each source's rows of y back (they are
 * contiguous in the canonical layout) and sums in destination order.
 * Built with CUDA and NCCL only (Makefile.am); nccl_none.c stands in
 * without them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>

#include "nccl_eng.h"

#define WMAX EG_EP_WORLD_MAX

typedef struct eg__na2a {
	eg__nccl_eng_t e;
	uint32_t T, stride;
	int32_t *d_pos;
	size_t pos_cap;
	uint32_t *d_cnt; /* 2W: rows to each peer, rows from each peer */
	uint32_t *h_cnt; /* pinned copy */
	uint32_t n_sent[WMAX], n_recv[WMAX], prefix[WMAX + 1];
	void *send[WMAX], *yrecv[WMAX];
	size_t send_cap[WMAX], yrecv_cap[WMAX];
	cudaEvent_t ev0, ev[EG_COMMS_MAX];
	cudaEvent_t evp[EG_COMMS_MAX], ev_aux; /* packs done */
	cudaStream_t aux;		       /* this rank's own rows */
	/* EPGATE_NCCL_PHASES=1: timing events at the phase boundaries, and
	 * the last step's intervals between them (ms) */
	int phases;
	cudaEvent_t pev[EG_NCCL_PHASES_MAX + 1];
	double phase_ms[EG_NCCL_PHASES_MAX];
} eg__na2a_t;

/* The phases a step reports: (slot, name); slots 5 and 6 are unused. */
static const struct {
	int slot;
	const char *name;
} eg__phase_names[] = {
    {0, "layout"},	   {1, "counts"}, {2, "host"},
    {3, "pack_exchange"},  {4, "finish"}, {7, "combine_exchange"},
    {8, "combine_kernel"},
};

static int eg__na2a_phases(void *state, eg_engine_phase_t *p, size_t max)
{
	eg__na2a_t *a = state;
	size_t n = sizeof(eg__phase_names) / sizeof(eg__phase_names[0]);

	if (!a->phases)
		return 0;
	for (size_t i = 0; i < n && i < max; i++) {
		p[i].name = eg__phase_names[i].name;
		p[i].ms = a->phase_ms[eg__phase_names[i].slot];
	}
	return (int)(n < max ? n : max);
}

static void eg__mark(eg__na2a_t *a, int i)
{
	if (a->phases)
		cudaEventRecord(a->pev[i], a->e.n->stream[0]);
}

/* Phases [first, last) after a sync: intervals between the marks. */
static void eg__phases_read(eg__na2a_t *a, int first, int last)
{
	for (int i = first; a->phases && i < last; i++) {
		float ms = 0;
		cudaEventElapsedTime(&ms, a->pev[i], a->pev[i + 1]);
		a->phase_ms[i] = ms;
	}
}

/* The end of a step whose last kernel launch returned rc: its failure
 * (said as step launch), or the mark after it, the wait (step sync) and
 * the phases [first, last). */
static int eg__step_end(eg__na2a_t *a, int rc, const char *launch,
			const char *sync, int first, int last)
{
	if (rc < 0)
		return eg_nccl_fail(a->e.n, rc, launch, "kernel launch");
	eg__mark(a, last);
	if ((rc = eg_nccl_sync(a->e.n, sync)) < 0)
		return rc;
	eg__phases_read(a, first, last);
	return EG_OK;
}

/* The created ones of n events. */
static void eg__events_destroy(cudaEvent_t *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
}

static void eg__na2a_destroy(void *state)
{
	eg__na2a_t *a = state;

	if (!a)
		return;
	EG_CUDA_FREE(a->d_pos, a->d_cnt);
	eg_cuda_free_all(a->send, WMAX);
	eg_cuda_free_all(a->yrecv, WMAX);
	cudaFreeHost(a->h_cnt);
	eg__events_destroy(&a->ev0, 1);
	eg__events_destroy(&a->ev_aux, 1);
	if (a->aux)
		cudaStreamDestroy(a->aux);
	eg__events_destroy(a->evp, EG_COMMS_MAX);
	eg__events_destroy(a->pev, EG_NCCL_PHASES_MAX + 1);
	eg__events_destroy(a->ev, EG_COMMS_MAX);
	eg__nccl_eng_free(&a->e);
}

/* The count buffers, events and aux stream (nonzero: one failed). */
static int eg__na2a_init(void *state)
{
	eg__na2a_t *a = state;
	int bad = 0;

	bad |= cudaMalloc((void **)&a->d_cnt, 2 * WMAX * 4) != cudaSuccess;
	bad |= cudaMallocHost((void **)&a->h_cnt, 2 * WMAX * 4) != cudaSuccess;
	bad |= cudaEventCreateWithFlags(&a->ev0, cudaEventDisableTiming) !=
	       cudaSuccess;
	for (uint32_t k = 0; k < eg_nccl_num_comms(a->e.n); k++)
		bad |= cudaEventCreateWithFlags(
			   &a->ev[k], cudaEventDisableTiming) != cudaSuccess ||
		       cudaEventCreateWithFlags(
			   &a->evp[k], cudaEventDisableTiming) != cudaSuccess;
	bad |= cudaEventCreateWithFlags(&a->ev_aux, cudaEventDisableTiming) !=
	       cudaSuccess;
	bad |= cudaStreamCreateWithFlags(&a->aux, cudaStreamNonBlocking) !=
	       cudaSuccess;
	/* a command's --phases, else the environment (a profile's env) */
	a->phases = (a->e.flags & EG_ENGINE_CTX_PHASES) ||
		    (getenv("EPGATE_NCCL_PHASES") &&
		     !strcmp(getenv("EPGATE_NCCL_PHASES"), "1"));
	for (int i = 0; a->phases && i <= EG_NCCL_PHASES_MAX; i++)
		bad |= cudaEventCreate(&a->pev[i]) != cudaSuccess;
	return bad;
}

static int eg__na2a_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			   void **state)
{
	return eg__nccl_eng_create(sizeof(eg__na2a_t), w, ctx, eg__na2a_init,
				   eg__na2a_destroy, state);
}

/* The five sections of a view (scales NULL unless fp8). */
static void eg__sections(const eg_ep_rows_t *v, void *p[5])
{
	p[0] = v->x;
	p[1] = v->scales;
	p[2] = v->src_token;
	p[3] = v->topk_idx;
	p[4] = v->topk_w;
}

/* Streams 1..K-1 wait for what stream 0 has queued so far. */
static int eg__fan_out(eg__na2a_t *a, const char *step)
{
	eg_nccl_t *n = a->e.n;
	int rc = eg__nccl_cuda(n, cudaEventRecord(a->ev0, n->stream[0]), step);

	for (uint32_t k = 1; k < n->K && rc == EG_OK; k++)
		rc = eg__nccl_cuda(
		    n, cudaStreamWaitEvent(n->stream[k], a->ev0, 0), step);
	return rc;
}

/* Stream 0 waits for streams 1..K-1. */
static int eg__fan_in(eg__na2a_t *a, const char *step)
{
	eg_nccl_t *n = a->e.n;
	int rc = EG_OK;

	for (uint32_t k = 1; k < n->K && rc == EG_OK; k++) {
		rc = eg__nccl_cuda(n, cudaEventRecord(a->ev[k], n->stream[k]),
				   step);
		if (rc == EG_OK)
			rc = eg__nccl_cuda(
			    n, cudaStreamWaitEvent(n->stream[0], a->ev[k], 0),
			    step);
	}
	return rc;
}

/* Counts: one uint32 to and from every peer on communicator 0. */
static int eg__counts(eg__na2a_t *a)
{
	eg_nccl_t *n = a->e.n;
	cudaStream_t s0 = n->stream[0];
	uint32_t W = a->e.W, me = a->e.me;
	int rc = EG_OK;

	ncclGroupStart();
	for (uint32_t p = 0; p < W && rc == EG_OK; p++) {
		if (p == me)
			continue;
		rc = eg__nccl_call(n,
				   ncclSend(a->d_cnt + p, 1, ncclUint32, (int)p,
					    n->comm[0], s0),
				   0, "dispatch counts");
		if (rc == EG_OK)
			rc = eg__nccl_call(n,
					   ncclRecv(a->d_cnt + W + p, 1,
						    ncclUint32, (int)p,
						    n->comm[0], s0),
					   0, "dispatch counts");
		eg_nccl_count(n, 0, 2, p, 4);
	}
	int rc2 = eg_nccl_group_end(n, 0, "dispatch counts");
	if (rc < 0 || rc2 < 0)
		return rc < 0 ? rc : rc2;
	if ((rc =
		 eg__nccl_cuda(n,
			       cudaMemcpyAsync(a->d_cnt + W + me, a->d_cnt + me,
					       4, cudaMemcpyDeviceToDevice, s0),
			       "dispatch counts")) < 0 ||
	    (rc = eg__nccl_cuda(n,
				cudaMemcpyAsync(a->h_cnt, a->d_cnt, 2 * W * 4,
						cudaMemcpyDeviceToHost, s0),
				"dispatch counts")) < 0)
		return rc;
	return eg_nccl_sync(n, "dispatch counts");
}

/* Slice k of every peer's rows: sections out of send views, into recv
 * views. nsend[p] / nrecv[p] rows; sb[i] bytes per row of section i. */
static int eg__exchange(eg__na2a_t *a, uint32_t k, const eg_ep_rows_t *sv,
			const eg_ep_rows_t *rv, const uint32_t *nsend,
			const uint32_t *nrecv, const size_t *sb, int nsec,
			const char *step)
{
	eg_nccl_t *n = a->e.n;
	int rc = EG_OK;

	ncclGroupStart();
	for (uint32_t p = 0; p < a->e.W && rc == EG_OK; p++) {
		void *sp[5], *rp[5];
		uint64_t lo, hi;

		if (p == a->e.me)
			continue;
		eg__sections(&sv[p], sp);
		eg__sections(&rv[p], rp);
		eg__nccl_slice(nsend[p], k, n->K, &lo, &hi);
		for (int i = 0; i < nsec && hi > lo && rc == EG_OK; i++) {
			if (!sb[i])
				continue;
			rc = eg__nccl_call(
			    n,
			    ncclSend((const char *)sp[i] + lo * sb[i],
				     (hi - lo) * sb[i], ncclUint8, (int)p,
				     n->comm[k], n->stream[k]),
			    k, step);
			eg_nccl_count(n, k, 1, p, (hi - lo) * sb[i]);
		}
		eg__nccl_slice(nrecv[p], k, n->K, &lo, &hi);
		for (int i = 0; i < nsec && hi > lo && rc == EG_OK; i++) {
			if (!sb[i])
				continue;
			rc = eg__nccl_call(n,
					   ncclRecv((char *)rp[i] + lo * sb[i],
						    (hi - lo) * sb[i],
						    ncclUint8, (int)p,
						    n->comm[k], n->stream[k]),
					   k, step);
			eg_nccl_count(n, k, 1, a->e.me, 0);
		}
	}
	int rc2 = eg_nccl_group_end(n, k, step);
	return rc < 0 ? rc : rc2;
}

/* Pack and send as a pipeline: slice k of every destination's rows is
 * packed on stream k once slice k-1's pack is done, then sent on
 * communicator k, so packing slice k+1 overlaps the transfer of slice k;
 * this rank's own rows are packed on the aux stream after the last slice,
 * while the transfers run. Stream 0 then waits for all of it. */
static int eg__pipeline(eg__na2a_t *a, const eg_ep_src_t *src,
			const eg_ep_rows_t *sv, const eg_ep_rows_t *rv,
			const size_t *sb)
{
	eg_nccl_t *n = a->e.n;
	const eg_workload_t *w = &a->e.w;
	uint32_t remote[WMAX], self[WMAX], K = n->K;
	int rc;

	for (uint32_t p = 0; p < a->e.W; p++) {
		remote[p] = p == a->e.me ? 0 : a->n_sent[p];
		self[p] = p == a->e.me ? a->n_sent[p] : 0;
	}
	for (uint32_t k = 0; k < K; k++) {
		cudaStream_t sk = n->stream[k];

		/* stream 0 runs after the layout; the others after the
		 * previous slice's pack (itself after the layout) */
		if (k && (rc = eg__nccl_cuda(
			      n, cudaStreamWaitEvent(sk, a->evp[k - 1], 0),
			      "dispatch pack")) < 0)
			return rc;
		rc = eg_ep_pack_slice_cuda(w, src, 0, a->e.W, a->d_pos, sv,
					   remote, k, K, sk);
		if (rc < 0)
			return eg_nccl_fail(n, rc, "dispatch pack",
					    "kernel launch");
		if ((rc = eg__nccl_cuda(n, cudaEventRecord(a->evp[k], sk),
					"dispatch pack")) < 0 ||
		    (rc = eg__exchange(a, k, sv, rv, a->n_sent, a->n_recv, sb,
				       5, "dispatch rows")) < 0)
			return rc;
	}
	if ((rc =
		 eg__nccl_cuda(n, cudaStreamWaitEvent(a->aux, a->evp[K - 1], 0),
			       "dispatch pack")) < 0)
		return rc;
	rc = eg_ep_pack_slice_cuda(w, src, 0, a->e.W, a->d_pos, sv, self, 0, 1,
				   a->aux);
	if (rc < 0)
		return eg_nccl_fail(n, rc, "dispatch pack", "kernel launch");
	if ((rc = eg__nccl_cuda(n, cudaEventRecord(a->ev_aux, a->aux),
				"dispatch pack")) < 0)
		return rc;
	return eg__nccl_cuda(n, cudaStreamWaitEvent(n->stream[0], a->ev_aux, 0),
			     "dispatch pack");
}

static int eg__na2a_dispatch(void *state, const eg_rank_input_t *in,
			     eg_recv_t *out)
{
	eg__na2a_t *a = state;
	eg_nccl_t *n = a->e.n;
	const eg_workload_t *w = &a->e.w;
	cudaStream_t s0 = n->stream[0];
	uint32_t W = a->e.W, me = a->e.me, total = 0;
	eg_ep_rows_t sv[WMAX], rv[WMAX];
	eg_ep_src_t src;
	size_t sb[5];
	int rc;

	if ((rc = eg__nccl_eng_usable(n, "dispatch")) < 0)
		return rc;
	a->T = in->tokens;
	a->stride = in->tokens ? in->tokens : 1;
	rc = eg__nccl_grow(n, (void **)&a->d_pos, &a->pos_cap,
			   (size_t)W * a->stride * 4, "dispatch");
	if (rc < 0)
		return rc;
	src = (eg_ep_src_t){.x = in->x,
			    .scales = in->scales,
			    .topk_idx = in->topk_idx,
			    .topk_w = in->topk_w,
			    .nsrc = 1,
			    .stride = a->stride,
			    .first_src = me,
			    .tokens = {a->T}};
	eg__mark(a, 0);
	rc = eg_ep_layout_cuda(w, &src, 0, W, a->d_pos, a->d_cnt, s0);
	if (rc < 0)
		return eg_nccl_fail(n, rc, "dispatch layout", "kernel launch");
	eg__mark(a, 1);
	if ((rc = eg__counts(a)) < 0)
		return rc;
	eg__mark(a, 2);
	for (uint32_t p = 0; p < W; p++) {
		a->n_sent[p] = a->h_cnt[p];
		a->n_recv[p] = a->h_cnt[W + p];
		a->prefix[p] = total;
		total += a->n_recv[p];
	}
	a->prefix[W] = total;
	eg_fault_point("dispatch", me);
	if (total > out->capacity)
		return eg_nccl_fail(n, EG_ERANGE, "dispatch",
				    "more rows than the receive buffer holds");
	for (uint32_t p = 0; p < W; p++) {
		eg_ep_rows_recv(out, a->prefix[p], &rv[p]);
		if (p == me) {
			sv[p] = rv[p]; /* my own rows: packed in place */
			continue;
		}
		rc = eg__nccl_grow(n, &a->send[p], &a->send_cap[p],
				   eg_ep_wire_bytes(w, a->n_sent[p]),
				   "dispatch");
		if (rc < 0)
			return rc;
		eg_ep_rows_wire(w, a->send[p], a->n_sent[p], &sv[p]);
	}
	eg__mark(a, 3);
	eg_ep_section_bytes(w, sb);
	if ((rc = eg__pipeline(a, &src, sv, rv, sb)) < 0)
		return rc;
	if ((rc = eg__fan_in(a, "dispatch rows")) < 0)
		return rc;
	eg__mark(a, 4);
	rc = eg_ep_finish_cuda(out, a->prefix, s0);
	return eg__step_end(a, rc, "dispatch finish", "dispatch rows", 0, 5);
}

static int eg__na2a_combine(void *state, const eg_recv_t *recv,
			    const void *const *y, void *const *out)
{
	eg__na2a_t *a = state;
	eg_nccl_t *n = a->e.n;
	const eg_workload_t *w = &a->e.w;
	size_t rowb =
	    (size_t)w->hidden * eg_dtype_size(eg_combine_dtype(w->dtype));
	size_t sb[5] = {rowb, 0, 0, 0, 0};
	uint32_t W = a->e.W, me = a->e.me;
	eg_ep_rows_t sv[WMAX], rv[WMAX];
	const void *ys[WMAX];
	int rc;

	(void)recv; /* the rows are where dispatch put them */
	if ((rc = eg__nccl_eng_usable(n, "combine")) < 0)
		return rc;
	eg_fault_point("combine", me);
	memset(sv, 0, sizeof(sv));
	memset(rv, 0, sizeof(rv));
	for (uint32_t p = 0; p < W; p++) {
		sv[p].x = (uint8_t *)y[0] + (size_t)a->prefix[p] * rowb;
		if (p == me) {
			ys[p] = sv[p].x;
			continue;
		}
		rc = eg__nccl_grow(n, &a->yrecv[p], &a->yrecv_cap[p],
				   (size_t)a->n_sent[p] * rowb, "combine");
		if (rc < 0)
			return rc;
		rv[p].x = a->yrecv[p];
		ys[p] = a->yrecv[p];
	}
	eg__mark(a, 7);
	if ((rc = eg__fan_out(a, "combine")) < 0)
		return rc;
	for (uint32_t k = 0; k < n->K; k++)
		if ((rc = eg__exchange(a, k, sv, rv, a->n_recv, a->n_sent, sb,
				       1, "combine")) < 0)
			return rc;
	if ((rc = eg__fan_in(a, "combine")) < 0)
		return rc;
	eg__mark(a, 8);
	rc = eg_ep_combine_cuda(w, a->T, W, a->d_pos, a->stride, ys, out[0],
				n->stream[0]);
	return eg__step_end(a, rc, "combine", "combine", 7, 9);
}

const eg_engine_ops_t eg_engine_nccl_a2a = {
    .size = sizeof(eg_engine_ops_t),
    .name = "nccl-a2a",
    .create = eg__na2a_create,
    .dispatch = eg__na2a_dispatch,
    .combine = eg__na2a_combine,
    .destroy = eg__na2a_destroy,
    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_PER_RANK,
    .phases = eg__na2a_phases,
};
