/* epgate bench --raw alltoall|allgather|reducescatter --transport nccl:
 * NCCL alone, one rank per process and GPU, with nccl-tests' definitions
 * so the numbers sit beside its tables. For each size S (swept from -b to
 * -e by factor -f): every rank moves S bytes (alltoall: its send buffer,
 * S/n to each rank, itself included; allgather: the gathered buffer;
 * reducescatter: the buffer reduced), out of place, in float by default.
 * Time: after warm-up and a bootstrap barrier, iters back-to-back
 * collectives on one stream, wall time / iters, averaged over ranks (as
 * nccl-tests); then iters more with CUDA events between them, for the
 * median over iterations of the slowest rank. Blocking communicators, as
 * nccl-tests uses. algbw = S / time, busbw = algbw * (n-1)/n.
 * Each size is checked once (sampled elements of every chunk). Rank 0
 * prints a table like nccl-tests' and writes JSON with --json. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/num.h"
#include "lib/suite/suite.h"
#include "lib/suite/cmd_gpu.h"

#define EG__PROG "epgate bench --raw"

static void eg__bn_usage(FILE *f)
{
	fputs(
	    "usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
	    "         epgate bench --raw COLL --transport nccl [options]\n"
	    "\n"
	    "COLL: alltoall, allgather or reducescatter, over NCCL on GPU\n"
	    "memory, sizes swept like nccl-tests (S = bytes per rank as\n"
	    "nccl-tests counts them; busbw = S/t * (n-1)/n). Or an engine,\n"
	    "a2a or dense, on one workload (--tokens, --hidden, --experts,\n"
	    "--topk, --dtype, --routing ...): verified step, warm-up, timed\n"
	    "steps (CUDA events), dispatch bandwidth in bytes sent to other\n"
	    "ranks per second, and the a2a engine's phases.\n"
	    "\n"
	    "  -b, --min-bytes B    smallest size (8; K/M/G binary)\n"
	    "  -e, --max-bytes B    largest size (1G)\n"
	    "  -f, --step-factor F  size multiplier (2)\n"
	    "  -n, --iters N        timed collectives per size (20)\n"
	    "  -w, --warmup N       untimed ones first (5)\n"
	    "  -d, --datatype T     float (default) or bf16\n"
	    "  --impl I             alltoall: nccl (ncclAlltoAll when the\n"
	    "                       library has it) or sendrecv (grouped\n"
	    "                       ncclSend/ncclRecv, nccl-tests' older "
	    "path)\n"
	    "  --path P             auto, nvlink or xnode (checked against\n"
	    "                       NCCL's log)\n"
	    "  --xnode-mode M       hostid or nop2p\n"
	    "  --device D           CUDA device (default: rank modulo count)\n"
	    "  --num-comms K        engines: NCCL communicators (1)\n"
	    "  --timeout S          deadline per wait (60)\n"
	    "  --json FILE          rank 0 writes the table as JSON\n"
	    "\n"
	    "Exit status: 0 measured, 1 wrong data, a wrong path or an NCCL\n"
	    "error, 77 no GPU or built without CUDA and NCCL, 99 bad\n"
	    "arguments.\n",
	    f);
}

/* A bad number: the base parser's message, exit 99. */
static int eg__bn_bad(const char *err)
{
	fprintf(stderr, EG__PROG ": %s\n", err);
	return EG_EXIT_HARD;
}

/* The long name of a numeric option. */
static const char *eg__bn_opt(int c)
{
	return c == 'n'	  ? "--iters"
	       : c == 'w' ? "--warmup"
	       : c == 'D' ? "--device"
			  : "--timeout";
}

