/* Workload keys, validation, token modes, the repro command and the INI
 * loader, including every fixture under fixtures/workloads/. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/workload.h"

#define ERR_LEN (EG_ERRMSG_MAX + 512)

static const char *srcdir(void)
{
	const char *d = getenv("EG_SRCDIR");

	if (d && *d)
		return d;
#ifdef EG_SRCDIR
	return EG_SRCDIR;
#else
	return ".";
#endif
}

/* Sets key=value, failing the test with the message on error. */
static void set_ok(eg_workload_t *w, const char *key, const char *value)
{
	char err[EG_ERRMSG_MAX] = "";
	int rc = eg_workload_set(w, key, value, err);

	ck_assert_msg(rc == 0, "%s=%s: %s", key, value, err);
}

/* Applies "k=v k=v ..." to a fresh workload. */
static void build(eg_workload_t *w, const char *spec)
{
	char buf[512], *save = NULL, *tok;

	eg_workload_init(w);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		ck_assert_msg(eq != NULL, "bad spec %s", tok);
		*eq = '\0';
		set_ok(w, tok, eq + 1);
	}
}

static int same_workload(const eg_workload_t *a, const eg_workload_t *b)
{
	if (strcmp(a->name, b->name) || a->world != b->world ||
	    a->experts != b->experts || a->topk != b->topk ||
	    a->hidden != b->hidden || a->dtype != b->dtype ||
	    a->tokens_mode != b->tokens_mode || a->tokens != b->tokens ||
	    a->n_tokens_list != b->n_tokens_list ||
	    a->zero_ranks != b->zero_ranks || a->routing != b->routing ||
	    a->zipf_s != b->zipf_s || a->hot_target != b->hot_target ||
	    a->hot_frac != b->hot_frac || a->mask_ratio != b->mask_ratio ||
	    a->data != b->data || a->seed != b->seed || a->iter != b->iter ||
	    a->steps != b->steps || a->dup_ratio != b->dup_ratio ||
	    a->nonfinite != b->nonfinite || a->nonfinite_p != b->nonfinite_p ||
	    a->nonfinite_expert != b->nonfinite_expert ||
	    strcmp(a->step_tokens, b->step_tokens))
		return 0;
	if (!a->n_tokens_list)
		return 1;
	return !memcmp(a->tokens_list, b->tokens_list,
		       a->n_tokens_list * sizeof(*a->tokens_list));
}

START_TEST(test_defaults)
{
	eg_workload_t w;
	char err[EG_ERRMSG_MAX] = "", s[256];

	eg_workload_init(&w);
	ck_assert_str_eq(w.name, "default");
	ck_assert_uint_eq(w.world, 2);
	ck_assert_uint_eq(w.experts, 8);
	ck_assert_uint_eq(w.topk, 2);
	ck_assert_uint_eq(w.hidden, 128);
	ck_assert_uint_eq(w.tokens, 16);
	ck_assert_int_eq(w.tokens_mode, EG_TOKENS_UNIFORM);
	ck_assert_ptr_null(w.tokens_list);
	ck_assert_uint_eq(w.zero_ranks, 0);
	ck_assert_int_eq(w.dtype, EG_DTYPE_BF16);
	ck_assert_int_eq(w.routing, EG_ROUTING_UNIFORM);
	ck_assert(w.zipf_s == 1.0 && w.hot_frac == 1.0);
	ck_assert_uint_eq(w.hot_target, 0);
	ck_assert(w.mask_ratio == 0.0);
	ck_assert_int_eq(w.data, EG_DATA_EXACT);
	ck_assert_uint_eq(w.seed, 1);
	ck_assert_uint_eq(w.iter, 0);
	ck_assert_int_eq(eg_workload_validate(&w, err), 0);
	ck_assert_uint_eq(eg_workload_local_experts(&w), 4);
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 32);
	ck_assert_int_eq(eg_workload_summary(&w, s, sizeof(s)), 0);
	ck_assert_str_eq(s, "W=2 E=8 K=2 H=128 T=16 bf16 uniform exact seed=1");
	ck_assert_str_eq(eg_routing_name(EG_ROUTING_HOT_RANK), "hot-rank");
	ck_assert_str_eq(eg_data_mode_name(EG_DATA_RANDOM), "random");
	eg_workload_fini(&w);
}
END_TEST

