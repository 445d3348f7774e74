/* The option groups several commands share, defined once: the command
 * line parses each group in one place (src/opts.c) straight into the
 * library's option structs, which hold the groups they take (as fabtests
 * composes its option fragments). keys and given are the command line's
 * (the group's options a command takes, those given); the library reads
 * the values. The campaign group is eg_bench_run_opts_t
 * (lib/campaign/sweep.h). */
#ifndef EPGATE_OPTS_GROUPS_H
#define EPGATE_OPTS_GROUPS_H

/* Job: --iters N, --warmup N, --timeout S (the keys the command takes;
 * with nw, -n N and -w N too). */
enum {
	EG_JOB_ITERS = 1,
	EG_JOB_WARMUP = 2,
	EG_JOB_TIMEOUT = 4,
	EG_JOB_ALL = 7,
};
typedef struct eg_job_opts {
	unsigned keys;	/* EG_JOB_* taken */
	unsigned given; /* EG_JOB_* given on the command line */
	int nw;		/* also -n N and -w N, as nccl-tests spells them */
	unsigned iters, warmup;
	double timeout_s;
} eg_job_opts_t;

/* Transport: --transport fabric|nccl, --provider P (fabric), and NCCL's
 * --num-comms K (fabric endpoints too), --path auto|nvlink|xnode,
 * --xnode-mode hostid|nop2p, --device D. The parser sets the defaults
 * (fabric, auto provider, 1, auto, hostid, -1) before it reads argv. */
enum {
	EG_XP_TRANSPORT = 1,
	EG_XP_PROVIDER = 2,
	EG_XP_NUM_COMMS = 4,
	EG_XP_PATH = 8,
	EG_XP_XNODE = 16,
	EG_XP_DEVICE = 32,
	EG_XP_NCCL = 4 | 8 | 16 | 32,
	EG_XP_ALL = 63,
};
typedef struct eg_xport_cli {
	unsigned keys, given;	/* EG_XP_* taken, given */
	const char *transport;	/* "fabric", "nccl" */
	const char *provider;	/* NULL: auto */
	unsigned num_comms;	/* K */
	const char *path;	/* "auto", "nvlink", "xnode" */
	const char *xnode_mode; /* NULL: hostid */
	int device;		/* -1: rank modulo the device count */
} eg_xport_cli_t;

/* Reports: --reports DIR (default reports/runs), --tap FILE, --junit
 * FILE (the keys taken), and always --tap-version 13|14
 * (eg_tap_set_version: every TAP file of the process). */
enum {
	EG_REP_REPORTS = 1,
	EG_REP_TAP = 2,
	EG_REP_JUNIT = 4,
	EG_REP_ALL = 7,
};
typedef struct eg_report_cli {
	unsigned keys;
	const char *reports, *tap, *junit;
} eg_report_cli_t;

/* Workload: every workload key as --KEY=VALUE (or --KEY VALUE), applied
 * on top of every workload (eg_overrides_apply, lib/suite/suite.h):
 * name world experts topk hidden dtype tokens zero_ranks routing mask
 * data seed iter steps. */
#define EG_OVERRIDES_MAX 32
typedef struct eg_overrides {
	unsigned n;
	const char *key[EG_OVERRIDES_MAX];
	const char *val[EG_OVERRIDES_MAX];
} eg_overrides_t;

#endif
