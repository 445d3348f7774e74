/* L0: planted faults. The reference's output is copied, one fault of the
 * kind EP engines have really had is planted in the copy, and the
 * verifier must fail, in the field that names the fault. Each fixture
 * also has a control: the unmodified copy must pass, so a fault is
 * caught for the right reason and not because the copy differs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/reference.h"
#include "epgate/verify.h"

#define NRANK 4
#define D     1 /* the destination rank the dispatch faults are planted in */

static const char *const base_kv[] = {
    "world",  "4",  "experts", "16",	"topk", "4", "hidden", "64",
    "tokens", "32", "data",    "exact", "seed", "7", NULL,
};

/* Workload from base_kv, then the extra key/value pairs (NULL-ended). */
static void mk_workload(eg_workload_t *w, const char *const *extra)
{
	char err[EG_ERRMSG_MAX];

	eg_workload_init(w);
	for (int i = 0; base_kv[i]; i += 2)
		ck_assert_msg(
		    eg_workload_set(w, base_kv[i], base_kv[i + 1], err) == 0,
		    "%s", err);
	for (int i = 0; extra && extra[i]; i += 2)
		ck_assert_msg(eg_workload_set(w, extra[i], extra[i + 1], err) ==
				  0,
			      "%s", err);
	ck_assert_msg(eg_workload_validate(w, err) == 0, "%s", err);
}

/* Deep copy: same capacity, every array byte for byte. */
static void recv_copy(eg_recv_t *dst, const eg_workload_t *w,
		      const eg_recv_t *src)
{
	size_t cap = src->capacity, H = src->hidden, K = src->topk;

	ck_assert_int_eq(eg_recv_alloc(dst, w, src->rank, src->capacity),
			 EG_OK);
	memcpy(dst->x, src->x, cap * H * eg_dtype_size(src->dtype));
	if (src->scales)
		memcpy(dst->scales, src->scales,
		       cap * (H / EG_FP8_BLOCK) * sizeof(float));
	memcpy(dst->src_rank, src->src_rank, cap * sizeof(int32_t));
	memcpy(dst->src_token, src->src_token, cap * sizeof(int32_t));
	memcpy(dst->topk_idx, src->topk_idx, cap * K * sizeof(int32_t));
	memcpy(dst->topk_w, src->topk_w, cap * K * sizeof(float));
	memcpy(dst->expert_count, src->expert_count,
	       src->local_experts * sizeof(uint32_t));
	memcpy(dst->rank_prefix, src->rank_prefix,
	       (src->world + 1) * sizeof(uint32_t));
	dst->num_rows = src->num_rows;
}

/* Row di of dst := row si of src (payload and metadata). */
static void row_copy(eg_recv_t *dst, uint32_t di, const eg_recv_t *src,
		     uint32_t si)
{
	size_t H = src->hidden, K = src->topk, nb = H / EG_FP8_BLOCK;
	size_t esz = eg_dtype_size(src->dtype);

	memmove((char *)dst->x + di * H * esz,
		(const char *)src->x + si * H * esz, H * esz);
	if (src->scales)
		memmove(dst->scales + di * nb, src->scales + si * nb,
			nb * sizeof(float));
	dst->src_rank[di] = src->src_rank[si];
	dst->src_token[di] = src->src_token[si];
	memmove(dst->topk_idx + di * K, src->topk_idx + si * K,
		K * sizeof(int32_t));
	memmove(dst->topk_w + di * K, src->topk_w + si * K, K * sizeof(float));
}

static uint64_t packed(int32_t r, int32_t t)
{
	return (uint64_t)(uint32_t)r << 32 | (uint32_t)t;
}

/* ---- fixture: the base workload, every rank's expected dispatch, and a
 * copy of rank D's ---- */
static eg_workload_t wl;
static eg_gen_t gen;
static eg_recv_t ex[NRANK], ac;
static eg_verdict_t v;

static void setup_base(const char *const *extra)
{
	mk_workload(&wl, extra);
	ck_assert_int_eq(eg_gen_init(&gen, &wl), EG_OK);
	for (uint32_t d = 0; d < NRANK; d++)
		ck_assert_int_eq(eg_ref_dispatch(&wl, &gen, d, &ex[d]), EG_OK);
	recv_copy(&ac, &wl, &ex[D]);
	eg_verdict_init(&v);
}

