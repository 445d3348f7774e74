/* The suites (L1, L2, check, the rank programs, a job's report) and the
 * helpers the commands above them share: arguments, run folders. */
#ifndef EG_SUITE_SUITE_H
#define EG_SUITE_SUITE_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stddef.h>
#include <stdio.h>

#include "epgate/epgate.h"
#include "epgate/opts_groups.h"
#include "epgate/step.h"
#include "lib/base/data_path.h"
#include "epgate/world.h"

/* One rank of an L2 job (under `epgate launch` or srun): every workload
 * of the file whose world is the job's size, through a multi-process
 * engine in a memory space, verified by the step on every rank; the
 * verdicts meet at rank 0, which appends one results line per workload.
 * memory "host": the host engines (a2a, dense, planted faults) over
 * libfabric; "cuda": the GPU engines over NCCL, with the transport
 * evidence line and the fabric-hmem line. */
typedef struct eg_rank_opts {
	const char *prog;    /* for messages and repro lines */
	const char *memory;  /* "host" or "cuda" */
	const char *engine;  /* host: multi-process engines; cuda: a2a,
				dense */
	const char *file;    /* NULL: the L2 matrix */
	const char *filter;  /* only workloads whose name contains it */
	const char *results; /* rank 0 appends JSON lines, or NULL */
	const char *log_dir; /* cuda only: NCCL's log folder */
	eg_job_opts_t job;   /* iters per workload */
	/* num_comms; host: the libfabric provider (NULL: per pair); cuda
	 * only: the path asked for, the xnode mode, the device */
	eg_xport_cli_t xport;
	eg_overrides_t overrides; /* --KEY=VALUE */
} eg_rank_opts_t;

/* Returns an automake exit code: 0 all verified, 1 a mismatch or an
 * engine error (or, on cuda, another path than asked), 77 not built for
 * the memory or no GPU, 99 bad input or a harness error. */
int eg_rank_run(const eg_rank_opts_t *o);
/* The CUDA devices this process sees: -1 when built without CUDA and
 * NCCL (lib/suite/rank_cuda.c). */
int eg_suite_cuda_devices(void);

/* L2: multi-process engines over real transports, one `epgate launch`
 * per configuration; results become TAP points and JUnit cases as each
 * configuration finishes. */
typedef struct eg_l2_config {
	uint32_t world, ranks_per_node, num_comms;
	const char *engine;   /* a2a, dense */
	const char *provider; /* shm, tcp, or NULL: per pair */
	const char *path;     /* GPU jobs (l2-gpu-rank): nvlink, xnode;
				 NULL: a host job (l2-rank) */
} eg_l2_config_t;

typedef enum eg_l2_set {
	EG_L2_QUICK = 0, /* make check and epgate run */
	EG_L2_FULL = 1,	 /* epgate check --full */
	EG_L2_GPU = 2,	 /* epgate run's GPU stage: the NCCL engines on
			    GPU memory, two ranks (one GPU each) */
} eg_l2_set_t;

typedef struct eg_l2_opts {
	eg_l2_set_t set;
	const char *tap_path, *junit_path;
	const char *workdir; /* logs and per-config results */
	unsigned iters;
	double timeout_s; /* per blocking step, for each job */
	int verbose;
	/* What every job's ranks run (passed on to l2-rank): */
	const char *file;   /* workloads; NULL: the L2 matrix */
	const char *filter; /* only workloads whose name contains it */
	const eg_overrides_t *overrides; /* --KEY=VALUE, or NULL */
	/* a multi-process engine in place of each configuration's own
	 * (configurations that become the same run once); NULL: theirs */
	const char *engine;
	/* a line per job as it ends (starting with progress, "  L2  ") and
	 * each failure (EG_SAY_FAILURES in full, all with verbose); NULL:
	 * silent */
	FILE *out;
	const char *progress;
	char *skip_why; /* 600 bytes: why the last skipped job skipped */
	/* a plugin's hangs it takes (0: every one): at max_hangs, counting
	 * hangs_before (L1's, with --full) while they outnumber passes
	 * (passed_before: L1's), no more job runs and the
	 * workloads left are skips (eg_suite_hang_stop) */
	unsigned max_hangs, hangs_before, passed_before;
} eg_l2_opts_t;

/* Returns an automake exit code; totals like L1. */
struct eg_l1_totals;
int eg_l2_run(const eg_l2_opts_t *o, struct eg_l1_totals *tot);

/* Where a command writes (lib/suite/paths.c); each prints one line
 * "PROG: OPTION PATH: why" and returns <0 when it cannot:
 * a new run folder under reports (reports created as by mkdir -p); */
int eg_suite_run_dir(const char *prog, const char *reports, char *run,
		     size_t len);
/* the run folder removed when nothing was written into it (a command
 * that failed before running anything leaves none); 1 when removed; */
int eg_suite_run_dir_drop(const char *run);
/* a report file that can be created: its folder exists and is
 * writable ("-", stdout, always can). */
