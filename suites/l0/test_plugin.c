/* The plugin ABI's host side: loading and its refusals (older table
 * accepted, newer ABI and missing entry refused), the adapter running the
 * template at world 1 in and out of a forked child, and the native-layout
 * checks on planted defects. The plugins are built by make from
 * plugins/template (EG_BUILDDIR). */
#include <stdio.h>
#include <string.h>

#include "eg_test.h"
#include "lib/engines/plugin_int.h"

static char *spec(char *buf, size_t len, const char *so, const char *opts)
{
	const char *b = getenv("EG_BUILDDIR");

	snprintf(buf, len, "plugin:%s/plugins/%s%s", b ? b : ".", so, opts);
	return buf;
}

/* One case through the engine: returns the dispatch/combine error (0 if
 * none) and fills v. */
static int run_case(const eg_engine_ops_t *ops, const char *const *kv,
		    eg_verdict_t *v, char *msg, size_t len)
{
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	eg_recv_t out, exp;
	void *eng = NULL, *y, *res, *ref;
	eg_engine_ctx_t ctx = {.size = sizeof(ctx), .n_ranks = 1};
	int rc;

	eg_test_workload(&w, kv);
	eg_verdict_init(v);
	msg[0] = '\0';
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 0, &in), EG_OK);
	ck_assert_int_eq(eg_recv_alloc(&out, &w, 0, eg_recv_max_rows(&w)),
			 EG_OK);
	y = malloc((eg_recv_max_rows(&w) + 1) * (size_t)w.hidden * 4);
	res = malloc(eg_combine_bytes(&w, 0) + 1);
	ref = malloc(eg_combine_bytes(&w, 0) + 1);
	ck_assert_int_eq(ops->create(&w, &ctx, &eng), EG_OK);
	rc = ops->dispatch(eng, &in, &out);
	if (rc == EG_OK) {
		ck_assert_int_eq(eg_ref_dispatch(&w, &g, 0, &exp), EG_OK);
		eg_verify_dispatch(&w, &exp, &out, v);
		eg_recv_free(&exp);
		ck_assert_int_eq(eg_expert_stage(&g, &out, y), EG_OK);
		rc = ops->combine(eng, &out, (const void *const *)&y,
				  (void *const *)&res);
	}
	if (rc == EG_OK) {
		/* what the adapter found in the buffers of combine */
		if (out.findings)
			eg_verdict_merge(v, out.findings);
		ck_assert_int_eq(eg_ref_combine(&w, &g, 0, ref, NULL, NULL),
				 EG_OK);
		eg_verify_combine(&w, 0, EG_COMPARE_BITS, ref, NULL, NULL, res,
				  v);
	}
	if (rc < 0)
		snprintf(msg, len, "%s", eg_engine_error(ops, eng));
	ops->destroy(eng);
	free(y);
	free(res);
	free(ref);
	eg_recv_free(&out);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
	return rc;
}

static const char *const base_kv[] = {"world=1",   "experts=8", "topk=3",
				      "tokens=20", "hidden=64", NULL};

START_TEST(test_load_template)
{
	char s[4200], err[1024];
	const eg_engine_ops_t *a, *b, *e;

	a = eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ""), err,
	    sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_str_eq(a->name, s);
	ck_assert_uint_eq(a->flags, EG_ENGINE_MULTI_PROCESS | EG_ENGINE_WORLD1 |
					EG_ENGINE_CANONICAL_ORDER);
	b = eg_engine_find(s); /* loaded once per process */
	ck_assert_ptr_eq(a, b);
	e = eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ",layout=expert"),
	    err, sizeof(err));
	ck_assert_msg(e != NULL, "%s", err);
	ck_assert_ptr_ne(e, a);
	/* an expert-major combine rounds each copy: never canonical; the
	 * template declares its slot-order combine FIXED (ABI 2) */
	ck_assert_uint_eq(e->flags & EG_ENGINE_CANONICAL_ORDER, 0);
	ck_assert_uint_eq(e->flags & EG_ENGINE_FIXED_ORDER,
			  EG_ENGINE_FIXED_ORDER);
}
END_TEST

/* An ABI-1 plugin (no order field written) still loads: its flag says
 * the order, and expert-major without the flag is no fixed order. */
