/* Gate files through the strict YAML reader (lib/base/yaml_reader.c),
 * so every error names file:line.  Strict: unknown or repeated keys,
 * keys that do not apply to the gate's rule, numbers that are not
 * numbers or out of range are all errors (docs/gates.md). */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/gate.h"
#include "epgate/mem.h"
#include "epgate/yaml_reader.h"

static int eg__ident_str(eg_yaml_t *y, const char *key, const yaml_node_t *n,
			 char **out)
{
	int rc = eg_yaml_str(y, key, n, out);

	if (!rc && !eg_results_name_ok(*out))
		return eg_yaml_err(y, n,
				   "%s: \"%s\" is not a name ([a-z][a-z0-9_]*)",
				   key, *out);
	return rc;
}

/* Any finite number, with a sign. */
static int eg__read_num(eg_yaml_t *y, const char *key, const yaml_node_t *n,
			double *out)
{
	return eg_yaml_num(y, key, n, -DBL_MAX, DBL_MAX, 0, out);
}

/* A filter value: a plain number, else a string. */
static json_t *eg__filter_value(const yaml_node_t *n)
{
	double d;

	if (eg_yaml_is_number(n, &d))
		return json_real(d);
	return json_string(eg_yaml_scalar(n));
}

/* One filter's values: a value or a non-empty list of values. */
static int eg__filter_values(eg_yaml_t *y, const char *ks, const yaml_node_t *v,
			     json_t *values)
{
	if (v->type == YAML_SCALAR_NODE)
		return json_array_append_new(values, eg__filter_value(v))
			   ? EG_ENOMEM
			   : 0;
	if (v->type != YAML_SEQUENCE_NODE || !eg_yaml_len(v))
		return eg_yaml_err(y, v,
				   "filter: %s: expected a value or a "
				   "non-empty list",
				   ks);
	for (size_t i = 0; i < eg_yaml_len(v); i++) {
		yaml_node_t *e = eg_yaml_item(y, v, i);

		if (e->type != YAML_SCALAR_NODE)
			return eg_yaml_err(
			    y, e, "filter: %s: list items are values", ks);
		if (json_array_append_new(values, eg__filter_value(e)))
			return EG_ENOMEM;
	}
	return 0;
}

static int eg__filter(eg_yaml_t *y, const yaml_node_t *n, eg_gate_t *g)
{
	size_t cnt = eg_yaml_len(n);

	if (n->type != YAML_MAPPING_NODE)
		return eg_yaml_err(y, n,
				   "filter: expected a mapping (axis: "
				   "value or [values], suite: name)");
	g->filter = calloc(cnt ? cnt : 1, sizeof(*g->filter));
	if (!g->filter)
		return EG_ENOMEM;
	for (size_t j = 0; j < cnt; j++) {
		yaml_node_t *k = eg_yaml_key(y, n, j);
		eg_gate_filter_t *f = &g->filter[g->n_filter];
		const char *ks = eg_yaml_scalar(k);
		int rc;

		if (!ks || !eg_results_name_ok(ks))
			return eg_yaml_err(y, k,
					   "filter: keys are axis names "
					   "or \"suite\"");
		for (size_t i = 0; i < g->n_filter; i++)
			if (!strcmp(g->filter[i].key, ks))
				return eg_yaml_err(
				    y, k, "filter: \"%s\" given twice", ks);
		if (!strcmp(ks, "arm"))
			return eg_yaml_err(y, k,
					   "filter: select arms with "
					   "\"arms:\" or \"ratio:\"");
		f->line = eg_yaml_line(k);
		f->key = strdup(ks);
		f->values = json_array();
		g->n_filter++;
		if (!f->key || !f->values)
			return EG_ENOMEM;
		rc =
		    eg__filter_values(y, ks, eg_yaml_value(y, n, j), f->values);
		if (rc)
			return rc;
	}
	return 0;
}

