/* Slots in any order (EG_PLUGIN_SLOTS_ANY_ORDER, lib/engines/
 * plugin_slots.c): a FLAT layout whose rows carry their (local id,
 * weight) pairs as NCCL EP's high-throughput mode does (local experts
 * ascending, then -1) passes with the flag and fails without it, with
 * source keys and with keys by content; with the flag a wrong weight, a
 * wrong id and a lost slot are still caught, slot by slot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eg_test.h"
#include "lib/engines/plugin_int.h"

typedef struct sl_case {
	eg_workload_t w;
	eg_gen_t g;
	eg_plug_routes_t rt;
	eg_recv_t exp, out;
	eg_plug_native_t n;
	eg_verdict_t f;
} sl_case_t;

#define SL_T 24
#define SL_K 4
#define SL_H 16

/* Row i's slots as NCCL EP HT returns them: ids ascending, -1 last. */
static void ht_order(int64_t *id, float *w, uint32_t K)
{
	for (uint32_t a = 1; a < K; a++)
		for (uint32_t b = a; b > 0; b--) {
			int64_t x = id[b - 1], y = id[b];
			int swap =
			    (x < 0 && y >= 0) || (x >= 0 && y >= 0 && x > y);
			float t;

			if (!swap)
				break;
			id[b - 1] = y;
			id[b] = x;
			t = w[b - 1];
			w[b - 1] = w[b];
			w[b] = t;
		}
}

/* Rank 1's FLAT layout of a world-2 workload from the reference, rows
 * reversed, each row's slots in NCCL EP's order, with source info unless
 * content. */
static void sl_setup_h(sl_case_t *c, int flag, int content, size_t H)
{
	const char *kv[] = {"world=2",	   "experts=8", "topk=4",
			    "tokens=24",   "hidden=16", "mask=0.2",
			    "data=random", NULL};
	size_t slots = 2 * SL_T, K = SL_K;

	if (H == 1) { /* few distinct payloads: rows share them */
		kv[4] = "hidden=1";
		kv[6] = "data=exact";
	}

	memset(c, 0, sizeof(*c));
	eg_test_workload(&c->w, kv);
	eg_verdict_init(&c->f);
	ck_assert_int_eq(eg_gen_init(&c->g, &c->w), EG_OK);
	ck_assert_int_eq(eg_plug_routes_build(&c->rt, &c->w, &c->g), EG_OK);
	ck_assert_int_eq(eg_ref_dispatch(&c->w, &c->g, 1, &c->exp), EG_OK);
	ck_assert_int_eq(eg_recv_alloc(&c->out, &c->w, 1, slots), EG_OK);
	c->n = (eg_plug_native_t){.layout = EG_PLUGIN_LAYOUT_FLAT,
				  .G = 1,
				  .S = (uint32_t)slots,
				  .W = 2,
				  .L = 4,
				  .K = SL_K,
				  .H = (uint32_t)H,
				  .rank = 1,
				  .dtype = EG_DTYPE_BF16,
				  .slots_any = flag};
	c->n.count = calloc(1, 8);
	c->n.x = calloc(slots * H, 2);
	c->n.src_rank = content ? NULL : calloc(slots, 4);
	c->n.src_token = content ? NULL : calloc(slots, 4);
	c->n.topk_idx = calloc(slots * K, 8);
	c->n.topk_w = calloc(slots * K, 4);
	c->n.key_src = calloc(slots, 4);
	c->n.key_tok = calloc(slots, 4);
	c->n.row = calloc(slots, 4);
	/* rows in any order: the reference's reversed */
	c->n.count[0] = c->exp.num_rows;
	for (uint32_t r = 0; r < c->exp.num_rows; r++) {
		size_t i = c->exp.num_rows - 1 - r;

		memcpy(c->n.x + i * H * 2, (uint8_t *)c->exp.x + r * H * 2,
		       H * 2);
		if (!content) {
			c->n.src_rank[i] = c->exp.src_rank[r];
			c->n.src_token[i] = c->exp.src_token[r];
		}
		for (uint32_t k = 0; k < K; k++) {
			c->n.topk_idx[i * K + k] = c->exp.topk_idx[r * K + k];
			c->n.topk_w[i * K + k] = c->exp.topk_w[r * K + k];
		}
		ht_order(c->n.topk_idx + i * K, c->n.topk_w + i * K, SL_K);
	}
}

static void sl_setup(sl_case_t *c, int flag, int content)
{
	sl_setup_h(c, flag, content, SL_H);
}

/* Keys, slots put back, projection, then the verdict into c->f. */
static void sl_run(sl_case_t *c)
{
	eg_verdict_t v;

	if (c->n.src_token)
		eg_plug_keys_given(&c->n, &c->rt, &c->f);
	else
		ck_assert_int_eq(
		    eg_plug_keys_content(&c->n, &c->w, &c->g, &c->f), EG_OK);
	ck_assert_int_eq(eg_plug_slots_canon(&c->n, &c->rt), EG_OK);
	ck_assert_int_eq(eg_plug_project(&c->n, &c->rt, &c->out, &c->f), EG_OK);
	eg_verdict_init(&v);
	c->out.findings = malloc(sizeof(c->f));
	*c->out.findings = c->f;
	eg_verify_dispatch(&c->w, &c->exp, &c->out, &v);
	c->f = v;
}

static void sl_free(sl_case_t *c)
{
	eg_plug_native_free(&c->n);
	eg_plug_routes_free(&c->rt);
	eg_recv_free(&c->exp);
	eg_recv_free(&c->out);
	eg_gen_fini(&c->g);
	eg_workload_fini(&c->w);
}

/* Rows whose NCCL EP order differs from their slot order (the test
 * means something only if some do). */