static void setup(void)
{
	setup_base(NULL);
	/* the faults below need a few rows from sources 0 and 1 */
	ck_assert_uint_ge(ex[D].num_rows, 8);
	ck_assert_uint_ge(ex[D].rank_prefix[1] - ex[D].rank_prefix[0], 2);
	ck_assert_uint_ge(ex[D].rank_prefix[2] - ex[D].rank_prefix[1], 2);
}

static void teardown(void)
{
	for (uint32_t d = 0; d < NRANK; d++)
		eg_recv_free(&ex[d]);
	eg_recv_free(&ac);
	eg_gen_fini(&gen);
	eg_workload_fini(&wl);
}

static int verify(void)
{
	return eg_verify_dispatch(&wl, &ex[D], &ac, &v);
}

static void assert_only(eg_field_t f, uint64_t n)
{
	ck_assert_uint_eq(v.wrong[f], n);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), n);
}

START_TEST(control_dispatch)
{
	/* every rank's unmodified copy passes, and all rows are checked */
	for (uint32_t d = 0; d < NRANK; d++) {
		eg_recv_t c;

		recv_copy(&c, &wl, &ex[d]);
		eg_verdict_init(&v);
		ck_assert_int_eq(eg_verify_dispatch(&wl, &ex[d], &c, &v),
				 EG_OK);
		ck_assert_uint_eq(v.checked[EG_FIELD_X],
				  (uint64_t)ex[d].num_rows * wl.hidden);
		ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
		eg_recv_free(&c);
	}
}
END_TEST

/* (1) A dropped row: the rest shifted up, count one short. */
START_TEST(fault_dropped_row)
{
	uint32_t n = ac.num_rows, j = n / 2;

	for (uint32_t i = j; i + 1 < n; i++)
		row_copy(&ac, i, &ac, i + 1);
	ac.num_rows = n - 1;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_NUM_ROWS);
	ck_assert_uint_eq(v.first[0].expected, n);
	ck_assert_uint_eq(v.first[0].actual, n - 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.duplicate_rows, 0);
	ck_assert_uint_eq(v.unknown_rows, 0);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 1);
	/* and positionally every later row is off */
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], n - 1 - j);
}
END_TEST

/* (2) A duplicated row: row j overwritten by its neighbour j-1. */
START_TEST(fault_duplicated_row)
{
	uint32_t j = ac.num_rows / 2;

	row_copy(&ac, j, &ac, j - 1);
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	ck_assert_uint_eq(v.duplicate_rows, 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.unknown_rows, 0);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 2);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_SRC);
	ck_assert_int_eq(v.first[0].row, j);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 0);
}
END_TEST

/* (3) Two rows swapped across sources, metadata included: the set is
 * right, the canonical order is not. */
START_TEST(fault_rows_swapped_across_sources)
{
	uint32_t a = ac.rank_prefix[0], b = ac.rank_prefix[1];
	eg_recv_t tmp;

	ck_assert_int_eq(ac.src_rank[a], 0);
	ck_assert_int_eq(ac.src_rank[b], 1);
	recv_copy(&tmp, &wl, &ac);
	row_copy(&ac, a, &tmp, b);
	row_copy(&ac, b, &tmp, a);
	eg_recv_free(&tmp);
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 2);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 0);
	ck_assert_uint_eq(v.missing_rows + v.duplicate_rows + v.unknown_rows,
			  0);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 0);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_SRC);
	ck_assert_int_eq(v.first[0].row, a);
	ck_assert_uint_eq(v.first[0].expected, packed(0, ex[D].src_token[a]));
	ck_assert_uint_eq(v.first[0].actual, packed(1, ex[D].src_token[b]));
}
END_TEST