static int eg__band(eg_yaml_t *y, const yaml_node_t *n, double band[2])
{
	int rc;

	if (n->type != YAML_SEQUENCE_NODE || eg_yaml_len(n) != 2)
		return eg_yaml_err(y, n, "band: expected [low, high]");
	if ((rc = eg__read_num(y, "band", eg_yaml_item(y, n, 0), &band[0])) ||
	    (rc = eg__read_num(y, "band", eg_yaml_item(y, n, 1), &band[1])))
		return rc;
	if (band[0] > band[1])
		return eg_yaml_err(y, n, "band: low %g is above high %g",
				   band[0], band[1]);
	return 0;
}

/* key: [A, B], two different arms: ratio's numerator and denominator,
 * or versus's arm B judged against arm A of the same results. */
static int eg__arm_pair(eg_yaml_t *y, const yaml_node_t *n, const char *key,
			char *arm[2], int *line)
{
	int rc;

	if (n->type != YAML_SEQUENCE_NODE || eg_yaml_len(n) != 2)
		return eg_yaml_err(
		    y, n, "%s: expected [%s]", key,
		    !strcmp(key, "ratio")
			? "numerator arm, denominator arm"
			: "arm judged, arm it is judged against");
	if ((rc = eg_yaml_str(y, key, eg_yaml_item(y, n, 0), &arm[0])) ||
	    (rc = eg_yaml_str(y, key, eg_yaml_item(y, n, 1), &arm[1])))
		return rc;
	if (!strcmp(arm[0], arm[1]))
		return eg_yaml_err(y, n, "%s: the same arm twice", key);
	*line = eg_yaml_line(n);
	return 0;
}

/* Keys a gate may have, and the rules each applies to. */
#define EG__ALL	 0x7f
#define EG__R(r) (1u << (r))
static const struct eg__key {
	const char *key;
	unsigned rules;
} eg__keys[] = {
    {"name", EG__ALL},
    {"sentence", EG__ALL},
    {"rule", EG__ALL},
    {"metric", EG__ALL & ~EG__R(EG_RULE_EVIDENCE)},
    {"ratio", EG__R(EG_RULE_BOUND) | EG__R(EG_RULE_PARITY) |
		  EG__R(EG_RULE_FLAT) | EG__R(EG_RULE_RECOVERY) |
		  EG__R(EG_RULE_TREND) | EG__R(EG_RULE_REGRESSION)},
    {"arms", EG__ALL},
    {"axis",
     EG__R(EG_RULE_FLAT) | EG__R(EG_RULE_RECOVERY) | EG__R(EG_RULE_TREND)},
    {"covary",
     EG__R(EG_RULE_FLAT) | EG__R(EG_RULE_RECOVERY) | EG__R(EG_RULE_TREND)},
    {"filter", EG__ALL},
    {"min", EG__R(EG_RULE_BOUND)},
    {"max", EG__R(EG_RULE_BOUND)},
    {"band", EG__R(EG_RULE_PARITY) | EG__R(EG_RULE_FLAT)},
    {"max_slope", EG__R(EG_RULE_FLAT)},
    {"scale", EG__R(EG_RULE_FLAT)},
    {"alpha", EG__R(EG_RULE_FLAT) | EG__R(EG_RULE_REGRESSION)},
    {"low", EG__R(EG_RULE_RECOVERY)},
    {"high", EG__R(EG_RULE_RECOVERY)},
    {"min_factor", EG__R(EG_RULE_RECOVERY)},
    {"direction", EG__R(EG_RULE_TREND)},
    {"factor", EG__R(EG_RULE_TREND)},
    {"statistic", EG__R(EG_RULE_REGRESSION)},
    {"min_effect", EG__R(EG_RULE_REGRESSION)},
    {"min_reps", EG__R(EG_RULE_REGRESSION)},
    {"resamples", EG__R(EG_RULE_REGRESSION)},
    {"better", EG__R(EG_RULE_REGRESSION)},
    {"field", EG__R(EG_RULE_EVIDENCE)},
    {"expect", EG__R(EG_RULE_EVIDENCE)},
    {"correction", EG__R(EG_RULE_BOUND) | EG__R(EG_RULE_PARITY) |
		       EG__R(EG_RULE_RECOVERY) | EG__R(EG_RULE_REGRESSION)},
    {"versus", EG__R(EG_RULE_REGRESSION)},
    {"aggregate", EG__R(EG_RULE_REGRESSION)},
    {"fallback", EG__ALL},
    {"effect", EG__R(EG_RULE_REGRESSION)},
    {NULL, 0},
};

