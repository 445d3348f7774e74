/* epgate bench raw: the fabric transport alone, one process per rank
 * under `epgate launch`. Two phases, each on a fresh transport:
 *  - message rate: every rank sends M messages of B bytes to every other
 *    rank per alltoallv call (the transport is told to chunk at B bytes,
 *    so each message is one tagged send, all of a call in flight at once);
 *  - bandwidth: --size bytes to every other rank per call, chunked as the
 *    transport does by default.
 * Each timed call starts after a bootstrap barrier; its time is the
 * slowest rank's. Rates are per rank: messages (bytes) sent to other
 * ranks per second of call time. Median and p10/p90 over the calls. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "epgate/bench_driver.h"
#include "epgate/boot.h"
#include "epgate/error.h"
#include "epgate/fabric_probe.h"
#include "epgate/transport.h"
#include "epgate/world.h"
#include "lib/campaign/bench_run.h"

#define EG__PROG "epgate bench raw"

#ifdef HAVE_LIBFABRIC
static int eg__cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

typedef struct eg__dist {
	double med, p10, p90;
} eg__dist_t;

/* Percentiles of v (sorted in place), linear between ranks. */
static eg__dist_t eg__dist(double *v, unsigned n)
{
	eg__dist_t d;
	double q[3] = {0.5, 0.1, 0.9}, r[3];

	qsort(v, n, sizeof(*v), eg__cmp_d);
	for (int i = 0; i < 3; i++) {
		double pos = q[i] * (n - 1);
		unsigned lo = (unsigned)pos;
		unsigned hi = lo + 1 < n ? lo + 1 : lo;

		r[i] = v[lo] + (v[hi] - v[lo]) * (pos - lo);
	}
	d.med = r[0];
	d.p10 = r[1];
	d.p90 = r[2];
	return d;
}

typedef struct eg__phase {
	double *t;		    /* slowest rank's time per timed call */
	uint64_t ops[EG_COMMS_MAX]; /* rank 0's posts during timed calls */
	double busy[EG_COMMS_MAX];  /* rank 0's thread time, timed calls */
	eg_xport_stats_t stats;	    /* after the phase */
} eg__phase_t;

/* One phase on a fresh transport (lib/bench/raw.c): bytes to every other
 * rank per call, messages of at most chunk bytes (0: the default). */
static int eg__phase(const eg_world_t *w, eg_boot_t *b,
		     const eg_bench_raw_opts_t *o, size_t bytes, size_t chunk,
		     eg__phase_t *ph)
{
	eg_raw_phase_t r = {.t = ph->t};
	char err[512];
	int rc = eg_raw_phase(w, b, o->xport.provider, o->xport.num_comms,
			      o->job.timeout_s, o->job.warmup, o->job.iters,
			      bytes, chunk, &r, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: %s\n", w->rank, err);
		return rc;
	}
	ph->stats = r.s1;
	for (unsigned k = 0; k < o->xport.num_comms; k++) {
		ph->ops[k] = r.s1.ops_posted[k] - r.s0.ops_posted[k];
		ph->busy[k] = r.s1.busy_s[k] - r.s0.busy_s[k];
	}
	return EG_OK;
}

static json_t *eg__jdist(eg__dist_t d)
{
	return json_pack("{s:f, s:f, s:f}", "median", d.med, "p10", d.p10,
			 "p90", d.p90);
}

/* Rates of each call: amount / time, then their percentiles. */
static eg__dist_t eg__rate(const double *t, unsigned n, double amount,
			   double *tmp)
{
	for (unsigned i = 0; i < n; i++)
		tmp[i] = amount / t[i];
	return eg__dist(tmp, n);
}

static eg__dist_t eg__us(const double *t, unsigned n, double *tmp)
{
	for (unsigned i = 0; i < n; i++)
		tmp[i] = t[i] * 1e6;
	return eg__dist(tmp, n);
}

static void eg__row(const char *name, eg__dist_t d, double scale)
{
	printf("  %-22s %14.1f %14.1f %14.1f\n", name, d.med * scale,
	       d.p10 * scale, d.p90 * scale);
}

