/* Gate evaluation: the names a gate file uses checked against the data,
 * then one gate at a time to its rule. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/evidence.h"
#include "gate_int.h"

const char *eg_gate_verdict_name(eg_gate_verdict_t v)
{
	static const char *const n[] = {"pass", "fail", "inconclusive", "skip"};

	return (unsigned)v < 4 ? n[v] : "?";
}

const char *eg_rule_name(eg_rule_t r)
{
	static const char *const n[] = {"bound",    "parity", "flat",
					"recovery", "trend",  "regression",
					"evidence"};

	return (unsigned)r < 7 ? n[r] : "?";
}

int eg_gate_data_history(const eg_gate_data_t *d)
{
	return d && d->base && d->n_base && d->base[0].history;
}

void eg_gate_result_fini(eg_gate_result_t *r)
{
	if (!r)
		return;
	json_decref(r->diag);
	json_decref(r->remeasure);
	r->diag = r->remeasure = NULL;
}

enum { EG__METRIC, EG__ARM, EG__AXIS, EG__FIELD };

static int eg__present_in(const eg_results_t *r, size_t n, int what,
			  const char *name)
{
	for (size_t f = 0; f < n; f++) {
		if (what == EG__FIELD && json_object_get(r[f].context, name))
			return 1;
		for (size_t i = 0; i < r[f].n_points; i++) {
			const eg_point_t *p = &r[f].points[i];

			if ((what == EG__METRIC && eg_point_metric(p, name)) ||
			    (what == EG__ARM && !strcmp(p->arm, name)) ||
			    (what == EG__AXIS &&
			     json_object_get(p->axes, name)) ||
			    (what == EG__FIELD && p->evidence &&
			     json_object_get(p->evidence, name)))
				return 1;
		}
	}
	return 0;
}

static int eg__present(const eg_gate_data_t *d, int what, const char *name)
{
	return eg__present_in(d->cur, d->n_cur, what, name) ||
	       (d->base && eg__present_in(d->base, d->n_base, what, name));
}

/* What a gate names is known to the schema or present in the data; the
 * error says which kind and what else it could have been. */
static const struct {
	const char *word, *else_;
} eg__kinds[] = {
    [EG__METRIC] = {"metric", "not in the schema, docs/results-v1.md"},
    [EG__ARM] = {"arm", "not a standard arm (a2a, dense) nor one of the "
			"file's arms:"},
    [EG__AXIS] = {"axis", "not a schema axis"},
};

/* names[0..n), up to the first NULL: each an arm, axis or metric. */
static int eg__check_names(const eg_gate_file_t *gf, const eg_gate_t *g,
			   const eg_gate_data_t *d, int what,
			   char *const *names, size_t n, int line, char *err,
			   size_t len)
{
	for (size_t k = 0; k < n && names[k]; k++) {
		const char *x = names[k];
		int known = what == EG__METRIC ? eg_metric_info(x) != NULL
			    : what == EG__ARM  ? eg_arm_known(x)
					       : eg_axis_known(x);

		/* the profile's named arms, as the file's arms: lists them */
		for (size_t a = 0; what == EG__ARM && a < gf->n_arms; a++)
			known |= !strcmp(gf->arms[a], x);

		if (!known && !eg__present(d, what, x))
			return eg__gate_gerr(
			    gf, line, err, len,
			    "gate \"%s\": unknown %s \"%s\" (in no "
			    "results file and %s)",
			    g->name, eg__kinds[what].word, x,
			    eg__kinds[what].else_);
	}
	return 0;
}

/* Points in the current results: none when every step died early. */
static size_t eg__n_points(const eg_gate_data_t *d)
{
	size_t n = 0;

	for (size_t f = 0; f < d->n_cur; f++)
		n += d->cur[f].n_points;
	return n;
}

int eg_gate_file_check(const eg_gate_file_t *gf, const eg_gate_data_t *d,
		       char *err, size_t errlen)
{
	/* Evidence fields have no schema list: they are checked against
	 * the data only. Results without a point (every step died before
	 * its first) have nothing to check them against; those gates then
	 * say "no data" like the rest. */
	int points = eg__n_points(d) > 0, rc;

	for (size_t i = 0; i < gf->n_gates; i++) {
		const eg_gate_t *g = &gf->gates[i];

		if ((rc = eg__check_names(gf, g, d, EG__METRIC, &g->metric, 1,
					  g->metric_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__ARM, g->ratio, 2,
					  g->ratio_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__ARM, g->versus, 2,
					  g->versus_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__ARM, g->arms, g->n_arms,
					  g->arms_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__ARM, &g->fallback, 1,
					  g->fallback_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__AXIS, &g->axis, 1,
					  g->axis_line, err, errlen)) ||
		    (rc = eg__check_names(gf, g, d, EG__AXIS, g->covary,
					  g->n_covary, g->covary_line, err,
					  errlen)))
			return rc;
		for (size_t k = 0; k < g->n_filter; k++)
			if (strcmp(g->filter[k].key, "suite") &&
			    (rc = eg__check_names(
				 gf, g, d, EG__AXIS, &g->filter[k].key, 1,
				 g->filter[k].line, err, errlen)))
				return rc;
		/* the fields of docs/results-v1.md are known: an older
		 * file without one is judged, not refused */
		if (points && g->field && !eg_evidence_point_key(g->field) &&
		    !eg__present(d, EG__FIELD, g->field))
			return eg__gate_gerr(
			    gf, g->field_line, err, errlen,
			    "gate \"%s\": unknown evidence field "
			    "\"%s\" (in no results file; "
			    "transport or provider?)",
			    g->name, g->field);
	}
	return 0;
}