static const char *const eg__rules[] = {"bound",    "parity", "flat",
					"recovery", "trend",  "regression",
					"evidence", NULL};
static const char *const eg__dirs[] = {"up", "down", "not-down", "not-up",
				       NULL};
static const char *const eg__statistics[] = {"bootstrap", "mann-whitney", NULL};
static const char *const eg__betters[] = {"lower", "higher", NULL};
static const char *const eg__scales[] = {"linear", "log2", NULL};
static const char *const eg__corrections[] = {"holm", "bh", "none", NULL};
static const char *const eg__aggregates[] = {"none", "geomean", "median", NULL};
static const char *const eg__effects[] = {"interval", "estimate", NULL};

/* Settings shared by the defaults block and the gates. */
static int eg__stat_key(eg_yaml_t *y, const char *k, const yaml_node_t *v,
			eg_gate_stats_t *st, int *handled)
{
	*handled = 1;
	if (!strcmp(k, "alpha"))
		return eg_yaml_num(y, k, v, 0, 0.5,
				   EG_NUM_LO_OPEN | EG_NUM_HI_OPEN, &st->alpha);
	if (!strcmp(k, "min_effect"))
		return eg_yaml_num(y, k, v, 0, 1, EG_NUM_HI_OPEN,
				   &st->min_effect);
	if (!strcmp(k, "max_slope"))
		return eg_yaml_num(y, k, v, 0, 1e9, 0, &st->max_slope);
	if (!strcmp(k, "min_reps"))
		return eg_yaml_uint(y, k, v, 2, 1000000, &st->min_reps);
	if (!strcmp(k, "reps"))
		return eg_yaml_uint(y, k, v, 1, 1000000, &st->reps);
	if (!strcmp(k, "resamples"))
		return eg_yaml_uint(y, k, v, 100, 1000000, &st->resamples);
	if (!strcmp(k, "correction")) {
		int idx = 0, rc = eg_yaml_word(y, k, v, eg__corrections, &idx);

		st->correction = (eg_correction_t)idx;
		return rc;
	}
	*handled = 0;
	return 0;
}

/* ---- a gate's keys, as a table (like the workload and profile
 * readers): each key's kind says how it is read and where it goes ---- */

static int eg__key_name(eg_yaml_t *y, const char *k, yaml_node_t *v,
			eg_gate_t *g)
{
	int rc = eg_yaml_str(y, k, v, &g->name);

	for (const char *c = rc ? "" : g->name; *c; c++)
		if (!islower((unsigned char)*c) &&
		    !isdigit((unsigned char)*c) && !strchr("._-", *c))
			return eg_yaml_err(
			    y, v, "name: \"%s\": use [a-z0-9._-]", g->name);
	return rc;
}

static int eg__key_rule(eg_yaml_t *y, const char *k, yaml_node_t *v,
			eg_gate_t *g)
{
	(void)y, (void)k, (void)v, (void)g;
	return 0; /* read first (eg__gate_rule) */
}

static int eg__key_covary(eg_yaml_t *y, const char *k, yaml_node_t *v,
			  eg_gate_t *g)
{
	int rc;

	g->covary_line = eg_yaml_line(v);
	if ((rc = eg_yaml_strs(y, k, v, &g->covary, &g->n_covary)))
		return rc;
	for (size_t i = 0; i < g->n_covary; i++)
		if (!eg_results_name_ok(g->covary[i]))
			return eg_yaml_err(y, v,
					   "covary: \"%s\" is not an axis name",
					   g->covary[i]);
	return 0;
}

static int eg__key_filter(eg_yaml_t *y, const char *k, yaml_node_t *v,
			  eg_gate_t *g)
{
	(void)k;
	return eg__filter(y, v, g);
}