START_TEST(test_every_key)
{
	eg_workload_t w;

	eg_workload_init(&w);
	set_ok(&w, "name", "my-case_1.x");
	set_ok(&w, "world", "8");
	set_ok(&w, "experts", "0x40");
	set_ok(&w, "topk", "6");
	set_ok(&w, "hidden", "1048576");
	set_ok(&w, "dtype", "fp8");
	set_ok(&w, "tokens", "uneven:9");
	set_ok(&w, "zero_ranks", "0,5,63");
	set_ok(&w, "routing", "hot-rank:3:0.25");
	set_ok(&w, "mask", "0.5");
	set_ok(&w, "data", "random");
	set_ok(&w, "seed", "0xFFFFFFFFFFFFFFFF");
	set_ok(&w, "iter", "16777215");
	ck_assert_str_eq(w.name, "my-case_1.x");
	ck_assert_uint_eq(w.world, 8);
	ck_assert_uint_eq(w.experts, 64);
	ck_assert_uint_eq(w.topk, 6);
	ck_assert_uint_eq(w.hidden, EG_HIDDEN_MAX);
	ck_assert_int_eq(w.dtype, EG_DTYPE_FP8);
	ck_assert_int_eq(w.tokens_mode, EG_TOKENS_UNEVEN);
	ck_assert_uint_eq(w.tokens, 9);
	ck_assert_uint_eq(w.zero_ranks, 1ull | 1ull << 5 | 1ull << 63);
	ck_assert_int_eq(w.routing, EG_ROUTING_HOT_RANK);
	ck_assert_uint_eq(w.hot_target, 3);
	ck_assert(w.hot_frac == 0.25);
	ck_assert(w.mask_ratio == 0.5);
	ck_assert_int_eq(w.data, EG_DATA_RANDOM);
	ck_assert_uint_eq(w.seed, UINT64_MAX);
	ck_assert_uint_eq(w.iter, 0xffffff);

	set_ok(&w, "seed", "18446744073709551615");
	ck_assert_uint_eq(w.seed, UINT64_MAX);
	set_ok(&w, "seed", "010"); /* decimal, not octal */
	ck_assert_uint_eq(w.seed, 10);
	set_ok(&w, "routing", "zipf:1.5");
	ck_assert_int_eq(w.routing, EG_ROUTING_ZIPF);
	ck_assert(w.zipf_s == 1.5);
	/* switching routing resets the unused parameters */
	ck_assert_uint_eq(w.hot_target, 0);
	ck_assert(w.hot_frac == 1.0);
	set_ok(&w, "routing", "hot-expert:7");
	ck_assert_int_eq(w.routing, EG_ROUTING_HOT_EXPERT);
	ck_assert_uint_eq(w.hot_target, 7);
	ck_assert(w.hot_frac == 1.0 && w.zipf_s == 1.0);
	set_ok(&w, "routing", "uniform");
	ck_assert_int_eq(w.routing, EG_ROUTING_UNIFORM);
	set_ok(&w, "tokens", "list:3,0,7");
	ck_assert_int_eq(w.tokens_mode, EG_TOKENS_LIST);
	ck_assert_uint_eq(w.n_tokens_list, 3);
	ck_assert_uint_eq(w.tokens_list[2], 7);
	ck_assert_uint_eq(w.tokens, 7); /* T_max */
	set_ok(&w, "tokens", "12");
	ck_assert_int_eq(w.tokens_mode, EG_TOKENS_UNIFORM);
	ck_assert_ptr_null(w.tokens_list);
	ck_assert_uint_eq(w.n_tokens_list, 0);
	set_ok(&w, "zero_ranks", "");
	ck_assert_uint_eq(w.zero_ranks, 0);
	set_ok(&w, "dtype", "fp32");
	ck_assert_int_eq(w.dtype, EG_DTYPE_FP32);
	set_ok(&w, "dtype", "bf16");
	ck_assert_int_eq(w.dtype, EG_DTYPE_BF16);
	set_ok(&w, "data", "exact");
	ck_assert_int_eq(w.data, EG_DATA_EXACT);
	set_ok(&w, "mask", "1");
	ck_assert(w.mask_ratio == 1.0);
	set_ok(&w, "mask", "1e-3");
	ck_assert(w.mask_ratio == 1e-3);
	eg_workload_fini(&w);
}
END_TEST

