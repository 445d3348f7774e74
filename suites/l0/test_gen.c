/* Counter-based generation: purity, independence of streams, value and
 * routing distributions, fp8 quantization, and golden bits of the recipe.
 * Statistical checks use fixed seeds and 6-sigma bands: deterministic,
 * and far from any edge. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gen.h"

static void setup(eg_workload_t *w, uint32_t W, uint32_t E, uint32_t K,
		  uint32_t H, uint32_t T, eg_dtype_t dt, eg_data_mode_t dm)
{
	eg_workload_init(w);
	w->world = W;
	w->experts = E;
	w->topk = K;
	w->hidden = H;
	w->tokens = T;
	w->tokens_mode = EG_TOKENS_UNIFORM;
	w->zero_ranks = 0;
	w->dtype = dt;
	w->data = dm;
	w->routing = EG_ROUTING_UNIFORM;
	w->zipf_s = 1.0;
	w->hot_target = 0;
	w->hot_frac = 0.0;
	w->mask_ratio = 0.0;
	w->seed = 42;
	w->iter = 0;
}

static void make(eg_gen_t *g, const eg_workload_t *w, uint32_t rank,
		 eg_rank_input_t *in)
{
	ck_assert_int_eq(eg_gen_init(g, w), 0);
	ck_assert_int_eq(eg_gen_rank_input(g, w, rank, in), 0);
}

static void drop(eg_gen_t *g, eg_rank_input_t *in)
{
	eg_rank_input_free(in);
	eg_gen_fini(g);
}

static size_t xbytes(const eg_rank_input_t *in)
{
	return (size_t)in->tokens * in->hidden * eg_dtype_size(in->dtype);
}

static size_t kn(const eg_rank_input_t *in)
{
	return (size_t)in->tokens * in->topk;
}

/* |observed - expected| within 6 sigma */
static void band(double got, double mean, double sigma, const char *what)
{
	ck_assert_msg(fabs(got - mean) <= 6.0 * sigma,
		      "%s: %g, expected %g +- 6 * %g", what, got, mean, sigma);
}

START_TEST(philox_kat)
{
	/* Random123's published known-answer vectors for Philox4x32-10 */
	static const uint32_t kat[3][10] = {
	    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
	    {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
	     0x6d5451fd},
	    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822,
	     0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
	};
	for (int i = 0; i < 3; i++) {
		philox4x32_ctr_t c = {
		    {kat[i][0], kat[i][1], kat[i][2], kat[i][3]}};
		philox4x32_key_t k = {{kat[i][4], kat[i][5]}};
		philox4x32_ctr_t r = philox4x32(c, k);

		for (int j = 0; j < 4; j++)
			ck_assert_uint_eq(r.v[j], kat[i][6 + j]);
	}
}
END_TEST

START_TEST(params)
{
	eg_workload_t w;
	eg_gen_t g;

	setup(&w, 4, 16, 2, 256, 8, EG_DTYPE_BF16, EG_DATA_EXACT);
	w.seed = 0x123456789abcdef0ull;
	w.iter = 7;
	w.mask_ratio = 0.5;
	w.hot_frac = 0.25; /* ignored: routing is uniform */
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	ck_assert_uint_eq(g.p.key0, 0x9abcdef0u);
	ck_assert_uint_eq(g.p.key1, 0x12345678u);
	ck_assert_uint_eq(g.p.iter, 7);
	ck_assert_uint_eq(g.p.local_experts, 4);
	ck_assert_uint_eq(g.p.hot_threshold, 0);
	ck_assert_uint_eq(g.p.mask_threshold, 1ull << 31);
	/* bf16, K=2: A = floor(255 / 8) = 31 */
	ck_assert_int_eq(g.p.bias_bound, 15);
	ck_assert_int_eq(g.p.value_bound, 16);
	ck_assert_ptr_null(g.p.expert_weight);
	eg_gen_fini(&g);

	w.dtype = EG_DTYPE_FP8; /* combine in bf16, values capped at 15 */
	w.routing = EG_ROUTING_HOT_EXPERT;
	w.hot_target = 3;
	w.mask_ratio = 1.0;
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	ck_assert_int_eq(g.p.bias_bound, 15);
	ck_assert_int_eq(g.p.value_bound, 15);
	ck_assert_uint_eq(g.p.hot_threshold, 1ull << 30);
	ck_assert_uint_eq(g.p.mask_threshold, 1ull << 32);
	ck_assert_uint_eq(g.p.hot_target, 3);
	ck_assert_uint_eq(g.p.routing, EG_GEN_HOT_EXPERT);
	ck_assert_uint_eq(g.p.dtype, EG_GEN_FP8);
	eg_gen_fini(&g);

	w.dtype = EG_DTYPE_FP32; /* K=4: A = min(64, (2^24-1)/16) = 64 */
	w.topk = 4;
	w.routing = EG_ROUTING_ZIPF;
	w.zipf_s = 2.0;
	w.data = EG_DATA_RANDOM;
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	ck_assert_int_eq(g.p.value_bound, 0);
	ck_assert_int_eq(g.p.bias_bound, 0);
	ck_assert_uint_eq(g.p.data, EG_GEN_RANDOM);
	ck_assert_ptr_eq(g.p.expert_weight, g.table);
	ck_assert_uint_eq(g.table[0], 1u << 24);
	ck_assert_uint_eq(g.table[1], 1u << 22);
	ck_assert_uint_eq(g.table[3], 1u << 20);
	ck_assert_uint_eq(g.table[2], 1864135); /* 2^24 / 9 rounded */
	eg_gen_fini(&g);
	ck_assert_ptr_null(g.table);

	w.data = EG_DATA_EXACT;
	w.zipf_s = 40.0; /* tiny weights are clamped to 1 */
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	ck_assert_int_eq(g.p.bias_bound, 32);
	ck_assert_int_eq(g.p.value_bound, 32);
	ck_assert_uint_eq(g.table[15], 1);
	eg_gen_fini(&g);

	w.experts = 18; /* not divisible by W */
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_EINVAL);
	eg_gen_fini(&g);
}
END_TEST