static int eg__key_band(eg_yaml_t *y, const char *k, yaml_node_t *v,
			eg_gate_t *g)
{
	(void)k;
	return eg__band(y, v, g->band);
}

typedef enum {
	EG__K_FN,    /* fn reads it */
	EG__K_STR,   /* char * */
	EG__K_IDENT, /* char *, a name ([a-z][a-z0-9_]*) */
	EG__K_NUM,   /* double, any finite number */
	EG__K_RANGE, /* double in (lo, hi] with flags */
	EG__K_WORD,  /* an enum: words[i] gives values[i] */
	EG__K_STRS,  /* char ** and its count (at n) */
	EG__K_PAIR,  /* char *[2]: two arms */
} eg__gate_kind_t;

#define EG__NONE  ((size_t)-1)
#define EG__AT(f) offsetof(eg_gate_t, f)

typedef struct eg__gate_field {
	const char *key;
	eg__gate_kind_t kind;
	size_t at;   /* the field */
	size_t line; /* its line (an int), or EG__NONE */
	size_t n;    /* EG__K_STRS: the count (a size_t) */
	double lo, hi;
	unsigned flags;
	const char *const *words;
	const int *values;
	int (*fn)(eg_yaml_t *y, const char *k, yaml_node_t *v, eg_gate_t *g);
} eg__gate_field_t;

static const int eg__scale_values[] = {EG_SCALE_LINEAR, EG_SCALE_LOG2};
static const int eg__better_values[] = {EG_BETTER_LOWER, EG_BETTER_HIGHER};
static const int eg__same[] = {0, 1, 2, 3, 4, 5, 6, 7};

/* a key of kind K read into field F (with its line in L) */
#define EG__KEY(k, K, F)                                                       \
	{                                                                      \
		.key = k, .kind = K, .at = EG__AT(F), .line = EG__NONE         \
	}
#define EG__KEYL(k, K, F, L)                                                   \
	{                                                                      \
		.key = k, .kind = K, .at = EG__AT(F), .line = EG__AT(L)        \
	}
/* a positive number up to 1e9 (a factor) */
#define EG__KEYPOS(k, F)                                                       \
	{                                                                      \
		.key = k, .kind = EG__K_RANGE, .at = EG__AT(F),                \
		.line = EG__NONE, .hi = 1e9, .flags = EG_NUM_LO_OPEN           \
	}
#define EG__KEYFN(k, f)                                                        \
	{                                                                      \
		.key = k, .kind = EG__K_FN, .line = EG__NONE, .fn = f          \
	}
#define EG__KEYW(k, F, w, v)                                                   \
	{                                                                      \
		.key = k, .kind = EG__K_WORD, .at = EG__AT(F),                 \
		.line = EG__NONE, .words = w, .values = v                      \
	}

static const eg__gate_field_t eg__gate_fields[] = {
    EG__KEYFN("name", eg__key_name),
    EG__KEY("sentence", EG__K_STR, sentence),
    EG__KEYFN("rule", eg__key_rule),
    EG__KEYL("metric", EG__K_IDENT, metric, metric_line),
    EG__KEYL("ratio", EG__K_PAIR, ratio, ratio_line),
    {.key = "arms",
     .kind = EG__K_STRS,
     .at = EG__AT(arms),
     .line = EG__AT(arms_line),
     .n = EG__AT(n_arms)},
    EG__KEYL("axis", EG__K_IDENT, axis, axis_line),
    EG__KEYFN("covary", eg__key_covary),
    EG__KEYFN("filter", eg__key_filter),
    EG__KEY("min", EG__K_NUM, min),
    EG__KEY("max", EG__K_NUM, max),
    EG__KEYFN("band", eg__key_band),
    EG__KEYW("scale", scale, eg__scales, eg__scale_values),
    EG__KEY("low", EG__K_NUM, low),
    EG__KEY("high", EG__K_NUM, high),
    EG__KEYPOS("min_factor", min_factor),
    EG__KEYW("direction", direction, eg__dirs, eg__same),
    EG__KEYPOS("factor", factor),
    EG__KEYW("statistic", statistic, eg__statistics, eg__same),
    EG__KEYW("better", better, eg__betters, eg__better_values),
    EG__KEYL("field", EG__K_IDENT, field, field_line),
    {.key = "expect",
     .kind = EG__K_STRS,
     .at = EG__AT(expect),
     .line = EG__NONE,
     .n = EG__AT(n_expect)},
    /* [B, A]: arm B judged against arm A of the same results */
    EG__KEYL("versus", EG__K_PAIR, versus, versus_line),
    EG__KEYW("aggregate", aggregate, eg__aggregates, eg__same),
    EG__KEYL("fallback", EG__K_STR, fallback, fallback_line),
    EG__KEYW("effect", effect, eg__effects, eg__same),
};

