/* Verifier: dispatch and combine results against the reference.
 *
 * Every element is compared by its bits (or, for combine in bounded mode,
 * against an fp64 reference within a stated bound); NaN and Inf in an
 * actual output are wrong wherever the reference has none. Where it has
 * one (nonfinite data, docs/semantics.md): dispatch moves it bit for bit,
 * combine must give NaN for NaN (sign and payload not compared) and the
 * same Inf for an Inf (lib/core/ep_core.h, eg_ep_match). Dispatch is
 * checked twice: positionally (the canonical layout is part of the
 * contract) and as a set of (src_rank, src_token) keys, so a report tells
 * a dropped or duplicated row apart from a misplaced one.
 *
 * Each verify call works on a fresh local verdict and merges it into the
 * caller's, so one verdict can collect several calls; initialise it with
 * eg_verdict_init first. The return value reflects this call only. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/out.h"
#include "epgate/verify.h"
#include "lib/core/ep_core.h"

const char *eg_field_name(eg_field_t f)
{
	switch (f) {
#define EG__FIELD_NAME(n, s)                                                   \
	case EG_FIELD_##n:                                                     \
		return s;
		EG_FIELD_MAP(EG__FIELD_NAME)
#undef EG__FIELD_NAME
	case EG_FIELD__COUNT:
		break;
	}
	return "?";
}

void eg_verdict_init(eg_verdict_t *v)
{
	memset(v, 0, sizeof(*v));
}

uint64_t eg_verdict_total_wrong(const eg_verdict_t *v)
{
	uint64_t n = 0;

	for (int f = 0; f < EG_FIELD__COUNT; f++)
		n += v->wrong[f];
	return n;
}

void eg_verdict_merge(eg_verdict_t *a, const eg_verdict_t *b)
{
	for (int f = 0; f < EG_FIELD__COUNT; f++) {
		a->checked[f] += b->checked[f];
		a->wrong[f] += b->wrong[f];
	}
	a->missing_rows += b->missing_rows;
	a->duplicate_rows += b->duplicate_rows;
	a->unknown_rows += b->unknown_rows;
	a->nonfinite += b->nonfinite;
	if (b->max_abs_err > a->max_abs_err)
		a->max_abs_err = b->max_abs_err;
	if (b->max_err_ratio > a->max_err_ratio)
		a->max_err_ratio = b->max_err_ratio;
	for (uint32_t i = 0; i < b->n_first && a->n_first < EG_VERIFY_MAX_FIRST;
	     i++)
		a->first[a->n_first++] = b->first[i];
}

void eg_verdict_wrong(eg_verdict_t *v, const eg_mismatch_t *m)
{
	v->wrong[m->field]++;
	if (v->n_first < EG_VERIFY_MAX_FIRST)
		v->first[v->n_first++] = *m;
}

void eg_verdict_wrong_at(eg_verdict_t *v, eg_field_t f, int32_t rank,
			 int32_t src_rank, int32_t src_token, int32_t expert,
			 int64_t row, int64_t col, uint64_t expected,
			 uint64_t actual)
{
	eg_mismatch_t m = {f,	rank, src_rank, src_token, expert,
			   row, col,  expected, actual};

	eg_verdict_wrong(v, &m);
}

static uint64_t eg__f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static uint64_t eg__src_key(int32_t src_rank, int32_t src_token)
{
	return (uint64_t)(uint32_t)src_rank << 32 | (uint32_t)src_token;
}

static int eg__recv_shape_ok(const eg_workload_t *w, const eg_recv_t *r)
{
	return r->world == w->world && r->hidden == w->hidden &&
	       r->topk == w->topk &&
	       r->local_experts == eg_workload_local_experts(w) &&
	       r->dtype == w->dtype && r->x && r->src_rank && r->src_token &&
	       r->topk_idx && r->topk_w && r->expert_count && r->rank_prefix &&
	       (w->dtype != EG_DTYPE_FP8 || r->scales);
}

/* Row i of expected vs row i of actual, every field of the row. */
static void eg__cmp_row(const eg_recv_t *e, const eg_recv_t *a, uint32_t i,
			eg_verdict_t *v)
{
	int32_t d = (int32_t)e->rank;
	int32_t sr = e->src_rank[i], st = e->src_token[i];
	uint32_t H = e->hidden, K = e->topk, L = e->local_experts;

	v->checked[EG_FIELD_SRC]++;
	if (a->src_rank[i] != sr || a->src_token[i] != st)
		eg_verdict_wrong_at(
		    v, EG_FIELD_SRC, d, sr, st, -1, i, -1, eg__src_key(sr, st),
		    eg__src_key(a->src_rank[i], a->src_token[i]));

	for (uint32_t h = 0; h < H; h++) {
		size_t j = (size_t)i * H + h;
		uint64_t eb = eg_load_bits(e->dtype, e->x, j);
		uint64_t ab = eg_load_bits(a->dtype, a->x, j);
		/* a non-finite value where the reference has none */
		int nf = eg_is_nonfinite(a->dtype, a->x, j) &&
			 !eg_is_nonfinite(e->dtype, e->x, j);

		v->checked[EG_FIELD_X]++;
		v->nonfinite += (uint64_t)nf;
		if (eb != ab)
			eg_verdict_wrong_at(v, EG_FIELD_X, d, sr, st, -1, i, h,
					    eb, ab);
	}

	if (e->dtype == EG_DTYPE_FP8) {
		uint32_t nb = H / EG_FP8_BLOCK;

		for (uint32_t b = 0; b < nb; b++) {
			float ef = e->scales[(size_t)i * nb + b];
			float af = a->scales[(size_t)i * nb + b];
			int nf = !isfinite(af) && isfinite(ef);

			v->checked[EG_FIELD_SCALES]++;
			v->nonfinite += (uint64_t)nf;
			if (eg__f32_bits(ef) != eg__f32_bits(af))
				eg_verdict_wrong_at(
				    v, EG_FIELD_SCALES, d, sr, st, -1, i, b,
				    eg__f32_bits(ef), eg__f32_bits(af));
		}
	}

	for (uint32_t k = 0; k < K; k++) {
		size_t j = (size_t)i * K + k;
		int32_t ei = e->topk_idx[j], ai = a->topk_idx[j];
		int32_t ex = ei >= 0 ? d * (int32_t)L + ei : -1;
		float ew = e->topk_w[j], aw = a->topk_w[j];
		int nf = !isfinite(aw);

		v->checked[EG_FIELD_TOPK_IDX]++;
		if (ei != ai)
			eg_verdict_wrong_at(v, EG_FIELD_TOPK_IDX, d, sr, st, ex,
					    i, k, (uint64_t)(int64_t)ei,
					    (uint64_t)(int64_t)ai);
		v->checked[EG_FIELD_TOPK_W]++;
		v->nonfinite += (uint64_t)nf;
		if (eg__f32_bits(ew) != eg__f32_bits(aw) || nf)
			eg_verdict_wrong_at(v, EG_FIELD_TOPK_W, d, sr, st, ex,
					    i, k, eg__f32_bits(ew),
					    eg__f32_bits(aw));
	}
}