START_TEST(rank_input_shapes)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;

	setup(&w, 4, 8, 2, 256, 3, EG_DTYPE_FP8, EG_DATA_EXACT);
	w.tokens_mode = EG_TOKENS_UNEVEN; /* T_r = max(0, 3 - r) */
	make(&g, &w, 1, &in);
	ck_assert_uint_eq(in.rank, 1);
	ck_assert_uint_eq(in.tokens, 2);
	ck_assert_uint_eq(in.hidden, 256);
	ck_assert_uint_eq(in.topk, 2);
	ck_assert_int_eq(in.dtype, EG_DTYPE_FP8);
	ck_assert_ptr_nonnull(in.scales);
	eg_rank_input_free(&in);
	ck_assert_ptr_null(in.x);

	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 3, &in), 0);
	ck_assert_uint_eq(in.tokens, 0);
	eg_rank_input_free(&in);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 4, &in), EG_EINVAL);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);

	w.dtype = EG_DTYPE_BF16;
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 0, &in), 0);
	ck_assert_ptr_null(in.scales);
	drop(&g, &in);
}
END_TEST

/* Same input twice, a prefix of the tokens, and single elements evaluated
 * directly all give the same bits. */
static void purity_for(eg_dtype_t dt, eg_data_mode_t dm)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t a, b;
	uint32_t half;
	void *x;
	float *sc = NULL;

	setup(&w, 4, 16, 4, 256, 40, dt, dm);
	w.routing = EG_ROUTING_ZIPF;
	w.mask_ratio = 0.2;
	make(&g, &w, 1, &a);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 1, &b), 0);
	ck_assert_mem_eq(a.x, b.x, xbytes(&a));
	ck_assert_mem_eq(a.topk_idx, b.topk_idx, kn(&a) * 4);
	ck_assert_mem_eq(a.topk_w, b.topk_w, kn(&a) * 4);
	if (dt == EG_DTYPE_FP8)
		ck_assert_mem_eq(a.scales, b.scales, 40 * 2 * 4);

	half = a.tokens / 2;
	x = calloc(1, xbytes(&a));
	if (dt == EG_DTYPE_FP8)
		sc = calloc(40 * 2, sizeof(*sc));
	ck_assert_ptr_nonnull(x);
	eg_gen_tokens_host(&g, 1, half, x, sc);
	ck_assert_mem_eq(a.x, x, xbytes(&a) / 2);
	if (sc)
		ck_assert_mem_eq(a.scales, sc, half * 2 * sizeof(*sc));
	free(x);
	free(sc);

	for (uint32_t t = 0; t < a.tokens; t += 7) {
		int32_t idx[4];
		float wt[4];

		eg_gen_route(&g.p, 1, t, idx, wt);
		ck_assert_mem_eq(idx, a.topk_idx + t * 4, sizeof(idx));
		ck_assert_mem_eq(wt, a.topk_w + t * 4, sizeof(wt));
		if (dt == EG_DTYPE_FP8)
			continue;
		for (uint32_t h = 0; h < 256; h += 13) {
			float v = eg_gen_value(&g.p, 1, t, h);
			size_t i = (size_t)t * 256 + h;

			ck_assert_uint_eq(eg_load_bits(dt, a.x, i),
					  dt == EG_DTYPE_BF16
					      ? eg_f32_to_bf16(v)
					      : eg_f2u(v));
		}
	}
	eg_rank_input_free(&b);
	drop(&g, &a);
}