/* the WORD kinds write an int into an enum field */
_Static_assert(sizeof(eg_scale_t) == sizeof(int) &&
		   sizeof(eg_trend_dir_t) == sizeof(int) &&
		   sizeof(eg_regress_stat_t) == sizeof(int) &&
		   sizeof(eg_better_t) == sizeof(int) &&
		   sizeof(eg_aggregate_t) == sizeof(int) &&
		   sizeof(eg_effect_t) == sizeof(int),
	       "gate enums are ints");

static int eg__gate_field(eg_yaml_t *y, const eg__gate_field_t *f,
			  yaml_node_t *v, eg_gate_t *g)
{
	char *at = (char *)g + f->at;
	int rc, idx = 0;

	if (f->line != EG__NONE)
		*(int *)((char *)g + f->line) = eg_yaml_line(v);
	switch (f->kind) {
	case EG__K_FN:
		return f->fn(y, f->key, v, g);
	case EG__K_STR:
		return eg_yaml_str(y, f->key, v, (char **)at);
	case EG__K_IDENT:
		return eg__ident_str(y, f->key, v, (char **)at);
	case EG__K_NUM:
		return eg__read_num(y, f->key, v, (double *)at);
	case EG__K_RANGE:
		return eg_yaml_num(y, f->key, v, f->lo, f->hi, f->flags,
				   (double *)at);
	case EG__K_WORD:
		rc = eg_yaml_word(y, f->key, v, f->words, &idx);
		memcpy(at, &f->values[idx], sizeof(int));
		return rc;
	case EG__K_STRS:
		return eg_yaml_strs(y, f->key, v, (char ***)at,
				    (size_t *)((char *)g + f->n));
	case EG__K_PAIR:
		return eg__arm_pair(y, v, f->key, (char **)at,
				    (int *)((char *)g + f->line));
	}
	return EG_EINVAL;
}

static int eg__gate_key(eg_yaml_t *y, const char *k, yaml_node_t *kn,
			yaml_node_t *v, eg_gate_t *g)
{
	int rc, handled;

	if ((rc = eg__stat_key(y, k, v, &g->st, &handled)) || handled)
		return rc;
	for (size_t i = 0;
	     i < sizeof(eg__gate_fields) / sizeof(eg__gate_fields[0]); i++)
		if (!strcmp(k, eg__gate_fields[i].key))
			return eg__gate_field(y, &eg__gate_fields[i], v, g);
	return eg_yaml_err(y, kn, "unknown key \"%s\"", k);
}

/* What every gate needs, whatever its rule. */
static int eg__gate_common(eg_yaml_t *y, const yaml_node_t *n,
			   const eg_gate_t *g, const char *r)
{
	if (!g->name)
		return eg_yaml_err(y, n, "gate without a name");
	if (!g->sentence)
		return eg_yaml_err(y, n,
				   "gate \"%s\": no sentence (the line the "
				   "report shows)",
				   g->name);
	if (g->rule != EG_RULE_EVIDENCE && !g->metric)
		return eg_yaml_err(y, n, "gate \"%s\": rule %s needs a metric",
				   g->name, r);
	if (g->ratio[0] && g->arms)
		return eg_yaml_err(y, n,
				   "gate \"%s\": give ratio or arms, not "
				   "both",
				   g->name);
	/* a fallback stands in for one arm: the ratio's numerator, or
	 * the gate's only arm */
	if (g->fallback && !g->ratio[0] && g->n_arms != 1)
		return eg_yaml_err_at(y, g->fallback_line,
				      "gate \"%s\": fallback stands in for "
				      "one arm: give ratio: or one arm in "
				      "arms:",
				      g->name);
	if (g->fallback &&
	    !strcmp(g->fallback, g->ratio[0] ? g->ratio[0] : g->arms[0]))
		return eg_yaml_err_at(y, g->fallback_line,
				      "gate \"%s\": fallback \"%s\" is the "
				      "gate's own arm",
				      g->name, g->fallback);
	return 0;
}

