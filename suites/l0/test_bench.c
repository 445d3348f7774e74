/* The measurement driver's arithmetic and plumbing (docs/metrics.md):
 * payload rows and SO/SU bytes for hand-computed routings, the slowest
 * rank per step and every derived metric for synthetic times, a tiny
 * in-process sweep (world of one, the null backend) written as results v1,
 * read back and judged by a gate file, and planted faults: a corrupted
 * point or spool line is rejected, a backend whose verified step is wrong
 * is not measured.  No timing is asserted. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "epgate/bench_driver.h"
#include "epgate/engine.h"
#include "epgate/nccl.h"
#include "epgate/error.h"
#include "epgate/gate.h"

static void eg_test_workload(eg_workload_t *w, const char *const *kv)
{
	char err[EG_ERRMSG_MAX], key[64];

	eg_workload_init(w);
	for (; *kv; kv++) {
		const char *eq = strchr(*kv, '=');

		ck_assert_ptr_nonnull(eq);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *kv), *kv);
		ck_assert_msg(eg_workload_set(w, key, eq + 1, err) == EG_OK,
			      "%s: %s", *kv, err);
	}
	ck_assert_msg(eg_workload_validate(w, err) == EG_OK, "%s", err);
}

/* ---- rows and bytes ---------------------------------------------------- */

START_TEST(rows_by_hand)
{
	/* W=4, E=8 (2 experts per rank), K=2 */
	static const char *const kv[] = {"world=4", "experts=8", "topk=2",
					 "tokens=5", NULL};
	static const int32_t idx[] = {
	    0,	1,  /* both on rank 0: one row, not two */
	    2,	7,  /* ranks 1 and 3 */
	    -1, 5,  /* masked slot: rank 2 only */
	    4,	5,  /* rank 2 again, deduplicated */
	    -1, -1, /* all masked: goes nowhere */
	};
	uint64_t rows[4];
	eg_workload_t w;

	eg_test_workload(&w, kv);
	ck_assert_int_eq(
	    eg_bench_count_rows(&w, EG_ROWS_PER_RANK, 5, idx, rows), EG_OK);
	ck_assert_uint_eq(rows[0], 1);
	ck_assert_uint_eq(rows[1], 1);
	ck_assert_uint_eq(rows[2], 2);
	ck_assert_uint_eq(rows[3], 1);
	/* dense: every token to every rank, whatever its routing */
	ck_assert_int_eq(
	    eg_bench_count_rows(&w, EG_ROWS_ALL_RANKS, 5, idx, rows), EG_OK);
	for (int d = 0; d < 4; d++)
		ck_assert_uint_eq(rows[d], 5);
	ck_assert_int_eq(eg_bench_count_rows(&w, EG_ROWS_NONE, 5, idx, rows),
			 EG_ENOSYS);
	eg_workload_fini(&w);
}
END_TEST

START_TEST(row_sizes)
{
	static const char *const bf[] = {"hidden=512", NULL};
	static const char *const f8[] = {"hidden=512", "dtype=fp8", NULL};
	static const char *const f32[] = {"hidden=7", "dtype=fp32", NULL};
	eg_workload_t w;

	eg_test_workload(&w, bf);
	ck_assert_uint_eq(eg_bench_dispatch_row_bytes(&w), 1024);
	ck_assert_uint_eq(eg_bench_combine_row_bytes(&w), 1024);
	eg_workload_fini(&w);
	/* fp8: 1 byte per channel + one fp32 scale per 128; combine bf16 */
	eg_test_workload(&w, f8);
	ck_assert_uint_eq(eg_bench_dispatch_row_bytes(&w), 512 + 4 * 4);
	ck_assert_uint_eq(eg_bench_combine_row_bytes(&w), 1024);
	eg_workload_fini(&w);
	eg_test_workload(&w, f32);
	ck_assert_uint_eq(eg_bench_dispatch_row_bytes(&w), 28);
	ck_assert_uint_eq(eg_bench_combine_row_bytes(&w), 28);
	eg_workload_fini(&w);
}
END_TEST

/* hot-rank:3 with K <= E_local sends every token to rank 3 alone: the
 * counts follow by hand.  W=4 in 2 nodes of 2: ranks 0,1 | 2,3. */
