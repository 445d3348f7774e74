/* L2 transport probe, one process per rank under `epgate launch`: the
 * fabric transport's alltoallv over varied sizes (zero-byte peers, 1 byte,
 * odd sizes, sizes past the chunk limit, a rank that receives nothing),
 * every byte checked against a pattern of (src, dst, iteration, offset),
 * guard bytes behind every receive buffer. Planted faults: --fault corrupt
 * (rank 0 flips a byte it sends to rank 1: the check must catch it) and
 * --fault truncate|truncate-chunk (rank 1's recv_bytes[0] is one too
 * small: the transport must report it, the guard must stay intact),
 * --fault stall (rank 1 calls late: the others' deadline must expire,
 * naming rank 1).
 * Exit: 0 pass, 1 fail, 77 without libfabric, 99 bad usage. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "epgate/boot.h"
#include "epgate/error.h"
#include "epgate/signals.h"
#include "epgate/transport.h"
#include "epgate/world.h"

static void eg__usage(FILE *f)
{
	fputs("usage: xport_probe [--provider P] [--num-comms K] [--reps N]\n"
	      "         [--timeout S] [--fault corrupt|truncate|"
	      "truncate-chunk|stall]\n"
	      "         [--expect-intra P] [--expect-inter P] [-v]\n"
	      "Run under `epgate launch -n N`; EPGATE_PROVIDER and\n"
	      "EPGATE_NUM_COMMS stand in for the options.\n",
	      f);
}

#ifdef HAVE_LIBFABRIC
#define EG__GUARD     64
#define EG__GUARD_VAL 0xa5
#define EG__FAULT_IT  2 /* iteration of the planted faults */

enum { F_NONE, F_CORRUPT, F_TRUNC, F_TRUNC_CHUNK, F_STALL };

typedef struct probe {
	uint32_t W, me;
	size_t chunk; /* chunk limit the transport was told, for sizes */
	int fault;
	double timeout_s;
} probe_t;

