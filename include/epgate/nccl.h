/* The NCCL transport (lib/transport/nccl.c): K communicators, each on its own
 * CUDA stream, created from unique ids that rank 0 broadcasts over the
 * bootstrap; nonblocking by default, so every wait has a deadline that
 * aborts them (ncclCommAbort) and names the step. The GPU engines "nccl-a2a"
 * and "nccl-dense" run on device buffers over it, the "nccl" measurement
 * backend times them, and the transport evidence says which path NCCL
 * took between each pair of ranks (from its INFO log) and whether that is
 * the path asked for. Built without CUDA or NCCL, every entry point
 * returns EG_ENOSYS (the evidence parser works everywhere).
 *
 * Environment set before NCCL's first call, in this process:
 * NCCL_NVLS_ENABLE=0 always (no NVLink multicast objects); NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,P2P,NET,GRAPH and NCCL_DEBUG_FILE=<log_dir>/
 * nccl-<job>-r<rank>.log unless already set (the evidence); and, when
 * ranks of different (virtual) nodes share a host and the path asked for
 * is not nvlink, NCCL_HOSTID=<job>-node<N> per rank so that NCCL treats
 * the virtual nodes as hosts and connects them through its network
 * transport ("hostid"), or NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
 * ("nop2p", the fallback); NCCL_MNNVL_ENABLE=0 in both. Opening also
 * sets the device's default memory pool to keep its memory (release
 * threshold: no limit), so the kernels' stream-ordered scratch costs no
 * mapping per step. */
#ifndef EPGATE_NCCL_H
#define EPGATE_NCCL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "epgate/bench.h"
#include "epgate/boot.h"
#include "epgate/engine.h"
#include "epgate/transport.h"
#include "epgate/world.h"

typedef struct eg_nccl eg_nccl_t;

/* The path a run asks for, checked against the evidence. */
typedef enum eg_nccl_path {
	EG_NCCL_PATH_AUTO = 0,	 /* whatever NCCL picks */
	EG_NCCL_PATH_NVLINK = 1, /* P2P over NVLink between all ranks */
	EG_NCCL_PATH_XNODE = 2,	 /* NCCL's network between nodes */
} eg_nccl_path_t;

typedef struct eg_nccl_opts {
	size_t size;	    /* sizeof(eg_nccl_opts_t) */
	uint32_t num_comms; /* K, 1..EG_COMMS_MAX */
	double timeout_s;   /* deadline per wait */
	int device;	    /* CUDA ordinal; -1: rank modulo the device
			       count (local launcher), Slurm's local rank */
	eg_nccl_path_t path;
	const char *xnode_mode; /* "hostid" (NULL) or "nop2p" */
	const char *log_dir;	/* NCCL's log; NULL: $TMPDIR or /tmp */
	/* 1: blocking communicators (ncclConfig_t.blocking = 1), as
	 * nccl-tests uses them: a group's end returns once its work is
	 * queued, without NCCL's helper thread per group; the price is
	 * that communicator creation waits for every rank with no
	 * deadline of ours (the launcher's still holds). Stream waits keep
	 * their deadlines either way. EPGATE_NCCL_BLOCKING=0|1 overrides. */
	int blocking;
} eg_nccl_opts_t;

/* Parses "auto", "nvlink", "xnode"; <0 otherwise. */
int eg_nccl_path_parse(const char *s, eg_nccl_path_t *p);
const char *eg_nccl_path_name(eg_nccl_path_t p);

int eg_nccl_open(eg_nccl_t **n, const eg_world_t *w, eg_boot_t *b,
		 const eg_nccl_opts_t *o, char *err, size_t errlen);
/* Finalizes and destroys the communicators (aborts them if that does not
 * finish within the deadline, or after an earlier failure). */
void eg_nccl_close(eg_nccl_t *n);

uint32_t eg_nccl_num_comms(const eg_nccl_t *n);
void *eg_nccl_comm(const eg_nccl_t *n, uint32_t k);   /* ncclComm_t */
void *eg_nccl_stream(const eg_nccl_t *n, uint32_t k); /* cudaStream_t */
int eg_nccl_device(const eg_nccl_t *n);
const eg_world_t *eg_nccl_world(const eg_nccl_t *n);
/* "NCCL 2.28.3" (the library loaded, ncclGetVersion). */
const char *eg_nccl_version(const eg_nccl_t *n);

/* Closes the group of communicator k (ncclGroupEnd) and waits until NCCL
 * has taken it (nonblocking: ncclInProgress), within the deadline. */
int eg_nccl_group_end(eg_nccl_t *n, uint32_t k, const char *step);
/* Waits until every stream is idle, polling NCCL's asynchronous errors;
 * past the deadline aborts every communicator. Errors name the step
 * ("dispatch rows: deadline 5.0 s expired ...") in eg_nccl_error. */
int eg_nccl_sync(eg_nccl_t *n, const char *step);
/* A CUDA or NCCL result as an epgate error, recorded with the step. */
int eg_nccl_fail(eg_nccl_t *n, int rc, const char *step, const char *what);
const char *eg_nccl_error(const eg_nccl_t *n);
/* 1 once the communicators were aborted: nothing more can run. */
int eg_nccl_broken(const eg_nccl_t *n);

/* What the engines issued (NCCL counts no operations itself): sends,
 * receives and collectives per communicator, bytes to other ranks and to
 * other nodes. */
void eg_nccl_count(eg_nccl_t *n, uint32_t k, uint64_t ops, uint32_t peer,
		   uint64_t bytes);
