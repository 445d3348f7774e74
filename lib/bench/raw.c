/* The raw phase of a sweep: the fabric transport alone, for the model
 * line's bandwidth and post rate (docs/metrics.md, "Model").  Same method
 * as `epgate bench --raw`: each call after a bootstrap barrier, the
 * slowest rank's time per call, a fresh transport per phase. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/stats.h"
#include "epgate/transport.h"

#ifdef HAVE_LIBFABRIC
typedef struct eg__rphase {
	double *t;     /* slowest rank's time per timed call */
	double ops_ep; /* ops per call on rank 0's busiest endpoint */
	char provider[80];
} eg__rphase_t;

/* Every peer gets sbuf's bytes and fills a receive buffer of its own;
 * this rank none: no self copy, the fabric alone. */
static int eg__raw_peers(const eg_world_t *w, size_t bytes, void *sbuf,
			 const void **send, size_t *sb, void **recv, size_t *rb)
{
	memset(sbuf, 0x5a, bytes);
	for (uint32_t p = 0; p < w->size; p++) {
		if (p == w->rank)
			continue;
		send[p] = sbuf;
		sb[p] = rb[p] = bytes;
		if (!(recv[p] = malloc(bytes)))
			return EG_ENOMEM;
		memset(recv[p], 0, bytes); /* touch the pages first */
	}
	return EG_OK;
}

/* t[i]: the slowest of W ranks' times for call i (all: rank by rank). */
static void eg__raw_slowest(const double *all, unsigned iters, uint32_t W,
			    double *t)
{
	for (unsigned i = 0; i < iters; i++) {
		t[i] = 0;
		for (uint32_t r = 0; r < W; r++)
			if (all[(size_t)r * iters + i] > t[i])
				t[i] = all[(size_t)r * iters + i];
	}
}

int eg_raw_phase(const eg_world_t *w, eg_boot_t *b, const char *provider,
		 uint32_t K, double timeout_s, unsigned warmup, unsigned iters,
		 size_t bytes, size_t chunk, eg_raw_phase_t *ph, char *err,
		 size_t errlen)
{
	const eg_xport_ops_t *x = &eg_xport_fabric;
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = provider,
			      .num_comms = K,
			      .timeout_s = timeout_s,
			      .chunk = chunk};
	uint32_t W = w->size;
	void *xs = NULL, *sbuf = NULL;
	const void **send = NULL;
	void **recv = NULL;
	size_t *sb = NULL, *rb = NULL;
	double *mine = NULL, *all = NULL;
	int rc;

	rc = x->create(w, b, &xo, &xs, err, errlen);
	if (rc < 0)
		return rc;
	send = calloc(W, sizeof(*send));
	recv = calloc(W, sizeof(*recv));
	sb = calloc(W, sizeof(*sb));
	rb = calloc(W, sizeof(*rb));
	mine = calloc(iters, sizeof(*mine));
	all = calloc((size_t)iters * W, sizeof(*all));
	sbuf = malloc(bytes);
	rc = EG_ENOMEM;
	if (!send || !recv || !sb || !rb || !mine || !all || !sbuf)
		goto out;
	if (eg__raw_peers(w, bytes, sbuf, send, sb, recv, rb) < 0)
		goto out;
	x->stats(xs, &ph->s0);
	for (unsigned i = 0; i < warmup + iters; i++) {
		double t0;

		if (i == warmup)
			x->stats(xs, &ph->s0);
		if ((rc = eg_boot_barrier(b, timeout_s)) < 0) {
			snprintf(err, errlen, "raw phase: barrier: %s",
				 eg_boot_error(b));
			goto out;
		}
		t0 = eg_now();
		rc = x->alltoallv(xs, (const void *const *)send, sb,
				  (void *const *)recv, rb);
		if (rc < 0) {
			snprintf(err, errlen, "raw phase: %s", x->error(xs));
			goto out;
		}
		if (i >= warmup)
			mine[i - warmup] = eg_now() - t0;
	}
	x->stats(xs, &ph->s1);
	rc = eg_boot_allgather(b, mine, iters * sizeof(*mine), all, timeout_s);
	if (rc < 0) {
		snprintf(err, errlen, "raw phase: gathering times: %s",
			 eg_boot_error(b));
		goto out;
	}
	eg__raw_slowest(all, iters, W, ph->t);
	rc = EG_OK;
