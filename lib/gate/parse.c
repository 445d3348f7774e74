/* Gate files: YAML through libyaml's document API, whose nodes carry
 * their start marks, so every error names file:line.  Strict: unknown or
 * repeated keys, keys that do not apply to the gate's rule, numbers that
 * are not numbers or out of range are all errors (docs/gates.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "epgate/error.h"
#include "epgate/gate.h"

struct eg__p {
	yaml_document_t *doc;
	const char *name;
	char *err;
	size_t len;
};

static int eg__line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static int eg__perr(struct eg__p *p, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int eg__perr(struct eg__p *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->len, "%s:%d: %s", p->name, n ? eg__line(n) : 1,
		 msg);
	return EG_EPARSE;
}

static yaml_node_t *eg__node(struct eg__p *p, int id)
{
	return yaml_document_get_node(p->doc, id);
}

static const char *eg__scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
					   : NULL;
}

/* A plain (unquoted) scalar that is a finite decimal number. */
static int eg__is_number(const yaml_node_t *n, double *out)
{
	const char *s = eg__scalar(n);
	char *end;

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !*s)
		return 0;
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c) && !strchr("+-.eE", *c))
			return 0;
	errno = 0;
	*out = strtod(s, &end);
	return !*end && !errno && isfinite(*out);
}

static int eg__num(struct eg__p *p, const char *key, const yaml_node_t *n,
		   double *out)
{
	if (eg__is_number(n, out))
		return 0;
	if (eg__scalar(n))
		return eg__perr(p, n, "%s: \"%s\" is not a number", key,
				eg__scalar(n));
	return eg__perr(p, n, "%s: expected a number", key);
}

static int eg__num_range(struct eg__p *p, const char *key, const yaml_node_t *n,
			 double lo, int lo_open, double hi, int hi_open,
			 double *out)
{
	int rc = eg__num(p, key, n, out);

	if (rc)
		return rc;
	if (*out < lo || (lo_open && *out == lo) || *out > hi ||
	    (hi_open && *out == hi))
		return eg__perr(p, n, "%s: %g is out of range %c%g, %g%c", key,
				*out, lo_open ? '(' : '[', lo, hi,
				hi_open ? ')' : ']');
	return 0;
}

static int eg__uint(struct eg__p *p, const char *key, const yaml_node_t *n,
		    unsigned lo, unsigned hi, unsigned *out)
{
	const char *s = eg__scalar(n);
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return eg__perr(p, n, "%s: expected an integer", key);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno)
		return eg__perr(p, n, "%s: \"%s\" is not an integer", key, s);
	if (v < lo || v > hi)
		return eg__perr(p, n, "%s: %lu is out of range [%u, %u]", key,
				v, lo, hi);
	*out = (unsigned)v;
	return 0;
}

