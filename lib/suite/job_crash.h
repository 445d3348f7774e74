/* Why a job of ranks ended before its last workload, read from its log
 * (lib/suite/job_crash.c): the rank that ended first and how (a signal,
 * an exit() inside a workload: lib/step/where.h's last words, or the
 * launcher's "[launch] rank R killed by signal N" or "exited with
 * status S"), or the rank its
 * peers waited on (a hang, "still waits on ranks R"), or the rank whose
 * engine returned an error ("epgate l2-rank: rank R: W: dispatch: ..."),
 * with where it was (workload, step, iteration, phase) and its last
 * lines of output (a plugin's own message among them). */
#ifndef EG_SUITE_JOB_CRASH_H
#define EG_SUITE_JOB_CRASH_H

#include "lib/suite/suite.h"

typedef enum eg_job_end {
	EG_JOB_END_NONE = 0, /* nothing in the log says */
	EG_JOB_END_CRASH,    /* a rank ended: a signal or exit() */
	EG_JOB_END_HANG,     /* a rank did not answer its peers in time, or
				the job's deadline stopped ranks inside a
				workload (every one of them hung) */
	EG_JOB_END_ERROR,    /* a rank's engine returned an error */
	EG_JOB_END_EXIT,     /* a rank exited non-zero without a word from
				epgate (a sanitizer's report, a library's
				_exit): its status and last lines */
} eg_job_end_t;

typedef struct eg_job_crash {
	eg_job_end_t end;
	eg_crash_t c;	    /* what, sig, status, rank, where, output */
	char workload[128]; /* from where, or "" */
	char phase[32];	    /* "dispatch", ..., or "" */
	unsigned step, iter;
	/* a hang of ranks the job's deadline stopped: which (bit r: rank
	 * r, the first 64), how many; 0 for a hang a peer named */
	uint64_t hung;
	unsigned n_hung;
} eg_job_crash_t;

/* Reads the log; EG_OK (end NONE when nothing was found), <0 when it
 * cannot be read. */
int eg_job_crash_read(const char *log, eg_job_crash_t *jc);

/* jc in one line, for a job's message: "rank 2 ended by signal 6
 * (SIGABRT, Aborted) in b-odd, iteration 0, dispatch". */
void eg_job_crash_line(const eg_job_crash_t *jc, char *buf, size_t len);

/* The case of workload w that the job's end cut short, ready for TAP and
 * JUnit: CRASH when a rank ended, FAIL for a hang (the rank waited on,
 * where it was) or an engine's error, ERROR when the log does not say;
 * *diag (eg_crash_diag with "log", the job's log; "hang" for "crash"
 * after a hang, "engine_error" and "engine_message" after an error) and
 * msg (the JUnit message) filled. */
eg_status_t eg_job_crash_case(const eg_job_crash_t *jc, const eg_workload_t *w,
			      const char *repro, const char *log, int rc,
			      json_t **diag, char *msg, size_t len);

/* What a job's report needs to name the case its end cut short. */
typedef struct eg_job_cut {
	const eg_job_crash_t *jc;
	const char *log;
	int rc; /* the job's exit code */
	/* the command that replays workload w alone */
	void (*repro)(const eg_workload_t *w, void *arg, char *buf, size_t len);
	void *arg;
	const eg_workload_t *at; /* set by the report: the case it fell on */
} eg_job_cut_t;

/* The workload the cut falls on: the one jc names, if owed and not yet
 * reported, else the first owed one not reported (a job runs its
 * workloads in file order); NULL when none is left. */
const eg_workload_t *eg_job_cut_at(const eg_job_crash_t *jc,
				   const eg_workload_list_t *wl, uint32_t W,
				   const unsigned char *seen, size_t *at);

#endif
