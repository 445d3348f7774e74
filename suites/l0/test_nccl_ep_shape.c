/* The NCCL EP adapter's host side without NCCL EP
 * (plugins/nccl-ep/shape.c): its options, what it declares in each mode,
 * every shape limit it checks before calling NCCL EP (each one a case
 * NCCL EP would abort on, shown refused with its reason, and its edge
 * shown accepted), the sizes it configures, and the check of HT's
 * run-time compiler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eg_test.h"
#include "plugins/nccl-ep/shape.h"

static int opts(eg_nep_opts_t *o, const char *k, const char *v, char *err)
{
	const char *key[1] = {k}, *val[1] = {v};
	eg_plugin_opts_t po = {.n = k ? 1 : 0, .key = key, .value = val};

	return eg_nep_opts_parse(&po, o, err, 256);
}

START_TEST(test_options)
{
	eg_nep_opts_t o;
	char err[256];
	static const char *const bad[][2] = {
	    {"mode", "xx"},	{"mode", ""},	       {"sms", "-1"},
	    {"sms", "12x"},	{"qps", ""},	       {"recv", "1e3"},
	    {"layout", "flat"}, {"sms", "99999999999"}};

	ck_assert_int_eq(opts(&o, NULL, NULL, err), EG_PLUGIN_OK);
	ck_assert_int_eq(o.mode, EG_NEP_LL);
	ck_assert_int_eq(opts(&o, "mode", "ht", err), EG_PLUGIN_OK);
	ck_assert_int_eq(o.mode, EG_NEP_HT);
	ck_assert_int_eq(opts(&o, "mode", "ll", err), EG_PLUGIN_OK);
	ck_assert_int_eq(o.mode, EG_NEP_LL);
	ck_assert_int_eq(opts(&o, "sms", "24", err), EG_PLUGIN_OK);
	ck_assert_uint_eq(o.sms, 24);
	ck_assert_int_eq(opts(&o, "qps", "64", err), EG_PLUGIN_OK);
	ck_assert_uint_eq(o.qps, 64);
	ck_assert_int_eq(opts(&o, "recv", "9000", err), EG_PLUGIN_OK);
	ck_assert_uint_eq(o.recv, 9000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(opts(&o, bad[i][0], bad[i][1], err),
				 EG_PLUGIN_EFAIL);
		ck_assert_msg(strstr(err, bad[i][0]) &&
				  strstr(err, "mode=ll|ht"),
			      "%s=%s: %s", bad[i][0], bad[i][1], err);
	}
}
END_TEST

START_TEST(test_caps)
{
	eg_nep_opts_t o = {.mode = EG_NEP_LL};
	eg_plugin_caps_t c;

	memset(&c, 0, sizeof(c));
	eg_nep_caps(&o, &c);
	ck_assert_uint_eq(c.memory, EG_PLUGIN_MEM_CUDA);
	ck_assert_uint_eq(c.layout, EG_PLUGIN_LAYOUT_EXPERT_MAJOR);
	ck_assert_uint_eq(c.dtypes, EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_BF16));
	ck_assert_uint_eq(c.flags, EG_PLUGIN_WANTS_NCCL |
				       EG_PLUGIN_INPUT_IDX64 |
				       EG_PLUGIN_CAPTURE_SAFE);
	ck_assert_uint_eq(c.max_topk, 9);
	ck_assert_uint_eq(c.max_hidden, 8192);
	ck_assert_uint_eq(c.hidden_multiple, 128);
	ck_assert_uint_eq(c.max_experts, 65535);
	ck_assert_uint_eq(c.max_world, 64);
	ck_assert_str_eq(c.lib_name, "NCCL EP");
	o.mode = EG_NEP_HT;
	memset(&c, 0, sizeof(c));
	eg_nep_caps(&o, &c);
	ck_assert_uint_eq(c.layout, EG_PLUGIN_LAYOUT_FLAT);
	ck_assert_uint_eq(
	    c.flags, EG_PLUGIN_WANTS_NCCL | EG_PLUGIN_INPUT_IDX64 |
			 EG_PLUGIN_CAPTURE_SAFE | EG_PLUGIN_SLOTS_ANY_ORDER);
	ck_assert_uint_eq(c.max_tokens, 8192);
	ck_assert_uint_eq(c.max_topk, 32);
	ck_assert_uint_eq(c.max_hidden, 16384);
	ck_assert_uint_eq(c.hidden_multiple, 8);
	/* never the canonical combine order: NCCL EP does not promise it */
	ck_assert_uint_eq(c.flags & EG_PLUGIN_CANONICAL_ORDER, 0);
}
END_TEST

