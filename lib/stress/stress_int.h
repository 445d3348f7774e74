/* The insides of `epgate stress` shared by lib/suite/stress_*.c. */
#ifndef EG_STRESS_STRESS_INT_H
#define EG_STRESS_STRESS_INT_H

#include <stdint.h>
#include <stdio.h>

#include "epgate/step.h"
#include "lib/stress/stress.h"

/* Iteration iter's routing seed: every iteration its own routing and
 * values, a function of the workload's seed and iter alone. */
uint64_t eg_stress_seed(const eg_workload_t *w, uint32_t iter);

/* The case's instance (an engine on its step, host memory, the budgets
 * and the deadline of EPGATE_TIMEOUT): EG_OK, or <0 with the case
 * skipped (the engine does not take it) or ended. */
int eg_stress_open(eg_stress_case_t *c, const eg_engine_ops_t *ops,
		   eg_step_t **st);

/* A failure kept: its call, inputs, mode, instance, the replay's
 * verdict, and what v says (the fields that were wrong, or the error). */
void eg_stress_record(eg_stress_case_t *c, const eg_step_t *st,
		      const eg_rank_verdict_t *v, uint64_t call, uint32_t iter,
		      int mode, int instance, int replay);
/* An error that ends the case, said with the stage, the call and the
 * rank(s) it happened on; where: the round's mode ("replay"). */
void eg_stress_end(eg_stress_case_t *c, const eg_engine_ops_t *ops,
		   const eg_step_t *st, const eg_rank_verdict_t *v, int rc,
		   uint32_t iter, const char *where);
/* The same for an unchecked (burst) call, which has no verdict: kept as
 * a failure too. */
void eg_stress_end_unchecked(eg_stress_case_t *c, const eg_engine_ops_t *ops,
			     const eg_step_t *st, int rc, uint32_t iter);

/* The watchdog of in-process engines (a plugin's instance has its own
 * deadline in its child): a call that does not return within
 * EPGATE_TIMEOUT + 30 s ends the run (exit 99) with one line naming the
 * case, the stage, the call and the iteration. */
void eg_stress_watchdog_start(double timeout_s);
void eg_stress_watchdog_arm(const char *stage, const char *name, uint64_t call,
			    uint32_t iter);
void eg_stress_watchdog_disarm(void);

/* "mismatch" or "error", as stress.json says a failure's kind. */
const char *eg_stress_fail_kind(const eg_stress_fail_t *f);

/* EPGATE_TIMEOUT, or 60 s. */
double eg_stress_timeout(void);

/* A check's own run (EPGATE_STRESS_CHECKING): it checks neither its
 * reproducers nor its runs again. */
int eg_stress_is_check(void);
/* LINE run by /bin/sh as a check's own run, in a fresh process of this
 * executable, its reports in a temporary folder: its stress.json into
 * *doc (NULL when it left none: saw says why), its exit status or <0. */
int eg_stress_run_json(const char *line, json_t **doc, char *saw, size_t len);

/* ---- run to run (lib/stress/stress_runs.c, docs/stress.md) ---- */
#define EG_STRESS_FNV_BASIS 0xcbf29ce484222325ull
/* FNV-1a 64 of n bytes, from h (EG_STRESS_FNV_BASIS to start). */
uint64_t eg_stress_fnv1a(uint64_t h, const void *p, size_t n);
/* Call 0's combine output, every rank's in rank order, hashed into c. */
void eg_stress_runs_note(eg_stress_case_t *c, const eg_step_t *st);
/* Before the case's instance: the allocation history EPGATE_STRESS_HISTORY
 * asks for (NULL: none), kept until eg_stress_runs_history_free. */
void *eg_stress_runs_history(const eg_stress_case_t *c,
			     const eg_engine_ops_t *ops);
void eg_stress_runs_history_free(void *pad);
/* Call 0 again in EG_STRESS_RUNS fresh processes of other histories,
 * their hashes compared with c's (not in a check's own run). */
void eg_stress_runs_check(const eg_stress_opts_t *o, eg_stress_case_t *c);
/* The bytes differed run to run where the engine promises them. */
int eg_stress_runs_failed(const eg_stress_case_t *c);
json_t *eg_stress_runs_json(const eg_stress_case_t *c);
void eg_stress_runs_say(FILE *f, const eg_stress_case_t *c);

/* --hashes and --compare-hashes: NULL with neither; EG_OK, or <0 said on
 * stderr naming the file (and line). */
typedef struct eg_stress_hashes eg_stress_hashes_t;
int eg_stress_hashes_open(const eg_stress_opts_t *o, eg_stress_hashes_t **hs);
void eg_stress_hashes_case(eg_stress_hashes_t *hs, eg_stress_case_t *c);
void eg_stress_hashes_close(eg_stress_hashes_t *hs);

#endif