START_TEST(test_abi_v1)
{
	char s[4200], err[1024];
	const eg_engine_ops_t *a, *e;

	a = eg_engine_lookup(spec(s, sizeof(s), "faults/libeg-abi-v1.so", ""),
			     err, sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_uint_eq(a->flags, EG_ENGINE_MULTI_PROCESS | EG_ENGINE_WORLD1 |
					EG_ENGINE_CANONICAL_ORDER);
	e = eg_engine_lookup(
	    spec(s, sizeof(s), "faults/libeg-abi-v1.so", ",layout=expert"), err,
	    sizeof(err));
	ck_assert_msg(e != NULL, "%s", err);
	ck_assert_uint_eq(
	    e->flags & (EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_FIXED_ORDER), 0);
}
END_TEST

START_TEST(test_load_refusals)
{
	char s[4200], err[1024];

	ck_assert_ptr_null(eg_engine_lookup(
	    spec(s, sizeof(s), "faults/libeg-abi-newer.so", ""), err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "ABI version 3") &&
			  strstr(err, "speaks version 2"),
		      "%s", err);
	ck_assert_ptr_null(eg_engine_lookup(
	    spec(s, sizeof(s), "faults/libeg-abi-no-entry.so", ""), err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "no symbol eg_plugin_entry"), "%s", err);
	ck_assert_ptr_null(eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ",bogus=1"), err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "option bogus=1"), "%s", err);
	ck_assert_ptr_null(eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ",layout"), err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "want key=value"), "%s", err);
	ck_assert_ptr_null(eg_engine_lookup("plugin:", err, sizeof(err)));
	ck_assert_msg(strstr(err, "no path"), "%s", err);
	ck_assert_ptr_null(
	    eg_engine_lookup("plugin:/nonexistent/libx.so", err, sizeof(err)));
	ck_assert_msg(strstr(err, "cannot load"), "%s", err);
	/* a failed spec keeps its reason */
	ck_assert_ptr_null(
	    eg_engine_lookup("plugin:/nonexistent/libx.so", err, sizeof(err)));
	ck_assert_msg(strstr(err, "cannot load"), "%s", err);
}
END_TEST

/* An older table (no error slot) loads and runs; its missing slot is
 * never read, so a failure has no plugin message. */
START_TEST(test_abi_older_size)
{
	char s[4200], err[1024], msg[1024];
	const eg_engine_ops_t *ops;
	eg_verdict_t v;

	ops = eg_engine_lookup(
	    spec(s, sizeof(s), "faults/libeg-abi-old-size.so", ""), err,
	    sizeof(err));
	ck_assert_msg(ops != NULL, "%s", err);
	ck_assert_int_eq(run_case(ops, base_kv, &v, msg, sizeof(msg)), EG_OK);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
	ops = eg_engine_lookup(
	    spec(s, sizeof(s), "faults/libeg-abi-old-size-error.so", ""), err,
	    sizeof(err));
	ck_assert_msg(ops != NULL, "%s", err);
	ck_assert_int_eq(run_case(ops, base_kv, &v, msg, sizeof(msg)),
			 EG_EPLUGIN);
	ck_assert_msg(strstr(msg, "gave no message") && !strstr(msg, "planted"),
		      "%s", msg);
}
END_TEST

/* Every layout and key mode, in a forked child and in this process. */
START_TEST(test_template_cases)
{
	static const char *const opts[] = {"",
					   ",layout=rank",
					   ",layout=expert",
					   ",keys=content",
					   ",layout=rank,keys=content",
					   ",layout=expert,keys=content"};
	static const char *const fp8[] = {"world=1",  "experts=16", "topk=4",
					  "tokens=9", "hidden=256", "dtype=fp8",
					  NULL};
	char s[4200], err[1024], msg[1024];
	eg_verdict_t v;

	for (int fork = 0; fork < 2; fork++) {
		setenv("EPGATE_PLUGIN_FORK", fork ? "1" : "0", 1);
		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
			const eg_engine_ops_t *ops = eg_engine_lookup(
			    spec(s, sizeof(s), "template/libeg-template.so",
				 opts[i]),
			    err, sizeof(err));
			ck_assert_msg(ops != NULL, "%s", err);
			ck_assert_int_eq(
			    run_case(ops, base_kv, &v, msg, sizeof(msg)),
			    EG_OK);
			ck_assert_msg(eg_verdict_total_wrong(&v) == 0, "%s", s);
			ck_assert_int_eq(
			    run_case(ops, fp8, &v, msg, sizeof(msg)), EG_OK);
			ck_assert_msg(eg_verdict_total_wrong(&v) == 0, "%s", s);
		}
	}
	unsetenv("EPGATE_PLUGIN_FORK");
}
END_TEST