static const struct {
	const char *key, *value, *expect;
} bad_values[] = {
    {"world", "-3", "world: \"-3\" is not a non-negative integer"},
    {"world", "+3", "world: \"+3\" is not a non-negative integer"},
    {"world", " 3", "is not a non-negative integer"},
    {"world", "3 ", "world: \"3 \" is not a non-negative integer"},
    {"world", "4x", "world: \"4x\" is not a non-negative integer"},
    {"world", "", "world: empty value"},
    {"world", "4097", "world: 4097 is out of range [0, 4096]"},
    {"experts", "65537", "experts: 65537 is out of range [0, 65536]"},
    {"topk", "99999999999999999999999", "topk: 9999"},
    {"hidden", "1048577", "hidden: 1048577 is out of range [0, 1048576]"},
    {"hidden", "0x", "hidden: \"0x\" is not a non-negative integer"},
    {"seed", "18446744073709551616",
     "seed: 18446744073709551616 is out of range"},
    {"seed", "-1", "seed: \"-1\" is not a non-negative integer"},
    {"seed", "0xg", "seed: \"0xg\" is not a non-negative integer"},
    {"iter", "16777216", "iter: 16777216 is out of range [0, 16777215]"},
    {"iter", "", "iter: empty value"},
    {"name", "", "name: empty value"},
    {"name", "a b", "name: \"a b\" must start with a letter or digit"},
    {"name", "-x", "name: \"-x\""},
    {"name", "x234567890123456789012345678901234567890123456789012345678901234",
     "longer than 63 characters"},
    {"dtype", "fp16", "dtype: unknown dtype \"fp16\" (bf16, fp32, fp8)"},
    {"dtype", "BF16", "dtype: unknown dtype \"BF16\""},
    {"dtype", "", "dtype: empty value"},
    {"tokens", "", "tokens: empty value"},
    {"tokens", "-1", "tokens: \"-1\" is not a non-negative integer"},
    {"tokens", "16777217", "tokens: 16777217 is out of range [0, 16777216]"},
    {"tokens", "uneven:", "tokens: empty value"},
    {"tokens", "uneven:x", "tokens: \"x\" is not a non-negative integer"},
    {"tokens", "list:", "tokens: \"list:\" needs entries"},
    {"tokens", "list:1,,2", "tokens: empty entry 2"},
    {"tokens", "list:1,2,", "tokens: empty entry 3"},
    {"tokens", "list:1,-2", "tokens: \"-2\" is not a non-negative integer"},
    {"tokens", "lst:1,2", "tokens: \"lst:1,2\" is not a non-negative"},
    {"zero_ranks", "64", "zero_ranks: rank 64 is not below 64"},
    {"zero_ranks", "1,,2", "zero_ranks: \"1,,2\" is not a comma list"},
    {"zero_ranks", "1,", "zero_ranks: \"1,\" ends with a comma"},
    {"zero_ranks", "a", "zero_ranks: \"a\" is not a non-negative integer"},
    {"routing", "zipff",
     "routing: unknown routing \"zipff\" (uniform, "
     "zipf:S, hot-expert:E[:P], hot-rank:R[:P])"},
    {"routing", "", "routing: empty value"},
    {"routing", "zipf", "routing: \"zipf\" needs a parameter"},
    {"routing", "zipf:0", "routing: zipf exponent 0 must be > 0"},
    {"routing", "zipf:-1",
     "routing: zipf exponent: -1 is out of range [0, 100]"},
    {"routing", "zipf:nan", "routing: zipf exponent: \"nan\" is not a"},
    {"routing", "zipf:101",
     "routing: zipf exponent: 101 is out of range [0, 100]"},
    {"routing", "hot-expert", "routing: \"hot-expert\" needs a parameter"},
    {"routing", "hot-expert:", "routing: hot-expert target: empty value"},
    {"routing", "hot-expert:x", "routing: hot-expert target: \"x\" is not"},
    {"routing", "hot-expert:1:1.5",
     "routing: hot-expert probability: 1.5 is out of range [0, 1]"},
    {"routing", "hot-rank:1:", "routing: hot-rank probability: empty"},
    {"routing", "hot-rank:1:0.5:2",
     "routing: hot-rank probability: "
     "\"0.5:2\" is not a number"},
    {"mask", "1.5", "mask: 1.5 is out of range [0, 1]"},
    {"mask", "-0.1", "mask: -0.1 is out of range [0, 1]"},
    {"mask", "inf", "mask: \"inf\" is not a number"},
    {"mask", "0.5x", "mask: \"0.5x\" is not a number"},
    {"mask", "", "mask: empty value"},
    {"data", "exactly",
     "data: unknown data mode \"exactly\" (exact, "
     "random)"},
    {"data", "", "data: empty value"},
    {"dup", "1.5", "dup: 1.5 is out of range [0, 1]"},
    {"dup", "", "dup: empty value"},
    {"nonfinite", "", "nonfinite: empty value"},
    {"nonfinite", "nan",
     "nonfinite: unknown mode \"nan\" (none, input:P, "
     "expert:E)"},
    {"nonfinite", "input:1.5",
     "nonfinite: input probability: 1.5 is out of range [0, 1]"},
    {"nonfinite", "input:0",
     "nonfinite: input probability 0 carries none (use nonfinite=none)"},
    {"nonfinite", "expert:x", "nonfinite: expert: \"x\" is not"},
    {"step_tokens", "1,", "step_tokens: entry 1 \"1,\" is not N or a,b"},
    {"step_tokens", "1//2", "step_tokens: entry 2 \"\" is not N"},
    {"step_tokens", "1, 2", "step_tokens: entry 1 \"1, 2\" is not N"},
    {"step_tokens", "3/x", "step_tokens: entry 2 \"x\" is not N"},
    {"step_tokens", "16777217", "step_tokens: entry 1: 16777217 tokens"},
    {"wrold", "4", "unknown key \"wrold\" (name, world, experts"},
    {"", "4", "empty key"},
};

/* A rejected value leaves the workload as it was. */
START_TEST(test_bad_values)
{
	eg_workload_t w;
	char err[EG_ERRMSG_MAX], before[1024], after[1024];
	size_t i = (size_t)_i;
	int rc;

	build(&w, "tokens=list:1,2 routing=hot-rank:1:0.5 zero_ranks=1 "
		  "mask=0.25 seed=9 iter=3 name=keep");
	ck_assert_int_eq(eg_workload_to_args(&w, before, sizeof(before)), 0);
	err[0] = '\0';
	rc = eg_workload_set(&w, bad_values[i].key, bad_values[i].value, err);
	ck_assert_msg(rc < 0, "%s=\"%s\" accepted", bad_values[i].key,
		      bad_values[i].value);
	ck_assert_msg(strstr(err, bad_values[i].expect) != NULL,
		      "%s=\"%s\": got \"%s\", want \"%s\"", bad_values[i].key,
		      bad_values[i].value, err, bad_values[i].expect);
	ck_assert_msg(!strchr(err, '\n'), "multi-line message \"%s\"", err);
	ck_assert_int_eq(eg_workload_to_args(&w, after, sizeof(after)), 0);
	ck_assert_str_eq(before, after);
	eg_workload_fini(&w);
}
END_TEST

