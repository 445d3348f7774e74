/* lib/base/num.c: every parser accepts what its callers write, refuses
 * the rest with one message shape naming the option and the value, and
 * each refusal is shown on a planted bad input. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/num.h"

static char err[256];

/* rc and, on error, that err is exactly want. */
static void expect_err(int rc, int want_rc, const char *want)
{
	ck_assert_msg(rc == want_rc, "rc %d, want %d (%s)", rc, want_rc, err);
	ck_assert_str_eq(err, want);
}

START_TEST(u64_accepts)
{
	uint64_t v = 0;

	ck_assert_int_eq(eg_parse_u64("n", "0", 0, 10, 0, &v, err, 256), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(eg_parse_u64("n", "007", 0, 10, 0, &v, err, 256), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(eg_parse_u64("seed", "18446744073709551615", 0,
				      UINT64_MAX, 0, &v, err, 256),
			 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(eg_parse_u64("seed", "0xfF", 0, UINT64_MAX, EG_NUM_HEX,
				      &v, err, 256),
			 0);
	ck_assert_uint_eq(v, 255);
}
END_TEST

START_TEST(u64_refuses)
{
	uint64_t v = 42;

	expect_err(eg_parse_u64("--iters", "", 1, 9, 0, &v, err, 256),
		   EG_EINVAL, "--iters: empty value");
	expect_err(eg_parse_u64("--iters", "-3", 1, 9, 0, &v, err, 256),
		   EG_EINVAL, "--iters: \"-3\" is not a non-negative integer");
	expect_err(eg_parse_u64("--iters", "+3", 1, 9, 0, &v, err, 256),
		   EG_EINVAL, "--iters: \"+3\" is not a non-negative integer");
	expect_err(eg_parse_u64("--iters", " 3", 1, 9, 0, &v, err, 256),
		   EG_EINVAL, "--iters: \" 3\" is not a non-negative integer");
	expect_err(eg_parse_u64("--iters", "3x", 1, 9, 0, &v, err, 256),
		   EG_EINVAL, "--iters: \"3x\" is not a non-negative integer");
	/* hex only when asked for */
	expect_err(eg_parse_u64("seed", "0x10", 0, 99, 0, &v, err, 256),
		   EG_EINVAL, "seed: \"0x10\" is not a non-negative integer");
	expect_err(eg_parse_u64("seed", "0x", 0, 99, EG_NUM_HEX, &v, err, 256),
		   EG_EINVAL, "seed: \"0x\" is not a non-negative integer");
	expect_err(eg_parse_u64("--iters", "0", 1, 9, 0, &v, err, 256),
		   EG_ERANGE, "--iters: 0 is out of range [1, 9]");
	expect_err(eg_parse_u64("--iters", "10", 1, 9, 0, &v, err, 256),
		   EG_ERANGE, "--iters: 10 is out of range [1, 9]");
	expect_err(eg_parse_u64("hidden", "99999999999999999999999", 0, 1024, 0,
				&v, err, 256),
		   EG_ERANGE,
		   "hidden: 99999999999999999999999 is out of range [0, 1024]");
	ck_assert_uint_eq(v, 42); /* never set on error */
	/* long values are shortened */
	expect_err(eg_parse_u64("k",
				"1234567890123456789012345678901234567890x"
				"yz",
				0, 9, 0, &v, err, 256),
		   EG_EINVAL,
		   "k: \"1234567890123456789012345678901234567890...\" is not "
		   "a non-negative integer");
	/* a YAML scalar that was quoted is text */
	expect_err(eg_parse_u64("k", "5", 0, 9, EG_NUM_TEXT, &v, err, 256),
		   EG_EINVAL, "k: \"5\" is not a non-negative integer");
}
END_TEST

START_TEST(uint_and_i64)
{
	unsigned u = 0;
	int64_t i = 0;

	ck_assert_int_eq(eg_parse_uint("-n", "4096", 1, 4096, &u, err, 256), 0);
	ck_assert_uint_eq(u, 4096);
	expect_err(eg_parse_uint("-n", "4097", 1, 4096, &u, err, 256),
		   EG_ERANGE, "-n: 4097 is out of range [1, 4096]");
	expect_err(eg_parse_uint("-n", "x", 1, 4096, &u, err, 256), EG_EINVAL,
		   "-n: \"x\" is not a non-negative integer");
	ck_assert_int_eq(eg_parse_i64("d", "-5", -9, 9, &i, err, 256), 0);
	ck_assert_int_eq(i, -5);
	ck_assert_int_eq(eg_parse_i64("d", "+5", -9, 9, &i, err, 256), 0);
	ck_assert_int_eq(i, 5);
	expect_err(eg_parse_i64("d", "-", -9, 9, &i, err, 256), EG_EINVAL,
		   "d: \"-\" is not an integer");
	expect_err(eg_parse_i64("d", "5.0", -9, 9, &i, err, 256), EG_EINVAL,
		   "d: \"5.0\" is not an integer");
	expect_err(eg_parse_i64("d", "-10", -9, 9, &i, err, 256), EG_ERANGE,
		   "d: -10 is out of range [-9, 9]");
	expect_err(eg_parse_i64("d", "-99999999999999999999", INT64_MIN,
				INT64_MAX, &i, err, 256),
		   EG_ERANGE,
		   "d: -99999999999999999999 is out of range "
		   "[-9223372036854775808, 9223372036854775807]");
}
END_TEST

START_TEST(double_accepts)
{
	static const struct {
		const char *s;
		double v;
	} ok[] = {{"5", 5},	{".5", 0.5},   {"5.", 5},   {"2.5e-3", 2.5e-3},
		  {"1E2", 100}, {"1e+2", 100}, {"0.000", 0}};
	double v;

	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		ck_assert_msg(
		    eg_parse_double("x", ok[k].s, 0, 1e9, 0, &v, err, 256) == 0,
		    "%s: %s", ok[k].s, err);
		ck_assert_double_eq(v, ok[k].v);
	}
	ck_assert_int_eq(
	    eg_parse_double("min", "-1.5", -9, 9, EG_NUM_SIGNED, &v, err, 256),
	    0);
	ck_assert_double_eq(v, -1.5);
	ck_assert_int_eq(
	    eg_parse_double("min", "+2", -9, 9, EG_NUM_SIGNED, &v, err, 256),
	    0);
	ck_assert_double_eq(v, 2);
}
END_TEST

START_TEST(double_refuses)
{
	static const char *const bad[] = {"-0.1",  "+1", "inf", "nan", "0x10",
					  "0x1p3", "1e", "e5",	".",   "1.2.3",
					  " 1",	   "1 ", "1,5", "--1"};
	char want[128];
	double v = 7;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		snprintf(want, sizeof(want), "mask: \"%s\" is not a number",
			 bad[k]);
		expect_err(
		    eg_parse_double("mask", bad[k], 0, 1, 0, &v, err, 256),
		    EG_EINVAL, want);
	}
	expect_err(eg_parse_double("mask", "", 0, 1, 0, &v, err, 256),
		   EG_EINVAL, "mask: empty value");
	expect_err(eg_parse_double("mask", "1.5", 0, 1, 0, &v, err, 256),
		   EG_ERANGE, "mask: 1.5 is out of range [0, 1]");
	expect_err(eg_parse_double("alpha", "0", 0, 0.5,
				   EG_NUM_LO_OPEN | EG_NUM_HI_OPEN, &v, err,
				   256),
		   EG_ERANGE, "alpha: 0 is out of range (0, 0.5)");
	expect_err(eg_parse_double("alpha", "0.5", 0, 0.5, EG_NUM_HI_OPEN, &v,
				   err, 256),
		   EG_ERANGE, "alpha: 0.5 is out of range [0, 0.5)");
	expect_err(eg_parse_double("f", "1e999", 0, 1e9, 0, &v, err, 256),
		   EG_ERANGE, "f: 1e999 is out of range [0, 1e+09]");
	expect_err(eg_parse_double("f", "1e-999", 1e-9, 1e9, 0, &v, err, 256),
		   EG_ERANGE, "f: 1e-999 is out of range [1e-09, 1e+09]");
	expect_err(eg_parse_double("min", "0.95", -9, 9,
				   EG_NUM_SIGNED | EG_NUM_TEXT, &v, err, 256),
		   EG_EINVAL, "min: \"0.95\" is not a number");
	ck_assert_double_eq(v, 7);
}
END_TEST

START_TEST(bytes)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {{"4096", 4096},     {"64K", 65536},	{"64k", 65536},
		  {"1M", 1u << 20},   {"1m", 1u << 20}, {"2G", 2ull << 30},
		  {"2g", 2ull << 30}, {"0", 0}};
	uint64_t v = 0;

	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		ck_assert_msg(eg_parse_bytes("-b", ok[k].s, 0, 4ull << 30, 0,
					     &v, err, 256) == 0,
			      "%s: %s", ok[k].s, err);
		ck_assert_uint_eq(v, ok[k].v);
	}
	static const char *const bad[] = {"K",	  "1KB", "1T",	"-1",
					  "1.5M", " 1",	 "0x10"};
	char want[160];

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		snprintf(want, sizeof(want),
			 "size: \"%s\" is not a byte count (an integer with "
			 "K, M or G)",
			 bad[k]);
		expect_err(eg_parse_bytes("size", bad[k], 1, 1u << 30, 0, &v,
					  err, 256),
			   EG_EINVAL, want);
	}
	expect_err(eg_parse_bytes("size", "", 1, 1u << 30, 0, &v, err, 256),
		   EG_EINVAL, "size: empty value");
	expect_err(eg_parse_bytes("size", "2G", 1, 1u << 30, 0, &v, err, 256),
		   EG_ERANGE, "size: 2G is out of range [1, 1G]");
	expect_err(eg_parse_bytes("size", "0", 1, 1u << 30, 0, &v, err, 256),
		   EG_ERANGE, "size: 0 is out of range [1, 1G]");
	expect_err(eg_parse_bytes("size", "1025", 1, 1024, 0, &v, err, 256),
		   EG_ERANGE, "size: 1025 is out of range [1, 1K]");
	expect_err(eg_parse_bytes("size", "99999999999999999999K", 1, 1024, 0,
				  &v, err, 256),
		   EG_ERANGE,
		   "size: 99999999999999999999K is out of range [1, 1K]");
	expect_err(eg_parse_bytes("size", "17179869184G", 0, UINT64_MAX, 0, &v,
				  err, 256),
		   EG_ERANGE,
		   "size: 17179869184G is out of range [0, "
		   "18446744073709551615]");
}
END_TEST

