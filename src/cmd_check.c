/* epgate check: L1 correctness of an engine over a matrix of workloads. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"

#define EG__QUICK_MAX 12

static void eg__check_usage(FILE *f)
{
	fputs(
	    "usage: epgate check [options] [--KEY=VALUE ...]\n"
	    "\n"
	    "Runs every workload through an engine and verifies dispatch and\n"
	    "combine against the dense reference (bit-exact in exact mode).\n"
	    "\n"
	    "  --workload FILE  workloads file (INI, one [section] each);\n"
	    "                   default: fixtures/workloads/l1-matrix.ini, or\n"
	    "                   one workload when only --KEY options are "
	    "given\n"
	    "  --engine NAME    engine under test (default: self), or\n"
	    "                   plugin:PATH[,key=value...] (world 1 only)\n"
	    "  --iters N        iterations per workload: same routing, new\n"
	    "                   values each time, buffers reused (default: 2)\n"
	    "  --filter TEXT    only workloads whose name contains TEXT\n"
	    "  --quick          at most 12 workloads spread over the matrix\n"
	    "  --list           print the selected workloads and exit\n"
	    "  --tap FILE       TAP 14 report (default: RUN/check.tap)\n"
	    "  --junit FILE     JUnit XML report (default: "
	    "RUN/check.junit.xml)\n"
	    "  --reports DIR    where run folders go (default: reports/runs)\n"
	    "  --l2             L2 instead: multi-process engines (a2a, "
	    "dense)\n"
	    "                   over libfabric, one launch per configuration\n"
	    "  --full           L1, then L2 over the full configuration "
	    "matrix\n"
	    "  -v, --verbose    print each failure's details on stderr\n"
	    "  -h, --help       this text\n"
	    "\n"
	    "Workload keys, applied to every workload (docs/workloads.md):\n"
	    "  --name --world --experts --topk --hidden --dtype --tokens\n"
	    "  --zero_ranks --routing --mask --data --seed --iter\n"
	    "\n"
	    "Exit status: 0 all passed, 1 a check failed, 77 nothing ran,\n"
	    "99 bad input or harness error.\n",
	    f);
}

/* Keeps the workloads selected by filter and quick, in order. */
static void eg__select(eg_workload_list_t *wl, const char *filter, int quick)
{
	size_t n = 0;
	for (size_t i = 0; i < wl->n; i++) {
		if (filter && !strstr(wl->items[i].name, filter)) {
			eg_workload_fini(&wl->items[i]);
			continue;
		}
		wl->items[n++] = wl->items[i];
	}
	wl->n = n;
	if (quick && n > EG__QUICK_MAX) {
		/* evenly spaced picks keep every group of the matrix */
		size_t k = 0;
		for (size_t j = 0; j < EG__QUICK_MAX; j++) {
			size_t pick = j * n / EG__QUICK_MAX;
			eg_workload_t tmp = wl->items[k];
			wl->items[k] = wl->items[pick];
			wl->items[pick] = tmp;
			k++;
		}
		for (size_t i = k; i < n; i++)
			eg_workload_fini(&wl->items[i]);
		wl->n = k;
	}
}

/* L2 over the quick or full configuration set; reports default to the
 * run folder, which also keeps each job's log. */
