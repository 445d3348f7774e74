/* Element types: bf16 and e4m3 conversions against slow references built
 * from double arithmetic, plus the load/store helpers. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/dtype.h"

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 32);
}

/* ---- bf16 reference: magnitude code c as a double ---- */
static double bf16_val(uint32_t c)
{
	uint32_t e = c >> 7, m = c & 0x7f;

	if (e == 0)
		return ldexp((double)m, -133);
	if (e == 0xff) /* one past the largest finite: the overflow point */
		return ldexp(1.0, 128);
	return ldexp((double)(128 + m), (int)e - 134);
}

/* Nearest of the two bf16 neighbours of |f|, ties to the even code;
 * overflow to Inf as IEEE says (as if the exponent were unbounded). */
static uint16_t ref_bf16(float f)
{
	uint32_t u = f2u(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	double d = fabs((double)f);
	uint32_t lo = (u >> 16) & 0x7fffu;
	double dl, dh;

	if (isinf(f))
		return sign | 0x7f80u;
	dl = d - bf16_val(lo);
	dh = bf16_val(lo + 1) - d;
	if (dh < dl || (dh == dl && (lo & 1u)))
		lo++;
	return (uint16_t)(sign | lo);
}

static void check_bf16(float f)
{
	uint16_t got = eg_f32_to_bf16(f);

	if (isnan(f)) {
		ck_assert_msg(isnan(eg_bf16_to_f32(got)),
			      "NaN %08x -> %04x not NaN", f2u(f), got);
		return;
	}
	ck_assert_msg(got == ref_bf16(f), "bf16(%08x) = %04x, want %04x",
		      f2u(f), got, ref_bf16(f));
}

START_TEST(bf16_cases)
{
	/* ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 */
	ck_assert_uint_eq(eg_f32_to_bf16(1.0f), 0x3f80);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x3f808000u)), 0x3f80);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x3f818000u)), 0x3f82);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x3f808001u)), 0x3f81);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x3f807fffu)), 0x3f80);
	ck_assert_uint_eq(eg_f32_to_bf16(-1.0f), 0xbf80);
	ck_assert_uint_eq(eg_f32_to_bf16(-0.0f), 0x8000);
	/* overflow: FLT_MAX and the tie above the largest bf16 go to Inf */
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x7f7fffffu)), 0x7f80);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x7f7f8000u)), 0x7f80);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x7f7f7fffu)), 0x7f7f);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0xff7fffffu)), 0xff80);
	ck_assert_uint_eq(eg_f32_to_bf16(INFINITY), 0x7f80);
	ck_assert_uint_eq(eg_f32_to_bf16(-INFINITY), 0xff80);
	/* subnormals round too, the top one up into the smallest normal */
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x00008000u)), 0x0000);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x00018000u)), 0x0002);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x00010001u)), 0x0001);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x007fffffu)), 0x0080);
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0x80018000u)), 0x8002);
	/* NaNs stay NaN, including signalling ones whose top half is Inf */
	ck_assert(isnan(eg_bf16_to_f32(eg_f32_to_bf16(u2f(0x7f800001u)))));
	ck_assert(isnan(eg_bf16_to_f32(eg_f32_to_bf16(u2f(0xff800001u)))));
	ck_assert(isnan(eg_bf16_to_f32(eg_f32_to_bf16(NAN))));
	ck_assert_uint_eq(eg_f32_to_bf16(u2f(0xffc00000u)) & 0x8000u, 0x8000);
	/* decode is exact */
	ck_assert(eg_bf16_to_f32(0x3fc0) == 1.5f);
	ck_assert(eg_bf16_to_f32(0x0001) == ldexpf(1.0f, -133));
}
END_TEST

START_TEST(bf16_vs_reference)
{
	static const uint32_t lows[] = {0x0000, 0x0001, 0x7fff,
					0x8000, 0x8001, 0xffff};

	for (uint32_t hi = 0; hi < 0x10000u; hi++)
		for (size_t k = 0; k < sizeof(lows) / sizeof(lows[0]); k++)
			check_bf16(u2f(hi << 16 | lows[k]));
	for (int i = 0; i < 1000000; i++)
		check_bf16(u2f(rnd()));
	/* every bf16 survives the round trip */
	for (uint32_t b = 0; b < 0x10000u; b++) {
		float f = eg_bf16_to_f32((uint16_t)b);

		if (!isnan(f))
			ck_assert_uint_eq(eg_f32_to_bf16(f), b);
	}
}
END_TEST

