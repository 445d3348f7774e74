/* The self engine against the reference, and its refusals. */
#include <string.h>

#include "eg_test.h"

static void run_self(const char *const *kv)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	uint32_t W = w.world, cap = eg_recv_max_rows(&w);
	eg_rank_input_t in[8];
	eg_recv_t out[8];
	void *y[8], *res[8];
	void *eng = NULL;
	eg_engine_ctx_t all = {.size = sizeof(all), .n_ranks = W};
	ck_assert_uint_le(W, 8);
	ck_assert_int_eq(eg_engine_self.create(&w, &all, &eng), EG_OK);
	for (uint32_t r = 0; r < W; r++) {
		ck_assert_int_eq(eg_gen_rank_input(&g, &w, r, &in[r]), EG_OK);
		ck_assert_int_eq(eg_recv_alloc(&out[r], &w, r, cap), EG_OK);
		y[r] = malloc((size_t)(cap + 1) * w.hidden * 4);
		res[r] = malloc(eg_combine_bytes(&w, r) + 1);
	}
	ck_assert_int_eq(eg_engine_self.dispatch(eng, in, out), EG_OK);
	for (uint32_t d = 0; d < W; d++) {
		eg_recv_t exp;
		eg_verdict_t v;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &exp), EG_OK);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_dispatch(&w, &exp, &out[d], &v),
				 EG_OK);
		eg_recv_free(&exp);
		ck_assert_int_eq(eg_expert_stage(&g, &out[d], y[d]), EG_OK);
	}
	ck_assert_int_eq(eg_engine_self.combine(eng, out,
						(const void *const *)y,
						(void *const *)res),
			 EG_OK);
	for (uint32_t s = 0; s < W; s++) {
		void *exp = malloc(eg_combine_bytes(&w, s) + 1);
		eg_verdict_t v;
		ck_assert_int_eq(eg_ref_combine(&w, &g, s, exp, NULL, NULL),
				 EG_OK);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_combine(&w, s, EG_COMPARE_BITS, exp,
						   NULL, NULL, res[s], &v),
				 EG_OK);
		free(exp);
	}
	for (uint32_t r = 0; r < W; r++) {
		eg_rank_input_free(&in[r]);
		eg_recv_free(&out[r]);
		free(y[r]);
		free(res[r]);
	}
	eg_engine_self.destroy(eng);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}

START_TEST(test_uniform_bf16)
{
	const char *kv[] = {"world=4",	 "experts=16", "topk=4",
			    "tokens=20", "hidden=32",  NULL};
	run_self(kv);
}
END_TEST

START_TEST(test_fp8_random_skewed)
{
	const char *kv[] = {
	    "world=3",	  "experts=9", "topk=3",      "tokens=uneven:6",
	    "hidden=256", "dtype=fp8", "data=random", "routing=zipf:2",
	    "mask=0.3",	  NULL};
	run_self(kv);
}
END_TEST

START_TEST(test_refusals)
{
	eg_workload_t w;
	const char *kv[] = {"world=4", "experts=8", NULL};
	void *eng = NULL;
	eg_engine_ctx_t part = {
	    .size = sizeof(part), .first_rank = 1, .n_ranks = 3};
	eg_test_workload(&w, kv);
	/* one process must own the whole world */
	ck_assert_int_eq(eg_engine_self.create(&w, &part, &eng), EG_ENOSYS);
	ck_assert_ptr_eq(eg_engine_find("self"), &eg_engine_self);
	ck_assert_ptr_null(eg_engine_find("selff"));
	ck_assert_uint_ge(eg_engine_self.size, sizeof(eg_engine_ops_t));
	eg_workload_fini(&w);
}
END_TEST

/* A receive buffer too small for what arrives is an error, not an
 * overflow. */
START_TEST(test_capacity)
{
	eg_workload_t w;
	eg_gen_t g;
	const char *kv[] = {"world=2",	"experts=2", "topk=2",
			    "tokens=8", "hidden=4",  NULL};
	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	eg_rank_input_t in[2];
	eg_recv_t out[2];
	void *eng;
	eg_engine_ctx_t two = {.size = sizeof(two), .n_ranks = 2};
	ck_assert_int_eq(eg_engine_self.create(&w, &two, &eng), EG_OK);
	for (int r = 0; r < 2; r++) {
		ck_assert_int_eq(eg_gen_rank_input(&g, &w, r, &in[r]), EG_OK);
		ck_assert_int_eq(eg_recv_alloc(&out[r], &w, r, 3), EG_OK);
	}
	/* K=2 of E=2: every token goes to both ranks, 16 rows each */
	ck_assert_int_eq(eg_engine_self.dispatch(eng, in, out), EG_ERANGE);
	for (int r = 0; r < 2; r++) {
		eg_rank_input_free(&in[r]);
		eg_recv_free(&out[r]);
	}
	eg_engine_self.destroy(eng);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

START_TEST(test_fault_engines_registered)
{
	const char *const *names = eg_engine_names();
	int n = 0;
	for (; names[n]; n++)
		ck_assert_ptr_nonnull(eg_engine_find(names[n]));
	ck_assert_int_ge(n, 11);
	ck_assert_ptr_nonnull(eg_engine_find("fault:stale"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("engine_self");
	TCase *tc = tcase_create("self");
	tcase_add_test(tc, test_uniform_bf16);
	tcase_add_test(tc, test_fp8_random_skewed);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_fault_engines_registered);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
