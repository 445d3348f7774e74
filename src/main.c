/* epgate: entry point and subcommand dispatch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "lib/suite/suite.h"
#include "cmd_bench.h"
#include "cmd_gate.h"
#include "lib/suite/cmd_gpu.h"
#include "lib/suite/perf.h"
#include "cmd_launch.h"

static void eg__usage(FILE *f)
{
	fputs("usage: epgate <command> [options]\n"
	      "\n"
	      "Test-and-verification suite for expert-parallel "
	      "dispatch/combine.\n"
	      "\n"
	      "commands:\n"
	      "  run      the main job on the local profile: every suite, one\n"
	      "           run folder with TAP, JUnit and a JSON summary\n"
	      "  check    L1 correctness of an engine over a workload matrix\n"
	      "  version  print the version\n"
	      "  help     this text\n"
	      "\n"
	      "'epgate <command> --help' describes each command.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		eg__usage(stderr);
		return EG_EXIT_HARD;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "check"))
		return eg_cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return eg_cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "launch"))
		return eg_cmd_launch(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench"))
		return eg_cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "gate"))
		return eg_cmd_gate(argc - 1, argv + 1);
	if (!strcmp(cmd, "l2-gpu-rank"))
		return eg_cmd_l2_gpu_rank(argc - 1, argv + 1);
	if (!strcmp(cmd, "perf-rank"))
		return eg_cmd_perf_rank(argc - 1, argv + 1);
	if (!strcmp(cmd, "l2-rank"))
		return eg_cmd_l2_rank(argc - 1, argv + 1);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("epgate %s\n", PACKAGE_VERSION);
		return EG_EXIT_PASS;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		eg__usage(stdout);
		return EG_EXIT_PASS;
	}
	fprintf(stderr, "epgate: unknown command \"%s\"\n", cmd);
	eg__usage(stderr);
	return EG_EXIT_HARD;
}
