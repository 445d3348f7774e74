/* The page's evidence block (html_evidence.c). */
#ifndef EG_PAGE_HTML_EVIDENCE_H
#define EG_PAGE_HTML_EVIDENCE_H

#include <stdio.h>

#include "lib/page/page.h"

/* What ran, under the verdict: the run's summary.json "evidence", else
 * the evidence of the page's results files (eg_results_evidence); a
 * table with one row per key (data-key KEY, env knobs env.NAME), or
 * nothing when there is none. */
void eg__html_evidence(FILE *f, const eg__page_t *pg);

#endif