/* "4096", "64K", "1M", "1G", up to 64G (lib/base/num.c) */
static int eg__bn_bytes(const char *s, size_t *out)
{
	uint64_t v;

	if (eg_parse_bytes(NULL, s, 1, 1ull << 36, 0, &v, NULL, 0) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "epgate/nccl.h"

enum { EG__A2A, EG__AG, EG__RS };
#define EG__BE_MAX 1000

typedef ncclResult_t (*eg__a2a_fn)(const void *, void *, size_t, ncclDataType_t,
				   ncclComm_t, cudaStream_t);

typedef struct eg__bn {
	int coll, bf16, sendrecv;
	unsigned comms;
	size_t minb, maxb;
	double factor, timeout_s;
	unsigned iters, warmup;
	int device;
	const char *json, *xnode;
	eg_nccl_path_t path;
} eg__bn_t;

typedef struct eg__bn_row {
	size_t bytes, count; /* S, elements per rank chunk */
	double mean_s, med_s;
	uint64_t wrong;
} eg__bn_row_t;

static const char *const eg__coll_name[] = {"alltoall", "allgather",
					    "reducescatter"};

static int eg__bn_cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One collective of chunk elements per rank on communicator 0. */
static int eg__bn_launch(const eg__bn_t *o, eg_nccl_t *n, eg__a2a_fn a2a,
			 void *sb, void *rb, size_t chunk)
{
	const eg_world_t *w = eg_nccl_world(n);
	ncclComm_t c = eg_nccl_comm(n, 0);
	cudaStream_t s = eg_nccl_stream(n, 0);
	ncclDataType_t dt = o->bf16 ? ncclBfloat16 : ncclFloat32;
	size_t esz = o->bf16 ? 2 : 4, cb = chunk * esz;
	ncclResult_t r = ncclSuccess;
	uint64_t ops = 1;

	ncclGroupStart();
	if (o->coll == EG__AG) {
		r = ncclAllGather(sb, rb, chunk, dt, c, s);
	} else if (o->coll == EG__RS) {
		r = ncclReduceScatter(sb, rb, chunk, dt, ncclSum, c, s);
	} else if (a2a) {
		r = a2a(sb, rb, chunk, dt, c, s);
	} else {
		ops = 0;
		for (uint32_t p = 0; p < w->size && r == ncclSuccess; p++) {
			r = ncclSend((char *)sb + p * cb, chunk, dt, (int)p, c,
				     s);
			if (r == ncclSuccess || r == ncclInProgress)
				r = ncclRecv((char *)rb + p * cb, chunk, dt,
					     (int)p, c, s);
			ops += 2;
		}
	}
	for (uint32_t p = 0; p < w->size; p++)
		eg_nccl_count(n, 0, 0, p, cb);
	eg_nccl_count(n, 0, ops, w->rank, 0);
	int rc = eg_nccl_group_end(n, 0, eg__coll_name[o->coll]);
	if (r != ncclSuccess && r != ncclInProgress)
		return eg_nccl_fail(n, EG_EPEER, eg__coll_name[o->coll],
				    ncclGetErrorString(r));
	return rc;
}

/* Sampled check: the first, middle and last element of every chunk. */
static uint64_t eg__bn_check(const eg__bn_t *o, const eg_world_t *w, void *rb,
			     size_t chunk)
{
	size_t esz = o->bf16 ? 2 : 4;
	size_t nchunks = o->coll == EG__RS ? 1 : w->size;
	uint64_t wrong = 0;

	for (size_t c = 0; c < nchunks; c++) {
		size_t idx[3] = {0, chunk / 2, chunk - 1};
		for (int i = 0; i < 3; i++) {
			unsigned char b[4] = {0};
			float v, want;

			cudaMemcpy(b, (char *)rb + (c * chunk + idx[i]) * esz,
				   esz, cudaMemcpyDeviceToHost);
			if (o->bf16) {
				uint16_t u;
				memcpy(&u, b, 2);
				v = eg_bf16_to_f32(u);
			} else {
				memcpy(&v, b, 4);
			}
			/* rank r sends r+1 everywhere */
			want = o->coll == EG__RS
				   ? (float)(w->size * (w->size + 1) / 2)
				   : (float)(c + 1);
			wrong += v != want;
		}
	}
	return wrong;
}

/* Fills the send buffer with rank+1 in the datatype. */
static int eg__bn_fill(const eg__bn_t *o, const eg_world_t *w, void *sb,
		       size_t bytes)
{
	size_t esz = o->bf16 ? 2 : 4, n = bytes / esz;
	unsigned char *h = malloc(bytes + 4);
	float v = (float)(w->rank + 1);
	int rc;

	if (!h)
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (o->bf16) {
			uint16_t u = eg_f32_to_bf16(v);
			memcpy(h + i * 2, &u, 2);
		} else {
			memcpy(h + i * 4, &v, 4);
		}
	}
	rc = cudaMemcpy(sb, h, n * esz, cudaMemcpyHostToDevice) == cudaSuccess
		 ? EG_OK
		 : EG_ECUDA;
	free(h);
	return rc;
}

/* One size: warm-up, check, timed loop; times of every rank meet. */
static int eg__bn_size(const eg__bn_t *o, eg_nccl_t *n, eg_boot_t *b,
		       eg__a2a_fn a2a, void *sb, void *rb, size_t chunk,
		       cudaEvent_t *ev, double *mine, double *all,
		       eg__bn_row_t *row)
{
	const eg_world_t *w = eg_nccl_world(n);
	cudaStream_t s = eg_nccl_stream(n, 0);
	unsigned N = o->iters;
	double t0, *it = mine + 1;
	int rc;

	cudaMemset(rb, 0,
		   chunk * (o->bf16 ? 2 : 4) *
		       (o->coll == EG__RS ? 1 : w->size));
	for (unsigned i = 0; i < (o->warmup ? o->warmup : 1); i++)
		if ((rc = eg__bn_launch(o, n, a2a, sb, rb, chunk)) < 0)
			return rc;
	if ((rc = eg_nccl_sync(n, "warm-up")) < 0)
		return rc;
	row->wrong = eg__bn_check(o, w, rb, chunk);
	/* the mean as nccl-tests takes it: back-to-back collectives, wall
	 * time, nothing else on the stream */
	if ((rc = eg_boot_barrier(b, o->timeout_s)) < 0)
		return rc;
	t0 = eg_now();
	for (unsigned i = 0; i < N; i++)
		if ((rc = eg__bn_launch(o, n, a2a, sb, rb, chunk)) < 0)
			return rc;
	if ((rc = eg_nccl_sync(n, "timed")) < 0)
		return rc;
	mine[0] = (eg_now() - t0) / N;
	/* then as many again with events between them, for the median */
	if ((rc = eg_boot_barrier(b, o->timeout_s)) < 0)
		return rc;
	cudaEventRecord(ev[0], s);
	for (unsigned i = 0; i < N; i++) {
		if ((rc = eg__bn_launch(o, n, a2a, sb, rb, chunk)) < 0)
			return rc;
		cudaEventRecord(ev[i + 1], s);
	}
	if ((rc = eg_nccl_sync(n, "timed")) < 0)
		return rc;
	for (unsigned i = 0; i < N; i++) {
		float ms = 0;
		cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
		it[i] = 1e-3 * ms;
	}
	rc = eg_boot_allgather(b, mine, (N + 1) * sizeof(double), all,
			       o->timeout_s);
	if (rc < 0)
		return rc;
	/* mean: averaged over ranks (nccl-tests); median: of the slowest
	 * rank per iteration */
	row->mean_s = 0;
	for (uint32_t r = 0; r < w->size; r++)
		row->mean_s += all[(size_t)r * (N + 1)] / w->size;
	for (unsigned i = 0; i < N; i++) {
		double mx = 0;
		for (uint32_t r = 0; r < w->size; r++)
			if (all[(size_t)r * (N + 1) + 1 + i] > mx)
				mx = all[(size_t)r * (N + 1) + 1 + i];
		it[i] = mx;
	}
	qsort(it, N, sizeof(double), eg__bn_cmpd);
	row->med_s = N % 2 ? it[N / 2] : 0.5 * (it[N / 2 - 1] + it[N / 2]);
	return EG_OK;
}

static json_t *eg__bn_json(const eg__bn_t *o, const eg_world_t *w, eg_nccl_t *n,
			   const char *via, const char *why, int path_rc,
			   const eg__bn_row_t *rows, size_t nrows,
			   int a2a_native)
{
	json_t *arr = json_array();
	double f = w->size > 1 ? (double)(w->size - 1) / w->size : 0;

	for (size_t i = 0; i < nrows; i++) {
		const eg__bn_row_t *r = &rows[i];
		double alg = r->bytes / r->mean_s / 1e9;
		double algm = r->bytes / r->med_s / 1e9;
		json_array_append_new(
		    arr,
		    json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
			      "s:I}",
			      "bytes", (json_int_t)r->bytes, "count",
			      (json_int_t)r->count, "time_us_mean",
			      r->mean_s * 1e6, "algbw_gbps", alg, "busbw_gbps",
			      alg * f, "time_us_median", r->med_s * 1e6,
			      "algbw_gbps_median", algm, "busbw_gbps_median",
			      algm * f, "wrong", (json_int_t)r->wrong));
	}
	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, "
			 "s:s, s:s, s:i, s:i, s:o}",
			 "schema", "epgate/bench-nccl-raw/v1", "collective",
			 eg__coll_name[o->coll], "world", (int)w->size, "nodes",
			 (int)w->nodes, "device", eg_nccl_device(n), "nccl",
			 eg_nccl_version(n), "impl",
			 o->coll != EG__A2A ? "nccl"
			 : a2a_native	    ? "ncclAlltoAll"
					    : "ncclSend/ncclRecv",
			 "datatype", o->bf16 ? "bf16" : "float", "transport",
			 via, "asked", eg_nccl_path_name(o->path), "path_check",
			 path_rc == EG_OK ? "pass" : why, "time",
			 "mean: wall time of iters back-to-back collectives / "
			 "iters, averaged over ranks; median: a second pass of "
			 "iters with events, slowest rank per iteration",
			 "iters", (int)o->iters, "warmup", (int)o->warmup,
			 "rows", arr);
}

