/* NCCL's collectives alone, with nccl-tests' definitions, so the numbers
 * sit beside its tables (lib/bench/nccl_raw.c): one rank per process and
 * GPU, blocking communicators as nccl-tests uses them (unless
 * EPGATE_NCCL_BLOCKING=0), out of place, float by default. A size S is
 * the bytes a rank moves as nccl-tests counts them (alltoall: its send
 * buffer, S/W to each rank, itself included; allgather: the gathered
 * buffer; reducescatter: the buffer reduced); the per-rank chunk is
 * rounded down to 16-byte multiples as nccl-tests does. Time: after
 * warm-up and a bootstrap barrier, iters back-to-back collectives on one
 * stream, wall time / iters, averaged over ranks (nccl-tests' mean); then
 * iters more with CUDA events between them, for the median over
 * iterations of the slowest rank. algbw = S / time, busbw = algbw x the
 * collective's bus factor ((W-1)/W for all three). Each size is checked
 * once: the first, middle and last element of every chunk. Built without
 * CUDA or NCCL every entry point returns EG_ENOSYS. */
#ifndef EPGATE_NCCL_RAW_H
#define EPGATE_NCCL_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/boot.h"
#include "epgate/opts_groups.h"
#include "epgate/world.h"

typedef struct eg_nccl_raw eg_nccl_raw_t;

/* A collective as nccl-tests describes it. */
typedef struct eg_nccl_coll {
	const char *name; /* "alltoall", "allgather", "reducescatter" */
	/* S of chunk elements of esz bytes per rank chunk */
	size_t (*bytes)(size_t chunk, size_t esz, uint32_t W);
	double (*bus_factor)(uint32_t W);
	unsigned recv_chunks_one; /* 1: the receive buffer is one chunk */
	/* one collective of chunk elements per rank chunk, queued */
	int (*run)(eg_nccl_raw_t *r, size_t chunk);
	/* the value element i of receive chunk c holds (rank r sends r+1) */
	float (*expect)(uint32_t W, size_t c);
} eg_nccl_coll_t;

/* By name; NULL if unknown. */
const eg_nccl_coll_t *eg_nccl_coll_find(const char *name);

typedef struct eg_nccl_raw_opts {
	size_t size;	  /* sizeof(eg_nccl_raw_opts_t) */
	const char *coll; /* a collective's name */
	int bf16;	  /* datatype bf16, else float */
	int sendrecv;	  /* alltoall: grouped ncclSend/ncclRecv instead of
			     ncclAlltoAll (looked up at run time) */
	size_t min_bytes, max_bytes; /* the sweep; max sizes the buffers */
	double factor;		     /* the sweep's multiplier, > 1 */
	eg_job_opts_t job;
	/* the device, the path (NULL or "auto", "nvlink", "xnode"), the
	 * xnode mode; one communicator */
	eg_xport_cli_t xport;
	const char *json; /* the sweep's JSON (rank 0), or NULL */
} eg_nccl_raw_opts_t;

/* One size's numbers. */
typedef struct eg_nccl_raw_row {
	size_t bytes, count; /* S, elements per rank chunk */
	double mean_s, med_s;
	uint64_t wrong;		     /* sampled elements that differ */
	double algbw, busbw;	     /* GB/s, from the mean */
	double algbw_med, busbw_med; /* GB/s, from the median */
} eg_nccl_raw_row_t;

/* Opens NCCL on this rank (collective) with buffers for o->max_bytes.
 * EG_ENOSYS: no CUDA device, or built without CUDA and NCCL. */
int eg_nccl_raw_open(eg_nccl_raw_t **r, const eg_world_t *w, eg_boot_t *b,
		     const eg_nccl_raw_opts_t *o, char *err, size_t errlen);
/* "ncclAlltoAll", "ncclSend/ncclRecv" or "nccl". */
const char *eg_nccl_raw_impl(const eg_nccl_raw_t *r);
const char *eg_nccl_raw_version(const eg_nccl_raw_t *r);
int eg_nccl_raw_device(const eg_nccl_raw_t *r);
/* One size (collective): S rounded down to what nccl-tests runs; row
 * gets every rank's numbers. EG_ERANGE when S holds no whole chunk. */
int eg_nccl_raw_size(eg_nccl_raw_t *r, size_t S, eg_nccl_raw_row_t *row,
		     char *err, size_t errlen);
/* Which path NCCL took (collective): EG_OK when every rank's log shows
 * the path asked for; via gets the summary, why the reason if not. */
int eg_nccl_raw_path(eg_nccl_raw_t *r, char *via, size_t vlen, char *why,
		     size_t wlen);
/* Collective: waits for every rank (unless NCCL was aborted), then
 * closes. */
void eg_nccl_raw_close(eg_nccl_raw_t *r);

/* `epgate bench raw COLL --transport nccl`: world and bootstrap from the
 * environment, the sweep from min to max bytes, rank 0 printing
 * nccl-tests' table and writing JSON (epgate/bench-nccl-raw/v1). Returns
 * an automake exit code: 0 measured, 1 wrong data, a wrong path or an
 * NCCL error, 77 no GPU or not built, 99 bad input. */
int eg_nccl_raw_sweep(const eg_nccl_raw_opts_t *o);

#endif