/* What rank 0 reports. */
typedef struct eg__report {
	eg__dist_t rate, rate_ep, mr_us, gbs, bw_us;
	json_t *ops;	 /* ops/s per comm, rank 0 */
	double ops_call; /* ops posted per call, every comm, rank 0 */
} eg__report_t;

static void eg__print(const eg_world_t *w, const eg_bench_raw_opts_t *o,
		      const eg__phase_t *mr, const eg__phase_t *bw,
		      eg__report_t *r)
{
	const eg_xport_stats_t *s = &bw->stats;
	double tsum = 0;

	printf("epgate bench raw: %u ranks, %u node(s) of %u, provider "
	       "intra=%s inter=%s, %u comm(s), %u calls after %u warm-up\n",
	       w->size, w->nodes, w->ranks_per_node,
	       s->provider_intra[0] ? s->provider_intra : "-",
	       s->provider_inter[0] ? s->provider_inter : "-",
	       o->xport.num_comms, o->job.iters, o->job.warmup);
	printf("message rate: %zu-byte messages, %u per peer per call\n",
	       o->msg_size, o->msgs);
	printf("  %-22s %14s %14s %14s\n", "", "median", "p10", "p90");
	eg__row("msgs/s per rank", r->rate, 1);
	eg__row("msgs/s per endpoint", r->rate_ep, 1);
	eg__row("call time (us)", r->mr_us, 1);
	for (unsigned i = 0; i < o->job.iters; i++)
		tsum += mr->t[i];
	for (unsigned k = 0; k < o->xport.num_comms; k++) {
		char name[40];
		double rate = (double)mr->ops[k] / tsum;

		snprintf(name, sizeof(name), "ops/s comm %u (rank 0)", k);
		printf("  %-22s %14.1f   (sends + receives posted, mean; "
		       "thread busy %.0f%%)\n",
		       name, rate, 100.0 * mr->busy[k] / tsum);
		json_array_append_new(r->ops, json_real(rate));
		/* counted over the timed calls: a send and a receive per
		 * message when the transport kept the messages apart */
		r->ops_call += (double)mr->ops[k] / o->job.iters;
	}
	printf("bandwidth: %zu bytes per peer per call (chunked by the "
	       "transport)\n",
	       o->size);
	printf("  %-22s %14s %14s %14s\n", "", "median", "p10", "p90");
	eg__row("GB/s per rank", r->gbs, 1);
	eg__row("call time (us)", r->bw_us, 1);
	printf("  GB/s: bytes sent to other ranks / slowest rank's call "
	       "time; 1 GB = 1e9 bytes\n");
}

static int eg__json(const eg_world_t *w, const eg_bench_raw_opts_t *o,
		    const eg__phase_t *bw, eg__report_t *r)
{
	const eg_xport_stats_t *s = &bw->stats;
	json_t *j = json_pack(
	    "{s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:i, "
	    "s:{s:I, s:i, s:o, s:o, s:o, s:O, s:f}, "
	    "s:{s:I, s:o, s:o, s:I, s:I}}",
	    "schema", "epgate/bench-raw/v1", "world", (int)w->size, "nodes",
	    (int)w->nodes, "ranks_per_node", (int)w->ranks_per_node,
	    "num_comms", (int)o->xport.num_comms, "provider_intra",
	    s->provider_intra, "provider_inter", s->provider_inter, "iters",
	    (int)o->job.iters, "warmup", (int)o->job.warmup, "msg_rate",
	    "msg_size", (json_int_t)o->msg_size, "msgs_per_peer", (int)o->msgs,
	    "msgs_per_s_per_rank", eg__jdist(r->rate),
	    "msgs_per_s_per_endpoint", eg__jdist(r->rate_ep), "call_us",
	    eg__jdist(r->mr_us), "ops_per_s_per_comm_rank0", r->ops,
	    "ops_posted_per_call_rank0", r->ops_call, "bandwidth",
	    "bytes_per_peer", (json_int_t)o->size, "gb_per_s_per_rank",
	    eg__jdist(r->gbs), "call_us", eg__jdist(r->bw_us),
	    "bytes_sent_rank0", (json_int_t)s->bytes_sent,
	    "bytes_sent_xnode_rank0", (json_int_t)s->bytes_sent_xnode);
	int rc = EG_EXIT_PASS;

	if (!j || json_dump_file(j, o->json, JSON_INDENT(2)) < 0) {
		fprintf(stderr, EG__PROG ": cannot write %s\n", o->json);
		rc = EG_EXIT_HARD;
	}
	json_decref(j);
	return rc;
}

