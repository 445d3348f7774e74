/* The per-rank driver of one measured point (docs/metrics.md): setup,
 * one verified step (outside the timed loop), warm-up, N timed steps each
 * after a bootstrap barrier, then every rank's times and counters meet at
 * rank 0, which takes the slowest rank per step and builds the results
 * point.  Every rank votes after setup and after verification, so a
 * failure on one rank ends the point on all of them with one message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/nccl.h"
#include "epgate/watch.h"

/* A rank's vote: its status and, on failure, its one-line reason. */
typedef struct eg__vote {
	int32_t rc;
	char msg[508];
} eg__vote_t;

/* Every rank learns every rank's status.  Returns EG_OK when all are,
 * EG_EMISMATCH when any rank's is (the engine was wrong), else the first
 * failing rank's code; err names the failing ranks and the first reason. */
static int eg__agree(const eg_bench_ctx_t *c, int rc, const char *what,
		     const char *msg, char *err, size_t errlen)
{
	uint32_t W = c->world->size;
	eg__vote_t mine = {0}, *all = calloc(W, sizeof(*all));
	int first = -1, mismatch = 0, brc;
	size_t len;

	if (!all)
		return EG_ENOMEM;
	mine.rc = rc;
	snprintf(mine.msg, sizeof(mine.msg), "%s", rc ? msg : "");
	brc =
	    eg_boot_allgather(c->boot, &mine, sizeof(mine), all, c->timeout_s);
	if (brc < 0) {
		snprintf(err, errlen, "%s: %s", what, eg_boot_error(c->boot));
		free(all);
		return brc;
	}
	len = (size_t)snprintf(err, errlen, "%s failed on rank(s)", what);
	for (uint32_t r = 0; r < W; r++) {
		if (!all[r].rc)
			continue;
		if (first < 0)
			first = (int)r;
		mismatch |= all[r].rc == EG_EMISMATCH;
		if (len < errlen)
			len +=
			    (size_t)snprintf(err + len, errlen - len, " %u", r);
	}
	if (first >= 0 && len < errlen)
		snprintf(err + len, errlen - len, ": %s",
			 all[first].msg[0] ? all[first].msg
					   : eg_strerror(all[first].rc));
	rc = first < 0 ? EG_OK : mismatch ? EG_EMISMATCH : all[first].rc;
	if (rc >= 0 && first >= 0)
		rc = EG_EIO;
	free(all);
	return rc;
}

static char *eg__dup(const char *s)
{
	char *d = malloc(strlen(s) + 1);

	if (d)
		strcpy(d, s);
	return d;
}

