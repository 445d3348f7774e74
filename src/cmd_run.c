/* epgate run: the main job on the embedded default (profile "local"):
 * every suite this build has, into one run folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "epgate/file.h"
#include "lib/suite/suite.h"
#include "lib/suite/perf.h"

static void eg__run_usage(FILE *f)
{
	fputs(
	    "usage: epgate run [options]\n"
	    "\n"
	    "Runs the suites of the local profile and writes TAP, JUnit and a\n"
	    "JSON summary into one run folder: L1 (the self engine over the\n"
	    "L1 workload matrix, 2 iterations each), then L2 (a2a and dense,\n"
	    "one process per rank over libfabric shm/tcp: 4 ranks in 2\n"
	    "virtual nodes, and a few other shapes).\n"
	    "\n"
	    "  --reports DIR   where run folders go (default: reports/runs)\n"
	    "  --engine NAME   L1 engine under test (default: self)\n"
	    "  -v, --verbose   print each failure's details on stderr\n"
	    "  -h, --help      this text\n"
	    "\n"
	    "Exit status: 0 all passed, 1 a check failed, 77 nothing ran,\n"
	    "99 bad input or harness error.\n",
	    f);
}

static json_t *eg__totals_json(const eg_l1_totals_t *t, const char *tap,
			       const char *junit)
{
	return json_pack("{s:i, s:i, s:i, s:i, s:s, s:s}", "results",
			 (int)t->run, "passed", (int)t->passed, "failed",
			 (int)t->failed, "errors", (int)t->errors, "tap", tap,
			 "junit", junit);
}

/* summary.json, rewritten atomically after each suite (lib/base/file.c). */
static int eg__summary(const char *path, const char *run, const char *engine,
		       const eg_l1_totals_t *t1, const char *tap1,
		       const char *junit1, const eg_l1_totals_t *t2,
		       const char *tap2, const char *junit2, int rc)
{
	char err[4400], *text;
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i}", "schema",
			      "epgate/run-summary/v1", "profile", "local",
			      "run_dir", run, "engine_l1", engine, "exit", rc);
	if (!j)
		return EG_ENOMEM;
	json_object_set_new(j, "l1", eg__totals_json(t1, tap1, junit1));
	if (t2)
		json_object_set_new(j, "l2", eg__totals_json(t2, tap2, junit2));
	text = json_dumps(j, JSON_INDENT(2));
	json_decref(j);
	if (!text)
		snprintf(err, sizeof(err), "%s: out of memory", path);
	int bad = !text || eg_file_write_atomic_buf(path, text, strlen(text),
						    err, sizeof(err)) < 0;
	free(text);
	if (bad) {
		fprintf(stderr, "epgate run: %s\n", err);
		return EG_EIO;
	}
	return EG_OK;
}

int eg_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"reports", required_argument, NULL, 'r'},
	    {"engine", required_argument, NULL, 'e'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *reports = "reports/runs";
	eg_l1_opts_t o = {.engine = "self", .iters = 2};
	eg_overrides_t ov = {0};
	eg_workload_list_t wl = {0};
	eg_l1_totals_t tot;
	char run[4096], tap[4200], junit[4200], summary[4200];
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			reports = optarg;
			break;
		case 'e':
			o.engine = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			eg__run_usage(stdout);
			return EG_EXIT_PASS;
		default:
			fputs("epgate run: see 'epgate run --help'\n", stderr);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "epgate run: unexpected argument \"%s\"\n",
			argv[optind]);
		return EG_EXIT_HARD;
	}
	rc = eg_run_dir_create(reports, run, sizeof(run));
	if (rc < 0) {
		fprintf(stderr, "epgate run: --reports %s: %s\n", reports,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	if (eg_cli_load_workloads("epgate run", NULL, &ov, &wl) < 0)
		return EG_EXIT_HARD;
	snprintf(tap, sizeof(tap), "%s/l1.tap", run);
	snprintf(junit, sizeof(junit), "%s/l1.junit.xml", run);
	snprintf(summary, sizeof(summary), "%s/summary.json", run);
	o.tap_path = tap;
	o.junit_path = junit;
	printf("epgate run: profile local, run folder %s\n", run);
	printf("  L1  engine %s, %zu workloads ...\n", o.engine, wl.n);
	fflush(stdout);
	rc = eg_l1_run(&o, &wl, &tot);
	eg_workload_list_free(&wl);
	printf("  L1  %u passed, %u failed, %u errors\n", tot.passed,
	       tot.failed, tot.errors);
	eg__summary(summary, run, o.engine, &tot, tap, junit, NULL, NULL, NULL,
		    rc);

	/* L2: 4 ranks in 2 virtual nodes and the rest of the quick set */
	eg_l1_totals_t t2;
	char tap2[4200], junit2[4200];
	snprintf(tap2, sizeof(tap2), "%s/l2.tap", run);
	snprintf(junit2, sizeof(junit2), "%s/l2.junit.xml", run);
	eg_l2_opts_t o2 = {.set = EG_L2_QUICK,
			   .tap_path = tap2,
			   .junit_path = junit2,
			   .workdir = run,
			   .iters = 2,
			   .timeout_s = 30,
			   .verbose = o.verbose};
	printf("  L2  a2a and dense over libfabric, one job per "
	       "configuration ...\n");
	fflush(stdout);
	int rc2 = eg_l2_run(&o2, &t2);
	printf("  L2  %u passed, %u failed, %u errors\n", t2.passed, t2.failed,
	       t2.errors);
	if (rc2 == EG_EXIT_HARD || rc == EG_EXIT_HARD)
		rc = EG_EXIT_HARD;
	else if (rc2 == EG_EXIT_FAIL || rc == EG_EXIT_FAIL)
		rc = EG_EXIT_FAIL;
	if (eg__summary(summary, run, o.engine, &tot, tap, junit, &t2, tap2,
			junit2, rc) < 0)
		rc = EG_EXIT_HARD;

	/* performance: the local profile's sweeps and its gates */
	eg_perf_run_opts_t po = {
	    .apply_gates = 1, .progress = -1, .verbose = o.verbose};
	eg_perf_totals_t pt;
	printf("  perf  profile local: sweeps, then gates/local.gate ...\n");
	fflush(stdout);
	int rc3 = eg_perf_run_profile("local", run, &po, &pt);
	printf("  perf  %u of %u points measured, %u failed; gates exit %d; "
	       "results %s\n",
	       pt.measured, pt.points, pt.failed, pt.gate_exit, pt.results);
	if (rc3 == EG_EXIT_HARD)
		rc = EG_EXIT_HARD;
	else if (rc3 == EG_EXIT_FAIL && rc != EG_EXIT_HARD)
		rc = EG_EXIT_FAIL;
	printf("reports:\n  %s\n  %s\n  %s\n  %s\n  %s\n", tap, junit, tap2,
	       junit2, summary);
	printf("%u passed, %u failed\n", tot.passed + t2.passed,
	       tot.failed + tot.errors + t2.failed + t2.errors);
	return rc;
}
