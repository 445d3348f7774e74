/* epgate bench: measurements.
 *  --profile NAME: a profile's sweeps (suites/epgate/perf.c), results v1
 *                  into a run folder, then the profile's gates;
 *  --engine NAME:  one engine on one workload (bench_engine.c);
 *  --overhead:     the harness's own timing overhead (perf_rank.c);
 *  --raw:          the transport alone, described below.
 *
 * epgate bench --raw: the fabric transport alone, one process per rank
 * under `epgate launch`. Two phases, each on a fresh transport:
 *  - message rate: every rank sends M messages of B bytes to every other
 *    rank per alltoallv call (the transport is told to chunk at B bytes,
 *    so each message is one tagged send, all of a call in flight at once);
 *  - bandwidth: --size bytes to every other rank per call, chunked as the
 *    transport does by default.
 * Each timed call starts after a bootstrap barrier; its time is the
 * slowest rank's. Rates are per rank: messages (bytes) sent to other
 * ranks per second of call time. Median and p10/p90 over the calls. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/suite/suite.h"
#include "cmd_bench.h"
#include "lib/suite/cmd_gpu.h"
#include "epgate/bench_driver.h"
#include "epgate/boot.h"
#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/report.h"
#include "epgate/transport.h"
#include "epgate/world.h"
#include "lib/suite/perf.h"

#define EG__PROG "epgate bench"

typedef struct eg__bopts {
	const char *provider, *json;
	unsigned K, iters, warmup, msgs;
	size_t size, msg_size;
	double timeout_s;
} eg__bopts_t;

static void eg__bench_usage(FILE *f)
{
	fputs(
	    "usage: epgate bench --profile NAME|FILE [--results FILE]\n"
	    "                    [--reports DIR] [--no-gates] [--list] [-v]\n"
	    "       epgate bench --overhead [--op-us US] [--iters N]\n"
	    "       epgate launch -n N [--ranks-per-node M] -- \\\n"
	    "         epgate bench --raw | --engine NAME [options]\n"
	    "\n"
	    "--profile runs the sweeps of a profile (profiles/NAME.profile,\n"
	    "docs/profiles.md): one `epgate launch` job per sweep, world and\n"
	    "node count, every point verified and then timed; the results\n"
	    "(schema epgate/results/v1) go into a new run folder under\n"
	    "--reports with one log per job, then the profile's gate file\n"
	    "judges them (perf-gates.tap, perf-gates.junit.xml).\n"
	    "\n"
	    "  --profile P        a profile name or file (local, "
	    "h200x2-nvlink,\n"
	    "                     h200x2-xnode, p5en-ep16, p5en-ep32)\n"
	    "  --results FILE     results file (default RUN/perf-P.json)\n"
	    "  --reports DIR      where run folders go (reports/runs)\n"
	    "  --no-gates         do not apply the profile's gate file\n"
	    "  --list             print the points and jobs, run nothing\n"
	    "  -v, --verbose      show every job's output\n"
	    "  --overhead         the harness's timing overhead: a calibrated\n"
	    "                     --op-us (100) busy loop bare and through\n"
	    "                     the driver, and an empty step; exit 1 when\n"
	    "                     the harness adds 2% or more\n"
	    "\n"
	    "--raw measures the libfabric transport alone: message rate\n"
	    "(many small tagged messages in flight) and bandwidth through\n"
	    "its alltoallv, per rank and per endpoint. Rank 0 prints a table.\n"
	    "\n"
	    "  --raw              the transport alone\n"
	    "  --engine NAME      or an engine (a2a, dense): dispatch and\n"
	    "                     combine of one workload (--tokens,\n"
	    "                     --hidden, --experts, --topk, --dtype,\n"
	    "                     --routing ...; world = ranks launched)\n"
	    "  --provider P       shm, tcp, efa, ... (default: auto, shm\n"
	    "                     within a node, tcp/efa across nodes)\n"
	    "  --num-comms K      endpoints with a progress thread each "
	    "(1)\n"
	    "  --size BYTES       bandwidth: bytes per peer per call, K/M/G\n"
	    "                     suffixes are binary (default 1M)\n"
	    "  --msg-size BYTES   message rate: bytes per message (8)\n"
	    "  --msgs N           message rate: messages per peer per call\n"
	    "                     (512)\n"
	    "  --iters N          timed calls per phase (20)\n"
	    "  --warmup N         untimed calls first (3)\n"
	    "  --timeout S        deadline per call in seconds (60)\n"
	    "  --json FILE        rank 0 also writes the results as JSON\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Exit status: 0 measured, 1 transport error, 77 built without\n"
	    "libfabric, 99 bad arguments.\n",
	    f);
}

static int eg__bad_arg(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, EG__PROG ": %s=%s: %s\n", opt, val, why);
	return EG_EXIT_HARD;
}

/* Numbers through the base parser (lib/base/num.c); the messages are
 * eg__bad_arg's. */