/* No error buffer: still the right code. */
START_TEST(no_buffer)
{
	uint64_t v;
	double d;

	ck_assert_int_eq(eg_parse_u64("n", "x", 0, 9, 0, &v, NULL, 0),
			 EG_EINVAL);
	ck_assert_int_eq(eg_parse_double("n", "2", 0, 1, 0, &d, NULL, 0),
			 EG_ERANGE);
}
END_TEST

/* One style for people: the page, the gate lines, summary.md. */
START_TEST(fmt_num)
{
	char b[32];

	ck_assert_str_eq(eg_fmt_num(NAN, b, sizeof(b)), "-");
	ck_assert_str_eq(eg_fmt_num(11930.4, b, sizeof(b)), "11930");
	ck_assert_str_eq(eg_fmt_num(1234.56, b, sizeof(b)), "1235");
	ck_assert_str_eq(eg_fmt_num(42, b, sizeof(b)), "42");
	ck_assert_str_eq(eg_fmt_num(0.70710678, b, sizeof(b)), "0.7071");
	ck_assert_str_eq(eg_fmt_num(12.3456, b, sizeof(b)), "12.35");
	ck_assert_str_eq(eg_fmt_num(-2.5, b, sizeof(b)), "-2.5");
	ck_assert_str_eq(eg_fmt_num(1e20, b, sizeof(b)), "1e+20");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base_num");
	TCase *t = tcase_create("parse");

	tcase_add_test(t, u64_accepts);
	tcase_add_test(t, u64_refuses);
	tcase_add_test(t, uint_and_i64);
	tcase_add_test(t, double_accepts);
	tcase_add_test(t, double_refuses);
	tcase_add_test(t, bytes);
	tcase_add_test(t, no_buffer);
	tcase_add_test(t, fmt_num);
	suite_add_tcase(s, t);
	return eg_test_main(s);
}