out:
	if (rc == EG_ENOMEM)
		snprintf(err, errlen, "raw phase: out of memory");
	for (uint32_t p = 0; recv && p < W; p++)
		free(recv[p]);
	free(send);
	free(recv);
	free(sb);
	free(rb);
	free(mine);
	free(all);
	free(sbuf);
	x->destroy(xs);
	return rc;
}

/* A raw phase reduced to what the model line needs. */
static int eg__rphase(const eg_world_t *w, eg_boot_t *b, const char *provider,
		      uint32_t K, double timeout_s, unsigned warmup,
		      unsigned iters, size_t bytes, size_t chunk,
		      eg__rphase_t *ph, char *err, size_t errlen)
{
	eg_raw_phase_t r = {.t = ph->t};
	int rc = eg_raw_phase(w, b, provider, K, timeout_s, warmup, iters,
			      bytes, chunk, &r, err, errlen);
	if (rc < 0)
		return rc;
	ph->ops_ep = 0;
	for (uint32_t k = 0; k < r.s1.num_comms && k < EG_COMMS_MAX; k++) {
		double o =
		    (double)(r.s1.ops_posted[k] - r.s0.ops_posted[k]) / iters;

		if (o > ph->ops_ep)
			ph->ops_ep = o;
	}
	snprintf(ph->provider, sizeof(ph->provider), "%s/%s",
		 r.s1.provider_intra[0] ? r.s1.provider_intra : "-",
		 r.s1.provider_inter[0] ? r.s1.provider_inter : "-");
	return EG_OK;
}

int eg_bench_model_fabric(const eg_world_t *w, eg_boot_t *b,
			  const char *provider, uint32_t num_comms,
			  const eg_profile_t *pf, eg_bench_model_t *out,
			  char *err, size_t errlen)
{
	unsigned n = pf->raw_iters;
	eg__rphase_t mr = {0}, bw = {0};
	uint32_t W = w->size, xnode = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (W < 2) {
		snprintf(err, errlen, "raw phase: needs two ranks or more");
		return EG_ENOSYS;
	}
	for (uint32_t p = 0; p < W; p++)
		xnode += eg_world_node_of(w, p) != w->node;
	mr.t = calloc(n, sizeof(double));
	bw.t = calloc(n, sizeof(double));
	out->gbps = calloc(n, sizeof(double));
	out->rate = calloc(n, sizeof(double));
	out->so_gbps = xnode ? calloc(n, sizeof(double)) : NULL;
	rc = EG_ENOMEM;
	if (!mr.t || !bw.t || !out->gbps || !out->rate ||
	    (xnode && !out->so_gbps)) {
		snprintf(err, errlen, "raw phase: out of memory");
		goto fail;
	}
	rc =
	    eg__rphase(w, b, provider, num_comms, pf->timeout_s, pf->raw_warmup,
		       n, (size_t)pf->raw_msgs * pf->raw_msg_size,
		       pf->raw_msg_size, &mr, err, errlen);
	if (rc < 0)
		goto fail;
	rc = eg__rphase(w, b, provider, num_comms, pf->timeout_s,
			pf->raw_warmup, n, pf->raw_size, 0, &bw, err, errlen);
	if (rc < 0)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		out->rate[i] = mr.ops_ep / mr.t[i];
		out->gbps[i] =
		    (double)(W - 1) * (double)pf->raw_size / bw.t[i] / 1e9;
		if (out->so_gbps)
			out->so_gbps[i] = (double)xnode * (double)pf->raw_size /
					  bw.t[i] / 1e9;
	}
	out->n = n;
	out->src = EG_BENCH_MODEL_MEASURED;
	out->bw_gbps = eg_stats_median(out->gbps, n);
	out->post_rate = eg_stats_median(out->rate, n);
	snprintf(out->provider, sizeof(out->provider), "%s", bw.provider);
	free(mr.t);
	free(bw.t);
	return EG_OK;
fail:
	free(mr.t);
	free(bw.t);
	eg_bench_model_fini(out);
	return rc;
}
#else
int eg_bench_model_fabric(const eg_world_t *w, eg_boot_t *b,
			  const char *provider, uint32_t num_comms,
			  const eg_profile_t *pf, eg_bench_model_t *out,
			  char *err, size_t errlen)
{
	(void)w;
	(void)b;
	(void)provider;
	(void)num_comms;
	(void)pf;
	memset(out, 0, sizeof(*out));
	snprintf(err, errlen, "raw phase: built without libfabric");
	return EG_ENOSYS;
}
#endif
