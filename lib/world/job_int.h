/* Jobs inside a Slurm allocation (lib/world/job_srun.c): what
 * lib/world/job.c runs instead of the local launcher there. */
#ifndef EG_WORLD_JOB_INT_H
#define EG_WORLD_JOB_INT_H

#include "epgate/job.h"

/* srun's argv for the job, NULL-ended (free() it; the numbers live in
 * num): the job's ranks as tasks in block layout, one bad rank ending
 * the step, on its virtual nodes' count of the allocation's nodes when
 * it has that many, else on one node. */
const char **eg_job_srun_argv(const eg_job_t *j, const char *self,
			      char num[4][32]);

/* In the child, before exec: what the tasks need besides Slurm's own
 * variables -- the virtual nodes (EPGATE_RANKS_PER_NODE), a rendezvous
 * port of this step's own, a job secret -- and no stdin (srun would
 * take it). */
void eg_job_srun_env(const eg_job_t *j);

#endif