/* The buffers a plugin is handed (issues 27, 29): a write past the end
 * of one, an input it changes, output it leaves unwritten, each found by
 * name; a positive return is a failure with its message. In and out of
 * the forked child. */
START_TEST(test_buffers_guarded)
{
	static const char *const masked[] = {"world=1",	  "experts=8", "topk=3",
					     "tokens=20", "hidden=64", "mask=1",
					     NULL};
	static const struct {
		const char *so;
		const char *const *kv;
		eg_field_t field;
	} plant[] = {
	    {"faults/libeg-fault-write-past.so", base_kv,
	     EG_FIELD_NATIVE_GUARD},
	    {"faults/libeg-fault-input-written.so", base_kv,
	     EG_FIELD_NATIVE_INPUT},
	    {"faults/libeg-fault-unrouted-unwritten.so", masked,
	     EG_FIELD_NATIVE_UNWRITTEN},
	};
	char s[4200], err[1024], msg[1024];
	eg_verdict_t v;

	for (int fork = 0; fork < 2; fork++) {
		setenv("EPGATE_PLUGIN_FORK", fork ? "1" : "0", 1);
		for (size_t i = 0; i < sizeof(plant) / sizeof(plant[0]); i++) {
			const eg_engine_ops_t *ops = eg_engine_lookup(
			    spec(s, sizeof(s), plant[i].so, ""), err,
			    sizeof(err));
			ck_assert_msg(ops != NULL, "%s", err);
			ck_assert_int_eq(
			    run_case(ops, plant[i].kv, &v, msg, sizeof(msg)),
			    EG_OK);
			ck_assert_msg(v.wrong[plant[i].field] > 0,
				      "%s (fork %d): no %s", plant[i].so, fork,
				      eg_field_name(plant[i].field));
		}
		const eg_engine_ops_t *ops = eg_engine_lookup(
		    spec(s, sizeof(s), "faults/libeg-fault-positive-rc.so", ""),
		    err, sizeof(err));
		ck_assert_msg(ops != NULL, "%s", err);
		ck_assert_int_eq(run_case(ops, base_kv, &v, msg, sizeof(msg)),
				 EG_EPLUGIN);
		ck_assert_msg(strstr(msg, "returns 2 for an error (returned 2"),
			      "%s", msg);
	}
	unsetenv("EPGATE_PLUGIN_FORK");
}
END_TEST

START_TEST(test_world_refusal)
{
	char s[4200], err[1024];
	const eg_engine_ops_t *ops = eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ""), err,
	    sizeof(err));
	eg_workload_t w;
	eg_engine_ctx_t ctx = {.size = sizeof(ctx), .n_ranks = 2};
	void *eng = NULL;
	static const char *const kv[] = {"world=2", NULL};

	ck_assert_ptr_nonnull(ops);
	eg_test_workload(&w, kv);
	ck_assert_int_eq(ops->create(&w, &ctx, &eng), EG_ENOSYS);
	ck_assert_ptr_null(eng);
	ck_assert_msg(strstr(eg_engine_error(ops, NULL), "world 1"), "%s",
		      eg_engine_error(ops, NULL));
	eg_workload_fini(&w);
}
END_TEST

/* In a measurement only the verified (first) step is mapped: later
 * dispatches leave the caller's layout alone and combines reuse the
 * mapped expert outputs. */
