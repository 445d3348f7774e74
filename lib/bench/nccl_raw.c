/* NCCL's collectives alone with nccl-tests' definitions
 * (include/epgate/nccl_raw.h): a descriptor per collective (name, byte
 * count, bus factor, run, expected values), one size measured as
 * nccl-tests measures it, and the sweep of `epgate bench raw COLL
 * --transport nccl` with its table and JSON. Built without CUDA or NCCL,
 * the descriptors only (the entry points: lib/transport/nccl_stub.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/nccl_raw.h"

/* Every collective here: (W-1)/W (nccl-tests' busbw). */
static double eg__bus_factor(uint32_t W)
{
	return W > 1 ? (double)(W - 1) / W : 0;
}

/* S = W chunks (the send buffer of alltoall and reducescatter, the
 * gathered buffer of allgather). */
static size_t eg__w_chunks(size_t chunk, size_t esz, uint32_t W)
{
	return chunk * esz * W;
}

/* rank r sends r+1 everywhere */
static float eg__expect_rank(uint32_t W, size_t c)
{
	(void)W;
	return (float)(c + 1);
}

static float eg__expect_sum(uint32_t W, size_t c)
{
	(void)c;
	return (float)(W * (W + 1) / 2);
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <jansson.h>

#include "epgate/dtype.h"
#include "epgate/mem.h"
#include "epgate/nccl.h"

typedef ncclResult_t (*eg__a2a_fn)(const void *, void *, size_t, ncclDataType_t,
				   ncclComm_t, cudaStream_t);

struct eg_nccl_raw {
	eg_nccl_raw_opts_t o;
	const eg_nccl_coll_t *coll;
	eg_world_t w;
	eg_boot_t *b;
	eg_nccl_t *n;
	eg__a2a_fn a2a; /* ncclAlltoAll when the library has it */
	void *sb, *rb;
	cudaEvent_t *ev;    /* iters + 1 */
	double *mine, *all; /* iters + 1 per rank */
	uint64_t ops;	    /* operations of the collective being queued */
};

static size_t eg__esz(const eg_nccl_raw_t *r)
{
	return r->o.bf16 ? 2 : 4;
}

static ncclDataType_t eg__dt(const eg_nccl_raw_t *r)
{
	return r->o.bf16 ? ncclBfloat16 : ncclFloat32;
}

static int eg__nccl(eg_nccl_raw_t *r, ncclResult_t rc)
{
	if (rc == ncclSuccess || rc == ncclInProgress)
		return EG_OK;
	return eg_nccl_fail(r->n, EG_EPEER, r->coll->name,
			    ncclGetErrorString(rc));
}

static int eg__run_alltoall(eg_nccl_raw_t *r, size_t chunk)
{
	ncclComm_t c = eg_nccl_comm(r->n, 0);
	cudaStream_t s = eg_nccl_stream(r->n, 0);
	size_t cb = chunk * eg__esz(r);
	int rc = EG_OK;

	if (r->a2a)
		return eg__nccl(r,
				r->a2a(r->sb, r->rb, chunk, eg__dt(r), c, s));
	r->ops = 0;
	for (uint32_t p = 0; p < r->w.size && rc == EG_OK; p++) {
		rc = eg__nccl(r, ncclSend((char *)r->sb + p * cb, chunk,
					  eg__dt(r), (int)p, c, s));
		if (rc == EG_OK)
			rc = eg__nccl(r, ncclRecv((char *)r->rb + p * cb, chunk,
						  eg__dt(r), (int)p, c, s));
		r->ops += 2;
	}
	return rc;
}

static int eg__run_allgather(eg_nccl_raw_t *r, size_t chunk)
{
	return eg__nccl(r, ncclAllGather(r->sb, r->rb, chunk, eg__dt(r),
					 eg_nccl_comm(r->n, 0),
					 eg_nccl_stream(r->n, 0)));
}

static int eg__run_reducescatter(eg_nccl_raw_t *r, size_t chunk)
{
	return eg__nccl(r, ncclReduceScatter(r->sb, r->rb, chunk, eg__dt(r),
					     ncclSum, eg_nccl_comm(r->n, 0),
					     eg_nccl_stream(r->n, 0)));
}

#else
#define eg__run_alltoall      NULL
#define eg__run_allgather     NULL
#define eg__run_reducescatter NULL
#endif

static const eg_nccl_coll_t eg__colls[] = {
    {"alltoall", eg__w_chunks, eg__bus_factor, 0, eg__run_alltoall,
     eg__expect_rank},
    {"allgather", eg__w_chunks, eg__bus_factor, 0, eg__run_allgather,
     eg__expect_rank},
    {"reducescatter", eg__w_chunks, eg__bus_factor, 1, eg__run_reducescatter,
     eg__expect_sum},
};

const eg_nccl_coll_t *eg_nccl_coll_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(eg__colls) / sizeof(*eg__colls);
	     i++)
		if (!strcmp(eg__colls[i].name, name))
			return &eg__colls[i];
	return NULL;
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