typedef struct eg__key {
	uint64_t key;
	uint32_t row;
} eg__key_t;

static int eg__key_cmp(const void *pa, const void *pb)
{
	const eg__key_t *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

static eg__key_t *eg__sorted_keys(const eg_recv_t *r, uint32_t n)
{
	eg__key_t *k = malloc((n ? n : 1) * sizeof(*k));

	if (!k)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		k[i].key = eg__src_key(r->src_rank[i], r->src_token[i]);
		k[i].row = i;
	}
	qsort(k, n, sizeof(*k), eg__key_cmp);
	return k;
}

/* Rows as a set of (src_rank, src_token): missing, duplicated, unknown.
 * Walks both sorted key lists once. */
static int eg__cmp_row_set(const eg_recv_t *e, uint32_t ne, const eg_recv_t *a,
			   uint32_t na, eg_verdict_t *v)
{
	int32_t d = (int32_t)e->rank;
	eg__key_t *ek = eg__sorted_keys(e, ne);
	eg__key_t *ak = eg__sorted_keys(a, na);
	uint32_t i = 0, j = 0;
	int rc = EG_ENOMEM;

	if (!ek || !ak)
		goto out;
	v->checked[EG_FIELD_ROW_SET] += ne > na ? ne : na;
	while (i < ne || j < na) {
		uint64_t key;
		uint32_t ce = 0, ca = 0, arow = 0, arow2 = 0;

		if (j >= na || (i < ne && ek[i].key <= ak[j].key))
			key = ek[i].key;
		else
			key = ak[j].key;
		while (i < ne && ek[i].key == key) {
			ce++;
			i++;
		}
		while (j < na && ak[j].key == key) {
			if (ca == 0)
				arow = ak[j].row;
			else if (ca == 1)
				arow2 = ak[j].row;
			ca++;
			j++;
		}
		int32_t sr = (int32_t)(key >> 32), st = (int32_t)key;

		if (ce && !ca) {
			v->missing_rows++;
			eg_verdict_wrong_at(v, EG_FIELD_ROW_SET, d, sr, st, -1,
					    -1, -1, 1, 0);
		} else if (!ce && ca) {
			v->unknown_rows += ca;
			for (uint32_t c = 0; c < ca; c++)
				eg_verdict_wrong_at(v, EG_FIELD_ROW_SET, d, sr,
						    st, -1, c ? arow2 : arow,
						    -1, 0, ca);
		} else if (ca > 1) {
			/* expected holds each key once; extra copies are
			 * duplicates (row: the second copy) */
			v->duplicate_rows += ca - 1;
			for (uint32_t c = 1; c < ca; c++)
				eg_verdict_wrong_at(v, EG_FIELD_ROW_SET, d, sr,
						    st, -1, arow2, -1, 1, ca);
		}
	}
	rc = EG_OK;
out:
	free(ek);
	free(ak);
	return rc;
}

