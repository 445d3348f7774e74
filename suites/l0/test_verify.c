/* L0: the verifier on small hand-built receive buffers. Each test plants
 * one difference and checks it is counted in the right field with the
 * right coordinates, and nowhere else. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/verify.h"

/* Fixture: rank d=1 of W=2, E=4 (L=2), K=2, H=8, bf16; three rows from
 * (0,0), (0,2), (1,1). Allocated here (calloc) so the test does not
 * depend on lib/core/ep.c. */
enum { W = 2, E = 4, L = 2, K = 2, H = 8, D = 1, NR = 3, T = 4 };

static eg_workload_t wl;
static eg_recv_t ex, ac;

static void mk_workload(eg_workload_t *w, eg_dtype_t dt, uint32_t hidden)
{
	memset(w, 0, sizeof(*w));
	w->world = W;
	w->experts = E;
	w->topk = K;
	w->hidden = hidden;
	w->dtype = dt;
	w->tokens_mode = EG_TOKENS_UNIFORM;
	w->tokens = T;
	w->data = EG_DATA_EXACT;
	w->seed = 1;
}

static void recv_free(eg_recv_t *r)
{
	eg_recv_free(r);
}

/* Zeroed buffers of rank D (eg_recv_alloc poisons them). */
static void recv_alloc(eg_recv_t *r, const eg_workload_t *w, uint32_t cap)
{
	size_t n = cap;
	ck_assert_int_eq(eg_recv_alloc(r, w, D, cap), EG_OK);
	memset(r->x, 0, n * w->hidden * eg_dtype_size(w->dtype));
	if (r->scales)
		memset(r->scales, 0, n * (w->hidden / EG_FP8_BLOCK) * 4);
	memset(r->src_rank, 0, n * sizeof(int32_t));
	memset(r->src_token, 0, n * sizeof(int32_t));
	memset(r->topk_idx, 0, n * w->topk * sizeof(int32_t));
	memset(r->topk_w, 0, n * w->topk * sizeof(float));
	memset(r->expert_count, 0, r->local_experts * sizeof(uint32_t));
	memset(r->rank_prefix, 0, (w->world + 1) * sizeof(uint32_t));
}

/* The canonical content of the fixture into r (cap >= NR). */
static void fill(eg_recv_t *r)
{
	static const int32_t sr[NR] = {0, 0, 1}, st[NR] = {0, 2, 1};
	static const int32_t idx[NR * K] = {0, -1, 1, 0, -1, 1};
	static const float wt[NR * K] = {1.0f, 0.0f, 0.5f, 2.0f, 0.0f, 1.0f};
	uint32_t H_ = r->hidden;

	r->num_rows = NR;
	for (int i = 0; i < NR; i++) {
		r->src_rank[i] = sr[i];
		r->src_token[i] = st[i];
		for (uint32_t h = 0; h < H_; h++)
			eg_store_f32(r->dtype, r->x, (size_t)i * H_ + h,
				     (float)(i * 16 + (int)(h % 16) - 7));
		if (r->scales)
			for (uint32_t b = 0; b < H_ / EG_FP8_BLOCK; b++)
				r->scales[i * (H_ / EG_FP8_BLOCK) + b] =
				    0.25f * (float)(i + b + 1);
	}
	memcpy(r->topk_idx, idx, sizeof(idx));
	memcpy(r->topk_w, wt, sizeof(wt));
	r->expert_count[0] = 2;
	r->expert_count[1] = 2;
	r->rank_prefix[0] = 0;
	r->rank_prefix[1] = 2;
	r->rank_prefix[2] = 3;
}

static void setup(void)
{
	mk_workload(&wl, EG_DTYPE_BF16, H);
	recv_alloc(&ex, &wl, NR);
	recv_alloc(&ac, &wl, NR);
	fill(&ex);
	fill(&ac);
}

static void teardown(void)
{
	recv_free(&ex);
	recv_free(&ac);
}

static uint64_t others_wrong(const eg_verdict_t *v, eg_field_t f)
{
	return eg_verdict_total_wrong(v) - v->wrong[f];
}

