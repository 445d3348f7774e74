/* Jobs of this program: the suites' orchestrators (L2, the sweeps) run
 * their ranks as
 *
 *   <self> launch -n N --ranks-per-node M --timeout S -- <self> ARGS...
 *
 * with extra environment for the launcher and its ranks, the launcher's
 * output (stdout and stderr, ranks included) going to a log file and/or
 * a callback line by line.  <self> is this executable (/proc/self/exe),
 * so only the epgate command itself runs jobs. */
#ifndef EPGATE_JOB_H
#define EPGATE_JOB_H

#include <stddef.h>
#include <stdint.h>

typedef struct eg_job_env {
	const char *key, *value;
	int keep; /* 1: only where the environment does not set it */
} eg_job_env_t;

typedef struct eg_job {
	uint32_t ranks, ranks_per_node;
	double timeout_s;	 /* the launcher's own deadline */
	const char *const *args; /* the rank command after <self>, NULL-ended */
	const eg_job_env_t *env;
	size_t n_env;
	const char *log; /* the launcher's output, or NULL */
	/* each line of that output (with its newline), or NULL: with it the
	 * output comes through a pipe (and this process writes the log);
	 * without it the job writes the log itself; with neither, the
	 * output goes where this process's goes */
	void (*on_line)(const char *line, void *arg);
	void *arg;
} eg_job_t;

/* 1 when this process's jobs go through srun: inside an allocation
 * (SLURM_JOB_ID set), not itself a task of a step (no SLURM_STEP_ID),
 * and EPGATE_LAUNCHER is not "local". */
int eg_job_under_slurm(void);

/* Runs the job and waits for it: the launcher's exit status (automake
 * codes; EG_EXIT_HARD when it died of a signal); <0 with a message in
 * err when it could not be started. */
int eg_job_run(const eg_job_t *j, char *err, size_t errlen);

#endif
