/* The page: head and style, the summary at the top (the verdict, what
 * ran where, the suites, every gate with its sentence and verdict),
 * then the failures, the profiles and the history (html_*.c). One file,
 * no script, nothing fetched: it opens offline and anywhere. */
#include <stdio.h>

#include "lib/page/html_evidence.h"
#include "lib/page/html_int.h"

static const char eg__css[] =
    ":root{--pass:#2ca02c;--fail:#d62728;--inc:#d98b00;--skip:#8a8a8a;"
    "--err:#8b1a1a;--ink:#1d1d1f;--muted:#5f6368;--line:#e2e2e2}\n"
    "*{box-sizing:border-box}\n"
    "body{font:14px/1.45 'DejaVu Sans',system-ui,sans-serif;color:"
    "var(--ink);margin:0;background:#f6f6f4}\n"
    "main{max-width:1400px;margin:0 auto;padding:18px 26px 60px}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;margin:30px 0 "
    "10px;padding-bottom:4px;border-bottom:2px solid var(--line)}\n"
    "h3{font-size:16px;margin:22px 0 6px}h4{font-size:14px;margin:12px 0 "
    "4px}\n"
    "nav{font-size:13px;margin:6px 0 12px}nav a{margin-right:14px}\n"
    "a{color:#1f5fa8;text-decoration:none}a:hover{text-decoration:"
    "underline}\n"
    ".banner{padding:10px 16px;border-radius:6px;font-weight:700;"
    "font-size:17px;color:#fff;margin:10px 0}\n"
    ".banner.pass{background:var(--pass)}.banner.fail{background:"
    "var(--fail)}.banner.skip{background:var(--skip)}.banner.error{"
    "background:var(--err)}\n"
    ".meta{color:var(--muted);font-size:13px;margin:2px 0}\n"
    ".badge{display:inline-block;min-width:5.6em;text-align:center;"
    "padding:1px 6px;border-radius:4px;font-size:11px;font-weight:700;"
    "color:#fff;text-transform:uppercase;letter-spacing:.02em}\n"
    ".badge.pass{background:var(--pass)}.badge.fail{background:"
    "var(--fail)}.badge.inconclusive{background:var(--inc)}.badge.skip{"
    "background:var(--skip)}.badge.error{background:var(--err)}\n"
    ".badge.crash{background:var(--fail);outline:2px solid var(--err)}\n"
    "table{border-collapse:collapse;background:#fff;margin:6px 0 10px}\n"
    "th,td{border-bottom:1px solid var(--line);padding:4px 9px;"
    "text-align:left;vertical-align:top}\n"
    "th{background:#efefec;font-size:12px;font-weight:700}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}\n"
    ".ci{color:var(--muted);font-size:11px}\n"
    "td.st-fail{background:#fdeceb}td.st-pass{background:#eef7ee}\n"
    "tr.gate.fail td{background:#fff4f3}\n"
    "td.sentence{max-width:560px}td.detail{color:var(--muted);"
    "font-size:12px;max-width:420px}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,"
    "minmax(600px,1fr));gap:14px;margin:8px 0}\n"
    "figure{margin:0;background:#fff;border:1px solid var(--line);"
    "border-radius:6px;padding:6px}\n"
    "figure svg{width:100%;height:auto;display:block}\n"
    "figcaption{font-size:12px;color:var(--muted);padding:2px 6px}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:3px 16px;font-size:12px;"
    "padding:2px 8px 4px}\n"
    ".li{display:inline-flex;align-items:center;gap:6px}\n"
    ".sw{display:inline-block;width:26px;height:0;border-top-width:2px}\n"
    ".sw.band{height:9px;border-width:2px 0 2px;border-bottom-style:"
    "dashed;background:rgba(44,160,44,.15)}\n"
    ".sw.dot{width:11px;height:11px;border-radius:50%;border:0}\n"
    ".nochart{padding:40px 12px;text-align:center;color:var(--muted);"
    "background:#fbfbfb}\n"
    ".note{background:#fff8e1;border:1px solid #f0d98a;padding:6px 10px;"
    "border-radius:4px;margin:8px 0}\n"
    ".failure{background:#fff;border-left:5px solid var(--fail);"
    "padding:8px 14px;margin:10px 0}\n"
    ".failure.error{border-left-color:var(--err)}\n"
    ".failure.crash{border-left:5px double var(--fail)}\n"
    ".failure h4{margin:2px 0 4px}.diagnosis{margin:2px 0 6px}\n"
    "pre{font:12px/1.4 'DejaVu Sans Mono',monospace}\n"
    "pre.repro{background:#1d1d1f;color:#f3f3f3;padding:6px 10px;"
    "border-radius:4px;overflow-x:auto;margin:4px 0;white-space:pre-wrap;"
    "overflow-wrap:anywhere}\n"
    "details pre{max-height:380px;overflow:auto;background:#f4f4f2;"
    "padding:8px}\n"
    "ul.gates{margin:4px 0;padding-left:0;list-style:none}\n"
    "ul.gates li{margin:3px 0}\n"
    "section.suite{background:#fff;border:1px solid var(--line);"
    "border-radius:8px;padding:4px 16px 10px;margin:16px 0}\n"
    "footer{color:var(--muted);font-size:12px;margin-top:40px}\n";