/* The H200 case of the issue: W=1, E=256, K=8, H=7168, 128 tokens. */
static eg_nep_shape_t base(void)
{
	return (eg_nep_shape_t){.world = 1,
				.experts = 256,
				.topk = 8,
				.hidden = 7168,
				.dtype = EG_PLUGIN_DTYPE_BF16,
				.max_tokens = 128,
				.device_sms = 132,
				.lsa = 1};
}

/* The plan for s, expecting rc; with ENOTSUP the reason must contain
 * word. */
static eg_nep_plan_t plan(eg_nep_mode_t mode, eg_nep_shape_t s, int rc,
			  const char *word)
{
	eg_nep_opts_t o = {.mode = mode};
	eg_nep_plan_t p;
	char why[256] = "";

	ck_assert_msg(eg_nep_plan(&o, &s, &p, why, sizeof(why)) == rc,
		      "mode %d E=%u K=%u H=%u T=%u W=%u: want %d (%s)", mode,
		      s.experts, s.topk, s.hidden, s.max_tokens, s.world, rc,
		      why);
	if (word)
		ck_assert_msg(strstr(why, word), "'%s' lacks '%s'", why, word);
	return p;
}

START_TEST(test_ll_limits)
{
	static const uint32_t good[] = {2048, 2560, 4096, 5120,
					6144, 7168, 8192};
	static const uint32_t bad[] = {128, 1024, 3072, 7040, 7296, 16384};
	eg_nep_shape_t s;
	eg_nep_plan_t p;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		s = base();
		s.hidden = good[i];
		plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = base();
		s.hidden = bad[i];
		plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "hidden");
	}
	s = base();
	s.topk = 9;
	plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	s.topk = 10;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "top-k");
	s = base();
	s.experts = s.topk = 1;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "2 experts");
	s.experts = 2;
	plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	/* ceil(E / SMs) <= 14 */
	s = base();
	s.experts = 14 * 132;
	plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	s.experts = 14 * 132 + 1;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "SMs");
	s = base();
	s.dtype = EG_PLUGIN_DTYPE_FP32;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "bf16");
	s.dtype = EG_PLUGIN_DTYPE_FP8;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "bf16");
	s = base();
	s.world = 3;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "divisible");
	s = base();
	s.world = 65;
	s.experts = 65 * 4;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "ranks");
	s = base();
	s.experts = 65536;
	s.device_sms = 0;
	plan(EG_NEP_LL, s, EG_PLUGIN_ENOTSUP, "16 bits");
	/* the plan: B = T, rows W x B, qps L (as ep_bench) */
	p = plan(EG_NEP_LL, base(), EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 128);
	ck_assert_uint_eq(p.L, 256);
	ck_assert_uint_eq(p.stride, 128);
	ck_assert_uint_eq(p.qps, 256);
	ck_assert_uint_eq(p.sms, 0);
	ck_assert_uint_eq(p.recv, 0); /* NCCL EP's default */
}
END_TEST

START_TEST(test_ll_tokens_rounded)
{
	eg_nep_shape_t s = base();
	eg_nep_plan_t p;

	/* (B x L) % 4 == 0: B grows from the most tokens of any rank */
	s.world = 2;
	s.experts = 2; /* L = 1 */
	s.max_tokens = 5;
	p = plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 8);
	ck_assert_uint_eq(p.stride, 16);
	s.experts = 4; /* L = 2 */
	p = plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 6);
	s.max_tokens = 0; /* no rank has tokens: still B > 0 */
	p = plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 2);
	s.experts = 16; /* L = 8 */
	s.max_tokens = 3;
	p = plan(EG_NEP_LL, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 3);
}
END_TEST