static uint64_t eg__mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Bytes src sends dst in iteration it: known to both sides. */
static size_t eg__size(const probe_t *pr, uint32_t src, uint32_t dst,
		       uint32_t it)
{
	uint64_t h =
	    eg__mix(((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ it ^ 0x51u);

	if (pr->fault == F_CORRUPT && it == EG__FAULT_IT && src == 0 &&
	    dst == 1)
		return 777;
	if (pr->fault == F_TRUNC && it == EG__FAULT_IT && src == 0 && dst == 1)
		return 1000;
	if (pr->fault == F_TRUNC_CHUNK && it == EG__FAULT_IT && src == 0 &&
	    dst == 1)
		return pr->chunk + 1;
	/* every fifth iteration one rank receives nothing at all */
	if (it % 5 == 4 && dst == (it / 5) % pr->W)
		return 0;
	switch (h % 8) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 7 + h % 5; /* not a multiple of 8 */
	case 3:
		return 13 * (1 + (h >> 8) % 50);
	case 4:
		return 4096 + 3;
	case 5:
		return 65536 - 1;
	case 6: /* past the chunk limit, now and then */
		return it % 10 == 7 ? 2 * pr->chunk + 3 + (h >> 8) % 1000 : 333;
	default:
		return pr->chunk + (h >> 8) % 3;
	}
}

static uint64_t eg__word(uint32_t src, uint32_t dst, uint32_t it, size_t w)
{
	return eg__mix(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^
		       ((uint64_t)it << 20) ^ w * 0x10001ull);
}

/* Byte off of what src sends dst in iteration it. */
static uint8_t eg__byte(uint32_t src, uint32_t dst, uint32_t it, size_t off)
{
	return (uint8_t)(eg__word(src, dst, it, off / 8) >> (8 * (off % 8)));
}

static void eg__fill(uint8_t *b, uint32_t src, uint32_t dst, uint32_t it,
		     size_t n)
{
	for (size_t o = 0; o < n; o += 8) {
		uint64_t w = eg__word(src, dst, it, o / 8);

		for (size_t i = 0; i < 8 && o + i < n; i++)
			b[o + i] = (uint8_t)(w >> (8 * i));
	}
}

/* First offset where b differs from the pattern, or n. */
static size_t eg__check(const uint8_t *b, uint32_t src, uint32_t dst,
			uint32_t it, size_t n)
{
	for (size_t o = 0; o < n; o += 8) {
		uint64_t w = eg__word(src, dst, it, o / 8);

		for (size_t i = 0; i < 8 && o + i < n; i++)
			if (b[o + i] != (uint8_t)(w >> (8 * i)))
				return o + i;
	}
	return n;
}

static int eg__bad(const char *what, const char *val)
{
	fprintf(stderr, "xport_probe: %s: bad value \"%s\"\n", what, val);
	eg__usage(stderr);
	return EG_EXIT_HARD;
}

static int eg__parse_u(const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* One iteration; returns 0 ok, 1 data/guard failure, <0 transport error
 * (message printed). */
static int eg__iter(const probe_t *pr, const eg_xport_ops_t *x, void *xs,
		    uint32_t it, uint8_t **sb, uint8_t **rb, size_t *ss,
		    size_t *rs, int verbose, uint64_t *sent, uint64_t *sent_x,
		    const eg_world_t *w)
{
	int bad = 0, rc;

	for (uint32_t p = 0; p < pr->W; p++) {
		ss[p] = eg__size(pr, pr->me, p, it);
		rs[p] = eg__size(pr, p, pr->me, it);
		if (pr->fault >= F_TRUNC && it == EG__FAULT_IT && pr->me == 1 &&
		    p == 0)
			rs[p] -= 1; /* planted: one byte too small */
		sb[p] = malloc(ss[p] ? ss[p] : 1);
		rb[p] = malloc(rs[p] + EG__GUARD);
		if (!sb[p] || !rb[p]) {
			fprintf(stderr, "rank %u: out of memory\n", pr->me);
			return EG_ENOMEM;
		}
		eg__fill(sb[p], pr->me, p, it, ss[p]);
		memset(rb[p], EG__GUARD_VAL, rs[p] + EG__GUARD);
		if (p != pr->me) {
			*sent += ss[p];
			if (eg_world_node_of(w, p) !=
			    eg_world_node_of(w, pr->me))
				*sent_x += ss[p];
		}
	}
	if (pr->fault == F_CORRUPT && it == EG__FAULT_IT && pr->me == 0 &&
	    ss[1])
		sb[1][ss[1] / 2] ^= 0x10; /* planted: one flipped bit */
	if (pr->fault == F_STALL && it == EG__FAULT_IT && pr->me == 1) {
		/* planted: late past everyone's deadline */
		struct timespec late = {(time_t)(3 * pr->timeout_s) + 1, 0};

		nanosleep(&late, NULL);
	}
	rc = x->alltoallv(xs, (const void *const *)sb, ss, (void *const *)rb,
			  rs);
	for (uint32_t p = 0; p < pr->W; p++)
		for (size_t g = 0; g < EG__GUARD; g++)
			if (rb[p][rs[p] + g] != EG__GUARD_VAL) {
				printf("rank %u: iteration %u: guard byte %zu "
				       "behind the %zu-byte receive from rank "
				       "%u overwritten\n",
				       pr->me, it, g, rs[p], p);
				bad = 1;
				break;
			}
	if (rc) {
		printf("rank %u: iteration %u: transport error %s: %s\n",
		       pr->me, it, eg_err_name(rc), x->error(xs));
		if (!bad)
			printf("rank %u: guard bytes intact after the error\n",
			       pr->me);
		return rc;
	}
	for (uint32_t p = 0; p < pr->W; p++) {
		size_t o = eg__check(rb[p], p, pr->me, it, rs[p]);

		if (o < rs[p]) {
			printf("rank %u: iteration %u: byte %zu of %zu from "
			       "rank %u is 0x%02x, want 0x%02x\n",
			       pr->me, it, o, rs[p], p, rb[p][o],
			       eg__byte(p, pr->me, it, o));
			bad = 1;
		}
	}
	if (verbose)
		printf("rank %u: iteration %u ok\n", pr->me, it);
	return bad;
}

static int eg__probe(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"provider", required_argument, NULL, 'p'},
	    {"num-comms", required_argument, NULL, 'k'},
	    {"reps", required_argument, NULL, 'r'},
	    {"timeout", required_argument, NULL, 't'},
	    {"fault", required_argument, NULL, 'f'},
	    {"expect-intra", required_argument, NULL, 'I'},
	    {"expect-inter", required_argument, NULL, 'X'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *prov = getenv("EPGATE_PROVIDER"), *kenv;
	const char *exp_intra = NULL, *exp_inter = NULL, *cenv;
	unsigned long K = 1, reps = 50, v;
	double tmo = 0;
	int verbose = 0, c, rc, fails = 0, xerr = 0;
	probe_t pr = {0};
	eg_world_t w;
	eg_boot_t *b = NULL;
	void *xs = NULL;
	const eg_xport_ops_t *x = &eg_xport_fabric;
	char err[512];

	kenv = getenv("EPGATE_NUM_COMMS");
	if (kenv && eg__parse_u(kenv, 1, EG_COMMS_MAX, &K))
		return eg__bad("EPGATE_NUM_COMMS", kenv);
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prov = optarg;
			break;
		case 'k':
			if (eg__parse_u(optarg, 1, EG_COMMS_MAX, &K))
				return eg__bad("--num-comms", optarg);
			break;
		case 'r':
			if (eg__parse_u(optarg, 1, 100000, &reps))
				return eg__bad("--reps", optarg);
			break;
		case 't':
			if (eg__parse_u(optarg, 1, 86400, &v))
				return eg__bad("--timeout", optarg);
			tmo = (double)v;
			break;
		case 'f':
			if (!strcmp(optarg, "corrupt"))
				pr.fault = F_CORRUPT;
			else if (!strcmp(optarg, "truncate"))
				pr.fault = F_TRUNC;
			else if (!strcmp(optarg, "truncate-chunk"))
				pr.fault = F_TRUNC_CHUNK;
			else if (!strcmp(optarg, "stall"))
				pr.fault = F_STALL;
			else
				return eg__bad("--fault", optarg);
			break;
		case 'I':
			exp_intra = optarg;
			break;
		case 'X':
			exp_inter = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			eg__usage(stdout);
			return EG_EXIT_PASS;
		default:
			eg__usage(stderr);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc)
		return eg__bad("argument", argv[optind]);
	/* sizes follow the chunk limit the transport will use */
	pr.chunk = (size_t)1 << 20;
	cenv = getenv("EPGATE_FABRIC_CHUNK");
	if (cenv && !eg__parse_u(cenv, 1, pr.chunk - 1, &v))
		pr.chunk = v;

	rc = eg_world_from_env(&w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "xport_probe: %s\n", err);
		return EG_EXIT_HARD;
	}
	pr.W = w.size;
	pr.me = w.rank;
	if (pr.fault && pr.W < 2) {
		fprintf(stderr, "xport_probe: --fault needs 2 ranks or more\n");
		return EG_EXIT_HARD;
	}
	if (tmo <= 0)
		tmo = w.timeout_s > 0 ? w.timeout_s : 30;
	pr.timeout_s = tmo;
	/* --timeout is the calls' deadline; starting (bootstrap, endpoint
	 * names) keeps the world's, so a start slow under load is no
	 * failure */
	rc = eg_boot_open(&b, &w, w.timeout_s);
	if (rc) {
		fprintf(stderr, "xport_probe: rank %u: bootstrap: %s\n", w.rank,
			b ? eg_boot_error(b) : eg_strerror(rc));
		if (b)
			eg_boot_close(b);
		return EG_EXIT_HARD;
	}
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = prov,
			      .num_comms = (uint32_t)K,
			      .timeout_s = tmo};
	rc = x->create(&w, b, &xo, &xs, err, sizeof(err));
	if (rc) {
		printf("rank %u: transport create: %s\n", w.rank, err);
		eg_boot_close(b);
		return EG_EXIT_FAIL;
	}

	uint8_t **sb = calloc(pr.W, sizeof(*sb)),
		**rb = calloc(pr.W, sizeof(*rb));
	size_t *ss = calloc(pr.W, sizeof(*ss)), *rs = calloc(pr.W, sizeof(*rs));
	uint64_t sent = 0, sent_x = 0;
	if (!sb || !rb || !ss || !rs) {
		fprintf(stderr, "rank %u: out of memory\n", pr.me);
		xerr = 1;
	}
	for (uint32_t it = 0; it < reps && !xerr; it++) {
		rc = eg__iter(&pr, x, xs, it, sb, rb, ss, rs, verbose, &sent,
			      &sent_x, &w);
		if (rc < 0)
			xerr = 1;
		else if (rc)
			fails++;
		for (uint32_t p = 0; sb && rb && p < pr.W; p++) {
			free(sb[p]);
			free(rb[p]);
			sb[p] = rb[p] = NULL;
		}
	}

	eg_xport_stats_t s;
	if (!xerr && x->stats(xs, &s) == 0) {
		char ops[EG_COMMS_MAX * 24] = "";
		size_t at = 0;
		int idle = 0;
		uint64_t tot = 0;

		for (unsigned k = 0; k < s.num_comms; k++) {
			at += (size_t)snprintf(
			    ops + at, sizeof(ops) - at, "%s%llu", k ? " " : "",
			    (unsigned long long)s.ops_posted[k]);
			tot += s.ops_posted[k];
			idle |= s.ops_posted[k] == 0;
		}
		printf("rank %u: provider intra=%s inter=%s num_comms=%u "
		       "ops=[%s] bytes_sent=%llu xnode=%llu\n",
		       pr.me, s.provider_intra[0] ? s.provider_intra : "-",
		       s.provider_inter[0] ? s.provider_inter : "-",
		       s.num_comms, ops, (unsigned long long)s.bytes_sent,
		       (unsigned long long)s.bytes_sent_xnode);
		/* late mode keeps a pair on one comm across calls */
		const char *mode = getenv("EPGATE_FABRIC_TEST");
		int spread = !mode || !strstr(mode, "late");
		if (s.num_comms != K ||
		    (spread && K > 1 && tot > 8 * K && idle)) {
			printf("rank %u: FAIL: ops not spread over the %lu "
			       "comms\n",
			       pr.me, K);
			fails++;
		}
		if (s.bytes_sent != sent || s.bytes_sent_xnode != sent_x) {
			printf("rank %u: FAIL: stats count %llu bytes sent "
			       "(%llu cross-node), the probe sent %llu "
			       "(%llu)\n",
			       pr.me, (unsigned long long)s.bytes_sent,
			       (unsigned long long)s.bytes_sent_xnode,
			       (unsigned long long)sent,
			       (unsigned long long)sent_x);
			fails++;
		}
		if (exp_intra && strcmp(exp_intra, s.provider_intra)) {
			printf("rank %u: FAIL: intra-node provider \"%s\", "
			       "want \"%s\"\n",
			       pr.me, s.provider_intra, exp_intra);
			fails++;
		}
		if (exp_inter && strcmp(exp_inter, s.provider_inter)) {
			printf("rank %u: FAIL: inter-node provider \"%s\", "
			       "want \"%s\"\n",
			       pr.me, s.provider_inter, exp_inter);
			fails++;
		}
	}
	free(sb);
	free(rb);
	free(ss);
	free(rs);
	x->destroy(xs);
	eg_boot_close(b);
	if (xerr || fails) {
		printf("rank %u: FAIL (%d failed iterations%s)\n", pr.me, fails,
		       xerr ? ", transport error" : "");
		return EG_EXIT_FAIL;
	}
	printf("rank %u: PASS: %lu iterations, W=%u, K=%lu\n", pr.me, reps,
	       pr.W, K);
	return EG_EXIT_PASS;
}
#endif

int main(int argc, char **argv)
{
	eg_signals_own();
#ifdef HAVE_LIBFABRIC
	return eg__probe(argc, argv);
#else
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help")) {
			eg__usage(stdout);
			return EG_EXIT_PASS;
		}
	fputs("xport_probe: built without libfabric\n", stderr);
	return EG_EXIT_SKIP;
#endif
}