int eg_verify_dispatch(const eg_workload_t *w, const eg_recv_t *expected,
		       const eg_recv_t *actual, eg_verdict_t *v)
{
	const eg_recv_t *e = expected, *a = actual;
	eg_verdict_t lv;
	int32_t d;
	uint32_t ne, na, n, L;
	int rc;

	if (!w || !e || !a || !v)
		return EG_EINVAL;
	if (!eg__recv_shape_ok(w, e) || !eg__recv_shape_ok(w, a) ||
	    e->rank != a->rank || e->rank >= w->world ||
	    e->num_rows > e->capacity)
		return EG_EINVAL;

	eg_verdict_init(&lv);
	/* what the engine found in its own native layout: the diagnosis,
	 * so its mismatches come first */
	if (a->findings)
		eg_verdict_merge(&lv, a->findings);
	d = (int32_t)e->rank;
	L = e->local_experts;
	ne = e->num_rows;
	na = a->num_rows;

	lv.checked[EG_FIELD_NUM_ROWS]++;
	if (ne != na)
		eg_verdict_wrong_at(&lv, EG_FIELD_NUM_ROWS, d, -1, -1, -1, -1,
				    -1, ne, na);
	/* A count beyond the buffer is itself a bug; never read past it. */
	if (na > a->capacity) {
		lv.checked[EG_FIELD_NUM_ROWS]++;
		eg_verdict_wrong_at(&lv, EG_FIELD_NUM_ROWS, d, -1, -1, -1, -1,
				    0, a->capacity, na);
		na = a->capacity;
	}

	for (uint32_t s = 0; s <= w->world; s++) {
		lv.checked[EG_FIELD_RANK_PREFIX]++;
		if (e->rank_prefix[s] != a->rank_prefix[s])
			eg_verdict_wrong_at(&lv, EG_FIELD_RANK_PREFIX, d,
					    s < w->world ? (int32_t)s : -1, -1,
					    -1, -1, s, e->rank_prefix[s],
					    a->rank_prefix[s]);
	}

	for (uint32_t j = 0; j < L; j++) {
		lv.checked[EG_FIELD_EXPERT_COUNT]++;
		if (e->expert_count[j] != a->expert_count[j])
			eg_verdict_wrong_at(&lv, EG_FIELD_EXPERT_COUNT, d, -1,
					    -1, d * (int32_t)L + (int32_t)j, -1,
					    j, e->expert_count[j],
					    a->expert_count[j]);
	}

	n = ne < na ? ne : na;
	for (uint32_t i = 0; i < n; i++)
		eg__cmp_row(e, a, i, &lv);

	rc = eg__cmp_row_set(e, ne, a, na, &lv);
	if (rc < 0)
		return rc;

	eg_verdict_merge(v, &lv);
	return eg_verdict_total_wrong(&lv) ? EG_EMISMATCH : EG_OK;
}

/* Smallest positive normal: an exact 0 must pass the bound. */
static double eg__min_normal(eg_dtype_t t)
{
	return t == EG_DTYPE_FP8 ? ldexp(1.0, -6) : ldexp(1.0, -126);
}

