/* Planted faults of the multi-process a2a engine, each a bug that once
 * survived every test (docs/faults.md): they run one rank per process
 * (check --l2 --engine fault:<kind>) and must fail on the shapes the L2
 * matrix now has, pass on the others. The defects live in a2a.c behind
 * its fault field; these are their ops tables. */
#include "a2a_int.h"
#include "epgate/error.h"

#define EG__A2A_FAULT(id, kind, s)                                             \
	static int eg__create_##id(const eg_workload_t *w,                     \
				   const eg_engine_ctx_t *ctx, void **state)   \
	{                                                                      \
		return eg_a2a_create_fault(w, ctx, state, kind);               \
	}                                                                      \
	static int eg__dispatch_##id(void *st, const eg_rank_input_t *in,      \
				     eg_recv_t *out)                           \
	{                                                                      \
		return eg_engine_a2a.dispatch(st, in, out);                    \
	}                                                                      \
	static int eg__combine_##id(void *st, const eg_recv_t *r,              \
				    const void *const *y, void *const *out)    \
	{                                                                      \
		return eg_engine_a2a.combine(st, r, y, out);                   \
	}                                                                      \
	static void eg__destroy_##id(void *st)                                 \
	{                                                                      \
		eg_engine_a2a.destroy(st);                                     \
	}                                                                      \
	const eg_engine_ops_t eg_engine_fault_##id = {                         \
	    .size = sizeof(eg_engine_ops_t),                                   \
	    .name = "fault:" s,                                                \
	    .create = eg__create_##id,                                         \
	    .dispatch = eg__dispatch_##id,                                     \
	    .combine = eg__combine_##id,                                       \
	    .destroy = eg__destroy_##id,                                       \
	    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,      \
	    .dispatch_rows = EG_ROWS_PER_RANK,                                 \
	};

/* send lists built on the first dispatch and kept: a new routing (a
 * multi-step case) sends tokens where they no longer go */
EG__A2A_FAULT(route_cache, EG_A2A_FAULT_ROUTE_CACHE, "route-cache")
/* the tail of a row (H >= 24, H % 16 >= 8) summed from the wrong place */
EG__A2A_FAULT(tail, EG_A2A_FAULT_TAIL, "tail")
/* expert e on rank e >> log2(E/W): wrong when E/W is not a power of 2 */
EG__A2A_FAULT(shift, EG_A2A_FAULT_SHIFT, "shift")