static const struct {
	const char *spec, *expect;
} bad_workloads[] = {
    {"world=0", "world=0: need at least one rank"},
    {"world=4 experts=10", "experts=10 is not divisible by world=4"},
    {"experts=0", "experts=0: need at least one expert"},
    {"topk=9", "topk=9 exceeds experts=8"},
    {"topk=0", "topk=0: need at least one expert per token"},
    {"hidden=0", "hidden=0: need at least one channel"},
    {"dtype=fp8 hidden=100", "dtype=fp8 needs hidden to be a multiple of "
			     "128 (hidden=100)"},
    {"dtype=fp8 hidden=64", "(hidden=64)"},
    {"world=4 tokens=list:1,2,3", "tokens: list has 3 entries but world=4"},
    {"tokens=list:1,2,3", "tokens: list has 3 entries but world=2"},
    {"zero_ranks=2", "zero_ranks: rank 2 is not below world=2"},
    {"routing=hot-expert:8", "routing: hot expert 8 is not below experts=8"},
    {"routing=hot-rank:2", "routing: hot rank 2 is not below world=2"},
    {"nonfinite=expert:8", "nonfinite: expert 8 is not below experts=8"},
    {"experts=64 topk=64", "data=exact: topk=64 is too large for exact sums"
			   " in bf16 (8 significand bits allow topk <= "
			   "63)"},
    {"experts=64 topk=64 dtype=fp8 hidden=128", "in bf16, fp8's combine type"},
    {"tokens=4 step_tokens=1", "step_tokens: needs steps of 2 or more"},
    {"tokens=4 steps=2 step_tokens=1/1,2,3",
     "step_tokens: entry 2 has 3 counts but world=2"},
    {"tokens=list:4,2 steps=3 step_tokens=0/4,3",
     "step_tokens: entry 2 gives rank 1 3 tokens, more than its 2 of step "
     "0"},
    {"world=1024 experts=1024 tokens=16385",
     "tokens: 16778240 tokens in total exceed the limit 16777216"},
};

START_TEST(test_validate_errors)
{
	eg_workload_t w;
	char err[EG_ERRMSG_MAX] = "";
	size_t i = (size_t)_i;

	build(&w, bad_workloads[i].spec);
	ck_assert_msg(eg_workload_validate(&w, err) < 0, "\"%s\" accepted",
		      bad_workloads[i].spec);
	ck_assert_msg(strstr(err, bad_workloads[i].expect) != NULL,
		      "\"%s\": got \"%s\", want \"%s\"", bad_workloads[i].spec,
		      err, bad_workloads[i].expect);
	eg_workload_fini(&w);
}
END_TEST

/* The neighbours of each limit pass. */
START_TEST(test_validate_edges)
{
	static const char *const good[] = {
	    "world=1 experts=1 topk=1 hidden=1 tokens=0",
	    "experts=8 topk=8",
	    "experts=64 topk=63 tokens=1",
	    "experts=64 topk=64 data=random",
	    "experts=64 topk=64 dtype=fp32",
	    "dtype=fp8 hidden=128",
	    "world=4 experts=4 tokens=list:0,0,37,0",
	    "zero_ranks=0,1",
	    "routing=hot-expert:7:0",
	    "routing=hot-rank:1",
	    "world=1024 experts=1024 tokens=16384",
	    "world=64 experts=64 zero_ranks=63",
	};
	char err[EG_ERRMSG_MAX];

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		eg_workload_t w;

		build(&w, good[i]);
		err[0] = '\0';
		ck_assert_msg(eg_workload_validate(&w, err) == 0, "%s: %s",
			      good[i], err);
		eg_workload_fini(&w);
	}
}
END_TEST

/* Workloads filled in by code are held to the same limits. */
START_TEST(test_validate_struct)
{
	eg_workload_t w;
	char err[EG_ERRMSG_MAX];

	eg_workload_init(&w);
	w.mask_ratio = 1.5;
	ck_assert_int_lt(eg_workload_validate(&w, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "mask=1.5 is outside [0, 1]"));
	eg_workload_init(&w);
	w.routing = EG_ROUTING_ZIPF;
	w.zipf_s = 0.0;
	ck_assert_int_lt(eg_workload_validate(&w, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "zipf exponent 0"));
	eg_workload_init(&w);
	w.tokens_mode = EG_TOKENS_LIST; /* without a list */
	ck_assert_int_lt(eg_workload_validate(&w, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "list has 0 entries but world=2"));
	eg_workload_init(&w);
	w.name[0] = '\0';
	ck_assert_int_lt(eg_workload_validate(&w, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "name: empty value"));
}
END_TEST

START_TEST(test_exact_budget)
{
	static const struct {
		const char *spec;
		uint32_t a;
	} cases[] = {
	    {"topk=1", 63},
	    {"topk=2", 31},
	    {"experts=64 topk=8", 7},
	    {"experts=64 topk=63", 1},
	    {"experts=64 topk=64", 0},
	    {"dtype=fp8 topk=2", 31},  /* combines in bf16 */
	    {"dtype=fp32 topk=1", 64}, /* capped */
	    {"dtype=fp32 experts=65536 topk=65536", 63},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		eg_workload_t w;

		build(&w, cases[i].spec);
		ck_assert_msg(eg_exact_budget(&w) == cases[i].a,
			      "%s: budget %u, want %u", cases[i].spec,
			      eg_exact_budget(&w), cases[i].a);
		eg_workload_fini(&w);
	}
}
END_TEST

START_TEST(test_token_modes)
{
	static const uint32_t uneven[] = {4, 3, 2, 1, 0, 0, 0, 0};
	static const uint32_t listed[] = {0, 0, 37, 0};
	eg_workload_t w;

	build(&w, "world=8 experts=8 tokens=uneven:4");
	for (uint32_t r = 0; r < 8; r++)
		ck_assert_uint_eq(eg_workload_tokens(&w, r), uneven[r]);
	ck_assert_uint_eq(eg_workload_tokens(&w, 8), 0); /* beyond W */
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 10);
	set_ok(&w, "zero_ranks", "0,2");
	ck_assert_uint_eq(eg_workload_tokens(&w, 0), 0);
	ck_assert_uint_eq(eg_workload_tokens(&w, 1), 3);
	ck_assert_uint_eq(eg_workload_tokens(&w, 2), 0);
	ck_assert_uint_eq(eg_workload_tokens(&w, 3), 1);
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 4);
	eg_workload_fini(&w);

	build(&w, "world=4 experts=4 tokens=list:0,0,37,0");
	for (uint32_t r = 0; r < 4; r++)
		ck_assert_uint_eq(eg_workload_tokens(&w, r), listed[r]);
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 37);
	set_ok(&w, "zero_ranks", "2");
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 0);
	eg_workload_fini(&w);

	build(&w, "world=3 experts=3 tokens=5 zero_ranks=1");
	ck_assert_uint_eq(eg_workload_tokens(&w, 0), 5);
	ck_assert_uint_eq(eg_workload_tokens(&w, 1), 0);
	ck_assert_uint_eq(eg_workload_tokens(&w, 2), 5);
	ck_assert_uint_eq(eg_workload_total_tokens(&w), 10);
	eg_workload_fini(&w);
}
END_TEST

