/* The verified step's state, shared by its files (lib/step/step.c: open,
 * iterations, verdicts; step_buffers.c: the buffers in their space). */
#ifndef EG_STEP_STEP_INT_H
#define EG_STEP_STEP_INT_H

#include "epgate/step.h"
#include "epgate/window.h"

struct eg_step {
	eg_workload_t w;   /* a copy: the shape buffers are made for */
	eg_workload_t cur; /* the step run now (eg_workload_step of w);
			      cur.iter is the iteration generated */
	uint32_t iter0;	   /* the workload's own iter */
	uint32_t step;	   /* the step selected */
	const eg_engine_ops_t *ops;
	void *engine;
	eg_engine_ctx_t ctx;
	const eg_space_ops_t *sp;
	void *ss;
	const char *say;
	int count_wire;
	double deadline_s; /* per iteration, 0: none */
	int progress;	   /* a long one: say each iteration */
	uint32_t first, n;
	eg_gen_t g;
	/* n each, buffers in the space */
	eg_rank_input_t *in;
	eg_recv_t *recv;
	void **y, **out;
	/* host: the reference of one rank (the largest) */
	void *cexp;
	double *r64, *m64;
	/* a fixed-order engine's combine run again (n, in the space), and
	 * host copies of one rank's two results */
	void **again;
	void *h_first, *h_again;
	double bound; /* the engine's combine_bound */
	int repeated; /* this iteration's combine ran again into again */
	/* between eg_step_verify_dispatch and eg_step_verify_combine: the
	 * dispatch's findings, whether it was checked and wrong */
	eg_verdict_t vit;
	uint32_t viter;
	int vchecked, vwrong, vpending;
	/* a rank's dispatch was wrong (or failed), agreed by every rank:
	 * none combines, the workload's iterations end */
	int halted;
	/* timed steps (a measurement): the boundary of the gated times and
	 * the kernel-time collector (lib/step/kern.c), when on */
	eg_boundary_t boundary;
	eg_kern_t *kern;
	int replays_verified; /* the replay boundary's first replays */
};

/* step_buffers.c: every buffer of st freed (NULL-safe), or allocated for
 * st->w in st->sp */
void eg__step_free(eg_step_t *st);
int eg__step_alloc(eg_step_t *st);

#endif