START_TEST(bytes_hot_rank)
{
	static const char *const kv[] = {
	    "world=4",	 "experts=8",	       "topk=2", "hidden=128",
	    "tokens=16", "routing=hot-rank:3", NULL};
	const uint64_t row = 128 * 2; /* bf16 */
	eg_bench_bytes_t b;
	eg_workload_t w;

	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "a2a", 0, 2, &b), EG_OK);
	ck_assert_uint_eq(b.disp_so, 16 * row); /* all to rank 3 */
	ck_assert_uint_eq(b.disp_su, 0);
	ck_assert_uint_eq(b.comb_so + b.comb_su, 0); /* nothing comes back */
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "a2a", 2, 2, &b), EG_OK);
	ck_assert_uint_eq(b.disp_so, 0);
	ck_assert_uint_eq(b.disp_su, 16 * row); /* rank 3 is its neighbour */
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "a2a", 3, 2, &b), EG_OK);
	ck_assert_uint_eq(b.disp_so + b.disp_su, 0); /* keeps its own */
	/* combine: rows of ranks 0, 1 (other node) and 2 (same) go back */
	ck_assert_uint_eq(b.comb_so, 32 * row);
	ck_assert_uint_eq(b.comb_su, 16 * row);
	/* dense: 16 tokens to each of the 3 others, partials back */
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "dense", 0, 2, &b), EG_OK);
	ck_assert_uint_eq(b.disp_so, 2 * 16 * row);
	ck_assert_uint_eq(b.disp_su, 1 * 16 * row);
	ck_assert_uint_eq(b.comb_so, 2 * 16 * row);
	ck_assert_uint_eq(b.comb_su, 1 * 16 * row);
	/* one node: nothing is SO */
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "dense", 0, 4, &b), EG_OK);
	ck_assert_uint_eq(b.disp_so, 0);
	ck_assert_uint_eq(b.disp_su, 3 * 16 * row);
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "dense", 4, 2, &b), EG_EINVAL);
	eg_workload_fini(&w);
}
END_TEST

/* The byte rule is the engine's: what its ops table declares, never its
 * name. */
START_TEST(rows_from_the_ops_table)
{
	static const char *const kv[] = {"world=4",   "experts=8", "topk=2",
					 "hidden=64", "tokens=9",  NULL};
	eg_engine_ops_t old = eg_engine_a2a, swapped = eg_engine_a2a;
	eg_bench_bytes_t a, d, b;
	eg_workload_t w;

	ck_assert_int_eq(eg_engine_rows(&eg_engine_a2a), EG_ROWS_PER_RANK);
	ck_assert_int_eq(eg_engine_rows(&eg_engine_dense), EG_ROWS_ALL_RANKS);
	/* the GPU engines declare what their host twins do */
	ck_assert_int_eq(eg_engine_rows(eg_engine_nccl_find("a2a")),
			 EG_ROWS_PER_RANK);
	ck_assert_int_eq(eg_engine_rows(eg_engine_nccl_find("dense")),
			 EG_ROWS_ALL_RANKS);
	/* an ops table from before the field: undeclared */
	old.size = offsetof(eg_engine_ops_t, dispatch_rows);
	ck_assert_int_eq(eg_engine_rows(&old), EG_ROWS_NONE);
	ck_assert_int_eq(eg_engine_rows_by_name("empty"), EG_ROWS_NONE);
	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "a2a", 1, 2, &a), EG_OK);
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "dense", 1, 2, &d), EG_OK);
	ck_assert_uint_ne(a.disp_so + a.disp_su, d.disp_so + d.disp_su);
	/* planted: a2a's name with dense's layout counts dense's bytes */
	swapped.dispatch_rows = EG_ROWS_ALL_RANKS;
	ck_assert_int_eq(
	    eg_bench_rank_bytes_rule(&w, eg_engine_rows(&swapped), 1, 2, &b),
	    EG_OK);
	ck_assert_uint_eq(b.disp_so, d.disp_so);
	ck_assert_uint_eq(b.disp_su, d.disp_su);
	ck_assert_uint_eq(b.comb_so, d.comb_so);
	ck_assert_int_eq(eg_bench_rank_bytes(&w, "empty", 1, 2, &b), EG_ENOSYS);
	ck_assert_int_eq(eg_bench_rank_bytes_rule(&w, EG_ROWS_NONE, 1, 2, &b),
			 EG_ENOSYS);
	eg_workload_fini(&w);
}
END_TEST

/* ---- metrics from gathered times --------------------------------------- */

static const eg_metric_t *metric(const eg_bench_calc_t *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->m[i].name, name))
			return &c->m[i];
	return NULL;
}