void eg__page_badge(FILE *f, const char *word)
{
	fprintf(f, "<span class=\"badge %s\">%s</span>", word, word);
}

/* The one-line verdict of the page. */
static void eg__banner(FILE *f, const eg__page_t *pg)
{
	eg__tally_t t;
	const char *cls, *word;

	eg__page_tally(pg, &t);
	cls = eg__page_tally_verdict(&t, &word);
	fprintf(f,
		"<div class=\"banner %s\" id=\"verdict\" data-verdict=\"%s\">",
		cls, cls);
	eg__verdict_line(
	    f, &t, pg->n_hist && !pg->n_prof ? " in the latest runs" : "");
	if (pg->n_hist)
		fprintf(f, "; %u change point%s", t.changes,
			t.changes == 1 ? "" : "s");
	fputs("</div>\n", f);
}

/* What ran where: the run folder and each profile's context. */
static void eg__meta(FILE *f, const eg__page_t *pg)
{
	if (pg->run_dir[0]) {
		eg__html(f, "<p class=\"meta\">run folder <code>%s</code>",
			 pg->run_dir);
		if (pg->summary &&
		    json_integer_value(json_object_get(pg->summary, "exit")) >=
			0 &&
		    json_object_get(pg->summary, "exit"))
			fprintf(f, ", exit status %lld",
				(long long)json_integer_value(
				    json_object_get(pg->summary, "exit")));
		fputs("</p>\n", f);
	}
	if (pg->note[0])
		eg__html(f, "<p class=\"note\" id=\"page-note\">%s</p>\n",
			 pg->note);
	if (pg->draw_msg[0]) {
		eg__html(f,
			 "<p class=\"note\" id=\"chart-note\">%s; every number "
			 "is in the tables below.</p>\n",
			 pg->draw_msg);
	}
}

/* The suites of a run folder: one row per JUnit file. */
static void eg__suites(FILE *f, const eg__page_t *pg)
{
	if (!pg->n_js)
		return;
	fputs("<h3>Suites</h3>\n<table class=\"suites\"><tr><th>suite</th>"
	      "<th class=\"num\">tests</th><th class=\"num\">passed</th>"
	      "<th class=\"num\">failed</th><th class=\"num\">errors</th>"
	      "<th class=\"num\">crashed</th><th class=\"num\">skipped</th>"
	      "<th>reports</th></tr>\n",
	      f);
	for (size_t i = 0; i < pg->n_js; i++) {
		const eg__jsuite_t *s = &pg->js[i];
		unsigned pass = s->tests - s->failures - s->errors - s->skipped;
		unsigned errors = s->errors - s->crashed;

		eg__html(f, "<tr class=\"suite\" data-suite=\"%s\"><td>%s",
			 s->name, s->name);
		fprintf(f,
			"</td><td class=\"num\">%u</td><td class=\"num\">%u"
			"</td><td class=\"num%s\">%u</td><td class=\"num%s\">"
			"%u</td><td class=\"num%s\">%u</td><td "
			"class=\"num\">%u</td><td>",
			s->tests, pass, s->failures ? " st-fail" : "",
			s->failures, errors ? " st-fail" : "", errors,
			s->crashed ? " st-fail" : "", s->crashed, s->skipped);
		eg__page_link(f, s->file);
		if (s->tap[0]) {
			fputs(" &middot; ", f);
			eg__page_link(f, s->tap);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

int eg__html_write(FILE *f, const eg__page_t *pg)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	      "charset=\"utf-8\">\n<meta name=\"viewport\" "
	      "content=\"width=device-width, initial-scale=1\">\n<title>",
	      f);
	eg__page_esc(f, pg->title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n",
		eg__css);
	eg__html(f, "<h1>%s</h1>\n", pg->title);
	eg__page_nav(f, pg);
	fputs("<section id=\"summary\">\n", f);
	eg__banner(f, pg);
	eg__meta(f, pg);
	eg__html_evidence(f, pg); /* what ran (html_evidence.c) */
	eg__suites(f, pg);
	eg__page_gate_tables(f, pg);
	fputs("</section>\n", f);
	eg__page_failures(f, pg);
	for (size_t i = 0; i < pg->n_prof; i++)
		eg__page_profile(f, &pg->prof[i]);
	if (pg->n_hist)
		fputs("<section id=\"history\">\n<h2>History</h2>\n", f);
	for (size_t i = 0; i < pg->n_hist; i++)
		eg__page_history(f, &pg->hist[i]);
	if (pg->n_hist)
		fputs("</section>\n", f);
	fprintf(f,
		"<footer>epgate %s &middot; charts drawn by gnuplot "
		"&middot; docs/reports.md</footer>\n</main>\n</body>\n"
		"</html>\n",
		PACKAGE_VERSION);
	return ferror(f) ? -1 : 0;
}
