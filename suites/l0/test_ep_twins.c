/* The host twins of the EP kernels (lib/core/ep_host.c) assembled into both
 * GPU engines' data paths on one host, against the dense reference:
 * a2a = layout per source, pack into wire buffers, sections moved in K
 * slices (as the K communicators do), finish, expert stage, combine in
 * destination order; dense = gather, select with the layout of all
 * sources, scatter to partial outputs, sum in rank order. The device test
 * (suites/gpu/test_ep_cuda) then holds every kernel to these twins. */
#include <string.h>

#include "eg_test.h"
#include "epgate/cuda_ep.h"

typedef struct world {
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in[8];
	uint32_t W, T[8], stride[8];
	int32_t *pos[8];    /* a2a layout of each source, [W][stride] */
	uint32_t cnt[8][8]; /* cnt[s][d] */
} world_t;

static void world_init(world_t *x, const char *const *kv)
{
	memset(x, 0, sizeof(*x));
	eg_test_workload(&x->w, kv);
	x->W = x->w.world;
	ck_assert_uint_le(x->W, 8);
	ck_assert_int_eq(eg_gen_init(&x->g, &x->w), EG_OK);
	for (uint32_t s = 0; s < x->W; s++) {
		ck_assert_int_eq(eg_gen_rank_input(&x->g, &x->w, s, &x->in[s]),
				 EG_OK);
		x->T[s] = x->in[s].tokens;
		x->stride[s] = x->T[s] ? x->T[s] : 1;
	}
}

static void world_fini(world_t *x)
{
	for (uint32_t s = 0; s < x->W; s++) {
		free(x->pos[s]);
		eg_rank_input_free(&x->in[s]);
	}
	eg_gen_fini(&x->g);
	eg_workload_fini(&x->w);
}

static eg_ep_src_t one_source(const world_t *x, uint32_t s)
{
	eg_ep_src_t src;

	memset(&src, 0, sizeof(src));
	src.x = x->in[s].x;
	src.scales = x->in[s].scales;
	src.topk_idx = x->in[s].topk_idx;
	src.topk_w = x->in[s].topk_w;
	src.nsrc = 1;
	src.stride = x->stride[s];
	src.first_src = s;
	src.tokens[0] = x->T[s];
	return src;
}

/* Layout of every source; its counts must be eg_layout_source's. */
static void layouts(world_t *x)
{
	uint32_t W = x->W;

	for (uint32_t s = 0; s < W; s++) {
		eg_ep_src_t src = one_source(x, s);
		uint32_t rc[8], *ec = calloc(x->w.experts, sizeof(uint32_t));

		x->pos[s] = malloc((size_t)W * x->stride[s] * sizeof(int32_t));
		ck_assert_ptr_nonnull(x->pos[s]);
		eg_ep_layout_host(&x->w, &src, 0, W, x->pos[s], x->cnt[s]);
		eg_layout_source(&x->w, x->in[s].topk_idx, x->T[s], rc, ec,
				 NULL);
		for (uint32_t d = 0; d < W; d++)
			ck_assert_uint_eq(x->cnt[s][d], rc[d]);
		free(ec);
	}
}

/* One section slice: n rows of b bytes from wire to receive. */
static void move(void *dst, const void *src, size_t b, uint32_t lo, uint32_t hi)
{
	if (b && hi > lo)
		memcpy((uint8_t *)dst + lo * b, (const uint8_t *)src + lo * b,
		       (hi - lo) * b);
}

/* a2a dispatch of every rank into recv[d] (allocated here). */
static void a2a_dispatch(world_t *x, eg_recv_t *recv, uint32_t K)
{
	uint32_t W = x->W, pre[8][9];
	size_t sb[5];

	eg_ep_section_bytes(&x->w, sb);
	for (uint32_t d = 0; d < W; d++) {
		ck_assert_int_eq(
		    eg_recv_alloc(&recv[d], &x->w, d, eg_recv_max_rows(&x->w)),
		    EG_OK);
		pre[d][0] = 0;
		for (uint32_t s = 0; s < W; s++)
			pre[d][s + 1] = pre[d][s] + x->cnt[s][d];
	}
	for (uint32_t s = 0; s < W; s++) {
		eg_ep_src_t src = one_source(x, s);
		eg_ep_rows_t views[8];
		void *wire[8];

		for (uint32_t d = 0; d < W; d++) {
			size_t n = eg_ep_wire_bytes(&x->w, x->cnt[s][d]);
			wire[d] = calloc(1, n + 1);
			ck_assert_ptr_nonnull(wire[d]);
			eg_ep_rows_wire(&x->w, wire[d], x->cnt[s][d],
					&views[d]);
		}
		eg_ep_pack_host(&x->w, &src, 0, W, x->pos[s], views);
		/* the transfer: each section in K slices of rows */
		for (uint32_t d = 0; d < W; d++) {
			eg_ep_rows_t r;
			uint32_t n = x->cnt[s][d];

			eg_ep_rows_recv(&recv[d], pre[d][s], &r);
			for (uint32_t k = 0; k < K; k++) {
				uint32_t lo = (uint32_t)((uint64_t)n * k / K);
				uint32_t hi =
				    (uint32_t)((uint64_t)n * (k + 1) / K);
				move(r.x, views[d].x, sb[0], lo, hi);
				if (sb[1])
					move(r.scales, views[d].scales, sb[1],
					     lo, hi);
				move(r.src_token, views[d].src_token, sb[2], lo,
				     hi);
				move(r.topk_idx, views[d].topk_idx, sb[3], lo,
				     hi);
				move(r.topk_w, views[d].topk_w, sb[4], lo, hi);
			}
			free(wire[d]);
		}
	}
	for (uint32_t d = 0; d < W; d++)
		eg_ep_finish_host(&recv[d], pre[d]);
}

