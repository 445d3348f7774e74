/* Dense reference: the expected results straight from the definition in
 * docs/semantics.md. Shares no code path with any engine; regenerates
 * inputs from the counter-based generator. */
#ifndef EPGATE_REFERENCE_H
#define EPGATE_REFERENCE_H

#include <stdint.h>

#include "epgate/ep.h"

/* Expected dispatch output of destination rank d; allocates out. */
int eg_ref_dispatch(const eg_workload_t *w, const eg_gen_t *g, uint32_t d,
		    eg_recv_t *out);

/* Expected combine output of source rank s: out holds tokens * hidden
 * combine elements (canonical order: for each destination d ascending,
 * y_d in bf16/fp32, accumulated in fp32). out64 (nullable) receives the
 * fp64 value of sum over all k of w_k * f_e(x) and mag64 (nullable) the
 * sum of |w_k * f_e(x)|, for bounded comparison. */
int eg_ref_combine(const eg_workload_t *w, const eg_gen_t *g, uint32_t s,
		   void *out, double *out64, double *mag64);

#endif
