/* The key of every slot of a plugin's native layout: from the source info
 * it returned (checked against the workload), or, when it returns none
 * (NCCL EP does not), by content: each slot is matched with a row of the
 * reference's dispatch of this iteration that carries the same bits.
 * Rows with the same bits are interchangeable (same expert outputs, same
 * combine), so which of them a slot gets does not matter; a slot whose
 * bits match no row has no key (an unknown row, and the row it should
 * have been is missing). */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/reference.h"
#include "plugin_int.h"

static void eg__unknown(const eg_plug_native_t *n, size_t i, int32_t s,
			int32_t t, eg_verdict_t *f)
{
	eg_mismatch_t m = {.field = EG_FIELD_NATIVE_KEY,
			   .rank = (int32_t)n->rank,
			   .src_rank = s,
			   .src_token = t,
			   .expert = -1,
			   .row = (int64_t)i,
			   .col = -1,
			   .expected = 0,
			   .actual = 0};
	eg_verdict_wrong(f, &m);
	f->unknown_rows++;
}

void eg_plug_keys_given(eg_plug_native_t *n, const eg_plug_routes_t *rt,
			eg_verdict_t *f)
{
	int rm = n->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR;

	for (uint32_t g = 0; g < n->G; g++)
		for (int64_t c = 0; c < n->count[g]; c++) {
			size_t i = (size_t)g * n->S + (size_t)c;
			int32_t s = n->src_rank ? n->src_rank[i] : (int32_t)g;
			int32_t t = n->src_token[i];

			n->key_src[i] = n->key_tok[i] = -1;
			if ((rm && s != (int32_t)g) || s < 0 ||
			    (uint32_t)s >= n->W || t < 0 ||
			    (uint32_t)t >= rt->tokens[s]) {
				eg__unknown(n, i, s, t, f);
				continue;
			}
			n->key_src[i] = s;
			n->key_tok[i] = t;
		}
}

/* Bytes of a row's content: payload, scales, and for row layouts the
 * top-k slots (int32 ids, fp32 weights; with any_order sorted as pairs,
 * in the scratch arrays). */
typedef struct eg__content {
	size_t xb, sb, kb;
	int with_topk, any_order;
	uint32_t K;
	int32_t *sid, *sid2;
	uint32_t *sw, *sw2;
} eg__content_t;

/* A row's slots as hashed and compared: as they are, or sorted. */
static void eg__slots(const eg__content_t *c, const int32_t *idx,
		      const float *w, const void **pi, const void **pw, int two)
{
	int32_t *sid = two ? c->sid2 : c->sid;
	uint32_t *sw = two ? c->sw2 : c->sw;

	*pi = idx;
	*pw = w;
	if (!c->any_order)
		return;
	eg_plug_slots_sorted(idx, w, c->K, sid, sw);
	*pi = sid;
	*pw = sw;
}

static uint64_t eg__fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t eg__hash_exp(const eg_recv_t *e, size_t j,
			     const eg__content_t *c)
{
	uint64_t h = 14695981039346656037ull;

	h = eg__fnv(h, (const uint8_t *)e->x + j * c->xb, c->xb);
	if (c->sb)
		h = eg__fnv(h, (const uint8_t *)e->scales + j * c->sb, c->sb);
	if (c->with_topk) {
		const void *pi, *pw;

		eg__slots(c, e->topk_idx + j * e->topk, e->topk_w + j * e->topk,
			  &pi, &pw, 0);
		h = eg__fnv(h, pi, c->kb);
		h = eg__fnv(h, pw, c->kb);
	}
	return h;
}

/* The native slot i's content in the expected row's form. */
static uint64_t eg__hash_slot(const eg_plug_native_t *n, size_t i,
			      const eg__content_t *c, int32_t *idx)
{
	uint64_t h = 14695981039346656037ull;

	h = eg__fnv(h, n->x + i * c->xb, c->xb);
	if (c->sb)
		h = eg__fnv(h, (const uint8_t *)n->scales + i * c->sb, c->sb);
	if (c->with_topk) {
		const void *pi, *pw;

		for (uint32_t k = 0; k < n->K; k++)
			idx[k] = (int32_t)n->topk_idx[i * n->K + k];
		eg__slots(c, idx, n->topk_w + i * n->K, &pi, &pw, 0);
		h = eg__fnv(h, pi, c->kb);
		h = eg__fnv(h, pw, c->kb);
	}
	return h;
}

static int eg__same(const eg_plug_native_t *n, size_t i, const eg_recv_t *e,
		    size_t j, const eg__content_t *c, const int32_t *idx)
{
	const void *ni, *nw, *ei, *ew;

	if (memcmp(n->x + i * c->xb, (const uint8_t *)e->x + j * c->xb, c->xb))
		return 0;
	if (c->sb && memcmp((const uint8_t *)n->scales + i * c->sb,
			    (const uint8_t *)e->scales + j * c->sb, c->sb))
		return 0;
	if (!c->with_topk)
		return 1;
	eg__slots(c, idx, n->topk_w + i * n->K, &ni, &nw, 0);
	eg__slots(c, e->topk_idx + j * e->topk, e->topk_w + j * e->topk, &ei,
		  &ew, 1);
	return !memcmp(ni, ei, c->kb) && !memcmp(nw, ew, c->kb);
}