START_TEST(purity)
{
	purity_for(EG_DTYPE_BF16, EG_DATA_EXACT);
	purity_for(EG_DTYPE_FP32, EG_DATA_RANDOM);
	purity_for(EG_DTYPE_FP8, EG_DATA_EXACT);
	purity_for(EG_DTYPE_FP8, EG_DATA_RANDOM);
}
END_TEST

/* Token values depend on (seed, iter, rank, t, h) and, in exact mode, the
 * bound; not on W or E. */
/* The host's generation takes exact data's four columns from one draw:
 * every element, at widths that are not a multiple of four and with
 * non-finite values on, is still eg_gen_value's, the device's recipe. */
START_TEST(host_tokens_elementwise)
{
	static const uint32_t widths[] = {1, 2, 3, 5, 7, 13, 64};
	static const eg_dtype_t dts[] = {EG_DTYPE_BF16, EG_DTYPE_FP32};

	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		for (size_t d = 0; d < 2; d++)
			for (int nf = 0; nf < 2; nf++) {
				eg_workload_t w;
				eg_gen_t g;
				uint32_t H = widths[i], T = 9;
				void *x = calloc((size_t)T * H, 4);

				setup(&w, 2, 8, 2, H, T, dts[d], EG_DATA_EXACT);
				if (nf) {
					w.nonfinite = EG_NONFINITE_INPUT;
					w.nonfinite_p = 0.5;
				}
				ck_assert_ptr_nonnull(x);
				ck_assert_int_eq(eg_gen_init(&g, &w), 0);
				eg_gen_tokens_host(&g, 1, T, x, NULL);
				for (uint32_t t = 0; t < T; t++)
					for (uint32_t h = 0; h < H; h++) {
						float v =
						    eg_gen_value(&g.p, 1, t, h);
						size_t j = (size_t)t * H + h;

						ck_assert_uint_eq(
						    eg_load_bits(dts[d], x, j),
						    dts[d] == EG_DTYPE_BF16
							? eg_f32_to_bf16(v)
							: eg_f2u(v));
					}
				eg_gen_fini(&g);
				free(x);
			}
}
END_TEST

START_TEST(values_independent_of_world)
{
	for (int dm = 0; dm < 2; dm++) {
		eg_workload_t w2, w4;
		eg_gen_t g2, g4;
		eg_rank_input_t a, b;

		setup(&w2, 2, 8, 2, 128, 16, EG_DTYPE_BF16, dm);
		setup(&w4, 4, 32, 2, 128, 16, EG_DTYPE_BF16, dm);
		w4.routing = EG_ROUTING_HOT_RANK;
		w4.hot_frac = 0.5;
		make(&g2, &w2, 1, &a);
		make(&g4, &w4, 1, &b);
		ck_assert_mem_eq(a.x, b.x, xbytes(&a));
		drop(&g2, &a);
		drop(&g4, &b);
	}
}
END_TEST

static double frac_diff_f32(const float *a, const float *b, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		d += eg_f2u(a[i]) != eg_f2u(b[i]);
	return (double)d / (double)n;
}

static double frac_diff_route(const eg_rank_input_t *a,
			      const eg_rank_input_t *b)
{
	size_t d = 0;

	for (uint32_t t = 0; t < a->tokens; t++)
		d += memcmp(a->topk_idx + t * a->topk,
			    b->topk_idx + t * b->topk, a->topk * 4) != 0;
	return (double)d / a->tokens;
}