START_TEST(test_bench_steps_unmapped)
{
	char s[4200], err[1024];
	const eg_engine_ops_t *ops = eg_engine_lookup(
	    spec(s, sizeof(s), "template/libeg-template.so", ",layout=expert"),
	    err, sizeof(err));
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	eg_recv_t out;
	eg_engine_ctx_t ctx = {
	    .size = sizeof(ctx), .n_ranks = 1, .flags = EG_ENGINE_CTX_BENCH};
	void *eng = NULL, *y, *r1, *r2;
	size_t ob;

	ck_assert_msg(ops != NULL, "%s", err);
	eg_test_workload(&w, base_kv);
	ob = eg_combine_bytes(&w, 0);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 0, &in), EG_OK);
	ck_assert_int_eq(eg_recv_alloc(&out, &w, 0, eg_recv_max_rows(&w)),
			 EG_OK);
	y = calloc(eg_recv_max_rows(&w) + 1, (size_t)w.hidden * 4);
	r1 = malloc(ob + 1);
	r2 = malloc(ob + 1);
	for (int fork = 0; fork < 2; fork++) {
		setenv("EPGATE_PLUGIN_FORK", fork ? "1" : "0", 1);
		ck_assert_int_eq(ops->create(&w, &ctx, &eng), EG_OK);
		ck_assert_int_eq(ops->dispatch(eng, &in, &out), EG_OK);
		ck_assert_uint_gt(out.num_rows, 0);
		ck_assert_int_eq(eg_expert_stage(&g, &out, y), EG_OK);
		ck_assert_int_eq(ops->combine(eng, &out,
					      (const void *const *)&y,
					      (void *const *)&r1),
				 EG_OK);
		out.num_rows = 12345; /* untouched by a timed dispatch */
		ck_assert_int_eq(ops->dispatch(eng, &in, &out), EG_OK);
		ck_assert_uint_eq(out.num_rows, 12345);
		ck_assert_int_eq(ops->combine(eng, &out,
					      (const void *const *)&y,
					      (void *const *)&r2),
				 EG_OK);
		ck_assert_int_eq(memcmp(r1, r2, ob), 0);
		ops->destroy(eng);
		eng = NULL;
	}
	unsetenv("EPGATE_PLUGIN_FORK");
	free(y);
	free(r1);
	free(r2);
	eg_recv_free(&out);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* The kernel boundary's span (lib/step/kern.c): a plugin's marks of its
 * library's call (env.mark) in a timed call reach the engine ctx's
 * lib_mark, start then end, once per call; the verified first step is not
 * timed and marks nothing; a plugin that does not mark never calls it.
 * CUPTI is not on the host: this is the path, the GPU run the count. */
static unsigned lib_marks[2], lib_marks_bad;
static int lib_inside;
static void count_lib_mark(int end)
{
	if (end != lib_inside) /* an end outside a span, a start inside */
		lib_marks_bad++;
	lib_inside = !end;
	lib_marks[end != 0]++;
}

START_TEST(test_lib_mark_hook)
{
	static const char *const so[] = {"faults/libeg-tpl-marks.so",
					 "template/libeg-template.so"};
	char s[4200], err[1024];
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	eg_recv_t out;
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .n_ranks = 1,
			       .flags = EG_ENGINE_CTX_BENCH,
			       .lib_mark = count_lib_mark};
	void *eng = NULL, *y, *r;

	unsetenv("EPGATE_PLUGIN_PHASES");
	setenv("EPGATE_PLUGIN_FORK", "0", 1);
	eg_test_workload(&w, base_kv);
	ck_assert_int_eq(eg_gen_init(&g, &w), EG_OK);
	ck_assert_int_eq(eg_gen_rank_input(&g, &w, 0, &in), EG_OK);
	ck_assert_int_eq(eg_recv_alloc(&out, &w, 0, eg_recv_max_rows(&w)),
			 EG_OK);
	y = calloc(eg_recv_max_rows(&w) + 1, (size_t)w.hidden * 4);
	r = malloc(eg_combine_bytes(&w, 0) + 1);
	for (size_t p = 0; p < 2; p++) {
		const eg_engine_ops_t *ops = eg_engine_lookup(
		    spec(s, sizeof(s), so[p], ""), err, sizeof(err));
		unsigned want = p == 0 ? 2 * 2 : 0; /* steps 2 and 3 */

		ck_assert_msg(ops != NULL, "%s", err);
		lib_marks[0] = lib_marks[1] = lib_marks_bad = 0;
		lib_inside = 0;
		ck_assert_int_eq(ops->create(&w, &ctx, &eng), EG_OK);
		for (int step = 0; step < 3; step++) {
			ck_assert_int_eq(ops->dispatch(eng, &in, &out), EG_OK);
			if (step == 0)
				ck_assert_int_eq(eg_expert_stage(&g, &out, y),
						 EG_OK);
			ck_assert_int_eq(ops->combine(eng, &out,
						      (const void *const *)&y,
						      (void *const *)&r),
					 EG_OK);
		}
		ops->destroy(eng);
		eng = NULL;
		ck_assert_msg(lib_marks[0] == want && lib_marks[1] == want &&
				  !lib_marks_bad && !lib_inside,
			      "%s: %u starts, %u ends (%u out of order), "
			      "want %u each",
			      so[p], lib_marks[0], lib_marks[1], lib_marks_bad,
			      want);
	}
	unsetenv("EPGATE_PLUGIN_FORK");
	free(y);
	free(r);
	eg_recv_free(&out);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
}
END_TEST