int eg_verify_combine_args_ok(const eg_workload_t *w, uint32_t s,
			      eg_compare_t mode, const void *expected,
			      const double *ref64, const double *mag64,
			      const void *actual, const eg_verdict_t *v)
{
	if (!w || !actual || !v || s >= w->world)
		return 0;
	if (mode == EG_COMPARE_BITS)
		return expected != NULL;
	return mode == EG_COMPARE_BOUNDED && ref64 && mag64;
}

int eg_verify_combine(const eg_workload_t *w, uint32_t s, eg_compare_t mode,
		      const void *expected, const double *ref64,
		      const double *mag64, const void *actual, eg_verdict_t *v)
{
	eg_verdict_t lv;
	eg_dtype_t cdt;
	uint32_t T, H;
	double u = 0.0, tiny = 0.0;

	if (!eg_verify_combine_args_ok(w, s, mode, expected, ref64, mag64,
				       actual, v))
		return EG_EINVAL;

	eg_verdict_init(&lv);
	cdt = eg_combine_dtype(w->dtype);
	T = eg_workload_tokens(w, s);
	H = w->hidden;
	if (mode == EG_COMPARE_BOUNDED) {
		u = ldexp(1.0, 1 - (int)eg_dtype_mantissa_bits(cdt));
		tiny = eg__min_normal(cdt);
	}

	for (uint32_t t = 0; t < T; t++) {
		for (uint32_t h = 0; h < H; h++) {
			size_t i = (size_t)t * H + h;
			uint64_t ab = eg_load_bits(cdt, actual, i);
			int nf = eg_is_nonfinite(cdt, actual, i);
			uint64_t eb;
			int bad;

			lv.checked[EG_FIELD_COMBINE]++;
			if (mode == EG_COMPARE_BITS) {
				eb = eg_load_bits(cdt, expected, i);
				nf = nf && !eg_ep_nonfinite((uint32_t)cdt, eb);
				bad = !eg_ep_match((uint32_t)cdt, eb, ab);
			} else {
				double r = ref64[i];
				double a = eg_load_f32(cdt, actual, i);
				double bound = 4.0 * u * mag64[i] + u * fabs(r);
				double err = fabs(a - r);

				if (bound == 0.0)
					bound = tiny;
				if (!isfinite(r)) {
					/* nonfinite data: the class, not a
					 * bound */
					nf = 0;
					bad = !eg_ep_match_nonfinite(r, a);
				} else {
					bad = nf || !(err <= bound);
				}
				if (!nf && isfinite(r)) {
					if (err > lv.max_abs_err)
						lv.max_abs_err = err;
					if (err / bound > lv.max_err_ratio)
						lv.max_err_ratio = err / bound;
				}
				if (expected) {
					eb = eg_load_bits(cdt, expected, i);
				} else {
					/* report ref64 as the dtype would
					 * hold it */
					unsigned char tmp[8];

					eg_store_f32(cdt, tmp, 0, (float)r);
					eb = eg_load_bits(cdt, tmp, 0);
				}
			}
			lv.nonfinite += (uint64_t)nf;
			if (bad)
				eg_verdict_wrong_at(
				    &lv, EG_FIELD_COMBINE, (int32_t)s,
				    (int32_t)s, (int32_t)t, -1, t, h, eb, ab);
		}
	}

	eg_verdict_merge(v, &lv);
	return eg_verdict_total_wrong(&lv) ? EG_EMISMATCH : EG_OK;
}

static void eg__put_value(eg_out_t *o, eg_field_t f, uint64_t x)
{
	switch (f) {
	case EG_FIELD_SRC:
		eg_out_put(o, "(%" PRId32 ",%" PRId32 ")", (int32_t)(x >> 32),
			   (int32_t)x);
		break;
	case EG_FIELD_TOPK_IDX:
		eg_out_put(o, "%" PRId64, (int64_t)x);
		break;
	case EG_FIELD_X:
	case EG_FIELD_SCALES:
	case EG_FIELD_TOPK_W:
	case EG_FIELD_COMBINE:
		eg_out_put(o, "0x%" PRIx64, x);
		break;
	default: /* counts and offsets */
		eg_out_put(o, "%" PRIu64, x);
		break;
	}
}

/* The sentence of eg_mismatch_explain, put into o. */
static void eg__explain(eg_out_t *o, const eg_mismatch_t *m)
{
	if (m->field == EG_FIELD_EXPERT_COUNT)
		eg_out_put(o,
			   "expert_count of expert %" PRId32 " (local %" PRId64
			   ") on rank %" PRId32 ": got %" PRIu64
			   ", expected %" PRIu64 "; " EG_EXPERT_COUNT_MEANING,
			   m->expert, m->col, m->rank, m->actual, m->expected);
}

