/* The gates of a sweep (docs/gates.md): before a verdict stands, the
 * points the gates cannot settle or would fail on are measured again in
 * extra launches (a bounded number of rounds, each launch recorded); then
 * the gate file judges the points held, in process, with the history's
 * last campaigns of this profile and machine as the regression baseline
 * when there is a history; and the campaign joins the history. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gate.h"
#include "lib/campaign/sweep_int.h"

#define EG__PROG "epgate bench"

/* The baseline: the last campaigns of the history, read into *bl. */
static int eg__baseline(const eg__run_t *r, eg_results_t **bl, size_t *nbl)
{
	char err[EG_RESULTS_ERR_MAX];
	int rc;

	*bl = NULL;
	*nbl = 0;
	if (!r->o->history)
		return 0;
	rc = eg_history_read(r->o->history, &r->held,
			     r->o->history_last ? r->o->history_last
						: EG_HISTORY_LAST,
			     bl, nbl, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, EG__PROG ": history: %s\n", err);
	return rc;
}

void eg__campaign_remeasure(eg__run_t *r)
{
	eg_results_t *bl = NULL;
	size_t nbl = 0;
	uint32_t next = r->launches;
	char err[EG_GATE_ERR_MAX];

	if (!r->rounds || eg__baseline(r, &bl, &nbl) < 0)
		goto out;
	for (unsigned k = 0; k < r->rounds && !r->hard; k++) {
		eg_gate_data_t d = {&r->held, 1, nbl ? bl : NULL, nbl};
		json_t *ids = json_array();
		size_t n;

		if (!ids || eg_gate_remeasure(r->gates, &d, ids, err,
					      sizeof(err)) < 0) {
			json_decref(ids);
			break; /* the real gate run says what is wrong */
		}
		n = eg__campaign_pick(r, ids);
		json_decref(ids);
		if (!n)
			break;
		printf("epgate bench: re-measuring %zu point(s), round %u of "
		       "%u: %u more launch(es) each\n",
		       n, k + 1, r->rounds, r->round_launches);
		fflush(stdout);
		r->remeasure_total += r->round_launches;
		r->total += (unsigned)n * r->round_launches;
		for (unsigned j = 0; j < r->round_launches && !r->hard; j++)
			eg__campaign_pass(r, next++, 1);
	}
out:
	eg_results_free_all(bl, nbl);
}

int eg__campaign_gates(eg__run_t *r)
{
	char tap[4200], junit[4200];
	eg_results_t *bl = NULL;
	size_t nbl = 0;
	eg_gate_data_t d = {.cur = &r->held, .n_cur = 1};
	eg_gate_run_opts_t go = {.gates = r->gates,
				 .data = &d,
				 .tap = tap,
				 .junit = junit,
				 .prog = "epgate gate"};
	int rc;

	if (eg__baseline(r, &bl, &nbl) < 0)
		return EG_EXIT_HARD;
	d.base = nbl ? bl : NULL;
	d.n_base = nbl;
	snprintf(tap, sizeof(tap), "%s/bench-gates.tap", r->run_dir);
	snprintf(junit, sizeof(junit), "%s/bench-gates.junit.xml", r->run_dir);
	printf("gates: %s", r->gates);
	if (r->o->history)
		printf(" (baseline: %zu campaign(s) of the history)", nbl);
	printf("\n");
	fflush(stdout);
	rc = eg_gate_run(&go);
	eg_results_free_all(bl, nbl);
	return rc;
}

int eg__campaign_history_store(eg__run_t *r)
{
	char err[EG_RESULTS_ERR_MAX], stored[4400];
	eg_results_t cur;
	int rc = eg_results_read(&cur, r->tot->results, err, sizeof(err));

	if (!rc)
		rc = eg_history_store(r->o->history, &cur, r->tot->results,
				      stored, sizeof(stored), err, sizeof(err));
	eg_results_free(&cur);
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": history: %s\n", err);
		return rc;
	}
	printf("history: %s\n", stored);
	return 0;
}