/* ---- the native-layout checks on hand-made layouts ---- */
typedef struct nat_case {
	eg_workload_t w;
	eg_gen_t g;
	eg_plug_routes_t rt;
	eg_recv_t exp, out;
	eg_plug_native_t n;
	eg_verdict_t f;
} nat_case_t;

/* A correct FLAT (em = 0) or EXPERT_MAJOR (em = 1) layout of rank 0 from
 * the reference, with source info. */
static void nat_setup(nat_case_t *c, int em)
{
	static const char *const kv[] = {"world=1",  "experts=4", "topk=2",
					 "tokens=6", "hidden=8",  NULL};
	size_t H = 8, K = 2, slots;

	memset(c, 0, sizeof(*c));
	eg_test_workload(&c->w, kv);
	eg_verdict_init(&c->f);
	ck_assert_int_eq(eg_gen_init(&c->g, &c->w), EG_OK);
	ck_assert_int_eq(eg_plug_routes_build(&c->rt, &c->w, &c->g), EG_OK);
	ck_assert_int_eq(eg_ref_dispatch(&c->w, &c->g, 0, &c->exp), EG_OK);
	ck_assert_int_eq(eg_recv_alloc(&c->out, &c->w, 0, 6), EG_OK);
	c->n = (eg_plug_native_t){.layout = em ? EG_PLUGIN_LAYOUT_EXPERT_MAJOR
					       : EG_PLUGIN_LAYOUT_FLAT,
				  .G = em ? 4 : 1,
				  .S = 6,
				  .W = 1,
				  .L = 4,
				  .K = 2,
				  .H = 8,
				  .dtype = EG_DTYPE_BF16};
	slots = (size_t)c->n.G * 6;
	c->n.count = calloc(c->n.G, 8);
	c->n.x = calloc(slots * H, 2);
	c->n.src_rank = calloc(slots, 4);
	c->n.src_token = calloc(slots, 4);
	c->n.topk_idx = calloc(slots * K, 8);
	c->n.topk_w = calloc(slots * K, 4);
	c->n.key_src = calloc(slots, 4);
	c->n.key_tok = calloc(slots, 4);
	c->n.row = calloc(slots, 4);
	for (uint32_t r = 0; r < c->exp.num_rows; r++)
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = c->exp.topk_idx[r * K + k];
			size_t i;
			if (!em && k > 0)
				break;
			if (em && e < 0)
				continue;
			i = em ? (size_t)e * 6 + (size_t)c->n.count[e]++
			       : (size_t)c->n.count[0]++;
			memcpy(c->n.x + i * H * 2,
			       (uint8_t *)c->exp.x + r * H * 2, H * 2);
			c->n.src_token[i] = c->exp.src_token[r];
			for (uint32_t j = 0; !em && j < K; j++) {
				c->n.topk_idx[i * K + j] =
				    c->exp.topk_idx[r * K + j];
				c->n.topk_w[i * K + j] =
				    c->exp.topk_w[r * K + j];
			}
		}
}

static void nat_run(nat_case_t *c)
{
	eg_verdict_t v;

	eg_plug_keys_given(&c->n, &c->rt, &c->f);
	ck_assert_int_eq(eg_plug_project(&c->n, &c->rt, &c->out, &c->f), EG_OK);
	eg_verdict_init(&v);
	c->out.findings = malloc(sizeof(c->f));
	*c->out.findings = c->f;
	eg_verify_dispatch(&c->w, &c->exp, &c->out, &v);
	c->f = v;
}

static void nat_free(nat_case_t *c)
{
	eg_plug_native_free(&c->n);
	eg_plug_routes_free(&c->rt);
	eg_recv_free(&c->exp);
	eg_recv_free(&c->out);
	eg_gen_fini(&c->g);
	eg_workload_fini(&c->w);
}

START_TEST(test_native_clean)
{
	nat_case_t c;

	for (int em = 0; em < 2; em++) {
		nat_setup(&c, em);
		nat_run(&c);
		ck_assert_uint_eq(eg_verdict_total_wrong(&c.f), 0);
		nat_free(&c);
	}
}
END_TEST

START_TEST(test_native_flat_defects)
{
	nat_case_t c;

	nat_setup(&c, 0);
	c.n.src_token[1] = c.n.src_token[0]; /* a duplicated key */
	c.n.src_token[2] = 99;		     /* an unknown one */
	c.n.topk_idx[3 * 2] = 7;	     /* not a local expert */
	nat_run(&c);
	ck_assert_uint_eq(c.f.duplicate_rows, 1);
	ck_assert_uint_ge(c.f.unknown_rows, 1);
	ck_assert_uint_eq(c.f.wrong[EG_FIELD_NATIVE_KEY], 2);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_TOPK_IDX], 1);
	ck_assert_uint_eq(c.f.missing_rows, 2);
	/* the diagnosis comes first */
	ck_assert_int_eq(c.f.first[0].field, EG_FIELD_NATIVE_KEY);
	nat_free(&c);
}
END_TEST

