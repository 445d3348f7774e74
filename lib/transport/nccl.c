/* NCCL communicators: K nonblocking communicators, each with its own
 * stream, from unique ids broadcast over the bootstrap; deadlines that
 * abort them; the environment that makes NCCL log its transports and
 * treat virtual nodes as hosts; and eg_xport_nccl. Built with CUDA and
 * NCCL only (Makefile.am; without them, lib/transport/nccl_stub.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/nccl.h"
#include "lib/transport/nccl_int.h"

/* NCCL reads its environment once per process: the log path chosen by
 * the first open is where every later communicator logs too. */
static char eg__log_path[512];

int eg_nccl_fail(eg_nccl_t *n, int rc, const char *step, const char *what)
{
	if (!n->err[0]) /* keep the first cause */
		snprintf(n->err, sizeof(n->err), "%s: %s", step, what);
	return rc;
}

const char *eg_nccl_error(const eg_nccl_t *n)
{
	return n ? n->err : "";
}

int eg_nccl_broken(const eg_nccl_t *n)
{
	return n->broken;
}

static void eg__abort_all(eg_nccl_t *n)
{
	for (uint32_t k = 0; k < n->K; k++)
		if (n->comm[k]) {
			ncclCommAbort(n->comm[k]);
			n->comm[k] = NULL;
		}
	n->broken = 1;
}

/* Polls communicator k until NCCL has finished what it was given. */
static int eg__wait_comm(eg_nccl_t *n, uint32_t k, const char *step)
{
	double end = eg_now() + n->timeout_s;

	for (;;) {
		ncclResult_t st = ncclSuccess;
		ncclResult_t r = ncclCommGetAsyncError(n->comm[k], &st);

		if (r != ncclSuccess)
			return eg__nccl_call(n, r, k, step);
		if (st == ncclSuccess)
			return EG_OK;
		if (st != ncclInProgress) {
			int rc = eg__nccl_call(n, st, k, step);
			eg__abort_all(n);
			return rc;
		}
		if (eg_now() > end) {
			char msg[160];
			snprintf(msg, sizeof(msg),
				 "deadline %.1f s expired while NCCL still "
				 "worked on comm %u; communicators aborted",
				 n->timeout_s, k);
			eg__abort_all(n);
			return eg_nccl_fail(n, EG_ETIMEDOUT, step, msg);
		}
		sched_yield();
	}
}

int eg_nccl_group_end(eg_nccl_t *n, uint32_t k, const char *step)
{
	ncclResult_t r = ncclGroupEnd();
	int rc = eg__nccl_call(n, r, k, step);

	if (rc < 0)
		return rc;
	return r == ncclInProgress ? eg__wait_comm(n, k, step) : EG_OK;
}

int eg_nccl_sync(eg_nccl_t *n, const char *step)
{
	double end = eg_now() + n->timeout_s;

	if (n->broken)
		return eg_nccl_fail(n, EG_EPEER, step,
				    "communicators were aborted earlier");
	for (;;) {
		int busy = 0;

		for (uint32_t k = 0; k < n->K; k++) {
			cudaError_t e = cudaStreamQuery(n->stream[k]);
			ncclResult_t st = ncclSuccess;

			if (e == cudaErrorNotReady)
				busy = 1;
			else if (e != cudaSuccess)
				return eg__nccl_cuda(n, e, step);
			if (ncclCommGetAsyncError(n->comm[k], &st) !=
				ncclSuccess ||
			    (st != ncclSuccess && st != ncclInProgress)) {
				int rc = eg__nccl_call(
				    n,
				    st == ncclSuccess ? ncclInternalError : st,
				    k, step);
				eg__abort_all(n);
				return rc;
			}
		}
		if (!busy)
			return EG_OK;
		if (eg_now() > end) {
			char msg[200];
			snprintf(msg, sizeof(msg),
				 "deadline %.1f s expired with NCCL work still "
				 "running (a peer may have stopped); "
				 "communicators aborted",
				 n->timeout_s);
			eg__abort_all(n);
			return eg_nccl_fail(n, EG_ETIMEDOUT, step, msg);
		}
		sched_yield();
	}
}

static void eg__env_default(const char *name, const char *value)
{
	if (!getenv(name))
		setenv(name, value, 1);
}