static int sl_reordered(const sl_case_t *c)
{
	int n = 0;

	for (uint32_t r = 0, i; r < c->exp.num_rows; r++)
		for (uint32_t k = 0; k < SL_K; k++)
			if (i = c->exp.num_rows - 1 - r,
			    c->n.topk_idx[i * SL_K + k] !=
				c->exp.topk_idx[r * SL_K + k]) {
				n++;
				break;
			}
	return n;
}

START_TEST(test_slots_any_order_passes)
{
	sl_case_t c;

	for (int content = 0; content < 2; content++) {
		sl_setup(&c, 1, content);
		ck_assert_int_ge(sl_reordered(&c), 3);
		sl_run(&c);
		ck_assert_msg(eg_verdict_total_wrong(&c.f) == 0,
			      "content %d: %llu wrong, first %s", content,
			      (unsigned long long)eg_verdict_total_wrong(&c.f),
			      c.f.n_first ? eg_field_name(c.f.first[0].field)
					  : "-");
		sl_free(&c);
	}
}
END_TEST

/* Pairs of rows with the same payload and different slots. */
static int sl_twins(const sl_case_t *c)
{
	int n = 0;

	for (uint32_t a = 0; a < c->exp.num_rows; a++)
		for (uint32_t b = a + 1; b < c->exp.num_rows; b++)
			if (!memcmp((uint8_t *)c->exp.x + a * 2,
				    (uint8_t *)c->exp.x + b * 2, 2) &&
			    memcmp(c->exp.topk_idx + a * SL_K,
				   c->exp.topk_idx + b * SL_K, 4 * SL_K))
				n++;
	return n;
}

/* Keys by content where payloads repeat: the slots, as a set, tell the
 * rows apart (by payload alone rows would take each other's keys). */
START_TEST(test_slots_any_order_content_twins)
{
	sl_case_t c;

	sl_setup_h(&c, 1, 1, 1);
	ck_assert_int_ge(sl_twins(&c), 3);
	ck_assert_int_ge(sl_reordered(&c), 3);
	sl_run(&c);
	ck_assert_msg(eg_verdict_total_wrong(&c.f) == 0, "%llu wrong, first %s",
		      (unsigned long long)eg_verdict_total_wrong(&c.f),
		      c.f.n_first ? eg_field_name(c.f.first[0].field) : "-");
	sl_free(&c);
}
END_TEST

START_TEST(test_slots_in_order_required_without_flag)
{
	sl_case_t c;

	for (int content = 0; content < 2; content++) {
		sl_setup(&c, 0, content);
		sl_run(&c);
		ck_assert_uint_ge(c.f.wrong[EG_FIELD_TOPK_IDX], 1);
		ck_assert_uint_eq(c.f.missing_rows, 0);
		sl_free(&c);
	}
}
END_TEST

/* The first row with two local slots. */
static size_t sl_row2(const sl_case_t *c)
{
	for (size_t i = 0; i < (size_t)c->n.count[0]; i++)
		if (c->n.topk_idx[i * SL_K + 1] >= 0)
			return i;
	ck_abort_msg("no row with two local experts");
	return 0;
}

START_TEST(test_slots_any_order_still_checked)
{
	sl_case_t c;
	size_t i;

	/* a weight one ulp off */
	sl_setup(&c, 1, 0);
	i = sl_row2(&c);
	c.n.topk_w[i * SL_K + 1] = nextafterf(c.n.topk_w[i * SL_K + 1], 2.0f);
	sl_run(&c);
	ck_assert_uint_eq(c.f.wrong[EG_FIELD_TOPK_W], 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&c.f), 1);
	sl_free(&c);
	/* an id that is another local expert */
	sl_setup(&c, 1, 0);
	i = sl_row2(&c);
	c.n.topk_idx[i * SL_K + 1] =
	    (c.n.topk_idx[i * SL_K + 1] + 1) % 4 == c.n.topk_idx[i * SL_K]
		? (c.n.topk_idx[i * SL_K + 1] + 2) % 4
		: (c.n.topk_idx[i * SL_K + 1] + 1) % 4;
	sl_run(&c);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_TOPK_IDX], 1);
	sl_free(&c);
	/* a slot lost (its id and weight gone) */
	sl_setup(&c, 1, 0);
	i = sl_row2(&c);
	c.n.topk_idx[i * SL_K + 1] = -1;
	c.n.topk_w[i * SL_K + 1] = 0.0f;
	sl_run(&c);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_TOPK_IDX], 1);
	ck_assert_uint_ge(c.f.wrong[EG_FIELD_TOPK_W], 1);
	sl_free(&c);
}
END_TEST

START_TEST(test_slots_sorted)
{
	int32_t id[4] = {3, -1, 0, 3}, sid[4];
	float w[4] = {2.0f, 0.0f, 1.0f, 0.5f};
	uint32_t sw[4], b;

	eg_plug_slots_sorted(id, w, 4, sid, sw);
	ck_assert_int_eq(sid[0], -1);
	ck_assert_int_eq(sid[1], 0);
	ck_assert_int_eq(sid[2], 3);
	ck_assert_int_eq(sid[3], 3);
	memcpy(&b, &w[3], 4);
	ck_assert_uint_eq(sw[2], b); /* 0.5 before 2.0 by bits */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plugin_slots");
	TCase *tc = tcase_create("slots");

	tcase_add_test(tc, test_slots_sorted);
	tcase_add_test(tc, test_slots_any_order_passes);
	tcase_add_test(tc, test_slots_any_order_content_twins);
	tcase_add_test(tc, test_slots_in_order_required_without_flag);
	tcase_add_test(tc, test_slots_any_order_still_checked);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