int eg_suite_out_file(const char *prog, const char *opt, const char *path);

/* L1: every workload through an in-process engine, verified against the
 * reference; one TAP point and one JUnit case per workload. */
typedef struct eg_l1_opts {
	const char *engine;
	const char *tap_path;
	const char *junit_path;
	unsigned iters; /* runs per workload, iter = base .. base+iters-1 */
	int verbose;
	/* failures (EG_SAY_FAILURES in full, all with verbose) and a
	 * progress line every few seconds; NULL: silent */
	FILE *out;
	const char *progress; /* the progress lines' start ("  L1  ") */
	/* a one-rank-per-process engine's cases beyond world 1 run as jobs
	 * of ranks (lib/suite/check_jobs.c): their files go here */
	const char *workdir;
	/* after this many hangs (0: never) the cases left are not run but
	 * skipped, saying why (eg_suite_hang_stop) */
	unsigned max_hangs;
} eg_l1_opts_t;

typedef struct eg_l1_totals {
	unsigned run, passed, failed, skipped, errors;
	unsigned crashed; /* the process under test ended (EG_STATUS_CRASH) */
	char why[300];	  /* the first skip's reason, or "" */
	unsigned hangs;	  /* of failed: cases that hung (a deadline) */
	unsigned not_run; /* of skipped: left after max_hangs hangs */
} eg_l1_totals_t;

/* How many hangs `epgate check` takes before it stops running cases
 * (docs/plugins.md, "Hangs"): a library that hangs in most shapes would
 * cost a deadline each. */
#define EG_MAX_HANGS_DEFAULT 3u
#define EG_MAX_HANGS_UNSET   (~0u) /* --max-hangs not given */
/* given, else EPGATE_MAX_HANGS, else the default; <0 (said on stderr
 * as "PROG: EPGATE_MAX_HANGS ...") when the variable is not a count. */
long eg_suite_max_hangs(const char *prog, unsigned given);
/* How a case's engine error reads: 'returned "ERR"', or, for a call
 * that passed its deadline (EG_ETIMEDOUT's text), "did not return
 * (deadline expired)": the call never returned anything. */
const char *eg_suite_engine_said(const char *err, char *buf, size_t len);
/* 1 when hangs (so far, of both stages) reached max (not 0) and
 * outnumber the cases that passed: a library that hangs in most shapes
 * stops the run, one that hangs in a few (an empty dispatch, a step
 * with no tokens) has every other case run. */
int eg_suite_hang_stop(unsigned hangs, unsigned passed, unsigned max);
/* Why a case left is not run: "not run: epgate check stopped after 3
 * hangs (--max-hangs 3; 0 runs every case)". */
void eg_suite_hang_why(unsigned max, char *buf, size_t len);
/* The progress line, once, as check stops: "  L1  stopped after 3
 * hangs (...): the cases left are skipped" (nothing when out is NULL). */
void eg_suite_hang_say(FILE *out, const char *progress, unsigned max);

/* A case whose process ended under it (a signal, abort(), exit()): how,
 * where, and what it said last (a library's assert text). */
typedef struct eg_crash {
	char what[320];	  /* "killed by signal 6 (SIGABRT, Aborted)" */
	int sig;	  /* the signal, 0 for an exit */
	int status;	  /* its exit status, -1 for a signal */
	int rank;	  /* the rank that ended, -1 in process */
	char where[256];  /* "w3-base, iteration 0, dispatch", or "" */
	char output[800]; /* its last lines, newline-separated, or "" */
} eg_crash_t;

/* A crash from an EG_ECRASH engine message: its first line is what,
 * the lines after it the process's last output; signal and status read
 * from "signal N" and "status N". */
void eg_crash_from_msg(const char *msg, eg_crash_t *c);
/* The diag of a crashed case: workload, stage, iteration (and step of a
 * steps workload), "crash" (what), "signal" (SIGABRT), "exit_status",
 * "rank", "where", "output" (its last lines, one string), "repro". */
json_t *eg_crash_diag(const eg_workload_t *w, const char *stage, unsigned step,
		      unsigned iter, const eg_crash_t *c, const char *repro);

/* Diagnostics of a failed case (lib/suite/diag.c). */
json_t *eg_case_diag(const eg_workload_t *w, const eg_verdict_t *v,
		     const char *stage, unsigned iter, int engine_err,
		     const char *repro);
/* A failed case on the terminal, from its diag (eg_case_diag, or a
 * results line's "diag"): "FAIL NAME: STAGE, iteration I, rank R: wrong
 * FIELD N, ..." (or the engine's or the harness's error; "CRASH NAME:
 * ..." with its last output for eg_crash_diag's), the first mismatch
 * (every one kept with verbose) and "  repro: COMMAND". */
void eg_case_say(FILE *f, const char *name, const json_t *diag, int verbose);
/* Appends " s" to the command in buf, quoted for sh when it needs it. */
void eg_shell_append(char *buf, size_t len, const char *s);
/* Appends "VAR=value" for the environment that changes what a case does
 * (EPGATE_FAULT, FI_PROVIDER), for a repro line's start. */