static int eg__str(struct eg__p *p, const char *key, const yaml_node_t *n,
		   char **out)
{
	const char *s = eg__scalar(n);

	if (!s)
		return eg__perr(p, n, "%s: expected a string", key);
	if (!*s)
		return eg__perr(p, n, "%s: empty", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : EG_ENOMEM;
}

/* [a-z][a-z0-9_]* (metric, axis and evidence field names) */
static int eg__ident(const char *s)
{
	if (!islower((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int eg__ident_str(struct eg__p *p, const char *key, const yaml_node_t *n,
			 char **out)
{
	int rc = eg__str(p, key, n, out);

	if (!rc && !eg__ident(*out))
		return eg__perr(p, n,
				"%s: \"%s\" is not a name ([a-z][a-z0-9_]*)",
				key, *out);
	return rc;
}

/* Picks one of words (NULL-terminated); *out = its index. */
static int eg__word(struct eg__p *p, const char *key, const yaml_node_t *n,
		    const char *const *words, int *out)
{
	const char *s = eg__scalar(n);
	char list[256] = "";

	for (int i = 0; s && words[i]; i++)
		if (!strcmp(s, words[i])) {
			*out = i;
			return 0;
		}
	for (int i = 0; words[i]; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, words[i], sizeof(list) - strlen(list) - 1);
	}
	if (!s)
		return eg__perr(p, n, "%s: expected one of %s", key, list);
	return eg__perr(p, n, "unknown %s \"%s\" (%s)", key, s, list);
}

/* Scalar or sequence of scalars -> NULL-terminated string array. */
static int eg__str_list(struct eg__p *p, const char *key, const yaml_node_t *n,
			char ***out, size_t *count)
{
	yaml_node_item_t *it;
	size_t k = 0, cnt;

	if (n->type == YAML_SCALAR_NODE)
		cnt = 1;
	else if (n->type == YAML_SEQUENCE_NODE)
		cnt = (size_t)(n->data.sequence.items.top -
			       n->data.sequence.items.start);
	else
		return eg__perr(p, n, "%s: expected a string or a list", key);
	if (!cnt)
		return eg__perr(p, n, "%s: empty list", key);
	*out = calloc(cnt + 1, sizeof(**out));
	if (!*out)
		return EG_ENOMEM;
	*count = cnt;
	if (n->type == YAML_SCALAR_NODE)
		return eg__str(p, key, n, &(*out)[0]);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		int rc = eg__str(p, key, eg__node(p, *it), &(*out)[k++]);

		if (rc)
			return rc;
	}
	return 0;
}

static void eg__free_list(char **l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

/* A filter value: a plain number, else a string. */
static json_t *eg__filter_value(const yaml_node_t *n)
{
	double d;

	if (eg__is_number(n, &d))
		return json_real(d);
	return json_string(eg__scalar(n));
}

static int eg__filter(struct eg__p *p, const yaml_node_t *n, eg_gate_t *g)
{
	yaml_node_pair_t *pr;
	size_t cnt;

	if (n->type != YAML_MAPPING_NODE)
		return eg__perr(p, n,
				"filter: expected a mapping (axis: "
				"value or [values], suite: name)");
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	g->filter = calloc(cnt ? cnt : 1, sizeof(*g->filter));
	if (!g->filter)
		return EG_ENOMEM;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		eg_gate_filter_t *f = &g->filter[g->n_filter];
		const char *ks = eg__scalar(k);

		if (!ks || !eg__ident(ks))
			return eg__perr(p, k,
					"filter: keys are axis names "
					"or \"suite\"");
		for (size_t i = 0; i < g->n_filter; i++)
			if (!strcmp(g->filter[i].key, ks))
				return eg__perr(
				    p, k, "filter: \"%s\" given twice", ks);
		if (!strcmp(ks, "arm"))
			return eg__perr(p, k,
					"filter: select arms with "
					"\"arms:\" or \"ratio:\"");
		f->line = eg__line(k);
		f->key = strdup(ks);
		f->values = json_array();
		g->n_filter++;
		if (!f->key || !f->values)
			return EG_ENOMEM;
		if (v->type == YAML_SCALAR_NODE) {
			if (json_array_append_new(f->values,
						  eg__filter_value(v)))
				return EG_ENOMEM;
			continue;
		}
		if (v->type != YAML_SEQUENCE_NODE ||
		    v->data.sequence.items.top == v->data.sequence.items.start)
			return eg__perr(p, v,
					"filter: %s: expected a value or a "
					"non-empty list",
					ks);
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = eg__node(p, *it);

			if (e->type != YAML_SCALAR_NODE)
				return eg__perr(p, e,
						"filter: %s: list items are "
						"values",
						ks);
			if (json_array_append_new(f->values,
						  eg__filter_value(e)))
				return EG_ENOMEM;
		}
	}
	return 0;
}

static int eg__band(struct eg__p *p, const yaml_node_t *n, double band[2])
{
	yaml_node_item_t *it;
	int rc;

	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top - n->data.sequence.items.start != 2)
		return eg__perr(p, n, "band: expected [low, high]");
	it = n->data.sequence.items.start;
	if ((rc = eg__num(p, "band", eg__node(p, it[0]), &band[0])) ||
	    (rc = eg__num(p, "band", eg__node(p, it[1]), &band[1])))
		return rc;
	if (band[0] > band[1])
		return eg__perr(p, n, "band: low %g is above high %g", band[0],
				band[1]);
	return 0;
}

static int eg__ratio(struct eg__p *p, const yaml_node_t *n, eg_gate_t *g)
{
	yaml_node_item_t *it;
	int rc;

	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top - n->data.sequence.items.start != 2)
		return eg__perr(p, n,
				"ratio: expected [numerator arm, "
				"denominator arm]");
	it = n->data.sequence.items.start;
	if ((rc = eg__str(p, "ratio", eg__node(p, it[0]), &g->ratio[0])) ||
	    (rc = eg__str(p, "ratio", eg__node(p, it[1]), &g->ratio[1])))
		return rc;
	if (!strcmp(g->ratio[0], g->ratio[1]))
		return eg__perr(p, n, "ratio: the same arm twice");
	g->ratio_line = eg__line(n);
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
		  EG__R(EG_RULE_TREND)},
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

