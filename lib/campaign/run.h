/* epgate run (lib/campaign/run.c). */
#ifndef EG_CAMPAIGN_RUN_H
#define EG_CAMPAIGN_RUN_H

#include "lib/suite/suite.h"

/* epgate run (lib/campaign/run.c): the main job on the local profile: L1
 * (engine over the L1 matrix), L2 quick, the local profile's sweeps and
 * gates, into one new run folder under reports with summary.json. */
typedef struct eg_run_opts {
	eg_report_cli_t report; /* reports: "reports/runs" */
	const char *engine;	/* L1's, "self" */
	int verbose;
} eg_run_opts_t;
int eg_run_local(const eg_run_opts_t *o);

#endif
