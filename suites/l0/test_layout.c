/* Layout: counts per rank and expert from routing, prefix offsets. */
#include <string.h>

#include "eg_test.h"

START_TEST(test_source_by_hand)
{
	/* W=2, E=4 (experts 0,1 on rank 0; 2,3 on rank 1), K=3 */
	eg_workload_t w;
	const char *kv[] = {"world=2", "experts=4", "topk=3", "tokens=4", NULL};
	eg_test_workload(&w, kv);
	const int32_t idx[] = {
	    0,	1,  -1, /* token 0: rank 0 twice -> counted once */
	    2,	0,  3,	/* token 1: both ranks */
	    -1, -1, -1, /* token 2: fully masked: nowhere */
	    3,	-1, 2,	/* token 3: rank 1 only */
	};
	uint32_t rc[2], ec[4];
	uint8_t in[4 * 2];
	eg_layout_source(&w, idx, 4, rc, ec, in);
	ck_assert_uint_eq(rc[0], 2);
	ck_assert_uint_eq(rc[1], 2);
	ck_assert_uint_eq(ec[0], 2);
	ck_assert_uint_eq(ec[1], 1);
	ck_assert_uint_eq(ec[2], 2);
	ck_assert_uint_eq(ec[3], 2);
	const uint8_t want[] = {1, 0, 1, 1, 0, 0, 0, 1};
	ck_assert_mem_eq(in, want, sizeof(want));
	eg_workload_fini(&w);
}
END_TEST

/* The layout's prefix offsets and row counts agree with what the
 * reference delivers, on skewed and masked routing with empty ranks. */
START_TEST(test_build_matches_reference)
{
	eg_workload_t w;
	const char *kv[] = {
	    "world=5",		"experts=20", "topk=3",	  "tokens=uneven:9",
	    "routing=zipf:1.5", "mask=0.2",   "hidden=8", NULL};
	eg_test_workload(&w, kv);
	eg_gen_t g;
	eg_layout_t l;
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	ck_assert_int_eq(eg_layout_build(&l, &w, &g), EG_OK);
	uint64_t sent = 0, recv = 0;
	for (uint32_t d = 0; d < 5; d++) {
		eg_recv_t r;
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, d, &r), EG_OK);
		ck_assert_uint_eq(l.recv_rows[d], r.num_rows);
		ck_assert_mem_eq(l.recv_prefix + d * 6, r.rank_prefix,
				 6 * sizeof(uint32_t));
		recv += r.num_rows;
		eg_recv_free(&r);
	}
	for (uint32_t s = 0; s < 5; s++) {
		ck_assert_uint_eq(l.tokens[s], eg_workload_tokens(&w, s));
		for (uint32_t d = 0; d < 5; d++)
			sent += l.rank_count[s * 5 + d];
	}
	ck_assert_uint_eq(sent, recv);
	ck_assert_uint_eq(l.tokens[4], 5); /* uneven: 9 - 4 */
	eg_layout_free(&l);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	tcase_add_test(tc, test_source_by_hand);
	tcase_add_test(tc, test_build_matches_reference);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
