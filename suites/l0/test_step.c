/* The verified step (include/epgate/step.h) and its comparison policy,
 * each rule shown to catch a planted fault: a wrong dispatch row (combine
 * then not run in process, still run over a transport), a combine one ulp
 * off under exact data, an engine that sums in another order (passes
 * within the bound without the canonical flag, caught bit for bit with
 * it), a gross combine error caught by the bound, a stale row caught
 * because buffers are reused, engine errors, and lockstep iterations. */
#include <math.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/step.h"

/* ---- a wrapper engine around another, with counters and defects ---- */

static struct {
	const eg_engine_ops_t *inner;
	const eg_workload_t *w;
	unsigned dispatches, combines;
	unsigned fail_dispatch_at; /* this dispatch call fails (1-based) */
	int reorder;  /* combine: destinations descending, rounded */
	float offset; /* added to the first combine output */
} T;

static void t_reset(const eg_engine_ops_t *inner)
{
	memset(&T, 0, sizeof(T));
	T.inner = inner;
}

static int t_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
		    void **state)
{
	T.w = w;
	return T.inner->create(w, ctx, state);
}

static int t_dispatch(void *state, const eg_rank_input_t *in, eg_recv_t *out)
{
	if (++T.dispatches == T.fail_dispatch_at)
		return EG_EPEER;
	return T.inner->dispatch(state, in, out);
}

/* out[s] = sum over d = W-1 .. 0 of y_d rows, the partial sum rounded
 * to the combine dtype after each addition. */
static void t_reorder(const eg_recv_t *recv, const void *const *y,
		      void *const *out)
{
	const eg_workload_t *w = T.w;
	eg_dtype_t ct = eg_combine_dtype(w->dtype);
	uint32_t W = w->world, H = w->hidden;

	for (uint32_t s = 0; s < W; s++) {
		size_t n = (size_t)eg_workload_tokens(w, s) * H;
		float *acc = calloc(n + 1, sizeof(float));

		ck_assert_ptr_nonnull(acc);
		for (uint32_t i = 0; i < W; i++) {
			const eg_recv_t *r = &recv[W - 1 - i];

			for (uint32_t j = r->rank_prefix[s];
			     j < r->rank_prefix[s + 1]; j++)
				for (uint32_t h = 0; h < H; h++) {
					size_t o = (size_t)r->src_token[j] * H;
					uint8_t b[4];

					eg_store_f32(
					    ct, b, 0,
					    acc[o + h] +
						eg_load_f32(ct, y[W - 1 - i],
							    (size_t)j * H + h));
					acc[o + h] = eg_load_f32(ct, b, 0);
				}
		}
		for (size_t k = 0; k < n; k++)
			eg_store_f32(ct, out[s], k, acc[k]);
		free(acc);
	}
}

static int t_combine(void *state, const eg_recv_t *recv, const void *const *y,
		     void *const *out)
{
	int rc = T.inner->combine(state, recv, y, out);

	T.combines++;
	if (rc < 0)
		return rc;
	if (T.reorder)
		t_reorder(recv, y, out);
	if (T.offset != 0.0f) {
		eg_dtype_t ct = eg_combine_dtype(T.w->dtype);
		for (uint32_t s = 0; s < T.w->world; s++)
			if (eg_workload_tokens(T.w, s)) {
				eg_store_f32(ct, out[s], 0,
					     eg_load_f32(ct, out[s], 0) +
						 T.offset);
				break;
			}
	}
	return EG_OK;
}

static void t_destroy(void *state)
{
	T.inner->destroy(state);
}

#define T_OPS(id, fl)                                                          \
	static const eg_engine_ops_t id = {                                    \
	    .size = sizeof(eg_engine_ops_t),                                   \
	    .name = #id,                                                       \
	    .create = t_create,                                                \
	    .dispatch = t_dispatch,                                            \
	    .combine = t_combine,                                              \
	    .destroy = t_destroy,                                              \
	    .flags = (fl),                                                     \
	}