START_TEST(streams_differ)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t base, o;
	size_t n;

	setup(&w, 4, 64, 4, 256, 64, EG_DTYPE_FP32, EG_DATA_RANDOM);
	make(&g, &w, 1, &base);
	n = (size_t)base.tokens * base.hidden;

	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 2, &o), 0); /* rank */
	ck_assert(frac_diff_f32(base.x, o.x, n) > 0.999);
	ck_assert(frac_diff_route(&base, &o) > 0.9);
	eg_rank_input_free(&o);
	eg_gen_fini(&g);

	w.seed = 43; /* seed, low word */
	make(&g, &w, 1, &o);
	ck_assert(frac_diff_f32(base.x, o.x, n) > 0.999);
	ck_assert(frac_diff_route(&base, &o) > 0.9);
	drop(&g, &o);

	w.seed = 42 + (1ull << 32); /* seed, high word */
	make(&g, &w, 1, &o);
	ck_assert(frac_diff_f32(base.x, o.x, n) > 0.999);
	ck_assert(frac_diff_route(&base, &o) > 0.9);
	drop(&g, &o);

	/* iteration: new values, same routing and weights */
	w.seed = 42;
	w.iter = 1;
	make(&g, &w, 1, &o);
	ck_assert(frac_diff_f32(base.x, o.x, n) > 0.999);
	ck_assert_mem_eq(base.topk_idx, o.topk_idx, kn(&base) * 4);
	ck_assert_mem_eq(base.topk_w, o.topk_w, kn(&base) * 4);
	drop(&g, &o);

	/* the different streams of one element are not the same draws:
	 * consecutive channels and tokens differ */
	ck_assert(frac_diff_f32(base.x, (float *)base.x + 1, n - 1) > 0.999);
	ck_assert(frac_diff_f32(base.x, (float *)base.x + 256, n - 256) >
		  0.999);
	eg_rank_input_free(&base);
}
END_TEST

START_TEST(exact_values)
{
	static const eg_dtype_t dts[] = {EG_DTYPE_BF16, EG_DTYPE_FP32};

	for (int k = 0; k < 2; k++) {
		eg_workload_t w;
		eg_gen_t g;
		eg_rank_input_t in;
		int lo = 0, hi = 0;
		size_t n;

		setup(&w, 2, 8, 2, 512, 64, dts[k], EG_DATA_EXACT);
		make(&g, &w, 0, &in);
		n = (size_t)in.tokens * in.hidden;
		for (size_t i = 0; i < n; i++) {
			float v = eg_load_f32(dts[k], in.x, i);

			ck_assert(v == (float)(int)v);
			ck_assert(fabsf(v) <= (float)g.p.value_bound);
			lo |= v == -(float)g.p.value_bound;
			hi |= v == (float)g.p.value_bound;
		}
		ck_assert(lo && hi); /* the whole range is used */
		drop(&g, &in);
	}
}
END_TEST

START_TEST(random_moments)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	double s = 0, s2 = 0;
	size_t n;

	setup(&w, 2, 8, 2, 1024, 256, EG_DTYPE_FP32, EG_DATA_RANDOM);
	make(&g, &w, 1, &in);
	n = (size_t)in.tokens * in.hidden;
	for (size_t i = 0; i < n; i++) {
		double v = ((float *)in.x)[i];

		ck_assert(fabs(v) <= 3.4642);
		s += v;
		s2 += v * v;
	}
	/* Irwin-Hall(4) rescaled: mean 0, variance 1, 4th moment 2.7 */
	band(s / n, 0.0, 1.0 / sqrt((double)n), "mean");
	band(s2 / n, 1.0, sqrt(1.7 / n), "variance");
	drop(&g, &in);
}
END_TEST

static void check_topk(const eg_rank_input_t *in, uint32_t E)
{
	uint32_t K = in->topk;

	for (uint32_t t = 0; t < in->tokens; t++) {
		const int32_t *id = in->topk_idx + (size_t)t * K;

		for (uint32_t k = 0; k < K; k++) {
			ck_assert(id[k] >= -1 && id[k] < (int32_t)E);
			for (uint32_t j = 0; j < k; j++)
				ck_assert(id[k] < 0 || id[j] != id[k]);
		}
	}
}

START_TEST(topk_valid)
{
	for (int r = 0; r < 4; r++) {
		eg_workload_t w;
		eg_gen_t g;
		eg_rank_input_t in;

		setup(&w, 4, 16, 6, 128, 2000, EG_DTYPE_BF16, EG_DATA_EXACT);
		w.routing = (eg_routing_t)r;
		w.zipf_s = 1.5;
		w.hot_frac = 0.5;
		w.hot_target = 2;
		w.mask_ratio = 0.3;
		make(&g, &w, 3, &in);
		check_topk(&in, 16);
		drop(&g, &in);

		/* K = E: every token is a permutation */
		setup(&w, 2, 8, 8, 128, 500, EG_DTYPE_FP32, EG_DATA_EXACT);
		w.routing = (eg_routing_t)r;
		w.hot_frac = 0.5;
		w.hot_target = 1;
		make(&g, &w, 0, &in);
		for (uint32_t t = 0; t < in.tokens; t++) {
			uint32_t seen = 0;

			for (uint32_t k = 0; k < 8; k++)
				seen |= 1u << in.topk_idx[t * 8 + k];
			ck_assert_uint_eq(seen, 0xff);
		}
		drop(&g, &in);
	}
}
END_TEST

