/* The L2 rank program on GPU memory: each rank takes a GPU, the NCCL
 * engines (a2a, dense) run over K communicators, the verified step checks
 * on the device. After the workloads every rank reads which path NCCL
 * took from its log; rank 0 writes a "transport" line (asked vs got) and
 * a "fabric-hmem" line (libfabric on GPU memory: why it is skipped). A
 * run on another path than asked fails. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/rank_int.h"
#include "epgate/nccl.h"

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

typedef struct eg__gpu {
	eg_nccl_t *n;
	eg_nccl_path_t path;
	int have_transport;
	char transport[96]; /* for the results lines */
} eg__gpu_t;

/* What NCCL took, at every rank; rank 0 says whether it was asked for. */
typedef struct eg__ev_msg {
	int32_t rc;
	char summary[96], why[256];
} eg__ev_msg_t;

static int eg__built(const eg_rank_opts_t *o)
{
	(void)o;
	return 0;
}

/* The communicators; every rank learns whether all of them have a GPU
 * (one without is a skip for the whole job). */
static int eg__open(eg_rank_job_t *J)
{
	const eg_rank_opts_t *o = J->o;
	eg__gpu_t *g = calloc(1, sizeof(*g));
	eg_nccl_opts_t no = {.size = sizeof(no),
			     .num_comms = o->xport.num_comms,
			     .timeout_s = J->world.timeout_s,
			     .device = o->xport.device,
			     .xnode_mode = o->xport.xnode_mode,
			     .log_dir = o->log_dir};
	char err[512];
	int32_t mine, *rcs = calloc(J->world.size, sizeof(*rcs));
	int skip = 0;

	J->priv = g;
	if (!g || !rcs || eg_nccl_path_parse(o->xport.path, &g->path) < 0) {
		free(rcs);
		return EG_EXIT_HARD;
	}
	snprintf(g->transport, sizeof(g->transport), "none");
	no.path = g->path;
	mine = eg_nccl_open(&g->n, &J->world, J->boot, &no, err, sizeof(err));
	if (eg_boot_allgather(J->boot, &mine, 4, rcs, J->world.timeout_s) < 0) {
		fprintf(stderr, "%s: rank %u: bootstrap: %s\n", o->prog,
			J->world.rank, eg_boot_error(J->boot));
		free(rcs);
		return EG_EXIT_HARD;
	}
	for (uint32_t r = 0; r < J->world.size; r++)
		skip |= rcs[r] == EG_ENOSYS;
	free(rcs);
	if (mine < 0) {
		fprintf(stderr, "%s: rank %u: NCCL: %s\n", o->prog,
			J->world.rank, err);
		return skip ? EG_EXIT_SKIP : EG_EXIT_HARD;
	}
	J->xops = &eg_xport_nccl;
	J->xstate = g->n;
	J->stream = eg_nccl_stream(g->n, 0);
	return 0;
}

static void eg__repro(const eg_rank_job_t *J, char *buf, size_t len)
{
	const eg__gpu_t *g = J->priv;

	snprintf(buf, len, " --path %s", eg_nccl_path_name(g->path));
}

/* Rank 0's lines say where they ran: GPU memory, and the path NCCL took
 * as its log shows it after the first workload. */
static json_t *eg__extra(eg_rank_job_t *J)
{
	eg__gpu_t *g = J->priv;
	eg_nccl_evidence_t e;

	if (!g->have_transport) {
		g->have_transport = 1;
		if (eg_nccl_evidence(g->n, &e) == EG_OK)
			eg_nccl_evidence_summary(&e, g->transport,
						 sizeof(g->transport));
	}
	return json_pack("{s:s, s:s}", "memory", "gpu", "transport",
			 g->transport);
}

static int eg__broken(const eg_rank_job_t *J)
{
	const eg__gpu_t *g = J->priv;

	return g && g->n && eg_nccl_broken(g->n);
}

/* This rank's evidence: what its log shows, judged against the path. */
static void eg__evidence(eg_rank_job_t *J, eg_nccl_evidence_t *e,
			 eg__ev_msg_t *ev)
{
	eg__gpu_t *g = J->priv;

	memset(ev, 0, sizeof(*ev));
	memset(e, 0, sizeof(*e));
	ev->rc = eg_nccl_evidence(g->n, e);
	if (ev->rc == EG_OK)
		ev->rc = eg_nccl_evidence_check(e, g->path, &J->world, ev->why,
						sizeof(ev->why));
	else
		snprintf(ev->why, sizeof(ev->why),
			 "cannot read NCCL's log %.200s", e->log);
	eg_nccl_evidence_summary(e, ev->summary, sizeof(ev->summary));
	if (J->world.size == 1 && ev->rc == EG_ENOENT) {
		ev->rc = EG_OK; /* one rank has no peer to connect */
		snprintf(ev->why, sizeof(ev->why), "one rank: no peers");
	}
}

