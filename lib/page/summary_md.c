/* summary.md: the page in a few lines of Markdown, what CI systems show
 * on a job's page (GitHub's step summary, GitLab and Jenkins Markdown
 * panes): the verdict, the suites, every gate's sentence and verdict,
 * the first failures with their repro lines, and the link to
 * report.html. */
#include <stdio.h>
#include <string.h>

#include "lib/page/page.h"

#define EG__MD_FAILS 10

/* Text for a table cell: '|' escaped, line breaks as spaces. */
static void eg__cell(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static const char *eg__mark(const char *word)
{
	if (!strcmp(word, "pass"))
		return "\u2705";
	if (!strcmp(word, "fail") || !strcmp(word, "error"))
		return "\u274c";
	if (!strcmp(word, "inconclusive"))
		return "\u26a0\ufe0f";
	return "\u23ed\ufe0f";
}

static void eg__md_gates(FILE *f, const eg__prof_t *p)
{
	fprintf(f, "\n### Gates of %s\n\n", p->name);
	if (!p->gr) {
		fputs("_", f);
		eg__cell(f, p->gerr);
		fputs("_\n", f);
		return;
	}
	fputs("| verdict | gate | what it says | deciding value |\n"
	      "|---|---|---|---|\n",
	      f);
	for (size_t i = 0; i < p->gf.n_gates; i++) {
		const eg__gres_t *r = &p->gr[i];
		const char *w = eg__page_gres_word(r);

		fprintf(f, "| %s %s | `%s` | ", eg__mark(w), w, r->g->name);
		eg__cell(f, r->g->sentence);
		fputs(" | ", f);
		eg__cell(f, r->hard ? r->err : r->res.summary);
		fputs(" |\n", f);
	}
}

static void eg__md_suites(FILE *f, const eg__page_t *pg)
{
	if (!pg->n_js)
		return;
	fputs("\n| suite | tests | passed | failed | errors | crashed | "
	      "skipped |\n|---|---:|---:|---:|---:|---:|---:|\n",
	      f);
	for (size_t i = 0; i < pg->n_js; i++) {
		const eg__jsuite_t *s = &pg->js[i];

		fprintf(f, "| %s | %u | %u | %u | %u | %u | %u |\n", s->name,
			s->tests,
			s->tests - s->failures - s->errors - s->skipped,
			s->failures, s->errors - s->crashed, s->crashed,
			s->skipped);
	}
}

static void eg__md_fails(FILE *f, const eg__page_t *pg)
{
	unsigned n = 0, shown = 0;

	for (size_t i = 0; i < pg->n_fails; i++)
		n += (unsigned)eg__page_fail_shown(pg, &pg->fails[i]);
	if (!n)
		return;
	fprintf(f, "\n### Failed cases (%u)\n\n", n);
	for (size_t i = 0; i < pg->n_fails && shown < EG__MD_FAILS; i++) {
		const eg__fail_t *x = &pg->fails[i];

		if (!eg__page_fail_shown(pg, x))
			continue;
		shown++;
		fprintf(f, "- `%s` %s: ", x->name, x->cls);
		eg__cell(f, x->message);
		fputc('\n', f);
		if (x->repro)
			fprintf(f, "  `%s`\n", x->repro);
	}
	if (n > shown)
		fprintf(f, "- ... %u more in the report\n", n - shown);
}

int eg__page_md_write(FILE *f, const eg__page_t *pg, const char *html_name)
{
	eg__tally_t t;
	const char *v;

	eg__page_tally(pg, &t);
	eg__page_tally_verdict(&t, &v);
	fprintf(f, "## epgate: %s\n\n", v);
	eg__verdict_line(f, &t, "");
	fprintf(f, ". Charts, every failure and its repro: [%s](%s)", html_name,
		html_name);
	if (pg->run_dir[0])
		fprintf(f, " in `%s`", pg->run_dir);
	fputs(".\n", f);
	if (pg->note[0])
		fprintf(f, "\n_%s_\n", pg->note);
	eg__md_suites(f, pg);
	for (size_t i = 0; i < pg->n_prof; i++)
		eg__md_gates(f, &pg->prof[i]);
	eg__md_fails(f, pg);
	return ferror(f) ? -1 : 0;
}