/* Steps: drawn counts (one rank none, each within its step-0 count) or
 * the ones step_tokens names, entry (s - 1) mod entries; a new seed. */
START_TEST(test_steps)
{
	eg_workload_t w, s;
	char err[EG_ERRMSG_MAX] = "";

	build(&w, "world=3 experts=3 tokens=list:6,5,4 steps=5");
	for (uint32_t i = 1; i < 5; i++) {
		uint32_t none = 0;

		ck_assert_int_eq(eg_workload_step(&w, i, &s), 0);
		ck_assert_uint_ne(s.seed, w.seed);
		for (uint32_t r = 0; r < 3; r++) {
			ck_assert_uint_le(eg_workload_tokens(&s, r),
					  eg_workload_tokens(&w, r));
			none += eg_workload_tokens(&s, r) == 0;
		}
		ck_assert_uint_ge(none, 1);
		eg_workload_fini(&s);
	}
	set_ok(&w, "step_tokens", "0/6,0,4/1");
	ck_assert_int_eq(eg_workload_validate(&w, err), 0);
	static const uint32_t want[5][3] = {
	    {6, 5, 4}, {0, 0, 0}, {6, 0, 4}, {1, 1, 1}, {0, 0, 0}};
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert_int_eq(eg_workload_step(&w, i, &s), 0);
		for (uint32_t r = 0; r < 3; r++)
			ck_assert_uint_eq(eg_workload_tokens(&s, r),
					  want[i][r]);
		eg_workload_fini(&s);
	}
	eg_workload_fini(&w);
}
END_TEST

START_TEST(test_copy)
{
	eg_workload_t a, b;

	build(&a, "world=3 experts=3 tokens=list:4,5,6 name=orig");
	ck_assert_int_eq(eg_workload_copy(&b, &a), 0);
	ck_assert(same_workload(&a, &b));
	ck_assert_ptr_ne(a.tokens_list, b.tokens_list);
	eg_workload_fini(&a);
	ck_assert_uint_eq(eg_workload_tokens(&b, 2), 6);
	eg_workload_fini(&b);
}
END_TEST

/* Parses "epgate check --k=v ..." back into a fresh workload. */
static void parse_args(const char *args, eg_workload_t *w)
{
	char buf[4096], *save = NULL, *tok;
	int n = 0;

	eg_workload_init(w);
	snprintf(buf, sizeof(buf), "%s", args);
	ck_assert_int_eq(strncmp(buf, "epgate check --", 15), 0);
	strtok_r(buf, " ", &save);
	ck_assert_str_eq(strtok_r(NULL, " ", &save), "check");
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *eq = strchr(tok, '=');

		ck_assert_int_eq(strncmp(tok, "--", 2), 0);
		ck_assert_ptr_nonnull(eq);
		*eq = '\0';
		set_ok(w, tok + 2, eq + 1);
		n++;
	}
	/* every key every time; steps, step_tokens and dup when set */
	ck_assert_int_ge(n, 13);
}

START_TEST(test_to_args_roundtrip)
{
	static const char *const specs[] = {
	    "",
	    "name=rt-1 world=4 experts=16 topk=4 hidden=256 tokens=64",
	    "world=4 experts=16 tokens=uneven:3 zero_ranks=0,3 mask=0.1",
	    "world=4 experts=4 tokens=list:0,0,37,0 routing=zipf:2.5",
	    "routing=hot-expert:7:0.3 dtype=fp8 data=random",
	    "routing=hot-rank:1 seed=0xdeadbeefcafef00d iter=2",
	    "seed=18446744073709551615 dtype=fp32 mask=1 tokens=0",
	    "world=64 experts=64 zero_ranks=63,0 routing=hot-rank:63:0",
	    "world=3 experts=3 tokens=5 steps=4 step_tokens=0/5,0,1/3 dup=0.25",
	    "nonfinite=input:0.125 mask=0.3 data=random",
	    "world=4 experts=16 nonfinite=expert:15",
	};
	char a1[4096], a2[4096];

	for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
		eg_workload_t w, back;

		build(&w, specs[i]);
		ck_assert_int_eq(eg_workload_to_args(&w, a1, sizeof(a1)), 0);
		parse_args(a1, &back);
		ck_assert_msg(same_workload(&w, &back), "\"%s\" -> \"%s\"",
			      specs[i], a1);
		ck_assert_int_eq(eg_workload_to_args(&back, a2, sizeof(a2)), 0);
		ck_assert_str_eq(a1, a2);
		eg_workload_fini(&w);
		eg_workload_fini(&back);
	}
}
END_TEST

