/* Every layout function held to the reference with ranks that have no
 * tokens: the first, a middle one, the last, and all of them. A layout
 * that counted an empty rank as one token (as byte accounting would see
 * it) passed every other test. */
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/reference.h"

#define W 5

static const char *const lists[] = {
    "tokens=list:0,7,9,3,5", /* the first */
    "tokens=list:6,8,0,3,5", /* a middle one */
    "tokens=list:6,8,9,3,0", /* the last */
    "tokens=list:0,0,0,0,0", /* all */
    "tokens=list:0,4,0,0,2", /* most */
};

static void mkload(eg_workload_t *w, int i)
{
	const char *kv[] = {"world=5",	"experts=15", "topk=3", lists[i],
			    "mask=0.2", "hidden=8",   "seed=5", NULL};
	eg_test_workload(w, kv);
}

/* eg_layout_build: tokens, per-destination and per-expert counts, and
 * the receive prefixes, against the reference's dispatch. */
START_TEST(test_build)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_layout_t l;

	mkload(&w, _i);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	ck_assert_int_eq(eg_layout_build(&l, &w, &g), EG_OK);
	for (uint32_t s = 0; s < W; s++) {
		uint32_t T = eg_workload_tokens(&w, s);
		ck_assert_uint_eq(l.tokens[s], T);
		for (uint32_t d = 0; T == 0 && d < W; d++)
			ck_assert_uint_eq(l.rank_count[s * W + d], 0);
		for (uint32_t e = 0; T == 0 && e < w.experts; e++)
			ck_assert_uint_eq(l.expert_count[s * w.experts + e], 0);
	}
	for (uint32_t d = 0; d < W; d++) {
		eg_recv_t r;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		ck_assert_uint_eq(l.recv_rows[d], r.num_rows);
		ck_assert_mem_eq(l.recv_prefix + d * (W + 1), r.rank_prefix,
				 (W + 1) * sizeof(uint32_t));
		for (uint32_t s = 0; s < W; s++)
			ck_assert_uint_eq(l.rank_count[s * W + d],
					  r.rank_prefix[s + 1] -
					      r.rank_prefix[s]);
		eg_recv_free(&r);
	}
	eg_layout_free(&l);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* eg_layout_source and eg_layout_rows_to, rank by rank, from the rank's
 * own routing: an empty rank counts nothing, whatever its buffers hold;
 * the others count what the reference delivers. */
START_TEST(test_per_source)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_recv_t r[W];

	mkload(&w, _i);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	for (uint32_t d = 0; d < W; d++)
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r[d]), EG_OK);
	for (uint32_t s = 0; s < W; s++) {
		uint32_t T = eg_workload_tokens(&w, s), rc[W], ec[15];
		/* one token's worth of valid ids even when T is 0: an empty
		 * rank's buffer is never empty in memory */
		size_t n = (size_t)(T ? T : 1) * w.topk;
		int32_t *idx = malloc(n * sizeof(*idx));
		float *wt = malloc(n * sizeof(*wt));
		uint64_t rows[W], all[W];
		ck_assert(idx && wt);
		for (size_t k = 0; k < n; k++)
			idx[k] = (int32_t)(k % w.experts);
		eg_gen_routing_host(&g, s, T, idx, wt);
		eg_layout_source(&w, idx, T, rc, ec, NULL);
		ck_assert_int_eq(
		    eg_layout_rows_to(&w, EG_ROWS_PER_RANK, idx, T, rows),
		    EG_OK);
		ck_assert_int_eq(
		    eg_layout_rows_to(&w, EG_ROWS_ALL_RANKS, idx, T, all),
		    EG_OK);
		for (uint32_t d = 0; d < W; d++) {
			uint32_t want =
			    r[d].rank_prefix[s + 1] - r[d].rank_prefix[s];
			ck_assert_uint_eq(rc[d], want);
			ck_assert_uint_eq(rows[d], want);
			ck_assert_uint_eq(all[d], T);
		}
		uint32_t sum = 0;
		for (uint32_t e = 0; e < w.experts; e++)
			sum += ec[e];
		ck_assert(T > 0 || sum == 0);
		free(idx);
		free(wt);
	}
	for (uint32_t d = 0; d < W; d++)
		eg_recv_free(&r[d]);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout_zero");
	TCase *tc = tcase_create("zero");
	int n = (int)(sizeof(lists) / sizeof(lists[0]));
	tcase_add_loop_test(tc, test_build, 0, n);
	tcase_add_loop_test(tc, test_per_source, 0, n);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
