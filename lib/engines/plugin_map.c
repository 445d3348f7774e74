/* A plugin's native receive layout onto epgate's canonical one, and its
 * expert outputs back. Every slot (row of the native layout) has a key:
 * (source rank, source token), plus the group's expert for an
 * expert-major copy. The canonical layout gets one row per distinct
 * (source rank, source token) in canonical order; what cannot be a row
 * (a duplicated key, a copy for an expert the token did not select,
 * copies of one token that differ) is recorded as a finding, so the
 * verdict names it instead of a confusing positional difference. */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "plugin_int.h"

void eg_plug_native_free(eg_plug_native_t *n)
{
	EG_FREE(n->count, n->x, n->scales, n->src_rank, n->src_token,
		n->topk_idx, n->topk_w, n->expert_count, n->key_src, n->key_tok,
		n->row);
	memset(n, 0, sizeof(*n));
}

int eg_plug_routes_build(eg_plug_routes_t *r, const eg_workload_t *w,
			 const eg_gen_t *g)
{
	uint32_t W = w->world, K = w->topk;

	memset(r, 0, sizeof(*r));
	r->W = W;
	r->K = K;
	r->tokens = calloc(W, sizeof(uint32_t));
	r->base = calloc(W + 1u, sizeof(uint32_t));
	if (!r->tokens || !r->base)
		return EG_ENOMEM;
	for (uint32_t s = 0; s < W; s++) {
		r->tokens[s] = eg_workload_tokens(w, s);
		r->base[s] = (uint32_t)r->total;
		r->total += r->tokens[s];
	}
	r->base[W] = (uint32_t)r->total;
	r->idx = malloc((r->total * K + 1) * sizeof(int32_t));
	r->wt = malloc((r->total * K + 1) * sizeof(float));
	if (!r->idx || !r->wt)
		return EG_ENOMEM;
	for (uint32_t s = 0; s < W; s++)
		eg_gen_routing_host(g, s, r->tokens[s],
				    r->idx + (size_t)r->base[s] * K,
				    r->wt + (size_t)r->base[s] * K);
	return EG_OK;
}

int eg_plug_routes_equal(const eg_plug_routes_t *a, const eg_plug_routes_t *b)
{
	size_t n = (size_t)a->total * a->K;

	return a->W == b->W && a->K == b->K && a->total == b->total &&
	       !memcmp(a->tokens, b->tokens, a->W * sizeof(*a->tokens)) &&
	       !memcmp(a->idx, b->idx, n * sizeof(*a->idx)) &&
	       !memcmp(a->wt, b->wt, n * sizeof(*a->wt));
}

void eg_plug_routes_free(eg_plug_routes_t *r)
{
	EG_FREE(r->tokens, r->base, r->idx, r->wt);
	memset(r, 0, sizeof(*r));
}

static void eg__finding(eg_verdict_t *f, eg_field_t field,
			const eg_plug_native_t *n, int32_t s, int32_t t,
			int32_t e, int64_t slot, int64_t col, uint64_t expected,
			uint64_t actual)
{
	eg_verdict_wrong_at(f, field, (int32_t)n->rank, s, t, e, slot, col,
			    expected, actual);
}

/* The slot k of key's routing whose expert is local expert e, or -1. */
static int eg__slot_of(const eg_plug_native_t *n, const eg_plug_routes_t *rt,
		       uint64_t key, uint32_t e)
{
	int32_t gid = (int32_t)(n->rank * n->L + e);

	for (uint32_t k = 0; k < n->K; k++)
		if (rt->idx[key * n->K + k] == gid)
			return (int)k;
	return -1;
}

/* Copy i of a token against its first copy j: payload and scales. */
static void eg__copy_cmp(const eg_plug_native_t *n, size_t j, size_t i,
			 uint32_t e, eg_verdict_t *f)
{
	size_t H = n->H, nb = H / EG_FP8_BLOCK;

	for (size_t h = 0; h < H; h++) {
		uint64_t a = eg_load_bits(n->dtype, n->x, j * H + h);
		uint64_t b = eg_load_bits(n->dtype, n->x, i * H + h);

		if (a != b)
			eg__finding(f, EG_FIELD_NATIVE_COPY, n, n->key_src[i],
				    n->key_tok[i],
				    (int32_t)(n->rank * n->L + e), (int64_t)i,
				    (int64_t)h, a, b);
	}
	for (size_t c = 0; n->scales && c < nb; c++)
		if (memcmp(&n->scales[j * nb + c], &n->scales[i * nb + c],
			   sizeof(float)))
			eg__finding(f, EG_FIELD_NATIVE_COPY, n, n->key_src[i],
				    n->key_tok[i],
				    (int32_t)(n->rank * n->L + e), (int64_t)i,
				    (int64_t)(H + c), 0, 0);
}

