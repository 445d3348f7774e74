/* A workload's steps (include/epgate/workload.h, eg_workload_step): the
 * sequence of shapes one engine instance runs, as serving feeds it: new
 * routing every step, token counts that change, a rank with none. */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/workload.h"

static uint64_t eg__mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int eg_workload_step(const eg_workload_t *w, uint32_t s, eg_workload_t *out)
{
	uint32_t W = w->world, none;
	uint32_t *list;
	int rc;

	if ((rc = eg_workload_copy(out, w)) < 0)
		return rc;
	if (s == 0)
		return EG_OK;
	list = malloc((W ? W : 1) * sizeof(*list));
	if (!list) {
		eg_workload_fini(out);
		return EG_ENOMEM;
	}
	/* the rank without tokens: first, a middle one, last, in turn */
	none = s % 3 == 1 ? 0 : s % 3 == 2 ? W / 2 : W - 1;
	for (uint32_t r = 0; r < W; r++) {
		uint64_t cap = eg_workload_tokens(w, r);

		list[r] =
		    r == none
			? 0
			: (uint32_t)(eg__mix(w->seed ^ (uint64_t)s << 32 ^ r) %
				     (cap + 1));
	}
	free(out->tokens_list);
	out->tokens_list = list;
	out->n_tokens_list = W;
	out->tokens_mode = EG_TOKENS_LIST;
	out->zero_ranks = 0;
	/* another seed: another routing (and other values) */
	out->seed = eg__mix(w->seed + s);
	return EG_OK;
}
