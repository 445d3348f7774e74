/* The timing boundaries (include/epgate/window.h, lib/step/window.c,
 * lib/bench/metrics.c): the names and their refusals, the device
 * window's hold per sample (short samples counted, the hold doubled up
 * to its bound, a call still short there named a host sync), and each
 * boundary's metrics under its own name with the slowest rank per step,
 * on hand-computed samples; the kernel boundary's union, narrowed to a
 * library's span. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/window.h"

static char err[256];

START_TEST(names)
{
	eg_boundary_t b = EG_BOUNDARY_KERNEL;

	ck_assert_int_eq(eg_boundary_parse("call", &b), EG_OK);
	ck_assert_int_eq(b, EG_BOUNDARY_CALL);
	ck_assert_int_eq(eg_boundary_parse("window", &b), EG_OK);
	ck_assert_int_eq(b, EG_BOUNDARY_WINDOW);
	ck_assert_int_eq(eg_boundary_parse("kernel", &b), EG_OK);
	ck_assert_int_eq(b, EG_BOUNDARY_KERNEL);
	ck_assert_int_eq(eg_boundary_parse("replay", &b), EG_OK);
	ck_assert_int_eq(b, EG_BOUNDARY_REPLAY);
	ck_assert_str_eq(eg_boundary_name(EG_BOUNDARY_REPLAY), "replay");
	ck_assert_int_eq(eg_boundary_parse("Window", &b), EG_EINVAL);
	ck_assert_int_eq(eg_boundary_parse("", &b), EG_EINVAL);
	ck_assert_int_eq(eg_boundary_parse(NULL, &b), EG_EINVAL);
	ck_assert_str_eq(eg_boundary_name(EG_BOUNDARY_WINDOW), "window");
	ck_assert_str_eq(eg_boundary_name((eg_boundary_t)7), "?");
}
END_TEST

START_TEST(env)
{
	eg_boundary_t b;
	eg_window_t w;

	unsetenv("EPGATE_BOUNDARY");
	ck_assert_int_eq(eg_boundary_env(EG_BOUNDARY_WINDOW, &b, err, 256),
			 EG_OK);
	ck_assert_int_eq(b, EG_BOUNDARY_WINDOW);
	setenv("EPGATE_BOUNDARY", "kernel", 1);
	ck_assert_int_eq(eg_boundary_env(EG_BOUNDARY_CALL, &b, err, 256), 0);
	ck_assert_int_eq(b, EG_BOUNDARY_KERNEL);
	setenv("EPGATE_BOUNDARY", "device", 1);
	ck_assert_int_eq(eg_boundary_env(EG_BOUNDARY_CALL, &b, err, 256),
			 EG_EINVAL);
	ck_assert_str_eq(err, "EPGATE_BOUNDARY=device: expected call, window, "
			      "kernel or replay");
	unsetenv("EPGATE_BOUNDARY");

	unsetenv("EPGATE_HOLD_US");
	unsetenv("EPGATE_HOLD_MAX_US");
	ck_assert_int_eq(eg_window_init(&w, err, 256), EG_OK);
	ck_assert(w.hold_us == 50 && w.max_us == 5000);
	setenv("EPGATE_HOLD_US", "20x", 1);
	ck_assert_int_eq(eg_window_init(&w, err, 256), EG_EINVAL);
	ck_assert_str_eq(err, "EPGATE_HOLD_US=20x: expected microseconds, 0 "
			      "to 1000000");
	setenv("EPGATE_HOLD_US", "900", 1);
	setenv("EPGATE_HOLD_MAX_US", "-1", 1);
	ck_assert_int_eq(eg_window_init(&w, err, 256), EG_EINVAL);
	ck_assert_str_eq(err, "EPGATE_HOLD_MAX_US=-1: expected microseconds, "
			      "0 to 1000000");
	/* a first hold past the bound starts at the bound */
	setenv("EPGATE_HOLD_MAX_US", "400", 1);
	ck_assert_int_eq(eg_window_init(&w, err, 256), EG_OK);
	ck_assert(w.hold_us == 400);
	unsetenv("EPGATE_HOLD_US");
	unsetenv("EPGATE_HOLD_MAX_US");
}
END_TEST

/* a planted late start: every call starts its device work after the
 * hold, the hold doubles to its bound, then the calls are named synced */
START_TEST(hold_adapts)
{
	eg_window_t w = {.hold_us = 50, .max_us = 400};

	ck_assert_int_eq(eg_window_after(&w, 0), 0);
	ck_assert(w.hold_us == 50 && w.short_n == 0 && w.samples == 1);
	ck_assert_int_eq(eg_window_after(&w, 1), 1);
	ck_assert(w.hold_us == 100 && !w.synced);
	eg_window_after(&w, 1);
	eg_window_after(&w, 1);
	ck_assert(w.hold_us == 400 && !w.synced);
	ck_assert_int_eq(eg_window_after(&w, 1), 1);
	ck_assert(w.hold_us == 400 && w.synced);
	ck_assert_int_eq(eg_window_after(&w, 1), 1); /* stays */
	ck_assert(w.hold_us == 400);
	ck_assert_uint_eq(w.samples, 6);
	ck_assert_uint_eq(w.short_n, 5);
	eg_window_reset(&w);
	ck_assert(w.samples == 0 && w.short_n == 0 && w.hold_us == 400);
	/* a hold of 0 grows (to 1 us, then doubles) */
	w = (eg_window_t){.hold_us = 0, .max_us = 3};
	eg_window_after(&w, 1);
	ck_assert(w.hold_us == 1);
	eg_window_after(&w, 1);
	eg_window_after(&w, 1);
	ck_assert(w.hold_us == 3 && !w.synced);
	eg_window_after(&w, 1);
	ck_assert(w.synced);
	/* no room to grow: the first short call is synced */
	w = (eg_window_t){.hold_us = 0, .max_us = 0};
	eg_window_after(&w, 1);
	ck_assert(w.synced && w.hold_us == 0);
}
END_TEST