static json_t *eg__axes(const eg_bench_point_t *pt)
{
	json_t *o = json_object();

	for (int a = 0; o && a < EG_AXIS_COUNT; a++) {
		json_t *v = eg_profile_axis_is_string((eg_axis_t)a)
				? json_string(pt->v[a].str)
				: json_integer((json_int_t)pt->v[a].num);

		if (json_object_set_new(o, eg_profile_axes[a], v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* The boundary of the gated times and how it was held (docs/metrics.md,
 * "Boundaries"): rank 0's boundary, the window's holds over the ranks
 * (the longest, the short samples of all), rank 0's kernel table. */
static int eg__boundary_evidence(json_t *o, const eg_bench_rank_report_t *rep,
				 uint32_t W)
{
	const eg_timing_sum_t *t = &rep[0].timing;
	uint64_t samples = 0, shorts = 0, dropped = 0, spanned = 0;
	double hold = 0;
	int synced = 0, bad = 0;
	char b[64], big[512];
	const char *detail;

	for (uint32_t r = 0; r < W; r++) {
		samples += rep[r].timing.samples;
		shorts += rep[r].timing.short_n;
		synced |= rep[r].timing.synced;
		dropped += rep[r].timing.kern_dropped;
		spanned += rep[r].timing.kern_spanned;
		if (rep[r].timing.hold_us > hold)
			hold = rep[r].timing.hold_us;
	}
	detail = t->boundary == EG_BOUNDARY_KERNEL
		     ? "the union of the call's kernels on the device "
		       "(CUPTI activity records), epgate's hold left out"
		 : t->boundary == EG_BOUNDARY_REPLAY
		     ? "marks around a replay of the plugin's call, captured "
		       "once after its first verified call (a CUDA graph on "
		       "its stream; on the host the call made again), each "
		       "behind a hold; replays verified on new data first"
		 : t->boundary == EG_BOUNDARY_WINDOW
		     ? "marks around the plugin's own calls on its stream, "
		       "each behind a hold that keeps the device busy while "
		       "the host works: the library's device time, its host "
		       "syncs included"
		 : rep[0].call_timed
		     ? "marks around the plugin's own calls on its stream "
		       "(the host clock for a host plugin); epgate's wait "
		       "for the stream outside"
		     : "marks around the engine's calls, each of which "
		       "returns with its work done";
	bad |= json_object_set_new(o, "boundary",
				   json_string(eg_boundary_name(t->boundary)));
	if (t->boundary == EG_BOUNDARY_KERNEL && spanned) {
		snprintf(big, sizeof(big),
			 "the union of the kernels queued inside the span the "
			 "plugin marked as its library's own call (env.mark; "
			 "CUPTI's external correlation of the API calls in "
			 "it), on the device; the plugin's work around the "
			 "call and epgate's hold left out (%llu calls)",
			 (unsigned long long)spanned);
		detail = big;
	} else if (t->own_marks && t->boundary != EG_BOUNDARY_KERNEL) {
		snprintf(big, sizeof(big),
			 "%s; the span the plugin marked as its library's own "
			 "call (env.mark), its work around it in "
			 "phase_plugin_*_around_us",
			 detail);
		detail = big;
	}
	bad |= json_object_set_new(o, "boundary_detail", json_string(detail));
	if (t->window) {
		snprintf(b, sizeof(b), "%.0f", hold);
		bad |= json_object_set_new(o, "window_hold_us", json_string(b));
		snprintf(b, sizeof(b), "%llu of %llu",
			 (unsigned long long)shorts,
			 (unsigned long long)samples);
		bad |= json_object_set_new(o, "window_short", json_string(b));
		bad |= json_object_set_new(o, "window_host_sync",
					   json_string(synced ? "yes" : "no"));
	}
	if (t->boundary == EG_BOUNDARY_REPLAY) {
		snprintf(b, sizeof(b), "%u", t->replays_verified);
		bad |=
		    json_object_set_new(o, "replays_verified", json_string(b));
	}
	if (t->kernel) {
		bad |=
		    json_object_set_new(o, "kernels", json_string(t->kernels));
		snprintf(b, sizeof(b), "%llu", (unsigned long long)dropped);
		bad |= json_object_set_new(o, "kernel_records_lost",
					   json_string(b));
	}
	return bad;
}

/* Evidence: what ran, from every rank's counters (a rank that ran another
 * path shows up as a second value joined with " | "), the providers of a
 * fabric run, the versions and the model's verdict. */
static json_t *eg__evidence(const eg_bench_ctx_t *c,
			    const eg_bench_rank_report_t *rep,
			    const eg_bench_model_t *raw, const char *bound,
			    uint32_t nodes)
{
	char tr[1024] = "", intra[64] = "", inter[64] = "";
	json_t *o = json_object();
	const char *ev = rep[0].evidence;
	int bad = 0;

	if (!o)
		return NULL;
	for (uint32_t r = 0; r < c->world->size; r++) {
		int seen = 0;

		for (uint32_t q = 0; q < r; q++)
			seen |= !strcmp(rep[q].evidence, rep[r].evidence);
		if (seen)
			continue;
		if (r)
			strncat(tr, " | ", sizeof(tr) - strlen(tr) - 1);
		strncat(tr, rep[r].evidence, sizeof(tr) - strlen(tr) - 1);
	}
	bad |= json_object_set_new(o, "transport", json_string(tr));
	bad |= json_object_set_new(o, "backend", json_string(c->backend->name));
	/* "fabric INTRA/INTER": the provider that carried the point's
	 * cross-node pairs, else its intra-node ones */
	if (!strncmp(ev, "fabric ", 7) && strchr(ev + 7, '/')) {
		const char *sl = strchr(ev + 7, '/');

		snprintf(intra, sizeof(intra), "%.*s", (int)(sl - ev - 7),
			 ev + 7);
		snprintf(inter, sizeof(inter), "%s", sl + 1);
		bad |= json_object_set_new(o, "provider_intra",
					   json_string(intra));
		bad |= json_object_set_new(o, "provider_inter",
					   json_string(inter));
		bad |= json_object_set_new(
		    o, "provider", json_string(nodes > 1 ? inter : intra));
	} else if (eg_transport_provider(ev, nodes > 1, intra, sizeof(intra))) {
		/* NCCL's network plugin named its libfabric provider */
		bad |= json_object_set_new(o, "provider", json_string(intra));
	}
	/* the class beside the raw string: one vocabulary for recorded and
	 * measured campaigns (lib/transport/nccl_evidence.c) */
	bad |=
	    json_object_set_new(o, "transport_class",
				json_string(eg_transport_class(ev, nodes > 1)));
	if (rep[0].versions[0])
		bad |= json_object_set_new(o, "versions",
					   json_string(rep[0].versions));
	if (bound && *bound)
		bad |= json_object_set_new(o, "bound", json_string(bound));
	/* which boundary the gated times have (docs/metrics.md) */
	bad |= eg__boundary_evidence(o, rep, c->world->size);
	if (raw && raw->src == EG_BENCH_MODEL_MEASURED)
		bad |=
		    json_object_set_new(o, "model", json_string("raw phase"));
	else if (raw && raw->src == EG_BENCH_MODEL_PROFILE)
		bad |= json_object_set_new(o, "model", json_string("profile"));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One step of arm j, timed into its times[i], [n+i], [2n+i] (seconds,
 * the gated boundary: the engine's calls, or their kernels), times[3n +
 * ...] (the step boundary) and times[6n + i], [7n + i] (the kernel time
 * of dispatch and combine, -1 when not recorded) when i >= 0; a warm-up
 * step when i < 0. *timed: the engine timed its own calls. */
static int eg__one(const eg_bench_ctx_t *c, void *st, long i, unsigned n,
		   double *times, int *timed, char *err, size_t errlen)
{
	eg_bench_times_t t = {0};
	double *wall = times + 3 * (size_t)n;
	int rc;

	if (i >= 0 && (rc = eg_boot_barrier(c->boot, c->timeout_s)) < 0) {
		snprintf(err, errlen, "rank %u: barrier: %s", c->world->rank,
			 eg_boot_error(c->boot));
		return rc;
	}
	if ((rc = c->backend->step(st, &t)) < 0) {
		if (i < 0)
			snprintf(err, errlen, "rank %u: warm-up step: %s",
				 c->world->rank, eg_strerror(rc));
		else
			snprintf(err, errlen, "rank %u: step %ld: %s",
				 c->world->rank, i, eg_strerror(rc));
		return rc;
	}
	if (i >= 0) {
		double *kern = times + 6 * (size_t)n;
		int k = t.boundary == EG_BOUNDARY_KERNEL && t.have_kernel;

		times[i] = k		  ? t.kern_dispatch_s
			   : t.call_timed ? t.call_dispatch_s
					  : t.dispatch_s;
		times[n + (size_t)i] = wall[n + (size_t)i] = t.expert_s;
		times[2 * (size_t)n + (size_t)i] = k ? t.kern_combine_s
						   : t.call_timed
						       ? t.call_combine_s
						       : t.combine_s;
		wall[i] = t.dispatch_s;
		wall[2 * (size_t)n + (size_t)i] = t.combine_s;
		kern[i] = t.have_kernel ? t.kern_dispatch_s : -1;
		kern[n + (size_t)i] = t.have_kernel ? t.kern_combine_s : -1;
		*timed |= t.call_timed;
	}
	return EG_OK;
}

/* The timed loop of one rank over the live arms (st[j] not NULL), step
 * by step in the rotating order: warm-up, counters reset, n timed steps
 * each after a bootstrap barrier.  times[j]: arm j's 6n seconds (eg__one);
 * timed[j]: it timed its own calls; ws: the resources before and after. */
static int eg__timed(const eg_bench_ctx_t *c, void *const *st, size_t k,
		     const eg_bench_point_t *pt, double *const *times,
		     int *timed, eg_watch_sample_t *ws, char *err,
		     size_t errlen)
{
	unsigned n = pt->iters;
	int rc;

	for (unsigned i = 0; i < pt->warmup; i++)
		for (size_t h = 0; h < k; h++) {
			size_t j = (i + h) % k;

			if (st[j] && (rc = eg__one(c, st[j], -1, n, times[j],
						   &timed[j], err, errlen)) < 0)
				return rc;
		}
	for (size_t j = 0; j < k; j++)
		if (st[j])
			c->backend->counters_reset(st[j]);
	eg_watch_sample(&ws[0]);
	for (unsigned i = 0; i < n; i++) {
		if (i == n / 2)
			eg_watch_sample(&ws[2]);
		for (size_t h = 0; h < k; h++) {
			size_t j = (i + h) % k;

			if (st[j] &&
			    (rc = eg__one(c, st[j], (long)i, n, times[j],
					  &timed[j], err, errlen)) < 0)
				return rc;
		}
	}
	eg_watch_sample(&ws[1]);
	return EG_OK;
}

/* The resources this rank held over its timed steps (docs/stress.md,
 * "Resources"): growth past the bound that goes on in the second half of
 * the steps (ws[2], the middle; eg_watch_judge_mid) fails the point on
 * every rank (libfabric's tcp provider grew once by 32.7 MiB in 10 steps
 * of the local profile, then stayed flat: no leak). */
static int eg__watched(const eg_bench_ctx_t *c, const eg_watch_sample_t *ws,
		       unsigned n, char *err, size_t errlen)
{
	char m[256];

	if (!eg_watch_on() || !ws[0].rss_bytes || !ws[1].rss_bytes ||
	    !eg_watch_judge_mid(&ws[0], &ws[2], &ws[1], eg_watch_bound_here(),
				m, sizeof(m)))
		return EG_OK;
	snprintf(err, errlen,
		 "rank %u: resources grew over %u timed steps: %.180s",
		 c->world->rank, n, m);
	return EG_EGROWTH;
}

static void eg__report(const eg_bench_ctx_t *c, void *st,
		       const eg_bench_point_t *pt, const eg_workload_t *w,
		       eg_bench_rank_report_t *rep)
{
	eg_bench_counters_t cnt;
	eg_bench_bytes_t b;
	unsigned n = pt->iters;

	if (c->backend->counters(st, &cnt) < 0)
		memset(&cnt, 0, sizeof(cnt));
	rep->num_comms = cnt.num_comms;
	for (uint32_t k = 0; k < cnt.num_comms && k < 16; k++) {
		double o = (double)cnt.ops_posted[k] / n;

		rep->ops_total += o;
		if (o > rep->ops_max_ep)
			rep->ops_max_ep = o;
	}
	rep->so_bytes = (double)cnt.bytes_so / n;
	rep->su_bytes = (double)cnt.bytes_su / n;
	snprintf(rep->evidence, sizeof(rep->evidence), "%s",
		 cnt.transport_evidence);
	snprintf(rep->versions, sizeof(rep->versions), "%s", cnt.versions);
	eg_loaded_read(&rep->loaded); /* the evidence: as loaded now */
	snprintf(rep->loaded.gpu, sizeof(rep->loaded.gpu), "%s", cnt.gpu);
	rep->timing = cnt.timing;
	rep->wire_bytes = (double)cnt.wire_dispatch / n;
	for (uint32_t i = 0; i < cnt.n_phases && i < EG_BENCH_PHASES_MAX; i++) {
		snprintf(rep->phase_name[i], sizeof(rep->phase_name[i]), "%s",
			 cnt.phase[i].name);
		rep->phase_us[i] = cnt.phase[i].ms * 1e3 / n;
		rep->n_phases = i + 1;
	}
	/* the model's bytes: what this rank sends, both directions */
	if (eg_bench_rank_bytes(w, pt->arm, c->world->rank,
				c->world->ranks_per_node, &b) == EG_OK)
		rep->sent_bytes =
		    (double)(b.disp_so + b.disp_su + b.comb_so + b.comb_su);
}

/* Rank 0: the point from everything gathered (all_t: the gated times,
 * all_w: the step boundary's, 3n per rank each). */
static int eg__build(const eg_bench_ctx_t *c, const eg_bench_point_t *pt,
		     const eg_workload_t *w, const eg_bench_model_t *raw,
		     const double *all_t, const double *all_w,
		     const double *all_k, const eg_bench_rank_report_t *rep,
		     eg_point_t *out, char *err, size_t errlen)
{
	eg_bench_calc_in_t in = {.world = c->world->size,
				 .nodes = c->world->nodes,
				 .n = pt->iters,
				 .times = all_t,
				 .rep = rep,
				 .tokens = eg_workload_total_tokens(w),
				 .raw = raw,
				 .wall_times = all_w,
				 .kern_times = all_k,
				 .boundary = rep[0].timing.boundary};
	eg_bench_calc_t calc;
	int rc;

	/* beside NCCL EP's ep_bench (docs/metrics.md): its byte counts */
	if (eg_bench_epb_bytes(w, c->world->ranks_per_node, &in.sel_bytes,
			       &in.recv_bytes) < 0)
		in.sel_bytes = in.recv_bytes = 0;
	rc = eg_bench_compute(&in, &calc);
	if (rc < 0) {
		snprintf(err, errlen, "computing the metrics: %s",
			 eg_strerror(rc));
		return rc;
	}
	memset(out, 0, sizeof(*out));
	out->id = eg__dup(pt->id);
	out->suite = eg__dup(pt->suite);
	out->arm = eg__dup(pt->arm);
	out->axes = eg__axes(pt);
	out->evidence = eg__evidence(c, rep, raw, calc.bound, c->world->nodes);
	if (out->evidence &&
	    eg_bench_evidence_more(out->evidence, rep, c->world->size, pt->arm,
				   raw) < 0) {
		json_decref(out->evidence);
		out->evidence = NULL;
	}
	out->metrics = calloc(calc.n, sizeof(*out->metrics));
	if (!out->id || !out->suite || !out->arm || !out->axes ||
	    !out->evidence || !out->metrics) {
		eg_bench_calc_fini(&calc);
		eg_point_fini(out);
		snprintf(err, errlen, "out of memory");
		return EG_ENOMEM;
	}
	/* the metrics change hands: calc keeps nothing */
	memcpy(out->metrics, calc.m, calc.n * sizeof(*out->metrics));
	out->n_metrics = calc.n;
	calc.n = 0;
	eg_bench_calc_fini(&calc);
	return EG_OK;
}

/* Setup and verified step of every arm: st[j] live, or NULL with
 * arms[j].rc EG_EMISMATCH.  Returns EG_OK, or an error that ends all. */
static int eg__arms_open(const eg_bench_ctx_t *c, eg_bench_arm_t *arms,
			 size_t k, const eg_workload_t *w, void **st, char *err,
			 size_t errlen)
{
	const eg_bench_backend_ops_t *be = c->backend;
	char msg[508];
	int rc, lrc;

	for (size_t j = 0; j < k; j++) {
		const eg_bench_point_t *pt = arms[j].pt;
		eg_bench_setup_t s = {.size = sizeof(s),
				      .engine = pt->arm,
				      .transport = be->name,
				      .provider = c->provider,
				      .num_comms = pt->v[EG_AXIS_NUM_COMMS].num,
				      .timeout_s = c->timeout_s,
				      .device = c->device,
				      .nccl_path = c->nccl_path,
				      .nccl_xnode = c->nccl_xnode,
				      .phases = c->phases,
				      .nccl_blocking = c->nccl_blocking};

		msg[0] = 0;
		lrc = be->setup(c->world, c->boot, &s, w, &st[j], msg,
				sizeof(msg));
		if (lrc < 0)
			st[j] = NULL;
		/* everyone agrees before anything is measured; an arm that
		 * cannot run here (its plugin absent, a library the adapter
		 * cannot import) is left out, the others measured */
		rc = eg__agree(c, lrc, "setup", msg, arms[j].err,
			       sizeof(arms[j].err));
		if (rc == EG_ENOSYS) {
			arms[j].rc = rc;
			if (st[j])
				be->teardown(st[j]);
			st[j] = NULL;
			continue;
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s", arms[j].err);
			return rc;
		}
		lrc = be->verify(st[j], msg, sizeof(msg));
		rc = eg__agree(c, lrc, "verification", msg, arms[j].err,
			       sizeof(arms[j].err));
		if (rc == EG_EMISMATCH) {
			arms[j].rc = rc;
			be->teardown(st[j]);
			st[j] = NULL;
		} else if (rc < 0) {
			snprintf(err, errlen, "%s", arms[j].err);
			return rc;
		}
	}
	return EG_OK;
}

/* After the timed steps: each live arm's counters and times meet (an
 * allgather: the bootstrap has no gather; both boundaries' times, 6n per
 * rank, split into the two layouts), rank 0 builds its point. */
static int eg__arm_close(const eg_bench_ctx_t *c, eg_bench_arm_t *a,
			 const eg_workload_t *w, const eg_bench_model_t *raw,
			 const double *times,
			 const eg_bench_rank_report_t *mine, char *err,
			 size_t errlen)
{
	uint32_t W = c->world->size;
	size_t n = a->pt->iters;
	double *all = calloc(8 * n * W, sizeof(double));
	double *all_k = calloc(2 * n * W, sizeof(double));
	double *all_t = calloc(3 * n * W, sizeof(double));
	double *all_w = calloc(3 * n * W, sizeof(double));
	eg_bench_rank_report_t *rep = calloc(W, sizeof(*rep));
	int rc = EG_ENOMEM;

	if (!all || !all_k || !all_t || !all_w || !rep) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = eg_boot_allgather(c->boot, times, 8 * n * sizeof(double), all,
			       c->timeout_s);
	if (!rc)
		rc = eg_boot_allgather(c->boot, mine, sizeof(*mine), rep,
				       c->timeout_s);
	if (rc < 0) {
		snprintf(err, errlen, "gathering the times: %s",
			 eg_boot_error(c->boot));
		goto out;
	}
	for (uint32_t r = 0; r < W; r++) {
		memcpy(all_t + 3 * n * r, all + 8 * n * r,
		       3 * n * sizeof(double));
		memcpy(all_w + 3 * n * r, all + 8 * n * r + 3 * n,
		       3 * n * sizeof(double));
		/* kernel times from every rank, or none */
		if (!rep[r].timing.kernel) {
			free(all_k);
			all_k = NULL;
		}
	}
	for (uint32_t r = 0; all_k && r < W; r++)
		memcpy(all_k + 2 * n * r, all + 8 * n * r + 6 * n,
		       2 * n * sizeof(double));
	if (!c->world->rank && a->out)
		rc = eg__build(c, a->pt, w, raw, all_t, all_w, all_k, rep,
			       a->out, err, errlen);
out:
	EG_FREE(all, all_k, all_t, all_w, rep);
	return rc;
}

int eg_bench_measure_arms(const eg_bench_ctx_t *c, eg_bench_arm_t *arms,
			  size_t k, const eg_workload_t *w,
			  const eg_bench_model_t *raw, char *err, size_t errlen)
{
	unsigned n = k ? arms[0].pt->iters : 0;
	eg_bench_rank_report_t mine[EG_BENCH_ARMS_MAX] = {{0}};
	double *times[EG_BENCH_ARMS_MAX] = {0};
	void *st[EG_BENCH_ARMS_MAX] = {0};
	eg_watch_sample_t ws[3] = {{0}}; /* before, after, middle */
	int timed[EG_BENCH_ARMS_MAX] = {0};
	char msg[256] = "";
	size_t live = 0;
	int rc = EG_OK, lrc;

	for (size_t j = 0; j < k && j < EG_BENCH_ARMS_MAX; j++) {
		arms[j].rc = EG_OK;
		arms[j].err[0] = 0;
		if (arms[j].out)
			memset(arms[j].out, 0, sizeof(*arms[j].out));
		if (arms[j].pt->iters != n)
			n = 0;
		if (!(times[j] = calloc(8 * (size_t)n + 1, sizeof(double))))
			rc = EG_ENOMEM;
	}
	if (!k || k > EG_BENCH_ARMS_MAX) {
		snprintf(err, errlen, "%zu arms: 1 to %d", k,
			 EG_BENCH_ARMS_MAX);
		rc = EG_EINVAL;
		goto out;
	}
	if (!n || w->world != c->world->size) {
		snprintf(err, errlen, "point %s: world %u is not the job's %u",
			 arms[0].pt->id, w->world, c->world->size);
		rc = EG_EINVAL;
		goto out;
	}
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((rc = eg__arms_open(c, arms, k, w, st, err, errlen)) < 0)
		goto out;
	for (size_t j = 0; j < k; j++)
		live += st[j] != NULL;
	if (!live) {
		/* nothing to time: every arm wrong or not runnable here; one
		 * arm not runnable is the point's answer (the no-device
		 * skip of a job) */
		if (k == 1 && arms[0].rc == EG_ENOSYS) {
			snprintf(err, errlen, "%s", arms[0].err);
			rc = EG_ENOSYS;
		}
		goto out;
	}
	lrc =
	    eg__timed(c, st, k, arms[0].pt, times, timed, ws, msg, sizeof(msg));
	if (!lrc)
		lrc = eg__watched(c, ws, n, msg, sizeof(msg));
	for (size_t j = 0; !lrc && j < k; j++)
		if (st[j]) {
			eg__report(c, st[j], arms[j].pt, w, &mine[j]);
			mine[j].call_timed = timed[j];
		}
	if ((rc = eg__agree(c, lrc, "timed steps", msg, err, errlen)) < 0)
		goto out;
	for (size_t j = 0; !rc && j < k; j++)
		if (st[j])
			rc = eg__arm_close(c, &arms[j], w, raw, times[j],
					   &mine[j], err, errlen);
out:
	for (size_t j = 0; j < k && j < EG_BENCH_ARMS_MAX; j++) {
		if (st[j])
			c->backend->teardown(st[j]);
		free(times[j]);
	}
	return rc;
}

int eg_bench_measure(const eg_bench_ctx_t *c, const eg_bench_point_t *pt,
		     const eg_workload_t *w, const eg_bench_model_t *raw,
		     eg_point_t *out, char *err, size_t errlen)
{
	eg_bench_arm_t a = {.pt = pt, .out = out};
	int rc = eg_bench_measure_arms(c, &a, 1, w, raw, err, errlen);

	if (rc == EG_OK && a.rc) {
		snprintf(err, errlen, "%s", a.err);
		rc = a.rc;
	}
	return rc;
}

void eg_bench_print_boundary(const json_t *ev)
{
	static const char *const keys[] = {
	    "boundary",	    "boundary_detail",	  "window_hold_us",
	    "window_short", "window_host_sync",	  "replays_verified",
	    "kernels",	    "kernel_records_lost"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(ev, keys[i]);

		if (json_is_string(v))
			printf("  %-20s %s\n", keys[i], json_string_value(v));
	}
}