/* One collective of chunk elements per rank: queued in one group on
 * communicator 0, its operations and bytes counted. */
static int eg__launch(eg_nccl_raw_t *r, size_t chunk)
{
	size_t cb = chunk * eg__esz(r);
	int rc, rc2;

	r->ops = 1;
	ncclGroupStart();
	rc = r->coll->run(r, chunk);
	for (uint32_t p = 0; p < r->w.size; p++)
		eg_nccl_count(r->n, 0, 0, p, cb);
	eg_nccl_count(r->n, 0, r->ops, r->w.rank, 0);
	rc2 = eg_nccl_group_end(r->n, 0, r->coll->name);
	return rc < 0 ? rc : rc2;
}

/* Sampled check: the first, middle and last element of every chunk. */
static uint64_t eg__check(const eg_nccl_raw_t *r, size_t chunk)
{
	size_t esz = eg__esz(r);
	size_t nchunks = r->coll->recv_chunks_one ? 1 : r->w.size;
	uint64_t wrong = 0;

	for (size_t c = 0; c < nchunks; c++) {
		size_t idx[3] = {0, chunk / 2, chunk - 1};

		for (int i = 0; i < 3; i++) {
			unsigned char b[4] = {0};
			float v;

			cudaMemcpy(b,
				   (char *)r->rb + (c * chunk + idx[i]) * esz,
				   esz, cudaMemcpyDeviceToHost);
			if (r->o.bf16) {
				uint16_t u;
				memcpy(&u, b, 2);
				v = eg_bf16_to_f32(u);
			} else {
				memcpy(&v, b, 4);
			}
			wrong += v != r->coll->expect(r->w.size, c);
		}
	}
	return wrong;
}

/* Fills the send buffer with rank+1 in the datatype. */
static int eg__fill(const eg_nccl_raw_t *r, size_t bytes)
{
	size_t esz = eg__esz(r), n = bytes / esz;
	unsigned char *h = malloc(bytes + 4);
	float v = (float)(r->w.rank + 1);
	uint16_t u = eg_f32_to_bf16(v);
	int rc;

	if (!h)
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++)
		memcpy(h + i * esz, r->o.bf16 ? (void *)&u : (void *)&v, esz);
	rc =
	    cudaMemcpy(r->sb, h, n * esz, cudaMemcpyHostToDevice) == cudaSuccess
		? EG_OK
		: EG_ECUDA;
	free(h);
	return rc;
}

static int eg__cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The timed passes of one size on this rank: mine[0] the mean (wall
 * time of back-to-back collectives / iters, nothing else on the stream,
 * as nccl-tests takes it), mine[1..iters] each collective between
 * events. */
static int eg__timed(eg_nccl_raw_t *r, size_t chunk)
{
	cudaStream_t s = eg_nccl_stream(r->n, 0);
	unsigned N = r->o.job.iters;
	double t0;
	int rc;

	if ((rc = eg_boot_barrier(r->b, r->o.job.timeout_s)) < 0)
		return rc;
	t0 = eg_now();
	for (unsigned i = 0; i < N; i++)
		if ((rc = eg__launch(r, chunk)) < 0)
			return rc;
	if ((rc = eg_nccl_sync(r->n, "timed")) < 0)
		return rc;
	r->mine[0] = (eg_now() - t0) / N;
	if ((rc = eg_boot_barrier(r->b, r->o.job.timeout_s)) < 0)
		return rc;
	cudaEventRecord(r->ev[0], s);
	for (unsigned i = 0; i < N; i++) {
		if ((rc = eg__launch(r, chunk)) < 0)
			return rc;
		cudaEventRecord(r->ev[i + 1], s);
	}
	if ((rc = eg_nccl_sync(r->n, "timed")) < 0)
		return rc;
	for (unsigned i = 0; i < N; i++) {
		float ms = 0;

		cudaEventElapsedTime(&ms, r->ev[i], r->ev[i + 1]);
		r->mine[1 + i] = 1e-3 * ms;
	}
	return EG_OK;
}