static int eg__bn_run(const eg__bn_t *o)
{
	eg_nccl_opts_t no = {.size = sizeof(no),
			     .num_comms = 1,
			     .timeout_s = o->timeout_s,
			     .device = o->device,
			     .path = o->path,
			     .xnode_mode = o->xnode,
			     .blocking = 1}; /* as nccl-tests */
	eg_world_t w;
	eg_boot_t *b = NULL;
	eg_nccl_t *n = NULL;
	eg__a2a_fn a2a = NULL;
	void *sb = NULL, *rb = NULL;
	cudaEvent_t *ev = NULL;
	double *mine = NULL, *all = NULL;
	eg__bn_row_t rows[64];
	size_t nrows = 0, esz = o->bf16 ? 2 : 4;
	char err[512], via[96] = "none", why[256] = "";
	int rc, ex = EG_EXIT_FAIL, path_rc = EG_OK, ver = 0;

	if (eg_world_from_env(&w, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	if (eg_boot_open(&b, &w, o->timeout_s) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n", w.rank,
			b ? eg_boot_error(b) : "failed");
		if (b)
			eg_boot_close(b);
		return EG_EXIT_HARD;
	}
	rc = eg_nccl_open(&n, &w, b, &no, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: NCCL: %s\n", w.rank, err);
		eg_boot_close(b);
		return rc == EG_ENOSYS ? EG_EXIT_SKIP : EG_EXIT_FAIL;
	}
	ncclGetVersion(&ver);
	if (o->coll == EG__A2A && !o->sendrecv && ver >= 22800) {
		void *sym = dlsym(RTLD_DEFAULT, "ncclAlltoAll");
		memcpy(&a2a, &sym, sizeof(a2a));
	}
	ev = calloc(o->iters + 1, sizeof(*ev));
	mine = calloc(o->iters + 1, sizeof(double));
	all = calloc((size_t)(o->iters + 1) * w.size, sizeof(double));
	if (!ev || !mine || !all ||
	    cudaMalloc(&sb, o->maxb + 256) != cudaSuccess ||
	    cudaMalloc(&rb, o->maxb + 256) != cudaSuccess) {
		fprintf(stderr, EG__PROG ": rank %u: out of memory\n", w.rank);
		goto out;
	}
	for (unsigned i = 0; i <= o->iters; i++)
		cudaEventCreate(&ev[i]);
	/* rank r's send buffer holds r+1 everywhere */
	if (eg__bn_fill(o, &w, sb, o->maxb) < 0)
		goto out;
	if (w.rank == 0) {
		printf("# epgate bench --raw %s over %s: %u ranks, %u node(s), "
		       "out of place, %s, %s\n",
		       eg__coll_name[o->coll], eg_nccl_version(n), w.size,
		       w.nodes, o->bf16 ? "bf16" : "float",
		       o->coll != EG__A2A ? "nccl"
		       : a2a		  ? "ncclAlltoAll"
					  : "ncclSend/ncclRecv");
		printf("# %12s %12s %6s %10s %8s %8s %6s %10s %8s %8s\n",
		       "size", "count", "type", "time", "algbw", "busbw",
		       "#wrong", "time(med)", "algbw", "busbw");
		printf("# %12s %12s %6s %10s %8s %8s %6s %10s %8s %8s\n", "(B)",
		       "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
		       "(GB/s)", "(GB/s)");
	}
	double bwsum = 0, f = w.size > 1 ? (double)(w.size - 1) / w.size : 0;
	for (size_t S = o->minb; S <= o->maxb && nrows < 64;) {
		/* nccl-tests: the per-rank chunk in elements, 16-byte
		 * multiples */
		size_t chunk = (S / w.size / esz) & ~(16 / esz - 1);
		eg__bn_row_t *r = &rows[nrows];

		if (chunk) {
			r->count = chunk;
			r->bytes = chunk * esz * w.size;
			rc = eg__bn_size(o, n, b, a2a, sb, rb, chunk, ev, mine,
					 all, r);
			if (rc < 0) {
				fprintf(stderr, EG__PROG ": rank %u: %s\n",
					w.rank,
					eg_nccl_error(n)[0] ? eg_nccl_error(n)
							    : eg_strerror(rc));
				goto out;
			}
			if (w.rank == 0) {
				double alg = r->bytes / r->mean_s / 1e9;
				double algm = r->bytes / r->med_s / 1e9;
				printf("  %12zu %12zu %6s %10.2f %8.2f %8.2f "
				       "%6llu %10.2f %8.2f %8.2f\n",
				       r->bytes, r->count,
				       o->bf16 ? "bf16" : "float",
				       r->mean_s * 1e6, alg, alg * f,
				       (unsigned long long)r->wrong,
				       r->med_s * 1e6, algm, algm * f);
				fflush(stdout);
			}
			bwsum += r->bytes / r->mean_s / 1e9 * f;
			nrows++;
		}
		size_t next = (size_t)((double)S * o->factor);
		S = next > S ? next : S + 1;
	}
	/* which path NCCL took, every rank from its own log */
	eg_nccl_evidence_t e;
	int32_t prc, *prcs = calloc(w.size, sizeof(*prcs));
	prc = eg_nccl_evidence(n, &e);
	if (prc == EG_OK)
		prc = eg_nccl_evidence_check(&e, o->path, &w, why, sizeof(why));
	if (w.size == 1 && prc == EG_ENOENT)
		prc = EG_OK;
	eg_nccl_evidence_summary(&e, via, sizeof(via));
	if (!prcs ||
	    eg_boot_allgather(b, &prc, sizeof(prc), prcs, o->timeout_s) < 0)
		goto out_free;
	for (uint32_t r = 0; r < w.size; r++)
		if (prcs[r] != EG_OK)
			path_rc = prcs[r];
	uint64_t wrong = 0;
	for (size_t i = 0; i < nrows; i++)
		wrong += rows[i].wrong;
	if (w.rank == 0) {
		printf("# Out of bounds values : %llu %s\n",
		       (unsigned long long)wrong, wrong ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g\n",
		       nrows ? bwsum / nrows : 0.0);
		printf("# transport: %s (asked %s)%s%s\n", via,
		       eg_nccl_path_name(o->path), path_rc ? ": " : "",
		       path_rc ? (why[0] ? why : "another rank differs") : "");
		if (o->json) {
			json_t *j = eg__bn_json(o, &w, n, via, why, path_rc,
						rows, nrows, a2a != NULL);
			if (!j ||
			    json_dump_file(j, o->json, JSON_INDENT(2)) < 0)
				fprintf(stderr, EG__PROG ": cannot write %s\n",
					o->json);
			json_decref(j);
		}
	}
	ex = wrong || path_rc != EG_OK ? EG_EXIT_FAIL : EG_EXIT_PASS;
out_free:
	free(prcs);
out:
	if (ex != EG_EXIT_FAIL || !eg_nccl_broken(n))
		eg_boot_barrier(b, o->timeout_s);
	for (unsigned i = 0; ev && i <= o->iters; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	cudaFree(sb);
	cudaFree(rb);
	eg_nccl_close(n);
	eg_boot_close(b);
	free(ev);
	free(mine);
	free(all);
	return ex;
}

/* ---- the engines beside NCCL's alltoall ---- */

#include "epgate/bench_driver.h"
#include "epgate/cuda_ep.h"

typedef struct eg__be_msg {
	double td[EG__BE_MAX], tc[EG__BE_MAX];
	double phase[EG_NCCL_PHASES_MAX];
	uint64_t wire_to_others, payload_to_others, rows_to_others;
	uint64_t ops[EG_COMMS_MAX];
	char evidence[128];
} eg__be_msg_t;

static double eg__be_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(double), eg__bn_cmpd);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Bytes this rank's dispatch sends to other ranks: wire (payload and
 * metadata, what NCCL moves) and payload alone. */
