/* The per-element EP arithmetic the CUDA kernels use (lib/core/ep_core.h:
 * typed loads and stores, the expert function, routing tests) held on the
 * host, against the host's own expert stage and dtype conversions, in
 * bf16, fp32 and fp8, exact and random data. Every GPU test skips
 * without a GPU; this one runs in every CI, so a kernel-side change such
 * as dequantising fp8 after the expert sum is caught without one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/reference.h"
#include "lib/core/ep_core.h"

static const char *const loads[][2] = {
    {"dtype=bf16", "data=exact"}, {"dtype=bf16", "data=random"},
    {"dtype=fp32", "data=exact"}, {"dtype=fp32", "data=random"},
    {"dtype=fp8", "data=exact"},  {"dtype=fp8", "data=random"},
};

/* Every received row of every rank through eg_ep_expert_elem, against
 * eg_expert_stage, bit for bit. */
START_TEST(test_expert_elem)
{
	eg_workload_t w;
	eg_gen_t g;
	const char *kv[] = {"world=3",	  "experts=9",	"topk=4",
			    "tokens=20",  "hidden=256", "mask=0.2",
			    loads[_i][0], loads[_i][1], NULL};

	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	uint32_t dt = (uint32_t)w.dtype, ct = eg_ep_combine_dtype(dt);
	uint32_t L = eg_workload_local_experts(&w), H = w.hidden, K = w.topk;
	ck_assert_uint_eq(ct, (uint32_t)eg_combine_dtype(w.dtype));
	size_t rows = 0;
	for (uint32_t d = 0; d < w.world; d++) {
		eg_recv_t r;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		size_t n = (size_t)(r.num_rows ? r.num_rows : 1) * H;
		size_t esz = eg_dtype_size(eg_combine_dtype(w.dtype));
		void *want = malloc(n * esz), *got = malloc(n * esz);
		ck_assert(want && got);
		ck_assert_int_eq(eg_expert_stage(&g, &r, want), EG_OK);
		for (uint32_t i = 0; i < r.num_rows; i++)
			for (uint32_t h = 0; h < H; h++) {
				float sc =
				    r.scales ? r.scales[(size_t)i * (H / 128) +
							h / 128]
					     : 1.0f;
				float acc = eg_ep_expert_elem(
				    &g.p, d, L, dt,
				    eg_ep_load(dt, r.x, (size_t)i * H + h), sc,
				    r.topk_idx + (size_t)i * K,
				    r.topk_w + (size_t)i * K, K);
				eg_ep_store(ct, got, (size_t)i * H + h, acc);
				size_t j = (size_t)i * H + h;
				ck_assert_msg(
				    eg_ep_bits(ct, got, j) ==
					eg_ep_bits(ct, want, j),
				    "%s %s rank %u row %u col %u: "
				    "0x%llx, the expert stage 0x%llx",
				    loads[_i][0], loads[_i][1], d, i, h,
				    (unsigned long long)eg_ep_bits(ct, got, j),
				    (unsigned long long)eg_ep_bits(ct, want,
								   j));
			}
		rows += r.num_rows;
		free(want);
		free(got);
		eg_recv_free(&r);
	}
	ck_assert_uint_gt(rows, 0);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* Loads, stores, raw bits and the non-finite test agree with lib/core's
 * dtype functions on every bf16 and e4m3 pattern and on fp32 samples
 * (NaN, infinities, subnormals, rounding ties). */
START_TEST(test_elements)
{
	static const uint32_t f32[] = {0x00000000u, 0x80000000u, 0x3f800000u,
				       0x00000001u, 0x007fffffu, 0x7f7fffffu,
				       0x7f800000u, 0xff800000u, 0x7fc00000u,
				       0x3f808000u, 0x3f818000u, 0xc2f70000u};
	for (uint32_t dt = 0; dt < 3; dt++) {
		uint32_t n = dt == EG_GEN_BF16	? 65536
			     : dt == EG_GEN_FP8 ? 256
						: (uint32_t)(sizeof(f32) / 4);
		for (uint32_t b = 0; b < n; b++) {
			uint16_t h = (uint16_t)b;
			uint8_t q = (uint8_t)b;
			uint32_t s = dt == EG_GEN_FP32 ? f32[b] : 0;
			const void *p = dt == EG_GEN_BF16  ? (void *)&h
					: dt == EG_GEN_FP8 ? (void *)&q
							   : (void *)&s;
			float a = eg_ep_load(dt, p, 0);
			float c = eg_load_f32((eg_dtype_t)dt, p, 0);
			ck_assert(memcmp(&a, &c, 4) == 0 ||
				  (isnan(a) && isnan(c)));
			ck_assert_uint_eq(eg_ep_bits(dt, p, 0),
					  eg_load_bits((eg_dtype_t)dt, p, 0));
			ck_assert_int_eq(
			    eg_ep_nonfinite(dt, eg_ep_bits(dt, p, 0)),
			    !isfinite(c));
			/* and back: the same conversion on both sides */
			uint32_t o1 = 0, o2 = 0;
			float v = dt == EG_GEN_FP32 ? c : c * 1.375f;
			if (isnan(v))
				continue;
			eg_ep_store(dt, &o1, 0, v);
			eg_store_f32((eg_dtype_t)dt, &o2, 0, v);
			ck_assert_uint_eq(o1, o2);
		}
	}
}
END_TEST

/* The routing test the kernels use: a token is on rank d when one of
 * its (unmasked) experts is in d's range. */
START_TEST(test_on)
{
	const int32_t idx[] = {-1, 7, 3, -1};
	ck_assert_int_eq(eg_ep_on(idx, 4, 0, 4), 1); /* 3 in [0, 4) */
	ck_assert_int_eq(eg_ep_on(idx, 4, 4, 3), 0); /* [4, 7): neither */
	ck_assert_int_eq(eg_ep_on(idx, 4, 5, 3), 1); /* 7 in [5, 8) */
	ck_assert_int_eq(eg_ep_on(idx, 4, 8, 4), 0);
	ck_assert_int_eq(eg_ep_on(idx, 0, 0, 100), 0); /* no slots */
	ck_assert_int_eq(eg_ep_on(idx, 1, 0, 100), 0); /* masked only */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ep_core");
	TCase *tc = tcase_create("ep_core");
	tcase_add_loop_test(tc, test_expert_elem, 0,
			    (int)(sizeof(loads) / sizeof(loads[0])));
	tcase_add_test(tc, test_elements);
	tcase_add_test(tc, test_on);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
