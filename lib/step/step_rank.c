/* One rank of a multi-process engine (include/epgate/step.h): the engines
 * of each memory space, and the context of a rank that holds itself
 * alone, as the L2 rank program and the engine measurement backends give
 * them to the verified step. */
#include <stddef.h>

#include "epgate/nccl.h"
#include "epgate/step.h"

const eg_step_engines_t eg_step_engines_host = {
    .space = "host",
    .find = eg_engine_find,
    .names = "a2a, dense",
};

const eg_step_engines_t eg_step_engines_cuda = {
    .space = "cuda",
    .find = eg_engine_nccl_find,
    .names = "a2a, dense",
};

const eg_engine_ops_t *eg_step_engine(const eg_step_engines_t *e,
				      const char *name)
{
	const eg_engine_ops_t *ops = name ? e->find(name) : NULL;

	return ops && (ops->flags & EG_ENGINE_MULTI_PROCESS) ? ops : NULL;
}

eg_engine_ctx_t eg_step_rank_ctx(const eg_world_t *world,
				 const eg_xport_ops_t *x, void *xs,
				 eg_boot_t *boot, uint32_t flags)
{
	eg_engine_ctx_t c = {.size = sizeof(c),
			     .first_rank = world->rank,
			     .n_ranks = 1,
			     .world = world,
			     .xport = x,
			     .xport_state = xs,
			     .boot = boot,
			     .flags = flags};

	return c;
}
