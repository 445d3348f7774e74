/* epgate: the command table. `epgate help` prints it whole; `epgate help
 * CMD` is `epgate CMD --help`. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/signals.h"
#include "lib/suite/suite.h"
#include "src/cmd.h"

typedef struct eg__cmd {
	const char *name;
	eg_cmd_fn *run;
	const char *summary; /* one line */
	int internal;	     /* run by other commands, not by people */
} eg__cmd_t;

static eg_cmd_fn eg__version, eg__help;

static const eg__cmd_t eg__cmds[] = {
    {"run", eg_cmd_run,
     "the main job on the local profile: every suite, one run folder", 0},
    {"check", eg_cmd_check,
     "correctness of an engine over a workload matrix (L1, --l2)", 0},
    {"stress", eg_cmd_stress,
     "an engine called again and again: failure rates, races, leaks", 0},
    {"launch", eg_cmd_launch, "N local ranks of a command (-n N -- CMD ...)",
     0},
    {"bench", eg_cmd_bench,
     "measurements: profile, list, engine, raw, overhead, ab, calibrate", 0},
    {"gate", eg_cmd_gate, "judges results files by a gate file", 0},
    {"report", eg_cmd_report,
     "an HTML report of a run folder, results or a history", 0},
    {"plugin", eg_cmd_plugin,
     "a new plugin from the template (new), what one declares (info)", 0},
    {"version", eg__version, "prints the version", 0},
    {"help", eg__help, "this text; help CMD: CMD --help", 0},
    {"l2-rank", eg_cmd_l2_rank, "one rank of an L2 job (check --l2)", 1},
    {"l2-gpu-rank", eg_cmd_l2_gpu_rank, "one rank of a GPU L2 job", 1},
    {"bench-rank", eg_cmd_bench_rank,
     "one rank of a sweep job (bench profile, srun)", 1},
    {"preflight", eg_cmd_preflight,
     "one node's check before a batch job's steps (slurm/epgate.sbatch)", 1},
    {"job-report", eg_cmd_job_report,
     "a batch job's steps as TAP and JUnit (slurm/epgate.sbatch)", 1},
};
#define EG__N_CMDS (sizeof(eg__cmds) / sizeof(eg__cmds[0]))

static const eg__cmd_t *eg__find(const char *name)
{
	for (size_t i = 0; i < EG__N_CMDS; i++)
		if (!strcmp(eg__cmds[i].name, name))
			return &eg__cmds[i];
	return NULL;
}

static void eg__usage(FILE *f)
{
	fputs("usage: epgate <command> [options]\n"
	      "\n"
	      "Test-and-verification suite for expert-parallel "
	      "dispatch/combine.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (int internal = 0; internal < 2; internal++) {
		if (internal)
			fputs("\ninternal commands (other commands run "
			      "them):\n",
			      f);
		for (size_t i = 0; i < EG__N_CMDS; i++)
			if (eg__cmds[i].internal == internal)
				fprintf(f, "  %-12s %s\n", eg__cmds[i].name,
					eg__cmds[i].summary);
	}
	fputs("\n'epgate help CMD' or 'epgate CMD --help' describes each "
	      "command.\n",
	      f);
}

static int eg__version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
		fprintf(stderr, "epgate version: unexpected argument \"%s\"\n",
			argv[1]);
		return EG_EXIT_HARD;
	}
	if (argc > 1) {
		puts("usage: epgate version\n\nPrints the version.");
		return EG_EXIT_PASS;
	}
	printf("epgate %s\n", PACKAGE_VERSION);
	return EG_EXIT_PASS;
}

static int eg__unknown(const char *name)
{
	fprintf(stderr,
		"epgate: unknown command \"%s\"; 'epgate help' lists them\n",
		name);
	return EG_EXIT_HARD;
}

static int eg__help(int argc, char **argv)
{
	static char help[] = "--help";
	char *sub[3];
	const eg__cmd_t *c;

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		eg__usage(stdout);
		return EG_EXIT_PASS;
	}
	if (argc > 2) {
		fprintf(stderr, "epgate help: unexpected argument \"%s\"\n",
			argv[2]);
		return EG_EXIT_HARD;
	}
	if (!(c = eg__find(argv[1])))
		return eg__unknown(argv[1]);
	sub[0] = argv[1];
	sub[1] = help;
	sub[2] = NULL;
	return eg_cmd_sub("epgate", c->name, c->run, 2, sub);
}

int main(int argc, char **argv)
{
	const eg__cmd_t *c;

	eg_signals_own(); /* before any thread: docs/world.md, "Signals" */
	if (argc < 2) {
		eg__usage(stderr);
		return EG_EXIT_HARD;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return eg__help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return eg__version(1, argv);
	if (!(c = eg__find(argv[1])))
		return eg__unknown(argv[1]);
	return eg_cmd_sub("epgate", c->name, c->run, argc - 1, argv + 1);
}