START_TEST(compute_slowest_rank)
{
	/* W=2, n=3 steps; seconds.  Step 0: rank 0 dispatches slower,
	 * rank 1 combines slower, so the slowest step (max of the sums) is
	 * less than the sum of the slowest phases. */
	static const double t[2 * 9] = {
	    /* rank 0: dispatch, expert, combine */
	    40e-6,
	    10e-6,
	    20e-6,
	    5e-6,
	    5e-6,
	    5e-6,
	    10e-6,
	    10e-6,
	    10e-6,
	    /* rank 1 */
	    10e-6,
	    10e-6,
	    30e-6,
	    1e-6,
	    1e-6,
	    1e-6,
	    50e-6,
	    10e-6,
	    10e-6,
	};
	eg_bench_rank_report_t rep[2] = {
	    {.num_comms = 2,
	     .ops_total = 10,
	     .ops_max_ep = 6,
	     .so_bytes = 1000,
	     .su_bytes = 0,
	     .sent_bytes = 4000},
	    {.num_comms = 2,
	     .ops_total = 14,
	     .ops_max_ep = 8,
	     .so_bytes = 3000,
	     .su_bytes = 0,
	     .sent_bytes = 2000},
	};
	eg_bench_model_t raw = {
	    .src = EG_BENCH_MODEL_PROFILE, .bw_gbps = 1, .post_rate = 1e6};
	eg_bench_calc_in_t in = {.world = 2,
				 .nodes = 2,
				 .n = 3,
				 .times = t,
				 .rep = rep,
				 .tokens = 64,
				 .raw = &raw};
	eg_bench_calc_t c;
	const eg_metric_t *m;

	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	m = metric(&c, "dispatch_us");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->n_samples, 3);
	ck_assert_double_eq_tol(m->samples[0], 40, 1e-9);
	ck_assert_double_eq_tol(m->samples[1], 10, 1e-9);
	ck_assert_double_eq_tol(m->samples[2], 30, 1e-9);
	m = metric(&c, "combine_us");
	ck_assert_double_eq_tol(m->samples[0], 50, 1e-9);
	ck_assert_double_eq_tol(m->samples[1], 10, 1e-9);
	ck_assert_double_eq_tol(m->samples[2], 10, 1e-9);
	/* step: the slowest rank's whole step, max over r of d+e+c:
	 * step 0 is 61 (rank 1: 10+1+50), not 40+5+50 */
	m = metric(&c, "step_us");
	ck_assert_double_eq_tol(m->samples[0], 61, 1e-9);
	ck_assert_double_eq_tol(m->samples[1], 25, 1e-9);
	ck_assert_double_eq_tol(m->samples[2], 41, 1e-9);
	/* summary: type-7 median, p10, p90 of {25, 41, 61} */
	ck_assert_double_eq_tol(m->s.median, 41, 1e-9);
	ck_assert_double_eq_tol(m->s.p10, 28.2, 1e-9);
	ck_assert_double_eq_tol(m->s.p90, 57, 1e-9);
	ck_assert_uint_eq(m->s.n, 3);
	/* tokens over step time */
	m = metric(&c, "tok_s");
	ck_assert_double_eq_tol(m->samples[0], 64 / 61e-6, 1e-3);
	/* per GPU: the mean over ranks, per step */
	m = metric(&c, "so_bytes");
	ck_assert_uint_eq(m->n_samples, 0);
	ck_assert_double_eq_tol(m->s.median, 2000, 1e-9);
	ck_assert_uint_eq(m->s.n, 3);
	m = metric(&c, "so_gbps");
	ck_assert_double_eq_tol(m->samples[0], 2000 / 40e-6 / 1e9, 1e-12);
	ck_assert_ptr_null(metric(&c, "su_gbps")); /* no SU bytes */
	ck_assert_double_eq(metric(&c, "su_bytes")->s.median, 0);
	ck_assert_double_eq_tol(metric(&c, "ops_posted")->s.median, 12, 1e-9);
	/* busiest endpoint over the communication time (d + c, slowest) */
	m = metric(&c, "post_rate");
	ck_assert_double_eq_tol(m->samples[0], 8 / 60e-6, 1e-6);
	ck_assert_double_eq_tol(m->samples[1], 8 / 20e-6, 1e-6);
	/* model: 4000 B at 1 GB/s = 4 us; 8 ops at 1e6/s = 8 us; the
	 * communication times (d + c, slowest) 60, 20, 40 -> median 40 us:
	 * issue is closer on a log scale */
	ck_assert_double_eq_tol(metric(&c, "model_bw_us")->s.median, 4, 1e-9);
	ck_assert_double_eq_tol(metric(&c, "model_issue_us")->s.median, 8,
				1e-9);
	ck_assert_double_eq_tol(metric(&c, "model_frac")->s.median, 8.0 / 40,
				1e-9);
	ck_assert_str_eq(c.bound, "issue");
	ck_assert_ptr_nonnull(metric(&c, "raw_gbps"));
	ck_assert_ptr_null(metric(&c, "transport_so_gbps"));
	eg_bench_calc_fini(&c);

	/* 70 us if bandwidth-bound is closer to 40 than 8 is: bandwidth;
	 * no raw numbers, no model */
	rep[0].sent_bytes = 70000;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_str_eq(c.bound, "bandwidth");
	eg_bench_calc_fini(&c);
	in.raw = NULL;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_str_eq(c.bound, "");
	ck_assert_ptr_null(metric(&c, "model_bw_us"));
	eg_bench_calc_fini(&c);
	/* a backend without op counters has no post rate */
	rep[0].ops_max_ep = rep[1].ops_max_ep = 0;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_ptr_null(metric(&c, "post_rate"));
	eg_bench_calc_fini(&c);
	in.n = 0;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_EINVAL);
}
END_TEST

