/* Planted slowdowns (lib/engines/slow.c): the names, a wrapped engine
 * that is the engine in everything but time (its results verified
 * against the reference like the self engine's), and a delay that is
 * there: a fixed one makes a dispatch last at least that long (a lower
 * bound the wrapper guarantees by construction, not a timing that load
 * could break). */
#include <string.h>

#include "eg_test.h"
#include "epgate/clock.h"

START_TEST(names)
{
	double f, t;
	const char *in;
	const eg_engine_ops_t *a, *b;

	ck_assert_int_eq(eg_slow_parse("slow:10%:a2a", &f, &t, &in), EG_OK);
	ck_assert_double_eq_tol(f, 0.1, 1e-12);
	ck_assert_double_eq(t, 0);
	ck_assert_str_eq(in, "a2a");
	ck_assert_int_eq(
	    eg_slow_parse("slow:50us:plugin:/x.so,k=v", &f, &t, &in), EG_OK);
	ck_assert_double_eq_tol(t, 50e-6, 1e-15);
	ck_assert_str_eq(in, "plugin:/x.so,k=v");
	ck_assert_int_eq(eg_slow_parse("slow:10%", &f, &t, &in), EG_EINVAL);
	ck_assert_int_eq(eg_slow_parse("slow:10ms:a2a", &f, &t, &in),
			 EG_EINVAL);
	ck_assert_int_eq(eg_slow_parse("slow:-1%:a2a", &f, &t, &in), EG_EINVAL);
	ck_assert_int_eq(eg_slow_parse("slow::a2a", &f, &t, &in), EG_EINVAL);
	/* found by the registry, once per name, as the engine it wraps */
	a = eg_engine_find("slow:10%:self");
	b = eg_engine_find("slow:10%:self");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(a, b);
	ck_assert_str_eq(a->name, "slow:10%:self");
	ck_assert_uint_eq(a->flags, eg_engine_self.flags);
	ck_assert_int_eq(eg_engine_rows(a), eg_engine_rows(&eg_engine_self));
	ck_assert_ptr_nonnull(eg_engine_find("slow:1%:slow:2%:a2a"));
	ck_assert_uint_eq(eg_engine_find("slow:5%:a2a")->flags,
			  eg_engine_a2a.flags);
	ck_assert_ptr_null(eg_engine_find("slow:10%:nosuch"));
	ck_assert_ptr_null(eg_engine_find("slow:10%"));
}
END_TEST

/* One dispatch and combine of W ranks through ops, verified; returns
 * the dispatch's wall time. */
static double run(const eg_engine_ops_t *ops)
{
	const char *kv[] = {"world=4",	 "experts=16",	"topk=4", "tokens=20",
			    "hidden=32", "data=random", NULL};
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in[4];
	eg_recv_t out[4];
	void *y[4], *res[4], *eng = NULL;
	eg_engine_ctx_t all = {.size = sizeof(all), .n_ranks = 4};
	uint32_t cap;
	double t0, t;

	eg_test_workload(&w, kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	cap = eg_recv_max_rows(&w);
	ck_assert_int_eq(ops->create(&w, &all, &eng), EG_OK);
	for (uint32_t r = 0; r < 4; r++) {
		ck_assert_int_eq(eg_gen_rank_input(&g, &w, r, &in[r]), EG_OK);
		ck_assert_int_eq(eg_recv_alloc(&out[r], &w, r, cap), EG_OK);
		y[r] = malloc((size_t)(cap + 1) * w.hidden * 4);
		res[r] = malloc(eg_combine_bytes(&w, r) + 1);
	}
	t0 = eg_now();
	ck_assert_int_eq(ops->dispatch(eng, in, out), EG_OK);
	t = eg_now() - t0;
	for (uint32_t d = 0; d < 4; d++) {
		eg_recv_t exp;
		eg_verdict_t v;

		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &exp), EG_OK);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_dispatch(&w, &exp, &out[d], &v),
				 EG_OK);
		ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
		eg_recv_free(&exp);
		ck_assert_int_eq(eg_expert_stage(&g, &out[d], y[d]), EG_OK);
	}
	ck_assert_int_eq(
	    ops->combine(eng, out, (const void *const *)y, (void *const *)res),
	    EG_OK);
	for (uint32_t s = 0; s < 4; s++) {
		void *exp = malloc(eg_combine_bytes(&w, s) + 1);
		eg_verdict_t v;

		ck_assert_int_eq(eg_ref_combine(&w, &g, s, exp, NULL, NULL),
				 EG_OK);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_combine(&w, s, EG_COMPARE_BITS, exp,
						   NULL, NULL, res[s], &v),
				 EG_OK);
		ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
		free(exp);
	}
	for (uint32_t r = 0; r < 4; r++) {
		eg_rank_input_free(&in[r]);
		eg_recv_free(&out[r]);
		free(y[r]);
		free(res[r]);
	}
	ops->destroy(eng);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
	return t;
}

START_TEST(same_results_later)
{
	/* the wrapped engine's results, bit for bit */
	run(eg_engine_find("slow:50%:self"));
	/* a planted fixed delay is at least what it says */
	ck_assert(run(eg_engine_find("slow:3000us:self")) >= 3000e-6);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("engine_slow");
	TCase *t = tcase_create("core");

	tcase_add_test(t, names);
	tcase_add_test(t, same_results_later);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