/* Settings shared by the defaults block and the gates. */
static int eg__stat_key(struct eg__p *p, const char *k, const yaml_node_t *v,
			eg_gate_stats_t *st, int *handled)
{
	*handled = 1;
	if (!strcmp(k, "alpha"))
		return eg__num_range(p, k, v, 0, 1, 0.5, 1, &st->alpha);
	if (!strcmp(k, "min_effect"))
		return eg__num_range(p, k, v, 0, 0, 1, 1, &st->min_effect);
	if (!strcmp(k, "max_slope"))
		return eg__num_range(p, k, v, 0, 0, 1e9, 0, &st->max_slope);
	if (!strcmp(k, "min_reps"))
		return eg__uint(p, k, v, 2, 1000000, &st->min_reps);
	if (!strcmp(k, "reps"))
		return eg__uint(p, k, v, 1, 1000000, &st->reps);
	if (!strcmp(k, "resamples"))
		return eg__uint(p, k, v, 100, 1000000, &st->resamples);
	*handled = 0;
	return 0;
}

/* Checks a mapping's keys are scalars and not repeated. */
static int eg__mapping_keys(struct eg__p *p, const yaml_node_t *n)
{
	for (yaml_node_pair_t *a = n->data.mapping.pairs.start;
	     a < n->data.mapping.pairs.top; a++) {
		yaml_node_t *k = eg__node(p, a->key);

		if (!eg__scalar(k))
			return eg__perr(p, k, "keys must be plain words");
		for (yaml_node_pair_t *b = n->data.mapping.pairs.start; b < a;
		     b++) {
			yaml_node_t *kb = eg__node(p, b->key);

			if (!strcmp(eg__scalar(k), eg__scalar(kb)))
				return eg__perr(p, k,
						"key \"%s\" repeats line %d",
						eg__scalar(k), eg__line(kb));
		}
	}
	return 0;
}

static yaml_node_t *eg__get(struct eg__p *p, const yaml_node_t *map,
			    const char *key)
{
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start;
	     a < map->data.mapping.pairs.top; a++)
		if (!strcmp(eg__scalar(eg__node(p, a->key)), key))
			return eg__node(p, a->value);
	return NULL;
}