void eg_nccl_stats(eg_nccl_t *n, eg_xport_stats_t *s);
void eg_nccl_stats_reset(eg_nccl_t *n);

/* ---- transport evidence ---- */
#define EG_NCCL_PAIRS_MAX 64
typedef struct eg_nccl_pair {
	int32_t from, to;
	char via[32]; /* "P2P/CUMEM", "SHM/direct", "NET/Socket", ... */
} eg_nccl_pair_t;

typedef struct eg_nccl_evidence {
	char version[32];  /* "NCCL 2.28.3" */
	char net[32];	   /* NCCL's network ("Socket", "IB") or "" */
	char graph[32];	   /* intra-node path of the graph search ("NVL") */
	char provider[32]; /* the libfabric provider NCCL's network plugin
			      selected ("efa", aws-ofi-nccl's log) or "" */
	char log[512];	   /* the log it was read from */
	uint32_t lines;	   /* connection lines read */
	uint32_t npairs;   /* distinct (from, to, via) */
	eg_nccl_pair_t pair[EG_NCCL_PAIRS_MAX];
} eg_nccl_evidence_t;

/* Reads NCCL INFO lines ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
 * "Using network Socket", "Pattern 4, ... type NVL/PIX ...") from f. */
int eg_nccl_evidence_read(FILE *f, eg_nccl_evidence_t *e);
/* This process's log, as far as NCCL has written it. */
int eg_nccl_evidence(eg_nccl_t *n, eg_nccl_evidence_t *e);
/* EG_OK if the pairs took the path asked for (nvlink: every pair within a
 * node P2P, and the graph, when logged, NVL; xnode: every pair across
 * nodes NET), EG_EMISMATCH if not, EG_ENOENT if the log shows no
 * connection to judge by; why says it in a sentence. */
int eg_nccl_evidence_check(const eg_nccl_evidence_t *e, eg_nccl_path_t want,
			   const eg_world_t *w, char *why, size_t len);
/* "P2P/CUMEM (NVL)", "NET/Socket", "P2P/CUMEM,NET/Socket", "none";
 * " provider efa" after it when the network plugin named its libfabric
 * provider. */
void eg_nccl_evidence_summary(const eg_nccl_evidence_t *e, char *buf,
			      size_t len);

/* The transport class: one word for what carried a point's bytes, the
 * vocabulary recorded and measured campaigns share (docs/gpu.md,
 * "Transport evidence"): nvlink, pcie, p2p (NCCL P2P, link not logged),
 * shm, socket (NCCL's sockets), tcp (libfabric's), efa, ib, ofi (another
 * libfabric provider under NCCL), null, or unknown.  raw: the evidence as
 * written beside it ("fabric shm/tcp;ofi_rxm", "nccl P2P/CUMEM,NET/Socket
 * (NVL/PIX)", "nccl NET/AWS_Libfabric provider efa", or a recorded "NVLink");
 * cross_node: the class of the pairs between nodes, else of those
 * within one. */
const char *eg_transport_class(const char *raw, int cross_node);
/* The libfabric provider named in raw evidence (a fabric run's INTRA/
 * INTER by cross_node, NCCL's plugin's " provider P"): its length, 0
 * when raw names none. */
size_t eg_transport_provider(const char *raw, int cross_node, char *buf,
			     size_t len);

/* libfabric on GPU memory: EG_OK if a provider offers FI_HMEM with CUDA
 * memory, else EG_ENOSYS with the reason (no libfabric, no provider with
 * FI_HMEM, ...): a run reports it as a skip. */
int eg_fabric_hmem_probe(char *why, size_t len);

/* The transport as an eg_xport_ops_t: alltoallv over device buffers (the
 * bytes to each peer split across the K communicators). Options come
 * from eg_xport_opts_t; path, device and xnode mode from EPGATE_NCCL_PATH,
 * EPGATE_NCCL_DEVICE and EPGATE_NCCL_XNODE. */
extern const eg_xport_ops_t eg_xport_nccl;
/* GPU engines over eg_xport_nccl (ctx->xport_state an eg_nccl_t). Inputs,
 * receive buffers, expert outputs and combine outputs are device memory
 * (eg_recv_alloc_cuda), ready on stream 0 of the transport (or the device
 * synchronized). a2a splits every exchange across the K communicators
 * and reduces in canonical order; dense runs ncclAllGather and
 * ncclReduceScatter on communicator 0, which sums in NCCL's own order:
 * bit-exact in exact mode only, so it does not claim canonical order. */
extern const eg_engine_ops_t eg_engine_nccl_a2a;
extern const eg_engine_ops_t eg_engine_nccl_dense;
/* With EPGATE_NCCL_PHASES=1 in its environment, nccl-a2a times its
 * phases with CUDA events on stream 0 and its ops table's phases slot
 * reports the last step's, in ms: layout (the layout kernel), counts (the
 * count exchange and its copy to the host), host (the host's turn up to
 * the first pack launch), pack_exchange (the pipelined packs and row
 * exchange on all K communicators), finish (the finish kernel);
 * combine_exchange and combine_kernel. */
#define EG_NCCL_PHASES_MAX 10
/* By name: "a2a"/"nccl-a2a", "dense"/"nccl-dense"; NULL if unknown. */
const eg_engine_ops_t *eg_engine_nccl_find(const char *name);

/* The "nccl" measurement backend (bench.h); only built with CUDA and
 * NCCL. */
extern const eg_bench_backend_ops_t eg_bench_backend_nccl;

#endif
