/* The parts of the page (html.c, html_gates.c, html_prof.c,
 * html_hist.c). */
#ifndef EG_PAGE_HTML_INT_H
#define EG_PAGE_HTML_INT_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "lib/page/page.h"

/* <span class="badge WORD">WORD</span> */
void eg__page_badge(FILE *f, const char *word);
/* a link to a file of the run folder, named by its name */
void eg__page_link(FILE *f, const char *name);
/* the table of contents under the title */
void eg__page_nav(FILE *f, const eg__page_t *pg);
/* every profile's gates: verdict, name, sentence, rule, detail */
void eg__page_gate_tables(FILE *f, const eg__page_t *pg);
/* every failure: diagnosis, repro line, diagnostics */
void eg__page_failures(FILE *f, const eg__page_t *pg);
/* a profile: its context, then each suite's gates, charts and points */
void eg__page_profile(FILE *f, const eg__prof_t *p);
/* a history group: each gated value over time */
void eg__page_history(FILE *f, const eg__hist_t *h);
/* a chart: its SVG, or the note that it could not be drawn */
void eg__page_figure(FILE *f, const eg__chart_t *c, const char *suite);
/* the command that judges results again */
typedef struct eg__repro {
	const char *gates;
	const eg_results_t *cur, *base;
	size_t n_cur, n_base;
} eg__repro_t;
void eg__page_repro_gate(FILE *f, const eg__repro_t *r);

#endif
