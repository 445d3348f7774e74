/* The trend of call time over call index (lib/stress/stress_trend.c) on
 * made-up call times: a flat library with load's spikes passes, a linear
 * growth past the bound fails, a growth within the bound passes, a rise
 * of load mid-run (a step) is no trend, and the points merge in pairs
 * when full. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "lib/stress/stress.h"

/* calls cycles of 48 calls, call i taking f(i) seconds, every 7th call
 * of a cycle lifted by load (x3) and one in 5 cycles entirely (x2) */
static void eg__feed(eg_stress_trend_t *t, uint64_t calls,
		     double (*f)(uint64_t))
{
	for (uint64_t i = 0; i < calls; i++) {
		double s = f(i);

		if (i % 7 == 3)
			s *= 3;
		if ((i / 48) % 5 == 2)
			s *= 2;
		eg_stress_trend_call(t, i, s);
		if (i % 48 == 47)
			eg_stress_trend_cycle(t);
	}
	eg_stress_trend_judge(t);
}

static double eg__flat(uint64_t i)
{
	return 50e-6 * (1 + 0.05 * sin((double)i)); /* +-5% jitter */
}

static double eg__linear(uint64_t i) /* n microseconds at call n */
{
	return 50e-6 + 1e-6 * (double)i;
}

static double eg__mild(uint64_t i) /* +40% over 2048 calls */
{
	return 50e-6 * (1 + 0.4 * (double)i / 2048);
}

static double eg__step(uint64_t i) /* load rises once, mid-run: x3 */
{
	return i < 1100 ? eg__flat(i) : 3 * eg__flat(i);
}

START_TEST(flat_with_load)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 2048, eg__flat);
	ck_assert(t->judged);
	ck_assert(!t->grew);
	ck_assert(t->lo <= 0.1 && t->hi >= -0.1);
	ck_assert(fabs(t->early_s - 50e-6) < 5e-6);
	free(t);
}
END_TEST

/* the planted fault: a lookup growing with the calls (SLOW_GROWTH) */
START_TEST(linear_growth)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 2048, eg__linear);
	ck_assert(t->judged);
	ck_assert(t->grew);
	ck_assert(t->lo > EG_STRESS_TREND_FAIL);
	ck_assert(t->lo <= t->growth && t->growth <= t->hi);
	ck_assert_ptr_nonnull(strstr(t->say, "call time grows"));
	free(t);
}
END_TEST

START_TEST(mild_growth)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 2048, eg__mild);
	ck_assert(t->judged && !t->grew);
	ck_assert(t->growth > 0.25 && t->growth < 0.5); /* seen, not failed */
	free(t);
}
END_TEST

/* a library that is flat while the load rises once (the template under
 * busy loops did: +184% [+131%, +225%]): past the bound over the whole,
 * but one half flat, so not a trend */
START_TEST(load_step)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 2048, eg__step);
	ck_assert(t->judged);
	ck_assert(t->lo > EG_STRESS_TREND_FAIL);
	ck_assert(!t->grew);
	ck_assert_ptr_nonnull(strstr(t->say, "one half flat"));
	free(t);
}
END_TEST

/* a run too short to have a trend is not judged, and passes */
START_TEST(too_short)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 48 * 3, eg__linear);
	ck_assert(!t->judged && !t->grew);
	ck_assert_ptr_nonnull(strstr(t->say, "not judged"));
	free(t);
}
END_TEST

/* more cycles than points: pairs merged, the growth still seen */
START_TEST(merged)
{
	eg_stress_trend_t *t = calloc(1, sizeof(*t));

	eg__feed(t, 48 * 1000, eg__linear);
	ck_assert(t->per >= 4);
	ck_assert(t->n <= EG_STRESS_TREND_POINTS);
	ck_assert(t->grew);
	ck_assert(t->last - t->first + 1 == 48 * 1000);
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stress_trend");
	TCase *tc = tcase_create("trend");

	tcase_add_test(tc, flat_with_load);
	tcase_add_test(tc, linear_growth);
	tcase_add_test(tc, mild_growth);
	tcase_add_test(tc, load_step);
	tcase_add_test(tc, too_short);
	tcase_add_test(tc, merged);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
