/* epgate run: the main job on the embedded default (profile "local"):
 * every suite this build has, into one run folder. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static void eg__run_usage(FILE *f)
{
	fputs(
	    "usage: epgate run [options]\n"
	    "\n"
	    "Runs the suites of the local profile and writes TAP, JUnit and a\n"
	    "JSON summary into one run folder. Today: L1, the self engine\n"
	    "over the L1 workload matrix (every workload, 2 iterations).\n"
	    "\n"
	    "  --reports DIR   where run folders go (default: reports/runs)\n"
	    "  --engine NAME   engine under test (default: self)\n"
	    "  -v, --verbose   print each failure's details on stderr\n"
	    "  -h, --help      this text\n"
	    "\n"
	    "Exit status: 0 all passed, 1 a check failed, 77 nothing ran,\n"
	    "99 bad input or harness error.\n",
	    f);
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

	json_t *j = json_pack(
	    "{s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:i, s:s, s:s}, s:i}",
	    "schema", "epgate/run-summary/v1", "profile", "local", "run_dir",
	    run, "l1", "engine", o.engine, "workloads", (int)tot.run, "passed",
	    (int)tot.passed, "failed", (int)tot.failed, "errors",
	    (int)tot.errors, "tap", tap, "junit", junit, "exit", rc);
	if (!j || json_dump_file(j, summary, JSON_INDENT(2)) < 0) {
		fprintf(stderr, "epgate run: cannot write %s\n", summary);
		rc = EG_EXIT_HARD;
	}
	json_decref(j);
	printf("  L1  %u passed, %u failed, %u errors\n", tot.passed,
	       tot.failed, tot.errors);
	printf("reports:\n  %s\n  %s\n  %s\n", tap, junit, summary);
	printf("%u passed, %u failed\n", tot.passed, tot.failed + tot.errors);
	return rc;
}