START_TEST(masking)
{
	static const double ratio[] = {0.0, 1.0, 0.5};

	for (int i = 0; i < 3; i++) {
		eg_workload_t w;
		eg_gen_t g;
		eg_rank_input_t in;
		size_t n, m = 0;

		setup(&w, 2, 16, 8, 128, 4096, EG_DTYPE_BF16, EG_DATA_EXACT);
		w.mask_ratio = ratio[i];
		make(&g, &w, 1, &in);
		n = kn(&in);
		for (size_t j = 0; j < n; j++) {
			m += in.topk_idx[j] == -1;
			ck_assert((in.topk_idx[j] == -1) ==
				  (in.topk_w[j] == 0.0f));
		}
		if (i == 0)
			ck_assert_uint_eq(m, 0);
		else if (i == 1)
			ck_assert_uint_eq(m, n);
		else
			band((double)m, n * 0.5, sqrt(n * 0.25), "masked");
		drop(&g, &in);
	}
}
END_TEST

/* dup: slot k > 0 repeats an earlier slot's expert with its probability;
 * every other slot, every weight and every mask draw is the dup-free
 * routing's (its own stream), so dup = 0 changes nothing. */
START_TEST(duplicates)
{
	static const double ratio[] = {0.0, 1.0, 0.5};
	eg_workload_t w;
	eg_gen_t g, g0;
	eg_rank_input_t in, in0;

	setup(&w, 2, 64, 6, 8, 4096, EG_DTYPE_BF16, EG_DATA_EXACT);
	make(&g0, &w, 1, &in0);
	for (int i = 0; i < 3; i++) {
		size_t n = 0, dups = 0;

		w.dup_ratio = ratio[i];
		make(&g, &w, 1, &in);
		for (uint32_t t = 0; t < in.tokens; t++)
			for (uint32_t k = 1; k < 6; k++, n++) {
				size_t j = (size_t)t * 6 + k;
				int rep = 0;

				for (uint32_t q = 0; q < k; q++)
					rep |= in.topk_idx[t * 6 + q] ==
					       in.topk_idx[j];
				ck_assert(rep ||
					  in.topk_idx[j] == in0.topk_idx[j]);
				ck_assert(in.topk_w[j] == in0.topk_w[j]);
				dups += rep;
			}
		if (i == 0)
			ck_assert_mem_eq(in.topk_idx, in0.topk_idx,
					 kn(&in) * sizeof(int32_t));
		else if (i == 1)
			ck_assert_uint_eq(dups, n);
		else
			band((double)dups, n * 0.5, sqrt(n * 0.25),
			     "duplicated slots");
		drop(&g, &in);
	}
	drop(&g0, &in0);
}
END_TEST

START_TEST(weights)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	size_t n, c[3] = {0, 0, 0}, nz = 0;
	double s = 0;

	setup(&w, 2, 16, 4, 128, 3000, EG_DTYPE_BF16, EG_DATA_EXACT);
	w.mask_ratio = 0.25;
	make(&g, &w, 0, &in);
	n = kn(&in);
	for (size_t j = 0; j < n; j++) {
		float x = in.topk_w[j];

		if (in.topk_idx[j] < 0) {
			ck_assert(x == 0.0f);
			continue;
		}
		ck_assert(x == 0.5f || x == 1.0f || x == 2.0f);
		c[x == 0.5f ? 0 : x == 1.0f ? 1 : 2]++;
		nz++;
	}
	for (int k = 0; k < 3; k++)
		band((double)c[k], nz / 3.0, sqrt(nz * 2.0 / 9.0), "weight");
	drop(&g, &in);

	w.data = EG_DATA_RANDOM;
	make(&g, &w, 0, &in);
	nz = 0;
	for (size_t j = 0; j < n; j++) {
		float x = in.topk_w[j];

		if (in.topk_idx[j] < 0) {
			ck_assert(x == 0.0f);
			continue;
		}
		ck_assert(x > 0.0f && x <= 1.0f);
		s += x;
		nz++;
	}
	band(s / nz, 0.5, sqrt(1.0 / 12.0 / nz), "random weight mean");
	drop(&g, &in);
}
END_TEST

