/* Metrics of the performance suites (docs/metrics.md): payload byte
 * accounting from the routing, the slowest rank per step, rates, and the
 * model line (bandwidth-bound vs issue-bound).  Pure functions of their
 * inputs, so the L0 tests check them against hand-computed numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/dtype.h"
#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/gen.h"
#include "epgate/mem.h"
#include "epgate/stats.h"

size_t eg_bench_dispatch_row_bytes(const eg_workload_t *w)
{
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;

	return (size_t)w->hidden * eg_dtype_size(w->dtype) + nb * sizeof(float);
}

size_t eg_bench_combine_row_bytes(const eg_workload_t *w)
{
	return (size_t)w->hidden * eg_dtype_size(eg_combine_dtype(w->dtype));
}

int eg_bench_count_rows(const eg_workload_t *w, eg_rows_rule_t rows,
			uint32_t tokens, const int32_t *topk_idx,
			uint64_t *rows_to)
{
	return eg_layout_rows_to(w, rows, topk_idx, tokens, rows_to);
}

/* Rank `rank`'s share of source s's rows: what it dispatches (s ==
 * rank) or sends back in combine (the rows s dispatched to it). */
static void eg__rank_share(const eg_workload_t *w, uint32_t s, uint32_t rank,
			   uint32_t rpn, const uint64_t *rows,
			   eg_bench_bytes_t *b)
{
	size_t drow = eg_bench_dispatch_row_bytes(w);
	size_t crow = eg_bench_combine_row_bytes(w);

	if (s != rank) {
		if (s / rpn != rank / rpn)
			b->comb_so += rows[rank] * crow;
		else
			b->comb_su += rows[rank] * crow;
		return;
	}
	for (uint32_t d = 0; d < w->world; d++) {
		if (d == rank)
			continue;
		if (d / rpn != rank / rpn)
			b->disp_so += rows[d] * drow;
		else
			b->disp_su += rows[d] * drow;
	}
}

int eg_bench_rank_bytes_rule(const eg_workload_t *w, eg_rows_rule_t rule,
			     uint32_t rank, uint32_t ranks_per_node,
			     eg_bench_bytes_t *b)
{
	uint32_t W = w->world, K = w->topk, Tmax = 0;
	uint64_t *rows = NULL;
	int32_t *idx = NULL;
	float *wt = NULL;
	eg_gen_t g = {0};
	int rc;

	memset(b, 0, sizeof(*b));
	if (!ranks_per_node || rank >= W)
		return EG_EINVAL;
	if (rule == EG_ROWS_NONE)
		return EG_ENOSYS;
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

		/* every rank's routing: what comes back to this one too
		 * (a layout of every token to every rank needs none) */
		if (rule != EG_ROWS_ALL_RANKS)
			eg_gen_routing_host(&g, s, T, idx, wt);
		if ((rc = eg_bench_count_rows(w, rule, T, idx, rows)) < 0)
			goto out;
		eg__rank_share(w, s, rank, ranks_per_node, rows, b);
	}
	rc = EG_OK;
out:
	eg_gen_fini(&g);
	EG_FREE(rows, idx, wt);
	return rc;
}

int eg_bench_rank_bytes(const eg_workload_t *w, const char *arm, uint32_t rank,
			uint32_t ranks_per_node, eg_bench_bytes_t *b)
{
	return eg_bench_rank_bytes_rule(w, eg_engine_rows_by_name(arm), rank,
					ranks_per_node, b);
}

/* Source s's share of ep_bench's counts: its selections; per rank d,
 * whether each token reaches it (recv[d]); its (token, other node)
 * pairs (remote). */
static void eg__epb_source(const eg_workload_t *w, uint32_t s, uint32_t rpn,
			   const int32_t *idx, uint32_t T, uint8_t *hit,
			   double *sel, double *recv, double *remote)
{
	uint32_t W = w->world, K = w->topk, L = w->experts / W;
	uint32_t nodes = (W + rpn - 1) / rpn;

	for (uint32_t t = 0; t < T; t++) {
		memset(hit, 0, W + nodes);
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = idx[(size_t)t * K + k];

			if (e < 0)
				continue;
			sel[s] += 1;
			hit[(uint32_t)e / L] = 1;
			hit[W + (uint32_t)e / L / rpn] = 1;
		}
		for (uint32_t d = 0; d < W; d++)
			recv[d] += hit[d];
		for (uint32_t n = 0; n < nodes; n++)
			remote[s] += n != s / rpn && hit[W + n];
	}
}

