/* `epgate check`'s summary.json (lib/suite/run_report.h): its L1 and L2
 * stages counted from the very JUnit reports check wrote (CRASH cases
 * their own count, every failure with its kind and repro line), the
 * exit code and last line's verdict, and the evidence of what ran, so
 * that a check run folder says what `epgate run`'s says. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "epgate/error.h"
#include "epgate/evidence.h"
#include "lib/suite/run_report.h"
#include "lib/suite/suite.h"

void eg_check_stage(eg_stage_t *s, int l2, const char *junit,
		    const eg_l1_totals_t *t, int rc, double seconds,
		    const char *engine)
{
	memset(s, 0, sizeof(*s));
	s->name = l2 ? "l2" : "l1";
	s->label = l2 ? "L2" : "L1";
	s->prefixes[0] = l2 ? "check-l2." : "check.";
	s->prefixes[1] = l2 ? "l2-" : "l1-";
	s->ran = t->run > 0;
	s->rc = rc;
	s->seconds = seconds;
	snprintf(s->detail, sizeof(s->detail), "engine %s", engine);
	s->failures = json_array();
	if (s->ran &&
	    eg_junit_tally(junit, &s->t, s->failures, EG_STAGE_FAILURES) < 0)
		snprintf(s->why, sizeof(s->why), "%s could not be read", junit);
	else if (!s->ran)
		snprintf(s->why, sizeof(s->why), "%s",
			 t->why[0] ? t->why : "nothing ran (above)");
}

int eg_check_summary(const char *run, const char *engine, eg_stage_t *st,
		     size_t n, int rc)
{
	char path[4400];
	json_t *ev = eg_process_evidence(engine);
	int r;

	snprintf(path, sizeof(path), "%s/summary.json", run);
	r = eg_run_summary_cmd(path, run, "check", NULL, engine, st, n, 1, rc);
	if (r == EG_OK)
		r = eg_summary_evidence(path, ev);
	json_decref(ev);
	for (size_t i = 0; i < n; i++) {
		json_decref(st[i].failures);
		st[i].failures = NULL;
	}
	return r;
}
