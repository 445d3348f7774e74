/* `epgate report` and the report.html of every run folder: what to
 * show (a run folder, results files, a history store), the gates judged
 * in process, every chart drawn in one gnuplot run, the page and its
 * Markdown summary written atomically. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/mem.h"
#include "lib/page/page.h"

void eg__page_note(eg__page_t *pg, const char *fmt, ...)
{
	size_t n = strlen(pg->note);
	va_list ap;

	if (n && n + 1 < sizeof(pg->note))
		pg->note[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(pg->note + n, sizeof(pg->note) - n, fmt, ap);
	va_end(ap);
}

int eg__page_fail_shown(const eg__page_t *pg, const eg__fail_t *f)
{
	/* a gate's failure is shown from the in-process verdict */
	for (size_t i = 0; i < pg->n_prof; i++)
		if (pg->prof[i].gr && !strncmp(f->suite, "gates.", 6) &&
		    !strcmp(f->suite + 6, pg->prof[i].gf.profile))
			return 0;
	return 1;
}

void eg__page_fini(eg__page_t *pg)
{
	for (size_t i = 0; i < pg->n_prof; i++)
		eg__prof_fini(&pg->prof[i]);
	for (size_t i = 0; i < pg->n_fails; i++) {
		eg__fail_t *f = &pg->fails[i];

		EG_FREE(f->suite, f->cls, f->name, f->message, f->body,
			f->repro);
	}
	eg__history_free(pg->hist, pg->n_hist);
	EG_FREE(pg->prof, pg->fails, pg->js);
	json_decref(pg->summary);
	memset(pg, 0, sizeof(*pg));
}

/* Results files (and baselines) into profiles: all under the gate
 * file's when one is given, else each under its own. */
static int eg__campaign(eg__page_t *pg, const eg_report_opts_t *o, char *err,
			size_t len)
{
	eg_results_t *r = NULL, *b = NULL;
	size_t nr = 0, nb = 0;
	int rc = eg_results_read_all((char *const *)o->results, o->n_results,
				     &r, &nr, err, len);

	if (!rc)
		rc = eg_results_read_all((char *const *)o->baselines,
					 o->n_baselines, &b, &nb, err, len);
	for (size_t i = 0; !rc && i < nr; i++)
		rc = eg__page_add_results(pg, &r[i], o->gates ? "gates" : NULL);
	if (!rc && pg->n_prof > 1 && nb) {
		snprintf(err, len,
			 "--baseline: the results hold %zu profiles; "
			 "give --gates to judge them as one",
			 pg->n_prof);
		rc = EG_EINVAL;
	}
	if (!rc && pg->n_prof) {
		pg->prof[0].base = b;
		pg->prof[0].n_base = nb;
		b = NULL;
	}
	eg_results_free_all(r, nr);
	eg_results_free_all(b, nb);
	return rc;
}

/* A run folder's profile without a gate file of its own name (a
 * profile given as a file, like suites/slurm/slurm-tiny.profile): the
 * gate file its bench-gates JUnit names ("gates.local"). */
static void eg__gates_of_run(const eg__page_t *pg, eg__prof_t *p)
{
	if (!pg->run_dir[0] ||
	    !eg__page_find_gates(p->name, p->gates_path, sizeof(p->gates_path)))
		return;
	p->gates_path[0] = '\0';
	for (size_t i = 0; i < pg->n_js; i++)
		if (!strncmp(pg->js[i].name, "gates.", 6) &&
		    !eg__page_find_gates(pg->js[i].name + 6, p->gates_path,
					 sizeof(p->gates_path)))
			return;
	p->gates_path[0] = '\0';
}

/* The verdicts judged here against those the gate run counted (its
 * record): a difference is said, never left to be found. */