/* (4) A wrong source id: src_token + 1. */
START_TEST(fault_wrong_source_id)
{
	uint32_t j = ac.num_rows / 2;
	int32_t r = ac.src_rank[j], t = ac.src_token[j];

	ac.src_token[j] = t + 1;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_SRC);
	ck_assert_int_eq(v.first[0].rank, D);
	ck_assert_int_eq(v.first[0].row, j);
	ck_assert_int_eq(v.first[0].src_rank, r);
	ck_assert_int_eq(v.first[0].src_token, t);
	ck_assert_uint_eq(v.first[0].expected, packed(r, t));
	ck_assert_uint_eq(v.first[0].actual, packed(r, t + 1));
	/* (r,t) is gone; (r,t+1) is either unknown or now twice */
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.unknown_rows + v.duplicate_rows, 1);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X] + v.wrong[EG_FIELD_TOPK_W] +
			      v.wrong[EG_FIELD_TOPK_IDX],
			  0);
}
END_TEST

/* (5) A weight on the wrong slot: two local slots with different weights
 * swapped, or else a weight moved onto a masked (-1) slot. */
START_TEST(fault_weight_wrong_slot)
{
	uint32_t K = ac.topk, row = 0, k1 = 0, k2 = 0;
	int found = 0;

	for (uint32_t i = 0; i < ac.num_rows && !found; i++) {
		const int32_t *idx = ac.topk_idx + (size_t)i * K;
		const float *wt = ac.topk_w + (size_t)i * K;

		for (uint32_t a = 0; a < K && !found; a++)
			for (uint32_t b = a + 1; b < K && !found; b++)
				if (idx[a] >= 0 && idx[b] >= 0 &&
				    wt[a] != wt[b]) {
					row = i, k1 = a, k2 = b;
					found = 1;
				}
	}
	for (uint32_t i = 0; i < ac.num_rows && !found; i++) {
		const int32_t *idx = ac.topk_idx + (size_t)i * K;

		for (uint32_t a = 0; a < K && !found; a++)
			for (uint32_t b = 0; b < K && !found; b++)
				if (idx[a] >= 0 && idx[b] < 0) {
					row = i, k1 = a, k2 = b;
					found = 1;
				}
	}
	ck_assert_msg(found, "no row to plant the fault in");
	float *wt = ac.topk_w + (size_t)row * K, t = wt[k1];

	wt[k1] = wt[k2];
	wt[k2] = t;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_TOPK_W, 2);
	/* reported in slot order, with the expected expert of each slot */
	uint32_t lo = k1 < k2 ? k1 : k2, hi = k1 < k2 ? k2 : k1;
	int32_t li = ex[D].topk_idx[(size_t)row * K + lo];

	ck_assert_int_eq(v.first[0].row, row);
	ck_assert_int_eq(v.first[0].col, lo);
	ck_assert_int_eq(v.first[1].col, hi);
	ck_assert_int_eq(v.first[0].expert,
			 li < 0 ? -1 : D * (int32_t)ac.local_experts + li);
}
END_TEST

/* (6) An off-by-one in a prefix offset. */
START_TEST(fault_prefix_off_by_one)
{
	ac.rank_prefix[1]++;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_RANK_PREFIX, 1);
	ck_assert_int_eq(v.first[0].col, 1);
	ck_assert_uint_eq(v.first[0].actual, v.first[0].expected + 1);
}
END_TEST

/* (7) One flipped bit: the lowest mantissa bit of one bf16 element. */
START_TEST(fault_flipped_bit)
{
	uint32_t j = ac.num_rows / 3, c = 17, H = ac.hidden;
	uint16_t *x = ac.x, before = x[(size_t)j * H + c];

	x[(size_t)j * H + c] ^= 1u;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_X, 1);
	ck_assert_uint_eq(v.n_first, 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_X);
	ck_assert_int_eq(v.first[0].rank, D);
	ck_assert_int_eq(v.first[0].src_rank, ex[D].src_rank[j]);
	ck_assert_int_eq(v.first[0].src_token, ex[D].src_token[j]);
	ck_assert_int_eq(v.first[0].row, j);
	ck_assert_int_eq(v.first[0].col, c);
	ck_assert_uint_eq(v.first[0].expected, before);
	ck_assert_uint_eq(v.first[0].actual, before ^ 1u);
}
END_TEST