int eg_bench_epb_bytes(const eg_workload_t *w, uint32_t ranks_per_node,
		       double *sel, double *recv)
{
	uint32_t W = w->world, K = w->topk, Tmax = 0;
	double *cnt = calloc(3 * (size_t)W, sizeof(double));
	double row = (double)eg_bench_dispatch_row_bytes(w);
	uint8_t *hit = malloc(2 * (size_t)W + 1);
	int32_t *idx = NULL;
	float *wt = NULL;
	eg_gen_t g = {0};
	int rc = EG_ENOMEM;

	*sel = *recv = 0;
	for (uint32_t s = 0; s < W; s++)
		if (eg_workload_tokens(w, s) > Tmax)
			Tmax = eg_workload_tokens(w, s);
	idx = malloc(((size_t)Tmax * K + 1) * sizeof(*idx));
	wt = malloc(((size_t)Tmax * K + 1) * sizeof(*wt));
	if (!ranks_per_node || !W)
		rc = EG_EINVAL;
	else if (cnt && hit && idx && wt)
		rc = eg_gen_init(&g, w);
	for (uint32_t s = 0; rc == EG_OK && s < W; s++) {
		uint32_t T = eg_workload_tokens(w, s);

		eg_gen_routing_host(&g, s, T, idx, wt);
		eg__epb_source(w, s, ranks_per_node, idx, T, hit, cnt, cnt + W,
			       cnt + 2 * (size_t)W);
	}
	for (uint32_t r = 0; rc == EG_OK && r < W; r++) {
		*sel += cnt[r] * row / W;
		*recv += (cnt[W + r] + cnt[2 * (size_t)W + r]) * row / W;
	}
	eg_gen_fini(&g);
	EG_FREE(cnt, hit, idx, wt);
	return rc;
}

void eg_bench_model_fini(eg_bench_model_t *r)
{
	if (!r)
		return;
	EG_FREE(r->gbps, r->rate, r->so_gbps);
	memset(r, 0, sizeof(*r));
}

/* ---- compute ---------------------------------------------------------- */

static int eg__add(eg_bench_calc_t *c, const char *name, double *samples,
		   size_t n, double summary_median, size_t summary_n)
{
	eg_metric_t *m;

	if (c->n >= EG_BENCH_METRICS_MAX) {
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

void eg_bench_calc_fini(eg_bench_calc_t *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->m[i].name);
		free(c->m[i].samples);
	}
	memset(c, 0, sizeof(*c));
}

/* The model line: which of the two predictions the measured communication
 * time is closer to, on a log scale. */