/* Rank 0: the transport line, then the fabric transport on GPU memory,
 * never silently absent. */
static void eg__lines(eg_rank_job_t *J, const eg_nccl_evidence_t *e,
		      const eg__ev_msg_t *evs, int path_bad)
{
	eg__gpu_t *g = J->priv;
	json_t *line = json_object(), *ranks = json_array();
	char hm[256], why[320];
	int hrc = eg_fabric_hmem_probe(hm, sizeof(hm));

	for (uint32_t r = 0; r < J->world.size; r++)
		json_array_append_new(
		    ranks, json_pack("{s:i, s:s, s:s}", "rank", (int)r, "via",
				     evs[r].summary, "why", evs[r].why));
	json_object_set_new(line, "workload", json_string("transport"));
	json_object_set_new(line, "status",
			    json_string(path_bad ? "fail" : "pass"));
	json_object_set_new(line, "asked",
			    json_string(eg_nccl_path_name(g->path)));
	json_object_set_new(line, "nccl", json_string(eg_nccl_version(g->n)));
	json_object_set_new(line, "net", json_string(e->net));
	json_object_set_new(line, "ranks", ranks);
	json_object_set_new(line, "log", json_string(e->log));
	eg_put_json_line(J->rf, line);
	if (hrc == EG_OK)
		snprintf(why, sizeof(why),
			 "%s, but epgate's fabric transport moves host memory "
			 "only",
			 hm);
	eg_put_json_line(J->rf, json_pack("{s:s, s:s, s:s}", "workload",
					  "fabric-hmem", "status", "skip",
					  "why", hrc == EG_OK ? why : hm));
}

static int eg__finish(eg_rank_job_t *J, int rc)
{
	eg__gpu_t *g = J->priv;
	eg__ev_msg_t ev, *evs = calloc(J->world.size, sizeof(*evs));
	eg_nccl_evidence_t e;
	int path_bad = 0;

	eg__evidence(J, &e, &ev);
	if (!evs || eg_boot_allgather(J->boot, &ev, sizeof(ev), evs,
				      J->world.timeout_s) < 0) {
		free(evs);
		return EG_EXIT_HARD;
	}
	for (uint32_t r = 0; r < J->world.size; r++)
		path_bad |= evs[r].rc != EG_OK;
	if (J->world.rank == 0) {
		eg__lines(J, &e, evs, path_bad);
		printf("l2-gpu: %d workloads, engine %s, %u comms, %s; "
		       "transport %s (asked %s)%s%s\n",
		       J->ran, J->ops->name, J->o->xport.num_comms,
		       eg_nccl_version(g->n), ev.summary,
		       eg_nccl_path_name(g->path), path_bad ? ": " : "",
		       path_bad ? evs[0].why : "");
		for (uint32_t r = 0; path_bad && r < J->world.size; r++)
			if (evs[r].rc != EG_OK)
				fprintf(stderr, "%s: rank %u: %s\n", J->o->prog,
					r, evs[r].why);
	}
	free(evs);
	return path_bad && rc != EG_EXIT_HARD ? EG_EXIT_FAIL : rc;
}

static void eg__close(eg_rank_job_t *J)
{
	eg__gpu_t *g = J->priv;

	if (g)
		eg_nccl_close(g->n);
	free(g);
	J->priv = NULL;
	J->xstate = NULL;
}

#else /* built without CUDA or NCCL */

static int eg__built(const eg_rank_opts_t *o)
{
	fprintf(stderr, "%s: built without CUDA and NCCL\n", o->prog);
	return EG_EXIT_SKIP;
}

static int eg__open(eg_rank_job_t *J)
{
	(void)J;
	return EG_EXIT_SKIP;
}

#define eg__repro  NULL
#define eg__extra  NULL
#define eg__broken NULL

static int eg__finish(eg_rank_job_t *J, int rc)
{
	(void)J;
	return rc;
}

static void eg__close(eg_rank_job_t *J)
{
	(void)J;
}

#endif

const eg_rank_memory_t eg_rank_memory_cuda = {
    .size = sizeof(eg_rank_memory_t),
    .name = "cuda",
    .engines = &eg_step_engines_cuda,
    .built = eg__built,
    .open = eg__open,
    .repro = eg__repro,
    .extra = eg__extra,
    .broken = eg__broken,
    .finish = eg__finish,
    .close = eg__close,
};

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
#include <cuda_runtime_api.h>

int eg_suite_cuda_devices(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* no driver or no device: none */
		return 0;
	}
	return n;
}
#else
int eg_suite_cuda_devices(void)
{
	return -1;
}
#endif