START_TEST(hot_expert)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in, u;

	setup(&w, 4, 16, 4, 128, 1000, EG_DTYPE_BF16, EG_DATA_EXACT);
	w.routing = EG_ROUTING_HOT_EXPERT;
	w.hot_target = 11;
	w.hot_frac = 1.0;
	make(&g, &w, 2, &in);
	for (uint32_t t = 0; t < in.tokens; t++)
		ck_assert_int_eq(in.topk_idx[t * 4], 11);
	check_topk(&in, 16);
	drop(&g, &in);

	/* p = 0 is plain uniform routing, bit for bit */
	w.hot_frac = 0.0;
	make(&g, &w, 2, &in);
	w.routing = EG_ROUTING_UNIFORM;
	eg_gen_fini(&g);
	make(&g, &w, 2, &u);
	ck_assert_mem_eq(in.topk_idx, u.topk_idx, kn(&in) * 4);
	eg_rank_input_free(&in);
	drop(&g, &u);

	/* p = 0.3: slot 0 is hot for about 30% + 70% / 16 of tokens */
	w.routing = EG_ROUTING_HOT_EXPERT;
	w.hot_frac = 0.3;
	w.tokens = 20000;
	make(&g, &w, 2, &in);
	{
		size_t c = 0;
		double p = 0.3 + 0.7 / 16;

		for (uint32_t t = 0; t < in.tokens; t++)
			c += in.topk_idx[t * 4] == 11;
		band((double)c, in.tokens * p, sqrt(in.tokens * p * (1 - p)),
		     "hot slot 0");
	}
	drop(&g, &in);
}
END_TEST

START_TEST(hot_rank)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;

	/* K <= L: every slot on the hot rank (experts 8..11) */
	setup(&w, 4, 16, 3, 128, 1000, EG_DTYPE_BF16, EG_DATA_EXACT);
	w.routing = EG_ROUTING_HOT_RANK;
	w.hot_target = 2;
	w.hot_frac = 1.0;
	make(&g, &w, 0, &in);
	for (size_t j = 0; j < kn(&in); j++)
		ck_assert(in.topk_idx[j] >= 8 && in.topk_idx[j] < 12);
	drop(&g, &in);

	/* K > L: the first L slots fill the hot rank, the rest go off it */
	w.topk = 6;
	make(&g, &w, 0, &in);
	for (uint32_t t = 0; t < in.tokens; t++)
		for (uint32_t k = 0; k < 6; k++) {
			int32_t e = in.topk_idx[t * 6 + k];

			ck_assert((e >= 8 && e < 12) == (k < 4));
		}
	check_topk(&in, 16);
	drop(&g, &in);
}
END_TEST

START_TEST(zipf)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	size_t c[8] = {0};
	double tot = 0;

	/* K = 1: expert e is drawn with probability table[e] / sum */
	setup(&w, 2, 8, 1, 128, 20000, EG_DTYPE_BF16, EG_DATA_EXACT);
	w.routing = EG_ROUTING_ZIPF;
	w.zipf_s = 2.0;
	make(&g, &w, 1, &in);
	for (uint32_t t = 0; t < in.tokens; t++)
		c[in.topk_idx[t]]++;
	for (int e = 0; e < 8; e++)
		tot += g.table[e];
	for (int e = 0; e < 8; e++) {
		double p = g.table[e] / tot;

		band((double)c[e], in.tokens * p, sqrt(in.tokens * p * (1 - p)),
		     "zipf count");
		if (e)
			ck_assert(c[0] > c[e]);
	}
	drop(&g, &in);

	/* K = 3 as well: expert 0 is still the most frequent */
	memset(c, 0, sizeof(c));
	w.topk = 3;
	make(&g, &w, 1, &in);
	for (size_t j = 0; j < kn(&in); j++)
		c[in.topk_idx[j]]++;
	for (int e = 1; e < 8; e++)
		ck_assert(c[0] > c[e] && c[e - 1] >= c[e] / 2);
	drop(&g, &in);
}
END_TEST

START_TEST(uniform_counts)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	size_t c[16] = {0};
	double p = 4.0 / 16.0;

	setup(&w, 4, 16, 4, 128, 20000, EG_DTYPE_BF16, EG_DATA_EXACT);
	make(&g, &w, 3, &in);
	for (size_t j = 0; j < kn(&in); j++)
		c[in.topk_idx[j]]++;
	/* each token picks expert e at most once, with probability K/E */
	for (int e = 0; e < 16; e++)
		band((double)c[e], in.tokens * p, sqrt(in.tokens * p * (1 - p)),
		     "uniform count");
	drop(&g, &in);
}
END_TEST

