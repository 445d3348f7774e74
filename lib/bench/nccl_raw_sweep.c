/* `epgate bench raw COLL --transport nccl`: the sweep of sizes through
 * lib/bench/nccl_raw.c; rank 0 prints a table like nccl-tests' and
 * writes JSON (epgate/bench-nccl-raw/v1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "epgate/error.h"
#include "epgate/nccl_raw.h"

#define EG__PROG     "epgate bench raw"
#define EG__ROWS_MAX 64

typedef struct eg__sweep {
	const eg_nccl_raw_opts_t *o;
	eg_world_t w;
	eg_nccl_raw_t *r;
	eg_nccl_raw_row_t rows[EG__ROWS_MAX];
	size_t nrows;
	char via[96], why[256];
	int path_rc;
} eg__sweep_t;

static void eg__header(const eg__sweep_t *s)
{
	const char *dt = s->o->bf16 ? "bf16" : "float";

	printf("# epgate bench raw %s over %s: %u ranks, %u node(s), out of "
	       "place, %s, %s\n",
	       s->o->coll, eg_nccl_raw_version(s->r), s->w.size, s->w.nodes, dt,
	       eg_nccl_raw_impl(s->r));
	printf("# %12s %12s %6s %10s %8s %8s %6s %10s %8s %8s\n", "size",
	       "count", "type", "time", "algbw", "busbw", "#wrong", "time(med)",
	       "algbw", "busbw");
	printf("# %12s %12s %6s %10s %8s %8s %6s %10s %8s %8s\n", "(B)",
	       "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
	       "(GB/s)", "(GB/s)");
}

static void eg__row(const eg__sweep_t *s, const eg_nccl_raw_row_t *r)
{
	printf("  %12zu %12zu %6s %10.2f %8.2f %8.2f %6llu %10.2f %8.2f "
	       "%8.2f\n",
	       r->bytes, r->count, s->o->bf16 ? "bf16" : "float",
	       r->mean_s * 1e6, r->algbw, r->busbw,
	       (unsigned long long)r->wrong, r->med_s * 1e6, r->algbw_med,
	       r->busbw_med);
	fflush(stdout);
}

static json_t *eg__json(const eg__sweep_t *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < s->nrows; i++) {
		const eg_nccl_raw_row_t *r = &s->rows[i];

		json_array_append_new(
		    arr,
		    json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
			      "s:I}",
			      "bytes", (json_int_t)r->bytes, "count",
			      (json_int_t)r->count, "time_us_mean",
			      r->mean_s * 1e6, "algbw_gbps", r->algbw,
			      "busbw_gbps", r->busbw, "time_us_median",
			      r->med_s * 1e6, "algbw_gbps_median", r->algbw_med,
			      "busbw_gbps_median", r->busbw_med, "wrong",
			      (json_int_t)r->wrong));
	}
	return json_pack(
	    "{s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, "
	    "s:i, s:i, s:o}",
	    "schema", "epgate/bench-nccl-raw/v1", "collective", s->o->coll,
	    "world", (int)s->w.size, "nodes", (int)s->w.nodes, "device",
	    eg_nccl_raw_device(s->r), "nccl", eg_nccl_raw_version(s->r), "impl",
	    eg_nccl_raw_impl(s->r), "datatype", s->o->bf16 ? "bf16" : "float",
	    "transport", s->via, "asked",
	    s->o->xport.path ? s->o->xport.path : "auto", "path_check",
	    s->path_rc == EG_OK ? "pass" : s->why, "time",
	    "mean: wall time of iters back-to-back collectives / iters, "
	    "averaged over ranks; median: a second pass of iters with events, "
	    "slowest rank per iteration",
	    "iters", (int)s->o->job.iters, "warmup", (int)s->o->job.warmup,
	    "rows", arr);
}

/* Every size from min to max; rank 0 prints each row as it comes. */
static int eg__sizes(eg__sweep_t *s, double *bwsum)
{
	const eg_nccl_raw_opts_t *o = s->o;
	char err[512];

	for (size_t S = o->min_bytes;
	     S <= o->max_bytes && s->nrows < EG__ROWS_MAX;) {
		eg_nccl_raw_row_t *r = &s->rows[s->nrows];
		int rc = eg_nccl_raw_size(s->r, S, r, err, sizeof(err));
		size_t next = (size_t)((double)S * o->factor);

		if (rc < 0 && rc != EG_ERANGE) {
			fprintf(stderr, EG__PROG ": rank %u: %s\n", s->w.rank,
				err);
			return rc;
		}
		if (rc == EG_OK) {
			if (s->w.rank == 0)
				eg__row(s, r);
			*bwsum += r->busbw;
			s->nrows++;
		}
		S = next > S ? next : S + 1;
	}
	return EG_OK;
}

/* Rank 0's footer and JSON; the exit code. */
static int eg__footer(eg__sweep_t *s, double bwsum)
{
	uint64_t wrong = 0;

	for (size_t i = 0; i < s->nrows; i++)
		wrong += s->rows[i].wrong;
	if (s->w.rank == 0) {
		printf("# Out of bounds values : %llu %s\n",
		       (unsigned long long)wrong, wrong ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g\n",
		       s->nrows ? bwsum / s->nrows : 0.0);
		printf("# transport: %s (asked %s)%s%s\n", s->via,
		       s->o->xport.path ? s->o->xport.path : "auto",
		       s->path_rc ? ": " : "", s->path_rc ? s->why : "");
	}
	if (s->w.rank == 0 && s->o->json) {
		json_t *j = eg__json(s);

		if (!j || json_dump_file(j, s->o->json, JSON_INDENT(2)) < 0)
			fprintf(stderr, EG__PROG ": cannot write %s\n",
				s->o->json);
		json_decref(j);
	}
	return wrong || s->path_rc != EG_OK ? EG_EXIT_FAIL : EG_EXIT_PASS;
}

int eg_nccl_raw_sweep(const eg_nccl_raw_opts_t *o)
{
	eg__sweep_t *s = calloc(1, sizeof(*s));
	eg_boot_t *b = NULL;
	char err[512];
	double bwsum = 0;
	int rc, ex = EG_EXIT_FAIL;

	if (!s)
		return EG_EXIT_HARD;
	s->o = o;
	ex = EG_EXIT_HARD;
	if (eg_world_from_env(&s->w, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		goto out;
	}
	if ((rc = eg_boot_open(&b, &s->w, o->job.timeout_s)) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n",
			s->w.rank, b ? eg_boot_error(b) : eg_strerror(rc));
		goto out;
	}
	ex = EG_EXIT_FAIL;
	rc = eg_nccl_raw_open(&s->r, &s->w, b, o, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: NCCL: %s\n", s->w.rank,
			err);
		ex = rc == EG_ENOSYS ? EG_EXIT_SKIP : EG_EXIT_FAIL;
		goto out;
	}
	if (s->w.rank == 0)
		eg__header(s);
	if (eg__sizes(s, &bwsum) < 0)
		goto out;
	/* which path NCCL took, every rank from its own log */
	s->path_rc = eg_nccl_raw_path(s->r, s->via, sizeof(s->via), s->why,
				      sizeof(s->why));
	if (s->path_rc == EG_EIO)
		goto out;
	ex = eg__footer(s, bwsum);
out:
	eg_nccl_raw_close(s->r);
	eg_boot_close(b);
	free(s);
	return ex;
}