static int run_dispatch(eg_verdict_t *v)
{
	eg_verdict_init(v);
	return eg_verify_dispatch(&wl, &ex, &ac, v);
}

START_TEST(identical_ok)
{
	eg_verdict_t v;

	ck_assert_int_eq(run_dispatch(&v), EG_OK);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
	ck_assert_uint_eq(v.n_first, 0);
	ck_assert_uint_eq(v.nonfinite, 0);
	ck_assert_uint_eq(v.missing_rows + v.duplicate_rows + v.unknown_rows,
			  0);
	/* every element was actually compared */
	ck_assert_uint_eq(v.checked[EG_FIELD_NUM_ROWS], 1);
	ck_assert_uint_eq(v.checked[EG_FIELD_RANK_PREFIX], W + 1);
	ck_assert_uint_eq(v.checked[EG_FIELD_EXPERT_COUNT], L);
	ck_assert_uint_eq(v.checked[EG_FIELD_SRC], NR);
	ck_assert_uint_eq(v.checked[EG_FIELD_X], NR * H);
	ck_assert_uint_eq(v.checked[EG_FIELD_TOPK_IDX], NR * K);
	ck_assert_uint_eq(v.checked[EG_FIELD_TOPK_W], NR * K);
	ck_assert_uint_eq(v.checked[EG_FIELD_ROW_SET], NR);
	ck_assert_uint_eq(v.checked[EG_FIELD_SCALES], 0);
}
END_TEST

START_TEST(x_one_bit)
{
	eg_verdict_t v;
	uint16_t *x = ac.x;
	uint16_t before = x[2 * H + 5];

	x[2 * H + 5] ^= 1;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_X), 0);
	ck_assert_uint_eq(v.n_first, 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_X);
	ck_assert_int_eq(v.first[0].rank, D);
	ck_assert_int_eq(v.first[0].src_rank, 1);
	ck_assert_int_eq(v.first[0].src_token, 1);
	ck_assert_int_eq(v.first[0].expert, -1);
	ck_assert_int_eq(v.first[0].row, 2);
	ck_assert_int_eq(v.first[0].col, 5);
	ck_assert_uint_eq(v.first[0].expected, before);
	ck_assert_uint_eq(v.first[0].actual, before ^ 1u);
}
END_TEST

START_TEST(src_wrong)
{
	eg_verdict_t v;

	ac.src_token[1] = 3;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_SRC);
	ck_assert_int_eq(v.first[0].row, 1);
	ck_assert_int_eq(v.first[0].src_rank, 0);
	ck_assert_int_eq(v.first[0].src_token, 2);
	ck_assert_uint_eq(v.first[0].expected, (0ull << 32) | 2);
	ck_assert_uint_eq(v.first[0].actual, (0ull << 32) | 3);
	/* as a set: (0,2) missing, (0,3) unknown */
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.unknown_rows, 1);
	ck_assert_uint_eq(v.duplicate_rows, 0);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 2);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 3);
}
END_TEST

START_TEST(src_rank_wrong)
{
	eg_verdict_t v;

	ac.src_rank[2] = 0; /* (1,1) -> (0,1) */
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
	ck_assert_uint_eq(v.first[0].expected, (1ull << 32) | 1);
	ck_assert_uint_eq(v.first[0].actual, (0ull << 32) | 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.unknown_rows, 1);
}
END_TEST

START_TEST(topk_idx_wrong)
{
	eg_verdict_t v;

	ac.topk_idx[1 * K + 0] = 0; /* expected 1 */
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_TOPK_IDX], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_TOPK_IDX), 0);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_TOPK_IDX);
	ck_assert_int_eq(v.first[0].row, 1);
	ck_assert_int_eq(v.first[0].col, 0);
	ck_assert_int_eq(v.first[0].expert, D * L + 1);
	ck_assert_int_eq(v.first[0].src_token, 2);
	ck_assert_uint_eq(v.first[0].expected, 1);
	ck_assert_uint_eq(v.first[0].actual, 0);
}
END_TEST