/* NCCL's log for the evidence, once per process. */
static void eg__env_log(const eg_world_t *w, const char *dir)
{
	const char *user = getenv("NCCL_DEBUG_FILE");

	if (eg__log_path[0])
		return;
	if (user) { /* the caller's: expand NCCL's %h and %p */
		size_t o = 0;
		for (const char *p = user; *p && o + 64 < sizeof(eg__log_path);
		     p++) {
			if (p[0] == '%' && p[1] == 'h') {
				gethostname(eg__log_path + o, 63);
				eg__log_path[o + 63] = 0;
				o += strlen(eg__log_path + o);
				p++;
			} else if (p[0] == '%' && p[1] == 'p') {
				o += (size_t)snprintf(eg__log_path + o, 32,
						      "%d", (int)getpid());
				p++;
			} else {
				eg__log_path[o++] = *p;
			}
		}
		eg__log_path[o] = 0;
		return;
	}
	if (!dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(eg__log_path, sizeof(eg__log_path), "%s/nccl-%s-r%u.log", dir,
		 w->job_id[0] ? w->job_id : "epgate", w->rank);
	setenv("NCCL_DEBUG_FILE", eg__log_path, 1);
	eg__env_default("NCCL_DEBUG", "INFO");
	eg__env_default("NCCL_DEBUG_SUBSYS", "INIT,P2P,NET,GRAPH");
}

/* Virtual nodes on one host: does a rank of another node share mine? */
static int eg__virtual_nodes(const eg_world_t *w, eg_boot_t *b, double tmo,
			     int *virt)
{
	char me[64] = {0}, *all = malloc((size_t)w->size * 64);
	int rc;

	*virt = 0;
	if (!all)
		return EG_ENOMEM;
	gethostname(me, sizeof(me) - 1);
	rc = eg_boot_allgather(b, me, 64, all, tmo);
	for (uint32_t r = 0; rc == EG_OK && r < w->size; r++)
		if (eg_world_node_of(w, r) != w->node &&
		    !strncmp(all + (size_t)r * 64, me, 64))
			*virt = 1;
	free(all);
	return rc;
}

typedef struct eg__ids {
	int32_t rc;
	char msg[200];
	ncclUniqueId id[EG_COMMS_MAX];
} eg__ids_t;

static int eg__open_env(eg_nccl_t *n, const eg_world_t *w, eg_boot_t *b,
			const eg_nccl_opts_t *o, char *err, size_t errlen)
{
	int virt = 0, rc;
	char v[160];

	rc = eg__virtual_nodes(w, b, n->timeout_s, &virt);
	if (rc < 0) {
		snprintf(err, errlen, "bootstrap: %s", eg_boot_error(b));
		return rc;
	}
	if (o->path == EG_NCCL_PATH_XNODE && w->nodes < 2) {
		snprintf(err, errlen,
			 "path xnode needs ranks in two nodes or more "
			 "(launch with --ranks-per-node)");
		return EG_EINVAL;
	}
	/* never NVLink multicast (it can take the host's GPUs down) */
	setenv("NCCL_NVLS_ENABLE", "0", 1);
	eg__env_log(w, o->log_dir);
	if (virt && o->path != EG_NCCL_PATH_NVLINK) {
		if (o->xnode_mode && !strcmp(o->xnode_mode, "nop2p")) {
			setenv("NCCL_P2P_DISABLE", "1", 1);
			setenv("NCCL_SHM_DISABLE", "1", 1);
		} else if (!o->xnode_mode || !strcmp(o->xnode_mode, "hostid")) {
			snprintf(v, sizeof(v), "%s-node%u",
				 w->job_id[0] ? w->job_id : "epgate", w->node);
			setenv("NCCL_HOSTID", v, 1);
		} else {
			snprintf(err, errlen,
				 "xnode mode \"%s\": want hostid or nop2p",
				 o->xnode_mode);
			return EG_EINVAL;
		}
		eg__env_default("NCCL_MNNVL_ENABLE", "0");
	}
	return EG_OK;
}

/* Rank 0 makes one unique id per communicator; every rank gets them. */
static int eg__share_ids(eg_nccl_t *n, const eg_world_t *w, eg_boot_t *b,
			 eg__ids_t *ids, char *err, size_t errlen)
{
	int rc;

	memset(ids, 0, sizeof(*ids));
	if (w->rank == 0)
		for (uint32_t k = 0; k < n->K && !ids->rc; k++) {
			ncclResult_t r = ncclGetUniqueId(&ids->id[k]);
			if (r != ncclSuccess) {
				ids->rc = EG_EPEER;
				snprintf(ids->msg, sizeof(ids->msg),
					 "rank 0: ncclGetUniqueId: %s",
					 ncclGetErrorString(r));
			}
		}
	rc = eg_boot_bcast(b, ids, sizeof(*ids), 0, n->timeout_s);
	if (rc < 0) {
		snprintf(err, errlen, "bootstrap: %s", eg_boot_error(b));
		return rc;
	}
	if (ids->rc) {
		snprintf(err, errlen, "%s", ids->msg);
		return ids->rc;
	}
	return EG_OK;
}

/* The K communicators, each on its own stream. */
static int eg__init_comms(eg_nccl_t *n, const eg_world_t *w,
			  const eg__ids_t *ids, int blocking, char *err,
			  size_t errlen)
{
	int rc;

	for (uint32_t k = 0; k < n->K; k++) {
		ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;

		cfg.blocking = blocking;
		/* K communicators on K streams must all fit on the GPU at
		 * once, or their kernels can wait on each other */
		if (n->K > 1)
			cfg.maxCTAs =
			    (int)(128 / n->K) > 1 ? (int)(128 / n->K) : 1;
		if (cudaStreamCreateWithFlags(
			&n->stream[k], cudaStreamNonBlocking) != cudaSuccess) {
			snprintf(err, errlen, "cudaStreamCreate failed");
			return EG_ECUDA;
		}
		rc = eg__nccl_call(n,
				   ncclCommInitRankConfig(&n->comm[k], w->size,
							  ids->id[k], w->rank,
							  &cfg),
				   k, "init");
		if (rc == EG_OK)
			rc = eg__wait_comm(n, k, "init");
		if (rc < 0) {
			snprintf(err, errlen, "%s", n->err);
			return rc;
		}
	}
	return EG_OK;
}

int eg_nccl_open(eg_nccl_t **out, const eg_world_t *w, eg_boot_t *b,
		 const eg_nccl_opts_t *o, char *err, size_t errlen)
{
	eg_nccl_t *n;
	eg__ids_t ids;
	const char *benv = getenv("EPGATE_NCCL_BLOCKING");
	int ndev = 0, rc, ver = 0, blocking;

	*out = NULL;
	if (!o || o->size < sizeof(*o) || !o->num_comms ||
	    o->num_comms > EG_COMMS_MAX) {
		snprintf(err, errlen, "num_comms must be 1..%d", EG_COMMS_MAX);
		return EG_EINVAL;
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		cudaGetLastError();
		snprintf(err, errlen, "no CUDA device");
		return EG_ENOSYS;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return EG_ENOMEM;
	n->world = *w;
	n->K = o->num_comms;
	n->timeout_s = o->timeout_s > 0 ? o->timeout_s : w->timeout_s;
	if (n->timeout_s <= 0)
		n->timeout_s = 60;
	n->path = o->path;
	blocking = benv && *benv ? atoi(benv) != 0 : o->blocking != 0;
	n->device = o->device >= 0
			? o->device
			: (int)((w->from_slurm ? w->local_rank : w->rank) %
				(uint32_t)ndev);
	if (n->device >= ndev || cudaSetDevice(n->device) != cudaSuccess) {
		snprintf(err, errlen, "cannot use CUDA device %d of %d",
			 n->device, ndev);
		free(n);
		return EG_ECUDA;
	}
	/* the kernels' wrappers allocate stream-ordered scratch: keep the
	 * pool's memory across synchronizations instead of unmapping and
	 * mapping it again every step */
	cudaMemPool_t pool;
	if (cudaDeviceGetDefaultMemPool(&pool, n->device) == cudaSuccess) {
		uint64_t keep = UINT64_MAX;
		cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
					&keep);
	}
	cudaGetLastError();
	rc = eg__open_env(n, w, b, o, err, errlen);
	if (rc < 0)
		goto fail;

	if ((rc = eg__share_ids(n, w, b, &ids, err, errlen)) < 0 ||
	    (rc = eg__init_comms(n, w, &ids, blocking, err, errlen)) < 0)
		goto fail;
	ncclGetVersion(&ver);
	snprintf(n->version, sizeof(n->version), "NCCL %d.%d.%d", ver / 10000,
		 ver / 100 % 100, ver % 100);
	*out = n;
	return EG_OK;
fail:
	eg__abort_all(n);
	for (uint32_t k = 0; k < n->K; k++)
		if (n->stream[k])
			cudaStreamDestroy(n->stream[k]);
	free(n);
	return rc;
}

void eg_nccl_close(eg_nccl_t *n)
{
	if (!n)
		return;
	if (!n->broken && eg_nccl_sync(n, "close") == EG_OK) {
		for (uint32_t k = 0; k < n->K && !n->broken; k++) {
			if (eg__nccl_call(n, ncclCommFinalize(n->comm[k]), k,
					  "close") < 0 ||
			    eg__wait_comm(n, k, "close") < 0)
				eg__abort_all(n);
		}
		for (uint32_t k = 0; k < n->K && !n->broken; k++) {
			ncclCommDestroy(n->comm[k]);
			n->comm[k] = NULL;
		}
	}
	eg__abort_all(n); /* whatever is left */
	for (uint32_t k = 0; k < n->K; k++)
		if (n->stream[k])
			cudaStreamDestroy(n->stream[k]);
	free(n);
}

uint32_t eg_nccl_num_comms(const eg_nccl_t *n)
{
	return n->K;
}

void *eg_nccl_comm(const eg_nccl_t *n, uint32_t k)
{
	return k < n->K ? n->comm[k] : NULL;
}

void *eg_nccl_stream(const eg_nccl_t *n, uint32_t k)
{
	return k < n->K ? n->stream[k] : NULL;
}

int eg_nccl_device(const eg_nccl_t *n)
{
	return n->device;
}

const eg_world_t *eg_nccl_world(const eg_nccl_t *n)
{
	return &n->world;
}

const char *eg_nccl_version(const eg_nccl_t *n)
{
	return n->version;
}

void eg_nccl_count(eg_nccl_t *n, uint32_t k, uint64_t ops, uint32_t peer,
		   uint64_t bytes)
{
	n->ops[k] += ops;
	if (peer == n->world.rank)
		return;
	n->bytes_sent += bytes;
	if (eg_world_node_of(&n->world, peer) != n->world.node)
		n->bytes_sent_xnode += bytes;
}

void eg_nccl_stats_reset(eg_nccl_t *n)
{
	memset(n->ops, 0, sizeof(n->ops));
	n->bytes_sent = n->bytes_sent_xnode = 0;
}

void eg_nccl_stats(eg_nccl_t *n, eg_xport_stats_t *s)
{
	eg_nccl_evidence_t e;

	memset(s, 0, sizeof(*s));
	s->num_comms = n->K;
	memcpy(s->ops_posted, n->ops, sizeof(s->ops_posted));
	s->bytes_sent = n->bytes_sent;
	s->bytes_sent_xnode = n->bytes_sent_xnode;
	if (eg_nccl_evidence(n, &e) < 0)
		return;
	for (uint32_t i = 0; i < e.npairs; i++) {
		const eg_nccl_pair_t *p = &e.pair[i];
		int same;

		if (p->from < 0 || p->to < 0 ||
		    (uint32_t)p->from >= n->world.size ||
		    (uint32_t)p->to >= n->world.size)
			continue;
		same = eg_world_node_of(&n->world, (uint32_t)p->from) ==
		       eg_world_node_of(&n->world, (uint32_t)p->to);
		char *dst = same ? s->provider_intra : s->provider_inter;
		if (!dst[0])
			snprintf(dst, sizeof(s->provider_intra), "%s", p->via);
	}
}

int eg_nccl_evidence(eg_nccl_t *n, eg_nccl_evidence_t *e)
{
	FILE *f;
	int rc;

	memset(e, 0, sizeof(*e));
	snprintf(e->version, sizeof(e->version), "%s", n->version);
	snprintf(e->log, sizeof(e->log), "%s", eg__log_path);
	f = eg__log_path[0] ? fopen(eg__log_path, "r") : NULL;
	if (!f)
		return EG_ENOENT;
	rc = eg_nccl_evidence_read(f, e);
	fclose(f);
	return rc;
}

/* ---- eg_xport_nccl ---- */

static int eg__x_create(const eg_world_t *w, eg_boot_t *b,
			const eg_xport_opts_t *xo, void **state, char *err,
			size_t errlen)
{
	eg_nccl_opts_t o = {.size = sizeof(o),
			    .num_comms = xo->num_comms,
			    .timeout_s = xo->timeout_s,
			    .device = -1,
			    .xnode_mode = getenv("EPGATE_NCCL_XNODE")};
	const char *dev = getenv("EPGATE_NCCL_DEVICE");

	if (dev && *dev)
		o.device = atoi(dev);
	if (eg_nccl_path_parse(getenv("EPGATE_NCCL_PATH"), &o.path) < 0) {
		snprintf(err, errlen,
			 "EPGATE_NCCL_PATH: want auto, nvlink "
			 "or xnode");
		return EG_EINVAL;
	}
	return eg_nccl_open((eg_nccl_t **)state, w, b, &o, err, errlen);
}

static int eg__x_alltoallv(void *state, const void *const *send,
			   const size_t *send_bytes, void *const *recv,
			   const size_t *recv_bytes)
{
	eg_nccl_t *n = state;
	uint32_t me = n->world.rank, W = n->world.size;
	int rc;

	if (n->broken)
		return eg_nccl_fail(n, EG_EPEER, "alltoallv",
				    "communicators were aborted earlier");
	if (send_bytes[me] != recv_bytes[me])
		return EG_EINVAL;
	if (send_bytes[me] &&
	    (rc = eg__nccl_cuda(
		 n,
		 cudaMemcpyAsync(recv[me], send[me], send_bytes[me],
				 cudaMemcpyDeviceToDevice, n->stream[0]),
		 "alltoallv")) < 0)
		return rc;
	for (uint32_t k = 0; k < n->K; k++) {
		int bad = 0;

		ncclGroupStart();
		for (uint32_t p = 0; p < W && !bad; p++) {
			uint64_t lo, hi;

			if (p == me)
				continue;
			eg__nccl_slice(send_bytes[p], k, n->K, &lo, &hi);
			if (hi > lo) {
				bad = eg__nccl_call(
				    n,
				    ncclSend((const char *)send[p] + lo,
					     hi - lo, ncclUint8, (int)p,
					     n->comm[k], n->stream[k]),
				    k, "alltoallv");
				eg_nccl_count(n, k, 1, p, hi - lo);
			}
			eg__nccl_slice(recv_bytes[p], k, n->K, &lo, &hi);
			if (hi > lo && !bad) {
				bad = eg__nccl_call(
				    n,
				    ncclRecv((char *)recv[p] + lo, hi - lo,
					     ncclUint8, (int)p, n->comm[k],
					     n->stream[k]),
				    k, "alltoallv");
				eg_nccl_count(n, k, 1, me, 0);
			}
		}
		rc = eg_nccl_group_end(n, k, "alltoallv");
		if (bad || rc < 0)
			return bad ? bad : rc;
	}
	return eg_nccl_sync(n, "alltoallv");
}

static int eg__x_stats(void *state, eg_xport_stats_t *s)
{
	eg_nccl_stats(state, s);
	return EG_OK;
}

/* The counter alone: eg_nccl_stats also parses NCCL's log. */
static int eg__x_sent(void *state, uint64_t *bytes)
{
	*bytes = ((eg_nccl_t *)state)->bytes_sent;
	return EG_OK;
}

static const char *eg__x_error(void *state)
{
	return eg_nccl_error(state);
}

static void eg__x_destroy(void *state)
{
	eg_nccl_close(state);
}

const eg_xport_ops_t eg_xport_nccl = {
    .size = sizeof(eg_xport_ops_t),
    .name = "nccl",
    .create = eg__x_create,
    .alltoallv = eg__x_alltoallv,
    .stats = eg__x_stats,
    .error = eg__x_error,
    .destroy = eg__x_destroy,
    .sent = eg__x_sent,
};