T_OPS(t_canonical, EG_ENGINE_CANONICAL_ORDER);
T_OPS(t_any_order, 0);
/* in process underneath, but run as a multi-process engine would be */
T_OPS(t_lockstep, EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS);

/* ---- running a step ---- */

static const char *const exact_kv[] = {"world=4",   "experts=16", "topk=4",
				       "tokens=24", "hidden=32",  NULL};
static const char *const random_kv[] = {
    "world=4",	 "experts=16",	"topk=4", "tokens=32",
    "hidden=64", "data=random", NULL};

/* iters verified iterations of ops over all ranks in host memory; the
 * return of eg_step_verify_iters (or of the open). */
static int t_run(const eg_engine_ops_t *ops, const char *const *kv,
		 unsigned iters, eg_rank_verdict_t *v)
{
	eg_workload_t w;
	eg_step_t *st = NULL;
	int rc;

	eg_test_workload(&w, kv);
	eg_step_opts_t o = {
	    .size = sizeof(o),
	    .w = &w,
	    .engine = ops,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = w.world},
	    .space = &eg_space_host};
	eg_rank_verdict_init(v);
	rc = eg_step_open(&st, &o, v);
	if (rc == EG_OK) {
		rc = eg_step_verify_iters(st, iters, v);
		eg_step_close(st);
	}
	eg_workload_fini(&w);
	return rc;
}

START_TEST(test_policy)
{
	eg_workload_t w;

	eg_test_workload(&w, exact_kv);
	ck_assert_uint_eq(eg_combine_checks(&w, EG_ENGINE_CANONICAL_ORDER),
			  EG_CHECK_BITS);
	ck_assert_uint_eq(eg_combine_checks(&w, 0), EG_CHECK_BITS);
	eg_workload_fini(&w);
	eg_test_workload(&w, random_kv);
	ck_assert_uint_eq(eg_combine_checks(&w, EG_ENGINE_CANONICAL_ORDER),
			  EG_CHECK_BITS | EG_CHECK_BOUND);
	ck_assert_uint_eq(eg_combine_checks(&w, EG_ENGINE_MULTI_PROCESS),
			  EG_CHECK_BOUND);
	/* a fixed order of its own: the bound, and the same bytes again */
	ck_assert_uint_eq(eg_combine_checks(&w, EG_ENGINE_FIXED_ORDER),
			  EG_CHECK_BOUND | EG_CHECK_REPEAT);
	eg_workload_fini(&w);
}
END_TEST

START_TEST(test_clean)
{
	static const char *const fp8[] = {
	    "world=3",	       "experts=6",    "topk=2",
	    "tokens=uneven:9", "hidden=256",   "dtype=fp8",
	    "data=random",     "zero_ranks=1", NULL};
	eg_rank_verdict_t v;

	t_reset(&eg_engine_self);
	ck_assert_int_eq(t_run(&t_canonical, exact_kv, 3, &v), EG_OK);
	ck_assert(!eg_rank_verdict_failed(&v));
	ck_assert_uint_eq(v.iter, 2);
	ck_assert_uint_gt(v.v.checked[EG_FIELD_SRC], 0);
	ck_assert_uint_gt(v.v.checked[EG_FIELD_COMBINE], 0);
	ck_assert_uint_eq(T.dispatches, 3);
	ck_assert_uint_eq(T.combines, 3);
	t_reset(&eg_engine_self);
	ck_assert_int_eq(t_run(&t_canonical, fp8, 2, &v), EG_OK);
	ck_assert(!eg_rank_verdict_failed(&v));
}
END_TEST