START_TEST(topk_idx_masked_expert)
{
	eg_verdict_t v;

	ac.topk_idx[0 * K + 1] = 1; /* expected -1 */
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_TOPK_IDX], 1);
	ck_assert_int_eq(v.first[0].expert, -1);
	ck_assert_int_eq((int64_t)v.first[0].expected, -1);
}
END_TEST

START_TEST(topk_w_wrong)
{
	eg_verdict_t v;

	ac.topk_w[1 * K + 1] = 4.0f;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_TOPK_W], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_TOPK_W), 0);
	ck_assert_int_eq(v.first[0].row, 1);
	ck_assert_int_eq(v.first[0].col, 1);
	ck_assert_int_eq(v.first[0].expert, D * L + 0);
	ck_assert_uint_eq(v.first[0].expected, 0x40000000u);
	ck_assert_uint_eq(v.first[0].actual, 0x40800000u);
}
END_TEST

START_TEST(topk_w_negative_zero)
{
	eg_verdict_t v;

	/* -0.0 == 0.0 as floats, but not as bits */
	ac.topk_w[0 * K + 1] = -0.0f;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_TOPK_W], 1);
}
END_TEST

START_TEST(rank_prefix_wrong)
{
	eg_verdict_t v;

	ac.rank_prefix[1] = 1;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_RANK_PREFIX], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_RANK_PREFIX), 0);
	ck_assert_int_eq(v.first[0].col, 1);
	ck_assert_int_eq(v.first[0].src_rank, 1);
	ck_assert_uint_eq(v.first[0].expected, 2);
	ck_assert_uint_eq(v.first[0].actual, 1);
}
END_TEST

START_TEST(expert_count_wrong)
{
	eg_verdict_t v;

	ac.expert_count[1] = 3;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_EXPERT_COUNT], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_EXPERT_COUNT), 0);
	ck_assert_int_eq(v.first[0].col, 1);
	ck_assert_int_eq(v.first[0].expert, D * L + 1);
	ck_assert_uint_eq(v.first[0].expected, 2);
	ck_assert_uint_eq(v.first[0].actual, 3);
}
END_TEST

/* A count of rows where slots were due (a row naming local expert 0 in
 * both slots): the message names the expert, both counts and what
 * expert_count counts; other fields have no message. */
START_TEST(expert_count_explained)
{
	eg_verdict_t v;
	eg_mismatch_t x = {.field = EG_FIELD_X};
	char buf[2048], say[512];

	ex.topk_idx[1 * K + 0] = ac.topk_idx[1 * K + 0] = 0; /* row 1: 0, 0 */
	ex.expert_count[0] = 3;
	ex.expert_count[1] = 1;
	ac.expert_count[0] = 2; /* rows naming local 0: 0 and 1 */
	ac.expert_count[1] = 1;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_EXPERT_COUNT], 1);
	ck_assert_int_gt(eg_mismatch_explain(&v.first[0], say, sizeof(say)), 0);
	ck_assert_str_eq(say, "expert_count of expert 2 (local 0) on rank 1: "
			      "got 2, expected 3; expert_count counts slots: "
			      "the top-k slots of the received rows that name "
			      "the local expert, so a row naming it in two "
			      "slots counts 2 (docs/semantics.md)");
	ck_assert_int_gt(eg_verdict_format(&v, buf, sizeof(buf)), 0);
	ck_assert_ptr_nonnull(strstr(buf, say));
	ck_assert_int_eq(eg_mismatch_explain(&x, say, sizeof(say)), 0);
	ck_assert_str_eq(say, "");
}
END_TEST

START_TEST(num_rows_short)
{
	eg_verdict_t v;

	ac.num_rows = 2;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_NUM_ROWS);
	ck_assert_uint_eq(v.first[0].expected, 3);
	ck_assert_uint_eq(v.first[0].actual, 2);
	/* only the common rows are compared positionally */
	ck_assert_uint_eq(v.checked[EG_FIELD_SRC], 2);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], 0);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 1);
}
END_TEST

START_TEST(num_rows_past_capacity)
{
	eg_verdict_t v;

	/* a count beyond the buffer: reported, and never read past */
	ac.num_rows = 1000;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_NUM_ROWS], 2);
	ck_assert_uint_eq(v.checked[EG_FIELD_SRC], NR);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 0);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 2);
}
END_TEST