/* What a backend adds: the dispatch's wire bytes (the busiest rank's) and
 * the engine's phases (the mean over ranks). */
START_TEST(wire_and_phases)
{
	static const double t[2 * 6] = {
	    100e-6, 200e-6, 5e-6, 5e-6, 50e-6, 50e-6, /* rank 0 */
	    80e-6,  400e-6, 5e-6, 5e-6, 50e-6, 50e-6, /* rank 1 */
	};
	eg_bench_rank_report_t rep[2] = {
	    {.wire_bytes = 1e6,
	     .n_phases = 2,
	     .phase_name = {"layout", "pack_exchange"},
	     .phase_us = {10, 60}},
	    {.wire_bytes = 3e6,
	     .n_phases = 2,
	     .phase_name = {"layout", "pack_exchange"},
	     .phase_us = {20, 80}},
	};
	eg_bench_calc_in_t in = {
	    .world = 2, .nodes = 1, .n = 2, .times = t, .rep = rep};
	eg_bench_calc_t c;
	const eg_metric_t *m;

	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_double_eq_tol(metric(&c, "wire_bytes")->s.median, 3e6, 1e-9);
	m = metric(&c, "wire_gbps");
	ck_assert_ptr_nonnull(m);
	/* the busiest rank's bytes over the slowest dispatch of each step */
	ck_assert_double_eq_tol(m->samples[0], 3e6 / 100e-6 / 1e9, 1e-9);
	ck_assert_double_eq_tol(m->samples[1], 3e6 / 400e-6 / 1e9, 1e-9);
	ck_assert_double_eq_tol(metric(&c, "phase_layout_us")->s.median, 15,
				1e-9);
	ck_assert_double_eq_tol(metric(&c, "phase_pack_exchange_us")->s.median,
				70, 1e-9);
	eg_bench_calc_fini(&c);
	/* a backend that counts neither: no such metrics */
	rep[0].wire_bytes = rep[1].wire_bytes = 0;
	rep[0].n_phases = rep[1].n_phases = 0;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_ptr_null(metric(&c, "wire_bytes"));
	ck_assert_ptr_null(metric(&c, "wire_gbps"));
	ck_assert_ptr_null(metric(&c, "phase_layout_us"));
	eg_bench_calc_fini(&c);
}
END_TEST

/* ---- a tiny sweep in this process --------------------------------------- */

static const char *const tiny = "profile: tiny\n"
				"transport: null\n"
				"repetitions: {warmup: 1, iters: 5}\n"
				"base: {world: 1}\n"
				"sweeps:\n"
				"  - name: s\n"
				"    arms: [empty, \"work:20\"]\n"
				"    axes: {concurrency: [1, 2]}\n";

static const char *const tiny_gates =
    "profile: tiny\n"
    "gates:\n"
    "  - name: budget\n"
    "    sentence: \"Steps stay under a second.\"\n"
    "    rule: bound\n"
    "    metric: step_us\n"
    "    max: 1000000\n"
    "  - name: path\n"
    "    sentence: \"The null backend ran.\"\n"
    "    rule: evidence\n"
    "    field: transport\n"
    "    expect: [null]\n"
    "  - name: impossible\n"
    "    sentence: \"Planted: steps under a picosecond.\"\n"
    "    rule: bound\n"
    "    metric: step_us\n"
    "    arms: [\"work:20\"]\n"
    "    max: 0.000001\n";

