/* The world: who this process is among the ranks of a job, where the
 * rendezvous is, and the deadlines that turn hangs into errors. */
#ifndef EPGATE_WORLD_H
#define EPGATE_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/clock.h" /* eg_now, for the world's deadlines */

#define EG_HOST_MAX   256
#define EG_SECRET_MAX 65

typedef struct eg_world {
	uint32_t rank, size;
	uint32_t local_rank, local_size; /* within this (virtual) node */
	uint32_t node, nodes;		 /* (virtual) node of this rank */
	uint32_t ranks_per_node;	 /* node(r) = r / ranks_per_node */
	char boot_host[EG_HOST_MAX];	 /* rendezvous host (rank 0's) */
	uint16_t boot_port;
	int boot_fd;		    /* inherited listening socket, or -1 */
	char secret[EG_SECRET_MAX]; /* per-job secret, hex */
	char job_id[64];	    /* Slurm job id or launcher id */
	double timeout_s;	    /* default deadline per blocking step */
	int from_slurm;
	char boot_src[48]; /* where boot_host came from, for errors */
	/* rank 0 under Slurm: the address it listens on, "" = every
	 * interface (EPGATE_BOOT_LISTEN, else EPGATE_ROOT_ADDR's host) */
	char boot_listen[EG_HOST_MAX];
} eg_world_t;

/* Node of any rank (virtual nodes count as nodes). */
static inline uint32_t eg_world_node_of(const eg_world_t *w, uint32_t r)
{
	return r / w->ranks_per_node;
}

/* Fills w from the environment: the local launcher's EPGATE_* variables
 * (EPGATE_RANK, EPGATE_SIZE, EPGATE_RANKS_PER_NODE, EPGATE_BOOT_ADDR
 * host:port, EPGATE_BOOT_FD, EPGATE_SECRET, EPGATE_JOB_ID,
 * EPGATE_TIMEOUT), else Slurm's (SLURM_PROCID, SLURM_NTASKS,
 * SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES, SLURM_JOB_NODELIST,
 * SLURM_JOB_ID; EPGATE_SECRET still required, EPGATE_BOOT_PORT optional,
 * EPGATE_ROOT_ADDR host[:port] instead of the step's first node name),
 * else a world of one. Errors name the variable. */
int eg_world_from_env(eg_world_t *w, char *err, size_t errlen);

/* First host of a Slurm hostlist ("n[01-04,07],x" -> "n01"). */
int eg_hostlist_first(const char *list, char *out, size_t len);

/* Removes libfabric shm regions ("/dev/shm/<pid>:<domain>:<ep>") of a
 * process that is gone: a rank killed by a signal leaves them behind,
 * and when its pid comes round again (pid_max is often 32768) opening
 * an endpoint fails with EBUSY. Called by the launcher for its reaped
 * ranks and by the fabric transport for its own pid (regions named
 * after it cannot belong to a live process). */
void eg_shm_sweep(long pid);
/* Removes every such region of this user whose process is gone (a
 * launcher killed outright never swept after its ranks): run at each
 * launcher's and each fabric transport's start. Returns how many. */
int eg_shm_sweep_dead(void);

#endif