/* Every rank's passes: the mean averaged over ranks (nccl-tests), the
 * median of the slowest rank per iteration. */
static void eg__reduce(const eg_nccl_raw_t *r, eg_nccl_raw_row_t *row)
{
	unsigned N = r->o.job.iters, W = r->w.size;
	double *it = r->mine + 1, f = r->coll->bus_factor(W);

	row->mean_s = 0;
	for (uint32_t q = 0; q < W; q++)
		row->mean_s += r->all[(size_t)q * (N + 1)] / W;
	for (unsigned i = 0; i < N; i++) {
		double mx = 0;

		for (uint32_t q = 0; q < W; q++)
			if (r->all[(size_t)q * (N + 1) + 1 + i] > mx)
				mx = r->all[(size_t)q * (N + 1) + 1 + i];
		it[i] = mx;
	}
	qsort(it, N, sizeof(double), eg__cmpd);
	row->med_s = N % 2 ? it[N / 2] : 0.5 * (it[N / 2 - 1] + it[N / 2]);
	row->algbw = row->bytes / row->mean_s / 1e9;
	row->busbw = row->algbw * f;
	row->algbw_med = row->bytes / row->med_s / 1e9;
	row->busbw_med = row->algbw_med * f;
}

int eg_nccl_raw_size(eg_nccl_raw_t *r, size_t S, eg_nccl_raw_row_t *row,
		     char *err, size_t errlen)
{
	size_t esz = eg__esz(r), nrecv;
	/* nccl-tests: the per-rank chunk in elements, 16-byte multiples */
	size_t chunk = (S / r->w.size / esz) & ~(16 / esz - 1);
	unsigned N = r->o.job.iters;
	int rc;

	memset(row, 0, sizeof(*row));
	if (!chunk || S > r->o.max_bytes) {
		snprintf(err, errlen,
			 "%zu bytes: no whole chunk, or over the "
			 "buffers' size",
			 S);
		return EG_ERANGE;
	}
	row->count = chunk;
	row->bytes = r->coll->bytes(chunk, esz, r->w.size);
	nrecv = r->coll->recv_chunks_one ? 1 : r->w.size;
	cudaMemset(r->rb, 0, chunk * esz * nrecv);
	for (unsigned i = 0; i < (r->o.job.warmup ? r->o.job.warmup : 1); i++)
		if ((rc = eg__launch(r, chunk)) < 0)
			goto fail;
	if ((rc = eg_nccl_sync(r->n, "warm-up")) < 0)
		goto fail;
	row->wrong = eg__check(r, chunk);
	if ((rc = eg__timed(r, chunk)) < 0)
		goto fail;
	rc = eg_boot_allgather(r->b, r->mine, (N + 1) * sizeof(double), r->all,
			       r->o.job.timeout_s);
	if (rc < 0) {
		snprintf(err, errlen, "gathering the times: %s",
			 eg_boot_error(r->b));
		return rc;
	}
	eg__reduce(r, row);
	return EG_OK;
fail:
	snprintf(err, errlen, "%s",
		 eg_nccl_error(r->n)[0] ? eg_nccl_error(r->n)
					: eg_strerror(rc));
	return rc;
}

static int eg__buffers(eg_nccl_raw_t *r)
{
	unsigned N = r->o.job.iters;

	r->ev = calloc(N + 1, sizeof(*r->ev));
	r->mine = calloc(N + 1, sizeof(double));
	r->all = calloc((size_t)(N + 1) * r->w.size, sizeof(double));
	if (!r->ev || !r->mine || !r->all ||
	    cudaMalloc(&r->sb, r->o.max_bytes + 256) != cudaSuccess ||
	    cudaMalloc(&r->rb, r->o.max_bytes + 256) != cudaSuccess)
		return EG_ENOMEM;
	for (unsigned i = 0; i <= N; i++)
		if (cudaEventCreate(&r->ev[i]) != cudaSuccess)
			return EG_ECUDA;
	/* rank r's send buffer holds r+1 everywhere */
	return eg__fill(r, r->o.max_bytes);
}