/* ---- e4m3 reference: enumerate the finite magnitudes ---- */
static double e4m3_val(unsigned c)
{
	unsigned e = c >> 3, m = c & 7u;

	if (e == 0)
		return ldexp((double)m, -9);
	return ldexp((double)(8 + m), (int)e - 10);
}

/* Nearest finite e4m3 (codes 0..0x7e), ties to the even code, which is
 * the even significand; everything above 448 saturates. */
static uint8_t ref_e4m3(float f)
{
	uint8_t sign = (uint8_t)(signbit(f) ? 0x80 : 0);
	double d = fabs((double)f);
	unsigned best = 0;

	if (isnan(f))
		return 0x7f;
	if (d >= 448.0)
		return sign | 0x7e;
	for (unsigned c = 1; c <= 0x7e; c++) {
		double dc = fabs(d - e4m3_val(c));
		double db = fabs(d - e4m3_val(best));

		if (dc < db || (dc == db && !(c & 1u)))
			best = c;
	}
	return (uint8_t)(sign | best);
}

static void check_e4m3(float f)
{
	uint8_t got = eg_f32_to_e4m3(f), want = ref_e4m3(f);

	ck_assert_msg(got == want, "e4m3(%08x = %g) = %02x, want %02x", f2u(f),
		      (double)f, got, want);
}

START_TEST(e4m3_codes)
{
	for (unsigned c = 0; c < 256; c++) {
		float f = eg_e4m3_to_f32((uint8_t)c);

		if ((c & 0x7fu) == 0x7fu) {
			ck_assert(isnan(f));
			ck_assert_uint_eq(eg_f32_to_e4m3(f), 0x7f);
			continue;
		}
		ck_assert_msg((double)f ==
				  ((c & 0x80u) ? -1 : 1) * e4m3_val(c & 0x7fu),
			      "decode %02x = %g", c, (double)f);
		ck_assert_uint_eq(!!signbit(f), c >> 7);
		ck_assert_msg(eg_f32_to_e4m3(f) == c, "code %02x -> %02x", c,
			      eg_f32_to_e4m3(f));
	}
	ck_assert(eg_e4m3_to_f32(0x7e) == 448.0f);
	ck_assert(eg_e4m3_to_f32(0x38) == 1.0f);
	ck_assert(eg_e4m3_to_f32(0x08) == ldexpf(1.0f, -6));
	ck_assert(eg_e4m3_to_f32(0x01) == ldexpf(1.0f, -9));
}
END_TEST

START_TEST(e4m3_cases)
{
	/* saturation, Inf included */
	ck_assert_uint_eq(eg_f32_to_e4m3(448.0f), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(460.0f), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(464.0f), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(1e6f), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(-1e6f), 0xfe);
	ck_assert_uint_eq(eg_f32_to_e4m3(INFINITY), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(-INFINITY), 0xfe);
	ck_assert_uint_eq(eg_f32_to_e4m3(NAN), 0x7f);
	ck_assert_uint_eq(eg_f32_to_e4m3(-NAN), 0x7f);
	/* ties to even: 1 + 1/16 -> 1, 1 + 3/16 -> 1.25, 432 -> 448 */
	ck_assert_uint_eq(eg_f32_to_e4m3(1.0625f), 0x38);
	ck_assert_uint_eq(eg_f32_to_e4m3(1.1875f), 0x3a);
	ck_assert_uint_eq(eg_f32_to_e4m3(1.0626f), 0x39);
	ck_assert_uint_eq(eg_f32_to_e4m3(432.0f), 0x7e);
	ck_assert_uint_eq(eg_f32_to_e4m3(-1.0625f), 0xb8);
	/* subnormal range (m * 2^-9) and its ties */
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(1.0f, -10)), 0x00);
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(3.0f, -10)), 0x02);
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(5.0f, -10)), 0x02);
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(15.0f, -10)), 0x08);
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(1.0f, -11)), 0x00);
	ck_assert_uint_eq(eg_f32_to_e4m3(ldexpf(1.0f, -140)), 0x00);
	/* signed zero: -0 and negatives that round to 0 keep the sign */
	ck_assert_uint_eq(eg_f32_to_e4m3(0.0f), 0x00);
	ck_assert_uint_eq(eg_f32_to_e4m3(-0.0f), 0x80);
	ck_assert_uint_eq(eg_f32_to_e4m3(-ldexpf(1.0f, -12)), 0x80);
}
END_TEST