/* (8a) A NaN in x. */
START_TEST(fault_nan_in_x)
{
	uint32_t j = 2, c = 5;

	((uint16_t *)ac.x)[(size_t)j * ac.hidden + c] = 0x7fc0u;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_X, 1);
	ck_assert_uint_eq(v.nonfinite, 1);
	ck_assert_int_eq(v.first[0].row, j);
	ck_assert_int_eq(v.first[0].col, c);
	ck_assert_uint_eq(v.first[0].actual, 0x7fc0u);
}
END_TEST

/* (9) A stale row from the previous iteration: same routing, new
 * values, one row left over from iter 0. */
START_TEST(fault_stale_row)
{
	static const char *const it1[] = {"iter", "1", NULL};
	eg_workload_t w1;
	eg_gen_t g1;
	eg_recv_t e1, a1;
	uint32_t j = ex[D].num_rows / 2;

	mk_workload(&w1, it1);
	ck_assert_int_eq(eg_gen_init(&g1, &w1), EG_OK);
	ck_assert_int_eq(eg_ref_dispatch(&w1, &g1, D, &e1), EG_OK);
	/* precondition: the routing is the same, only values differ */
	ck_assert_uint_eq(e1.num_rows, ex[D].num_rows);
	ck_assert_mem_eq(e1.src_token, ex[D].src_token,
			 e1.num_rows * sizeof(int32_t));
	ck_assert_mem_eq(e1.topk_idx, ex[D].topk_idx,
			 (size_t)e1.num_rows * e1.topk * sizeof(int32_t));
	recv_copy(&a1, &w1, &e1);
	ck_assert_int_eq(eg_verify_dispatch(&w1, &e1, &a1, &v), EG_OK);

	row_copy(&a1, j, &ex[D], j);
	ck_assert_int_eq(eg_verify_dispatch(&w1, &e1, &a1, &v), EG_EMISMATCH);
	ck_assert_uint_ge(v.wrong[EG_FIELD_X], 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), v.wrong[EG_FIELD_X]);
	for (uint32_t i = 0; i < v.n_first; i++)
		ck_assert_int_eq(v.first[i].row, j);
	eg_recv_free(&a1);
	eg_recv_free(&e1);
	eg_gen_fini(&g1);
	eg_workload_fini(&w1);
}
END_TEST

START_TEST(fault_last_row_bit)
{
	uint32_t j = ac.num_rows - 1, H = ac.hidden;

	((uint16_t *)ac.x)[(size_t)j * H + H - 1] ^= 1u;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_X, 1);
	ck_assert_int_eq(v.first[0].row, j);
	ck_assert_int_eq(v.first[0].col, H - 1);
}
END_TEST

START_TEST(fault_last_row_dropped)
{
	uint32_t j = ac.num_rows - 1;

	ac.num_rows = j;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 2);
	/* the missing row is named by its source */
	ck_assert_int_eq(v.first[1].field, EG_FIELD_ROW_SET);
	ck_assert_int_eq(v.first[1].src_rank, ex[D].src_rank[j]);
	ck_assert_int_eq(v.first[1].src_token, ex[D].src_token[j]);
}
END_TEST

/* ---- fixture: all slots on rank 0, so ranks 1..3 receive nothing ---- */
static const char *const hot_kv[] = {"routing", "hot-rank:0", NULL};

static void setup_hot(void)
{
	setup_base(hot_kv);
}

static uint32_t empty_rank(void)
{
	for (uint32_t d = 0; d < NRANK; d++)
		if (ex[d].num_rows == 0)
			return d;
	ck_abort_msg("no rank without rows");
	return 0;
}

START_TEST(control_empty_rank)
{
	uint32_t d = empty_rank();
	eg_recv_t c;

	ck_assert_uint_gt(ex[0].num_rows, 0);
	recv_copy(&c, &wl, &ex[d]);
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex[d], &c, &v), EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_NUM_ROWS], 1);
	ck_assert_uint_eq(v.checked[EG_FIELD_RANK_PREFIX], NRANK + 1);
	eg_recv_free(&c);
}
END_TEST