static void fp8_for(eg_data_mode_t dm)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;

	setup(&w, 2, 8, 2, 512, 64, EG_DTYPE_FP8, dm);
	make(&g, &w, 1, &in);
	for (uint32_t t = 0; t < in.tokens; t++) {
		for (uint32_t b = 0; b < 4; b++) {
			float s = in.scales[t * 4 + b], amax = 0;
			int expo;

			for (uint32_t i = 0; i < 128; i++)
				amax =
				    fmaxf(amax, fabsf(eg_gen_value(
						    &g.p, 1, t, b * 128 + i)));
			if (dm == EG_DATA_RANDOM) {
				ck_assert(s == fmaxf(amax, 1e-4f) / 448.0f);
			} else { /* a power of two with amax/s in (224, 448] */
				ck_assert(frexpf(s, &expo) == 0.5f);
				ck_assert(amax / s <= 448.0f);
				ck_assert(amax / s > 224.0f || amax == 0.0f);
			}
			for (uint32_t i = 0; i < 128; i++) {
				size_t j = (size_t)t * 512 + b * 128 + i;
				uint8_t q = ((uint8_t *)in.x)[j];
				float v = eg_gen_value(&g.p, 1, t, b * 128 + i);
				float d = eg_e4m3_to_f32(q) * s;
				double tol =
				    fmax(ldexp(fabs(v), -4), ldexp(s, -10));

				ck_assert((q & 0x7f) != 0x7f);
				if (dm == EG_DATA_EXACT)
					ck_assert_msg(d == v, "%g != %g", d, v);
				else
					ck_assert(fabs((double)d - v) <= tol);
			}
		}
	}
	drop(&g, &in);
}

START_TEST(fp8)
{
	fp8_for(EG_DATA_EXACT);
	fp8_for(EG_DATA_RANDOM);
}
END_TEST

/* nonfinite=input:P: about P of the tokens carry one non-finite element
 * (NaN, +Inf, -Inf, each about a third), new tokens each iteration; every
 * other element is the bits of nonfinite=none. */
START_TEST(nonfinite_input)
{
	eg_workload_t w;
	eg_gen_t g, g0;
	eg_rank_input_t in, in0;
	uint32_t T = 4096, H = 64, kinds[3] = {0, 0, 0}, carry = 0, same = 0;
	uint8_t *chosen = calloc(T, 1);

	ck_assert_ptr_nonnull(chosen);
	setup(&w, 2, 8, 2, H, T, EG_DTYPE_BF16, EG_DATA_EXACT);
	make(&g0, &w, 1, &in0);
	w.nonfinite = EG_NONFINITE_INPUT;
	w.nonfinite_p = 0.25;
	make(&g, &w, 1, &in);
	for (int it = 0; it < 2; it++) {
		const uint16_t *x = in.x, *x0 = in0.x;

		for (uint32_t t = 0; t < T; t++) {
			uint32_t n = 0;

			for (uint32_t h = 0; h < H; h++) {
				uint16_t b = x[(size_t)t * H + h];

				if ((b & 0x7f80u) != 0x7f80u) {
					ck_assert_uint_eq(
					    b, x0[(size_t)t * H + h]);
					continue;
				}
				n++;
				kinds[(b & 0x7fu) ? 0 : (b >> 15) ? 2 : 1]++;
			}
			ck_assert_uint_le(n, 1);
			carry += n;
			if (it == 0)
				chosen[t] = (uint8_t)n;
			else
				same += n && chosen[t];
		}
		band(carry, 0.25 * T, sqrt(T * 0.25 * 0.75), "carriers");
		if (it == 1)
			break;
		/* the next iteration: other values, other carriers */
		drop(&g, &in);
		drop(&g0, &in0);
		w.iter = 1;
		make(&g, &w, 1, &in);
		w.nonfinite = EG_NONFINITE_NONE;
		make(&g0, &w, 1, &in0);
		carry = 0;
	}
	for (int k = 0; k < 3; k++)
		band(kinds[k], 2 * 0.25 * T / 3, sqrt(2 * 0.25 * T / 3),
		     "kind");
	band(same, 0.25 * 0.25 * T, sqrt(T * 0.0625), "carrying twice");
	free(chosen);
	drop(&g, &in);
	drop(&g0, &in0);
}
END_TEST

/* fp8: a NaN is the payload's NaN (scale finite); an Inf, which e4m3
 * lacks, makes its block's scale +Inf, in both data modes. */
START_TEST(nonfinite_fp8)
{
	for (int dm = EG_DATA_EXACT; dm <= EG_DATA_RANDOM; dm++) {
		eg_workload_t w;
		eg_gen_t g;
		eg_rank_input_t in;
		uint32_t nan = 0, inf = 0;

		setup(&w, 2, 8, 2, 256, 256, EG_DTYPE_FP8, (eg_data_mode_t)dm);
		w.nonfinite = EG_NONFINITE_INPUT;
		w.nonfinite_p = 0.5;
		make(&g, &w, 0, &in);
		for (uint32_t t = 0; t < in.tokens; t++)
			for (uint32_t b = 0; b < 2; b++) {
				float s = in.scales[t * 2 + b], v;
				uint32_t h0 = b * 128, nb = 0;

				for (uint32_t i = 0; i < 128; i++)
					nb += (((uint8_t *)
						    in.x)[t * 256 + h0 + i] &
					       0x7fu) == 0x7fu;
				for (uint32_t i = 0; i < 128; i++) {
					if (!eg_gen_nonfinite(&g.p, 0, t,
							      h0 + i, &v))
						continue;
					if (isnan(v)) {
						ck_assert(isfinite(s));
						ck_assert_uint_eq(nb, 1);
						nan++;
					} else {
						ck_assert(isinf(s) && s > 0);
						inf++;
					}
				}
				if (isfinite(s))
					ck_assert_uint_le(nb, 1);
			}
		ck_assert_uint_gt(nan, 10);
		ck_assert_uint_gt(inf, 10);
		drop(&g, &in);
	}
}
END_TEST