static void check_dispatch(world_t *x, eg_recv_t *recv)
{
	for (uint32_t d = 0; d < x->W; d++) {
		eg_recv_t e;
		eg_verdict_t v;
		char buf[2048];

		eg_verdict_init(&v);
		ck_assert_int_eq(eg_ref_dispatch(&x->w, &x->g, d, &e), EG_OK);
		int rc = eg_verify_dispatch(&x->w, &e, &recv[d], &v);
		eg_verdict_format(&v, buf, sizeof(buf));
		ck_assert_msg(rc == EG_OK, "%s rank %u:\n%s", x->w.name, d,
			      buf);
		eg_recv_free(&e);
	}
}

/* Expert outputs of every destination, then a2a combine of every source
 * from the rows it sent (rows of s at d start at d's rank_prefix[s]). */
static void a2a_combine_check(world_t *x, eg_recv_t *recv, int plant)
{
	size_t cs = eg_dtype_size(eg_combine_dtype(x->w.dtype));
	size_t rowb = cs * x->w.hidden;
	void *y[8];
	int bad = 0;

	for (uint32_t d = 0; d < x->W; d++) {
		y[d] = malloc((size_t)(recv[d].num_rows + 1) * rowb);
		ck_assert_int_eq(eg_expert_stage(&x->g, &recv[d], y[d]), EG_OK);
	}
	for (uint32_t s = 0; s < x->W; s++) {
		size_t nb = eg_combine_bytes(&x->w, s);
		void *out = malloc(nb + 1), *ref = malloc(nb + 1);
		const void *ys[8];
		eg_verdict_t v;

		for (uint32_t d = 0; d < x->W; d++)
			ys[d] = (const uint8_t *)y[d] +
				(size_t)recv[d].rank_prefix[s] * rowb;
		eg_ep_combine_host(&x->w, x->T[s], x->W, x->pos[s],
				   x->stride[s], ys, out);
		if (plant && nb)
			((uint8_t *)out)[nb - 1] ^= 0x01;
		ck_assert_int_eq(
		    eg_ref_combine(&x->w, &x->g, s, ref, NULL, NULL), EG_OK);
		eg_verdict_init(&v);
		bad |= eg_verify_combine(&x->w, s, EG_COMPARE_BITS, ref, NULL,
					 NULL, out, &v) != EG_OK;
		if (!plant)
			ck_assert_msg(!bad, "%s: combine of rank %u differs",
				      x->w.name, s);
		free(out);
		free(ref);
	}
	if (plant)
		ck_assert_msg(bad, "a planted combine bit went unnoticed");
	for (uint32_t d = 0; d < x->W; d++)
		free(y[d]);
}

static void a2a_case(const char *const *kv, uint32_t K)
{
	world_t x;
	eg_recv_t recv[8];

	world_init(&x, kv);
	layouts(&x);
	a2a_dispatch(&x, recv, K);
	check_dispatch(&x, recv);
	a2a_combine_check(&x, recv, 0);
	for (uint32_t d = 0; d < x.W; d++)
		eg_recv_free(&recv[d]);
	world_fini(&x);
}

/* dense: every rank's tokens gathered at [s][Tmax]; destination d selects
 * its rows with the layout of all sources; combine scatters the expert
 * outputs to [s][Tmax] partials that are summed in rank order. */