static int eg__be_bytes(const eg_workload_t *w, const char *arm, uint32_t me,
			eg__be_msg_t *m)
{
	eg_gen_t g;
	uint32_t T = eg_workload_tokens(w, me), W = w->world;
	int32_t *idx = malloc(((size_t)T + 1) * w->topk * 4);
	float *wt = malloc(((size_t)T + 1) * w->topk * 4);
	uint64_t *rows = calloc(W, sizeof(uint64_t));
	size_t sb[5], wire = 0;
	int rc = EG_ENOMEM;

	if (!idx || !wt || !rows || (rc = eg_gen_init(&g, w)) < 0)
		goto out;
	eg_gen_routing_host(&g, me, T, idx, wt);
	eg_gen_fini(&g);
	rc = eg_perf_count_rows(w, arm, T, idx, rows);
	if (rc < 0)
		goto out;
	eg_ep_section_bytes(w, sb);
	for (int i = 0; i < 5; i++)
		wire += sb[i];
	if (!strcmp(arm, "dense")) /* gathered rows carry no src_token */
		wire -= sb[2];
	for (uint32_t d = 0; d < W; d++)
		if (d != me) {
			m->rows_to_others += rows[d];
			m->wire_to_others += rows[d] * wire;
			m->payload_to_others +=
			    rows[d] * eg_perf_dispatch_row_bytes(w);
		}
out:
	free(idx);
	free(wt);
	free(rows);
	return rc;
}