START_TEST(duplicate_row)
{
	eg_verdict_t v;

	ac.src_rank[2] = ac.src_rank[1];
	ac.src_token[2] = ac.src_token[1];
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.duplicate_rows, 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.unknown_rows, 0);
	ck_assert_uint_eq(v.wrong[EG_FIELD_ROW_SET], 2);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
}
END_TEST

START_TEST(unknown_row_out_of_range)
{
	eg_verdict_t v;

	ac.src_rank[0] = 7;
	ac.src_token[0] = -3;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.unknown_rows, 1);
	ck_assert_uint_eq(v.missing_rows, 1);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SRC], 1);
}
END_TEST

START_TEST(first_capped)
{
	eg_verdict_t v;
	uint16_t *x = ac.x;

	for (int i = 0; i < NR * H; i++)
		x[i] ^= 0x8000u; /* sign flip of every element */
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], NR * H);
	ck_assert_uint_eq(v.n_first, EG_VERIFY_MAX_FIRST);
	for (int i = 0; i < EG_VERIFY_MAX_FIRST; i++) {
		ck_assert_int_eq(v.first[i].field, EG_FIELD_X);
		ck_assert_int_eq(v.first[i].row, i / H);
		ck_assert_int_eq(v.first[i].col, i % H);
	}
}
END_TEST

START_TEST(nan_inf_x_where_expected)
{
	eg_verdict_t v;
	uint16_t *ax = ac.x, *ex_ = ex.x;

	/* nonfinite data (docs/semantics.md): the reference's own NaN and
	 * Inf, moved bit for bit, pass */
	ax[3] = ex_[3] = 0x7fc0u;
	ax[H + 1] = ex_[H + 1] = 0xff80u;
	ck_assert_int_eq(run_dispatch(&v), EG_OK);
	ck_assert_uint_eq(v.nonfinite, 0);
	/* a NaN where it has none is wrong, and counted; a NaN of other
	 * bits where it has one is wrong (dispatch moves bits) */
	ax[5] = 0x7fc0u;
	ax[3] = 0xffc0u;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], 2);
	ck_assert_uint_eq(v.nonfinite, 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_X), 0);
}
END_TEST

START_TEST(nan_topk_w_always_wrong)
{
	eg_verdict_t v;

	ac.topk_w[2] = ex.topk_w[2] = NAN;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_TOPK_W], 1);
	ck_assert_uint_eq(v.nonfinite, 1);
}
END_TEST

START_TEST(fp8_scales)
{
	eg_verdict_t v;
	uint8_t *x;

	teardown();
	mk_workload(&wl, EG_DTYPE_FP8, 256);
	recv_alloc(&ex, &wl, NR);
	recv_alloc(&ac, &wl, NR);
	fill(&ex);
	fill(&ac);
	ck_assert_int_eq(run_dispatch(&v), EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_SCALES], NR * 2);
	ck_assert_uint_eq(v.checked[EG_FIELD_X], NR * 256);

	ac.scales[2 * 2 + 1] = 0.5f;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SCALES], 1);
	ck_assert_uint_eq(others_wrong(&v, EG_FIELD_SCALES), 0);
	ck_assert_int_eq(v.first[0].row, 2);
	ck_assert_int_eq(v.first[0].col, 1);

	/* an Inf scale passes where the reference has it (an Inf in the
	 * block: nonfinite data), fails where it has none */
	ac.scales[2 * 2 + 1] = ex.scales[2 * 2 + 1] = INFINITY;
	ck_assert_int_eq(run_dispatch(&v), EG_OK);
	ex.scales[2 * 2 + 1] = 1.0f;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_SCALES], 1);
	ck_assert_uint_eq(v.nonfinite, 1);

	/* e4m3 NaN (S.1111.111) in the payload where it has none */
	ac.scales[2 * 2 + 1] = 1.0f;
	x = ac.x;
	x[7] = 0x7f;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_X], 1);
	ck_assert_uint_eq(v.nonfinite, 1);
}
END_TEST