int eg_mismatch_explain(const eg_mismatch_t *m, char *buf, size_t len)
{
	eg_out_t o;

	eg_out_init(&o, buf, len);
	eg__explain(&o, m);
	return o.pos > (size_t)0x7fffffff ? 0x7fffffff : (int)o.pos;
}

int eg_verdict_format(const eg_verdict_t *v, char *buf, size_t len)
{
	eg_out_t o;
	uint64_t checked = 0, wrong = eg_verdict_total_wrong(v);

	eg_out_init(&o, buf, len);
	for (int f = 0; f < EG_FIELD__COUNT; f++)
		checked += v->checked[f];
	eg_out_put(&o, "%" PRIu64 " of %" PRIu64 " checked values wrong\n",
		   wrong, checked);
	for (int f = 0; f < EG_FIELD__COUNT; f++)
		if (v->wrong[f])
			eg_out_put(&o, "%s: %" PRIu64 " of %" PRIu64 " wrong\n",
				   eg_field_name((eg_field_t)f), v->wrong[f],
				   v->checked[f]);
	if (v->missing_rows || v->duplicate_rows || v->unknown_rows)
		eg_out_put(&o,
			   "rows: %" PRIu64 " missing, %" PRIu64
			   " duplicate, %" PRIu64 " unknown\n",
			   v->missing_rows, v->duplicate_rows, v->unknown_rows);
	if (v->nonfinite)
		eg_out_put(&o, "nonfinite: %" PRIu64 " NaN/Inf values\n",
			   v->nonfinite);
	if (v->max_abs_err > 0.0 || v->max_err_ratio > 0.0)
		eg_out_put(&o, "max error: %.6g (%.4g of the bound)\n",
			   v->max_abs_err, v->max_err_ratio);
	for (uint32_t i = 0; i < v->n_first && i < EG_VERIFY_MAX_FIRST; i++) {
		const eg_mismatch_t *m = &v->first[i];

		eg_out_put(&o,
			   "%s rank=%" PRId32 " src=(%" PRId32 ",%" PRId32
			   ") expert=%" PRId32 " row=%" PRId64 " col=%" PRId64
			   " expected=",
			   eg_field_name(m->field), m->rank, m->src_rank,
			   m->src_token, m->expert, m->row, m->col);
		eg__put_value(&o, m->field, m->expected);
		eg_out_put(&o, " actual=");
		eg__put_value(&o, m->field, m->actual);
		eg_out_put(&o, "\n");
		if (m->field == EG_FIELD_EXPERT_COUNT) {
			eg_out_put(&o, "  ");
			eg__explain(&o, m);
			eg_out_put(&o, "\n");
		}
	}
	return o.pos > (size_t)0x7fffffff ? 0x7fffffff : (int)o.pos;
}

void eg_verify_bound_scale(const double *ref64, double *mag64, size_t n,
			   double factor)
{
	/* 4u * m' + u * |r| = f * (4u * m + u * |r|) with
	 * m' = f * m + (f - 1) * |r| / 4 */
	for (size_t i = 0; i < n; i++)
		mag64[i] =
		    factor * mag64[i] + (factor - 1.0) * fabs(ref64[i]) / 4.0;
}

int eg_verify_combine_repeat(const eg_workload_t *w, uint32_t s,
			     const void *first, const void *again,
			     eg_verdict_t *v)
{
	eg_dtype_t cdt;
	eg_verdict_t lv;
	uint32_t T, H;

	if (!w || !first || !again || !v || s >= w->world)
		return EG_EINVAL;
	eg_verdict_init(&lv);
	cdt = eg_combine_dtype(w->dtype);
	T = eg_workload_tokens(w, s);
	H = w->hidden;
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t h = 0; h < H; h++) {
			size_t i = (size_t)t * H + h;
			uint64_t a = eg_load_bits(cdt, first, i);
			uint64_t b = eg_load_bits(cdt, again, i);

			lv.checked[EG_FIELD_COMBINE_REPEAT]++;
			if (a != b)
				eg_verdict_wrong_at(
				    &lv, EG_FIELD_COMBINE_REPEAT, (int32_t)s,
				    (int32_t)s, (int32_t)t, -1, t, h, a, b);
		}
	eg_verdict_merge(v, &lv);
	return eg_verdict_total_wrong(&lv) ? EG_EMISMATCH : EG_OK;
}
