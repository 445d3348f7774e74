/* epgate bench: subcommands a reader sees at once -- profile, list,
 * engine, raw, overhead -- each parsed by its own file
 * (cmd_bench_*.c). The old flag spellings stay as aliases: `bench
 * --profile P` is `bench profile P`, `--engine E` is `engine E`, `--raw
 * [COLL]` is `raw [COLL]` (`--raw a2a|dense` is `engine a2a|dense`),
 * `--overhead` is `overhead`. */
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/nccl_raw.h"
#include "lib/campaign/sweep.h"
#include "src/cmd.h"
#include "src/opts.h"

typedef struct eg__sub {
	const char *name;
	eg_cmd_fn *run;
	const char *summary;
	const char *alias; /* the old flag */
} eg__sub_t;

static const eg__sub_t eg__subs[] = {
    {"profile", eg_cmd_bench_profile,
     "a profile's sweeps into a new run folder, then its gates",
     "--profile NAME"},
    {"list", eg_cmd_bench_list, "a profile's points and jobs, nothing run",
     "--profile NAME --list"},
    {"engine", eg_cmd_bench_engine,
     "one engine point, measured as a profile point (fabric or nccl)",
     "--engine NAME"},
    {"raw", eg_cmd_bench_raw,
     "the transport alone: libfabric, or NCCL's collectives", "--raw [COLL]"},
    {"overhead", eg_cmd_bench_overhead, "the harness's own timing overhead",
     "--overhead"},
    {"ab", eg_cmd_bench_ab, "two arms in the same launches, B judged against A",
     NULL},
    {"calibrate", eg_cmd_bench_calibrate,
     "the gates replayed on measured campaigns: the calibration table", NULL},
};
#define EG__N_SUBS (sizeof(eg__subs) / sizeof(eg__subs[0]))

static void eg__bench_usage(FILE *f)
{
	fputs("usage: epgate bench SUBCOMMAND [options]\n"
	      "\n"
	      "Measurements. Subcommands ('epgate bench SUBCOMMAND --help' "
	      "describes each):\n",
	      f);
	for (size_t i = 0; i < EG__N_SUBS; i++)
		fprintf(f, "  %-9s %s\n", eg__subs[i].name,
			eg__subs[i].summary);
	fputs("\n"
	      "  epgate bench profile NAME|FILE [--results F] [--reports D] "
	      "[--no-gates] [-v]\n"
	      "  epgate bench list NAME|FILE\n"
	      "  epgate launch -n N -- epgate bench engine [a2a|dense] "
	      "[--transport fabric|nccl] ...\n"
	      "  epgate launch -n 2 -- epgate bench engine --transport nccl "
	      "--vs-alltoall ...\n"
	      "  epgate launch -n N -- epgate bench raw [--provider P] ...\n"
	      "  epgate launch -n N -- epgate bench raw "
	      "alltoall|allgather|reducescatter --transport nccl ...\n"
	      "  epgate bench overhead [--op-us US] [--iters N]\n"
	      "  epgate launch -n N -- epgate bench overhead --engine E "
	      "...\n"
	      "  epgate bench ab NAME|FILE --a ARM --b ARM [--metric M] ...\n"
	      "\n"
	      "The old spellings still work:",
	      f);
	for (size_t i = 0; i < EG__N_SUBS; i++)
		if (eg__subs[i].alias)
			fprintf(f, "%s %s", i ? "," : "", eg__subs[i].alias);
	fputs(".\n", f);
}

static const eg__sub_t *eg__find(const char *name)
{
	for (size_t i = 0; i < EG__N_SUBS; i++)
		if (!strcmp(eg__subs[i].name, name))
			return &eg__subs[i];
	return NULL;
}

/* An old mode flag at argv[i]: its subcommand and value (NULL: none);
 * *used: the arguments it took (1 or 2), 0 when argv[i] is not one. */
static const char *eg__alias(int argc, char **argv, int i, const char **val,
			     int *used)
{
	static const struct {
		const char *flag, *sub;
		int value; /* 1: takes one; 2: takes one if a word follows */
	} flags[] = {{"--profile", "profile", 1},
		     {"--engine", "engine", 1},
		     {"--raw", "raw", 2},
		     {"--overhead", "overhead", 0}};
	const char *a = argv[i];
	const char *next = i + 1 < argc ? argv[i + 1] : NULL;

	*val = NULL;
	*used = 0;
	for (int f = 0; f < 4; f++) {
		size_t n = strlen(flags[f].flag);

		if (strncmp(a, flags[f].flag, n) || (a[n] && a[n] != '='))
			continue;
		*used = 1;
		if (a[n] == '=') {
			*val = a + n + 1;
		} else if (flags[f].value == 1 ||
			   (flags[f].value == 2 && next && next[0] &&
			    next[0] != '-')) {
			*val = next;
			*used = 2;
		}
		/* `--raw a2a|dense` was the NCCL engine benchmark */
		if (flags[f].value == 2 && *val && !eg_nccl_coll_find(*val) &&
		    eg_engine_find(*val))
			return "engine";
		return flags[f].sub;
	}
	return NULL;
}