START_TEST(bad_args)
{
	eg_verdict_t v;

	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_dispatch(NULL, &ex, &ac, &v), EG_EINVAL);
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex, &ac, NULL), EG_EINVAL);
	ac.hidden = H / 2; /* shapes that cannot be compared */
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex, &ac, &v), EG_EINVAL);
	ac.hidden = H;
	ac.rank = 0;
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex, &ac, &v), EG_EINVAL);
	ac.rank = D;
	ck_assert_int_eq(eg_verify_combine(&wl, W, EG_COMPARE_BITS, ex.x, NULL,
					   NULL, ac.x, &v),
			 EG_EINVAL);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BITS, NULL, NULL,
					   NULL, ac.x, &v),
			 EG_EINVAL);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, ex.x,
					   NULL, NULL, ac.x, &v),
			 EG_EINVAL);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);
}
END_TEST

START_TEST(merge_verdicts)
{
	eg_verdict_t a, b;
	uint16_t *x = ac.x;

	ac.rank_prefix[2] = 9;
	ck_assert_int_eq(run_dispatch(&a), EG_EMISMATCH);
	ac.rank_prefix[2] = 3;
	for (int i = 0; i < NR * H; i++)
		x[i] ^= 1;
	ck_assert_int_eq(run_dispatch(&b), EG_EMISMATCH);
	a.nonfinite = 2;
	b.nonfinite = 3;
	a.max_abs_err = 0.5;
	b.max_abs_err = 0.25;
	a.max_err_ratio = 0.1;
	b.max_err_ratio = 0.7;
	b.missing_rows = 4;
	eg_verdict_merge(&a, &b);
	ck_assert_uint_eq(a.wrong[EG_FIELD_RANK_PREFIX], 1);
	ck_assert_uint_eq(a.wrong[EG_FIELD_X], NR * H);
	ck_assert_uint_eq(a.checked[EG_FIELD_X], 2 * NR * H);
	ck_assert_uint_eq(a.checked[EG_FIELD_NUM_ROWS], 2);
	ck_assert_uint_eq(a.nonfinite, 5);
	ck_assert_uint_eq(a.missing_rows, 4);
	ck_assert(a.max_abs_err == 0.5);
	ck_assert(a.max_err_ratio == 0.7);
	/* a's own mismatch first, then b's, capped */
	ck_assert_uint_eq(a.n_first, EG_VERIFY_MAX_FIRST);
	ck_assert_int_eq(a.first[0].field, EG_FIELD_RANK_PREFIX);
	ck_assert_int_eq(a.first[1].field, EG_FIELD_X);
	ck_assert_int_eq(a.first[1].col, 0);
	ck_assert_int_eq(a.first[EG_VERIFY_MAX_FIRST - 1].col,
			 EG_VERIFY_MAX_FIRST - 2);
}
END_TEST

START_TEST(verdict_accumulates)
{
	eg_verdict_t v;

	/* a verify call adds into v; its return reflects only itself */
	ac.expert_count[0] = 0;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	ac.expert_count[0] = 2;
	ck_assert_int_eq(eg_verify_dispatch(&wl, &ex, &ac, &v), EG_OK);
	ck_assert_uint_eq(v.wrong[EG_FIELD_EXPERT_COUNT], 1);
	ck_assert_uint_eq(v.checked[EG_FIELD_EXPERT_COUNT], 2 * L);
}
END_TEST

/* Combine on source rank 0: T*H = 32 bf16 elements. */
START_TEST(combine_bits)
{
	eg_verdict_t v;
	uint16_t e[T * H], a[T * H];

	for (int i = 0; i < T * H; i++)
		e[i] = a[i] = eg_f32_to_bf16((float)(i - 9));
	eg_verdict_init(&v);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BITS, e, NULL, NULL, a, &v),
	    EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_COMBINE], T * H);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 0);

	a[2 * H + 3] += 1; /* one ulp */
	eg_verdict_init(&v);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 1, EG_COMPARE_BITS, e, NULL, NULL, a, &v),
	    EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 1);
	ck_assert_uint_eq(eg_verdict_total_wrong(&v), 1);
	ck_assert_int_eq(v.first[0].field, EG_FIELD_COMBINE);
	ck_assert_int_eq(v.first[0].rank, 1);
	ck_assert_int_eq(v.first[0].src_rank, 1);
	ck_assert_int_eq(v.first[0].src_token, 2);
	ck_assert_int_eq(v.first[0].col, 3);
	ck_assert_uint_eq(v.first[0].expected, e[2 * H + 3]);
	ck_assert_uint_eq(v.first[0].actual, a[2 * H + 3]);
}
END_TEST