/* Marks every slot of key whose expert is local expert e as delivered:
 * one expert-major copy serves all of a token's slots with that expert
 * (duplicate expert ids within a token, docs/semantics.md). */
static void eg__seen_all(const eg_plug_native_t *n, const eg_plug_routes_t *rt,
			 uint64_t key, uint32_t e, uint8_t *seen)
{
	int32_t gid = (int32_t)(n->rank * n->L + e);

	for (uint32_t k = 0; k < n->K; k++)
		if (rt->idx[key * n->K + k] == gid)
			seen[key * n->K + k] = 1;
}

/* first[key]: the slot that gives key's row; seen[key * K + k]: an
 * expert-major copy for slot k's expert was seen. Records duplicates,
 * copies for experts not selected and copies that differ. */
static void eg__scan(eg_plug_native_t *n, const eg_plug_routes_t *rt,
		     int64_t *first, uint8_t *seen, eg_verdict_t *f)
{
	int em = n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR;

	for (uint32_t g = 0; g < n->G; g++)
		for (int64_t c = 0; c < n->count[g]; c++) {
			size_t i = (size_t)g * n->S + (size_t)c;
			int32_t s = n->key_src[i], t = n->key_tok[i];
			uint64_t key;
			int k = 0;

			if (s < 0)
				continue;
			key = rt->base[s] + (uint32_t)t;
			if (em && (k = eg__slot_of(n, rt, key, g)) < 0) {
				/* a copy for an expert the token did not
				 * select */
				eg__finding(f, EG_FIELD_NATIVE_KEY, n, s, t,
					    (int32_t)(n->rank * n->L + g),
					    (int64_t)i, -1, (uint64_t)-1, g);
				f->unknown_rows++;
				n->key_src[i] = -1;
				continue;
			}
			if ((em && seen[key * n->K + (uint32_t)k]) ||
			    (!em && first[key] >= 0)) {
				eg__finding(f, EG_FIELD_NATIVE_KEY, n, s, t,
					    em ? (int32_t)(n->rank * n->L + g)
					       : -1,
					    (int64_t)i, -1, 1, 2);
				f->duplicate_rows++;
				n->row[i] = -2; /* resolved below */
				continue;
			}
			if (em)
				eg__seen_all(n, rt, key, g, seen);
			if (first[key] < 0)
				first[key] = (int64_t)i;
			else
				eg__copy_cmp(n, (size_t)first[key], i, g, f);
		}
}

/* Row r of out from slot i (key of source s, token t). */
static void eg__fill_row(const eg_plug_native_t *n, const eg_plug_routes_t *rt,
			 const uint8_t *seen, size_t i, uint32_t r,
			 eg_recv_t *out, eg_verdict_t *f)
{
	size_t H = n->H, K = n->K, nb = H / EG_FP8_BLOCK;
	size_t esz = eg_dtype_size(n->dtype);
	int32_t s = n->key_src[i], t = n->key_tok[i];
	uint64_t key = rt->base[s] + (uint32_t)t;

	memcpy((uint8_t *)out->x + r * H * esz, n->x + i * H * esz, H * esz);
	if (n->scales)
		memcpy(out->scales + r * nb, n->scales + i * nb,
		       nb * sizeof(float));
	out->src_rank[r] = s;
	out->src_token[r] = t;
	for (size_t k = 0; k < K; k++) {
		int32_t *oi = &out->topk_idx[r * K + k];
		float *ow = &out->topk_w[r * K + k];

		if (n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR) {
			int32_t gid = rt->idx[key * K + k];
			int on = seen[key * K + k];

			*oi = on ? gid - (int32_t)(n->rank * n->L) : -1;
			*ow = on ? rt->wt[key * K + k] : 0.0f;
			continue;
		}
		int64_t v = n->topk_idx[i * K + k];

		*ow = n->topk_w[i * K + k];
		*oi = (int32_t)v;
		if (v < -1 || v >= (int64_t)n->L) {
			/* not a local expert id: never let the expert
			 * stage index with it */
			eg__finding(f, EG_FIELD_TOPK_IDX, n, s, t, -1,
				    (int64_t)i, (int64_t)k, (uint64_t)-1,
				    (uint64_t)v);
			*oi = -1;
		}
	}
}

