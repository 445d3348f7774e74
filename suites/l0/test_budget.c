/* Budgets (lib/core/workload_budget.c) and the verified step's up-front
 * refusal and deadline (lib/step/step.c): a workload whose memory grows
 * as W^2 in one process, one whose verification would take hours, the
 * variables that raise the budgets, and an iteration past its deadline. */
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/step.h"

static void mk(eg_workload_t *w, const char *const *kv)
{
	eg_test_workload(w, kv);
}

START_TEST(test_cost)
{
	eg_workload_t w;
	eg_workload_cost_t one, all;
	const char *kv[] = {"world=2048", "experts=2048", "topk=1", "tokens=0",
			    NULL};
	mk(&w, kv);
	/* in one process: a message per pair of ranks, ~1.7 GB */
	eg_workload_cost(&w, 0, 2048, &all);
	ck_assert_uint_gt(all.bytes, (uint64_t)1 << 30);
	/* one rank per process: a few kB */
	eg_workload_cost(&w, 5, 1, &one);
	ck_assert_uint_lt(one.bytes, (uint64_t)1 << 20);
	eg_workload_fini(&w);

	const char *big[] = {"world=2",	       "experts=65536", "topk=65536",
			     "hidden=1048576", "data=random",	NULL};
	mk(&w, big);
	eg_workload_cost(&w, 0, 2, &all);
	ck_assert_uint_gt(all.ops, (uint64_t)1 << 40);
	/* one iteration's work: steps and iterations are the job's length,
	 * not a step's */
	eg_workload_cost_t more;
	w.steps = 3;
	eg_workload_cost(&w, 0, 2, &more);
	ck_assert_uint_eq(more.ops, all.ops);
	eg_workload_fini(&w);
}
END_TEST

START_TEST(test_budget)
{
	eg_workload_t w;
	char err[512];
	const char *kv[] = {"name=wide", "world=2048", "experts=2048",
			    "topk=1",	 "tokens=0",   NULL};
	mk(&w, kv);
	unsetenv("EPGATE_MEM_BUDGET");
	unsetenv("EPGATE_WORK_BUDGET");
	ck_assert_int_eq(eg_workload_budget(&w, 0, 2048, err, sizeof(err)),
			 EG_ERANGE);
	ck_assert_msg(strstr(err, "wide: needs about ") &&
			  strstr(err, "over the memory budget of 1.07 GB") &&
			  strstr(err, "EPGATE_MEM_BUDGET"),
		      "%s", err);
	ck_assert_int_eq(eg_workload_budget(&w, 7, 1, err, sizeof(err)), EG_OK);
	setenv("EPGATE_MEM_BUDGET", "8000000000", 1);
	ck_assert_int_eq(eg_workload_budget(&w, 0, 2048, err, sizeof(err)),
			 EG_OK);
	setenv("EPGATE_MEM_BUDGET", "lots", 1);
	ck_assert_int_eq(eg_workload_budget(&w, 0, 2048, err, sizeof(err)),
			 EG_EINVAL);
	ck_assert_str_eq(err, "EPGATE_MEM_BUDGET=\"lots\": not a positive "
			      "integer");
	unsetenv("EPGATE_MEM_BUDGET");
	eg_workload_fini(&w);

	const char *big[] = {"name=huge",  "world=2",	     "experts=65536",
			     "topk=65536", "hidden=1048576", "data=random",
			     NULL};
	mk(&w, big);
	ck_assert_int_eq(eg_workload_budget(&w, 0, 2, err, sizeof(err)),
			 EG_ERANGE);
	ck_assert_msg(strstr(err, "huge: about ") &&
			  strstr(err, "over the work budget") &&
			  strstr(err, "EPGATE_WORK_BUDGET"),
		      "%s", err);
	eg_workload_fini(&w);
}
END_TEST

/* The step refuses the workload before allocating anything. */
START_TEST(test_step_refuses)
{
	eg_workload_t w;
	eg_rank_verdict_t v;
	eg_step_t *st = (eg_step_t *)&v;
	const char *big[] = {"name=huge",  "world=2",	     "experts=65536",
			     "topk=65536", "hidden=1048576", "data=random",
			     NULL};
	mk(&w, big);
	eg_step_opts_t so = {
	    .size = sizeof(so),
	    .w = &w,
	    .engine = &eg_engine_self,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = 2},
	    .space = &eg_space_host,
	    .budget = 1};
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &so, &v), EG_ERANGE);
	ck_assert_ptr_null(st);
	ck_assert_str_eq(v.stage, "budget");
	ck_assert_int_eq(v.harness_err, EG_ERANGE);
	eg_workload_fini(&w);
}
END_TEST

/* An iteration that ends past the deadline fails there, in stage
 * "deadline" (a deadline of a nanosecond: every iteration is late). */
START_TEST(test_step_deadline)
{
	eg_workload_t w;
	eg_rank_verdict_t v;
	eg_step_t *st;
	const char *kv[] = {"world=2",	"experts=4", "topk=2",
			    "tokens=4", "steps=3",   NULL};
	mk(&w, kv);
	eg_step_opts_t so = {
	    .size = sizeof(so),
	    .w = &w,
	    .engine = &eg_engine_self,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = 2},
	    .space = &eg_space_host,
	    .budget = 1,
	    .deadline_s = 1e-9};
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &so, &v), EG_OK);
	ck_assert_int_eq(eg_step_verify_iters(st, 2, &v), EG_ETIMEDOUT);
	ck_assert_str_eq(v.stage, "deadline");
	ck_assert_uint_eq(v.iter, 0);
	eg_step_close(st);
	/* without one: every step and iteration passes */
	so.deadline_s = 0;
	eg_rank_verdict_init(&v);
	ck_assert_int_eq(eg_step_open(&st, &so, &v), EG_OK);
	ck_assert_int_eq(eg_step_verify_iters(st, 2, &v), EG_OK);
	eg_step_close(st);
	eg_workload_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("budget");
	TCase *tc = tcase_create("budget");
	tcase_add_test(tc, test_cost);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_step_refuses);
	tcase_add_test(tc, test_step_deadline);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