START_TEST(test_native_expert_defects)
{
	nat_case_t c;
	int moved = 0;

	nat_setup(&c, 1);
	/* a copy that differs from its token's other copy */
	for (uint32_t e = 1; e < 4 && !moved; e++)
		for (int64_t i = 0; i < c.n.count[e] && !moved; i++)
			for (int64_t j = 0; j < c.n.count[0]; j++)
				if (c.n.src_token[e * 6 + i] ==
				    c.n.src_token[j]) {
					c.n.x[(e * 6 + i) * 16] ^= 1;
					moved = 1;
					break;
				}
	ck_assert_int_eq(moved, 1);
	/* a copy in an expert its token did not select */
	for (int64_t i = 0; i < c.n.count[1]; i++) {
		int32_t t = c.n.src_token[6 + i];
		int sel0 = 0;
		for (int64_t j = 0; j < c.n.count[0]; j++)
			sel0 |= c.n.src_token[j] == t;
		if (!sel0 && c.n.count[0] < 6) {
			size_t d = (size_t)c.n.count[0]++;
			c.n.src_token[d] = t;
			break;
		}
	}
	nat_run(&c);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_NATIVE_COPY], 1);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_NATIVE_KEY], 1);
	nat_free(&c);
}
END_TEST

/* Slots past a group's counter are padding: their key arrays hold
 * nothing (here zeros, a real key's bits), and they get no row, so no
 * expert output is copied into them (issue 27: with no tokens anywhere
 * the lookup read an entry that does not exist and crashed). */
START_TEST(test_native_padding)
{
	nat_case_t c;

	for (int em = 0; em < 2; em++) {
		nat_setup(&c, em);
		for (uint32_t g = 0; g < c.n.G; g++)
			if (c.n.count[g] > 1)
				c.n.count[g]--; /* its last row is padding */
		nat_run(&c);
		for (uint32_t g = 0; g < c.n.G; g++)
			for (uint32_t i = (uint32_t)c.n.count[g]; i < c.n.S;
			     i++)
				ck_assert_msg(c.n.row[g * c.n.S + i] == -1,
					      "layout %d: padding slot %u of "
					      "group %u has row %d",
					      em, i, g, c.n.row[g * c.n.S + i]);
		nat_free(&c);
	}
}
END_TEST

START_TEST(test_native_content_keys)
{
	nat_case_t c;

	for (int em = 0; em < 2; em++) {
		nat_setup(&c, em);
		free(c.n.src_rank);
		free(c.n.src_token);
		c.n.src_rank = c.n.src_token = NULL;
		ck_assert_int_eq(eg_plug_keys_content(&c.n, &c.w, &c.g, &c.f),
				 EG_OK);
		ck_assert_int_eq(eg_plug_project(&c.n, &c.rt, &c.out, &c.f),
				 EG_OK);
		c.out.findings = malloc(sizeof(c.f));
		*c.out.findings = c.f;
		eg_verdict_init(&c.f);
		eg_verify_dispatch(&c.w, &c.exp, &c.out, &c.f);
		ck_assert_uint_eq(eg_verdict_total_wrong(&c.f), 0);
		nat_free(&c);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plugin");
	TCase *tc = tcase_create("load");
	TCase *tn = tcase_create("native");

	tcase_add_test(tc, test_load_template);
	tcase_add_test(tc, test_load_refusals);
	tcase_add_test(tc, test_abi_older_size);
	tcase_add_test(tc, test_abi_v1);
	tcase_add_test(tc, test_template_cases);
	tcase_add_test(tc, test_world_refusal);
	tcase_add_test(tc, test_buffers_guarded);
	tcase_add_test(tc, test_bench_steps_unmapped);
	tcase_add_test(tc, test_lib_mark_hook);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tn, test_native_clean);
	tcase_add_test(tn, test_native_flat_defects);
	tcase_add_test(tn, test_native_expert_defects);
	tcase_add_test(tn, test_native_content_keys);
	tcase_add_test(tn, test_native_padding);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tn);
	return eg_test_main(s);
}
