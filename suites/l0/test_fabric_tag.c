/* The fabric transport's tags and comms (lib/transport/fabric_tag.c):
 * messages of consecutive calls never share a tag, also where the call
 * counter wraps (its low 20 bits travel, and the 32-bit counter itself
 * wraps); sources and chunks stay apart; the top 4 bits stay clear; the
 * planted "noseq" mode does collide (the transport suite must catch
 * it); the comm choice and the test-mode words. */
#include <stdio.h>

#include "eg_test.h"
#include "lib/transport/fabric_int.h"

static const uint32_t seqs[] = {0,	  1,	      2,	 0xffffe,
				0xfffff,  0x100000,   0x100001,	 0x1fffff,
				0x200000, 0xfffffffe, 0xffffffff};

/* Call n and call n + 1 (unsigned, so 0xffffffff + 1 = 0): every pair
 * of (source, chunk) differs between them. */
START_TEST(test_consecutive)
{
	static const uint32_t srcs[] = {0, 1, 7, 65535};
	static const uint32_t chunks[] = {0, 1, 5, 0xffffff};
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		uint32_t n = seqs[i], m = n + 1;
		for (size_t s = 0; s < 4; s++)
			for (size_t c = 0; c < 4; c++) {
				uint64_t a =
				    eg_fabric_tag(n, srcs[s], chunks[c], 0);
				uint64_t b =
				    eg_fabric_tag(m, srcs[s], chunks[c], 0);
				ck_assert_msg(a != b,
					      "calls %u and %u share tag "
					      "%#llx",
					      n, m, (unsigned long long)a);
				ck_assert_uint_eq(a >> 60, 0);
				ck_assert_uint_eq(b >> 60, 0);
			}
	}
}
END_TEST

/* Within one call the tag names its source and chunk: all distinct. */
START_TEST(test_fields_apart)
{
	for (uint32_t s = 0; s < 24; s++)
		for (uint32_t c = 0; c < 24; c++)
			for (uint32_t s2 = 0; s2 < 24; s2 += 5)
				for (uint32_t c2 = 0; c2 < 24; c2 += 3)
					if (s != s2 || c != c2)
						ck_assert(
						    eg_fabric_tag(9, s, c, 0) !=
						    eg_fabric_tag(9, s2, c2,
								  0));
	/* the largest fields do not spill into each other */
	ck_assert_uint_eq(eg_fabric_tag(0, 65535, 0, 0), 0xffffull << 24);
	ck_assert_uint_eq(eg_fabric_tag(0, 0, 0xffffff, 0), 0xffffffull);
	ck_assert_uint_eq(eg_fabric_tag(0xfffff, 0, 0, 0), 0xfffffull << 40);
}
END_TEST

/* A window of 2^20 consecutive calls never repeats a tag. */
START_TEST(test_window)
{
	uint64_t first = eg_fabric_tag(0xfff00000u, 3, 0, 0);
	for (uint32_t d = 1; d < (1u << EG_FABRIC_SEQ_BITS); d += 4099)
		ck_assert(eg_fabric_tag(0xfff00000u + d, 3, 0, 0) != first);
}
END_TEST

/* The planted bug: without the call, consecutive calls collide (which
 * suites/l2/xport.sh must then catch end to end). */
START_TEST(test_noseq_collides)
{
	ck_assert_uint_eq(eg_fabric_tag(1, 2, 3, EG_FABRIC_TEST_NOSEQ),
			  eg_fabric_tag(2, 2, 3, EG_FABRIC_TEST_NOSEQ));
}
END_TEST

START_TEST(test_comm)
{
	/* both ends compute the same comm; consecutive calls rotate */
	ck_assert_uint_eq(eg_fabric_comm(1, 2, 5, 0, 4, 0), (1 + 2 + 5) % 4);
	ck_assert_uint_ne(eg_fabric_comm(1, 2, 5, 0, 4, 0),
			  eg_fabric_comm(1, 2, 6, 0, 4, 0));
	ck_assert_uint_eq(eg_fabric_comm(1, 2, 0xffffffff, 1, 4, 0),
			  (1 + 2 + 0xffffffffull + 1) % 4);
	/* late mode keeps a pair on one comm from call to call */
	ck_assert_uint_eq(eg_fabric_comm(1, 2, 5, 0, 4, EG_FABRIC_TEST_LATE),
			  eg_fabric_comm(1, 2, 6, 0, 4, EG_FABRIC_TEST_LATE));
	ck_assert_uint_eq(eg_fabric_comm(3, 0, 9, 2, 1, 0), 0);
}
END_TEST

START_TEST(test_modes)
{
	unsigned m = 9;
	char err[128];
	ck_assert_int_eq(eg_fabric_test_parse(NULL, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(eg_fabric_test_parse("", &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(
	    eg_fabric_test_parse("late,skew", &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m, EG_FABRIC_TEST_LATE | EG_FABRIC_TEST_SKEW);
	ck_assert_int_eq(eg_fabric_test_parse("noseq", &m, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(m, EG_FABRIC_TEST_NOSEQ);
	ck_assert_int_eq(
	    eg_fabric_test_parse("late,fast", &m, err, sizeof(err)), EG_EINVAL);
	ck_assert_str_eq(err, "EPGATE_FABRIC_TEST: \"fast\" is not a mode "
			      "(late, skew, noseq)");
	ck_assert_int_eq(eg_fabric_test_parse("lat", &m, err, sizeof(err)),
			 EG_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fabric_tag");
	TCase *tc = tcase_create("tag");
	tcase_add_test(tc, test_consecutive);
	tcase_add_test(tc, test_fields_apart);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_noseq_collides);
	tcase_add_test(tc, test_comm);
	tcase_add_test(tc, test_modes);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