START_TEST(combine_nonfinite_bits)
{
	eg_verdict_t v;
	uint16_t e[T * H], a[T * H];

	for (int i = 0; i < T * H; i++)
		e[i] = a[i] = eg_f32_to_bf16(1.0f);
	/* where the reference has them (nonfinite data): NaN for NaN, of
	 * any sign and payload, and the same Inf, pass */
	e[4] = 0x7fc1u;
	a[4] = 0xffc0u;
	e[20] = a[20] = 0x7f80u;
	eg_verdict_init(&v);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BITS, e, NULL, NULL, a, &v),
	    EG_OK);
	/* NaN or Inf where it has none, -Inf for +Inf: wrong */
	a[5] = 0x7fc0u;
	a[6] = 0x7f80u;
	a[20] = 0xff80u;
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BITS, e, NULL, NULL, a, &v),
	    EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 3);
	ck_assert_uint_eq(v.nonfinite, 2);
	ck_assert_int_eq(v.first[0].col, 5);
	ck_assert_int_eq(v.first[2].src_token, 20 / H);
}
END_TEST

/* bf16: p = 8, u = 2^-7; ref 1, mag 1 -> bound 5/128. */
START_TEST(combine_bounded)
{
	eg_verdict_t v;
	uint16_t a[T * H];
	double ref[T * H], mag[T * H];

	for (int i = 0; i < T * H; i++) {
		ref[i] = 1.0;
		mag[i] = 1.0;
		a[i] = eg_f32_to_bf16(1.0f);
	}
	ref[0] = mag[0] = 0.0; /* exact zero passes */
	a[0] = 0;
	a[1] = eg_f32_to_bf16(1.0f + 5.0f / 128.0f); /* at the bound */
	a[2] = eg_f32_to_bf16(1.0f - 4.0f / 128.0f); /* inside */
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_OK);
	ck_assert(v.max_abs_err == 5.0 / 128.0);
	ck_assert(v.max_err_ratio == 1.0);

	a[1] = eg_f32_to_bf16(1.0f + 6.0f / 128.0f); /* next value: out */
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 1);
	ck_assert_int_eq(v.first[0].col, 1);
	ck_assert_uint_eq(v.first[0].expected, eg_f32_to_bf16(1.0f));
	ck_assert(v.max_err_ratio > 1.0);

	/* an exact 0 reference tolerates no visible error */
	a[1] = eg_f32_to_bf16(1.0f);
	a[0] = eg_f32_to_bf16(0x1p-120f);
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 1);
	ck_assert_int_eq(v.first[0].col, 0);
}
END_TEST

START_TEST(combine_bounded_nonfinite)
{
	eg_verdict_t v;
	uint16_t a[T * H];
	double ref[T * H], mag[T * H];

	for (int i = 0; i < T * H; i++) {
		ref[i] = 1.0;
		mag[i] = 1e30; /* a huge bound must not admit NaN/Inf */
		a[i] = eg_f32_to_bf16(1.0f);
	}
	a[5] = 0x7fc0u;
	a[6] = 0xff80u;
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 2);
	ck_assert_uint_eq(v.nonfinite, 2);
	ck_assert(isfinite(v.max_abs_err));
}
END_TEST