/* A bound's min and max. */
static int eg__bound_complete(eg_yaml_t *y, const yaml_node_t *n,
			      const eg_gate_t *g)
{
	if (isnan(g->min) && isnan(g->max))
		return eg_yaml_err(y, n,
				   "gate \"%s\": bound needs min, "
				   "max or both",
				   g->name);
	if (g->min > g->max)
		return eg_yaml_err(y, n,
				   "gate \"%s\": min %g is above "
				   "max %g",
				   g->name, g->min, g->max);
	return 0;
}

/* A trend's axis, and a factor (1 when not given) on the side of 1 its
 * direction takes; factor is the factor: key's node, for the error. */
static int eg__trend_complete(eg_yaml_t *y, const yaml_node_t *n, eg_gate_t *g,
			      const yaml_node_t *factor)
{
	if (!g->axis)
		return eg_yaml_err(y, n,
				   "gate \"%s\": trend needs an "
				   "axis and a direction",
				   g->name);
	if (isnan(g->factor))
		g->factor = 1;
	if (((g->direction == EG_TREND_UP || g->direction == EG_TREND_NOT_UP) &&
	     g->factor < 1) ||
	    ((g->direction == EG_TREND_DOWN ||
	      g->direction == EG_TREND_NOT_DOWN) &&
	     g->factor > 1))
		return eg_yaml_err(y, factor ? factor : n,
				   "factor: %g does not fit direction "
				   "%s (up and not-up take a factor "
				   ">= 1, down and not-down <= 1)",
				   g->factor, eg__dirs[g->direction]);
	return 0;
}

/* What a rule needs once all keys are read. */
static int eg__gate_complete(eg_yaml_t *y, const yaml_node_t *n, eg_gate_t *g,
			     const yaml_node_t *factor)
{
	const char *r = eg__rules[g->rule];
	int rc;

	if ((rc = eg__gate_common(y, n, g, r)))
		return rc;
	switch (g->rule) {
	case EG_RULE_BOUND:
		return eg__bound_complete(y, n, g);
	case EG_RULE_PARITY:
		if (!g->ratio[0])
			return eg_yaml_err(y, n,
					   "gate \"%s\": parity needs a "
					   "ratio: [arm, arm]",
					   g->name);
		/* fall through */
	case EG_RULE_FLAT:
		if (isnan(g->band[0]))
			return eg_yaml_err(y, n,
					   "gate \"%s\": %s needs a band: "
					   "[low, high]",
					   g->name, r);
		if (g->rule == EG_RULE_FLAT && !g->axis)
			return eg_yaml_err(
			    y, n, "gate \"%s\": flat needs an axis", g->name);
		break;
	case EG_RULE_RECOVERY:
		if (!g->axis || isnan(g->low) || isnan(g->high) ||
		    isnan(g->min_factor))
			return eg_yaml_err(y, n,
					   "gate \"%s\": recovery needs "
					   "axis, low, high and min_factor",
					   g->name);
		if (g->low == g->high)
			return eg_yaml_err(y, n,
					   "gate \"%s\": low and high are "
					   "the same knob value",
					   g->name);
		break;
	case EG_RULE_TREND:
		return eg__trend_complete(y, n, g, factor);
	case EG_RULE_REGRESSION:
		if (g->versus[0] && (g->arms || g->ratio[0]))
			return eg_yaml_err(y, n,
					   "gate \"%s\": versus names the "
					   "arms; no arms: or ratio: with it",
					   g->name);
		/* a history's prediction interval has no such test */
		if (g->effect == EG_EFFECT_ESTIMATE && !g->versus[0])
			return eg_yaml_err(y, n,
					   "gate \"%s\": effect: estimate "
					   "judges an A/B pair; give "
					   "versus: [B, A]",
					   g->name);
		break;
	case EG_RULE_EVIDENCE:
		if (!g->field || !g->expect)
			return eg_yaml_err(y, n,
					   "gate \"%s\": evidence needs a "
					   "field and expect",
					   g->name);
		break;
	}
	return 0;
}