static int eg__uint(const char *s, unsigned long long lo, unsigned long long hi,
		    unsigned long long *out)
{
	uint64_t v;

	if (!s || eg_parse_u64(NULL, s, lo, hi, 0, &v, NULL, 0) < 0)
		return -1;
	*out = v;
	return 0;
}

/* "4096", "64K", "1M", "2G" (binary multiples), up to 16G. */
static int eg__bytes(const char *s, size_t *out)
{
	uint64_t v;

	if (!s ||
	    eg_parse_bytes(NULL, s, 1, (uint64_t)1 << 34, 0, &v, NULL, 0) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

#ifdef HAVE_LIBFABRIC
static int eg__cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

typedef struct eg__dist {
	double med, p10, p90;
} eg__dist_t;

/* Percentiles of v (sorted in place), linear between ranks. */
static eg__dist_t eg__dist(double *v, unsigned n)
{
	eg__dist_t d;
	double q[3] = {0.5, 0.1, 0.9}, r[3];

	qsort(v, n, sizeof(*v), eg__cmp_d);
	for (int i = 0; i < 3; i++) {
		double pos = q[i] * (n - 1);
		unsigned lo = (unsigned)pos;
		unsigned hi = lo + 1 < n ? lo + 1 : lo;

		r[i] = v[lo] + (v[hi] - v[lo]) * (pos - lo);
	}
	d.med = r[0];
	d.p10 = r[1];
	d.p90 = r[2];
	return d;
}

typedef struct eg__phase {
	double *t;		    /* slowest rank's time per timed call */
	uint64_t ops[EG_COMMS_MAX]; /* rank 0's posts during timed calls */
	double busy[EG_COMMS_MAX];  /* rank 0's thread time, timed calls */
	eg_xport_stats_t stats;	    /* after the phase */
} eg__phase_t;

/* One phase on a fresh transport (lib/bench/raw.c): bytes to every other
 * rank per call, messages of at most chunk bytes (0: the default). */
static int eg__phase(const eg_world_t *w, eg_boot_t *b, const eg__bopts_t *o,
		     size_t bytes, size_t chunk, eg__phase_t *ph)
{
	eg_raw_phase_t r = {.t = ph->t};
	char err[512];
	int rc = eg_raw_phase(w, b, o->provider, o->K, o->timeout_s, o->warmup,
			      o->iters, bytes, chunk, &r, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: %s\n", w->rank, err);
		return rc;
	}
	ph->stats = r.s1;
	for (unsigned k = 0; k < o->K; k++) {
		ph->ops[k] = r.s1.ops_posted[k] - r.s0.ops_posted[k];
		ph->busy[k] = r.s1.busy_s[k] - r.s0.busy_s[k];
	}
	return EG_OK;
}

static json_t *eg__jdist(eg__dist_t d)
{
	return json_pack("{s:f, s:f, s:f}", "median", d.med, "p10", d.p10,
			 "p90", d.p90);
}

/* Rates of each call: amount / time, then their percentiles. */
static eg__dist_t eg__rate(const double *t, unsigned n, double amount,
			   double *tmp)
{
	for (unsigned i = 0; i < n; i++)
		tmp[i] = amount / t[i];
	return eg__dist(tmp, n);
}

static eg__dist_t eg__us(const double *t, unsigned n, double *tmp)
{
	for (unsigned i = 0; i < n; i++)
		tmp[i] = t[i] * 1e6;
	return eg__dist(tmp, n);
}

static void eg__row(const char *name, eg__dist_t d, double scale)
{
	printf("  %-22s %14.1f %14.1f %14.1f\n", name, d.med * scale,
	       d.p10 * scale, d.p90 * scale);
}

static int eg__report(const eg_world_t *w, const eg__bopts_t *o,
		      eg__phase_t *mr, eg__phase_t *bw)
{
	unsigned n = o->iters, W = w->size;
	double *tmp = calloc(n, sizeof(*tmp));
	double msgs = (double)(W - 1) * o->msgs;
	double bytes = (double)(W - 1) * (double)o->size;
	const eg_xport_stats_t *s = &bw->stats;
	eg__dist_t rate, rate_ep, mr_us, gbs, bw_us;
	json_t *j = NULL, *jops = NULL;
	int rc = EG_EXIT_PASS;

	if (!tmp)
		return EG_EXIT_HARD;
	rate = eg__rate(mr->t, n, msgs, tmp);
	rate_ep = eg__rate(mr->t, n, msgs / o->K, tmp);
	mr_us = eg__us(mr->t, n, tmp);
	gbs = eg__rate(bw->t, n, bytes / 1e9, tmp);
	bw_us = eg__us(bw->t, n, tmp);

	printf("epgate bench --raw: %u ranks, %u node(s) of %u, provider "
	       "intra=%s inter=%s, %u comm(s), %u calls after %u warm-up\n",
	       W, w->nodes, w->ranks_per_node,
	       s->provider_intra[0] ? s->provider_intra : "-",
	       s->provider_inter[0] ? s->provider_inter : "-", o->K, n,
	       o->warmup);
	printf("message rate: %zu-byte messages, %u per peer per call\n",
	       o->msg_size, o->msgs);
	printf("  %-22s %14s %14s %14s\n", "", "median", "p10", "p90");
	eg__row("msgs/s per rank", rate, 1);
	eg__row("msgs/s per endpoint", rate_ep, 1);
	eg__row("call time (us)", mr_us, 1);
	jops = json_array();
	double tsum = 0;
	for (unsigned i = 0; i < n; i++)
		tsum += mr->t[i];
	for (unsigned k = 0; k < o->K; k++) {
		char name[40];
		double r = (double)mr->ops[k] / tsum;

		snprintf(name, sizeof(name), "ops/s comm %u (rank 0)", k);
		printf("  %-22s %14.1f   (sends + receives posted, mean; "
		       "thread busy %.0f%%)\n",
		       name, r, 100.0 * mr->busy[k] / tsum);
		json_array_append_new(jops, json_real(r));
	}
	printf("bandwidth: %zu bytes per peer per call (chunked by the "
	       "transport)\n",
	       o->size);
	printf("  %-22s %14s %14s %14s\n", "", "median", "p10", "p90");
	eg__row("GB/s per rank", gbs, 1);
	eg__row("call time (us)", bw_us, 1);
	printf("  GB/s: bytes sent to other ranks / slowest rank's call "
	       "time; 1 GB = 1e9 bytes\n");

	if (!o->json)
		goto out;
	j = json_pack(
	    "{s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:i, "
	    "s:{s:I, s:i, s:o, s:o, s:o, s:o}, "
	    "s:{s:I, s:o, s:o, s:I, s:I}}",
	    "schema", "epgate/bench-raw/v1", "world", (int)W, "nodes",
	    (int)w->nodes, "ranks_per_node", (int)w->ranks_per_node,
	    "num_comms", (int)o->K, "provider_intra", s->provider_intra,
	    "provider_inter", s->provider_inter, "iters", (int)n, "warmup",
	    (int)o->warmup, "msg_rate", "msg_size", (json_int_t)o->msg_size,
	    "msgs_per_peer", (int)o->msgs, "msgs_per_s_per_rank",
	    eg__jdist(rate), "msgs_per_s_per_endpoint", eg__jdist(rate_ep),
	    "call_us", eg__jdist(mr_us), "ops_per_s_per_comm_rank0", jops,
	    "bandwidth", "bytes_per_peer", (json_int_t)o->size,
	    "gb_per_s_per_rank", eg__jdist(gbs), "call_us", eg__jdist(bw_us),
	    "bytes_sent_rank0", (json_int_t)s->bytes_sent,
	    "bytes_sent_xnode_rank0", (json_int_t)s->bytes_sent_xnode);
	jops = NULL; /* owned by j now (or freed by json_pack on failure) */
	if (!j || json_dump_file(j, o->json, JSON_INDENT(2)) < 0) {
		fprintf(stderr, EG__PROG ": cannot write %s\n", o->json);
		rc = EG_EXIT_HARD;
	}
out:
	json_decref(jops);
	json_decref(j);
	free(tmp);
	return rc;
}

static int eg__bench_raw(const eg__bopts_t *o)
{
	eg_world_t w;
	eg_boot_t *b = NULL;
	eg__phase_t mr = {0}, bw = {0};
	char err[512];
	int rc, ex = EG_EXIT_FAIL;

	rc = eg_world_from_env(&w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	if (w.size < 2) {
		fprintf(stderr,
			EG__PROG ": needs 2 ranks or more: run it "
				 "under `epgate launch -n 2 -- epgate bench "
				 "--raw`\n");
		return EG_EXIT_HARD;
	}
	rc = eg_boot_open(&b, &w, o->timeout_s);
	if (rc) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n", w.rank,
			b ? eg_boot_error(b) : eg_strerror(rc));
		if (b)
			eg_boot_close(b);
		return EG_EXIT_HARD;
	}
	mr.t = calloc(o->iters, sizeof(double));
	bw.t = calloc(o->iters, sizeof(double));
	if (!mr.t || !bw.t)
		goto out;
	if (eg__phase(&w, b, o, o->msgs * o->msg_size, o->msg_size, &mr) ||
	    eg__phase(&w, b, o, o->size, 0, &bw))
		goto out;
	ex = w.rank == 0 ? eg__report(&w, o, &mr, &bw) : EG_EXIT_PASS;
out:
	free(mr.t);
	free(bw.t);
	eg_boot_close(b);
	return ex;
}
#endif

/* --list: the points, and the jobs that run them (srun lines under
 * Slurm). */
static int eg__bench_list(const char *name)
{
	char path[4096], err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_perf_point_t *pts;
	size_t n;

	if (eg_perf_find_profile(name, path, sizeof(path)) < 0) {
		fprintf(stderr, EG__PROG ": no profile \"%s\"\n", name);
		return EG_EXIT_HARD;
	}
	if (eg_profile_load(&p, path, err, sizeof(err)) < 0 ||
	    eg_profile_points(&p, &pts, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		eg_profile_free(&p);
		return EG_EXIT_HARD;
	}
	printf("profile %s (%s): transport %s, provider %s, launcher %s, "
	       "gates %s\n",
	       p.name, path, p.transport, p.provider ? p.provider : "auto",
	       p.launcher == EG_LAUNCHER_SLURM ? "slurm" : "local",
	       p.gates ? p.gates : "-");
	for (size_t i = 0; i < n; i++)
		printf(
		    "  point %-50s world %u nodes %u, %u warm-up + %u timed\n",
		    pts[i].id, pts[i].v[EG_AXIS_WORLD].num,
		    pts[i].v[EG_AXIS_NODES].num, pts[i].warmup, pts[i].iters);
	/* the distinct (world, nodes) jobs */
	for (size_t i = 0; i < n; i++) {
		int seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= pts[j].v[EG_AXIS_WORLD].num ==
				    pts[i].v[EG_AXIS_WORLD].num &&
				pts[j].v[EG_AXIS_NODES].num ==
				    pts[i].v[EG_AXIS_NODES].num;
		if (seen)
			continue;
		printf("  job   world %u nodes %u: srun -N %u -n %u epgate "
		       "perf-rank --profile %s --results "
		       "perf-%s.w%u.n%u.json\n",
		       pts[i].v[EG_AXIS_WORLD].num, pts[i].v[EG_AXIS_NODES].num,
		       pts[i].v[EG_AXIS_NODES].num, pts[i].v[EG_AXIS_WORLD].num,
		       p.name, p.name, pts[i].v[EG_AXIS_WORLD].num,
		       pts[i].v[EG_AXIS_NODES].num);
	}
	free(pts);
	eg_profile_free(&p);
	return EG_EXIT_PASS;
}

/* --profile: a new run folder, the sweeps, the gates. */
static int eg__bench_profile(const char *name, const char *results,
			     const char *reports, int gates, int verbose)
{
	eg_perf_run_opts_t o = {.results = results,
				.apply_gates = gates,
				.progress = -1,
				.verbose = verbose};
	eg_perf_totals_t tot;
	char run[4096];
	const char *procid = getenv("SLURM_PROCID");
	int rc;

	/* under srun only rank 0 writes: the others make no folder */
	if (getenv("SLURM_JOB_ID") && procid && strcmp(procid, "0"))
		return eg_perf_run_profile(name, reports, &o, &tot);
	rc = eg_run_dir_create(reports, run, sizeof(run));
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": --reports %s: %s\n", reports,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	printf("epgate bench: run folder %s\n", run);
	return eg_perf_run_profile(name, run, &o, &tot);
}

/* `--raw COLL` (alltoall, allgather, reducescatter) is NCCL's side:
 * GPU memory, nccl-tests' definitions (suites/epgate/bench_nccl.c). */
static const char *eg__nccl_coll(int argc, char **argv)
{
	static const char *const colls[] = {"alltoall", "allgather",
					    "reducescatter"};
	for (int i = 1; i < argc; i++) {
		const char *c = NULL;
		if (!strncmp(argv[i], "--raw=", 6))
			c = argv[i] + 6;
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc &&
			 argv[i + 1][0] != '-')
			c = argv[i + 1];
		for (size_t k = 0; c && k < 3; k++)
			if (!strcmp(c, colls[k]))
				return colls[k];
	}
	return NULL;
}

int eg_cmd_bench(int argc, char **argv)
{
	const char *coll = eg__nccl_coll(argc, argv);
	if (coll)
		return eg_bench_nccl_raw(coll, argc, argv);
	struct option opts[40] = {
	    {"raw", no_argument, NULL, 'R'},
	    {"engine", required_argument, NULL, 'E'},
	    {"provider", required_argument, NULL, 'p'},
	    {"num-comms", required_argument, NULL, 'k'},
	    {"size", required_argument, NULL, 's'},
	    {"msg-size", required_argument, NULL, 'm'},
	    {"msgs", required_argument, NULL, 'M'},
	    {"iters", required_argument, NULL, 'i'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"timeout", required_argument, NULL, 't'},
	    {"json", required_argument, NULL, 'j'},
	    {"profile", required_argument, NULL, 300},
	    {"results", required_argument, NULL, 301},
	    {"reports", required_argument, NULL, 302},
	    {"no-gates", no_argument, NULL, 303},
	    {"list", no_argument, NULL, 304},
	    {"overhead", no_argument, NULL, 305},
	    {"op-us", required_argument, NULL, 306},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	};
	eg_overrides_t ov = {0};
	const char *engine = NULL, *profile = NULL, *results = NULL;
	const char *reports = "reports/runs";
	int no_gates = 0, list = 0, overhead = 0, verbose = 0, iters_set = 0;
	unsigned op_us = 100;
	eg__bopts_t o = {.K = 1,
			 .iters = 20,
			 .warmup = 3,
			 .msgs = 512,
			 .size = (size_t)1 << 20,
			 .msg_size = 8,
			 .timeout_s = 60};
	unsigned long long v;
	int c, raw = 0;

	if (eg_cli_add_workload_options(opts, 40) < 0)
		return EG_EXIT_HARD;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
		if (c >= EG_OPT_WORKLOAD) {
			if (eg_overrides_add(&ov, EG__PROG, c, optarg) < 0)
				return EG_EXIT_HARD;
			continue;
		}
		switch (c) {
		case 'R':
			raw = 1;
			break;
		case 'E':
			engine = optarg;
			break;
		case 'p':
			if (!*optarg)
				return eg__bad_arg("--provider", optarg,
						   "empty");
			o.provider = optarg;
			break;
		case 'k':
			if (eg__uint(optarg, 1, EG_COMMS_MAX, &v))
				return eg__bad_arg("--num-comms", optarg,
						   "want 1..16");
			o.K = (unsigned)v;
			break;
		case 's':
			if (eg__bytes(optarg, &o.size))
				return eg__bad_arg("--size", optarg,
						   "want bytes >= 1 (K/M/G)");
			break;
		case 'm':
			if (eg__bytes(optarg, &o.msg_size) ||
			    o.msg_size > ((size_t)1 << 20))
				return eg__bad_arg("--msg-size", optarg,
						   "want 1..1M bytes");
			break;
		case 'M':
			if (eg__uint(optarg, 1, 1u << 20, &v))
				return eg__bad_arg("--msgs", optarg,
						   "want 1..1048576");
			o.msgs = (unsigned)v;
			break;
		case 'i':
			if (eg__uint(optarg, 1, 1000000, &v))
				return eg__bad_arg("--iters", optarg,
						   "want 1..1000000");
			o.iters = (unsigned)v;
			iters_set = 1;
			break;
		case 300:
			profile = optarg;
			break;
		case 301:
			results = optarg;
			break;
		case 302:
			reports = optarg;
			break;
		case 303:
			no_gates = 1;
			break;
		case 304:
			list = 1;
			break;
		case 305:
			overhead = 1;
			break;
		case 306:
			if (eg__uint(optarg, 1, 1000000, &v))
				return eg__bad_arg("--op-us", optarg,
						   "want 1..1000000");
			op_us = (unsigned)v;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'w':
			if (eg__uint(optarg, 0, 1000000, &v))
				return eg__bad_arg("--warmup", optarg,
						   "want 0..1000000");
			o.warmup = (unsigned)v;
			break;
		case 't':
			if (eg__uint(optarg, 1, 86400, &v))
				return eg__bad_arg("--timeout", optarg,
						   "want 1..86400 seconds");
			o.timeout_s = (double)v;
			break;
		case 'j':
			o.json = optarg;
			break;
		case 'h':
			eg__bench_usage(stdout);
			return EG_EXIT_PASS;
		case ':':
			fprintf(stderr, EG__PROG ": %s needs a value\n",
				argv[optind - 1]);
			return EG_EXIT_HARD;
		default:
			fprintf(stderr, EG__PROG ": unknown option \"%s\"\n",
				argv[optind - 1]);
			eg__bench_usage(stderr);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc) {
		fprintf(stderr, EG__PROG ": unexpected argument \"%s\"\n",
			argv[optind]);
		return EG_EXIT_HARD;
	}
	if (raw + !!engine + !!profile + overhead != 1) {
		fprintf(stderr,
			EG__PROG ": give one of --profile NAME, --engine NAME, "
				 "--raw or --overhead; try `epgate bench "
				 "--help`\n");
		return EG_EXIT_HARD;
	}
	if ((results || no_gates || list) && !profile) {
		fprintf(stderr,
			EG__PROG ": --results, --no-gates and --list go "
				 "with --profile\n");
		return EG_EXIT_HARD;
	}
	if (profile && ov.n) {
		fprintf(stderr, EG__PROG ": the profile gives the workloads; "
					 "no workload options with "
					 "--profile\n");
		return EG_EXIT_HARD;
	}
	if (profile)
		return list ? eg__bench_list(profile)
			    : eg__bench_profile(profile, results, reports,
						!no_gates, verbose);
	if (overhead)
		return eg_perf_overhead(iters_set ? o.iters : 2000, op_us);
	if (engine) {
		eg_bench_engine_opts_t eo = {.engine = engine,
					     .provider = o.provider,
					     .num_comms = o.K,
					     .iters = o.iters,
					     .warmup = o.warmup,
					     .timeout_s = o.timeout_s,
					     .workload = &ov};
		return eg_bench_engine(&eo);
	}
	if (ov.n) {
		fprintf(stderr, EG__PROG ": workload options need --engine\n");
		return EG_EXIT_HARD;
	}
	if ((unsigned long long)o.msgs * o.msg_size > ((size_t)1 << 30)) {
		fprintf(stderr, EG__PROG ": --msgs x --msg-size over 1 GiB\n");
		return EG_EXIT_HARD;
	}
#ifdef HAVE_LIBFABRIC
	return eg__bench_raw(&o);
#else
	fputs(EG__PROG ": built without libfabric\n", stderr);
	return EG_EXIT_SKIP;
#endif
}
