/* `epgate bench engine --vs-alltoall` (lib/campaign/bench_vs.c): after the
 * engine's point, NCCL's alltoall of the same bytes per rank, both side
 * by side with the engine's phases. */
#ifndef EPGATE_BENCH_VS_H
#define EPGATE_BENCH_VS_H

#include "epgate/boot.h"
#include "epgate/results.h"
#include "epgate/world.h"
#include "lib/campaign/bench_run.h"

/* Collective, on 2 ranks or more (eg_bench_engine checks). engine: the
 * measured point (rank 0's; the others' empty).
 * Returns an automake exit code. */
int eg_bench_vs_alltoall(const eg_bench_engine_opts_t *o,
			 const eg_world_t *world, eg_boot_t *b,
			 const eg_point_t *engine);

#endif
