/* The a2a engine's dispatch beside NCCL's alltoall at the same bytes
 * (docs/metrics.md, "Engine vs alltoall"). The engine's point is already
 * measured (bench_engine.c); its wire bytes -- what its dispatch handed
 * NCCL for other ranks, busiest rank -- size the alltoall: S = wire x W /
 * (W - 1), so that each rank sends the same bytes to the other ranks
 * (nccl-tests' S counts the rank's own chunk too). The alltoall runs
 * through lib/bench/nccl_raw.c with nccl-tests' definitions; its busbw is
 * then bytes to other ranks per second, the same unit as the engine's
 * wire_gbps. Both medians are of the slowest rank per iteration, timed
 * with CUDA events. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/nccl_raw.h"
#include "lib/campaign/bench_vs.h"
#include "lib/campaign/sweep.h"

#define EG__PROG "epgate bench engine --vs-alltoall"

/* NCCL's alltoall of S bytes per rank (collective). */
static int eg__alltoall(const eg_bench_engine_opts_t *o,
			const eg_world_t *world, eg_boot_t *b, size_t S,
			eg_nccl_raw_row_t *row, char *via, size_t vlen)
{
	eg_nccl_raw_opts_t ro = {.size = sizeof(ro),
				 .coll = "alltoall",
				 .min_bytes = S,
				 .max_bytes = S,
				 .factor = 2,
				 .job = o->job,
				 .xport = o->xport};
	eg_nccl_raw_t *r = NULL;
	char err[512], why[256] = "";
	int rc = eg_nccl_raw_open(&r, world, b, &ro, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: NCCL: %s\n", world->rank,
			err);
		return rc == EG_ENOSYS ? EG_EXIT_SKIP : EG_EXIT_FAIL;
	}
	rc = eg_nccl_raw_size(r, S, row, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, EG__PROG ": rank %u: alltoall: %s\n",
			world->rank, err);
	else if ((rc = eg_nccl_raw_path(r, via, vlen, why, sizeof(why))) < 0)
		fprintf(stderr, EG__PROG ": rank %u: alltoall path: %s\n",
			world->rank, why);
	eg_nccl_raw_close(r);
	return rc < 0 || row->wrong ? EG_EXIT_FAIL : EG_EXIT_PASS;
}

static void eg__phases(const eg_point_t *p)
{
	const char *sep = "";

	printf("# engine phases (us, mean per step over ranks):");
	for (size_t i = 0; i < p->n_metrics; i++) {
		const char *n = p->metrics[i].name;
		size_t len = strlen(n);

		if (strncmp(n, "phase_", 6) || len < 10)
			continue;
		printf("%s %.*s %.1f", sep, (int)(len - 9), n + 6,
		       p->metrics[i].s.median);
		sep = ",";
	}
	printf("%s\n", *sep ? "" : " none (the engine times no phases)");
}

/* Rank 0: both, the ratio, the phases. */
static void eg__print(const eg_bench_engine_opts_t *o, const eg_world_t *world,
		      const eg_point_t *e, const eg_nccl_raw_row_t *a,
		      const char *via)
{
	double disp = eg_bench_point_median(e, "dispatch_us"),
	       wire = eg_bench_point_median(e, "wire_bytes");
	double wg = eg_bench_point_median(e, "wire_gbps");
	double pe = eg_bench_point_median(e, "phase_pack_exchange_us");
	const char *blk = getenv("EPGATE_NCCL_BLOCKING");

	printf("# %s engine vs NCCL alltoall, the same bytes to other ranks: "
	       "%u ranks, %u node(s), %u comm(s), %s communicators\n",
	       o->engine, world->size, world->nodes, o->xport.num_comms,
	       blk && !strcmp(blk, "0") ? "nonblocking" : "blocking");
	printf("# engine dispatch: median %.1f us, %.0f B wire to other ranks "
	       "(busiest rank), %.2f GB/s\n",
	       disp, wire, wg);
	printf("# alltoall (%s): S %zu B (%.0f B to other ranks), median "
	       "%.1f us, busbw %.2f GB/s (mean %.1f us, %.2f GB/s), %llu "
	       "wrong, transport %s\n",
	       "nccl-tests' definitions", a->bytes,
	       a->bytes * (double)(world->size - 1) / world->size,
	       a->med_s * 1e6, a->busbw_med, a->mean_s * 1e6, a->busbw,
	       (unsigned long long)a->wrong, via);
	printf("# ratio: engine wire GB/s / alltoall busbw = %.1f %% (median), "
	       "%.1f %% (alltoall mean)\n",
	       100 * wg / a->busbw_med, 100 * wg / a->busbw);
	eg__phases(e);
	if (isfinite(pe))
		printf("# pack_exchange / alltoall median time = %.1f %%\n",
		       100 * pe / (a->med_s * 1e6));
	printf("VS arm=%s comms=%u dispatch_us=%.2f wire_bytes=%.0f "
	       "wire_gbps=%.3f alltoall_bytes=%zu alltoall_us=%.2f "
	       "alltoall_busbw=%.3f ratio=%.4f\n",
	       o->engine, o->xport.num_comms, disp, wire, wg, a->bytes,
	       a->med_s * 1e6, a->busbw_med, wg / a->busbw_med);
	fflush(stdout);
}

int eg_bench_vs_alltoall(const eg_bench_engine_opts_t *o,
			 const eg_world_t *world, eg_boot_t *b,
			 const eg_point_t *engine)
{
	uint64_t wire = 0;
	eg_nccl_raw_row_t row;
	char via[96] = "none";
	uint32_t W = world->size;
	int ex;

	if (!world->rank &&
	    isfinite(eg_bench_point_median(engine, "wire_bytes")))
		wire = (uint64_t)eg_bench_point_median(engine, "wire_bytes");
	if (eg_boot_bcast(b, &wire, sizeof(wire), 0, o->job.timeout_s) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: %s\n", world->rank,
			eg_boot_error(b));
		return EG_EXIT_FAIL;
	}
	if (!wire) {
		if (!world->rank)
			fprintf(stderr, EG__PROG ": the engine's dispatch sent "
						 "no bytes to other ranks\n");
		return EG_EXIT_FAIL;
	}
	ex = eg__alltoall(o, world, b, (size_t)((wire * W + W - 2) / (W - 1)),
			  &row, via, sizeof(via));
	if (ex == EG_EXIT_PASS && !world->rank)
		eg__print(o, world, engine, &row, via);
	return ex;
}