static const eg_metric_t *find(const eg_bench_calc_t *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->m[i].name, name))
			return &c->m[i];
	return NULL;
}

/* two ranks, two steps: the gated times named for their boundary, the
 * kernel times as kernel_*, each the slowest rank's per step */
START_TEST(metrics_named)
{
	/* rank r: dispatch[2], expert[2], combine[2] (s) */
	const double t[12] = {10e-6, 20e-6, 1e-6, 1e-6, 30e-6, 40e-6,
			      12e-6, 18e-6, 1e-6, 1e-6, 31e-6, 39e-6};
	/* rank r: kernel dispatch[2], combine[2] */
	const double k[8] = {5e-6, 6e-6, 7e-6, 8e-6, 4e-6, 9e-6, 8e-6, 1e-6};
	eg_bench_rank_report_t rep[2];
	eg_bench_calc_in_t in = {.world = 2,
				 .nodes = 1,
				 .n = 2,
				 .times = t,
				 .rep = rep,
				 .tokens = 8,
				 .kern_times = k,
				 .boundary = EG_BOUNDARY_WINDOW};
	eg_bench_calc_t c;
	const eg_metric_t *m;

	memset(rep, 0, sizeof(rep));
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_ptr_null(find(&c, "call_dispatch_us"));
	ck_assert_ptr_nonnull(m = find(&c, "window_dispatch_us"));
	ck_assert_uint_eq(m->n_samples, 2);
	ck_assert(fabs(m->samples[0] - 12) < 1e-9 &&
		  fabs(m->samples[1] - 20) < 1e-9);
	ck_assert_ptr_nonnull(m = find(&c, "window_combine_us"));
	ck_assert(fabs(m->samples[0] - 31) < 1e-9 &&
		  fabs(m->samples[1] - 40) < 1e-9);
	ck_assert_ptr_nonnull(m = find(&c, "kernel_dispatch_us"));
	ck_assert(fabs(m->samples[0] - 5) < 1e-9 &&
		  fabs(m->samples[1] - 9) < 1e-9);
	ck_assert_ptr_nonnull(m = find(&c, "kernel_combine_us"));
	ck_assert(fabs(m->samples[0] - 8) < 1e-9 &&
		  fabs(m->samples[1] - 8) < 1e-9);
	eg_bench_calc_fini(&c);
	/* at the kernel boundary the gated times are the kernels': no
	 * second name; without kernel times, no kernel_ metrics */
	in.boundary = EG_BOUNDARY_KERNEL;
	in.kern_times = NULL;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_ptr_null(find(&c, "window_dispatch_us"));
	ck_assert_ptr_null(find(&c, "call_dispatch_us"));
	ck_assert_ptr_null(find(&c, "kernel_dispatch_us"));
	eg_bench_calc_fini(&c);
	in.boundary = EG_BOUNDARY_CALL;
	ck_assert_int_eq(eg_bench_compute(&in, &c), EG_OK);
	ck_assert_ptr_nonnull(m = find(&c, "call_combine_us"));
	ck_assert(fabs(m->samples[1] - 40) < 1e-9);
	eg_bench_calc_fini(&c);
}
END_TEST

/* The kernel boundary's union (lib/step/kern.c): overlapping kernels
 * counted once, gaps left out, and with a library span only the kernels
 * its API calls queued: an adapter's cast before the span and a copy
 * after it are not the library's time. */
START_TEST(kernel_union_span)
{
	/* out of order on purpose: the union sorts */
	eg_kern_iv_t iv[] = {
	    {.start = 300, .end = 340, .corr = 9}, /* adapter's copy out */
	    {.start = 100, .end = 150, .corr = 5}, /* library */
	    {.start = 120, .end = 180, .corr = 6}, /* library, overlapping */
	    {.start = 10, .end = 40, .corr = 2},   /* adapter's cast in */
	    {.start = 200, .end = 210, .corr = 7}, /* library, after a gap */
	};
	const uint32_t lib[] = {5, 6, 7}, none[] = {3};
	size_t n = sizeof(iv) / sizeof(iv[0]);

	/* every kernel: 30 + 80 + 10 + 40 */
	ck_assert_uint_eq(eg_kern_union(iv, n, NULL, 0), 160);
	/* the library's: 80 + 10; counting the adapter's would give 160 */
	ck_assert_uint_eq(eg_kern_union(iv, n, lib, 3), 90);
	/* a span whose API calls queued no kernel: nothing */
	ck_assert_uint_eq(eg_kern_union(iv, n, none, 1), 0);
	ck_assert_uint_eq(eg_kern_union(iv, 0, NULL, 0), 0);
	/* one id: one kernel */
	ck_assert_uint_eq(eg_kern_union(iv, n, lib + 2, 1), 10);
	/* outside a collector (none here), a mark is a no-op */
	eg_kern_mark(0);
	eg_kern_mark(1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("window");
	TCase *t = tcase_create("boundaries");

	tcase_add_test(t, names);
	tcase_add_test(t, env);
	tcase_add_test(t, hold_adapts);
	tcase_add_test(t, metrics_named);
	tcase_add_test(t, kernel_union_span);
	suite_add_tcase(s, t);
	return eg_test_main(s);
}
