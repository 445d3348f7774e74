/* Metrics of the performance suites (docs/metrics.md): payload byte
 * accounting from the routing, the slowest rank per step, rates, and the
 * model line (bandwidth-bound vs issue-bound).  Pure functions of their
 * inputs, so the L0 tests check them against hand-computed numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/dtype.h"
#include "epgate/error.h"
#include "epgate/gen.h"
#include "epgate/stats.h"

size_t eg_perf_dispatch_row_bytes(const eg_workload_t *w)
{
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;

	return (size_t)w->hidden * eg_dtype_size(w->dtype) + nb * sizeof(float);
}

size_t eg_perf_combine_row_bytes(const eg_workload_t *w)
{
	return (size_t)w->hidden * eg_dtype_size(eg_combine_dtype(w->dtype));
}

int eg_perf_count_rows(const eg_workload_t *w, const char *arm, uint32_t tokens,
		       const int32_t *topk_idx, uint64_t *rows_to)
{
	uint32_t W = w->world, K = w->topk;
	uint32_t L = w->experts / W, *seen;

	for (uint32_t d = 0; d < W; d++)
		rows_to[d] = 0;
	if (!strcmp(arm, "dense")) {
		for (uint32_t d = 0; d < W; d++)
			rows_to[d] = tokens;
		return EG_OK;
	}
	if (strcmp(arm, "a2a"))
		return EG_ENOSYS;
	if (!L)
		return EG_EINVAL;
	/* seen[d] == t + 1: token t already counted for rank d (dedup) */
	seen = calloc(W, sizeof(*seen));
	if (!seen)
		return EG_ENOMEM;
	for (uint32_t t = 0; t < tokens; t++)
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = topk_idx[(size_t)t * K + k];
			uint32_t d;

			if (e < 0 || (uint32_t)e >= w->experts)
				continue; /* masked */
			d = (uint32_t)e / L;
			if (seen[d] != t + 1) {
				seen[d] = t + 1;
				rows_to[d]++;
			}
		}
	free(seen);
	return EG_OK;
}

int eg_perf_rank_bytes(const eg_workload_t *w, const char *arm, uint32_t rank,
		       uint32_t ranks_per_node, eg_perf_bytes_t *b)
{
	uint32_t W = w->world, K = w->topk, Tmax = 0;
	size_t drow = eg_perf_dispatch_row_bytes(w);
	size_t crow = eg_perf_combine_row_bytes(w);
	uint64_t *rows = NULL;
	int32_t *idx = NULL;
	float *wt = NULL;
	eg_gen_t g = {0};
	int rc;

	memset(b, 0, sizeof(*b));
	if (!ranks_per_node || rank >= W)
		return EG_EINVAL;
	for (uint32_t s = 0; s < W; s++)
		if (eg_workload_tokens(w, s) > Tmax)
			Tmax = eg_workload_tokens(w, s);
	rows = calloc(W, sizeof(*rows));
	idx = malloc(((size_t)Tmax * K + 1) * sizeof(*idx));
	wt = malloc(((size_t)Tmax * K + 1) * sizeof(*wt));
	rc = EG_ENOMEM;
	if (!rows || !idx || !wt)
		goto out;
	if ((rc = eg_gen_init(&g, w)) < 0)
		goto out;
	for (uint32_t s = 0; s < W; s++) {
		uint32_t T = eg_workload_tokens(w, s);

		/* the dense arm needs no routing; a2a needs every rank's to
		 * know what comes back to this one */
		if (strcmp(arm, "dense"))
			eg_gen_routing_host(&g, s, T, idx, wt);
		if ((rc = eg_perf_count_rows(w, arm, T, idx, rows)) < 0)
			goto out;
		if (s == rank) {
			for (uint32_t d = 0; d < W; d++) {
				if (d == rank)
					continue;
				if (d / ranks_per_node != rank / ranks_per_node)
					b->disp_so += rows[d] * drow;
				else
					b->disp_su += rows[d] * drow;
			}
		} else if (s / ranks_per_node != rank / ranks_per_node) {
			b->comb_so += rows[rank] * crow;
		} else {
			b->comb_su += rows[rank] * crow;
		}
	}
	rc = EG_OK;
out:
	eg_gen_fini(&g);
	free(rows);
	free(idx);
	free(wt);
	return rc;
}