/* Measures every point of the tiny profile into path. */
static void tiny_sweep(const char *path, eg_results_t *r)
{
	char err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_bench_point_t *pts;
	size_t n;
	eg_world_t world;
	eg_boot_t *b = NULL;
	eg_results_writer_t *wr;
	json_t *ctx = json_pack("{s:s}", "profile", "tiny");

	unsetenv("EPGATE_RANK");
	unsetenv("EPGATE_SIZE");
	unsetenv("SLURM_PROCID");
	ck_assert_int_eq(eg_world_from_env(&world, err, sizeof(err)), EG_OK);
	ck_assert_uint_eq(world.size, 1);
	ck_assert_int_eq(eg_boot_open(&b, &world, 10), EG_OK);
	ck_assert_int_eq(
	    eg_profile_parse(&p, tiny, strlen(tiny), "tiny", err, sizeof(err)),
	    EG_OK);
	ck_assert_int_eq(eg_profile_points(&p, &pts, &n, err, sizeof(err)),
			 EG_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(eg_results_create(&wr, path, 0, ctx, err, sizeof(err)),
			 EG_OK);
	json_decref(ctx);
	eg_bench_ctx_t c = {.world = &world,
			    .boot = b,
			    .backend = eg_bench_backend_find("null"),
			    .timeout_s = 10,
			    .device = -1};
	ck_assert_ptr_nonnull(c.backend);
	for (size_t i = 0; i < n; i++) {
		eg_workload_t w;
		eg_point_t out;

		ck_assert_int_eq(
		    eg_bench_point_workload(&p, &pts[i], &w, err, sizeof(err)),
		    EG_OK);
		ck_assert_msg(eg_bench_measure(&c, &pts[i], &w, NULL, &out, err,
					       sizeof(err)) == EG_OK,
			      "%s", err);
		ck_assert_msg(eg_results_append(wr, &out, err, sizeof(err)) ==
				  EG_OK,
			      "%s", err);
		/* the spool form is the same codec, through the reader's
		 * validation */
		char *line;
		eg_point_t one;

		ck_assert_int_eq(
		    eg_point_line(&out, &line, "spool", err, sizeof(err)),
		    EG_OK);
		ck_assert_ptr_null(strchr(line, '\n'));
		ck_assert_int_eq(
		    eg_point_parse_line(line, &one, "spool", err, sizeof(err)),
		    EG_OK);
		ck_assert_str_eq(one.id, out.id);
		ck_assert_double_eq(
		    eg_point_metric(&one, "step_us")->s.median,
		    eg_stats_median(eg_point_metric(&out, "step_us")->samples,
				    5));
		eg_point_fini(&one);
		free(line);
		eg_point_fini(&out);
		eg_workload_fini(&w);
	}
	ck_assert_uint_eq(eg_results_count(wr), 4);
	eg_results_close(wr);
	free(pts);
	eg_profile_free(&p);
	eg_boot_close(b);
	ck_assert_msg(eg_results_read(r, path, err, sizeof(err)) == EG_OK, "%s",
		      err);
}

static char *tmpname(const char *tag)
{
	static char buf[4][256];
	static int k;
	char *s = buf[k++ % 4];

	snprintf(s, 256, "/tmp/eg-test-bench-%ld-%s", (long)getpid(), tag);
	return s;
}

START_TEST(tiny_sweep_read_back_and_gated)
{
	const char *path = tmpname("r.json");
	char err[EG_GATE_ERR_MAX];
	eg_results_t r;
	eg_gate_file_t gf;
	eg_gate_result_t res;

	tiny_sweep(path, &r);
	ck_assert_uint_eq(r.n_points, 4);
	ck_assert_str_eq(r.points[0].id, "s/empty/concurrency=1");
	ck_assert_str_eq(r.points[3].id, "s/work:20/concurrency=2");
	ck_assert_str_eq(r.points[3].suite, "s");
	ck_assert_int_eq(json_integer_value(
			     json_object_get(r.points[3].axes, "concurrency")),
			 2);
	ck_assert_str_eq(json_string_value(json_object_get(r.points[3].evidence,
							   "transport")),
			 "null");
	const eg_metric_t *m = eg_point_metric(&r.points[3], "step_us");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->n_samples, 5);
	ck_assert(m->s.median > 0);
	ck_assert(m->s.ci_lo <= m->s.median && m->s.median <= m->s.ci_hi);
	ck_assert_ptr_nonnull(eg_point_metric(&r.points[3], "tok_s"));
	/* no model without raw numbers; no rate without bytes */
	ck_assert_ptr_null(eg_point_metric(&r.points[3], "model_bw_us"));
	ck_assert_ptr_null(eg_point_metric(&r.points[3], "so_gbps"));

	/* judged by a gate file: two pass, the planted one fails */
	ck_assert_int_eq(eg_gate_file_parse(&gf, tiny_gates, strlen(tiny_gates),
					    "tiny.gate", err, sizeof(err)),
			 EG_OK);
	eg_gate_data_t d = {.cur = &r, .n_cur = 1};
	ck_assert_msg(eg_gate_file_check(&gf, &d, err, sizeof(err)) == EG_OK,
		      "%s", err);
	static const eg_gate_verdict_t want[] = {
	    EG_VERDICT_PASS, EG_VERDICT_PASS, EG_VERDICT_FAIL};
	for (size_t i = 0; i < gf.n_gates; i++) {
		ck_assert_int_eq(
		    eg_gate_eval(&gf, &gf.gates[i], &d, &res, err, sizeof(err)),
		    EG_OK);
		ck_assert_msg(res.verdict == want[i], "%s: %s",
			      gf.gates[i].name, res.summary);
		eg_gate_result_fini(&res);
	}
	eg_gate_file_free(&gf);

	/* the whole run in process, as the sweep orchestrator does it: the
	 * planted gate fails the run, and both reports say so */
	const char *gpath = tmpname("tiny.gate"), *tap = tmpname("g.tap");
	const char *junit = tmpname("g.xml");
	FILE *f = fopen(gpath, "w");
	char line[512];
	int not_ok = 0;

	ck_assert_ptr_nonnull(f);
	fputs(tiny_gates, f);
	fclose(f);
	eg_gate_run_opts_t go = {.gates = gpath,
				 .data = &d,
				 .tap = tap,
				 .junit = junit,
				 .prog = "test"};
	ck_assert_int_eq(eg_gate_run(&go), EG_EXIT_FAIL);
	f = fopen(tap, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		not_ok += !strncmp(line, "not ok ", 7);
	fclose(f);
	ck_assert_int_eq(not_ok, 1);
	ck_assert_int_eq(access(junit, R_OK), 0);
	/* planted: a gate file that is not there is a hard error */
	go.gates = "/nonexistent/tiny.gate";
	ck_assert_int_eq(eg_gate_run(&go), EG_EXIT_HARD);
	unlink(gpath);
	unlink(tap);
	unlink(junit);
	eg_results_free(&r);
	unlink(path);
}
END_TEST

/* Planted faults: a results file with a corrupted point is rejected,
 * naming the point; so is a corrupted spool line. */
START_TEST(corrupted_results_rejected)
{
	const char *path = tmpname("c.json"), *bad = tmpname("bad.json");
	char err[EG_RESULTS_ERR_MAX], *text, *at;
	eg_results_t r;
	FILE *f;
	long len;

	tiny_sweep(path, &r);
	eg_results_free(&r);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc((size_t)len + 1, 1);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);

	/* the second point's step median no longer matches its samples */
	at = strstr(strstr(text, "\"s/empty/concurrency=2\""),
		    "\"step_us\": {\"median\": ");
	ck_assert_ptr_nonnull(at);
	at += strlen("\"step_us\": {\"median\": ");
	*at = *at == '9' ? '1' : '9';
	f = fopen(bad, "w");
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(eg_results_read(&r, bad, err, sizeof(err)), EG_EPARSE);
	ck_assert_msg(strstr(err, "points[1].metrics.step_us") != NULL, "%s",
		      err);

	/* truncated mid-file (what a non-atomic writer leaves) */
	f = fopen(bad, "w");
	fwrite(text, 1, (size_t)len / 2, f);
	fclose(f);
	ck_assert_int_eq(eg_results_read(&r, bad, err, sizeof(err)), EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "malformed JSON"));

	/* a spool line with a sample that is not a number */
	eg_point_t pt;

	ck_assert_int_eq(
	    eg_point_parse_line("{\"id\": \"x\", \"suite\": \"s\", \"arm\": "
				"\"a2a\", \"axes\": {}, \"metrics\": "
				"{\"step_us\": {\"median\": 1, \"n\": 1, "
				"\"samples\": [\"1\"]}}}",
				&pt, "spool", err, sizeof(err)),
	    EG_EPARSE);
	ck_assert_str_eq(err,
			 "spool: point.metrics.step_us.samples[0]: expected a "
			 "number");
	ck_assert_ptr_null(pt.id);
	ck_assert_int_eq(
	    eg_point_parse_line("{\"id\": ", &pt, "spool", err, sizeof(err)),
	    EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "spool: malformed point: "));
	free(text);
	unlink(path);
	unlink(bad);
}
END_TEST

