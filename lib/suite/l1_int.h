/* L1's insides shared with lib/suite/check_jobs.c: `epgate check` of an
 * engine that runs one rank per process (a plugin) runs its world-1
 * cases in process (l1.c) and every other case in a job of that many
 * ranks (check_jobs.c), all into the same reports. */
#ifndef EG_SUITE_L1_INT_H
#define EG_SUITE_L1_INT_H

#include "lib/suite/suite.h"

/* The reports and counts the cases go into. */
typedef struct eg_l1_sink {
	const eg_l1_opts_t *o;
	eg_tap_t *tap;
	eg_junit_t *junit;
	const char *classname; /* "epgate.l1.<engine>" */
	eg_l1_totals_t *tot;
	unsigned *said; /* failures said in full on o->out */
	int *hard;	/* set on a harness error */
} eg_l1_sink_t;

/* The command that replays workload w alone with engine, iterations up
 * to iter: "epgate check --engine=E --iters=N --name=... --world=..."
 * (at a world above 1 it runs as a job of ranks again). */
void eg__l1_repro(const char *engine, const eg_workload_t *w, uint32_t iter,
		  char *buf, size_t len);

/* Workload w as an INI section, from its check arguments ("epgate check
 * --name=N --world=2 ..."): every key the workload has (lib/suite/
 * check_jobs.c; the L2 orchestration's job files too). */
void eg__suite_l1_ini_section(FILE *f, const eg_workload_t *w);

/* 1 when check runs workload w of engine ops as a job of ranks: a
 * one-rank-per-process engine (EG_ENGINE_WORLD1) beyond world 1. */
int eg__suite_l1_by_job(const eg_engine_ops_t *ops, const eg_workload_t *w);

/* Every workload of wl that eg__suite_l1_by_job takes, one job per world size
 * (o->workdir keeps each job's workloads file, results and log): each
 * case one TAP point and one JUnit case; a job that ends early (a rank
 * crashed, hung, exited) gives the case it was in a verdict of its own
 * (CRASH, FAIL) and is launched again for the cases after it. */
void eg__suite_l1_jobs(const eg_l1_sink_t *s, const eg_engine_ops_t *ops,
		       const eg_workload_list_t *wl);

#endif