/* expert_count and rank_prefix of the projected rows: the plugin's
 * counters where it gave them (FLAT, RANK_MAJOR), else the slots of the
 * rows (an expert-major copy serves every slot of its expert, so its
 * block's counter is not the slots' count when a token repeats one). */
static void eg__counts(const eg_plug_native_t *n, eg_recv_t *out)
{
	uint32_t L = n->L, K = n->K;

	for (uint32_t e = 0; e < L; e++)
		out->expert_count[e] =
		    n->expert_count ? (uint32_t)n->expert_count[e] : 0;
	for (uint32_t r = 0; !n->expert_count && r < out->num_rows; r++)
		for (uint32_t k = 0; k < K; k++)
			if (out->topk_idx[(size_t)r * K + k] >= 0)
				out->expert_count[out->topk_idx[(size_t)r * K +
								k]]++;
	uint32_t r = 0;
	for (uint32_t s = 0; s <= n->W; s++) {
		while (r < out->num_rows && out->src_rank[r] < (int32_t)s)
			r++;
		out->rank_prefix[s] = r;
	}
}

int eg_plug_project(eg_plug_native_t *n, const eg_plug_routes_t *rt,
		    eg_recv_t *out, eg_verdict_t *f)
{
	size_t slots = (size_t)n->G * n->S;
	int64_t *first = malloc((rt->total + 1) * sizeof(int64_t));
	uint8_t *seen = calloc(rt->total * n->K + 1, 1);
	int64_t *rowof = first; /* reused: key -> canonical row */
	uint32_t r = 0;

	if (!first || !seen) {
		free(first);
		free(seen);
		return EG_ENOMEM;
	}
	for (uint64_t k = 0; k < rt->total; k++)
		first[k] = -1;
	for (size_t i = 0; i < slots; i++)
		n->row[i] = -1;
	eg__scan(n, rt, first, seen, f);
	for (uint64_t key = 0; key < rt->total; key++) {
		if (first[key] < 0)
			continue;
		if (r == out->capacity)
			break; /* cannot happen: keys <= total tokens */
		eg__fill_row(n, rt, seen, (size_t)first[key], r, out, f);
		rowof[key] = r++;
	}
	out->num_rows = r;
	/* the valid slots only: a padding slot's key arrays hold nothing,
	 * and with no tokens anywhere rowof has no entry at all */
	for (uint32_t g = 0; g < n->G; g++)
		for (int64_t c = 0; c < n->count[g]; c++) {
			size_t i = (size_t)g * n->S + (size_t)c;
			int32_t s = n->key_src[i];

			if (s >= 0 && (n->row[i] == -1 || n->row[i] == -2))
				n->row[i] =
				    (int32_t)rowof[rt->base[s] +
						   (uint32_t)n->key_tok[i]];
		}
	eg__counts(n, out);
	free(first);
	free(seen);
	return EG_OK;
}

int eg_plug_native_y(const eg_plug_native_t *n, const eg_gen_t *g,
		     const void *y, void *ynat)
{
	eg_dtype_t ct = eg_combine_dtype(n->dtype);
	size_t rb = (size_t)n->H * eg_dtype_size(ct);
	size_t slots = (size_t)n->G * n->S, nb = n->H / EG_FP8_BLOCK;
	int em = n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR;

	memset(ynat, 0, slots * rb);
	for (size_t i = 0; i < slots; i++) {
		if (n->row[i] < 0)
			continue;
		if (!em) {
			memcpy((uint8_t *)ynat + i * rb,
			       (const uint8_t *)y + (size_t)n->row[i] * rb, rb);
			continue;
		}
		/* one copy: f_e(x), unweighted (weight 1 is exact) */
		int32_t e = (int32_t)(i / n->S);
		float one = 1.0f;
		eg_recv_t c = {.rank = n->rank,
			       .capacity = 1,
			       .num_rows = 1,
			       .dtype = n->dtype,
			       .world = n->W,
			       .hidden = n->H,
			       .topk = 1,
			       .local_experts = n->L,
			       .x = n->x + i * n->H * eg_dtype_size(n->dtype),
			       .scales = n->scales ? n->scales + i * nb : NULL,
			       .topk_idx = &e,
			       .topk_w = &one};
		int rc = eg_expert_stage(g, &c, (uint8_t *)ynat + i * rb);

		if (rc < 0)
			return rc;
	}
	return EG_OK;
}