static void eg__model(eg_bench_calc_t *c, double comm_us, double bw_us,
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
static int eg__give(eg_bench_calc_t *c, const char *name, double **x, size_t n)
{
	double *p = *x;

	*x = NULL;
	return eg__add(c, name, p, n, 0, 0);
}

/* Per-step counts over the ranks: means ("per GPU") and maxima. */
typedef struct eg__agg {
	double so, su, ops;	  /* means over ranks */
	double ops_max, sent_max; /* busiest endpoint, busiest rank */
	double wire_max;	  /* busiest rank's dispatch wire bytes */
} eg__agg_t;

static void eg__aggregate(const eg_bench_calc_in_t *in, eg__agg_t *a)
{
	uint32_t W = in->world;

	memset(a, 0, sizeof(*a));
	for (uint32_t r = 0; r < W; r++) {
		a->so += in->rep[r].so_bytes / W;
		a->su += in->rep[r].su_bytes / W;
		a->ops += in->rep[r].ops_total / W;
		a->ops_max = fmax(a->ops_max, in->rep[r].ops_max_ep);
		a->sent_max = fmax(a->sent_max, in->rep[r].sent_bytes);
		a->wire_max = fmax(a->wire_max, in->rep[r].wire_bytes);
	}
}

/* The per-step samples: the slowest rank's phases and whole step. */
typedef struct eg__steps {
	double *disp, *comb, *step, *comm, *tok, *rate, *sog, *sug, *wire;
	double *selg, *recvg;
} eg__steps_t;

static void eg__steps_free(eg__steps_t *t)
{
	EG_FREE(t->disp, t->comb, t->step, t->comm, t->tok, t->rate, t->sog,
		t->sug, t->wire, t->selg, t->recvg);
	memset(t, 0, sizeof(*t));
}

/* A rate per step: amount / time (us; a time below the clock's
 * resolution counts as 1 ns), times scale. */
static void eg__per_step(double *out, const double *us, unsigned n,
			 double amount, double scale)
{
	for (unsigned i = 0; out && i < n; i++)
		out[i] = amount / (fmax(us[i], 1e-3) * 1e-6) * scale;
}

/* sel_gbps and recv_gbps per step, when their bytes are given. */
static int eg__steps_epb(const eg_bench_calc_in_t *in, eg__steps_t *t)
{
	unsigned n = in->n;

	t->selg = in->sel_bytes > 0 ? calloc(n, sizeof(double)) : NULL;
	t->recvg = in->recv_bytes > 0 ? calloc(n, sizeof(double)) : NULL;
	if ((in->sel_bytes > 0 && !t->selg) ||
	    (in->recv_bytes > 0 && !t->recvg))
		return EG_ENOMEM;
	eg__per_step(t->selg, t->disp, n, in->sel_bytes, 1e-9);
	eg__per_step(t->recvg, t->disp, n, in->recv_bytes, 1e-9);
	return EG_OK;
}

static int eg__steps(const eg_bench_calc_in_t *in, const eg__agg_t *a,
		     eg__steps_t *t)
{
	unsigned n = in->n;

	memset(t, 0, sizeof(*t));
	t->disp = calloc(n, sizeof(double));
	t->comb = calloc(n, sizeof(double));
	t->step = calloc(n, sizeof(double));
	t->comm = calloc(n, sizeof(double));
	t->tok = calloc(n, sizeof(double));
	t->rate = a->ops_max > 0 ? calloc(n, sizeof(double)) : NULL;
	t->sog = a->so > 0 ? calloc(n, sizeof(double)) : NULL;
	t->sug = a->su > 0 ? calloc(n, sizeof(double)) : NULL;
	t->wire = a->wire_max > 0 ? calloc(n, sizeof(double)) : NULL;
	if (!t->disp || !t->comb || !t->step || !t->comm || !t->tok ||
	    (a->ops_max > 0 && !t->rate) || (a->so > 0 && !t->sog) ||
	    (a->su > 0 && !t->sug) || (a->wire_max > 0 && !t->wire))
		return EG_ENOMEM;
	for (unsigned i = 0; i < n; i++)
		for (uint32_t r = 0; r < in->world; r++) {
			const double *x = in->times + (size_t)r * 3 * n;
			double d = x[i], e = x[n + i], cb = x[2 * n + i];

			t->disp[i] = fmax(t->disp[i], d * 1e6);
			t->comb[i] = fmax(t->comb[i], cb * 1e6);
			t->step[i] = fmax(t->step[i], (d + e + cb) * 1e6);
			t->comm[i] = fmax(t->comm[i], (d + cb) * 1e6);
		}
	eg__per_step(t->tok, t->step, n, (double)in->tokens, 1);
	eg__per_step(t->rate, t->comm, n, a->ops_max, 1);
	eg__per_step(t->sog, t->disp, n, a->so, 1e-9);
	eg__per_step(t->sug, t->disp, n, a->su, 1e-9);
	eg__per_step(t->wire, t->disp, n, a->wire_max, 1e-9);
	return eg__steps_epb(in, t);
}

/* The raw numbers behind the model: samples per raw call when measured
 * in this job, else the profile's values. */
static int eg__raw_metrics(eg_bench_calc_t *out, const eg_bench_model_t *raw)
{
	double *g, *r, *x;
	int rc;

	if (raw->src != EG_BENCH_MODEL_MEASURED || !raw->n) {
		if ((rc = eg__add(out, "raw_gbps", NULL, 0, raw->bw_gbps, 1)))
			return rc;
		return eg__add(out, "raw_post_rate", NULL, 0, raw->post_rate,
			       1);
	}
	g = eg__copy(raw->gbps, raw->n);
	r = eg__copy(raw->rate, raw->n);
	x = raw->so_gbps ? eg__copy(raw->so_gbps, raw->n) : NULL;
	if (!g || !r || (raw->so_gbps && !x)) {
		EG_FREE(g, r, x);
		return EG_ENOMEM;
	}
	if ((rc = eg__give(out, "raw_gbps", &g, raw->n)) ||
	    (rc = eg__give(out, "raw_post_rate", &r, raw->n)) ||
	    (x && (rc = eg__give(out, "transport_so_gbps", &x, raw->n))))
		EG_FREE(r, x);
	return rc;
}

/* The model line: both predictions, how much they explain, the label. */
static int eg__model_metrics(eg_bench_calc_t *out, const eg_bench_model_t *raw,
			     const eg__agg_t *a, double comm_med)
{
	double bw_us = a->sent_max / (raw->bw_gbps * 1e9) * 1e6;
	double is_us = a->ops_max > 0 ? a->ops_max / raw->post_rate * 1e6 : NAN;
	double frac = fmax(bw_us, isnan(is_us) ? 0 : is_us) / comm_med;
	int rc;

	if ((rc = eg__add(out, "model_bw_us", NULL, 0, bw_us, 1)) ||
	    (!isnan(is_us) &&
	     (rc = eg__add(out, "model_issue_us", NULL, 0, is_us, 1))) ||
	    (rc = eg__add(out, "model_frac", NULL, 0, frac, 1)) ||
	    (rc = eg__raw_metrics(out, raw)))
		return rc;
	eg__model(out, comm_med, bw_us, is_us);
	return EG_OK;
}

/* The engine's phases: phase_NAME_us, the mean over ranks of each rank's
 * mean per step (ranks that report the phase). */
static int eg__phase_metrics(eg_bench_calc_t *out, const eg_bench_calc_in_t *in)
{
	const eg_bench_rank_report_t *r0 = &in->rep[0];
	char name[48];
	int rc = EG_OK;

	for (uint32_t i = 0; i < r0->n_phases && !rc; i++) {
		double sum = 0;
		unsigned cnt = 0;

		for (uint32_t r = 0; r < in->world; r++)
			if (i < in->rep[r].n_phases &&
			    !strcmp(in->rep[r].phase_name[i],
				    r0->phase_name[i])) {
				sum += in->rep[r].phase_us[i];
				cnt++;
			}
		snprintf(name, sizeof(name), "phase_%.24s_us",
			 r0->phase_name[i]);
		rc = eg__add(out, name, NULL, 0, sum / cnt, in->n);
	}
	return rc;
}

/* The step boundary's per-step maxima, and harness_us: per step, the
 * most any rank spent between the two boundaries (its dispatch's and
 * combine's step time less their call time). */
static int eg__wall_metrics(eg_bench_calc_t *out, const eg_bench_calc_in_t *in)
{
	unsigned n = in->n;
	double *d = calloc(n, sizeof(double)), *c = calloc(n, sizeof(double));
	double *s = calloc(n, sizeof(double)), *h = calloc(n, sizeof(double));
	int rc = EG_ENOMEM;

	if (!d || !c || !s || !h)
		goto out;
	for (unsigned i = 0; i < n; i++)
		for (uint32_t r = 0; r < in->world; r++) {
			const double *x = in->wall_times + (size_t)r * 3 * n;
			const double *y = in->times + (size_t)r * 3 * n;
			double wd = x[i], we = x[n + i], wc = x[2 * n + i];
			double lost = wd - y[i] + wc - y[2 * n + i];

			d[i] = fmax(d[i], wd * 1e6);
			c[i] = fmax(c[i], wc * 1e6);
			s[i] = fmax(s[i], (wd + we + wc) * 1e6);
			h[i] = r ? fmax(h[i], lost * 1e6) : lost * 1e6;
		}
	if (!(rc = eg__give(out, "wall_dispatch_us", &d, n)) &&
	    !(rc = eg__give(out, "wall_combine_us", &c, n)) &&
	    !(rc = eg__give(out, "wall_step_us", &s, n)))
		rc = eg__give(out, "harness_us", &h, n);
out:
	EG_FREE(d, c, s, h);
	return rc;
}

/* Per step, the slowest rank's time of x's dispatch (off 0) or combine
 * (off n), rank r's series at r * stride (us). */
static double *eg__max_over_ranks(const eg_bench_calc_in_t *in, const double *x,
				  size_t stride, size_t off)
{
	unsigned n = in->n;
	double *m = calloc(n, sizeof(double));

	for (unsigned i = 0; m && i < n; i++)
		for (uint32_t r = 0; r < in->world; r++)
			m[i] =
			    fmax(m[i], x[(size_t)r * stride + off + i] * 1e6);
	return m;
}

/* Every boundary measured, under its own name (docs/metrics.md,
 * "Boundaries"): the gated times as call_, window_ or replay_, the
 * kernel time (CUPTI) as kernel_. */
static int eg__boundary_metrics(eg_bench_calc_t *out,
				const eg_bench_calc_in_t *in)
{
	size_t n = in->n;
	const char *b = in->boundary == EG_BOUNDARY_KERNEL
			    ? NULL
			    : eg_boundary_name(in->boundary);
	char name[40];
	double *x;
	int rc;

	for (int c = 0; b && c < 2; c++) {
		snprintf(name, sizeof(name), "%s_%s_us", b,
			 c ? "combine" : "dispatch");
		if (!(x = eg__max_over_ranks(in, in->times, 3 * n, c * 2 * n)))
			return EG_ENOMEM;
		if ((rc = eg__give(out, name, &x, n)) < 0)
			return rc;
	}
	for (int c = 0; in->kern_times && c < 2; c++) {
		if (!(x = eg__max_over_ranks(in, in->kern_times, 2 * n, c * n)))
			return EG_ENOMEM;
		if ((rc = eg__give(
			 out, c ? "kernel_combine_us" : "kernel_dispatch_us",
			 &x, n)) < 0)
			return rc;
	}
	return EG_OK;
}

int eg_bench_compute(const eg_bench_calc_in_t *in, eg_bench_calc_t *out)
{
	unsigned n = in->n;
	eg__agg_t a;
	eg__steps_t t;
	double comm_med;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!n || !in->world || !in->times || !in->rep)
		return EG_EINVAL;
	eg__aggregate(in, &a);
	if ((rc = eg__steps(in, &a, &t)) < 0)
		goto fail;
	comm_med = fmax(eg_stats_median(t.comm, n), 1e-3);
	if ((rc = eg__give(out, "dispatch_us", &t.disp, n)) ||
	    (rc = eg__give(out, "combine_us", &t.comb, n)) ||
	    (rc = eg__give(out, "step_us", &t.step, n)) ||
	    (rc = eg__give(out, "tok_s", &t.tok, n)) ||
	    (rc = eg__add(out, "so_bytes", NULL, 0, a.so, n)) ||
	    (rc = eg__add(out, "su_bytes", NULL, 0, a.su, n)) ||
	    (t.sog && (rc = eg__give(out, "so_gbps", &t.sog, n))) ||
	    (t.sug && (rc = eg__give(out, "su_gbps", &t.sug, n))) ||
	    (rc = eg__add(out, "ops_posted", NULL, 0, a.ops, n)) ||
	    (t.rate && (rc = eg__give(out, "post_rate", &t.rate, n))) ||
	    (t.wire &&
	     ((rc = eg__add(out, "wire_bytes", NULL, 0, a.wire_max, n)) ||
	      (rc = eg__give(out, "wire_gbps", &t.wire, n)))) ||
	    (t.selg &&
	     ((rc = eg__add(out, "sel_bytes", NULL, 0, in->sel_bytes, n)) ||
	      (rc = eg__give(out, "sel_gbps", &t.selg, n)))) ||
	    (t.recvg &&
	     ((rc = eg__add(out, "recv_bytes", NULL, 0, in->recv_bytes, n)) ||
	      (rc = eg__give(out, "recv_gbps", &t.recvg, n)))) ||
	    (rc = eg__phase_metrics(out, in)) ||
	    (in->wall_times && (rc = eg__wall_metrics(out, in))) ||
	    (rc = eg__boundary_metrics(out, in)))
		goto fail;
	if (in->raw && in->raw->src != EG_BENCH_MODEL_NONE &&
	    (rc = eg__model_metrics(out, in->raw, &a, comm_med)))
		goto fail;
	eg__steps_free(&t);
	return EG_OK;
fail:
	eg__steps_free(&t);
	eg_bench_calc_fini(out);
	return rc;
}

/* ---- busy work ---------------------------------------------------------- */

void eg_bench_spin(uint64_t iterations)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < iterations; i++)
		x = x + i;
}

uint64_t eg_bench_spin_calibrate(double us)
{
	const uint64_t probe = 200000;
	/* seconds per iteration, measured once per process: two arms of
	 * work:US in one launch (bench ab, A and B) must do the same work;
	 * calibrating each arm on its own made B's loop differ from A's by
	 * whatever load the machine had at each calibration (CI: +47% at the
	 * median of points where B did A's work) */
	static double rate;

	if (!(rate > 0)) {
		double best = INFINITY;

		/* the fastest of a few probes: the loop's cost when not
		 * preempted */
		for (int k = 0; k < 7; k++) {
			double t0 = eg_now();

			eg_bench_spin(probe);
			best = fmin(best, eg_now() - t0);
		}
		if (!(best > 0))
			return probe;
		rate = best / (double)probe;
	}
	return (uint64_t)(us * 1e-6 / rate) + 1;
}