static int eg__gate_key(struct eg__p *p, const char *k, yaml_node_t *kn,
			yaml_node_t *v, eg_gate_t *g)
{
	int rc, idx, handled;

	if ((rc = eg__stat_key(p, k, v, &g->st, &handled)) || handled)
		return rc;
	if (!strcmp(k, "name")) {
		if ((rc = eg__str(p, k, v, &g->name)))
			return rc;
		for (const char *c = g->name; *c; c++)
			if (!islower((unsigned char)*c) &&
			    !isdigit((unsigned char)*c) && !strchr("._-", *c))
				return eg__perr(p, v,
						"name: \"%s\": use "
						"[a-z0-9._-]",
						g->name);
		return 0;
	}
	if (!strcmp(k, "sentence"))
		return eg__str(p, k, v, &g->sentence);
	if (!strcmp(k, "rule"))
		return 0; /* read first */
	if (!strcmp(k, "metric")) {
		g->metric_line = eg__line(v);
		return eg__ident_str(p, k, v, &g->metric);
	}
	if (!strcmp(k, "ratio"))
		return eg__ratio(p, v, g);
	if (!strcmp(k, "arms")) {
		g->arms_line = eg__line(v);
		return eg__str_list(p, k, v, &g->arms, &g->n_arms);
	}
	if (!strcmp(k, "axis")) {
		g->axis_line = eg__line(v);
		return eg__ident_str(p, k, v, &g->axis);
	}
	if (!strcmp(k, "covary")) {
		g->covary_line = eg__line(v);
		if ((rc = eg__str_list(p, k, v, &g->covary, &g->n_covary)))
			return rc;
		for (size_t i = 0; i < g->n_covary; i++)
			if (!eg__ident(g->covary[i]))
				return eg__perr(p, v,
						"covary: \"%s\" is not an "
						"axis name",
						g->covary[i]);
		return 0;
	}
	if (!strcmp(k, "filter"))
		return eg__filter(p, v, g);
	if (!strcmp(k, "min"))
		return eg__num(p, k, v, &g->min);
	if (!strcmp(k, "max"))
		return eg__num(p, k, v, &g->max);
	if (!strcmp(k, "band"))
		return eg__band(p, v, g->band);
	if (!strcmp(k, "scale")) {
		rc = eg__word(p, k, v, eg__scales, &idx);
		g->scale = idx ? EG_SCALE_LOG2 : EG_SCALE_LINEAR;
		return rc;
	}
	if (!strcmp(k, "low"))
		return eg__num(p, k, v, &g->low);
	if (!strcmp(k, "high"))
		return eg__num(p, k, v, &g->high);
	if (!strcmp(k, "min_factor"))
		return eg__num_range(p, k, v, 0, 1, 1e9, 0, &g->min_factor);
	if (!strcmp(k, "direction")) {
		rc = eg__word(p, k, v, eg__dirs, &idx);
		g->direction = (eg_trend_dir_t)idx;
		return rc;
	}
	if (!strcmp(k, "factor"))
		return eg__num_range(p, k, v, 0, 1, 1e9, 0, &g->factor);
	if (!strcmp(k, "statistic")) {
		rc = eg__word(p, k, v, eg__statistics, &idx);
		g->statistic = (eg_regress_stat_t)idx;
		return rc;
	}
	if (!strcmp(k, "better")) {
		rc = eg__word(p, k, v, eg__betters, &idx);
		g->better = idx ? EG_BETTER_HIGHER : EG_BETTER_LOWER;
		return rc;
	}
	if (!strcmp(k, "field")) {
		g->field_line = eg__line(v);
		return eg__ident_str(p, k, v, &g->field);
	}
	if (!strcmp(k, "expect"))
		return eg__str_list(p, k, v, &g->expect, &g->n_expect);
	return eg__perr(p, kn, "unknown key \"%s\"", k);
}