static int eg__gate(eg_yaml_t *y, yaml_node_t *n, eg_gate_t *g,
		    const eg_gate_stats_t *defaults)
{
	yaml_node_t *rn;
	int rc, idx;

	g->st = *defaults;
	g->min = g->max = g->low = g->high = g->min_factor = g->factor = NAN;
	g->band[0] = g->band[1] = NAN;
	g->line = eg_yaml_line(n);
	if (n->type != YAML_MAPPING_NODE)
		return eg_yaml_err(y, n,
				   "a gate is a mapping (name:, sentence:, "
				   "rule:, ...)");
	if ((rc = eg_yaml_mapping(y, NULL, n)))
		return rc;
	rn = eg_yaml_get(y, n, "rule");
	if (!rn)
		return eg_yaml_err(y, n,
				   "gate without a rule (%s, %s, %s, %s, "
				   "%s, %s, %s)",
				   eg__rules[0], eg__rules[1], eg__rules[2],
				   eg__rules[3], eg__rules[4], eg__rules[5],
				   eg__rules[6]);
	if ((rc = eg_yaml_word(y, "rule", rn, eg__rules, &idx)))
		return rc;
	g->rule = (eg_rule_t)idx;
	for (size_t i = 0; i < eg_yaml_len(n); i++) {
		yaml_node_t *kn = eg_yaml_key(y, n, i);
		const char *k = eg_yaml_scalar(kn);
		const struct eg__key *e = eg__keys;

		while (e->key && strcmp(e->key, k))
			e++;
		if (!e->key)
			return eg_yaml_err(y, kn, "unknown key \"%s\"", k);
		if (!(e->rules & EG__R(g->rule)))
			return eg_yaml_err(y, kn,
					   "key \"%s\" does not apply to rule "
					   "%s",
					   k, eg__rules[g->rule]);
		if ((rc = eg__gate_key(y, k, kn, eg_yaml_value(y, n, i), g)))
			return rc;
	}
	return eg__gate_complete(y, n, g, eg_yaml_get(y, n, "factor"));
}

static int eg__defaults(eg_yaml_t *y, yaml_node_t *n, eg_gate_stats_t *st)
{
	static const char *const keys[] = {
	    "alpha", "min_effect", "max_slope",	 "min_reps",
	    "reps",  "resamples",  "correction", NULL};
	int rc, handled;

	if ((rc = eg_yaml_keys(y, "defaults", n, keys)))
		return rc;
	for (size_t i = 0; i < eg_yaml_len(n); i++) {
		rc = eg__stat_key(y, eg_yaml_scalar(eg_yaml_key(y, n, i)),
				  eg_yaml_value(y, n, i), st, &handled);
		if (rc)
			return rc;
	}
	if (st->min_reps > st->reps)
		return eg_yaml_err(y, n,
				   "defaults: min_reps %u is above reps %u",
				   st->min_reps, st->reps);
	return 0;
}