/* A rank that should receive nothing gets one row. */
START_TEST(fault_row_on_empty_rank)
{
	uint32_t d = empty_rank();
	eg_recv_t c;

	ck_assert_int_eq(eg_recv_alloc(&c, &wl, d, 1), EG_OK);
	memcpy(c.expert_count, ex[d].expert_count,
	       c.local_experts * sizeof(uint32_t));
	memcpy(c.rank_prefix, ex[d].rank_prefix,
	       (NRANK + 1) * sizeof(uint32_t));
	row_copy(&c, 0, &ex[0], 0);
	c.num_rows = 1;
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex[d], &c, &v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 1);
	ck_assert_uint_eq(v.first[0].expected, 0);
	ck_assert_uint_eq(v.first[0].actual, 1);
	ck_assert_uint_eq(v.unknown_rows, 1);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 2);
	eg_recv_free(&c);

	/* a zero-capacity buffer claiming a row: reported, never read */
	ck_assert_int_eq(eg_recv_alloc(&c, &wl, d, 0), EG_OK);
	memcpy(c.expert_count, ex[d].expert_count,
	       c.local_experts * sizeof(uint32_t));
	memcpy(c.rank_prefix, ex[d].rank_prefix,
	       (NRANK + 1) * sizeof(uint32_t));
	c.num_rows = 1;
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex[d], &c, &v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 2);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 2);
	eg_recv_free(&c);
}
END_TEST

/* ---- fixture: combine output of source rank S ---- */
#define S 2
static void *cex, *cac;
static double *ref64, *mag64;
static size_t cbytes, celems;

static void setup_combine_with(const char *const *extra)
{
	mk_workload(&wl, extra);
	ck_assert_int_eq(eg_gen_init(&gen, &wl), EG_OK);
	cbytes = eg_combine_bytes(&wl, S);
	celems = (size_t)eg_workload_tokens(&wl, S) * wl.hidden;
	ck_assert_uint_gt(celems, 0);
	cex = malloc(cbytes);
	cac = malloc(cbytes);
	ref64 = malloc(celems * sizeof(double));
	mag64 = malloc(celems * sizeof(double));
	ck_assert(cex && cac && ref64 && mag64);
	ck_assert_int_eq(eg_ref_combine(&wl, &gen, S, cex, ref64, mag64),
			 EG_OK);
	memcpy(cac, cex, cbytes);
	eg_verdict_init(&v);
}

static void setup_combine(void)
{
	setup_combine_with(NULL);
}

static void teardown_combine(void)
{
	free(cex);
	free(cac);
	free(ref64);
	free(mag64);
	eg_gen_fini(&gen);
	eg_workload_fini(&wl);
}

START_TEST(control_combine)
{
	ck_assert_int_eq(eg_verify_combine(&wl, S, EG_COMPARE_BITS, cex, NULL,
					   NULL, cac, &v),
			 EG_OK);
	ck_assert_int_eq(eg_verify_combine(&wl, S, EG_COMPARE_BOUNDED, cex,
					   ref64, mag64, cac, &v),
			 EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_COMBINE], 2 * celems);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
}
END_TEST

/* One element one ulp off: bit-exact mode must see it. */
START_TEST(fault_combine_one_ulp)
{
	size_t i = celems / 2 + 3, H = wl.hidden;
	uint16_t *a = cac;

	a[i] += 1u;
	ck_assert_int_eq(eg_verify_combine(&wl, S, EG_COMPARE_BITS, cex, NULL,
					   NULL, cac, &v),
			 EG_EMISMATCH);
	assert_only(EG_FIELD_COMBINE, 1);
	ck_assert_int_eq(v.first[0].src_rank, S);
	ck_assert_int_eq(v.first[0].src_token, i / H);
	ck_assert_int_eq(v.first[0].col, i % H);
	ck_assert_uint_eq(v.first[0].actual, v.first[0].expected + 1);
}
END_TEST