/* A wrong dispatch row: in process, combine is not run. */
START_TEST(test_wrong_row)
{
	eg_rank_verdict_t v;

	t_reset(eg_engine_find("fault:src-id"));
	ck_assert_int_eq(t_run(&t_canonical, exact_kv, 3, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "dispatch");
	ck_assert_uint_eq(v.iter, 0);
	ck_assert_uint_gt(v.v.wrong[EG_FIELD_SRC], 0);
	ck_assert_uint_eq(T.dispatches, 1);
	ck_assert_uint_eq(T.combines, 0);
}
END_TEST

/* Over a transport the same rank keeps its peers company: combine runs
 * after the wrong dispatch, every later iteration runs (unchecked), and
 * the verdict stays the first mismatch's. */
START_TEST(test_lockstep)
{
	eg_rank_verdict_t v;

	t_reset(eg_engine_find("fault:src-id"));
	ck_assert_int_eq(t_run(&t_lockstep, exact_kv, 3, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "dispatch");
	ck_assert_uint_eq(v.iter, 0);
	ck_assert_uint_eq(T.dispatches, 3);
	ck_assert_uint_eq(T.combines, 3);
	ck_assert_uint_eq(v.v.checked[EG_FIELD_COMBINE], 0);
}
END_TEST

/* One ulp off under exact data: bit for bit, whatever the flags. */
START_TEST(test_combine_ulp_exact)
{
	eg_rank_verdict_t v;

	t_reset(eg_engine_find("fault:combine-ulp"));
	ck_assert_int_eq(t_run(&t_any_order, exact_kv, 2, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "combine");
	ck_assert_uint_eq(v.iter, 0);
	ck_assert_uint_ge(v.v.wrong[EG_FIELD_COMBINE], 1);
	ck_assert_uint_eq(T.combines, 1);
}
END_TEST

/* Another summation order on random data: within the bound, so an engine
 * that does not promise the canonical order passes... */
START_TEST(test_order_unflagged)
{
	eg_rank_verdict_t v;

	t_reset(&eg_engine_self);
	T.reorder = 1;
	ck_assert_int_eq(t_run(&t_any_order, random_kv, 2, &v), EG_OK);
	ck_assert(!eg_rank_verdict_failed(&v));
	ck_assert_uint_gt(v.v.checked[EG_FIELD_COMBINE], 0);
	ck_assert(v.v.max_err_ratio > 0.0 && v.v.max_err_ratio <= 1.0);
}
END_TEST

/* ...and one that promises it is caught bit for bit (the bound alone
 * would have let it through). */
START_TEST(test_order_flagged)
{
	eg_rank_verdict_t v;

	t_reset(&eg_engine_self);
	T.reorder = 1;
	ck_assert_int_eq(t_run(&t_canonical, random_kv, 2, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "combine");
	ck_assert_uint_gt(v.v.wrong[EG_FIELD_COMBINE], 0);
	ck_assert_uint_gt(v.v.n_first, 0);
	ck_assert(v.v.max_err_ratio <= 1.0);
	/* exact data: every order gives the same bits */
	t_reset(&eg_engine_self);
	T.reorder = 1;
	ck_assert_int_eq(t_run(&t_canonical, exact_kv, 2, &v), EG_OK);
}
END_TEST

/* The fp64 bound holds for any engine on random data: a gross error is
 * caught without the canonical flag (the fabric backend once skipped
 * it). */
START_TEST(test_bound)
{
	eg_rank_verdict_t v;

	t_reset(&eg_engine_self);
	T.offset = 0.5f;
	ck_assert_int_eq(t_run(&t_any_order, random_kv, 2, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "combine");
	ck_assert_uint_ge(v.v.wrong[EG_FIELD_COMBINE], 1);
	ck_assert(v.v.max_err_ratio > 1.0);
}
END_TEST

/* Buffers are reused across iterations: a row left from the previous one
 * is caught in the second. */
START_TEST(test_stale)
{
	eg_rank_verdict_t v;

	t_reset(eg_engine_find("fault:stale"));
	ck_assert_int_eq(t_run(&t_canonical, exact_kv, 1, &v), EG_OK);
	t_reset(eg_engine_find("fault:stale"));
	ck_assert_int_eq(t_run(&t_canonical, exact_kv, 2, &v), EG_EMISMATCH);
	ck_assert_str_eq(v.stage, "dispatch");
	ck_assert_uint_eq(v.iter, 1);
	ck_assert_uint_gt(v.v.wrong[EG_FIELD_X], 0);
}
END_TEST

/* Engine errors stop the iterations, in process and over a transport,
 * and name the stage and iteration; so does a refused create. */
START_TEST(test_engine_errors)
{
	eg_rank_verdict_t v;
	eg_workload_t w;
	eg_step_t *st = (eg_step_t *)&v;

	t_reset(&eg_engine_self);
	T.fail_dispatch_at = 2;
	ck_assert_int_eq(t_run(&t_lockstep, exact_kv, 4, &v), EG_EPEER);
	ck_assert_int_eq(v.engine_err, EG_EPEER);
	ck_assert_str_eq(v.stage, "dispatch");
	ck_assert_uint_eq(v.iter, 1);
	ck_assert_uint_eq(T.dispatches, 2);
	ck_assert_uint_eq(T.combines, 1);
	/* self holds every rank: one of four is refused */
	eg_test_workload(&w, exact_kv);
	eg_step_opts_t o = {.size = sizeof(o),
			    .w = &w,
			    .engine = &eg_engine_self,
			    .ctx = {.size = sizeof(eg_engine_ctx_t),
				    .first_rank = 1,
				    .n_ranks = 1},
			    .space = &eg_space_host};
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &o, &v), EG_ENOSYS);
	ck_assert_ptr_null(st);
	ck_assert_int_eq(v.engine_err, EG_ENOSYS);
	ck_assert_str_eq(v.stage, "create");
	/* ranks beyond the world are the harness's mistake */
	o.ctx.first_rank = 3;
	o.ctx.n_ranks = 2;
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &o, &v), EG_EINVAL);
	ck_assert_int_eq(v.harness_err, EG_EINVAL);
	eg_workload_fini(&w);
}
END_TEST

/* The unverified timed step, and the host space's plumbing. */
START_TEST(test_run_and_space)
{
	eg_workload_t w;
	eg_step_t *st = NULL;
	eg_rank_verdict_t v;
	eg_bench_times_t t = {
	    .dispatch_s = -1, .expert_s = -1, .combine_s = -1};
	void *s = NULL, *p = NULL;
	double d[EG_SPACE_MARKS - 1];

	eg_test_workload(&w, exact_kv);
	eg_step_opts_t o = {
	    .size = sizeof(o),
	    .w = &w,
	    .engine = &eg_engine_self,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = w.world},
	    .space = eg_space_find("host")};
	ck_assert_ptr_nonnull(o.space);
	ck_assert_ptr_null(eg_space_find("disk"));
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &o, &v), EG_OK);
	ck_assert_int_eq(eg_step_generate(st, 0), EG_OK);
	ck_assert_int_eq(eg_step_run(st, &t), EG_OK);
	ck_assert(t.dispatch_s >= 0 && t.expert_s >= 0 && t.combine_s >= 0);
	/* after timed steps, a verified one on the same buffers passes */
	ck_assert_int_eq(eg_step_verify(st, 0, &v), EG_OK);
	eg_step_close(st);
	eg_workload_fini(&w);

	ck_assert_int_eq(eg_space_host.open(&s, NULL), EG_OK);
	ck_assert_int_eq(eg_space_host.alloc(s, &p, 0), EG_OK);
	ck_assert_ptr_nonnull(p);
	eg_space_host.free(s, p);
	ck_assert_int_eq(eg_space_host.mark(s, EG_SPACE_MARKS), EG_EINVAL);
	for (unsigned i = 0; i < EG_SPACE_MARKS; i++)
		ck_assert_int_eq(eg_space_host.mark(s, i), EG_OK);
	ck_assert_int_eq(eg_space_host.elapsed(s, EG_SPACE_MARKS, d), EG_OK);
	for (unsigned i = 0; i + 1 < EG_SPACE_MARKS; i++)
		ck_assert(d[i] >= 0.0);
	eg_space_host.close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("step");
	TCase *tc = tcase_create("step");

	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_wrong_row);
	tcase_add_test(tc, test_lockstep);
	tcase_add_test(tc, test_combine_ulp_exact);
	tcase_add_test(tc, test_order_unflagged);
	tcase_add_test(tc, test_order_flagged);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_stale);
	tcase_add_test(tc, test_engine_errors);
	tcase_add_test(tc, test_run_and_space);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
