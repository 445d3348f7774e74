/* The L2 rank program's memories (lib/suite/rank.c): what differs between
 * a host job (libfabric) and a GPU job (NCCL) is behind this ops table;
 * the workloads, the verified step, the verdicts and the results lines
 * are one program. */
#ifndef EG_SUITE_RANK_INT_H
#define EG_SUITE_RANK_INT_H

#include <stdio.h>

#include "lib/suite/suite.h"
#include "epgate/boot.h"

struct eg_rank_memory;

/* One job, as one rank sees it. */
typedef struct eg_rank_job {
	const eg_rank_opts_t *o;
	const struct eg_rank_memory *mem;
	const eg_engine_ops_t *ops;
	eg_world_t world;
	eg_boot_t *boot;
	eg_workload_list_t wl;
	const char *file; /* the workloads file read */
	/* the transport the engines run over (memory's open) */
	const eg_xport_ops_t *xops;
	void *xstate;
	void *stream;		  /* the memory space's stream, or NULL */
	FILE *rf;		  /* rank 0's results, or NULL */
	int ran, failed, skipped; /* skipped: every rank declined */
	/* the verdict exchange of this workload failed: no collective is
	 * left (NULL: none did) */
	const char *lost;
	unsigned npassed, nfailed; /* rank 0: workloads */
	void *priv;		   /* the memory's own */
} eg_rank_job_t;

typedef struct eg_rank_memory {
	size_t size;	  /* sizeof(eg_rank_memory_t) */
	const char *name; /* "host", "cuda" */
	/* the memory space and its engines (step.h) */
	const eg_step_engines_t *engines;
	/* 0 if built for it, else prints why and returns 77 */
	int (*built)(const eg_rank_opts_t *o);
	/* Creates the transport (J->xops, J->xstate, J->stream); returns 0
	 * or an exit code (77: no device on some rank; 99). */
	int (*open)(eg_rank_job_t *J);
	/* repro options of this memory (" --provider tcp"), appended */
	void (*repro)(const eg_rank_job_t *J, char *buf, size_t len);
	/* members added to each results line, or NULL */
	json_t *(*extra)(eg_rank_job_t *J);
	/* 1 when nothing more can run (communicators aborted) */
	int (*broken)(const eg_rank_job_t *J);
	/* After the workloads (collective): evidence and summary; returns
	 * the exit code given rc, the workloads' own. */
	int (*finish)(eg_rank_job_t *J, int rc);
	void (*close)(eg_rank_job_t *J);
} eg_rank_memory_t;

extern const eg_rank_memory_t eg_rank_memory_host;
extern const eg_rank_memory_t eg_rank_memory_cuda;

#endif