int eg_nccl_raw_open(eg_nccl_raw_t **out, const eg_world_t *w, eg_boot_t *b,
		     const eg_nccl_raw_opts_t *o, char *err, size_t errlen)
{
	eg_nccl_opts_t no = {.size = sizeof(no),
			     .num_comms = 1,
			     .timeout_s = o->job.timeout_s,
			     .device = o->xport.device,
			     .xnode_mode = o->xport.xnode_mode,
			     .blocking = 1}; /* as nccl-tests */
	eg_nccl_raw_t *r;
	int rc, ver = 0;

	*out = NULL;
	if (o->size < sizeof(*o) || !o->job.iters ||
	    !eg_nccl_coll_find(o->coll) ||
	    eg_nccl_path_parse(o->xport.path, &no.path) < 0) {
		snprintf(err, errlen, "bad options");
		return EG_EINVAL;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return EG_ENOMEM;
	r->o = *o;
	r->coll = eg_nccl_coll_find(o->coll);
	r->w = *w;
	r->b = b;
	if ((rc = eg_nccl_open(&r->n, w, b, &no, err, errlen)) < 0) {
		free(r);
		return rc;
	}
	ncclGetVersion(&ver);
	if (!strcmp(r->coll->name, "alltoall") && !o->sendrecv &&
	    ver >= 22800) {
		void *sym = dlsym(RTLD_DEFAULT, "ncclAlltoAll");
		memcpy(&r->a2a, &sym, sizeof(r->a2a));
	}
	if ((rc = eg__buffers(r)) < 0) {
		snprintf(err, errlen, "rank %u: %s", w->rank,
			 rc == EG_ENOMEM ? "out of memory" : eg_strerror(rc));
		eg_nccl_raw_close(r);
		return rc;
	}
	*out = r;
	return EG_OK;
}

const char *eg_nccl_raw_impl(const eg_nccl_raw_t *r)
{
	if (strcmp(r->coll->name, "alltoall"))
		return "nccl";
	return r->a2a ? "ncclAlltoAll" : "ncclSend/ncclRecv";
}

const char *eg_nccl_raw_version(const eg_nccl_raw_t *r)
{
	return eg_nccl_version(r->n);
}

int eg_nccl_raw_device(const eg_nccl_raw_t *r)
{
	return eg_nccl_device(r->n);
}

int eg_nccl_raw_path(eg_nccl_raw_t *r, char *via, size_t vlen, char *why,
		     size_t wlen)
{
	eg_nccl_evidence_t e;
	eg_nccl_path_t want = EG_NCCL_PATH_AUTO;
	int32_t prc, *all = calloc(r->w.size, sizeof(*all));
	int rc = EG_OK;

	eg_nccl_path_parse(r->o.xport.path, &want);
	prc = eg_nccl_evidence(r->n, &e);
	if (prc == EG_OK)
		prc = eg_nccl_evidence_check(&e, want, &r->w, why, wlen);
	if (r->w.size == 1 && prc == EG_ENOENT)
		prc = EG_OK;
	eg_nccl_evidence_summary(&e, via, vlen);
	if (!all || eg_boot_allgather(r->b, &prc, sizeof(prc), all,
				      r->o.job.timeout_s) < 0) {
		free(all);
		return EG_EIO;
	}
	for (uint32_t q = 0; q < r->w.size; q++)
		if (all[q] != EG_OK)
			rc = all[q];
	if (rc != EG_OK && prc == EG_OK)
		snprintf(why, wlen, "another rank differs");
	free(all);
	return rc;
}

void eg_nccl_raw_close(eg_nccl_raw_t *r)
{
	if (!r)
		return;
	/* nobody closes while a peer may still be in a collective */
	if (!eg_nccl_broken(r->n))
		eg_boot_barrier(r->b, r->o.job.timeout_s);
	for (unsigned i = 0; r->ev && i <= r->o.job.iters; i++)
		if (r->ev[i])
			cudaEventDestroy(r->ev[i]);
	cudaFree(r->sb);
	cudaFree(r->rb);
	eg_nccl_close(r->n);
	EG_FREE(r->ev, r->mine, r->all, r);
}

#endif