static int eg__check_l2(const eg_l1_opts_t *l1, const char *reports, int full)
{
	char run[4096], tap[4200], junit[4200];
	eg_l2_opts_t o = {.set = full ? EG_L2_FULL : EG_L2_QUICK,
			  .iters = l1->iters,
			  .timeout_s = 30,
			  .verbose = l1->verbose,
			  .workdir = run};
	eg_l1_totals_t tot;
	const char *t = getenv("EPGATE_TIMEOUT");
	int rc;

	if (t && atof(t) > 0)
		o.timeout_s = atof(t);
	rc = eg_run_dir_create(reports, run, sizeof(run));
	if (rc < 0) {
		fprintf(stderr, "epgate check: --reports %s: %s\n", reports,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	snprintf(tap, sizeof(tap), "%s/check-l2.tap", run);
	snprintf(junit, sizeof(junit), "%s/check-l2.junit.xml", run);
	o.tap_path = l1->tap_path ? l1->tap_path : tap;
	o.junit_path = l1->junit_path ? l1->junit_path : junit;
	rc = eg_l2_run(&o, &tot);
	fprintf(stderr, "epgate check: L2 (%s), %u results; job logs in %s\n",
		full ? "full" : "quick", tot.run, run);
	fprintf(stderr, "  TAP:   %s\n  JUnit: %s\n", o.tap_path, o.junit_path);
	fprintf(stderr, "%u passed, %u failed\n", tot.passed,
		tot.failed + tot.errors);
	return rc;
}

int eg_cmd_check(int argc, char **argv)
{
	enum {
		O_WORKLOAD = 256,
		O_ENGINE,
		O_ITERS,
		O_FILTER,
		O_QUICK,
		O_LIST,
		O_TAP,
		O_JUNIT,
		O_REPORTS,
		O_L2,
		O_FULL
	};
	struct option opts[48] = {
	    {"workload", required_argument, NULL, O_WORKLOAD},
	    {"engine", required_argument, NULL, O_ENGINE},
	    {"iters", required_argument, NULL, O_ITERS},
	    {"filter", required_argument, NULL, O_FILTER},
	    {"quick", no_argument, NULL, O_QUICK},
	    {"list", no_argument, NULL, O_LIST},
	    {"tap", required_argument, NULL, O_TAP},
	    {"junit", required_argument, NULL, O_JUNIT},
	    {"reports", required_argument, NULL, O_REPORTS},
	    {"l2", no_argument, NULL, O_L2},
	    {"full", no_argument, NULL, O_FULL},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	};
	const char *file = NULL, *filter = NULL, *reports = "reports/runs";
	eg_l1_opts_t o = {.engine = "self", .iters = 2};
	eg_overrides_t ov = {0};
	eg_workload_list_t wl = {0};
	eg_l1_totals_t tot;
	char run[4096], tap[4200], junit[4200];
	int quick = 0, list = 0, l2 = 0, full = 0, c, rc;
	char l2tap[4300], l2junit[4300];

	if (eg_cli_add_workload_options(opts, 48) < 0)
		return EG_EXIT_HARD;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case O_WORKLOAD:
			file = optarg;
			break;
		case O_ENGINE:
			o.engine = optarg;
			break;
		case O_ITERS:
			o.iters = (unsigned)strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end ||
			    o.iters == 0 || o.iters > 1000000) {
				fprintf(stderr,
					"epgate check: --iters: \"%s\" is not "
					"an integer in [1, 1000000]\n",
					optarg);
				return EG_EXIT_HARD;
			}
			break;
		case O_FILTER:
			filter = optarg;
			break;
		case O_QUICK:
			quick = 1;
			break;
		case O_LIST:
			list = 1;
			break;
		case O_TAP:
			o.tap_path = optarg;
			break;
		case O_JUNIT:
			o.junit_path = optarg;
			break;
		case O_L2:
			l2 = 1;
			break;
		case O_FULL:
			full = 1;
			break;
		case O_REPORTS:
			reports = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			eg__check_usage(stdout);
			return EG_EXIT_PASS;
		default:
			if (c >= EG_OPT_WORKLOAD) {
				if (eg_overrides_add(&ov, "epgate check", c,
						     optarg) < 0)
					return EG_EXIT_HARD;
				break;
			}
			fputs("epgate check: see 'epgate check --help'\n",
			      stderr);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "epgate check: unexpected argument \"%s\"\n",
			argv[optind]);
		return EG_EXIT_HARD;
	}
	const eg_engine_ops_t *ops = eg_engine_find(o.engine);
	if (!ops) {
		fprintf(stderr,
			"epgate check: --engine: unknown engine \"%s\"\n",
			o.engine);
		return EG_EXIT_HARD;
	}
	if (l2 && !full)
		return eg__check_l2(&o, reports, 0);
	if (eg_cli_load_workloads("epgate check", file, &ov, &wl) < 0) {
		eg_workload_list_free(&wl);
		return EG_EXIT_HARD;
	}
	eg__select(&wl, filter, quick);
	if (list) {
		for (size_t i = 0; i < wl.n; i++) {
			char s[256];
			eg_workload_summary(&wl.items[i], s, sizeof(s));
			printf("%-28s %s\n", wl.items[i].name, s);
		}
		eg_workload_list_free(&wl);
		return EG_EXIT_PASS;
	}
	if (!o.tap_path || !o.junit_path) {
		rc = eg_run_dir_create(reports, run, sizeof(run));
		if (rc < 0) {
			fprintf(stderr,
				"epgate check: --reports %s: cannot create a "
				"run folder: %s\n",
				reports, eg_strerror(rc));
			eg_workload_list_free(&wl);
			return EG_EXIT_HARD;
		}
		snprintf(tap, sizeof(tap), "%s/check.tap", run);
		snprintf(junit, sizeof(junit), "%s/check.junit.xml", run);
		if (!o.tap_path)
			o.tap_path = tap;
		if (!o.junit_path)
			o.junit_path = junit;
	}
	rc = eg_l1_run(&o, &wl, &tot);
	eg_workload_list_free(&wl);
	fprintf(stderr, "epgate check: engine %s, %u workloads\n", o.engine,
		tot.run);
	fprintf(stderr, "  TAP:   %s\n  JUnit: %s\n", o.tap_path, o.junit_path);
	fprintf(stderr, "%u passed, %u failed\n", tot.passed,
		tot.failed + tot.errors);
	if (full) {
		/* L2 reports beside L1's */
		snprintf(l2tap, sizeof(l2tap), "%s.l2.tap", o.tap_path);
		snprintf(l2junit, sizeof(l2junit), "%s.l2.xml", o.junit_path);
		o.tap_path = l2tap;
		o.junit_path = l2junit;
		int rc2 = eg__check_l2(&o, reports, 1);
		if (rc2 == EG_EXIT_HARD || rc == EG_EXIT_HARD)
			return EG_EXIT_HARD;
		if (rc2 == EG_EXIT_FAIL || rc == EG_EXIT_FAIL)
			return EG_EXIT_FAIL;
		return rc == EG_EXIT_PASS || rc2 == EG_EXIT_PASS ? EG_EXIT_PASS
								 : rc;
	}
	return rc;
}