static void eg__same_as_run(eg__page_t *pg, const eg__prof_t *p)
{
	static const char *const key[5] = {"pass", "fail", "inconclusive",
					   "skip", "error"};
	unsigned here[5] = {0};

	if (!p->verdicts || !p->gr)
		return;
	for (size_t k = 0; k < p->gf.n_gates; k++)
		here[p->gr[k].hard ? 4 : (int)p->gr[k].res.verdict]++;
	for (int i = 0; i < 5; i++) {
		json_int_t then =
		    json_integer_value(json_object_get(p->verdicts, key[i]));

		if (here[i] == (unsigned)then)
			continue;
		eg__page_note(pg,
			      "%s: judged here, the gates of %s give other "
			      "verdicts than the gate run counted (%s: %u "
			      "here, %lld then).",
			      p->judged, p->name, key[i], here[i],
			      (long long)then);
		return;
	}
}

/* Gates judged, then every chart drawn at once. */
static int eg__judge_and_draw(eg__page_t *pg, const eg_report_opts_t *o,
			      char *err, size_t len)
{
	eg__chart_t **all = NULL;
	size_t n = 0;
	unsigned next = 0;
	int rc = EG_OK;

	for (size_t i = 0; !rc && i < pg->n_prof; i++) {
		eg__prof_t *p = &pg->prof[i];

		if (o->gates)
			snprintf(p->gates_path, sizeof(p->gates_path), "%s",
				 o->gates);
		else if (!p->judged[0]) /* a record names its own */
			eg__gates_of_run(pg, p);
		rc = eg__prof_judge(p, err, len);
		if (!rc)
			eg__same_as_run(pg, p);
		if (!rc && p->have_gf && !strcmp(p->name, "gates"))
			snprintf(p->name, sizeof(p->name), "%s", p->gf.profile);
		if (!rc)
			rc = eg__prof_charts(p, &next);
	}
	for (size_t i = 0; !rc && i < pg->n_hist; i++)
		rc = eg__page_history_charts(&pg->hist[i], &next);
	if (rc)
		return rc;
	all = calloc(next + 1, sizeof(*all));
	if (!all)
		return EG_ENOMEM;
	for (size_t i = 0; i < pg->n_prof; i++)
		for (size_t k = 0; k < pg->prof[i].n_ch; k++)
			all[n++] = &pg->prof[i].ch[k];
	for (size_t i = 0; i < pg->n_hist; i++)
		for (size_t k = 0; k < pg->hist[i].n_ch; k++)
			all[n++] = &pg->hist[i].ch[k];
	pg->drawn =
	    eg__gnuplot_draw(all, n, pg->draw_msg, sizeof(pg->draw_msg));
	free(all);
	return EG_OK;
}

static void eg__title(eg__page_t *pg, const eg_report_opts_t *o)
{
	size_t n;

	if (o->title) {
		snprintf(pg->title, sizeof(pg->title), "%s", o->title);
		return;
	}
	if (o->history) {
		snprintf(pg->title, sizeof(pg->title), "epgate history: %s",
			 o->history);
		return;
	}
	n = (size_t)snprintf(pg->title, sizeof(pg->title), "epgate report");
	for (size_t i = 0; i < pg->n_prof && n < sizeof(pg->title); i++)
		n +=
		    (size_t)snprintf(pg->title + n, sizeof(pg->title) - n,
				     "%s%s", i ? ", " : ": ", pg->prof[i].name);
	if (!pg->n_prof && o->run_dir)
		snprintf(pg->title + n, sizeof(pg->title) - n, ": %s",
			 o->run_dir);
}

static int eg__fill_html(FILE *f, void *arg)
{
	return eg__html_write(f, arg);
}

typedef struct eg__md_arg {
	const eg__page_t *pg;
	const char *html;
} eg__md_arg_t;

static int eg__fill_md(FILE *f, void *arg)
{
	const eg__md_arg_t *a = arg;

	return eg__page_md_write(f, a->pg, a->html);
}