START_TEST(e4m3_vs_reference)
{
	static const uint32_t lows[] = {0x00000, 0x00001, 0x7ffff,
					0x80000, 0x80001, 0xfffff};

	/* every exponent near the e4m3 range, every kept significand,
	 * the rounding-critical dropped bits, both signs */
	for (uint32_t e = 127 - 24; e <= 127 + 10; e++)
		for (uint32_t q = 0; q < 8; q++)
			for (size_t k = 0; k < 6; k++)
				for (uint32_t s = 0; s < 2; s++)
					check_e4m3(u2f(s << 31 | e << 23 |
						       q << 20 | lows[k]));
	for (uint32_t e = 0; e < 256; e += 5)
		check_e4m3(u2f(e << 23 | 0x123456u));
	for (int i = 0; i < 300000; i++) {
		/* exponent in [2^-14, 2^11): where the rounding happens */
		uint32_t u = rnd(), e = 113 + (u >> 24) % 25;

		check_e4m3(u2f((u & 0x807fffffu) | e << 23));
	}
	for (int i = 0; i < 100000; i++)
		check_e4m3(u2f(rnd()));
}
END_TEST

START_TEST(dtype_helpers)
{
	uint16_t b[4];
	float f[4];
	uint8_t q[4];

	ck_assert_uint_eq(eg_dtype_size(EG_DTYPE_BF16), 2);
	ck_assert_uint_eq(eg_dtype_size(EG_DTYPE_FP32), 4);
	ck_assert_uint_eq(eg_dtype_size(EG_DTYPE_FP8), 1);
	ck_assert_uint_eq(eg_dtype_mantissa_bits(EG_DTYPE_BF16), 8);
	ck_assert_uint_eq(eg_dtype_mantissa_bits(EG_DTYPE_FP32), 24);
	ck_assert_uint_eq(eg_dtype_mantissa_bits(EG_DTYPE_FP8), 4);
	ck_assert_int_eq(eg_combine_dtype(EG_DTYPE_FP8), EG_DTYPE_BF16);
	ck_assert_int_eq(eg_combine_dtype(EG_DTYPE_BF16), EG_DTYPE_BF16);
	ck_assert_int_eq(eg_combine_dtype(EG_DTYPE_FP32), EG_DTYPE_FP32);
	ck_assert_str_eq(eg_dtype_name(EG_DTYPE_BF16), "bf16");
	ck_assert_str_eq(eg_dtype_name(EG_DTYPE_FP32), "fp32");
	ck_assert_str_eq(eg_dtype_name(EG_DTYPE_FP8), "fp8");

	eg_store_f32(EG_DTYPE_BF16, b, 1, 1.00390625f); /* tie -> 1.0 */
	eg_store_f32(EG_DTYPE_BF16, b, 2, INFINITY);
	ck_assert_uint_eq(b[1], 0x3f80);
	ck_assert_uint_eq(eg_load_bits(EG_DTYPE_BF16, b, 1), 0x3f80);
	ck_assert(eg_load_f32(EG_DTYPE_BF16, b, 1) == 1.0f);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_BF16, b, 1), 0);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_BF16, b, 2), 1);

	eg_store_f32(EG_DTYPE_FP32, f, 3, -2.5f);
	eg_store_f32(EG_DTYPE_FP32, f, 0, NAN);
	ck_assert(f[3] == -2.5f);
	ck_assert_uint_eq(eg_load_bits(EG_DTYPE_FP32, f, 3), 0xc0200000u);
	ck_assert(eg_load_f32(EG_DTYPE_FP32, f, 3) == -2.5f);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_FP32, f, 0), 1);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_FP32, f, 3), 0);

	eg_store_f32(EG_DTYPE_FP8, q, 0, 1000.0f); /* saturates, finite */
	eg_store_f32(EG_DTYPE_FP8, q, 1, -1.5f);
	eg_store_f32(EG_DTYPE_FP8, q, 2, NAN);
	ck_assert_uint_eq(eg_load_bits(EG_DTYPE_FP8, q, 0), 0x7e);
	ck_assert_uint_eq(eg_load_bits(EG_DTYPE_FP8, q, 1), 0xbc);
	ck_assert(eg_load_f32(EG_DTYPE_FP8, q, 0) == 448.0f);
	ck_assert(eg_load_f32(EG_DTYPE_FP8, q, 1) == -1.5f);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_FP8, q, 0), 0);
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_FP8, q, 2), 1);
	q[3] = 0xff;
	ck_assert_int_eq(eg_is_nonfinite(EG_DTYPE_FP8, q, 3), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dtype");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bf16_cases);
	tcase_add_test(tc, bf16_vs_reference);
	tcase_add_test(tc, e4m3_codes);
	tcase_add_test(tc, e4m3_cases);
	tcase_add_test(tc, e4m3_vs_reference);
	tcase_add_test(tc, dtype_helpers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