/* (8b) A NaN in the combine output, in both modes. */
START_TEST(fault_nan_in_combine)
{
	uint16_t *a = cac;

	a[7] = 0x7fc0u;
	ck_assert_int_eq(eg_verify_combine(&wl, S, EG_COMPARE_BITS, cex, NULL,
					   NULL, cac, &v),
			 EG_EMISMATCH);
	assert_only(EG_FIELD_COMBINE, 1);
	ck_assert_uint_eq(v.nonfinite, 1);
	ck_assert_int_eq(v.first[0].col, 7);

	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, S, EG_COMPARE_BOUNDED, NULL,
					   ref64, mag64, cac, &v),
			 EG_EMISMATCH);
	assert_only(EG_FIELD_COMBINE, 1);
	ck_assert_uint_eq(v.nonfinite, 1);
}
END_TEST

/* ---- fixture: non-finite data (docs/semantics.md, "Non-finite
 * values"): NaN and +-Inf in chosen tokens' inputs, masked slots ---- */
static const char *const nf_kv[] = {"mask", "0.3", "nonfinite", "input:0.25",
				    NULL};
static size_t nf_nan, nf_inf; /* an element of each in the reference */

static void setup_nonfinite(void)
{
	const uint16_t *e;

	setup_combine_with(nf_kv);
	e = cex;
	nf_nan = nf_inf = celems;
	for (size_t i = 0; i < celems; i++) {
		if ((e[i] & 0x7fffu) > 0x7f80u && nf_nan == celems)
			nf_nan = i;
		if ((e[i] & 0x7fffu) == 0x7f80u && nf_inf == celems)
			nf_inf = i;
	}
	ck_assert_msg(nf_nan < celems && nf_inf < celems,
		      "the fixture's reference has a NaN and an Inf");
}

static int combine_bits(void)
{
	return eg_verify_combine(&wl, S, EG_COMPARE_BITS, cex, NULL, NULL, cac,
				 &v);
}

static int combine_bounded(void)
{
	return eg_verify_combine(&wl, S, EG_COMPARE_BOUNDED, NULL, ref64, mag64,
				 cac, &v);
}

/* The reference's own non-finite values pass, also a NaN of another sign
 * and payload (x86 makes -NaN of Inf - Inf, CUDA +NaN). */
START_TEST(control_nonfinite)
{
	uint16_t *a = cac;

	ck_assert(isnan(ref64[nf_nan]) && isinf(ref64[nf_inf]));
	a[nf_nan] = (uint16_t)(a[nf_nan] ^ 0x8001u);
	ck_assert_int_eq(combine_bits(), EG_OK);
	ck_assert_int_eq(combine_bounded(), EG_OK);
	ck_assert_uint_eq(v.nonfinite, 0);
}
END_TEST

/* A NaN in a token that carries none: 0 x NaN of a masked slot. */
START_TEST(fault_nonfinite_leaks)
{
	const uint16_t *e = cex;
	uint16_t *a = cac;
	size_t i = 0;

	while (i < celems && (e[i] & 0x7f80u) == 0x7f80u)
		i++;
	ck_assert_uint_lt(i, celems);
	a[i] = 0xffc0u;
	ck_assert_int_eq(combine_bits(), EG_EMISMATCH);
	assert_only(EG_FIELD_COMBINE, 1);
	ck_assert_uint_eq(v.nonfinite, 1);
	eg_verdict_init(&v);
	ck_assert_int_eq(combine_bounded(), EG_EMISMATCH);
	assert_only(EG_FIELD_COMBINE, 1);
	ck_assert_uint_eq(v.nonfinite, 1);
}
END_TEST

/* An Inf keeps its sign; NaN for an Inf, a finite value for a NaN (a
 * library that scrubs NaN to 0) are wrong too, in both modes. */
