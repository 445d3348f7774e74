/* The page's verdict (docs/reports.md, "One verdict"): the gates judged
 * in process, the gates suites it could not judge counted from their
 * JUnit reports, the test cases, and what the run said of itself in
 * summary.json (its exit status, its points); the banner's and
 * summary.md's line from one tally, in the word of the command's last
 * line and never kinder than its exit status. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/page/page.h"

static void eg__count(eg__tally_t *t, const eg__gres_t *r)
{
	t->gates++;
	if (r->hard)
		t->errors++;
	else if (r->res.verdict == EG_VERDICT_PASS)
		t->pass++;
	else if (r->res.verdict == EG_VERDICT_FAIL)
		t->fail++;
	else if (r->res.verdict == EG_VERDICT_INCONCLUSIVE)
		t->inconclusive++;
	else
		t->skip++;
}

/* Is the JUnit suite "gates.X" of a profile whose gates the page judged
 * in process (its verdicts counted from them, not from the report)? */
static int eg__judged_here(const eg__page_t *pg, const char *suite)
{
	for (size_t i = 0; i < pg->n_prof; i++)
		if (pg->prof[i].gr && !strncmp(suite, "gates.", 6) &&
		    !strcmp(suite + 6, pg->prof[i].gf.profile))
			return 1;
	return 0;
}

/* A gates suite the page could not judge: its verdicts as the gate run
 * reported them. */
static void eg__count_report(eg__tally_t *t, const eg__jsuite_t *s)
{
	unsigned skipped = s->skipped - s->inconclusive;

	t->gates += s->tests;
	t->fail += s->failures;
	t->errors += s->errors;
	t->inconclusive += s->inconclusive;
	t->skip += skipped;
	t->pass += s->tests - s->failures - s->errors - s->skipped;
}

/* What the run said of itself: its exit status, its points. */
static void eg__count_summary(eg__tally_t *t, const json_t *sum)
{
	const json_t *ex = json_object_get(sum, "exit"), *st;
	size_t i;

	t->exit = json_is_integer(ex) ? (int)json_integer_value(ex) : -1;
	json_array_foreach(json_object_get(sum, "stages"), i, st)
	{
		const char *name =
		    json_string_value(json_object_get(st, "name"));

		if (!name || strcmp(name, "bench"))
			continue;
		t->points_failed +=
		    (unsigned)json_integer_value(json_object_get(st, "failed"));
		t->points +=
		    t->points_failed +
		    (unsigned)json_integer_value(json_object_get(st, "passed"));
	}
}

/* The gates of every profile, and of every history group's latest run;
 * the test cases of the JUnit files (the gates' own left out where the
 * page judged them). */
void eg__page_tally(const eg__page_t *pg, eg__tally_t *t)
{
	memset(t, 0, sizeof(*t));
	eg__count_summary(t, pg->summary);
	for (size_t i = 0; i < pg->n_prof; i++)
		for (size_t k = 0; pg->prof[i].gr && k < pg->prof[i].gf.n_gates;
		     k++)
			eg__count(t, &pg->prof[i].gr[k]);
	for (size_t i = 0; i < pg->n_hist; i++) {
		const eg__hist_t *h = &pg->hist[i];

		for (size_t k = 0; h->n_runs && h->have_gf && k < h->gf.n_gates;
		     k++)
			eg__count(t, &h->runs[h->n_runs - 1].gr[k]);
		t->changes += (unsigned)json_array_size(h->changes);
	}
	for (size_t i = 0; i < pg->n_js; i++) {
		if (!strncmp(pg->js[i].name, "gates.", 6)) {
			if (!eg__judged_here(pg, pg->js[i].name))
				eg__count_report(t, &pg->js[i]);
			continue;
		}
		t->tests += pg->js[i].tests;
		t->failed +=
		    pg->js[i].failures + pg->js[i].errors - pg->js[i].crashed;
		t->crashed += pg->js[i].crashed;
		t->skipped += pg->js[i].skipped;
	}
}

/* The page's counts as an exit status, then the worse of it and the
 * run's own (a skip counting as nothing, as epgate run combines). */
int eg__page_tally_exit(const eg__tally_t *t)
{
	int rc = t->errors			      ? EG_EXIT_HARD
		 : t->fail || t->failed || t->crashed ? EG_EXIT_FAIL
		 : t->pass || t->tests > t->skipped   ? EG_EXIT_PASS
						      : EG_EXIT_SKIP;

	if (t->exit < 0 || t->exit == rc)
		return rc;
	if (t->exit == EG_EXIT_HARD || rc == EG_EXIT_HARD)
		return EG_EXIT_HARD;
	if (t->exit == EG_EXIT_FAIL || rc == EG_EXIT_FAIL)
		return EG_EXIT_FAIL;
	if (t->exit == EG_EXIT_PASS || rc == EG_EXIT_PASS)
		return EG_EXIT_PASS;
	return t->exit == EG_EXIT_SKIP ? rc : EG_EXIT_HARD;
}

const char *eg__page_tally_verdict(const eg__tally_t *t, const char **word)
{
	switch (eg__page_tally_exit(t)) {
	case EG_EXIT_PASS:
		*word = "PASS";
		return "pass";
	case EG_EXIT_FAIL:
		*word = "FAIL";
		return "fail";
	case EG_EXIT_SKIP:
		*word = "SKIP";
		return "skip";
	default:
		*word = "ERROR";
		return "error";
	}
}

/* "F of G gates failed<scope>, E could not be judged, I inconclusive, S
 * skipped; F of T test cases failed, C crashed, S skipped", each part
 * only when it counts. */
static void eg__tally_say(FILE *f, const eg__tally_t *t, const char *scope)
{
	if (!t->gates && !t->tests) {
		fputs(t->points ? "no gate judged the points"
				: "nothing was judged: no gate, no test "
				  "case, no point",
		      f);
		return;
	}
	if (t->gates) {
		fprintf(f, "%u of %u gates failed%s", t->fail, t->gates, scope);
		if (t->errors)
			fprintf(f, ", %u could not be judged", t->errors);
		if (t->inconclusive)
			fprintf(f, ", %u inconclusive", t->inconclusive);
		if (t->skip)
			fprintf(f, ", %u skipped", t->skip);
	}
	if (t->tests) {
		fprintf(f, "%s%u of %u test cases failed", t->gates ? "; " : "",
			t->failed, t->tests);
		if (t->crashed)
			fprintf(f, ", %u crashed", t->crashed);
		fprintf(f, ", %u skipped", t->skipped);
	}
}

void eg__verdict_text(FILE *f, const eg__tally_t *t, const char *scope)
{
	const char *word;

	eg__page_tally_verdict(t, &word);
	fprintf(f, "%s: ", word);
	eg__tally_say(f, t, scope);
	if (t->points_failed)
		fprintf(f, "; %u of %u points failed", t->points_failed,
			t->points);
	else if (t->points)
		fprintf(f, "; %u points measured", t->points);
}

void eg__verdict_line(FILE *f, const eg__tally_t *t, const char *scope)
{
	eg__verdict_text(f, t, scope);
	if (t->exit >= 0)
		fprintf(f, " (exit %d)", t->exit);
}