START_TEST(test_ht_limits)
{
	eg_nep_shape_t s = base();
	eg_nep_plan_t p;
	eg_nep_opts_t o = {.mode = EG_NEP_HT};
	char why[256];

	s.max_tokens = 4096;
	p = plan(EG_NEP_HT, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.B, 4096);
	ck_assert_uint_eq(p.recv, 4096);
	ck_assert_uint_eq(p.stride, 4096);
	ck_assert_uint_eq(p.qps, 0);
	s.max_tokens = 8192;
	plan(EG_NEP_HT, s, EG_PLUGIN_OK, NULL);
	s.max_tokens = 8193;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "8192");
	s = base();
	s.hidden = 104; /* 16-byte rows, not a multiple of 128 */
	plan(EG_NEP_HT, s, EG_PLUGIN_OK, NULL);
	s.hidden = 100;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "hidden");
	s.hidden = 16392;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "hidden");
	s = base();
	s.topk = 33;
	s.experts = 64;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "top-k");
	/* (L x ranks per NVLink domain) % 4 == 0 */
	s = base();
	s.experts = 6;
	s.topk = 2;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "multiple of 4");
	s.world = 2;
	s.lsa = 2;
	s.experts = 4; /* L = 2, 2 x 2 */
	p = plan(EG_NEP_HT, s, EG_PLUGIN_OK, NULL);
	ck_assert_uint_eq(p.recv, 256);
	s.lsa = 9;
	s.world = 9;
	s.experts = 36;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "GPUs per NVLink");
	s = base();
	s.experts = 1028;
	s.device_sms = 0;
	plan(EG_NEP_HT, s, EG_PLUGIN_ENOTSUP, "experts per rank");
	/* recv below B, qps below 2 x SMs: refused */
	s = base();
	o.recv = 100;
	ck_assert_int_eq(eg_nep_plan(&o, &s, &p, why, sizeof(why)),
			 EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "recv=100"));
	o.recv = 0;
	o.qps = 31;
	ck_assert_int_eq(eg_nep_plan(&o, &s, &p, why, sizeof(why)),
			 EG_PLUGIN_ENOTSUP);
	o.qps = 32;
	ck_assert_int_eq(eg_nep_plan(&o, &s, &p, why, sizeof(why)),
			 EG_PLUGIN_OK);
	o.sms = 200; /* beyond the device */
	ck_assert_int_eq(eg_nep_plan(&o, &s, &p, why, sizeof(why)),
			 EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "132 SMs"));
}
END_TEST

/* HT's flat dispatch asserts (B x ranks per NVLink domain) % 4 == 0, B
 * its max_dispatch_tokens_per_rank (NCCL EP 2.30.7, hybridep_adapter.cu:
 * the assert NCCL EP aborted on for 0, 33, 777 and 999 tokens with B =
 * the tokens): B grows from the most tokens of any rank until it holds. */
START_TEST(test_ht_tokens_rounded)
{
	static const struct {
		uint32_t tokens, lsa, B;
	} c[] = {
	    {0, 1, 4},	 /* no tokens: B 1 failed, 4 holds */
	    {33, 1, 36}, /* the masked case of 2026-12-01 */
	    {34, 1, 36}, /* even is not enough with one rank */
	    {777, 1, 780},   {999, 1, 1000}, {300, 1, 300}, {4096, 1, 4096},
	    {33, 2, 34},     {0, 2, 2},	     {33, 3, 36},   {33, 4, 33},
	    {1, 8, 1},	     {33, 0, 36}, /* domain unknown: a multiple of 4 */
	    {8191, 1, 8192},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		eg_nep_shape_t s = base();
		eg_nep_plan_t p;

		s.max_tokens = c[i].tokens;
		s.lsa = c[i].lsa;
		s.world = c[i].lsa ? c[i].lsa : 1;
		s.experts = 4 * s.world; /* L x lsa a multiple of 4 */
		p = plan(EG_NEP_HT, s, EG_PLUGIN_OK, NULL);
		ck_assert_msg(p.B == c[i].B, "T=%u lsa=%u: B %u, want %u",
			      c[i].tokens, c[i].lsa, p.B, c[i].B);
		ck_assert_uint_eq((uint64_t)p.B * (c[i].lsa ? c[i].lsa : 4) % 4,
				  0);
		ck_assert_uint_ge(p.recv, p.B);
	}
}
END_TEST