/* nonfinite=expert:E: E's bias (its output) is +Inf, the others are
 * those of nonfinite=none. */
START_TEST(nonfinite_expert)
{
	eg_workload_t w;
	eg_gen_t g, g0;

	setup(&w, 2, 8, 2, 64, 16, EG_DTYPE_BF16, EG_DATA_EXACT);
	ck_assert_int_eq(eg_gen_init(&g0, &w), 0);
	w.nonfinite = EG_NONFINITE_EXPERT;
	w.nonfinite_expert = 5;
	ck_assert_int_eq(eg_gen_init(&g, &w), 0);
	for (uint32_t e = 0; e < 8; e++)
		if (e == 5)
			ck_assert(isinf(eg_expert_bias(&g.p, e)) &&
				  eg_expert_bias(&g.p, e) > 0);
		else
			ck_assert(eg_expert_bias(&g.p, e) ==
				  eg_expert_bias(&g0.p, e));
	w.nonfinite_expert = 8;
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_EINVAL);
	eg_gen_fini(&g0);
}
END_TEST

/* Pinned outputs of one workload: any change of the recipe (counter
 * layout, stream ids, value or routing maps) changes these. */
START_TEST(golden)
{
	/* checked against an independent Python Philox4x32-10 (KAT-tested)
	 * following the recipe in gen_core.h by hand */
	static const uint32_t rnd_bits[8] = {
	    0x3f822f2c, 0xbdaaa174, 0xbf676d30, 0x3d722921,
	    0xbf7a3b58, 0x3f1a2ed0, 0xbfca051d, 0xbc8c9b0c,
	};
	static const int exact_vals[8] = {-30, -10, 5, 26, 25, -4, -26, -10};
	static const int32_t idx[8] = {1, 3, 15, 7, 2, 7, 10, -1};
	static const float wts[8] = {1, 0.5f, 2, 1, 0.5f, 2, 1, 0};
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;

	setup(&w, 4, 16, 4, 128, 2, EG_DTYPE_FP32, EG_DATA_RANDOM);
	w.seed = 2024;
	make(&g, &w, 1, &in);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(eg_f2u(((float *)in.x)[i]) == rnd_bits[i],
			      "x[%d] = 0x%08x", i, eg_f2u(((float *)in.x)[i]));
	drop(&g, &in);

	w.data = EG_DATA_EXACT;
	w.mask_ratio = 0.25;
	make(&g, &w, 1, &in);
	for (int i = 0; i < 8; i++) {
		ck_assert_msg(((float *)in.x)[i] == (float)exact_vals[i],
			      "x[%d] = %g", i, ((float *)in.x)[i]);
		ck_assert_msg(
		    in.topk_idx[i] == idx[i] && in.topk_w[i] == wts[i],
		    "slot %d = (%d, %g)", i, in.topk_idx[i], in.topk_w[i]);
	}
	drop(&g, &in);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gen");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, philox_kat);
	tcase_add_test(tc, params);
	tcase_add_test(tc, rank_input_shapes);
	tcase_add_test(tc, purity);
	tcase_add_test(tc, host_tokens_elementwise);
	tcase_add_test(tc, values_independent_of_world);
	tcase_add_test(tc, streams_differ);
	tcase_add_test(tc, exact_values);
	tcase_add_test(tc, random_moments);
	tcase_add_test(tc, topk_valid);
	tcase_add_test(tc, masking);
	tcase_add_test(tc, duplicates);
	tcase_add_test(tc, weights);
	tcase_add_test(tc, hot_expert);
	tcase_add_test(tc, hot_rank);
	tcase_add_test(tc, zipf);
	tcase_add_test(tc, uniform_counts);
	tcase_add_test(tc, fp8);
	tcase_add_test(tc, golden);
	tcase_add_test(tc, nonfinite_input);
	tcase_add_test(tc, nonfinite_fp8);
	tcase_add_test(tc, nonfinite_expert);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