void eg_repro_env(char *buf, size_t len);
/* An automake exit code as the word a closing line starts with: PASS,
 * FAIL, SKIP (77) or ERROR (99). */
const char *eg_exit_word(int rc);
/* How many failures a command says in full before it only counts them
 * (every one with -v; all are in the TAP and JUnit). */
#define EG_SAY_FAILURES 5

/* The count of the failures not said in full ("... and N more"), to out
 * (nothing when out is NULL or all were said). */
struct eg_l1_totals;
void eg_say_more_failures(FILE *out, unsigned said,
			  const struct eg_l1_totals *tot);
/* An L1 or L2 run's exit code: 99 after a hard error, 1 when a case
 * failed, 77 when none ran but skipped, else 0. */
int eg_suite_exit(const struct eg_l1_totals *tot, int hard);

/* Rank 0's results line for a workload from every rank's verdict:
 * {"workload", "status" (pass, skip, fail, error), the members of extra (may
 * be NULL; its references are taken), "diag" when not passed, with the
 * "rank" of the first error, else of the first mismatch}. */
/* Every rank's engine declined the workload at create (EG_ENOSYS: a
 * plugin's declared limits): a skip, as in L1, not a failure. */
int eg_rank_declined(const eg_rank_verdict_t *all, uint32_t W);
json_t *eg_rank_results_line(const eg_workload_t *w,
			     const eg_rank_verdict_t *all, uint32_t W,
			     const char *repro, json_t *extra);
/* Writes line as one compact JSON line, flushed; consumes line. */
int eg_put_json_line(FILE *f, json_t *line);

/* Returns an automake exit code (0, 1, 77, 99). */
int eg_l1_run(const eg_l1_opts_t *o, const eg_workload_list_t *wl,
	      eg_l1_totals_t *tot);

/* Applies the overrides and validates; on error prints
 * "<prog>: --key=value: message" and returns <0. */
int eg_overrides_apply(const eg_overrides_t *o, eg_workload_t *w,
		       const char *prog);

/* Loads the workloads a check/run asks for: the file (or the default L1
 * matrix when file is NULL and there are no overrides; a single default
 * workload when there are overrides only), overrides applied. Prints
 * errors; returns <0 on failure. */
int eg_cli_load_workloads(const char *prog, const char *file,
			  const eg_overrides_t *o, eg_workload_list_t *wl);
/* The workloads of file whose name contains filter (NULL: all), then
 * the keys on those only: a key need not suit the workloads left out.
 * Prints errors; returns <0 on failure. */
int eg_cli_load_filtered(const char *prog, const char *file, const char *filter,
			 const eg_overrides_t *o, eg_workload_list_t *wl);

/* The workloads of a data file shipped with epgate (rel as for
 * eg_find_data, e.g. "fixtures/workloads/plugin-w1.ini"), no keys.
 * Prints errors; returns <0 on failure. */
int eg_cli_load_data(const char *prog, const char *rel, eg_workload_list_t *wl);
/* Moves src's workloads to the end of dst (src left empty). */
int eg_cli_list_append(eg_workload_list_t *dst, eg_workload_list_t *src);
/* Keeps, in order, the workloads of world. */
void eg_cli_keep_world(eg_workload_list_t *wl, uint32_t world);
/* 1 when engine names a plugin ("plugin:..."): an EP library under
 * test, whose default matrices add the plugin battery and whose
 * failures are verdicts (docs/plugins.md). */
int eg_cli_is_plugin(const char *engine);
/* A plugin's battery, the workloads its default matrices add: at world
 * 1 (in process) and over ranks. */
#define EG_PLUGIN_BATTERY_W1 "fixtures/workloads/plugin-w1.ini"
#define EG_PLUGIN_BATTERY_L2 "fixtures/workloads/plugin-l2.ini"
/* The production-scale tier (world 1, the sizes people run): opt-in from
 * check (--scale), in stress's default cases. */
#define EG_SCALE_TIER "fixtures/workloads/scale.ini"

/* epgate check (lib/suite/check.c): L1 of an engine over the selected
 * workloads (or, with l2, the quick L2 set instead; with full, L1 and
 * then the full L2 set); reports default to a new run folder under
 * reports. Returns an automake exit code. */
typedef struct eg_check_opts {
	const char *engine;	   /* "self" */
	const char *workload_file; /* NULL: the L1 matrix */
	eg_overrides_t overrides;  /* workload keys on top */
	const char *filter;	   /* names containing it, or NULL */
	eg_job_opts_t job;	   /* iters */
	int quick, list, l2, full, verbose;
	int scale;		/* the scale tier after the workloads */
	eg_report_cli_t report; /* tap, junit: NULL = RUN/... */
	unsigned max_hangs;	/* EG_MAX_HANGS_UNSET: the variable's */
} eg_check_opts_t;
int eg_check(const eg_check_opts_t *o);

#endif
