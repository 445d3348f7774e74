/* The dense reference against the definition, checked property by
 * property and against a hand computation. */
#include <math.h>
#include <string.h>

#include "eg_test.h"

static const char *const kv_skew[] = {"world=4",
				      "experts=12",
				      "topk=4",
				      "tokens=list:7,0,13,3",
				      "hidden=16",
				      "mask=0.25",
				      "routing=hot-rank:2:0.5",
				      "seed=99",
				      NULL};

/* Every token with an expert on d appears once, in (src, token) order,
 * with its slots mapped to local ids and its weights kept only there. */
START_TEST(test_dispatch_properties)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_test_workload(&w, kv_skew);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	uint32_t L = 3, K = 4, H = 16;
	for (uint32_t d = 0; d < 4; d++) {
		eg_recv_t r;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		uint32_t row = 0, cnt[3] = {0, 0, 0};
		for (uint32_t s = 0; s < 4; s++) {
			eg_rank_input_t in;
			ck_assert_int_eq(eg_gen_rank_input(&g, &w, s, &in),
					 EG_OK);
			ck_assert_uint_eq(r.rank_prefix[s], row);
			for (uint32_t t = 0; t < in.tokens; t++) {
				const int32_t *ti = in.topk_idx + t * K;
				int mine = 0;
				for (uint32_t k = 0; k < K; k++)
					mine |= ti[k] >= 0 &&
						(uint32_t)ti[k] / L == d;
				if (!mine)
					continue;
				ck_assert_int_eq(r.src_rank[row], (int)s);
				ck_assert_int_eq(r.src_token[row], (int)t);
				ck_assert_mem_eq((uint16_t *)r.x + row * H,
						 (uint16_t *)in.x + t * H,
						 H * 2);
				for (uint32_t k = 0; k < K; k++) {
					int32_t li = r.topk_idx[row * K + k];
					float lw = r.topk_w[row * K + k];
					if (ti[k] >= 0 &&
					    (uint32_t)ti[k] / L == d) {
						ck_assert_int_eq(
						    li, ti[k] - (int)(d * L));
						ck_assert(lw ==
							  in.topk_w[t * K + k]);
						cnt[li]++;
					} else {
						ck_assert_int_eq(li, -1);
						ck_assert(lw == 0.0f);
					}
				}
				row++;
			}
			eg_rank_input_free(&in);
		}
		ck_assert_uint_eq(r.num_rows, row);
		ck_assert_uint_eq(r.rank_prefix[4], row);
		ck_assert_mem_eq(r.expert_count, cnt, sizeof(cnt));
		eg_recv_free(&r);
	}
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* With duplicate ids expert_count counts slots (docs/semantics.md): the
 * local ids of the rows, each slot once, which is more than the rows
 * using an expert wherever a row names it twice. */
START_TEST(test_expert_count_slots)
{
	static const char *const kv[] = {"world=2",   "experts=4", "topk=4",
					 "tokens=24", "hidden=16", "dup=0.5",
					 NULL};
	eg_workload_t w;
	eg_gen_t g;
	uint32_t more = 0;

	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	for (uint32_t d = 0; d < 2; d++) {
		uint32_t slots[2] = {0, 0}, rows[2] = {0, 0};
		eg_recv_t r;

		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		for (uint32_t i = 0; i < r.num_rows; i++)
			for (uint32_t e = 0; e < 2; e++) {
				uint32_t n = 0;
				for (uint32_t k = 0; k < 4; k++)
					n += r.topk_idx[i * 4 + k] == (int)e;
				slots[e] += n;
				rows[e] += n > 0;
			}
		for (uint32_t e = 0; e < 2; e++) {
			ck_assert_uint_eq(r.expert_count[e], slots[e]);
			more += slots[e] > rows[e];
		}
		eg_recv_free(&r);
	}
	ck_assert_uint_gt(more, 0); /* the workload has duplicates */
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* Exact mode: every combine output equals the fp64 sum exactly (nothing
 * rounds), and the magnitude bounds it. */
START_TEST(test_combine_exact_is_exact)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_test_workload(&w, kv_skew);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	for (uint32_t s = 0; s < 4; s++) {
		size_t n = (size_t)eg_workload_tokens(&w, s) * w.hidden;
		uint16_t *out = malloc(n * 2 + 2);
		double *r64 = malloc(n * 8 + 8), *m64 = malloc(n * 8 + 8);
		ck_assert_int_eq(eg_ref_combine(&w, &g, s, out, r64, m64),
				 EG_OK);
		for (size_t i = 0; i < n; i++) {
			ck_assert((double)eg_bf16_to_f32(out[i]) == r64[i]);
			ck_assert(fabs(r64[i]) <= m64[i]);
		}
		free(out);
		free(r64);
		free(m64);
	}
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* One token by hand: out = sum_k w_k (x + b_e) over its experts. */
START_TEST(test_combine_by_hand)
{
	eg_workload_t w;
	eg_gen_t g;
	const char *kv[] = {"world=2",	"experts=4",  "topk=3", "tokens=1",
			    "hidden=3", "dtype=fp32", NULL};
	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	eg_rank_input_t in;
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 1, &in), EG_OK);
	float out[3];
	ck_assert_int_eq(eg_ref_combine(&w, &g, 1, out, NULL, NULL), EG_OK);
	for (int h = 0; h < 3; h++) {
		float x = ((float *)in.x)[h], want = 0.0f;
		for (int k = 0; k < 3; k++)
			if (in.topk_idx[k] >= 0)
				want +=
				    in.topk_w[k] *
				    (x + eg_expert_bias(
					     &g.p, (uint32_t)in.topk_idx[k]));
		ck_assert(out[h] == want);
	}
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* A fully masked token combines to zero; a rank with no tokens gets no
 * rows from anyone and sends none. */
START_TEST(test_masked_and_empty)
{
	eg_workload_t w;
	eg_gen_t g;
	const char *kv[] = {
	    "world=3", "experts=6", "topk=2", "tokens=list:4,0,4",
	    "mask=1",  "hidden=4",  NULL};
	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	for (uint32_t d = 0; d < 3; d++) {
		eg_recv_t r;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		ck_assert_uint_eq(r.num_rows, 0);
		eg_recv_free(&r);
	}
	uint16_t out[16];
	ck_assert_int_eq(eg_ref_combine(&w, &g, 0, out, NULL, NULL), EG_OK);
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(out[i], 0);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reference");
	TCase *tc = tcase_create("reference");
	tcase_add_test(tc, test_dispatch_properties);
	tcase_add_test(tc, test_expert_count_slots);
	tcase_add_test(tc, test_combine_exact_is_exact);
	tcase_add_test(tc, test_combine_by_hand);
	tcase_add_test(tc, test_masked_and_empty);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