/* ---- the driver refuses to measure a wrong engine ----------------------- */

static int setup_calls, step_calls;

static int f_setup(const eg_world_t *world, eg_boot_t *boot,
		   const eg_bench_setup_t *s, const eg_workload_t *w,
		   void **state, char *err, size_t errlen)
{
	(void)world, (void)boot, (void)w;
	setup_calls++;
	if (!strcmp(s->engine, "nosetup")) {
		snprintf(err, errlen, "planted setup failure");
		return EG_EIO;
	}
	*state = &setup_calls;
	return EG_OK;
}

static int f_verify(void *state, char *err, size_t errlen)
{
	(void)state;
	snprintf(err, errlen, "rank 0: 3 wrong value(s) (planted)");
	return EG_EMISMATCH;
}

static int f_step(void *state, eg_bench_times_t *t)
{
	(void)state;
	step_calls++;
	t->dispatch_s = t->expert_s = t->combine_s = 1e-6;
	return EG_OK;
}

static void f_reset(void *state)
{
	(void)state;
}

static int f_counters(void *state, eg_bench_counters_t *c)
{
	(void)state;
	memset(c, 0, sizeof(*c));
	return EG_OK;
}

static int teardowns;
static void f_teardown(void *state)
{
	(void)state;
	teardowns++;
}