/* Doubles that need all 17 digits survive; short ones stay short. */
START_TEST(test_to_args_doubles)
{
	eg_workload_t w, back;
	char a[1024];

	eg_workload_init(&w);
	w.mask_ratio = 1.0 / 3.0;
	w.routing = EG_ROUTING_HOT_EXPERT;
	w.hot_target = 3;
	w.hot_frac = 0.1 + 0.2; /* 0.30000000000000004 */
	ck_assert_int_eq(eg_workload_to_args(&w, a, sizeof(a)), 0);
	parse_args(a, &back);
	ck_assert(back.mask_ratio == w.mask_ratio);
	ck_assert(back.hot_frac == w.hot_frac);
	ck_assert_ptr_nonnull(
	    strstr(a, "--routing=hot-expert:3:0.30000000000000004"));
	eg_workload_fini(&back);

	set_ok(&w, "mask", "0.1");
	ck_assert_int_eq(eg_workload_to_args(&w, a, sizeof(a)), 0);
	ck_assert_ptr_nonnull(strstr(a, " --mask=0.1 "));
	ck_assert_str_eq(strstr(a, " --data="),
			 " --data=exact --seed=1 --iter=0");
}
END_TEST

START_TEST(test_to_args_short_buffer)
{
	eg_workload_t w;
	char a[1024], small[20];

	build(&w, "world=4 experts=4 tokens=list:1,2,3,4");
	ck_assert_int_eq(eg_workload_to_args(&w, a, sizeof(a)), 0);
	ck_assert_str_eq(a, "epgate check --name=default --world=4 "
			    "--experts=4 --topk=2 --hidden=128 "
			    "--tokens=list:1,2,3,4 --zero_ranks= --dtype=bf16 "
			    "--routing=uniform --mask=0 --data=exact --seed=1 "
			    "--iter=0");
	memset(small, 'x', sizeof(small));
	ck_assert_int_eq(eg_workload_to_args(&w, small, sizeof(small)),
			 EG_ERANGE);
	ck_assert_ptr_nonnull(memchr(small, '\0', sizeof(small)));
	ck_assert_int_eq(eg_workload_summary(&w, small, 8), EG_ERANGE);
	ck_assert_int_eq(eg_workload_summary(&w, a, sizeof(a)), 0);
	ck_assert_str_eq(a, "W=4 E=4 K=2 H=128 T=list:1,2,3,4 bf16 uniform "
			    "exact seed=1");
	eg_workload_fini(&w);

	build(&w, "world=4 experts=16 topk=4 hidden=256 tokens=uneven:64 "
		  "zero_ranks=1 routing=zipf:2 mask=0.5 data=random iter=3");
	ck_assert_int_eq(eg_workload_summary(&w, a, sizeof(a)), 0);
	ck_assert_str_eq(a, "W=4 E=16 K=4 H=256 T=uneven:64 zero=1 bf16 "
			    "zipf:2 mask=0.5 random seed=1 iter=3");
	eg_workload_fini(&w);
}
END_TEST

static void path_of(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/fixtures/workloads/%s", srcdir(), rel);
}

static const eg_workload_t *find(const eg_workload_list_t *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].name, name))
			return &l->items[i];
	return NULL;
}

START_TEST(test_load_matrix)
{
	eg_workload_list_t l;
	char path[1024], err[ERR_LEN] = "", msg[EG_ERRMSG_MAX];
	unsigned seen = 0;
	const eg_workload_t *w;

	path_of(path, sizeof(path), "l1-matrix.ini");
	ck_assert_msg(eg_workload_load(path, &l, err) == 0, "%s", err);
	ck_assert_uint_ge(l.n, 60);
	for (size_t i = 0; i < l.n; i++) {
		const eg_workload_t *x = &l.items[i];

		ck_assert_msg(eg_workload_validate(x, msg) == 0, "%s: %s",
			      x->name, msg);
		ck_assert_msg(strspn(x->name, "abcdefghijklmnopqrstuvwxyz"
					      "0123456789-") == strlen(x->name),
			      "%s is not kebab-case", x->name);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(x->name, l.items[j].name);
		/* Which edge cases does the matrix reach? */
		uint32_t zero = 0, with = 0;
		for (uint32_t r = 0; r < x->world; r++)
			eg_workload_tokens(x, r) ? with++ : zero++;
		seen |= (zero && with) << 0;
		seen |= (with == 1 && x->world > 1) << 1;
		seen |= (x->tokens_mode == EG_TOKENS_UNEVEN && zero) << 2;
		seen |= (with == 0) << 3;
		seen |= (x->mask_ratio == 1.0) << 4;
		seen |= (x->routing == EG_ROUTING_HOT_EXPERT &&
			 x->hot_frac == 1.0 && x->topk == 1)
			<< 5;
		seen |= (x->routing == EG_ROUTING_HOT_RANK) << 6;
		seen |= (x->routing == EG_ROUTING_ZIPF) << 7;
		seen |= (x->tokens == 1 && x->tokens_mode == 0) << 8;
		seen |= (x->topk == 1) << 9;
		seen |=
		    (x->topk == eg_workload_local_experts(x) && x->world > 1)
		    << 10;
		seen |= (x->topk == x->experts) << 11;
		seen |= (x->world == 1) << 12;
		seen |= (x->world == 3 || x->world == 5 || x->world == 6 ||
			 x->world == 7)
			<< 13;
		seen |= (x->experts == x->world) << 14;
		seen |= (x->experts >= 256 && x->topk == 8) << 15;
		seen |= (x->hidden == 1) << 16;
		seen |= (x->hidden % 8 != 0 && x->hidden > 1) << 17;
		seen |= (x->dtype == EG_DTYPE_FP8) << 18;
		seen |= (x->dtype == EG_DTYPE_FP32) << 19;
		seen |= (x->data == EG_DATA_RANDOM && x->dtype == EG_DTYPE_FP8)
			<< 20;
		seen |= (x->iter == 2) << 21;
		seen |= (x->tokens == 128) << 22;
		seen |= (x->mask_ratio > 0 && x->mask_ratio < 1) << 23;
		seen |=
		    (x->routing == EG_ROUTING_HOT_EXPERT && x->hot_frac == 0.5)
		    << 24;
	}
	ck_assert_msg(seen == (1u << 25) - 1, "edge cases missing: 0x%x",
		      ~seen & ((1u << 25) - 1));

	/* defaults from the top of the file, overrides per section */
	w = find(&l, "base-w4");
	ck_assert_ptr_nonnull(w);
	ck_assert(w->world == 4 && w->experts == 16 && w->topk == 4 &&
		  w->hidden == 128 && w->tokens == 32);
	w = find(&l, "one-rank-r2");
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(eg_workload_tokens(w, 2), 37);
	ck_assert_uint_eq(eg_workload_total_tokens(w), 37);
	w = find(&l, "seed-hex");
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->seed, 0xdeadbeefcafef00dull);
	w = find(&l, "iter-1");
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->iter, 1);
	eg_workload_list_free(&l);
	ck_assert_ptr_null(l.items);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(test_load_example)
{
	eg_workload_list_t l;
	char path[1024], err[ERR_LEN] = "";
	const eg_workload_t *w;

	path_of(path, sizeof(path), "example.ini");
	ck_assert_msg(eg_workload_load(path, &l, err) == 0, "%s", err);
	ck_assert_uint_eq(l.n, 1);
	w = &l.items[0];
	ck_assert_str_eq(w->name, "example");
	ck_assert(w->world == 4 && w->experts == 16 && w->topk == 4 &&
		  w->hidden == 256);
	ck_assert_int_eq(w->tokens_mode, EG_TOKENS_UNEVEN);
	ck_assert_uint_eq(w->zero_ranks, 1u << 2);
	ck_assert_int_eq(w->routing, EG_ROUTING_HOT_EXPERT);
	ck_assert(w->hot_target == 3 && w->hot_frac == 0.5);
	ck_assert(w->mask_ratio == 0.1);
	ck_assert_uint_eq(w->seed, 0x1234);
	eg_workload_list_free(&l);
}
END_TEST

