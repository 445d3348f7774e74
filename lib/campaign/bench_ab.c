/* `epgate bench ab` (docs/gates.md, "A/B in one job"): two arms -- two
 * engines, or two builds of one library as plugin:PATH arms -- measured
 * at every point of a profile's arm, in the same launches, step by step
 * (A B, then B A, ...; A starts in even launches, B in odd ones:
 * eg_bench_measure_arms), so that whatever the machine does during a
 * launch lands on both, at the scale of one step.  The judgement is a
 * gate file written into the run folder (ab.gate, kept for the record):
 * per metric, B against A at every point (launch-paired, corrected over
 * the points; by default effect: estimate, worse with confidence and
 * beyond min_effect) and the median change over the points; then what
 * each point could detect (bench_ab_mde.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/report.h"
#include "lib/suite/run_report.h"
#include "lib/campaign/sweep.h"

#define EG__PROG "epgate bench ab"

/* The A/B gate file for the metrics: B judged against A. */
static int eg__ab_gate(const char *path, const char *profile,
		       const eg_bench_run_opts_t *o,
		       const eg_bench_ab_opts_t *a)
{
	static const char *const aggs[] = {"none", "median"};
	FILE *f = fopen(path, "w");

	if (!f)
		return EG_EIO;
	fprintf(f,
		"# Written by epgate bench ab: arm B (%s) judged against arm A "
		"(%s),\n# launch by launch, at every point of arm %s of "
		"profile %s.\n# B fails when it is worse than A by more than "
		"min_effect with\n# confidence, passes when it is not, and is "
		"inconclusive when the\n# interval straddles min_effect (after "
		"re-measurement).\nprofile: %s\ndefaults: {alpha: %g, "
		"min_effect: %g, correction: %s}\ngates:\n",
		o->ab[1], o->ab[0], o->ab_arm ? o->ab_arm : "a2a", profile,
		profile, a->alpha, a->min_effect, a->correction);
	/* every point on its own (corrected over the points) and the median
	 * change over them: a slowdown confined to some points shows only
	 * at those (issue 29: 12% at the half of the points above 64 tokens
	 * moved no median, 0 of 9 jobs; per point 5 of 9, and 0 false in 18
	 * A/A jobs); --median-only keeps the median alone, which one
	 * stalled launch at one point cannot move.  effect: estimate at
	 * the points (issue 36: 10% at half of 8 points through a launch
	 * spread like this host's, 20 of 20 caught, the whole interval
	 * beyond min_effect 8; suites/gates/ab-power.sh) */
	for (size_t i = 0; i < a->n_metrics; i++)
		for (int g = a->median_only ? 1 : 0; g < 2; g++)
			fprintf(f,
				"  - name: ab-%s%s\n    sentence: \"B is not "
				"worse than A by more than %g%% in %s %s.\"\n"
				"    rule: regression\n    metric: %s\n"
				"    versus: [\"%s\", \"%s\"]\n    statistic: "
				"%s\n    aggregate: %s\n%s%s%s",
				a->metric[i], g ? "-median" : "",
				100 * a->min_effect, a->metric[i],
				g ? "over the points (the median change)"
				  : "at any point",
				a->metric[i], o->ab[1], o->ab[0], a->statistic,
				aggs[g],
				g ? "" : "    effect: ", g ? "" : a->effect,
				g ? "" : "\n");
	return fclose(f) ? EG_EIO : EG_OK;
}

int eg_bench_ab(const char *profile, const eg_bench_run_opts_t *o,
		const eg_bench_ab_opts_t *a)
{
	eg_bench_run_opts_t ro = *o;
	eg_bench_totals_t tot;
	char run[4096], gate[4200], res[4200];
	int rc;

	if (!o->ab[0] || !o->ab[1] || !strcmp(o->ab[0], o->ab[1])) {
		fprintf(stderr,
			EG__PROG ": give two different arms, --a and --b (for "
				 "an A/A run of one engine: --a a2a --b "
				 "slow:0%%:a2a)\n");
		return EG_EXIT_HARD;
	}
	if ((rc = eg_run_dir_create(o->report.reports, run, sizeof(run))) < 0) {
		fprintf(stderr, EG__PROG ": --reports %s: %s\n",
			o->report.reports, eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	printf("epgate bench ab: run folder %s\n", run);
	if (!ro.gates) {
		snprintf(gate, sizeof(gate), "%s/ab.gate", run);
		if (eg__ab_gate(gate, profile, o, a) < 0) {
			fprintf(stderr, EG__PROG ": cannot write %s\n", gate);
			return EG_EXIT_HARD;
		}
		ro.gates = gate;
	}
	if (!ro.results) {
		snprintf(res, sizeof(res), "%s/bench-ab.json", run);
		ro.results = res;
	}
	ro.apply_gates = 1;
	rc = eg_bench_run_profile(profile, run, &ro, &tot);
	eg_bench_ab_mde(stdout, ro.results, o, a);
	eg_bench_last_line(stdout, run, &tot, rc); /* as summary.json says */
	return rc;
}