/* ---- HT's run-time compiler ---- */
static char tmpd[64];

static void clean_env(void)
{
	static const char *const vars[] = {"NCCL_EP_JIT_NVCC",
					   "NVCC",
					   "CUDA_HOME",
					   "CUDA_PATH",
					   "NCCL_EP_JIT_SOURCE_DIR",
					   "NCCL_EP_HOME",
					   "NCCL_EP_JIT_BUILD_INCLUDE_DIR",
					   "NCCL_HOME",
					   "NCCL_EP_JIT_CUDA_INCLUDE_DIR"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void touch(const char *dir, const char *name, int exe)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	if (exe)
		chmod(p, 0755);
}

static int ready(char *why)
{
	return eg_nep_jit_ready(why, 512);
}

START_TEST(test_jit_ready)
{
	char why[512], d[256];

	snprintf(tmpd, sizeof(tmpd), "/tmp/eg-nep-jit.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpd));
	clean_env();
	/* no nvcc anywhere */
	setenv("PATH", tmpd, 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "nvcc"));
	/* nvcc on PATH, directories left to the library */
	touch(tmpd, "nvcc", 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_OK);
	/* an explicit compiler that is not there */
	setenv("NCCL_EP_JIT_NVCC", "/nonexistent/nvcc", 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent/nvcc"));
	unsetenv("NCCL_EP_JIT_NVCC");
	/* CUDA_HOME/bin/nvcc; CUDA_HOME/include lacks cuda_runtime.h */
	snprintf(d, sizeof(d), "%s/bin", tmpd);
	mkdir(d, 0755);
	touch(d, "nvcc", 1);
	setenv("CUDA_HOME", tmpd, 1);
	setenv("PATH", "/nonexistent", 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "cuda_runtime.h"));
	snprintf(d, sizeof(d), "%s/include", tmpd);
	mkdir(d, 0755);
	touch(d, "cuda_runtime.h", 0);
	ck_assert_int_eq(ready(why), EG_PLUGIN_OK);
	/* NCCL EP's headers and NCCL's named, and missing */
	setenv("NCCL_EP_JIT_SOURCE_DIR", tmpd, 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "common.hpp"));
	touch(tmpd, "common.hpp", 0);
	setenv("NCCL_HOME", tmpd, 1);
	ck_assert_int_eq(ready(why), EG_PLUGIN_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "nccl_device.h"));
	touch(d, "nccl_device.h", 0);
	ck_assert_int_eq(ready(why), EG_PLUGIN_OK);
	static const char *const made[] = {"nvcc",
					   "common.hpp",
					   "bin/nvcc",
					   "include/cuda_runtime.h",
					   "include/nccl_device.h",
					   "include",
					   "bin"};
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(d, sizeof(d), "%s/%s", tmpd, made[i]);
		ck_assert_int_eq(remove(d), 0);
	}
	ck_assert_int_eq(rmdir(tmpd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nccl_ep_shape");
	TCase *tc = tcase_create("shape");

	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_ll_limits);
	tcase_add_test(tc, test_ll_tokens_rounded);
	tcase_add_test(tc, test_ht_limits);
	tcase_add_test(tc, test_ht_tokens_rounded);
	tcase_add_test(tc, test_jit_ready);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
