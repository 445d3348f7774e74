/* The a2a engine with a planted defect (lib/engines/fault_a2a.c and the
 * fault:order table in a2a.c): one known bug each, caught only by the
 * shapes that show it (docs/faults.md). Internal. */
#ifndef EG_ENGINES_A2A_INT_H
#define EG_ENGINES_A2A_INT_H

#include "epgate/engine.h"

enum {
	EG_A2A_FAULT_NONE = 0,
	EG_A2A_FAULT_ORDER,	  /* combine summed in another order */
	EG_A2A_FAULT_ROUTE_CACHE, /* send lists of the first dispatch kept */
	EG_A2A_FAULT_TAIL,	  /* combine's unrolled loop: a wrong tail */
	EG_A2A_FAULT_SHIFT,	  /* expert to rank by a shift */
};

/* The a2a engine's create, with the fault planted. */
int eg_a2a_create_fault(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			void **state, int fault);

#endif