static int eg__bn_engine(const eg__bn_t *o, const char *arm,
			 const eg_overrides_t *ov)
{
	const eg_bench_backend_ops_t *be = &eg_bench_backend_nccl;
	eg_bench_setup_t bs = {.size = sizeof(bs),
			       .engine = arm,
			       .transport = "nccl",
			       .num_comms = o->comms,
			       .timeout_s = o->timeout_s,
			       .device = o->device};
	eg_world_t wd;
	eg_boot_t *b = NULL;
	eg_workload_t w;
	eg__be_msg_t m, *all = NULL;
	eg_bench_counters_t cnt;
	void *st = NULL;
	char err[512], v[32];
	int rc, ex = EG_EXIT_FAIL;
	unsigned N = o->iters;

	if (N > EG__BE_MAX) {
		fprintf(stderr, EG__PROG ": at most %d iterations\n",
			EG__BE_MAX);
		return EG_EXIT_HARD;
	}
	if (eg_world_from_env(&wd, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	eg_workload_init(&w);
	snprintf(v, sizeof(v), "%u", wd.size);
	if (eg_workload_set(&w, "world", v, err) < 0 ||
	    eg_workload_set(&w, "name", "bench", err) < 0 ||
	    eg_overrides_apply(ov, &w, EG__PROG) < 0) {
		eg_workload_fini(&w);
		return EG_EXIT_HARD;
	}
	if (w.world != wd.size) {
		fprintf(stderr, EG__PROG ": --world must be the job's %u\n",
			wd.size);
		eg_workload_fini(&w);
		return EG_EXIT_HARD;
	}
	setenv("EPGATE_NCCL_PHASES", "1", 0);
	/* like the raw collectives: blocking communicators, unless asked */
	setenv("EPGATE_NCCL_BLOCKING", "1", 0);
	if (eg_nccl_path_name(o->path)[0] != 'a')
		setenv("EPGATE_NCCL_PATH", eg_nccl_path_name(o->path), 1);
	if (o->xnode)
		setenv("EPGATE_NCCL_XNODE", o->xnode, 1);
	if (eg_boot_open(&b, &wd, o->timeout_s) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n", wd.rank,
			b ? eg_boot_error(b) : "failed");
		if (b)
			eg_boot_close(b);
		eg_workload_fini(&w);
		return EG_EXIT_HARD;
	}
	memset(&m, 0, sizeof(m));
	all = calloc(wd.size, sizeof(*all));
	rc = be->setup(&wd, b, &bs, &w, &st, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: %s\n", wd.rank, err);
		ex = rc == EG_ENOSYS ? EG_EXIT_SKIP : EG_EXIT_FAIL;
		st = NULL;
		goto out;
	}
	rc = be->verify(st, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: verify: %s\n", wd.rank,
			err);
		goto out;
	}
	for (unsigned i = 0; i < o->warmup; i++) {
		eg_bench_times_t t;
		if ((rc = be->step(st, &t)) < 0)
			goto step_fail;
	}
	be->counters_reset(st);
	for (unsigned i = 0; i < N; i++) {
		eg_bench_times_t t;
		if ((rc = eg_boot_barrier(b, o->timeout_s)) < 0 ||
		    (rc = be->step(st, &t)) < 0)
			goto step_fail;
		m.td[i] = t.dispatch_s;
		m.tc[i] = t.combine_s;
	}
	be->counters(st, &cnt);
	memcpy(m.ops, cnt.ops_posted, sizeof(m.ops));
	snprintf(m.evidence, sizeof(m.evidence), "%s", cnt.transport_evidence);
	if (!strcmp(arm, "a2a"))
		eg_nccl_a2a_phases(m.phase);
	if ((rc = eg__be_bytes(&w, arm, wd.rank, &m)) < 0)
		goto out;
	if (!all || eg_boot_allgather(b, &m, sizeof(m), all, o->timeout_s) < 0)
		goto out;
	if (wd.rank == 0) {
		double td[EG__BE_MAX], tc[EG__BE_MAX];
		uint64_t wire = 0, pay = 0;
		char sum[256];

		for (unsigned i = 0; i < N; i++) {
			td[i] = tc[i] = 0;
			for (uint32_t r = 0; r < wd.size; r++) {
				if (all[r].td[i] > td[i])
					td[i] = all[r].td[i];
				if (all[r].tc[i] > tc[i])
					tc[i] = all[r].tc[i];
			}
		}
		for (uint32_t r = 0; r < wd.size; r++) {
			if (all[r].wire_to_others > wire)
				wire = all[r].wire_to_others;
			if (all[r].payload_to_others > pay)
				pay = all[r].payload_to_others;
		}
		double tdm = eg__be_median(td, N), tcm = eg__be_median(tc, N);
		eg_workload_summary(&w, sum, sizeof(sum));
		printf("# epgate bench nccl-%s: %s, %u comm(s), %s\n", arm, sum,
		       o->comms, m.evidence);
		printf("# dispatch: median %.1f us (slowest rank per step), "
		       "%.2f GB/s wire (%llu B to other ranks, busiest rank), "
		       "%.2f GB/s payload\n",
		       tdm * 1e6, wire / tdm / 1e9, (unsigned long long)wire,
		       pay / tdm / 1e9);
		printf("# combine: median %.1f us\n", tcm * 1e6);
		if (!strcmp(arm, "a2a"))
			printf("# rank 0 dispatch phases (ms): layout %.3f, "
			       "counts %.3f, host %.3f, pack+exchange %.3f, "
			       "finish %.3f; combine: exchange %.3f, kernel "
			       "%.3f\n",
			       m.phase[0], m.phase[1], m.phase[2], m.phase[3],
			       m.phase[4], m.phase[7], m.phase[8]);
		printf(
		    "ENGINE arm=%s comms=%u dispatch_us=%.2f combine_us=%.2f "
		    "wire_bytes=%llu payload_bytes=%llu wire_gbps=%.3f "
		    "payload_gbps=%.3f ops_comm0=%llu\n",
		    arm, o->comms, tdm * 1e6, tcm * 1e6,
		    (unsigned long long)wire, (unsigned long long)pay,
		    wire / tdm / 1e9, pay / tdm / 1e9,
		    (unsigned long long)(m.ops[0] / (N ? N : 1)));
		fflush(stdout);
	}
	ex = EG_EXIT_PASS;
	goto out;
step_fail:
	fprintf(stderr, EG__PROG ": rank %u: step: %s\n", wd.rank,
		eg_strerror(rc));
out:
	if (st)
		be->teardown(st);
	eg_boot_close(b);
	eg_workload_fini(&w);
	free(all);
	return ex;
}
#endif