/* argv with the old mode flag turned into a subcommand: new[0] is the
 * subcommand, new[1] its value (when any), then the other arguments.
 * Returns the new argc, or <0 after a message. */
static int eg__rewrite(int argc, char **argv, char **out)
{
	const char *sub = NULL, *val = NULL;
	int n, at = -1, used = 0;

	for (int i = 1; i < argc; i++) {
		const char *v;
		int u;
		const char *s = eg__alias(argc, argv, i, &v, &u);

		if (!s)
			continue;
		if (sub) { /* a second one */
			fputs("epgate bench: give one of --profile NAME, "
			      "--engine NAME, --raw or --overhead; try "
			      "`epgate bench --help`\n",
			      stderr);
			return -1;
		}
		sub = s;
		val = v;
		at = i;
		used = u;
		if (u == 2 && !v) {
			fprintf(stderr, "epgate bench: %s needs a value\n",
				argv[i]);
			return -1;
		}
		i += u - 1;
	}
	if (!sub && argc > 1) {
		fprintf(stderr,
			"epgate bench: \"%s\": give a subcommand first "
			"(profile, list, engine, raw, overhead); try `epgate "
			"bench --help`\n",
			argv[1]);
		return -1;
	}
	if (!sub) {
		fputs("epgate bench: give a subcommand (profile, list, engine, "
		      "raw, overhead); try `epgate bench --help`\n",
		      stderr);
		return -1;
	}
	out[0] = (char *)sub;
	out[1] = (char *)val;
	n = val ? 2 : 1;
	for (int i = 1; i < argc; i++)
		if (i < at || i >= at + used)
			out[n++] = argv[i];
	out[n] = NULL;
	return n;
}

int eg_cmd_bench(int argc, char **argv)
{
	const eg__sub_t *s;
	char **nargv;
	int n, rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		eg__bench_usage(stdout);
		return EG_EXIT_PASS;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		if (!(s = eg__find(argv[1]))) {
			fprintf(stderr,
				"epgate bench: unknown subcommand \"%s\"; try "
				"`epgate bench --help`\n",
				argv[1]);
			return EG_EXIT_HARD;
		}
		return eg_cmd_sub(argv[0], s->name, s->run, argc - 1, argv + 1);
	}
	nargv = calloc((size_t)argc + 2, sizeof(*nargv));
	if (!nargv)
		return EG_EXIT_HARD;
	n = eg__rewrite(argc, argv, nargv);
	s = n < 0 ? NULL : eg__find(nargv[0]);
	rc = s ? eg_cmd_sub(argv[0], s->name, s->run, n, nargv) : EG_EXIT_HARD;
	free(nargv);
	return rc;
}

/* ---- overhead ------------------------------------------------------ */

static int eg__overhead_loop(int argc, char **argv);

static const char eg__overhead_usage[] =
    "usage: epgate bench overhead [--op-us US] [--iters N]\n"
    "       epgate launch -n N -- epgate bench overhead --engine ENGINE\n"
    "           [the options of bench engine]\n"
    "\n"
    "The harness's own timing overhead: a calibrated busy loop of\n"
    "about US microseconds (100), bare and through the driver, and\n"
    "an empty step, N steps each (2000) in 4 interleaved rounds.\n"
    "With --engine, a point of that engine as `bench engine` measures\n"
    "it, then its times at both boundaries (the engine's own calls,\n"
    "which are gated, and epgate's step), median and ep_bench's mean,\n"
    "and the harness per step between them (docs/metrics.md,\n"
    "\"Boundaries\").\n"
    "\n"
    "Exit status: 0 under 2% (or not judged: more than one rank; with\n"
    "--engine: measured), 1 the harness adds 2% or more (--engine: a\n"
    "wrong result), 99 bad arguments.\n";

int eg_cmd_bench_overhead(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--engine", 8))
			return eg_cmd_bench_overhead_engine(argc, argv);
	return eg__overhead_loop(argc, argv);
}

static int eg__overhead_loop(int argc, char **argv)
{
	unsigned op_us = 100;
	const eg_cli_opt_t own[] = {
	    {"op-us", .uint = &op_us, .lo = 1, .hi = 1000000}, {NULL}};
	eg_job_opts_t job = {.keys = EG_JOB_ITERS, .iters = 2000};
	eg_cli_t cl = {.own = own, .usage = eg__overhead_usage, .job = &job};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_bench_overhead(job.iters, op_us);
}