static int eg__top(eg_yaml_t *y, yaml_node_t *root, eg_gate_file_t *gf)
{
	static const char *const keys[] = {"profile", "defaults", "arms",
					   "gates", NULL};
	yaml_node_t *n;
	int rc;

	if (root->type != YAML_MAPPING_NODE)
		return eg_yaml_err(y, root,
				   "expected a mapping with profile, "
				   "defaults and gates");
	if ((rc = eg_yaml_keys(y, NULL, root, keys)))
		return rc;
	if (!(n = eg_yaml_get(y, root, "profile")))
		return eg_yaml_err(y, root, "no profile: key");
	if ((rc = eg_yaml_str(y, "profile", n, &gf->profile)))
		return rc;
	if ((n = eg_yaml_get(y, root, "defaults")) &&
	    (rc = eg__defaults(y, n, &gf->defaults)))
		return rc;
	if ((n = eg_yaml_get(y, root, "arms")) &&
	    (rc = eg_yaml_strs(y, "arms", n, &gf->arms, &gf->n_arms)))
		return rc;
	if (!(n = eg_yaml_get(y, root, "gates")))
		return eg_yaml_err(y, root, "no gates: list");
	if (n->type != YAML_SEQUENCE_NODE || !eg_yaml_len(n))
		return eg_yaml_err(y, n, "gates: expected a non-empty list");
	gf->gates = calloc(eg_yaml_len(n), sizeof(*gf->gates));
	if (!gf->gates)
		return EG_ENOMEM;
	for (size_t k = 0; k < eg_yaml_len(n); k++) {
		eg_gate_t *g = &gf->gates[gf->n_gates++];
		yaml_node_t *gn = eg_yaml_item(y, n, k);

		if ((rc = eg__gate(y, gn, g, &gf->defaults)))
			return rc;
		for (size_t i = 0; i + 1 < gf->n_gates; i++)
			if (!strcmp(gf->gates[i].name, g->name))
				return eg_yaml_err(y, gn,
						   "gate name \"%s\" already "
						   "used at line %d",
						   g->name, gf->gates[i].line);
	}
	return 0;
}

static void eg__gate_fini(eg_gate_t *g)
{
	EG_FREE(g->name, g->sentence, g->metric, g->ratio[0], g->ratio[1]);
	eg_yaml_strs_free(g->arms, g->n_arms);
	free(g->axis);
	eg_yaml_strs_free(g->covary, g->n_covary);
	for (size_t i = 0; i < g->n_filter; i++) {
		free(g->filter[i].key);
		json_decref(g->filter[i].values);
	}
	EG_FREE(g->filter, g->field);
	eg_yaml_strs_free(g->expect, g->n_expect);
	EG_FREE(g->versus[0], g->versus[1], g->fallback);
}

void eg_gate_file_free(eg_gate_file_t *gf)
{
	if (!gf)
		return;
	for (size_t i = 0; i < gf->n_gates; i++)
		eg__gate_fini(&gf->gates[i]);
	eg_yaml_strs_free(gf->arms, gf->n_arms);
	EG_FREE(gf->gates, gf->path, gf->profile);
	memset(gf, 0, sizeof(*gf));
}

static void eg__init(eg_gate_file_t *gf)
{
	memset(gf, 0, sizeof(*gf));
	gf->defaults = (eg_gate_stats_t){EG_GATE_ALPHA,	    EG_GATE_MIN_EFFECT,
					 EG_GATE_MAX_SLOPE, EG_GATE_MIN_REPS,
					 EG_GATE_REPS,	    EG_GATE_RESAMPLES,
					 EG_GATE_CORRECTION};
}

static int eg__from_yaml(eg_yaml_t *y, yaml_node_t *root, void *arg)
{
	eg_gate_file_t *gf = arg;
	int rc = eg__top(y, root, gf);

	if (!rc && !(gf->path = strdup(y->name)))
		rc = EG_ENOMEM;
	return rc;
}

/* The gate file from text, or from the file name when text is NULL. */
static int eg__read(eg_gate_file_t *gf, const char *text, size_t len,
		    const char *name, char *err, size_t errlen)
{
	int rc;

	eg__init(gf);
	rc = eg_yaml_read(text, len, name, "gate file", eg__from_yaml, gf, err,
			  errlen);
	if (rc)
		eg_gate_file_free(gf);
	return rc;
}

int eg_gate_file_parse(eg_gate_file_t *gf, const char *text, size_t len,
		       const char *name, char *err, size_t errlen)
{
	return eg__read(gf, text ? text : "", len, name, err, errlen);
}

int eg_gate_file_load(eg_gate_file_t *gf, const char *path, char *err,
		      size_t errlen)
{
	return eg__read(gf, NULL, 0, path, err, errlen);
}