START_TEST(combine_fp32)
{
	eg_verdict_t v;
	float e[T * H], a[T * H];
	double ref[T * H], mag[T * H];

	mk_workload(&wl, EG_DTYPE_FP32, H);
	for (int i = 0; i < T * H; i++) {
		e[i] = a[i] = 3.0f;
		ref[i] = 3.0;
		mag[i] = 3.0;
	}
	/* fp32: u = 2^-23, bound = 15 * 2^-23 = 3 * 5u */
	a[9] = 3.0f + 0x1p-21f * 2.0f; /* 8u: inside */
	eg_verdict_init(&v);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, e, ref, mag, a, &v),
	    EG_OK);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BITS, e, NULL, NULL, a, &v),
	    EG_EMISMATCH);
	a[9] = 3.0f + 0x1p-21f * 4.0f; /* 16u: outside */
	eg_verdict_init(&v);
	ck_assert_int_eq(
	    eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, e, ref, mag, a, &v),
	    EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE], 1);
}
END_TEST

/* A non-canonical engine's declared bound (order_bound) scales the bound:
 * 16u with ref = mag = 3 (bound 15u) fails at factor 1, passes at 2 and
 * fails again at 1/2 for 8u. */
START_TEST(combine_bound_scaled)
{
	eg_verdict_t v;
	float a[T * H];
	double ref[T * H], mag[T * H];

	mk_workload(&wl, EG_DTYPE_FP32, H);
	for (int i = 0; i < T * H; i++) {
		a[i] = 3.0f;
		ref[i] = mag[i] = 3.0;
	}
	a[9] = 3.0f + 0x1p-21f * 4.0f; /* 16u */
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_EMISMATCH);
	eg_verify_bound_scale(ref, mag, T * H, 2.0);
	ck_assert(fabs(4.0 * mag[9] + fabs(ref[9]) - 2.0 * 15.0) < 1e-12);
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_OK);
	for (int i = 0; i < T * H; i++)
		mag[i] = 3.0;
	eg_verify_bound_scale(ref, mag, T * H, 0.5);
	a[9] = 3.0f + 0x1p-21f * 2.0f; /* 8u: beyond 7.5u */
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine(&wl, 0, EG_COMPARE_BOUNDED, NULL,
					   ref, mag, a, &v),
			 EG_EMISMATCH);
}
END_TEST

/* A fixed-order engine's two combines of the same inputs: one bit apart
 * in one element is one combine_repeat mismatch with both patterns. */
START_TEST(combine_repeat)
{
	eg_verdict_t v;
	uint16_t a[T * H], b[T * H];

	for (int i = 0; i < T * H; i++)
		a[i] = b[i] = eg_f32_to_bf16(1.5f);
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine_repeat(&wl, 0, a, b, &v), EG_OK);
	ck_assert_uint_eq(v.checked[EG_FIELD_COMBINE_REPEAT], T * H);
	b[H + 3] ^= 1;
	eg_verdict_init(&v);
	ck_assert_int_eq(eg_verify_combine_repeat(&wl, 0, a, b, &v),
			 EG_EMISMATCH);
	ck_assert_uint_eq(v.wrong[EG_FIELD_COMBINE_REPEAT], 1);
	ck_assert_int_eq(v.first[0].src_token, 1);
	ck_assert_int_eq(v.first[0].col, 3);
	ck_assert_uint_eq(v.first[0].expected, a[H + 3]);
	ck_assert_uint_eq(v.first[0].actual, b[H + 3]);
	ck_assert_str_eq(eg_field_name(EG_FIELD_COMBINE_REPEAT),
			 "combine_repeat");
	ck_assert_int_eq(eg_verify_combine_repeat(&wl, 9, a, b, &v), EG_EINVAL);
}
END_TEST

