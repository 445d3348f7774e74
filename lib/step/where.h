/* Where a rank is in its workloads, and its last words (lib/step/where.c):
 * a rank that dies of a signal, calls exit() inside a workload (a library
 * that gives up on a shape), or is stopped by its launcher says where it
 * was, in one write on stderr:
 *
 *   epgate: rank 2: ended by signal 6 (SIGABRT) in w3-steps, step 2 of 6,
 *       iteration 0, dispatch
 *   epgate: rank 2: ended by exit(0) in w3-base, iteration 0, dispatch
 *   epgate: rank 2: stopped by signal 15 (SIGTERM) in w3-base, ...
 *
 * (one line each). The orchestrators read it from the job's log
 * (lib/suite/job_crash.c) to name the workload, step, phase and rank of a
 * job that ended early. */
#ifndef EG_STEP_WHERE_H
#define EG_STEP_WHERE_H

#include <stdint.h>

/* The line's start, for readers: "epgate: rank R: " then one of these. */
#define EG_WHERE_ENDED	 "ended by "
#define EG_WHERE_STOPPED "stopped by "

/* Installs the handlers (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
 * SIGTERM, SIGINT, SIGHUP: each says, then dies of its signal as before)
 * and the exit hook for this rank; call after the transport is up (it
 * resets dispositions, include/epgate/signals.h). */
void eg_where_arm(uint32_t rank);
/* The workload begun (name, its steps) or, with NULL, none: an exit()
 * outside a workload is the program's own. */
void eg_where_workload(const char *name, uint32_t steps);
/* The step, iteration and phase ("dispatch", "combine", ...) now. */
void eg_where_at(uint32_t step, uint32_t iter, const char *phase);

/* The position now, for a thread that reports a stall (lib/base/watch.h):
 * the workload ("" outside one), its step (from 0) of steps and
 * iteration, and the position as last words say it. */
typedef struct eg_where_pos {
	char workload[128], line[256];
	uint32_t step, steps, iter;
} eg_where_pos_t;
void eg_where_now(eg_where_pos_t *out);

#endif
