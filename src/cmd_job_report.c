/* epgate job-report: a batch job's steps file to TAP and JUnit
 * (lib/suite/job_report.c). */
#include <getopt.h>
#include <stdio.h>

#include "cmd_job.h"
#include "epgate/report.h"
#include "lib/suite/job_report.h"

#define EG__PROG "epgate job-report"

static void eg__usage(FILE *f)
{
	fputs("usage: epgate job-report --steps FILE --tap FILE --junit FILE\n"
	      "                         [--workload FILE] [--suite NAME]\n"
	      "\n"
	      "TAP and JUnit for the steps of a batch job, as the sbatch\n"
	      "path writes them (slurm/epgate.sbatch, docs/slurm.md): one\n"
	      "point per step, and for L2 steps one per workload of their\n"
	      "world, from l2-rank's results lines; a workload a step did\n"
	      "not reach, or a step that did not run, is a skip that says\n"
	      "why. The steps file has one step per line, tab-separated:\n"
	      "  KIND NAME WORLD EXIT SECONDS RESULTS LOG [NOTE]\n"
	      "(EXIT - : not run, NOTE says why; RESULTS, LOG may be -).\n"
	      "\n"
	      "  --steps FILE      the steps file\n"
	      "  --tap FILE        TAP 14 report\n"
	      "  --junit FILE      JUnit XML report\n"
	      "  --workload FILE   the L2 matrix (default: the shipped one)\n"
	      "  --suite NAME      JUnit suite name (default: epgate-job)\n"
	      "  --tap-version V   13 for older prove (default: 14)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Exit status: 0 something passed and nothing failed, 1 a step\n"
	      "or a case failed, 77 nothing ran, 99 bad input.\n",
	      f);
}

int eg_cmd_job_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"steps", required_argument, NULL, 's'},
	    {"tap", required_argument, NULL, 't'},
	    {"junit", required_argument, NULL, 'j'},
	    {"workload", required_argument, NULL, 'w'},
	    {"suite", required_argument, NULL, 'S'},
	    {"tap-version", required_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	eg_job_report_opts_t o = {0};
	eg_job_totals_t t;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.steps_path = optarg;
			break;
		case 't':
			o.tap_path = optarg;
			break;
		case 'j':
			o.junit_path = optarg;
			break;
		case 'w':
			o.workload_path = optarg;
			break;
		case 'S':
			o.suite = optarg;
			break;
		case 'V':
			if (eg_tap_set_version(eg_tap_version_parse(optarg))) {
				fprintf(stderr,
					EG__PROG ": --tap-version \"%s\": want "
						 "13 or 14\n",
					optarg);
				return EG_EXIT_HARD;
			}
			break;
		case 'h':
			eg__usage(stdout);
			return EG_EXIT_PASS;
		case ':':
			fprintf(stderr, EG__PROG ": %s needs a value\n",
				argv[optind - 1]);
			return EG_EXIT_HARD;
		default:
			fprintf(stderr, EG__PROG ": unknown option \"%s\"\n",
				argv[optind - 1]);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc || !o.steps_path || !o.tap_path || !o.junit_path) {
		fputs(EG__PROG ": give --steps, --tap and --junit; see "
			       "--help\n",
		      stderr);
		return EG_EXIT_HARD;
	}
	rc = eg_job_report(&o, &t);
	if (rc != EG_EXIT_HARD)
		printf("job-report: %u step(s), %u ran, %u failed; cases: %u "
		       "passed, %u failed, %u errors, %u skipped\n",
		       t.steps, t.steps_run, t.steps_failed, t.passed, t.failed,
		       t.errors, t.skipped);
	return rc;
}