START_TEST(fault_nonfinite_class)
{
	uint16_t *a = cac;

	a[nf_inf] ^= 0x8000u;		  /* -Inf for +Inf or back */
	a[nf_nan] = 0;			  /* 0 for NaN */
	a[nf_inf == 0 ? 1 : 0] = 0x7fc0u; /* NaN where it is finite */
	ck_assert_int_eq(combine_bits(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 3);
	eg_verdict_init(&v);
	ck_assert_int_eq(combine_bounded(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 3);
	memcpy(cac, cex, cbytes);
	a[nf_inf] = 0x7fc0u; /* NaN for an Inf */
	eg_verdict_init(&v);
	ck_assert_int_eq(combine_bits(), EG_EMISMATCH);
	ck_assert_int_eq(combine_bounded(), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 2);
	ck_assert_uint_eq(v.nonfinite, 0);
}
END_TEST

static void setup_nonfinite_dispatch(void)
{
	setup_base(nf_kv);
}

/* Dispatch moves a non-finite payload bit for bit: its own bits pass, a
 * NaN with another sign is wrong. */
START_TEST(fault_nonfinite_dispatch)
{
	uint16_t *x = ac.x;
	size_t n = (size_t)ex[D].num_rows * wl.hidden, i = 0;

	ck_assert_int_eq(verify(), EG_OK);
	while (i < n && (x[i] & 0x7fffu) <= 0x7f80u)
		i++;
	ck_assert_msg(i < n, "rank %d receives a NaN", D);
	x[i] ^= 0x8000u;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_X, 1);
	ck_assert_uint_eq(v.nonfinite, 0);
}
END_TEST

/* ---- fixture: fp8, where a wrong block scale is its own fault ---- */
static const char *const fp8_kv[] = {"dtype", "fp8",	"hidden", "256",
				     "data",  "random", NULL};

static void setup_fp8(void)
{
	setup_base(fp8_kv);
	ck_assert_uint_ge(ex[D].num_rows, 2);
}

START_TEST(control_fp8)
{
	ck_assert_int_eq(verify(), EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_SCALES],
			  (uint64_t)ex[D].num_rows * 2);
}
END_TEST

START_TEST(fault_fp8_scale)
{
	ac.scales[1 * 2 + 1] *= 2.0f;
	ck_assert_int_eq(verify(), EG_EMISMATCH);
	assert_only(EG_FIELD_SCALES, 1);
	ck_assert_int_eq(v.first[0].row, 1);
	ck_assert_int_eq(v.first[0].col, 1);
}
END_TEST

static Suite *faults_suite(void)
{
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("dispatch");
	TCase *te = tcase_create("empty_rank");
	TCase *tcc = tcase_create("combine");
	TCase *tf = tcase_create("fp8");
	TCase *tn = tcase_create("nonfinite");
	TCase *tnd = tcase_create("nonfinite_dispatch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, control_dispatch);
	tcase_add_test(tc, fault_dropped_row);
	tcase_add_test(tc, fault_duplicated_row);
	tcase_add_test(tc, fault_rows_swapped_across_sources);
	tcase_add_test(tc, fault_wrong_source_id);
	tcase_add_test(tc, fault_weight_wrong_slot);
	tcase_add_test(tc, fault_prefix_off_by_one);
	tcase_add_test(tc, fault_flipped_bit);
	tcase_add_test(tc, fault_nan_in_x);
	tcase_add_test(tc, fault_stale_row);
	tcase_add_test(tc, fault_last_row_bit);
	tcase_add_test(tc, fault_last_row_dropped);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(te, setup_hot, teardown);
	tcase_add_test(te, control_empty_rank);
	tcase_add_test(te, fault_row_on_empty_rank);
	suite_add_tcase(s, te);

	tcase_add_checked_fixture(tcc, setup_combine, teardown_combine);
	tcase_add_test(tcc, control_combine);
	tcase_add_test(tcc, fault_combine_one_ulp);
	tcase_add_test(tcc, fault_nan_in_combine);
	suite_add_tcase(s, tcc);

	tcase_add_checked_fixture(tn, setup_nonfinite, teardown_combine);
	tcase_add_test(tn, control_nonfinite);
	tcase_add_test(tn, fault_nonfinite_leaks);
	tcase_add_test(tn, fault_nonfinite_class);
	suite_add_tcase(s, tn);
	tcase_add_checked_fixture(tnd, setup_nonfinite_dispatch, teardown);
	tcase_add_test(tnd, fault_nonfinite_dispatch);
	suite_add_tcase(s, tnd);

	tcase_add_checked_fixture(tf, setup_fp8, teardown);
	tcase_add_test(tf, control_fp8);
	tcase_add_test(tf, fault_fp8_scale);
	suite_add_tcase(s, tf);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(faults_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