static void dense_case(const char *const *kv)
{
	world_t x;
	uint32_t W, Tmax = 1;
	size_t xb, nb, K, cs, rowb;
	uint8_t *gx;
	float *gs, *gw;
	int32_t *gi;
	void *y[8], *part[8];
	eg_recv_t recv[8];

	world_init(&x, kv);
	W = x.W;
	K = x.w.topk;
	xb = (size_t)x.w.hidden * eg_dtype_size(x.w.dtype);
	nb = x.w.dtype == EG_DTYPE_FP8 ? x.w.hidden / EG_FP8_BLOCK : 0;
	cs = eg_dtype_size(eg_combine_dtype(x.w.dtype));
	rowb = cs * x.w.hidden;
	for (uint32_t s = 0; s < W; s++)
		if (x.T[s] > Tmax)
			Tmax = x.T[s];
	gx = calloc((size_t)W * Tmax, xb + 1);
	gs = calloc((size_t)W * Tmax * (nb + 1), sizeof(float));
	gi = calloc((size_t)W * Tmax * K, sizeof(int32_t));
	gw = calloc((size_t)W * Tmax * K, sizeof(float));
	ck_assert(gx && gs && gi && gw);
	for (uint32_t s = 0; s < W; s++) {
		size_t o = (size_t)s * Tmax;

		if (!x.T[s])
			continue; /* an empty rank's arrays may be NULL */
		memcpy(gx + o * xb, x.in[s].x, x.T[s] * xb);
		if (nb)
			memcpy(gs + o * nb, x.in[s].scales,
			       x.T[s] * nb * sizeof(float));
		memcpy(gi + o * K, x.in[s].topk_idx, x.T[s] * K * 4);
		memcpy(gw + o * K, x.in[s].topk_w, x.T[s] * K * 4);
	}
	eg_ep_src_t src;
	memset(&src, 0, sizeof(src));
	src.x = gx;
	src.scales = gs;
	src.topk_idx = gi;
	src.topk_w = gw;
	src.nsrc = W;
	src.stride = Tmax;
	for (uint32_t s = 0; s < W; s++)
		src.tokens[s] = x.T[s];
	int32_t *pos = malloc((size_t)W * Tmax * sizeof(int32_t));
	for (uint32_t d = 0; d < W; d++) {
		uint32_t cnt[8], pre[9] = {0};
		eg_ep_rows_t views[8];

		eg_ep_layout_host(&x.w, &src, d, 1, pos, cnt);
		for (uint32_t s = 0; s < W; s++)
			pre[s + 1] = pre[s] + cnt[s];
		ck_assert_int_eq(
		    eg_recv_alloc(&recv[d], &x.w, d, eg_recv_max_rows(&x.w)),
		    EG_OK);
		for (uint32_t s = 0; s < W; s++)
			eg_ep_rows_recv(&recv[d], pre[s], &views[s]);
		eg_ep_pack_host(&x.w, &src, d, 1, pos, views);
		eg_ep_finish_host(&recv[d], pre);
	}
	check_dispatch(&x, recv);
	for (uint32_t d = 0; d < W; d++) {
		y[d] = malloc((size_t)(recv[d].num_rows + 1) * rowb);
		part[d] = malloc((size_t)W * Tmax * rowb);
		ck_assert_int_eq(eg_expert_stage(&x.g, &recv[d], y[d]), EG_OK);
		eg_ep_scatter_host(&x.w, &recv[d], y[d], Tmax, part[d]);
	}
	for (uint32_t s = 0; s < W; s++) {
		size_t n = (size_t)x.T[s] * x.w.hidden;
		void *out = malloc(n * cs + 1), *ref = malloc(n * cs + 1);
		eg_verdict_t v;

		for (size_t i = 0; i < n; i++) {
			float acc = 0.0f;
			for (uint32_t d = 0; d < W; d++)
				acc = acc +
				      eg_load_f32(
					  eg_combine_dtype(x.w.dtype), part[d],
					  (size_t)s * Tmax * x.w.hidden + i);
			eg_store_f32(eg_combine_dtype(x.w.dtype), out, i, acc);
		}
		ck_assert_int_eq(eg_ref_combine(&x.w, &x.g, s, ref, NULL, NULL),
				 EG_OK);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_combine(&x.w, s, EG_COMPARE_BITS,
						   ref, NULL, NULL, out, &v),
				 EG_OK);
		free(out);
		free(ref);
	}
	for (uint32_t d = 0; d < W; d++) {
		free(y[d]);
		free(part[d]);
		eg_recv_free(&recv[d]);
	}
	free(pos);
	free(gx);
	free(gs);
	free(gi);
	free(gw);
	world_fini(&x);
}

static const char *const wl_base[] = {"name=base", "world=4",	"experts=16",
				      "topk=4",	   "hidden=64", "tokens=40",
				      NULL};