/* The page, its Markdown summary and its screenshot, as asked. */
static int eg__outputs(const eg__page_t *pg, const eg_report_opts_t *o,
		       const char *out, const char *md)
{
	char err[4400];
	const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	eg__md_arg_t a = {pg, base};

	if (eg_file_write_atomic(out, eg__fill_html, (void *)pg, err,
				 sizeof(err)) < 0 ||
	    (md &&
	     eg_file_write_atomic(md, eg__fill_md, &a, err, sizeof(err)) < 0)) {
		fprintf(stderr, "epgate report: %s\n", err);
		return EG_EXIT_HARD;
	}
	if (!o->quiet)
		printf("epgate report: %s%s%s\n", out, md ? ", " : "",
		       md ? md : "");
	if (o->screenshot &&
	    eg__screenshot(out, o->screenshot, pg, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate report: --screenshot %s: %s\n",
			o->screenshot, err);
		return EG_EXIT_HARD;
	}
	return EG_EXIT_PASS;
}

static int eg__read(eg__page_t *pg, const eg_report_opts_t *o, char *err,
		    size_t len)
{
	if (!!o->run_dir + !!o->n_results + !!o->history != 1) {
		snprintf(err, len,
			 "give one of RUN_DIR, --results FILE or "
			 "--history DIR");
		return EG_EINVAL;
	}
	if (!o->run_dir && !o->out) {
		snprintf(err, len,
			 "-o FILE is required with --results and "
			 "--history");
		return EG_EINVAL;
	}
	if (o->run_dir)
		return eg__run_read(pg, o->run_dir, err, len);
	if (o->history)
		return eg__history_load(o->history, o->gates, &pg->hist,
					&pg->n_hist, err, len);
	return eg__campaign(pg, o, err, len);
}

/* The page's verdict as the command's last line, in the word of its exit
 * status rc: the banner's counts (docs/reports.md, "One verdict"). */
static void eg__last_line(const eg__page_t *pg, int rc)
{
	eg__tally_t t;

	eg__page_tally(pg, &t);
	eg__verdict_text(
	    stdout, &t, pg->n_hist && !pg->n_prof ? " in the latest runs" : "");
	if (pg->n_hist)
		printf("; %u change point%s", t.changes,
		       t.changes == 1 ? "" : "s");
	printf(" (exit %d)\n", rc);
	fflush(stdout);
}

/* Reads, judges, draws and writes (the verdict's line on stdout with
 * say): EG_EXIT_PASS written, EG_EXIT_HARD not; the page's verdict as
 * an exit status into *verdict. */
static int eg__report(const eg_report_opts_t *o, int say, int *verdict)
{
	eg__page_t pg = {.o = o};
	char err[EG_GATE_ERR_MAX + 512], out[4200], md[4200];
	eg__tally_t t;
	int rc = eg__read(&pg, o, err, sizeof(err));

	if (!rc)
		rc = eg__judge_and_draw(&pg, o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "epgate report: %s\n",
			rc == EG_ENOMEM ? "out of memory" : err);
		eg__page_fini(&pg);
		return EG_EXIT_HARD;
	}
	eg__title(&pg, o);
	snprintf(out, sizeof(out), "%s/report.html",
		 o->run_dir ? o->run_dir : ".");
	snprintf(md, sizeof(md), "%s/summary.md",
		 o->run_dir ? o->run_dir : ".");
	rc = eg__outputs(&pg, o, o->out ? o->out : out,
			 o->markdown  ? o->markdown
			 : o->run_dir ? md
				      : NULL);
	eg__page_tally(&pg, &t);
	*verdict = eg__page_tally_exit(&t);
	if (rc == EG_EXIT_PASS && say)
		eg__last_line(&pg, *verdict);
	eg__page_fini(&pg);
	return rc;
}

int eg_report_write(const eg_report_opts_t *o)
{
	int verdict = EG_EXIT_HARD;
	int rc = eg__report(o, !o->quiet, &verdict);

	return rc == EG_EXIT_PASS ? verdict : rc;
}

int eg_report_run_folder(const char *run_dir)
{
	eg_report_opts_t o = {.run_dir = run_dir};
	int verdict;

	return eg__report(&o, 0, &verdict) == EG_EXIT_PASS ? EG_OK : EG_EIO;
}
