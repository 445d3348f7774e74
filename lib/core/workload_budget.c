/* What verifying a workload costs one process, estimated before it runs,
 * and the budgets that refuse it up front (include/epgate/workload.h).
 * The estimates follow where the memory goes: the held ranks' inputs,
 * receive buffers sized for every token of the job, expert and combine
 * outputs, the reference's scratch, and, when one process holds every
 * rank (L1), a message per pair of ranks (W^2). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/workload.h"

#define EG__MEM_DEFAULT	 ((uint64_t)1 << 30) /* bytes */
#define EG__WORK_DEFAULT ((uint64_t)1 << 32) /* element operations */
#define EG__PAIR_BYTES	 128 /* a pair's message: headers, allocations */

static uint64_t eg__row_bytes(const eg_workload_t *w)
{
	uint64_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 1;

	return (uint64_t)w->hidden * eg_dtype_size(w->dtype) + nb * 4 + 8 +
	       (uint64_t)w->topk * 8;
}

void eg_workload_cost(const eg_workload_t *w, uint32_t first, uint32_t n,
		      eg_workload_cost_t *c)
{
	uint64_t W = w->world, H = w->hidden, K = w->topk,
		 row = eg__row_bytes(w);
	uint64_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	uint64_t cap = eg_workload_total_tokens(w), held = 0, tmax = 0;

	for (uint32_t r = first; r < first + n && r < w->world; r++) {
		uint64_t t = eg_workload_tokens(w, r);
		held += t;
		tmax = t > tmax ? t : tmax;
	}
	/* inputs and outputs of the held ranks, a receive layout and expert
	 * outputs for every token of the job per held rank, the engine's
	 * copy of what moves, the reference's fp64 scratch */
	c->bytes = held * (row + H * csz) +
		   n * (cap * (row + H * csz) + (W + 1) * 8 + w->experts * 4) +
		   2 * cap * row + tmax * H * (16 + csz) + cap * row;
	if (n > 1)
		c->bytes += W * W * (row + EG__PAIR_BYTES);
	/* one verified iteration (what a deadline must cover; a job of
	 * many is the caller's choice): each held rank regenerates every
	 * token's routing and moves its rows; each token's K slots cross H
	 * channels */
	c->ops = n * cap * (K + H) + 2 * held * K * H;
}

/* A budget from the environment: bytes or operations, or the default. */
static int eg__budget(const char *var, uint64_t def, uint64_t *out, char *err,
		      size_t len)
{
	const char *s = getenv(var);

	*out = def;
	if (!s || !*s)
		return EG_OK;
	if (eg_parse_u64(NULL, s, 1, UINT64_MAX, 0, out, NULL, 0) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "%s=\"%.40s\": not a positive integer", var,
				  s);
	return EG_OK;
}

int eg_workload_budget(const eg_workload_t *w, uint32_t first, uint32_t n,
		       char *err, size_t len)
{
	eg_workload_cost_t c;
	uint64_t mem, work;
	int rc;

	if ((rc = eg__budget("EPGATE_MEM_BUDGET", EG__MEM_DEFAULT, &mem, err,
			     len)) < 0 ||
	    (rc = eg__budget("EPGATE_WORK_BUDGET", EG__WORK_DEFAULT, &work, err,
			     len)) < 0)
		return rc;
	eg_workload_cost(w, first, n, &c);
	if (c.bytes > mem)
		return eg_err_set(
		    err, len, EG_ERANGE,
		    "%s: needs about %.2f GB in this process (%u of %u ranks "
		    "held), over the memory budget of %.2f GB (raise it with "
		    "EPGATE_MEM_BUDGET=bytes)",
		    w->name, (double)c.bytes / 1e9, n, w->world,
		    (double)mem / 1e9);
	if (c.ops > work)
		return eg_err_set(err, len, EG_ERANGE,
				  "%s: about %.3g element operations to "
				  "verify one iteration, over the work budget "
				  "of %.3g "
				  "(raise it with EPGATE_WORK_BUDGET=ops)",
				  w->name, (double)c.ops, (double)work);
	return EG_OK;
}