void eg_perf_raw_fini(eg_perf_raw_t *r)
{
	if (!r)
		return;
	free(r->gbps);
	free(r->rate);
	free(r->so_gbps);
	memset(r, 0, sizeof(*r));
}

/* ---- compute ---------------------------------------------------------- */

static int eg__add(eg_perf_calc_t *c, const char *name, double *samples,
		   size_t n, double summary_median, size_t summary_n)
{
	eg_metric_t *m;

	if (c->n >= EG_PERF_METRICS_MAX) {
		free(samples);
		return EG_ERANGE;
	}
	m = &c->m[c->n];
	memset(m, 0, sizeof(*m));
	m->name = malloc(strlen(name) + 1);
	if (!m->name) {
		free(samples);
		return EG_ENOMEM;
	}
	strcpy(m->name, name);
	c->n++;
	m->s =
	    (eg_summary_t){summary_n, summary_median, NAN, NAN, NAN, NAN, NAN};
	if (samples) {
		m->samples = samples;
		m->n_samples = n;
		return eg_stats_summarize(samples, n, 1, &m->s);
	}
	return EG_OK;
}

static double *eg__copy(const double *x, size_t n)
{
	double *y = malloc((n ? n : 1) * sizeof(*y));

	if (y)
		memcpy(y, x, n * sizeof(*y));
	return y;
}

void eg_perf_calc_fini(eg_perf_calc_t *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->m[i].name);
		free(c->m[i].samples);
	}
	memset(c, 0, sizeof(*c));
}

/* The model line: which of the two predictions the measured communication
 * time is closer to, on a log scale. */
static void eg__model(eg_perf_calc_t *c, double comm_us, double bw_us,
		      double issue_us)
{
	double dbw = isfinite(bw_us) && bw_us > 0 ? fabs(log(comm_us / bw_us))
						  : INFINITY;
	double dis = isfinite(issue_us) && issue_us > 0
			 ? fabs(log(comm_us / issue_us))
			 : INFINITY;

	if (isinf(dbw) && isinf(dis))
		return;
	strcpy(c->bound, dis < dbw ? "issue" : "bandwidth");
}

/* Hands *x to a new metric (eg__add owns it from then on). */
static int eg__give(eg_perf_calc_t *c, const char *name, double **x, size_t n)
{
	double *p = *x;

	*x = NULL;
	return eg__add(c, name, p, n, 0, 0);
}