/* What a rule needs once all keys are read. */
static int eg__gate_complete(struct eg__p *p, const yaml_node_t *n,
			     eg_gate_t *g, const yaml_node_t *factor)
{
	const char *r = eg__rules[g->rule];

	if (!g->name)
		return eg__perr(p, n, "gate without a name");
	if (!g->sentence)
		return eg__perr(p, n,
				"gate \"%s\": no sentence (the line the "
				"report shows)",
				g->name);
	if (g->rule != EG_RULE_EVIDENCE && !g->metric)
		return eg__perr(p, n, "gate \"%s\": rule %s needs a metric",
				g->name, r);
	if (g->ratio[0] && g->arms)
		return eg__perr(p, n,
				"gate \"%s\": give ratio or arms, not "
				"both",
				g->name);
	switch (g->rule) {
	case EG_RULE_BOUND:
		if (isnan(g->min) && isnan(g->max))
			return eg__perr(p, n,
					"gate \"%s\": bound needs min, "
					"max or both",
					g->name);
		if (g->min > g->max)
			return eg__perr(p, n,
					"gate \"%s\": min %g is above "
					"max %g",
					g->name, g->min, g->max);
		break;
	case EG_RULE_PARITY:
		if (!g->ratio[0])
			return eg__perr(p, n,
					"gate \"%s\": parity needs a "
					"ratio: [arm, arm]",
					g->name);
		/* fall through */
	case EG_RULE_FLAT:
		if (isnan(g->band[0]))
			return eg__perr(p, n,
					"gate \"%s\": %s needs a band: "
					"[low, high]",
					g->name, r);
		if (g->rule == EG_RULE_FLAT && !g->axis)
			return eg__perr(p, n, "gate \"%s\": flat needs an axis",
					g->name);
		break;
	case EG_RULE_RECOVERY:
		if (!g->axis || isnan(g->low) || isnan(g->high) ||
		    isnan(g->min_factor))
			return eg__perr(p, n,
					"gate \"%s\": recovery needs "
					"axis, low, high and min_factor",
					g->name);
		if (g->low == g->high)
			return eg__perr(p, n,
					"gate \"%s\": low and high are "
					"the same knob value",
					g->name);
		break;
	case EG_RULE_TREND:
		if (!g->axis)
			return eg__perr(p, n,
					"gate \"%s\": trend needs an "
					"axis and a direction",
					g->name);
		if (isnan(g->factor))
			g->factor = 1;
		if (((g->direction == EG_TREND_UP ||
		      g->direction == EG_TREND_NOT_UP) &&
		     g->factor < 1) ||
		    ((g->direction == EG_TREND_DOWN ||
		      g->direction == EG_TREND_NOT_DOWN) &&
		     g->factor > 1))
			return eg__perr(p, factor ? factor : n,
					"factor: %g does not fit direction "
					"%s (up and not-up take a factor "
					">= 1, down and not-down <= 1)",
					g->factor, eg__dirs[g->direction]);
		break;
	case EG_RULE_REGRESSION:
		break;
	case EG_RULE_EVIDENCE:
		if (!g->field || !g->expect)
			return eg__perr(p, n,
					"gate \"%s\": evidence needs a "
					"field and expect",
					g->name);
		break;
	}
	return 0;
}

static int eg__gate(struct eg__p *p, yaml_node_t *n, eg_gate_t *g,
		    const eg_gate_stats_t *defaults)
{
	yaml_node_t *rn;
	int rc, idx;

	g->st = *defaults;
	g->min = g->max = g->low = g->high = g->min_factor = g->factor = NAN;
	g->band[0] = g->band[1] = NAN;
	g->line = eg__line(n);
	if (n->type != YAML_MAPPING_NODE)
		return eg__perr(p, n,
				"a gate is a mapping (name:, sentence:, "
				"rule:, ...)");
	if ((rc = eg__mapping_keys(p, n)))
		return rc;
	rn = eg__get(p, n, "rule");
	if (!rn)
		return eg__perr(p, n,
				"gate without a rule (%s, %s, %s, %s, "
				"%s, %s, %s)",
				eg__rules[0], eg__rules[1], eg__rules[2],
				eg__rules[3], eg__rules[4], eg__rules[5],
				eg__rules[6]);
	if ((rc = eg__word(p, "rule", rn, eg__rules, &idx)))
		return rc;
	g->rule = (eg_rule_t)idx;
	for (yaml_node_pair_t *a = n->data.mapping.pairs.start;
	     a < n->data.mapping.pairs.top; a++) {
		yaml_node_t *kn = eg__node(p, a->key);
		const char *k = eg__scalar(kn);
		const struct eg__key *e = eg__keys;

		while (e->key && strcmp(e->key, k))
			e++;
		if (!e->key)
			return eg__perr(p, kn, "unknown key \"%s\"", k);
		if (!(e->rules & EG__R(g->rule)))
			return eg__perr(p, kn,
					"key \"%s\" does not apply to rule "
					"%s",
					k, eg__rules[g->rule]);
		if ((rc = eg__gate_key(p, k, kn, eg__node(p, a->value), g)))
			return rc;
	}
	return eg__gate_complete(p, n, g, eg__get(p, n, "factor"));
}

