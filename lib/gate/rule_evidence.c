/* The evidence rule (docs/gates.md): every point's evidence field (or,
 * where the point has none, its file's context field) is one of the
 * expected values. A point of an older epgate's file that lacks a field
 * that epgate did not write yet cannot be judged: the gate is
 * inconclusive, saying which file to re-record (docs/results-v1.md,
 * "Older files"), never failed for it; a value the reader derived for
 * such a file is said as derived. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

#define EG__NONE "(no evidence recorded)"

typedef struct eg__ev {
	const char *first_bad, *first_at, *seen;
	const eg_results_t *older; /* the first older file lacking it */
	size_t n_older;
	json_t *bad, *derived;
} eg__ev_t;

/* One cell: pass, a mismatch, or an older file's missing field. */
static void eg__ev_cell(const eg_gate_t *g, const eg__gate_cell_t *e,
			eg__ev_t *s)
{
	json_t *v =
	    e->p->evidence ? json_object_get(e->p->evidence, g->field) : NULL;
	const char *str, *from;
	int ok = 0;

	if (!v)
		v = json_object_get(e->file->context, g->field);
	str = json_is_string(v) ? json_string_value(v) : NULL;
	for (size_t k = 0; str && k < g->n_expect; k++)
		ok |= !strcmp(str, g->expect[k]);
	from = json_string_value(json_object_get(e->file->derived, g->field));
	if (str && from && e->file->path &&
	    !json_object_get(s->derived, e->file->path))
		json_object_set_new(
		    s->derived, e->file->path,
		    json_sprintf("%s derived from %s", g->field, from));
	if (ok) {
		s->seen = str;
		return;
	}
	if (!str && eg_results_older_lacks(e->file, g->field)) {
		if (!s->n_older++)
			s->older = e->file;
		return;
	}
	json_array_append_new(s->bad, json_pack("{s:s, s:s}", "at", e->at,
						"got", str ? str : EG__NONE));
	if (!s->first_at) {
		s->first_at = e->at;
		s->first_bad = str ? str : EG__NONE;
	}
}

static void eg__ev_verdict(const eg_gate_t *g, size_t n, const eg__ev_t *s,
			   eg_gate_result_t *res)
{
	char why[sizeof(res->summary)];

	if (!n) {
		res->verdict = EG_VERDICT_SKIP;
		eg__gate_say(res, "no data: no point passes the filter");
	} else if (s->first_at) {
		res->verdict = EG_VERDICT_FAIL;
		eg__gate_say(res, "%s %s at %s, want %s%s", g->field,
			     s->first_bad, s->first_at, g->expect[0],
			     g->n_expect > 1 ? " ..." : "");
	} else if (s->n_older) {
		res->verdict = EG_VERDICT_INCONCLUSIVE;
		eg__older_say(why, sizeof(why), s->older, g->field);
		eg__gate_say(res, "%.300s (%zu of %zu points)", why, s->n_older,
			     n);
	} else {
		res->verdict = EG_VERDICT_PASS;
		eg__gate_say(res, "%s %s on all %zu points%s", g->field,
			     s->seen, n,
			     json_object_size(s->derived)
				 ? " (derived for an older epgate's file)"
				 : "");
	}
}

int eg__rule_evidence(const eg_gate_file_t *gf, const eg_gate_t *g,
		      const eg__cells_t *c, eg_gate_result_t *res, char *err,
		      size_t len)
{
	json_t *exp = json_array();
	eg__ev_t s = {.bad = json_array(), .derived = json_object()};

	(void)gf;
	(void)err;
	(void)len;
	if (!exp || !s.bad || !s.derived) {
		json_decref(exp);
		json_decref(s.bad);
		json_decref(s.derived);
		return EG_ENOMEM;
	}
	for (size_t i = 0; i < g->n_expect; i++)
		json_array_append_new(exp, json_string(g->expect[i]));
	json_object_set_new(res->diag, "field", json_string(g->field));
	json_object_set_new(res->diag, "expect", exp);
	json_object_set_new(res->diag, "points",
			    json_integer((json_int_t)c->n));
	for (size_t i = 0; i < c->n; i++)
		eg__ev_cell(g, &c->c[i], &s);
	if (json_array_size(s.bad))
		json_object_set(res->diag, "mismatch", s.bad);
	if (json_object_size(s.derived))
		json_object_set(res->diag, "derived", s.derived);
	if (s.n_older)
		json_object_set_new(res->diag, "older",
				    json_integer((json_int_t)s.n_older));
	eg__ev_verdict(g, c->n, &s, res);
	json_decref(s.bad);
	json_decref(s.derived);
	return 0;
}
