/* The runners behind `epgate bench` (one library call per subcommand;
 * src/cmd_bench*.c parse argv into these option structs). Each returns
 * an automake exit code: 0 measured, 1 a wrong result or a transport
 * error, 77 not built in (or no GPU), 99 bad input or a harness error. */
#ifndef EPGATE_BENCH_RUN_H
#define EPGATE_BENCH_RUN_H

#include <stddef.h>

#include "lib/suite/suite.h"

/* `bench raw`: the fabric transport alone, one process per rank under
 * `epgate launch` (lib/campaign/bench_raw.c): a message-rate phase (msgs
 * messages of msg_size bytes per peer per call) and a bandwidth phase
 * (size bytes per peer per call); rank 0 prints the table and writes
 * JSON (epgate/bench-raw/v1) when json is set. */
typedef struct eg_bench_raw_opts {
	eg_job_opts_t job;
	eg_xport_cli_t xport; /* the provider (NULL: auto), num_comms */
	const char *json;     /* NULL: no JSON */
	unsigned msgs;
	size_t size, msg_size;
} eg_bench_raw_opts_t;
int eg_bench_raw(const eg_bench_raw_opts_t *o);

/* `bench engine`: one point of a multi-process engine, built from the
 * options and measured by the driver exactly as a profile point
 * (lib/bench/driver.c, eg_bench_measure) over the fabric or the nccl
 * backend; rank 0 prints every metric (docs/metrics.md). With
 * vs_alltoall (nccl), then NCCL's alltoall of the same bytes per rank
 * through lib/bench/nccl_raw.c, and both side by side with the engine's
 * phases (lib/campaign/bench_engine.c). */
typedef struct eg_bench_engine_opts {
	const char *engine; /* arm: "a2a", "dense" */
	eg_job_opts_t job;
	/* the transport; fabric: the provider; nccl: the path, the xnode
	 * mode, the device */
	eg_xport_cli_t xport;
	eg_overrides_t workload; /* keys on top of the defaults */
	int phases;		 /* nccl: the engine times its phases (as
				    EPGATE_NCCL_PHASES=1) */
	int vs_alltoall; /* nccl: then alltoall of the same bytes (phases,
			    and blocking communicators unless
			    EPGATE_NCCL_BLOCKING=0); both reach the
			    engine in eg_bench_setup_t, not the
			    environment */
	int overhead;	 /* then the two boundaries and the harness per
			    step (`bench overhead --engine`) */
} eg_bench_engine_opts_t;
int eg_bench_engine(const eg_bench_engine_opts_t *o);

#endif