int eg_perf_compute(const eg_perf_calc_in_t *in, eg_perf_calc_t *out)
{
	unsigned n = in->n;
	uint32_t W = in->world;
	double *disp = NULL, *comb = NULL, *step = NULL, *comm = NULL;
	double *tok = NULL, *rate = NULL, *sog = NULL, *sug = NULL;
	double so = 0, su = 0, ops = 0, ops_max = 0, sent_max = 0;
	const eg_perf_raw_t *raw = in->raw;
	int rc = EG_ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!n || !W || !in->times || !in->rep)
		return EG_EINVAL;
	for (uint32_t r = 0; r < W; r++) {
		so += in->rep[r].so_bytes / W;
		su += in->rep[r].su_bytes / W;
		ops += in->rep[r].ops_total / W;
		ops_max = fmax(ops_max, in->rep[r].ops_max_ep);
		sent_max = fmax(sent_max, in->rep[r].sent_bytes);
	}
	disp = calloc(n, sizeof(double));
	comb = calloc(n, sizeof(double));
	step = calloc(n, sizeof(double));
	comm = calloc(n, sizeof(double));
	tok = calloc(n, sizeof(double));
	if (ops_max > 0)
		rate = calloc(n, sizeof(double));
	if (so > 0)
		sog = calloc(n, sizeof(double));
	if (su > 0)
		sug = calloc(n, sizeof(double));
	if (!disp || !comb || !step || !comm || !tok ||
	    (ops_max > 0 && !rate) || (so > 0 && !sog) || (su > 0 && !sug))
		goto fail;
	for (unsigned i = 0; i < n; i++)
		for (uint32_t r = 0; r < W; r++) {
			const double *t = in->times + (size_t)r * 3 * n;
			double d = t[i], e = t[n + i], cb = t[2 * n + i];

			disp[i] = fmax(disp[i], d * 1e6);
			comb[i] = fmax(comb[i], cb * 1e6);
			step[i] = fmax(step[i], (d + e + cb) * 1e6);
			comm[i] = fmax(comm[i], (d + cb) * 1e6);
		}
	for (unsigned i = 0; i < n; i++) {
		/* a time below the clock's resolution counts as 1 ns */
		tok[i] = (double)in->tokens / (fmax(step[i], 1e-3) * 1e-6);
		if (rate)
			rate[i] = ops_max / (fmax(comm[i], 1e-3) * 1e-6);
		if (sog)
			sog[i] = so / (fmax(disp[i], 1e-3) * 1e-6) / 1e9;
		if (sug)
			sug[i] = su / (fmax(disp[i], 1e-3) * 1e-6) / 1e9;
	}
	double comm_med = fmax(eg_stats_median(comm, n), 1e-3);

	if ((rc = eg__give(out, "dispatch_us", &disp, n)) ||
	    (rc = eg__give(out, "combine_us", &comb, n)) ||
	    (rc = eg__give(out, "step_us", &step, n)) ||
	    (rc = eg__give(out, "tok_s", &tok, n)) ||
	    (rc = eg__add(out, "so_bytes", NULL, 0, so, n)) ||
	    (rc = eg__add(out, "su_bytes", NULL, 0, su, n)) ||
	    (sog && (rc = eg__give(out, "so_gbps", &sog, n))) ||
	    (sug && (rc = eg__give(out, "su_gbps", &sug, n))) ||
	    (rc = eg__add(out, "ops_posted", NULL, 0, ops, n)) ||
	    (rate && (rc = eg__give(out, "post_rate", &rate, n))))
		goto fail;
	if (raw && raw->src != EG_PERF_RAW_NONE) {
		double bw_us = sent_max / (raw->bw_gbps * 1e9) * 1e6;
		double is_us =
		    ops_max > 0 ? ops_max / raw->post_rate * 1e6 : NAN;
		double frac = fmax(bw_us, isnan(is_us) ? 0 : is_us) / comm_med;

		if ((rc = eg__add(out, "model_bw_us", NULL, 0, bw_us, 1)) ||
		    (!isnan(is_us) && (rc = eg__add(out, "model_issue_us", NULL,
						    0, is_us, 1))) ||
		    (rc = eg__add(out, "model_frac", NULL, 0, frac, 1)))
			goto fail;
		if (raw->src == EG_PERF_RAW_MEASURED && raw->n) {
			double *g = eg__copy(raw->gbps, raw->n);
			double *r = eg__copy(raw->rate, raw->n);
			double *x = raw->so_gbps
					? eg__copy(raw->so_gbps, raw->n)
					: NULL;

			rc = EG_ENOMEM;
			if (!g || !r || (raw->so_gbps && !x)) {
				free(g);
				free(r);
				free(x);
				goto fail;
			}
			if ((rc = eg__give(out, "raw_gbps", &g, raw->n)) ||
			    (rc = eg__give(out, "raw_post_rate", &r, raw->n)) ||
			    (x && (rc = eg__give(out, "transport_so_gbps", &x,
						 raw->n)))) {
				free(r);
				free(x);
				goto fail;
			}
		} else if ((rc = eg__add(out, "raw_gbps", NULL, 0, raw->bw_gbps,
					 1)) ||
			   (rc = eg__add(out, "raw_post_rate", NULL, 0,
					 raw->post_rate, 1))) {
			goto fail;
		}
		eg__model(out, comm_med, bw_us, is_us);
	}
	free(comm);
	return EG_OK;
fail:
	free(disp);
	free(comb);
	free(step);
	free(comm);
	free(tok);
	free(rate);
	free(sog);
	free(sug);
	eg_perf_calc_fini(out);
	return rc;
}

/* ---- busy work ---------------------------------------------------------- */

void eg_perf_spin(uint64_t iterations)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < iterations; i++)
		x = x + i;
}

uint64_t eg_perf_spin_calibrate(double us)
{
	const uint64_t probe = 200000;
	double best = INFINITY;

	/* the fastest of a few probes: the loop's cost when not preempted */
	for (int k = 0; k < 7; k++) {
		double t0 = eg_now();

		eg_perf_spin(probe);
		best = fmin(best, eg_now() - t0);
	}
	if (!(best > 0))
		return probe;
	return (uint64_t)(us * 1e-6 / (best / (double)probe)) + 1;
}