int eg_bench_nccl_raw(const char *coll, int argc, char **argv)
{
	struct option opts[48] = {
	    {"raw", required_argument, NULL, 'R'},
	    {"transport", required_argument, NULL, 'T'},
	    {"min-bytes", required_argument, NULL, 'b'},
	    {"max-bytes", required_argument, NULL, 'e'},
	    {"step-factor", required_argument, NULL, 'f'},
	    {"iters", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"datatype", required_argument, NULL, 'd'},
	    {"impl", required_argument, NULL, 'I'},
	    {"path", required_argument, NULL, 'P'},
	    {"xnode-mode", required_argument, NULL, 'x'},
	    {"device", required_argument, NULL, 'D'},
	    {"timeout", required_argument, NULL, 't'},
	    {"json", required_argument, NULL, 'j'},
	    {"num-comms", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},
	};
	size_t minb = 8, maxb = (size_t)1 << 30;
	double factor = 2, timeout = 60;
	unsigned iters = 20, warmup = 5, comms = 1;
	int bf16 = 0, sendrecv = 0, device = -1, c, which;
	const char *json = NULL, *xnode = NULL, *path = "auto";
	eg_overrides_t ov = {0};
	char err[256];

	if (!coll)
		coll = "";
	which = !strcmp(coll, "alltoall")	 ? 0
		: !strcmp(coll, "allgather")	 ? 1
		: !strcmp(coll, "reducescatter") ? 2
		: !strcmp(coll, "a2a")		 ? 3
		: !strcmp(coll, "dense")	 ? 4
						 : -1;
	if (which < 0) {
		fprintf(stderr,
			EG__PROG ": \"%s\": want alltoall, allgather, "
				 "reducescatter, or an engine (a2a, dense)\n",
			coll);
		return EG_EXIT_HARD;
	}
	if (eg_cli_add_workload_options(opts, 48) < 0)
		return EG_EXIT_HARD;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hb:e:f:n:w:d:", opts, NULL)) !=
	       -1) {
		unsigned v;

		if (c >= EG_OPT_WORKLOAD) {
			if (eg_overrides_add(&ov, EG__PROG, c, optarg) < 0)
				return EG_EXIT_HARD;
			continue;
		}
		switch (c) {
		case 'R':
		case 'T':
			break; /* read by `epgate bench` */
		case 'k':
			if (eg_parse_uint("--num-comms", optarg, 1,
					  EG_COMMS_MAX, &comms, err,
					  sizeof(err)) < 0)
				return eg__bn_bad(err);
			break;
		case 'b':
		case 'e':
			if (eg__bn_bytes(optarg, c == 'b' ? &minb : &maxb)) {
				fprintf(stderr,
					EG__PROG ": -%c %s: want bytes "
						 "(K/M/G)\n",
					c, optarg);
				return EG_EXIT_HARD;
			}
			break;
		case 'f':
			if (eg_parse_double("--step-factor", optarg, 1, 1024,
					    EG_NUM_LO_OPEN, &factor, err,
					    sizeof(err)) < 0)
				return eg__bn_bad(err);
			break;
		case 'n':
		case 'w':
		case 'D':
		case 't':
			if (eg_parse_uint(eg__bn_opt(c), optarg,
					  c != 'w' && c != 'D', 100000, &v, err,
					  sizeof(err)) < 0)
				return eg__bn_bad(err);
			if (c == 'n')
				iters = (unsigned)v;
			else if (c == 'w')
				warmup = (unsigned)v;
			else if (c == 'D')
				device = (int)v;
			else
				timeout = (double)v;
			break;
		case 'd':
			if (strcmp(optarg, "float") && strcmp(optarg, "bf16")) {
				fprintf(stderr, EG__PROG ": -d: want float or "
							 "bf16\n");
				return EG_EXIT_HARD;
			}
			bf16 = !strcmp(optarg, "bf16");
			break;
		case 'I':
			if (strcmp(optarg, "nccl") &&
			    strcmp(optarg, "sendrecv")) {
				fprintf(stderr, EG__PROG ": --impl: want nccl "
							 "or sendrecv\n");
				return EG_EXIT_HARD;
			}
			sendrecv = !strcmp(optarg, "sendrecv");
			break;
		case 'P':
			path = optarg;
			break;
		case 'x':
			xnode = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'h':
			eg__bn_usage(stdout);
			return EG_EXIT_PASS;
		default:
			fprintf(stderr,
				EG__PROG ": unknown or incomplete "
					 "option \"%s\"\n",
				argv[optind - 1]);
			eg__bn_usage(stderr);
			return EG_EXIT_HARD;
		}
	}
	if (minb > maxb) {
		fprintf(stderr, EG__PROG ": -b is above -e\n");
		return EG_EXIT_HARD;
	}
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
	eg__bn_t o = {.coll = which < 3 ? which : 0,
		      .comms = comms,
		      .bf16 = bf16,
		      .sendrecv = sendrecv,
		      .minb = minb,
		      .maxb = maxb,
		      .factor = factor,
		      .timeout_s = timeout,
		      .iters = iters,
		      .warmup = warmup,
		      .device = device,
		      .json = json,
		      .xnode = xnode};
	if (eg_nccl_path_parse(path, &o.path) < 0) {
		fprintf(stderr, EG__PROG ": --path: want auto, nvlink or "
					 "xnode\n");
		return EG_EXIT_HARD;
	}
	if (which >= 3)
		return eg__bn_engine(&o, which == 3 ? "a2a" : "dense", &ov);
	if (ov.n) {
		fprintf(stderr, EG__PROG ": workload options need an engine "
					 "(a2a, dense)\n");
		return EG_EXIT_HARD;
	}
	return eg__bn_run(&o);
#else
	(void)factor, (void)timeout, (void)iters, (void)warmup, (void)bf16;
	(void)sendrecv, (void)device, (void)json, (void)xnode, (void)path;
	(void)comms;
	fputs(EG__PROG ": built without CUDA and NCCL\n", stderr);
	return EG_EXIT_SKIP;
#endif
}
