/* What a gate run keeps beside its reports (lib/gate/run_record.c). */
#ifndef EG_GATE_RUN_RECORD_H
#define EG_GATE_RUN_RECORD_H

#include <jansson.h>

#include "epgate/gate.h"

typedef struct eg__record {
	const eg_gate_run_opts_t *o;
	const char *junit;     /* the JUnit file written */
	const unsigned *count; /* per verdict (EG_VERDICT_*) */
	unsigned errors;       /* gates that could not be judged */
	int rc;		       /* the exit status */
	json_t *failures;      /* [{kind, class, case, message, repro}] */
} eg__record_t;

/* STEM.judged.json beside STEM.junit.xml (nothing for another name):
 * the gate file, results and baseline judged, the verdicts, the exit
 * status.  <0 when it cannot be written. */
int eg__gate_judged(const eg__record_t *rec);
/* run/summary.json of a gate run in a run folder of its own. */
int eg__gate_summary(const eg__record_t *rec, const char *run,
		     const char *profile);
/* "PASS", "FAIL", "SKIP", "ERROR" */
const char *eg__gate_exit_word(int rc);

#endif