static const char *const wl_fp8[] = {
    "name=fp8",	  "world=2",	      "experts=8", "topk=4",
    "hidden=256", "tokens=33",	      "dtype=fp8", "data=random",
    "mask=0.2",	  "routing=zipf:1.3", NULL};
static const char *const wl_uneven[] = {
    "name=uneven", "world=3",	  "experts=12",	     "topk=5",	     "hidden=7",
    "dtype=fp32",  "data=random", "tokens=uneven:9", "zero_ranks=1", NULL};
static const char *const wl_hot[] = {"name=hot",
				     "world=8",
				     "experts=64",
				     "topk=8",
				     "hidden=16",
				     "tokens=50",
				     "routing=hot-rank:3:0.7",
				     "mask=0.1",
				     NULL};
static const char *const wl_tiny[] = {"name=tiny", "world=2",  "experts=2",
				      "topk=1",	   "hidden=3", "tokens=1",
				      NULL};
static const char *const wl_masked[] = {"name=masked", "world=2",  "experts=8",
					"topk=2",      "tokens=6", "mask=1",
					NULL};

START_TEST(test_a2a_twins_match_reference)
{
	a2a_case(wl_base, 1);
	a2a_case(wl_base, 3);
	a2a_case(wl_fp8, 4);
	a2a_case(wl_uneven, 2);
	a2a_case(wl_hot, 4);
	a2a_case(wl_tiny, 4);
	a2a_case(wl_masked, 1);
}
END_TEST

START_TEST(test_dense_twins_match_reference)
{
	dense_case(wl_base);
	dense_case(wl_fp8);
	dense_case(wl_uneven);
	dense_case(wl_hot);
	dense_case(wl_tiny);
	dense_case(wl_masked);
}
END_TEST

/* The checks above can fail: a flipped payload bit in one received row
 * and a flipped combine bit are both reported. */
START_TEST(test_planted_faults_are_seen)
{
	world_t x;
	eg_recv_t recv[8], e;
	eg_verdict_t v;

	world_init(&x, wl_base);
	layouts(&x);
	a2a_dispatch(&x, recv, 2);
	ck_assert_uint_gt(recv[1].num_rows, 3);
	((uint8_t *)recv[1].x)[2 * 64 * 2 + 5] ^= 0x10;
	ck_assert_int_eq(eg_ref_dispatch(&x.w, &x.g, 1, &e), EG_OK);
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_dispatch(&x.w, &e, &recv[1], &v),
			 EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 1);
	((uint8_t *)recv[1].x)[2 * 64 * 2 + 5] ^= 0x10;
	a2a_combine_check(&x, recv, 1);
	eg_recv_free(&e);
	for (uint32_t d = 0; d < x.W; d++)
		eg_recv_free(&recv[d]);
	world_fini(&x);
}
END_TEST

/* Wire sections are 16-byte aligned and cover the rows exactly. */
START_TEST(test_wire_sections)
{
	eg_workload_t w;
	static const char *const kv[] = {"world=2",  "experts=4",  "topk=3",
					 "hidden=5", "dtype=bf16", NULL};
	eg_ep_rows_t v;
	size_t b[5];

	eg_test_workload(&w, kv);
	eg_ep_section_bytes(&w, b);
	ck_assert_uint_eq(b[0], 10);
	ck_assert_uint_eq(b[1], 0);
	ck_assert_uint_eq(b[3], 12);
	/* 7 rows: 70 -> 80, 0, 28 -> 32, 84 -> 96, 84 -> 96 */
	ck_assert_uint_eq(eg_ep_wire_bytes(&w, 7), 80 + 32 + 96 + 96);
	eg_ep_rows_wire(&w, (void *)0x1000, 7, &v);
	ck_assert_ptr_null(v.scales);
	ck_assert_ptr_null(v.src_rank);
	ck_assert_uint_eq((uintptr_t)v.src_token, 0x1000 + 80);
	ck_assert_uint_eq((uintptr_t)v.topk_idx, 0x1000 + 112);
	ck_assert_uint_eq((uintptr_t)v.topk_w, 0x1000 + 208);
	eg_ep_rows_advance(&w, &v, 2);
	ck_assert_uint_eq((uintptr_t)v.x, 0x1000 + 20);
	ck_assert_uint_eq((uintptr_t)v.topk_w, 0x1000 + 208 + 24);
	eg_workload_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ep_twins");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_wire_sections);
	tcase_add_test(tc, test_a2a_twins_match_reference);
	tcase_add_test(tc, test_dense_twins_match_reference);
	tcase_add_test(tc, test_planted_faults_are_seen);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
