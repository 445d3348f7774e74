/* epgate bench ab PROFILE --a ARM --b ARM: argv -> an A/B job
 * (lib/campaign/bench_ab.c). */
#include <stdio.h>
#include <string.h>

#include "lib/campaign/sweep.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__ab_usage[] =
    "usage: epgate bench ab NAME|FILE --a ARM --b ARM [options]\n"
    "\n"
    "Measures arms A and B at every point of one arm of a profile\n"
    "(a2a unless --arm), in the same launches, step by step (A B in\n"
    "one step, B A in the next; A starts in even launches, B in odd\n"
    "ones), and judges B against A with a gate file written into the\n"
    "run folder (ab.gate): per metric, the median change over the\n"
    "points and every point (launch-paired, corrected over the\n"
    "points).  B fails when it is worse than A by more than\n"
    "--min-effect with confidence, passes when it is not, and is\n"
    "inconclusive when the interval straddles it (the points are\n"
    "re-measured first).  Arms: a2a, dense,\n"
    "plugin:PATH[,key=value...] (two builds of one library),\n"
    "slow:N%:ARM.\n"
    "\n"
    "  --a ARM, --b ARM   the two arms (different; an A/A run: --a "
    "a2a\n"
    "                     --b slow:0%:a2a)\n"
    "  --arm ARM          the profile's points of this arm (a2a)\n"
    "  --sweep S[,S...]   of these sweeps alone (every sweep)\n"
    "  --metric M         judged metric, repeatable (step_us,\n"
    "                     dispatch_us, combine_us)\n"
    "  --statistic S      bootstrap or mann-whitney (bootstrap)\n"
    "  --min-effect F     the smallest change that matters (0.05)\n"
    "  --alpha A          each one-sided question's level (0.05)\n"
    "  --correction C     holm, bh or none over the points (holm)\n"
    "  --effect E         a point fails when B is worse than A with\n"
    "                     confidence (corrected over the points) and\n"
    "                     its change is beyond --min-effect (estimate,\n"
    "                     the default), or only when the whole\n"
    "                     interval is beyond it (interval)\n"
    "  --median-only      the median's gate alone (no gate per\n"
    "                     point; --per-point, the default, is\n"
    "                     still taken)\n"
    "  --gates FILE       this gate file instead (versus: [B, A])\n"
    "  --launches L       launches per point (the profile's)\n"
    "  --remeasure R      rounds of re-measurement (the profile's)\n"
    "  --seed N           order of the launches\n"
    "  --results FILE     results (default RUN/bench-ab.json)\n"
    "  --reports DIR      where run folders go (reports/runs)\n"
    "  -v, --verbose      every job's output\n"
    "\n"
    "Exit status: 0 B is not worse (or inconclusive), 1 B is worse or\n"
    "a point failed, 77 nothing could run, 99 bad input.\n";

int eg_cmd_bench_ab(int argc, char **argv)
{
	static const char *const stats[] = {"bootstrap", "mann-whitney", NULL};
	static const char *const corr[] = {"holm", "bh", "none", NULL};
	static const char *const effects[] = {"estimate", "interval", NULL};
	eg_bench_run_opts_t run = {.report.keys = EG_REP_REPORTS};
	int per_point = 0; /* the default; the old flag is still taken */
	eg_bench_ab_opts_t ab = {.statistic = "bootstrap",
				 .correction = "holm",
				 .effect = "estimate",
				 .alpha = 0.05,
				 .min_effect = 0.05};
	const eg_cli_opt_t own[] = {
	    {"a", .str = &run.ab[0]},
	    {"b", .str = &run.ab[1]},
	    {"arm", .str = &run.ab_arm},
	    {"sweep", .str = &run.sweep},
	    {"metric", .list = ab.metric, .n = &ab.n_metrics,
	     .max = EG_AB_METRICS_MAX},
	    {"statistic", .str = &ab.statistic, .choices = stats},
	    {"min-effect", .real = &ab.min_effect, .lo = 0, .hi = 0.99},
	    {"alpha", .real = &ab.alpha, .lo = 0, .hi = 0.49},
	    {"correction", .str = &ab.correction, .choices = corr},
	    {"effect", .str = &ab.effect, .choices = effects},
	    {"per-point", .flag = &per_point},
	    {"median-only", .flag = &ab.median_only},
	    {"verbose", 'v', .flag = &run.verbose},
	    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__ab_usage,
		       .report = &run.report,
		       .campaign = &run};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (per_point && ab.median_only)
		return eg_cli_error(&cl, "--per-point and --median-only: "
					 "give one");
	if (!run.ab[0] || !run.ab[1])
		return eg_cli_error(&cl, "give both arms: --a ARM --b ARM");
	if (!ab.n_metrics) {
		ab.metric[0] = "step_us";
		ab.metric[1] = "dispatch_us";
		ab.metric[2] = "combine_us";
		ab.n_metrics = 3;
	}
	return eg_bench_ab(cl.arg[0], &run, &ab);
}