/* Every file in fixtures/workloads/bad/ fails with the error its first
 * line announces ("# expect: <substring>"). */
START_TEST(test_load_bad)
{
	char dir[1024], path[2048], line[512], err[ERR_LEN];
	struct dirent *de;
	DIR *d;
	int files = 0;

	path_of(dir, sizeof(dir), "bad");
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		eg_workload_list_t l = {(eg_workload_t *)&l, 99};
		char *expect;
		FILE *f;
		int rc;

		if (n < 5 || strcmp(de->d_name + n - 4, ".ini"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		ck_assert_msg(!strncmp(line, "# expect: ", 10),
			      "%s: first line is not \"# expect: ...\"", path);
		expect = line + 10;
		ck_assert_msg(strstr(expect, de->d_name) == expect,
			      "%s: expectation must start with file:line",
			      path);
		err[0] = '\0';
		rc = eg_workload_load(path, &l, err);
		ck_assert_msg(rc < 0, "%s loaded", path);
		ck_assert_msg(strstr(err, expect) != NULL,
			      "%s: got \"%s\", want \"%s\"", de->d_name, err,
			      expect);
		ck_assert_ptr_null(l.items);
		ck_assert_uint_eq(l.n, 0);
		files++;
	}
	closedir(d);
	ck_assert_int_ge(files, 8);
}
END_TEST

/* Writes text to a temporary file; the caller unlinks path. */
static void write_tmp(char path[64], const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, 64, "/tmp/eg-wl-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int load_text(const char *text, eg_workload_list_t *l, char *err,
		     char path[64])
{
	int rc;

	write_tmp(path, text);
	rc = eg_workload_load(path, l, err);
	unlink(path);
	return rc;
}

START_TEST(test_load_misc)
{
	eg_workload_list_t l;
	char err[ERR_LEN], path[64], want[160], longline[400];
	int rc;

	rc = eg_workload_load("/nonexistent/x.ini", &l, err);
	ck_assert_int_eq(rc, EG_ENOENT);
	ck_assert_str_eq(err, "/nonexistent/x.ini: cannot open: No such file "
			      "or directory");

	/* no sections: one workload from the defaults */
	rc = load_text("world = 4\nexperts = 4\nname = solo\n", &l, err, path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.items[0].name, "solo");
	ck_assert_uint_eq(l.items[0].world, 4);
	eg_workload_list_free(&l);

	/* empty file: the built-in default */
	rc = load_text("", &l, err, path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.items[0].name, "default");
	eg_workload_list_free(&l);

	/* empty sections count; name overrides; indentation and comments */
	rc = load_text("tokens = 5 # trailing comment\n"
		       "[a]\n[b]\n  name = bee ; inline\n\t[c]\nworld = 1\n"
		       "experts = 2\n",
		       &l, err, path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.items[0].name, "a");
	ck_assert_str_eq(l.items[1].name, "bee");
	ck_assert_str_eq(l.items[2].name, "c");
	ck_assert_uint_eq(l.items[0].tokens, 5);
	ck_assert_uint_eq(l.items[2].world, 1);
	ck_assert_uint_eq(l.items[1].world, 2);
	eg_workload_list_free(&l);

	/* a name override may not collide with another workload */
	rc = load_text("[a]\n[b]\nname = a\n", &l, err, path);
	ck_assert_int_lt(rc, 0);
	snprintf(want, sizeof(want),
		 "%s:2: [b]: duplicate workload name \"a\" (also [a] at line "
		 "1)",
		 path);
	ck_assert_str_eq(err, want);

	/* validation names the section and its first line */
	rc =
	    load_text("world = 3\n\n[ok]\nexperts = 3\n[bad]\n", &l, err, path);
	ck_assert_int_lt(rc, 0);
	snprintf(want, sizeof(want),
		 "%s:5: [bad]: experts=8 is not divisible by world=3", path);
	ck_assert_str_eq(err, want);

	/* the defaults-only workload is validated too, without a line */
	rc = load_text("topk = 9\n", &l, err, path);
	ck_assert_int_lt(rc, 0);
	snprintf(want, sizeof(want), "%s: [default]: topk=9 exceeds experts=8",
		 path);
	ck_assert_str_eq(err, want);

	/* a bad default value reports its own line */
	rc = load_text("# c\nseed = 0x\n[a]\n", &l, err, path);
	ck_assert_int_lt(rc, 0);
	snprintf(want, sizeof(want),
		 "%s:2: seed: \"0x\" is not a non-negative integer", path);
	ck_assert_str_eq(err, want);

	/* the first error wins: a malformed line before a bad value */
	rc = load_text("[a]\njunk\nworld = x\n", &l, err, path);
	ck_assert_int_eq(rc, EG_EPARSE);
	snprintf(want, sizeof(want), "%s:2: malformed line", path);
	ck_assert_ptr_nonnull(strstr(err, want));
	rc = load_text("[a]\nworld = x\njunk\n", &l, err, path);
	ck_assert_int_eq(rc, EG_EINVAL);
	snprintf(want, sizeof(want), "%s:2: world: \"x\"", path);
	ck_assert_ptr_nonnull(strstr(err, want));

	/* an unterminated header */
	rc = load_text("[a\nworld = 2\n", &l, err, path);
	ck_assert_int_eq(rc, EG_EPARSE);
	snprintf(want, sizeof(want), "%s:1: malformed line", path);
	ck_assert_ptr_nonnull(strstr(err, want));

	/* a line too long for the parser is refused, not cut */
	memset(longline, '1', sizeof(longline));
	memcpy(longline, "[a]\nseed = ", 11);
	memcpy(longline + sizeof(longline) - 2, "\n", 2);
	rc = load_text(longline, &l, err, path);
	ck_assert_int_eq(rc, EG_EPARSE);
	snprintf(want, sizeof(want), "%s:2: line is longer than", path);
	ck_assert_ptr_nonnull(strstr(err, want));
}
END_TEST

/* A NUL byte is reported as such, with its line and column. */
START_TEST(test_load_nul)
{
	eg_workload_list_t l;
	char err[ERR_LEN], path[64], want[160];
	static const char text[] = "[a]\nwor\0ld = 2\n";
	int fd;

	snprintf(path, sizeof(path), "/tmp/eg-wl-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	ck_assert_int_eq(eg_workload_load(path, &l, err), EG_EPARSE);
	unlink(path);
	snprintf(want, sizeof(want), "%s:2: NUL byte in column 4", path);
	ck_assert_msg(strstr(err, want), "%s", err);
}
END_TEST

/* Many sections load in linear time: 200000 of them, each a name looked
 * up among the others (a quadratic scan took 26 s for 40000, about 11
 * minutes for these; the case's hang guard is 60 s). No clock is read. */
START_TEST(test_load_many)
{
	enum { N = 200000 };
	eg_workload_list_t l;
	char err[ERR_LEN], path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/eg-wl-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("tokens = 1\n", f);
	for (int i = 0; i < N; i++)
		fprintf(f, "[s%d]\n", i);
	fputs("[s77]\n", f); /* and the last is a duplicate, found */
	fclose(f);
	ck_assert_int_eq(eg_workload_load(path, &l, err), EG_EPARSE);
	ck_assert_msg(strstr(err, "duplicate section [s77] (first at line 79)"),
		      "%s", err);
	/* without it: all of them */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < N; i++)
		fprintf(f, "[s%d]\n", i);
	fclose(f);
	ck_assert_msg(eg_workload_load(path, &l, err) == 0, "%s", err);
	ck_assert_uint_eq(l.n, N);
	ck_assert_str_eq(l.items[N - 1].name, "s199999");
	eg_workload_list_free(&l);
	unlink(path);
}
END_TEST

static Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("keys");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_key);
	tcase_add_loop_test(tc, test_bad_values, 0,
			    (int)(sizeof(bad_values) / sizeof(*bad_values)));
	tcase_add_loop_test(
	    tc, test_validate_errors, 0,
	    (int)(sizeof(bad_workloads) / sizeof(*bad_workloads)));
	tcase_add_test(tc, test_validate_edges);
	tcase_add_test(tc, test_validate_struct);
	tcase_add_test(tc, test_exact_budget);
	tcase_add_test(tc, test_token_modes);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_steps);
	tcase_add_test(tc, test_to_args_roundtrip);
	tcase_add_test(tc, test_to_args_doubles);
	tcase_add_test(tc, test_to_args_short_buffer);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, test_load_matrix);
	tcase_add_test(tc, test_load_example);
	tcase_add_test(tc, test_load_bad);
	tcase_add_test(tc, test_load_misc);
	tcase_add_test(tc, test_load_nul);
	tcase_add_test(tc, test_load_many);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(workload_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