/* The rule that judges a campaign's cells, by the gate's rule; regression
 * compares campaigns instead (eg__rule_regression) and has none. */
static eg__cells_rule_t *const eg__cells_rules[] = {
    [EG_RULE_BOUND] = eg__gate_rule_bound,
    [EG_RULE_PARITY] = eg__gate_rule_bound,
    [EG_RULE_FLAT] = eg__gate_rule_flat,
    [EG_RULE_RECOVERY] = eg__gate_rule_recovery,
    [EG_RULE_TREND] = eg__gate_rule_trend,
    [EG_RULE_EVIDENCE] = eg__rule_evidence,
};
#define EG__N_RULES (sizeof(eg__cells_rules) / sizeof(eg__cells_rules[0]))

/* Does arm have a point in the current results that passes g's
 * filter? */
static int eg__arm_ran(const eg_gate_t *g, const eg_gate_data_t *d,
		       const char *arm)
{
	for (size_t f = 0; f < d->n_cur; f++)
		for (size_t i = 0; i < d->cur[f].n_points; i++) {
			const eg_point_t *p = &d->cur[f].points[i];

			if (!strcmp(p->arm, arm) &&
			    eg__gate_filter_match(g, p, 1))
				return 1;
		}
	return 0;
}

/* The gate to judge: g, or when g's own arm (the ratio's numerator, or
 * its one arm) has no point here and g names a fallback, a copy judging
 * the fallback in its place (alt, its arms in one), said in diag.  *own:
 * the gate's own arm when it fell back, else NULL. */
static const eg_gate_t *eg__fallback(const eg_gate_t *g,
				     const eg_gate_data_t *d, eg_gate_t *alt,
				     char **one, json_t *diag, const char **own)
{
	const char *arm = g->ratio[0] ? g->ratio[0] : g->arms ? g->arms[0] : 0;

	*own = NULL;
	if (!g->fallback || !arm || eg__arm_ran(g, d, arm))
		return g;
	*own = arm;
	*alt = *g;
	one[0] = g->fallback;
	if (g->ratio[0])
		alt->ratio[0] = g->fallback;
	else
		alt->arms = one;
	json_object_set_new(
	    diag, "fallback",
	    json_pack("{s:s, s:s}", "arm", arm, "judged", g->fallback));
	return alt;
}

/* The fallback said at the end of the summary, whole: the summary is cut
 * to make room. */
static void eg__fallback_note(eg_gate_result_t *res, const char *own,
			      const char *judged)
{
	char note[160];
	size_t n = strlen(res->summary), k;

	snprintf(note, sizeof(note),
		 " (%s did not run here: %s judged in its place)", own, judged);
	k = strlen(note);
	if (n + k >= sizeof(res->summary))
		n = sizeof(res->summary) - 1 - k;
	memcpy(res->summary + n, note, k + 1);
}

int eg_gate_eval(const eg_gate_file_t *gf, const eg_gate_t *g,
		 const eg_gate_data_t *d, eg_gate_result_t *res, char *err,
		 size_t errlen)
{
	eg_gate_t alt;
	char *one[1];
	const char *own;
	eg__cells_t c = {0};
	eg__cells_rule_t *rule;
	size_t unpaired = 0;
	char label[192];
	int rc;

	memset(res, 0, sizeof(*res));
	res->diag = json_object();
	res->remeasure = json_array();
	if (!res->diag || !res->remeasure) {
		eg_gate_result_fini(res);
		return EG_ENOMEM;
	}
	g = eg__fallback(g, d, &alt, one, res->diag, &own);
	json_object_set_new(res->diag, "sentence", json_string(g->sentence));
	json_object_set_new(res->diag, "rule",
			    json_string(eg_rule_name(g->rule)));
	json_object_set_new(
	    res->diag, "metric",
	    json_string(eg__gate_metric_label(g, label, sizeof(label))));
	if (g->rule == EG_RULE_REGRESSION) {
		rc = eg__rule_regression(gf, g, d, res, err, errlen);
		goto done;
	}
	rc = eg__select(gf, g, d->cur, d->n_cur, g->rule != EG_RULE_EVIDENCE,
			&c, &unpaired, err, errlen);
	if (rc)
		goto done;
	if (unpaired)
		json_object_set_new(res->diag, "unpaired",
				    json_integer((json_int_t)unpaired));
	if (!c.n) {
		res->verdict = EG_VERDICT_SKIP;
		if (unpaired)
			snprintf(res->summary, sizeof(res->summary),
				 "no data: %zu %s point(s) without a %s twin",
				 unpaired, g->ratio[0], g->ratio[1]);
		else if (g->arms && !g->ratio[0])
			/* the arm that did not run, named */
			snprintf(res->summary, sizeof(res->summary),
				 "no data: no point of %s%s with %s passes "
				 "the filter",
				 g->arms[0], g->n_arms > 1 ? ", ..." : "",
				 label);
		else
			snprintf(res->summary, sizeof(res->summary),
				 "no data: no point with %s passes the filter",
				 label);
		goto done;
	}
	rule =
	    (unsigned)g->rule < EG__N_RULES ? eg__cells_rules[g->rule] : NULL;
	rc = rule ? rule(gf, g, &c, res, err, errlen) : EG_EINVAL;
done:
	eg__gate_cells_free(&c);
	if (rc) {
		eg_gate_result_fini(res);
		return rc;
	}
	if (own)
		eg__fallback_note(res, own, g->fallback);
	json_object_set_new(res->diag, "verdict",
			    json_string(eg_gate_verdict_name(res->verdict)));
	return 0;
}