static int eg__defaults(struct eg__p *p, yaml_node_t *n, eg_gate_stats_t *st)
{
	int rc, handled;

	if (n->type != YAML_MAPPING_NODE)
		return eg__perr(p, n, "defaults: expected a mapping");
	if ((rc = eg__mapping_keys(p, n)))
		return rc;
	for (yaml_node_pair_t *a = n->data.mapping.pairs.start;
	     a < n->data.mapping.pairs.top; a++) {
		yaml_node_t *kn = eg__node(p, a->key);

		rc = eg__stat_key(p, eg__scalar(kn), eg__node(p, a->value), st,
				  &handled);
		if (rc)
			return rc;
		if (!handled)
			return eg__perr(p, kn,
					"defaults: unknown key \"%s\" (alpha, "
					"min_effect, max_slope, min_reps, "
					"reps, resamples)",
					eg__scalar(kn));
	}
	if (st->min_reps > st->reps)
		return eg__perr(p, n, "defaults: min_reps %u is above reps %u",
				st->min_reps, st->reps);
	return 0;
}

static int eg__top(struct eg__p *p, yaml_node_t *root, eg_gate_file_t *gf)
{
	yaml_node_t *n;
	int rc;

	if (root->type != YAML_MAPPING_NODE)
		return eg__perr(p, root,
				"expected a mapping with profile, "
				"defaults and gates");
	if ((rc = eg__mapping_keys(p, root)))
		return rc;
	for (yaml_node_pair_t *a = root->data.mapping.pairs.start;
	     a < root->data.mapping.pairs.top; a++) {
		yaml_node_t *kn = eg__node(p, a->key);
		const char *k = eg__scalar(kn);

		if (strcmp(k, "profile") && strcmp(k, "defaults") &&
		    strcmp(k, "gates"))
			return eg__perr(p, kn,
					"unknown key \"%s\" (profile, "
					"defaults, gates)",
					k);
	}
	if (!(n = eg__get(p, root, "profile")))
		return eg__perr(p, root, "no profile: key");
	if ((rc = eg__str(p, "profile", n, &gf->profile)))
		return rc;
	if ((n = eg__get(p, root, "defaults")) &&
	    (rc = eg__defaults(p, n, &gf->defaults)))
		return rc;
	if (!(n = eg__get(p, root, "gates")))
		return eg__perr(p, root, "no gates: list");
	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top == n->data.sequence.items.start)
		return eg__perr(p, n, "gates: expected a non-empty list");
	gf->gates = calloc(
	    (size_t)(n->data.sequence.items.top - n->data.sequence.items.start),
	    sizeof(*gf->gates));
	if (!gf->gates)
		return EG_ENOMEM;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		eg_gate_t *g = &gf->gates[gf->n_gates++];
		yaml_node_t *gn = eg__node(p, *it);

		if ((rc = eg__gate(p, gn, g, &gf->defaults)))
			return rc;
		for (size_t i = 0; i + 1 < gf->n_gates; i++)
			if (!strcmp(gf->gates[i].name, g->name))
				return eg__perr(p, gn,
						"gate name \"%s\" already used "
						"at line %d",
						g->name, gf->gates[i].line);
	}
	return 0;
}