START_TEST(format_text)
{
	eg_verdict_t v;
	char buf[2048], small[16];
	uint16_t *x = ac.x;
	int n;

	x[2 * H + 5] ^= 1;
	ac.src_token[1] = 3;
	ck_assert_int_eq(run_dispatch(&v), EG_EMISMATCH);
	n = eg_verdict_format(&v, buf, sizeof(buf));
	ck_assert_int_eq(n, (int)strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "x: 1 of 24 wrong"));
	ck_assert_ptr_nonnull(strstr(buf, "src: 1 of 3 wrong"));
	ck_assert_ptr_nonnull(strstr(buf, "row_set: 2 of 3 wrong"));
	ck_assert_ptr_nonnull(strstr(buf, "1 missing, 0 duplicate, 1 unknown"));
	ck_assert_ptr_nonnull(strstr(buf, "src rank=1 src=(0,2) expert=-1 "
					  "row=1 col=-1 expected=(0,2) "
					  "actual=(0,3)"));
	ck_assert_ptr_nonnull(strstr(buf, "x rank=1 src=(1,1) expert=-1 "
					  "row=2 col=5 expected=0x"));
	ck_assert_ptr_null(strstr(buf, "topk_w:"));

	/* snprintf semantics: truncated, terminated, full length returned */
	ck_assert_int_eq(eg_verdict_format(&v, small, sizeof(small)), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(eg_verdict_format(&v, NULL, 0), n);
}
END_TEST

START_TEST(format_nonfinite_and_bounded)
{
	eg_verdict_t v;
	char buf[1024];

	eg_verdict_init(&v);
	v.nonfinite = 3;
	v.max_abs_err = 0.125;
	v.max_err_ratio = 0.5;
	eg_verdict_format(&v, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "nonfinite: 3"));
	ck_assert_ptr_nonnull(strstr(buf, "max error: 0.125"));
}
END_TEST

START_TEST(field_names)
{
	ck_assert_str_eq(eg_field_name(EG_FIELD_NUM_ROWS), "num_rows");
	ck_assert_str_eq(eg_field_name(EG_FIELD_RANK_PREFIX), "rank_prefix");
	ck_assert_str_eq(eg_field_name(EG_FIELD_SRC), "src");
	ck_assert_str_eq(eg_field_name(EG_FIELD_ROW_SET), "row_set");
	ck_assert_str_eq(eg_field_name(EG_FIELD_X), "x");
	ck_assert_str_eq(eg_field_name(EG_FIELD_SCALES), "scales");
	ck_assert_str_eq(eg_field_name(EG_FIELD_TOPK_IDX), "topk_idx");
	ck_assert_str_eq(eg_field_name(EG_FIELD_TOPK_W), "topk_w");
	ck_assert_str_eq(eg_field_name(EG_FIELD_EXPERT_COUNT), "expert_count");
	ck_assert_str_eq(eg_field_name(EG_FIELD_COMBINE), "combine");
	ck_assert_str_eq(eg_field_name(EG_FIELD__COUNT), "?");
}
END_TEST

static Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("verify");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, identical_ok);
	tcase_add_test(tc, x_one_bit);
	tcase_add_test(tc, src_wrong);
	tcase_add_test(tc, src_rank_wrong);
	tcase_add_test(tc, topk_idx_wrong);
	tcase_add_test(tc, topk_idx_masked_expert);
	tcase_add_test(tc, topk_w_wrong);
	tcase_add_test(tc, topk_w_negative_zero);
	tcase_add_test(tc, rank_prefix_wrong);
	tcase_add_test(tc, expert_count_wrong);
	tcase_add_test(tc, expert_count_explained);
	tcase_add_test(tc, num_rows_short);
	tcase_add_test(tc, num_rows_past_capacity);
	tcase_add_test(tc, duplicate_row);
	tcase_add_test(tc, unknown_row_out_of_range);
	tcase_add_test(tc, first_capped);
	tcase_add_test(tc, nan_inf_x_where_expected);
	tcase_add_test(tc, nan_topk_w_always_wrong);
	tcase_add_test(tc, fp8_scales);
	tcase_add_test(tc, bad_args);
	tcase_add_test(tc, merge_verdicts);
	tcase_add_test(tc, verdict_accumulates);
	tcase_add_test(tc, combine_bits);
	tcase_add_test(tc, combine_nonfinite_bits);
	tcase_add_test(tc, combine_bounded);
	tcase_add_test(tc, combine_bounded_nonfinite);
	tcase_add_test(tc, combine_fp32);
	tcase_add_test(tc, combine_bound_scaled);
	tcase_add_test(tc, combine_repeat);
	tcase_add_test(tc, format_text);
	tcase_add_test(tc, format_nonfinite_and_bounded);
	tcase_add_test(tc, field_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(verify_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