/* A job of one rank (no launcher) and a workload of its world. */
static void one_rank(eg_world_t *world, eg_boot_t **b, eg_workload_t *w)
{
	char err[512];

	unsetenv("EPGATE_RANK");
	unsetenv("EPGATE_SIZE");
	unsetenv("SLURM_PROCID");
	ck_assert_int_eq(eg_world_from_env(world, err, sizeof(err)), EG_OK);
	ck_assert_int_eq(eg_boot_open(b, world, 10), EG_OK);
	eg_workload_init(w);
	w->world = 1;
	w->experts = 2;
}

START_TEST(wrong_engine_not_measured)
{
	static const eg_bench_backend_ops_t wrong = {
	    .size = sizeof(eg_bench_backend_ops_t),
	    .name = "wrong",
	    .setup = f_setup,
	    .verify = f_verify,
	    .step = f_step,
	    .counters_reset = f_reset,
	    .counters = f_counters,
	    .teardown = f_teardown,
	};
	char err[512];
	eg_world_t world;
	eg_boot_t *b;
	eg_workload_t w;
	eg_point_t out;
	eg_bench_point_t pt = {
	    .id = "x", .suite = "s", .arm = "a2a", .warmup = 2, .iters = 3};

	one_rank(&world, &b, &w);
	eg_bench_ctx_t c = {.world = &world,
			    .boot = b,
			    .backend = &wrong,
			    .timeout_s = 10,
			    .device = -1};
	ck_assert_int_eq(
	    eg_bench_measure(&c, &pt, &w, NULL, &out, err, sizeof(err)),
	    EG_EMISMATCH);
	ck_assert_msg(strstr(err, "verification failed on rank(s) 0: rank 0: "
				  "3 wrong value(s)") == err,
		      "%s", err);
	ck_assert_ptr_null(out.id);	 /* nothing to write */
	ck_assert_int_eq(step_calls, 0); /* not one timed step */
	ck_assert_int_eq(teardowns, 1);
	/* a setup that fails: its message, no teardown of nothing */
	pt.arm = "nosetup";
	ck_assert_int_eq(
	    eg_bench_measure(&c, &pt, &w, NULL, &out, err, sizeof(err)),
	    EG_EIO);
	ck_assert_ptr_nonnull(strstr(err, "planted setup failure"));
	ck_assert_int_eq(teardowns, 1);
	ck_assert_int_eq(setup_calls, 2);
	/* a point of another world is refused before anything runs */
	w.world = 2;
	ck_assert_int_eq(
	    eg_bench_measure(&c, &pt, &w, NULL, &out, err, sizeof(err)),
	    EG_EINVAL);
	ck_assert_int_eq(setup_calls, 2);
	eg_workload_fini(&w);
	eg_boot_close(b);
}
END_TEST

/* ---- arms measured together, step by step --------------------------- */

static char order[64];
static size_t n_order;

static int o_setup(const eg_world_t *world, eg_boot_t *boot,
		   const eg_bench_setup_t *s, const eg_workload_t *w,
		   void **state, char *err, size_t errlen)
{
	(void)world, (void)boot, (void)w, (void)err, (void)errlen;
	*state = (void *)s->engine; /* the arm's name, a string literal */
	return EG_OK;
}

static int o_verify(void *state, char *err, size_t errlen)
{
	if (strcmp(state, "wrong"))
		return EG_OK;
	snprintf(err, errlen, "rank 0: 1 wrong value(s) (planted)");
	return EG_EMISMATCH;
}

