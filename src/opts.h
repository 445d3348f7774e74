/* The command line of every epgate command: one parser (getopt_long
 * underneath) and the option groups several commands share, each parsed
 * in one place (as fabtests composes its option fragments): a command
 * names its own options and the groups it takes, and gets back filled
 * option structs, its positional arguments, or the exit code to return
 * (0 after --help; 99 after a bad argument, with one line on stderr that
 * names it). */
#ifndef EPGATE_SRC_OPTS_H
#define EPGATE_SRC_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "epgate/opts_groups.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep.h"

/* ---- option groups ---------------------------------------------------- */

/* The groups (job, transport, reports, workload) are the library's
 * (epgate/opts_groups.h): a command points the parser at those of its
 * library option struct, and the parser fills them there. */

/* The benchmarks' job (bench engine, bench raw): -n/--iters N (20 timed
 * steps), -w/--warmup N, --timeout S (60 s per blocking step). */
extern const eg_job_opts_t eg_cli_bench_job;
/* Their warm-up: the steps given, else 3 over fabric and 5 over NCCL. */
unsigned eg_cli_bench_warmup(const eg_job_opts_t *j, int nccl);

/* Campaign (the commands that run a profile): --results FILE,
 * --gates FILE, --launches L, --remeasure R, --seed N into an
 * eg_bench_run_opts_t (lib/campaign/sweep.h), whose defaults eg_cli_parse
 * sets (the gates applied, progress as stderr allows); and the one
 * argument, the profile's NAME or FILE. */

/* ---- the parser ------------------------------------------------------- */

#define EG_CLI_ARGS_MAX 4
#define EG_CLI_ARGS_ALL (~0u) /* max_args: any number, left in argv */
#define EG_CLI_GO	(-1)  /* eg_cli_parse: go on */

/* A command's own option. One with str, flag, uint, real or list needs
 * no code: its value is stored at str (one of choices, when given), 1 at
 * flag, a number in range at uint ([lo, hi]) or real ((lo, hi]), with
 * the messages of eg_cli_choice, eg_cli_uint and eg_cli_real, which name
 * an option with a letter id by its letter ("-n"), or, repeatable,
 * appended to list ("OPT: at most MAX" past max); any other goes to the
 * command's parse with id, with a value unless bare. */
typedef struct eg_cli_opt {
	const char *name;
	int id;		  /* a letter: also its short option; 256..599; 0 */
	const char **str; /* the value goes here */
	int *flag;	  /* set to 1 here */
	int bare;	  /* parse's option takes no value */
	const char *const *choices; /* with str: the values taken */
	unsigned *uint;
	double *real;
	double lo, hi;	   /* uint's or real's range */
	const char **list; /* each value at list[(*n)++] */
	size_t *n, max;	   /* with list: the count, at most max */
} eg_cli_opt_t;

typedef struct eg_cli eg_cli_t;
struct eg_cli {
	const char *prog;	 /* "epgate bench raw": every message's;
				    NULL: argv[0] (eg_cmd_sub) */
	const eg_cli_opt_t *own; /* its long options ({0}-terminated), or
				    NULL */
	/* the command's own options: EG_OK, or <0 after a message */
	int (*parse)(eg_cli_t *c, int id, const char *arg);
	void *ctx;	   /* for parse */
	const char *usage; /* --help's text */
	/* the groups the command takes; NULL: none */
	eg_job_opts_t *job;
	eg_xport_cli_t *xport;
	eg_report_cli_t *report;
	eg_overrides_t *workload;
	eg_bench_run_opts_t *campaign;
	unsigned max_args;    /* positional arguments taken, at most; with
				 EG_CLI_ARGS_ALL any number: argv[rest] on */
	int stop_at_args;     /* the first non-option ends the options, which
				 leaves it and the rest to the command (launch) */
	const char *need_arg; /* set: an argument is required, and this is
				 the error without one */
	/* out */
	unsigned n_args;
	const char *arg[EG_CLI_ARGS_MAX];
	int rest; /* argv index of the first argument left (stop_at_args,
		     EG_CLI_ARGS_ALL) */
};

/* Parses argv (argv[0] is the command's name). Returns EG_CLI_GO, or the
 * exit code to return now. */
int eg_cli_parse(eg_cli_t *c, int argc, char **argv);

/* One line "PROG: message" on stderr; returns EG_EXIT_HARD. */
int eg_cli_error(const eg_cli_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Values. Each returns 0, or prints "PROG: OPT "S": want ..." and returns
 * <0. */
int eg_cli_uint(const eg_cli_t *c, const char *opt, const char *s,
		unsigned long long lo, unsigned long long hi, unsigned *out);
/* Bytes with binary K/M/G suffixes ("4096", "64K", "1M", "1G"). */
int eg_cli_bytes(const eg_cli_t *c, const char *opt, const char *s, size_t lo,
		 size_t hi, size_t *out);
/* A number in (lo, hi]. */
int eg_cli_real(const eg_cli_t *c, const char *opt, const char *s, double lo,
		double hi, double *out);
/* One of choices (NULL-terminated): its index. */
int eg_cli_choice(const eg_cli_t *c, const char *opt, const char *s,
		  const char *const *choices);

#endif