static void eg__gate_fini(eg_gate_t *g)
{
	free(g->name);
	free(g->sentence);
	free(g->metric);
	free(g->ratio[0]);
	free(g->ratio[1]);
	eg__free_list(g->arms, g->n_arms);
	free(g->axis);
	eg__free_list(g->covary, g->n_covary);
	for (size_t i = 0; i < g->n_filter; i++) {
		free(g->filter[i].key);
		json_decref(g->filter[i].values);
	}
	free(g->filter);
	free(g->field);
	eg__free_list(g->expect, g->n_expect);
}

void eg_gate_file_free(eg_gate_file_t *gf)
{
	if (!gf)
		return;
	for (size_t i = 0; i < gf->n_gates; i++)
		eg__gate_fini(&gf->gates[i]);
	free(gf->gates);
	free(gf->path);
	free(gf->profile);
	memset(gf, 0, sizeof(*gf));
}

int eg_gate_file_parse(eg_gate_file_t *gf, const char *text, size_t len,
		       const char *name, char *err, size_t errlen)
{
	struct eg__p p = {NULL, name, err, errlen};
	yaml_parser_t parser;
	yaml_document_t doc, more;
	yaml_node_t *root;
	int rc;

	memset(gf, 0, sizeof(*gf));
	gf->defaults = (eg_gate_stats_t){EG_GATE_ALPHA,	    EG_GATE_MIN_EFFECT,
					 EG_GATE_MAX_SLOPE, EG_GATE_MIN_REPS,
					 EG_GATE_REPS,	    EG_GATE_RESAMPLES};
	if (!yaml_parser_initialize(&parser))
		return EG_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		char where[48] = "";

		if (parser.context &&
		    parser.context_mark.line != parser.problem_mark.line)
			snprintf(where, sizeof(where), " (from line %zu)",
				 parser.context_mark.line + 1);
		snprintf(err, errlen, "%s:%zu: YAML syntax: %s%s%s%s", name,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "error",
			 parser.context ? " " : "",
			 parser.context ? parser.context : "", where);
		yaml_parser_delete(&parser);
		return EG_EPARSE;
	}
	p.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		snprintf(err, errlen, "%s:1: empty gate file", name);
		rc = EG_EPARSE;
	} else {
		rc = eg__top(&p, root, gf);
	}
	if (!rc) {
		/* a second document would be silently ignored: refuse it */
		if (!yaml_parser_load(&parser, &more)) {
			snprintf(err, errlen, "%s:%zu: YAML syntax: %s", name,
				 parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "error");
			rc = EG_EPARSE;
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&more);

			if (r2) {
				snprintf(err, errlen,
					 "%s:%d: a second YAML document; a "
					 "gate file holds one",
					 name, eg__line(r2));
				rc = EG_EPARSE;
			}
			yaml_document_delete(&more);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (!rc && !(gf->path = strdup(name)))
		rc = EG_ENOMEM;
	if (rc)
		eg_gate_file_free(gf);
	return rc;
}

int eg_gate_file_load(eg_gate_file_t *gf, const char *path, char *err,
		      size_t errlen)
{
	size_t len = 0, cap = 0, got;
	char *text = NULL;
	FILE *f = fopen(path, "r");
	int rc;

	memset(gf, 0, sizeof(*gf));
	if (!f) {
		int en = errno;

		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(en));
		return en == ENOENT ? EG_ENOENT : EG_EIO;
	}
	do {
		if (cap - len < 4096) {
			char *t = realloc(text, cap ? 2 * cap : 16384);

			if (!t) {
				free(text);
				fclose(f);
				return EG_ENOMEM;
			}
			text = t;
			cap = cap ? 2 * cap : 16384;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
	} while (got);
	rc = ferror(f) ? EG_EIO : 0;
	fclose(f);
	if (rc) {
		snprintf(err, errlen, "%s: read error", path);
		free(text);
		return rc;
	}
	rc = eg_gate_file_parse(gf, text ? text : "", len, path, err, errlen);
	free(text);
	return rc;
}