static int eg__report(const eg_world_t *w, const eg_bench_raw_opts_t *o,
		      eg__phase_t *mr, eg__phase_t *bw)
{
	unsigned n = o->job.iters, W = w->size;
	double *tmp = calloc(n, sizeof(*tmp));
	double msgs = (double)(W - 1) * o->msgs;
	double bytes = (double)(W - 1) * (double)o->size;
	eg__report_t r = {0};
	int rc = EG_EXIT_PASS;

	r.ops = json_array();
	if (!tmp || !r.ops) {
		free(tmp);
		json_decref(r.ops);
		return EG_EXIT_HARD;
	}
	r.rate = eg__rate(mr->t, n, msgs, tmp);
	r.rate_ep = eg__rate(mr->t, n, msgs / o->xport.num_comms, tmp);
	r.mr_us = eg__us(mr->t, n, tmp);
	r.gbs = eg__rate(bw->t, n, bytes / 1e9, tmp);
	r.bw_us = eg__us(bw->t, n, tmp);
	eg__print(w, o, mr, bw, &r);
	if (o->json)
		rc = eg__json(w, o, bw, &r);
	json_decref(r.ops);
	free(tmp);
	return rc;
}

static int eg__open(const eg_bench_raw_opts_t *o, eg_world_t *w, eg_boot_t **b)
{
	char err[512];
	int rc = eg_world_from_env(w, err, sizeof(err));
	double timeout_s = o->job.timeout_s;

	if (rc) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return rc;
	}
	if (w->size < 2) {
		fprintf(stderr,
			EG__PROG ": needs 2 ranks or more: run it "
				 "under `epgate launch -n 2 -- epgate bench "
				 "raw`\n");
		return EG_EINVAL;
	}
	rc = eg_boot_open(b, w, timeout_s);
	if (rc) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n", w->rank,
			*b ? eg_boot_error(*b) : eg_strerror(rc));
		if (*b)
			eg_boot_close(*b);
		*b = NULL;
		return rc;
	}
	/* a provider this host lacks is a bad argument, said once: rank 0
	 * says it before anyone leaves (every rank sees the same host) */
	if (o->xport.provider &&
	    eg_fabric_probe(o->xport.provider, err, sizeof(err)) < 0) {
		if (w->rank == 0)
			fprintf(stderr, EG__PROG ": --provider %s: %s\n",
				o->xport.provider, err);
		eg_boot_barrier(*b, timeout_s);
		eg_boot_close(*b);
		*b = NULL;
		return EG_EINVAL;
	}
	return rc;
}

int eg_bench_raw(const eg_bench_raw_opts_t *o)
{
	eg_world_t w;
	eg_boot_t *b = NULL;
	eg__phase_t mr = {0}, bw = {0};
	int ex = EG_EXIT_FAIL;

	if ((unsigned long long)o->msgs * o->msg_size > ((size_t)1 << 30)) {
		fprintf(stderr, EG__PROG ": --msgs x --msg-size over 1 GiB\n");
		return EG_EXIT_HARD;
	}
	if (eg__open(o, &w, &b) < 0)
		return EG_EXIT_HARD;
	mr.t = calloc(o->job.iters, sizeof(double));
	bw.t = calloc(o->job.iters, sizeof(double));
	if (!mr.t || !bw.t)
		goto out;
	if (eg__phase(&w, b, o, o->msgs * o->msg_size, o->msg_size, &mr) ||
	    eg__phase(&w, b, o, o->size, 0, &bw))
		goto out;
	ex = w.rank == 0 ? eg__report(&w, o, &mr, &bw) : EG_EXIT_PASS;
out:
	free(mr.t);
	free(bw.t);
	eg_boot_close(b);
	return ex;
}
#else
int eg_bench_raw(const eg_bench_raw_opts_t *o)
{
	(void)o;
	fputs(EG__PROG ": built without libfabric\n", stderr);
	return EG_EXIT_SKIP;
}
#endif
