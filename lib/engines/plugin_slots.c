/* Slots in any order (EG_PLUGIN_SLOTS_ANY_ORDER): NCCL EP's
 * high-throughput mode returns a received row's local experts ascending,
 * then -1, not in its token's slot order. The row carries the same
 * (local id, weight) pairs, so keys by content compare them as a set, and
 * before the checks every keyed row's pairs are put back in its token's
 * slot order: a permutation of what the plugin returned, so a wrong id or
 * weight is still there to be named, slot by slot. */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "plugin_int.h"

void eg_plug_slots_sorted(const int32_t *idx, const float *w, uint32_t K,
			  int32_t *sid, uint32_t *sw)
{
	/* insertion sort: K is small */
	for (uint32_t k = 0; k < K; k++) {
		int32_t i = idx[k];
		uint32_t b, j = k;

		memcpy(&b, &w[k], sizeof(b));
		while (j > 0 &&
		       (sid[j - 1] > i || (sid[j - 1] == i && sw[j - 1] > b))) {
			sid[j] = sid[j - 1];
			sw[j] = sw[j - 1];
			j--;
		}
		sid[j] = i;
		sw[j] = b;
	}
}

/* Slot i's pairs in its token's slot order: each slot k whose expert is
 * local takes the first unused pair with that id; the pairs left fill the
 * other slots in their order. */
static void eg__canon_row(eg_plug_native_t *n, const eg_plug_routes_t *rt,
			  size_t i, int64_t *id, float *w, uint8_t *used,
			  uint8_t *set)
{
	uint32_t K = n->K;
	int64_t *ni = n->topk_idx + i * K;
	float *nw = n->topk_w + i * K;
	uint64_t key = rt->base[n->key_src[i]] + (uint32_t)n->key_tok[i];
	int32_t lo = (int32_t)(n->rank * n->L);

	memset(used, 0, K);
	memset(set, 0, K);
	for (uint32_t k = 0; k < K; k++) {
		int32_t g = rt->idx[key * K + k];

		if (g < lo || g >= lo + (int32_t)n->L)
			continue;
		for (uint32_t j = 0; j < K; j++)
			if (!used[j] && ni[j] == g - lo) {
				id[k] = ni[j];
				w[k] = nw[j];
				used[j] = set[k] = 1;
				break;
			}
	}
	for (uint32_t k = 0, j = 0; k < K; k++) {
		if (set[k])
			continue;
		while (used[j])
			j++;
		id[k] = ni[j];
		w[k] = nw[j];
		used[j] = 1;
	}
	memcpy(ni, id, K * sizeof(*ni));
	memcpy(nw, w, K * sizeof(*nw));
}

int eg_plug_slots_canon(eg_plug_native_t *n, const eg_plug_routes_t *rt)
{
	uint32_t K = n->K;
	int64_t *id;
	float *w;
	uint8_t *flags;
	int rc;

	if (!n->slots_any || !n->topk_idx || !n->topk_w ||
	    n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
		return EG_OK;
	id = malloc((K + 1) * sizeof(*id));
	w = malloc((K + 1) * sizeof(*w));
	flags = malloc(2 * (size_t)K + 2);
	rc = id && w && flags ? EG_OK : EG_ENOMEM;
	for (uint32_t g = 0; rc == EG_OK && g < n->G; g++)
		for (int64_t c = 0; c < n->count[g]; c++) {
			size_t i = (size_t)g * n->S + (size_t)c;

			if (n->key_src[i] >= 0)
				eg__canon_row(n, rt, i, id, w, flags,
					      flags + K);
		}
	free(id);
	free(w);
	free(flags);
	return rc;
}