/* logs the arm's letter; arm B's steps take twice arm A's */
static int o_step(void *state, eg_bench_times_t *t)
{
	const char *arm = state;

	if (n_order + 1 < sizeof(order))
		order[n_order++] = arm[0];
	t->dispatch_s = t->combine_s = arm[0] == 'B' ? 2e-6 : 1e-6;
	t->expert_s = 0;
	return EG_OK;
}

static void o_teardown(void *state)
{
	(void)state;
}

START_TEST(arms_step_by_step)
{
	static const eg_bench_backend_ops_t be = {
	    .size = sizeof(eg_bench_backend_ops_t),
	    .name = "order",
	    .setup = o_setup,
	    .verify = o_verify,
	    .step = o_step,
	    .counters_reset = f_reset,
	    .counters = f_counters,
	    .teardown = o_teardown,
	};
	char err[512];
	eg_world_t world;
	eg_boot_t *b;
	eg_workload_t w;
	eg_point_t out[2];
	eg_bench_point_t pa = {
	    .id = "p/A", .suite = "s", .arm = "A", .warmup = 1, .iters = 4};
	eg_bench_point_t pb = pa;
	eg_bench_arm_t arm[2] = {{.pt = &pa, .out = &out[0]},
				 {.pt = &pb, .out = &out[1]}};

	pb.arm = "B";
	snprintf(pb.id, sizeof(pb.id), "p/B");
	one_rank(&world, &b, &w);
	eg_bench_ctx_t c = {.world = &world,
			    .boot = b,
			    .backend = &be,
			    .timeout_s = 10,
			    .device = -1};
	ck_assert_int_eq(
	    eg_bench_measure_arms(&c, arm, 2, &w, NULL, err, sizeof(err)),
	    EG_OK);
	/* the warm-up step, then timed steps A B, B A, A B, B A */
	ck_assert_str_eq(order, "AB"
				"ABBAABBA");
	ck_assert_int_eq(arm[0].rc, EG_OK);
	ck_assert_int_eq(arm[1].rc, EG_OK);
	ck_assert_str_eq(out[0].arm, "A");
	ck_assert_str_eq(out[1].arm, "B");
	/* each arm's own times: B's steps are twice A's */
	ck_assert_double_eq_tol(
	    eg_point_metric(&out[0], "dispatch_us")->s.median, 1.0, 1e-9);
	ck_assert_double_eq_tol(
	    eg_point_metric(&out[1], "dispatch_us")->s.median, 2.0, 1e-9);
	eg_point_fini(&out[0]);
	eg_point_fini(&out[1]);
	/* planted: a wrong arm is left out, the other is measured */
	n_order = 0;
	memset(order, 0, sizeof(order));
	pb.arm = "wrong";
	ck_assert_int_eq(
	    eg_bench_measure_arms(&c, arm, 2, &w, NULL, err, sizeof(err)),
	    EG_OK);
	ck_assert_str_eq(order, "AAAAA");
	ck_assert_int_eq(arm[1].rc, EG_EMISMATCH);
	ck_assert_ptr_nonnull(strstr(arm[1].err, "1 wrong value(s)"));
	ck_assert_ptr_null(out[1].id);
	ck_assert_int_eq(arm[0].rc, EG_OK);
	eg_point_fini(&out[0]);
	/* more arms than it takes: refused before anything runs */
	n_order = 0;
	eg_bench_arm_t many[EG_BENCH_ARMS_MAX + 1];
	for (int i = 0; i <= EG_BENCH_ARMS_MAX; i++)
		many[i] = (eg_bench_arm_t){.pt = &pa};
	ck_assert_int_eq(eg_bench_measure_arms(&c, many, EG_BENCH_ARMS_MAX + 1,
					       &w, NULL, err, sizeof(err)),
			 EG_EINVAL);
	ck_assert_int_eq(n_order, 0);
	eg_workload_fini(&w);
	eg_boot_close(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perf");
	TCase *t = tcase_create("core");

	tcase_add_test(t, rows_by_hand);
	tcase_add_test(t, row_sizes);
	tcase_add_test(t, bytes_hot_rank);
	tcase_add_test(t, rows_from_the_ops_table);
	tcase_add_test(t, wire_and_phases);
	tcase_add_test(t, compute_slowest_rank);
	tcase_add_test(t, tiny_sweep_read_back_and_gated);
	tcase_add_test(t, corrupted_results_rejected);
	tcase_add_test(t, wrong_engine_not_measured);
	tcase_add_test(t, arms_step_by_step);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