/* An open-addressing table of the expected rows by content hash. */
typedef struct eg__table {
	size_t mask;
	int64_t *row; /* -1: empty */
	uint64_t *hash;
} eg__table_t;

static int eg__table_build(eg__table_t *t, const eg_recv_t *e,
			   const eg__content_t *c)
{
	size_t cap = 16;

	while (cap < 2 * (size_t)e->num_rows + 2)
		cap *= 2;
	t->mask = cap - 1;
	t->row = malloc(cap * sizeof(int64_t));
	t->hash = malloc(cap * sizeof(uint64_t));
	if (!t->row || !t->hash)
		return EG_ENOMEM;
	for (size_t i = 0; i < cap; i++)
		t->row[i] = -1;
	for (size_t j = 0; j < e->num_rows; j++) {
		uint64_t h = eg__hash_exp(e, j, c);
		size_t p = h & t->mask;

		while (t->row[p] >= 0)
			p = (p + 1) & t->mask;
		t->row[p] = (int64_t)j;
		t->hash[p] = h;
	}
	return EG_OK;
}

static void eg__table_free(eg__table_t *t)
{
	free(t->row);
	free(t->hash);
}

/* The expected row that slot i can take: same bits, not yet taken (for a
 * copy: has expert e among its slots, not yet taken for it). */
static int64_t eg__take(const eg_plug_native_t *n, size_t i, const eg_recv_t *e,
			const eg__table_t *t, const eg__content_t *c,
			uint8_t *used, int32_t *idx)
{
	int em = n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR;
	int32_t ge = (int32_t)(i / n->S);
	uint64_t h = eg__hash_slot(n, i, c, idx);

	for (size_t p = h & t->mask; t->row[p] >= 0; p = (p + 1) & t->mask) {
		size_t j = (size_t)t->row[p];

		if (t->hash[p] != h || !eg__same(n, i, e, j, c, idx))
			continue;
		for (uint32_t k = 0; k < (em ? n->K : 1); k++) {
			size_t u = j * n->K + k;

			if (used[u] || (em && e->topk_idx[u] != ge))
				continue;
			used[u] = 1;
			return (int64_t)j;
		}
	}
	return -1;
}

/* One pass over the slots still without a key. */
static int eg__match(eg_plug_native_t *n, const eg_recv_t *e,
		     const eg__content_t *c, uint8_t *used)
{
	eg__table_t t = {0};
	int32_t *idx = malloc((n->K + 1) * sizeof(int32_t));
	int rc = idx ? eg__table_build(&t, e, c) : EG_ENOMEM;

	for (uint32_t g = 0; rc == EG_OK && g < n->G; g++)
		for (int64_t q = 0; q < n->count[g]; q++) {
			size_t i = (size_t)g * n->S + (size_t)q;
			int64_t j;

			if (n->key_src[i] >= 0)
				continue;
			j = eg__take(n, i, e, &t, c, used, idx);
			if (j >= 0) {
				n->key_src[i] = e->src_rank[j];
				n->key_tok[i] = e->src_token[j];
			}
		}
	eg__table_free(&t);
	free(idx);
	return rc;
}

int eg_plug_keys_content(eg_plug_native_t *n, const eg_workload_t *w,
			 const eg_gen_t *g, eg_verdict_t *f)
{
	eg_recv_t e = {0};
	eg__content_t c = {
	    .xb = (size_t)n->H * eg_dtype_size(n->dtype),
	    .sb = n->scales ? (size_t)n->H / EG_FP8_BLOCK * sizeof(float) : 0,
	    .kb = (size_t)n->K * sizeof(int32_t),
	    .with_topk = n->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR,
	    .any_order = n->slots_any,
	    .K = n->K};
	uint8_t *used = NULL;
	int32_t *scratch = malloc(4 * ((size_t)n->K + 1) * sizeof(int32_t));
	int rc = scratch ? eg_ref_dispatch(w, g, n->rank, &e) : EG_ENOMEM;

	if (scratch) {
		c.sid = scratch;
		c.sid2 = scratch + n->K + 1;
		c.sw = (uint32_t *)(scratch + 2 * ((size_t)n->K + 1));
		c.sw2 = (uint32_t *)(scratch + 3 * ((size_t)n->K + 1));
	}

	for (size_t i = 0; i < (size_t)n->G * n->S; i++)
		n->key_src[i] = n->key_tok[i] = -1;
	if (rc == EG_OK && !(used = calloc((size_t)e.num_rows * n->K + 1, 1)))
		rc = EG_ENOMEM;
	if (rc == EG_OK)
		rc = eg__match(n, &e, &c, used);
	/* a row whose slots are wrong still finds its key by its payload,
	 * so the verdict names the wrong slot, not a lost row */
	if (rc == EG_OK && c.with_topk) {
		c.with_topk = 0;
		rc = eg__match(n, &e, &c, used);
	}
	for (uint32_t q = 0; rc == EG_OK && q < n->G; q++)
		for (int64_t r = 0; r < n->count[q]; r++) {
			size_t i = (size_t)q * n->S + (size_t)r;

			if (n->key_src[i] < 0)
				eg__unknown(n, i, -1, -1, f);
		}
	free(used);
	free(scratch);
	eg_recv_free(&e);
	return rc;
}
