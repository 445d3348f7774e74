/* Profiles: YAML through libyaml's document API (nodes carry their
 * marks, so every error names file:line), strict like gate files: unknown
 * or repeated keys, unknown axes and arms, malformed numbers and points
 * that are not valid workloads are errors (docs/profiles.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/profile.h"

const char *const eg_profile_axes[] = {
    "concurrency", "world", "nodes", "experts", "num_comms",
    "hidden",	   "topk",  "dtype", "routing", NULL,
};

int eg_profile_axis_is_string(eg_axis_t a)
{
	return a == EG_AXIS_DTYPE || a == EG_AXIS_ROUTING;
}

struct eg__pp {
	yaml_document_t *doc;
	const char *name;
	char *err;
	size_t len;
};

static int eg__line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static int eg__perr(struct eg__pp *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int eg__perr(struct eg__pp *p, int line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->len, "%s:%d: %s", p->name, line, msg);
	return EG_EPARSE;
}

static yaml_node_t *eg__node(struct eg__pp *p, int id)
{
	return yaml_document_get_node(p->doc, id);
}

static const char *eg__scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		   ? (const char *)n->data.scalar.value
		   : NULL;
}

static int eg__plain(const yaml_node_t *n)
{
	return eg__scalar(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static size_t eg__seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top -
			n->data.sequence.items.start);
}

/* A plain scalar made of digits only, in [lo, hi]. */
static int eg__uint(struct eg__pp *p, const char *key, const yaml_node_t *n,
		    unsigned long lo, unsigned long hi, unsigned long *out)
{
	const char *s = eg__scalar(n);
	unsigned long v;
	char *end;

	if (!s || !eg__plain(n))
		return eg__perr(p, eg__line(n), "%s: expected an integer", key);
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c))
			return eg__perr(p, eg__line(n),
					"%s: \"%s\" is not an integer", key, s);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno)
		return eg__perr(p, eg__line(n), "%s: \"%s\" is not an integer",
				key, s);
	if (v < lo || v > hi)
		return eg__perr(p, eg__line(n),
				"%s: %lu is out of range [%lu, %lu]", key, v,
				lo, hi);
	*out = v;
	return 0;
}

/* Bytes: an integer with an optional K, M or G (binary) suffix. */
static int eg__bytes(struct eg__pp *p, const char *key, const yaml_node_t *n,
		     size_t lo, size_t hi, size_t *out)
{
	const char *s = eg__scalar(n);
	char num[32];
	size_t len, mult = 1;
	unsigned long long v;
	char *end;

	if (!s || !eg__plain(n) || !(len = strlen(s)) || len >= sizeof(num))
		return eg__perr(p, eg__line(n),
				"%s: expected bytes (an integer, K/M/G)", key);
	memcpy(num, s, len + 1);
	if (strchr("KMG", num[len - 1])) {
		mult = num[len - 1] == 'K'   ? (size_t)1 << 10
		       : num[len - 1] == 'M' ? (size_t)1 << 20
					     : (size_t)1 << 30;
		num[--len] = 0;
	}
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)num[i]))
			len = 0;
	errno = 0;
	v = len ? strtoull(num, &end, 10) : 0;
	if (!len || *end || errno)
		return eg__perr(p, eg__line(n),
				"%s: \"%s\" is not a byte count (an integer, "
				"K/M/G)",
				key, s);
	if (v > hi / mult || v * mult < lo || v * mult > hi)
		return eg__perr(p, eg__line(n),
				"%s: %s is out of range [%zu, %zu] bytes", key,
				s, lo, hi);
	*out = (size_t)v * mult;
	return 0;
}

/* A plain finite decimal number in (lo, hi]. */
static int eg__num(struct eg__pp *p, const char *key, const yaml_node_t *n,
		   double lo, double hi, double *out)
{
	const char *s = eg__scalar(n);
	char *end;

	if (!s || !eg__plain(n) || !*s)
		return eg__perr(p, eg__line(n), "%s: expected a number", key);
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c) && !strchr("+-.eE", *c))
			return eg__perr(p, eg__line(n),
					"%s: \"%s\" is not a number", key, s);
	errno = 0;
	*out = strtod(s, &end);
	if (*end || errno || !isfinite(*out))
		return eg__perr(p, eg__line(n), "%s: \"%s\" is not a number",
				key, s);
	if (*out <= lo || *out > hi)
		return eg__perr(p, eg__line(n),
				"%s: %g is out of range (%g, %g]", key, *out,
				lo, hi);
	return 0;
}

static int eg__str(struct eg__pp *p, const char *key, const yaml_node_t *n,
		   char **out)
{
	const char *s = eg__scalar(n);

	if (!s)
		return eg__perr(p, eg__line(n), "%s: expected a string", key);
	if (!*s)
		return eg__perr(p, eg__line(n), "%s: empty", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : EG_ENOMEM;
}

/* [a-z0-9][a-z0-9._:-]*: profile, sweep and arm names. */
static int eg__word_ok(const char *s)
{
	if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && !strchr("._:-", *s))
			return 0;
	return 1;
}

static int eg__bool(struct eg__pp *p, const char *key, const yaml_node_t *n,
		    int *out)
{
	const char *s = eg__scalar(n);

	if (s && eg__plain(n) && !strcmp(s, "true"))
		*out = 1;
	else if (s && eg__plain(n) && !strcmp(s, "false"))
		*out = 0;
	else
		return eg__perr(p, eg__line(n), "%s: expected true or false",
				key);
	return 0;
}

/* A mapping with plain, unrepeated keys. */
static int eg__mapping(struct eg__pp *p, const char *what, const yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE)
		return eg__perr(p, eg__line(n), "%s: expected a mapping", what);
	for (yaml_node_pair_t *a = n->data.mapping.pairs.start;
	     a < n->data.mapping.pairs.top; a++) {
		yaml_node_t *k = eg__node(p, a->key);

		if (!eg__scalar(k))
			return eg__perr(p, eg__line(k),
					"%s: keys must be plain words", what);
		for (yaml_node_pair_t *b = n->data.mapping.pairs.start; b < a;
		     b++)
			if (!strcmp(eg__scalar(k),
				    eg__scalar(eg__node(p, b->key))))
				return eg__perr(p, eg__line(k),
						"key \"%s\" repeats line %d",
						eg__scalar(k),
						eg__line(eg__node(p, b->key)));
	}
	return 0;
}

static const char *eg__list(const char *const *words, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; words[i]; i++) {
		strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
		strncat(buf, words[i], len - strlen(buf) - 1);
	}
	return buf;
}

static int eg__axis_of(const char *s)
{
	for (int i = 0; eg_profile_axes[i]; i++)
		if (!strcmp(s, eg_profile_axes[i]))
			return i;
	return -1;
}

/* Limits of the numeric axes. */
static const unsigned long eg__axis_hi[EG_AXIS_COUNT] = {
    [EG_AXIS_CONCURRENCY] = EG_TOKENS_MAX, [EG_AXIS_WORLD] = EG_WORLD_MAX,
    [EG_AXIS_NODES] = EG_WORLD_MAX,	   [EG_AXIS_EXPERTS] = EG_EXPERTS_MAX,
    [EG_AXIS_NUM_COMMS] = EG_COMMS_MAX,	   [EG_AXIS_HIDDEN] = EG_HIDDEN_MAX,
    [EG_AXIS_TOPK] = EG_TOPK_WIRE_MAX,
};

/* One value of axis a from n, checked on its own (a throwaway workload
 * checks dtype and routing text). */
static int eg__axis_value(struct eg__pp *p, eg_axis_t a, const yaml_node_t *n,
			  eg_axis_value_t *v)
{
	const char *name = eg_profile_axes[a];
	unsigned long u;
	int rc;

	memset(v, 0, sizeof(*v));
	if (!eg_profile_axis_is_string(a)) {
		if ((rc = eg__uint(p, name, n, 1, eg__axis_hi[a], &u)))
			return rc;
		v->num = (uint32_t)u;
		return 0;
	}
	const char *s = eg__scalar(n);
	char werr[EG_ERRMSG_MAX];
	eg_workload_t w;

	if (!s || !*s)
		return eg__perr(p, eg__line(n), "%s: expected a word", name);
	if (strlen(s) >= sizeof(v->str))
		return eg__perr(p, eg__line(n), "%s: \"%s\" is too long", name,
				s);
	eg_workload_init(&w);
	rc = eg_workload_set(&w, name, s, werr);
	eg_workload_fini(&w);
	if (rc < 0) /* the workload's message names the key already */
		return eg__perr(p, eg__line(n), "%s", werr);
	snprintf(v->str, sizeof(v->str), "%s", s);
	return 0;
}

static int eg__repetitions(struct eg__pp *p, const yaml_node_t *n,
			   unsigned *warmup, unsigned *iters)
{
	unsigned long u;
	int rc;

	if ((rc = eg__mapping(p, "repetitions", n)))
		return rc;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);

		if (!strcmp(ks, "warmup")) {
			if ((rc = eg__uint(p, ks, v, 0, 100000, &u)))
				return rc;
			*warmup = (unsigned)u;
		} else if (!strcmp(ks, "iters")) {
			if ((rc = eg__uint(p, ks, v, 1, 1000000, &u)))
				return rc;
			*iters = (unsigned)u;
		} else {
			return eg__perr(p, eg__line(k),
					"repetitions: unknown key \"%s\" "
					"(warmup, iters)",
					ks);
		}
	}
	return 0;
}

static int eg__model(struct eg__pp *p, const yaml_node_t *n, eg_profile_t *pf)
{
	int rc;

	if ((rc = eg__mapping(p, "model", n)))
		return rc;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);

		if (!strcmp(ks, "bw_gbps"))
			rc = eg__num(p, ks, v, 0, 1e6, &pf->model_bw_gbps);
		else if (!strcmp(ks, "post_rate"))
			rc = eg__num(p, ks, v, 0, 1e12, &pf->model_post_rate);
		else
			rc = eg__perr(p, eg__line(k),
				      "model: unknown key \"%s\" (bw_gbps, "
				      "post_rate)",
				      ks);
		if (rc)
			return rc;
	}
	if (!pf->model_bw_gbps || !pf->model_post_rate)
		return eg__perr(p, eg__line(n),
				"model: give both bw_gbps and post_rate");
	return 0;
}

static int eg__raw(struct eg__pp *p, const yaml_node_t *n, eg_profile_t *pf)
{
	unsigned long u;
	int rc;

	if ((rc = eg__mapping(p, "raw", n)))
		return rc;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);

		if (!strcmp(ks, "msgs")) {
			rc = eg__uint(p, ks, v, 1, 1u << 20, &u);
			pf->raw_msgs = (unsigned)u;
		} else if (!strcmp(ks, "iters")) {
			rc = eg__uint(p, ks, v, 1, 100000, &u);
			pf->raw_iters = (unsigned)u;
		} else if (!strcmp(ks, "warmup")) {
			rc = eg__uint(p, ks, v, 0, 100000, &u);
			pf->raw_warmup = (unsigned)u;
		} else if (!strcmp(ks, "msg_size")) {
			rc = eg__bytes(p, ks, v, 1, (size_t)1 << 20,
				       &pf->raw_msg_size);
		} else if (!strcmp(ks, "size")) {
			rc = eg__bytes(p, ks, v, 1, (size_t)1 << 30,
				       &pf->raw_size);
		} else {
			rc =
			    eg__perr(p, eg__line(k),
				     "raw: unknown key \"%s\" (msgs, msg_size, "
				     "size, iters, warmup)",
				     ks);
		}
		if (rc)
			return rc;
	}
	if ((unsigned long long)pf->raw_msgs * pf->raw_msg_size >
	    ((size_t)1 << 30))
		return eg__perr(p, eg__line(n), "raw: msgs x msg_size over 1G");
	return 0;
}

static int eg__env(struct eg__pp *p, const yaml_node_t *n, eg_profile_t *pf)
{
	size_t cnt;
	int rc;

	if ((rc = eg__mapping(p, "env", n)))
		return rc;
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	pf->env_keys = calloc(cnt + 1, sizeof(char *));
	pf->env_vals = calloc(cnt + 1, sizeof(char *));
	if (!pf->env_keys || !pf->env_vals)
		return EG_ENOMEM;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);
		int ok = isupper((unsigned char)ks[0]) || ks[0] == '_';

		for (const char *c = ks; *c; c++)
			ok &= isupper((unsigned char)*c) ||
			      isdigit((unsigned char)*c) || *c == '_';
		if (!ok)
			return eg__perr(p, eg__line(k),
					"env: \"%s\" is not a variable name "
					"([A-Z_][A-Z0-9_]*)",
					ks);
		if (!eg__scalar(v))
			return eg__perr(p, eg__line(v),
					"env: %s: expected a string", ks);
		pf->env_keys[pf->n_env] = strdup(ks);
		pf->env_vals[pf->n_env] = strdup(eg__scalar(v));
		if (!pf->env_keys[pf->n_env++] || !pf->env_vals[pf->n_env - 1])
			return EG_ENOMEM;
	}
	return 0;
}

static int eg__base(struct eg__pp *p, const yaml_node_t *n, eg_profile_t *pf)
{
	char list[256];
	int rc;

	if ((rc = eg__mapping(p, "base", n)))
		return rc;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);
		int a = eg__axis_of(ks);
		char **extra = !strcmp(ks, "data")   ? &pf->base_data
			       : !strcmp(ks, "mask") ? &pf->base_mask
			       : !strcmp(ks, "seed") ? &pf->base_seed
						     : NULL;

		if (a >= 0) {
			if ((rc = eg__axis_value(p, (eg_axis_t)a, v,
						 &pf->base[a])))
				return rc;
			continue;
		}
		if (!extra)
			return eg__perr(
			    p, eg__line(k),
			    "base: unknown key \"%s\" (the axes %s; "
			    "and data, mask, seed)",
			    ks, eg__list(eg_profile_axes, list, sizeof(list)));
		char werr[EG_ERRMSG_MAX];
		eg_workload_t w;

		if ((rc = eg__str(p, ks, v, extra)))
			return rc;
		eg_workload_init(&w);
		rc = eg_workload_set(&w, ks, *extra, werr);
		eg_workload_fini(&w);
		if (rc < 0)
			return eg__perr(p, eg__line(v), "base: %s: %s", ks,
					werr);
	}
	return 0;
}

/* Arms the transport can run. */
static int eg__arm_ok(const char *transport, const char *arm)
{
	if (!strcmp(transport, "null")) {
		char *end;

		if (!strcmp(arm, "empty"))
			return 1;
		if ((strncmp(arm, "work:", 5) && strncmp(arm, "loop:", 5)) ||
		    !isdigit((unsigned char)arm[5]))
			return 0;
		unsigned long v = strtoul(arm + 5, &end, 10);
		return !*end && v >= 1 && v <= 1000000000;
	}
	if (!strcmp(transport, "fabric")) {
		const eg_engine_ops_t *e = eg_engine_find(arm);

		return e && (e->flags & EG_ENGINE_MULTI_PROCESS);
	}
	return !strcmp(arm, "a2a") || !strcmp(arm, "dense");
}

static int eg__arms(struct eg__pp *p, const yaml_node_t *n,
		    const eg_profile_t *pf, eg_sweep_t *s)
{
	size_t cnt = n->type == YAML_SEQUENCE_NODE ? eg__seq_len(n) : 1;
	int rc;

	if (n->type != YAML_SEQUENCE_NODE && n->type != YAML_SCALAR_NODE)
		return eg__perr(p, eg__line(n),
				"arms: expected an arm or a list");
	if (!cnt)
		return eg__perr(p, eg__line(n), "arms: empty list");
	s->arms = calloc(cnt, sizeof(char *));
	if (!s->arms)
		return EG_ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *e =
		    n->type == YAML_SCALAR_NODE
			? (yaml_node_t *)n
			: eg__node(p, n->data.sequence.items.start[i]);

		if ((rc = eg__str(p, "arms", e, &s->arms[i])))
			return rc;
		s->n_arms++;
		if (!eg__word_ok(s->arms[i]) ||
		    !eg__arm_ok(pf->transport, s->arms[i]))
			return eg__perr(
			    p, eg__line(e),
			    "arms: unknown arm \"%s\" for transport %s (%s)",
			    s->arms[i], pf->transport,
			    !strcmp(pf->transport, "null")
				? "empty, work:US, loop:N"
				: "a2a, dense");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->arms[j], s->arms[i]))
				return eg__perr(p, eg__line(e),
						"arms: \"%s\" given twice",
						s->arms[i]);
	}
	return 0;
}

static int eg__axes(struct eg__pp *p, const yaml_node_t *n, eg_sweep_t *s)
{
	char list[256];
	size_t cnt;
	int rc;

	if ((rc = eg__mapping(p, "axes", n)))
		return rc;
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!cnt)
		return eg__perr(p, eg__line(n), "axes: no axis");
	s->axes = calloc(cnt, sizeof(*s->axes));
	if (!s->axes)
		return EG_ENOMEM;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		eg_sweep_axis_t *ax = &s->axes[s->n_axes];
		int a = eg__axis_of(eg__scalar(k));
		size_t nv;

		if (a < 0)
			return eg__perr(
			    p, eg__line(k), "unknown axis \"%s\" (%s)",
			    eg__scalar(k),
			    eg__list(eg_profile_axes, list, sizeof(list)));
		if (v->type == YAML_SCALAR_NODE)
			nv = 1;
		else if (v->type == YAML_SEQUENCE_NODE && eg__seq_len(v))
			nv = eg__seq_len(v);
		else
			return eg__perr(p, eg__line(v),
					"%s: expected a value or a non-empty "
					"list",
					eg__scalar(k));
		ax->axis = (eg_axis_t)a;
		ax->line = eg__line(k);
		ax->values = calloc(nv, sizeof(*ax->values));
		if (!ax->values)
			return EG_ENOMEM;
		s->n_axes++;
		for (size_t i = 0; i < nv; i++) {
			yaml_node_t *e =
			    v->type == YAML_SCALAR_NODE
				? v
				: eg__node(p, v->data.sequence.items.start[i]);

			if ((rc = eg__axis_value(p, ax->axis, e,
						 &ax->values[i])))
				return rc;
			ax->n_values++;
			for (size_t j = 0; j < i; j++)
				if (ax->values[j].num == ax->values[i].num &&
				    !strcmp(ax->values[j].str,
					    ax->values[i].str))
					return eg__perr(p, eg__line(e),
							"%s: value given twice",
							eg__scalar(k));
		}
	}
	return 0;
}

static int eg__sweep(struct eg__pp *p, const yaml_node_t *n, eg_profile_t *pf,
		     eg_sweep_t *s)
{
	const yaml_node_t *axes = NULL, *arms = NULL;
	int rc;

	s->line = eg__line(n);
	s->warmup = pf->warmup;
	s->iters = pf->iters;
	if ((rc = eg__mapping(p, "sweep", n)))
		return rc;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);

		if (!strcmp(ks, "name")) {
			if ((rc = eg__str(p, ks, v, &s->name)))
				return rc;
			if (!eg__word_ok(s->name) || strlen(s->name) > 48)
				return eg__perr(p, eg__line(v),
						"name: \"%s\" is not a sweep "
						"name ([a-z0-9][a-z0-9._:-]*, "
						"48 characters at most)",
						s->name);
		} else if (!strcmp(ks, "arms")) {
			arms = v;
		} else if (!strcmp(ks, "axes")) {
			axes = v;
		} else if (!strcmp(ks, "zip")) {
			if ((rc = eg__bool(p, ks, v, &s->zip)))
				return rc;
		} else if (!strcmp(ks, "repetitions")) {
			if ((rc = eg__repetitions(p, v, &s->warmup, &s->iters)))
				return rc;
		} else if (!strcmp(ks, "description")) {
			if (!eg__scalar(v))
				return eg__perr(p, eg__line(v),
						"description: expected text");
		} else {
			return eg__perr(p, eg__line(k),
					"sweep: unknown key \"%s\" (name, "
					"arms, axes, zip, repetitions, "
					"description)",
					ks);
		}
	}
	if (!s->name)
		return eg__perr(p, s->line, "sweep: no name");
	if (!arms)
		return eg__perr(p, s->line, "sweep \"%s\": no arms", s->name);
	if (!axes)
		return eg__perr(p, s->line, "sweep \"%s\": no axes", s->name);
	if ((rc = eg__arms(p, arms, pf, s)) || (rc = eg__axes(p, axes, s)))
		return rc;
	if (s->zip)
		for (size_t i = 1; i < s->n_axes; i++)
			if (s->axes[i].n_values != s->axes[0].n_values)
				return eg__perr(
				    p, s->axes[i].line,
				    "sweep \"%s\": zip: %s has %zu value(s), "
				    "%s has %zu",
				    s->name, eg_profile_axes[s->axes[i].axis],
				    s->axes[i].n_values,
				    eg_profile_axes[s->axes[0].axis],
				    s->axes[0].n_values);
	return 0;
}

static const char *const eg__top_keys[] = {
    "profile", "description", "transport", "provider",	  "launcher",
    "gates",   "timeout",     "env",	   "repetitions", "model",
    "raw",     "base",	      "sweeps",	   NULL,
};

static int eg__top(struct eg__pp *p, const yaml_node_t *root, eg_profile_t *pf)
{
	const yaml_node_t *sweeps = NULL, *base = NULL, *k_tr = NULL;
	char list[256];
	int rc;

	if (root->type != YAML_MAPPING_NODE)
		return eg__perr(p, eg__line(root),
				"a profile is a mapping (profile:, transport:, "
				"base:, sweeps:, ...)");
	if ((rc = eg__mapping(p, "profile", root)))
		return rc;
	/* transport first: arms are checked against it */
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++)
		if (!strcmp(eg__scalar(eg__node(p, pr->key)), "transport"))
			k_tr = eg__node(p, pr->value);
	if (!k_tr)
		return eg__perr(p, eg__line(root),
				"no transport (fabric, nccl, null)");
	if ((rc = eg__str(p, "transport", k_tr, &pf->transport)))
		return rc;
	if (strcmp(pf->transport, "fabric") && strcmp(pf->transport, "nccl") &&
	    strcmp(pf->transport, "null"))
		return eg__perr(p, eg__line(k_tr),
				"unknown transport \"%s\" (fabric, nccl, null)",
				pf->transport);
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = eg__node(p, pr->key),
			    *v = eg__node(p, pr->value);
		const char *ks = eg__scalar(k);
		unsigned long u;

		if (!strcmp(ks, "profile")) {
			if ((rc = eg__str(p, ks, v, &pf->name)))
				return rc;
			if (!eg__word_ok(pf->name))
				return eg__perr(p, eg__line(v),
						"profile: \"%s\" is not a "
						"profile name",
						pf->name);
		} else if (!strcmp(ks, "description")) {
			rc = eg__str(p, ks, v, &pf->description);
		} else if (!strcmp(ks, "transport")) {
			continue;
		} else if (!strcmp(ks, "provider")) {
			rc = eg__str(p, ks, v, &pf->provider);
			if (!rc && !strcmp(pf->provider, "auto")) {
				free(pf->provider);
				pf->provider = NULL;
			}
		} else if (!strcmp(ks, "launcher")) {
			const char *s = eg__scalar(v);

			if (s && !strcmp(s, "local"))
				pf->launcher = EG_LAUNCHER_LOCAL;
			else if (s && !strcmp(s, "slurm"))
				pf->launcher = EG_LAUNCHER_SLURM;
			else
				rc = eg__perr(p, eg__line(v),
					      "unknown launcher \"%s\" (local, "
					      "slurm)",
					      s ? s : "");
		} else if (!strcmp(ks, "gates")) {
			rc = eg__str(p, ks, v, &pf->gates);
		} else if (!strcmp(ks, "timeout")) {
			rc = eg__uint(p, ks, v, 1, 86400, &u);
			pf->timeout_s = (double)u;
		} else if (!strcmp(ks, "env")) {
			rc = eg__env(p, v, pf);
		} else if (!strcmp(ks, "repetitions")) {
			rc = eg__repetitions(p, v, &pf->warmup, &pf->iters);
		} else if (!strcmp(ks, "model")) {
			rc = eg__model(p, v, pf);
		} else if (!strcmp(ks, "raw")) {
			rc = eg__raw(p, v, pf);
		} else if (!strcmp(ks, "base")) {
			base = v;
		} else if (!strcmp(ks, "sweeps")) {
			sweeps = v;
		} else {
			rc = eg__perr(
			    p, eg__line(k), "unknown key \"%s\" (%s)", ks,
			    eg__list(eg__top_keys, list, sizeof(list)));
		}
		if (rc)
			return rc;
	}
	if (!pf->name)
		return eg__perr(p, eg__line(root),
				"no profile name (profile:)");
	if (base && (rc = eg__base(p, base, pf)))
		return rc;
	if (!sweeps)
		return eg__perr(p, eg__line(root), "no sweeps");
	if (sweeps->type != YAML_SEQUENCE_NODE || !eg__seq_len(sweeps))
		return eg__perr(p, eg__line(sweeps),
				"sweeps: expected a non-empty list");
	pf->sweeps = calloc(eg__seq_len(sweeps), sizeof(*pf->sweeps));
	if (!pf->sweeps)
		return EG_ENOMEM;
	for (size_t i = 0; i < eg__seq_len(sweeps); i++) {
		eg_sweep_t *s = &pf->sweeps[pf->n_sweeps++];

		if ((rc = eg__sweep(
			 p, eg__node(p, sweeps->data.sequence.items.start[i]),
			 pf, s)))
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pf->sweeps[j].name, s->name))
				return eg__perr(p, s->line,
						"sweep \"%s\" repeats line %d",
						s->name, pf->sweeps[j].line);
	}
	return 0;
}

static void eg__defaults(eg_profile_t *pf)
{
	eg_workload_t w;

	eg_workload_init(&w);
	pf->timeout_s = 60;
	pf->warmup = 3;
	pf->iters = 20;
	pf->raw_msgs = 256;
	pf->raw_msg_size = 8;
	pf->raw_size = (size_t)256 << 10;
	pf->raw_iters = 10;
	pf->raw_warmup = 2;
	pf->base[EG_AXIS_CONCURRENCY].num = w.tokens;
	pf->base[EG_AXIS_WORLD].num = w.world;
	pf->base[EG_AXIS_NODES].num = 1;
	pf->base[EG_AXIS_EXPERTS].num = w.experts;
	pf->base[EG_AXIS_NUM_COMMS].num = 1;
	pf->base[EG_AXIS_HIDDEN].num = w.hidden;
	pf->base[EG_AXIS_TOPK].num = w.topk;
	snprintf(pf->base[EG_AXIS_DTYPE].str, sizeof(pf->base[0].str), "%s",
		 eg_dtype_name(w.dtype));
	snprintf(pf->base[EG_AXIS_ROUTING].str, sizeof(pf->base[0].str), "%s",
		 eg_routing_name(w.routing));
	eg_workload_fini(&w);
}

void eg_profile_free(eg_profile_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_sweeps; i++) {
		eg_sweep_t *s = &p->sweeps[i];

		for (size_t j = 0; j < s->n_arms; j++)
			free(s->arms[j]);
		for (size_t j = 0; j < s->n_axes; j++)
			free(s->axes[j].values);
		free(s->arms);
		free(s->axes);
		free(s->name);
	}
	for (size_t i = 0; i < p->n_env; i++) {
		free(p->env_keys[i]);
		free(p->env_vals[i]);
	}
	free(p->env_keys);
	free(p->env_vals);
	free(p->sweeps);
	free(p->path);
	free(p->name);
	free(p->description);
	free(p->transport);
	free(p->provider);
	free(p->gates);
	free(p->base_data);
	free(p->base_mask);
	free(p->base_seed);
	memset(p, 0, sizeof(*p));
}

/* "sweep/arm/axis=value,..." for the swept axes of point pt. */
static void eg__point_id(const eg_sweep_t *s, eg_perf_point_t *pt)
{
	char id[sizeof(pt->id)];
	int n = snprintf(id, sizeof(id), "%s/%s/", s->name, pt->arm);

	for (size_t i = 0; i < s->n_axes && n > 0 && (size_t)n < sizeof(id);
	     i++) {
		eg_axis_t a = s->axes[i].axis;

		if (eg_profile_axis_is_string(a))
			n += snprintf(id + n, sizeof(id) - (size_t)n, "%s%s=%s",
				      i ? "," : "", eg_profile_axes[a],
				      pt->v[a].str);
		else
			n += snprintf(id + n, sizeof(id) - (size_t)n, "%s%s=%u",
				      i ? "," : "", eg_profile_axes[a],
				      pt->v[a].num);
	}
	memcpy(pt->id, id, sizeof(id));
}

int eg_perf_point_workload(const eg_profile_t *p, const eg_perf_point_t *pt,
			   eg_workload_t *w, char *err, size_t errlen)
{
	char werr[EG_ERRMSG_MAX], num[16];
	static const struct {
		eg_axis_t a;
		const char *key;
	} map[] = {
	    {EG_AXIS_WORLD, "world"},	  {EG_AXIS_EXPERTS, "experts"},
	    {EG_AXIS_TOPK, "topk"},	  {EG_AXIS_HIDDEN, "hidden"},
	    {EG_AXIS_DTYPE, "dtype"},	  {EG_AXIS_CONCURRENCY, "tokens"},
	    {EG_AXIS_ROUTING, "routing"},
	};
	int rc = 0;

	eg_workload_init(w);
	snprintf(w->name, EG_NAME_MAX, "%s", pt->suite);
	/* world first, then experts before topk: set checks ranges only */
	for (size_t i = 0; !rc && i < sizeof(map) / sizeof(map[0]); i++) {
		const char *val = pt->v[map[i].a].str;

		if (!eg_profile_axis_is_string(map[i].a)) {
			snprintf(num, sizeof(num), "%u", pt->v[map[i].a].num);
			val = num;
		}
		rc = eg_workload_set(w, map[i].key, val, werr);
	}
	if (!rc && p->base_data)
		rc = eg_workload_set(w, "data", p->base_data, werr);
	if (!rc && p->base_mask)
		rc = eg_workload_set(w, "mask", p->base_mask, werr);
	if (!rc && p->base_seed)
		rc = eg_workload_set(w, "seed", p->base_seed, werr);
	if (!rc)
		rc = eg_workload_validate(w, werr);
	if (!rc && pt->v[EG_AXIS_WORLD].num % pt->v[EG_AXIS_NODES].num) {
		snprintf(werr, sizeof(werr),
			 "world %u does not split into %u nodes of equal size",
			 pt->v[EG_AXIS_WORLD].num, pt->v[EG_AXIS_NODES].num);
		rc = EG_EINVAL;
	}
	if (rc) {
		snprintf(err, errlen, "%s", werr);
		eg_workload_fini(w);
		return rc < 0 ? rc : EG_EINVAL;
	}
	return 0;
}

int eg_profile_points(const eg_profile_t *p, eg_perf_point_t **pts, size_t *n,
		      char *err, size_t errlen)
{
	size_t cap = 0, cnt = 0;
	eg_perf_point_t *out = NULL;

	*pts = NULL;
	*n = 0;
	for (size_t si = 0; si < p->n_sweeps; si++) {
		const eg_sweep_t *s = &p->sweeps[si];
		size_t combos = 1;

		for (size_t i = 0; i < s->n_axes; i++)
			combos = s->zip ? s->axes[i].n_values
					: combos * s->axes[i].n_values;
		if (combos > 100000 / (s->n_arms ? s->n_arms : 1)) {
			snprintf(err, errlen,
				 "%s:%d: sweep \"%s\": %zu points is too many",
				 p->path ? p->path : p->name, s->line, s->name,
				 combos * s->n_arms);
			free(out);
			return EG_ERANGE;
		}
		for (size_t ai = 0; ai < s->n_arms; ai++)
			for (size_t c = 0; c < combos; c++) {
				eg_perf_point_t *pt;
				size_t rest = c;

				if (cnt == cap) {
					size_t nc = cap ? 2 * cap : 32;
					eg_perf_point_t *t =
					    realloc(out, nc * sizeof(*out));

					if (!t) {
						free(out);
						return EG_ENOMEM;
					}
					out = t;
					cap = nc;
				}
				pt = &out[cnt++];
				memset(pt, 0, sizeof(*pt));
				memcpy(pt->v, p->base, sizeof(pt->v));
				pt->suite = s->name;
				pt->arm = s->arms[ai];
				pt->sweep = si;
				pt->warmup = s->warmup;
				pt->iters = s->iters;
				/* last axis varies fastest */
				for (size_t i = s->n_axes; i-- > 0;) {
					const eg_sweep_axis_t *ax = &s->axes[i];
					size_t k =
					    s->zip ? c : rest % ax->n_values;

					rest /= s->zip ? 1 : ax->n_values;
					pt->v[ax->axis] = ax->values[k];
				}
				eg__point_id(s, pt);
			}
	}
	*pts = out;
	*n = cnt;
	return 0;
}

/* Every point must be a valid workload on a world that splits into its
 * nodes, and every id unique. */
static int eg__check_points(struct eg__pp *p, const eg_profile_t *pf)
{
	eg_perf_point_t *pts;
	size_t n;
	char e[512];
	int rc = eg_profile_points(pf, &pts, &n, p->err, p->len);

	if (rc)
		return rc;
	for (size_t i = 0; !rc && i < n; i++) {
		const eg_sweep_t *s = &pf->sweeps[pts[i].sweep];
		eg_workload_t w;

		if (eg_perf_point_workload(pf, &pts[i], &w, e, sizeof(e)) < 0) {
			rc = eg__perr(p, s->line, "sweep \"%s\": point %s: %s",
				      s->name, pts[i].id, e);
			break;
		}
		eg_workload_fini(&w);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pts[i].id, pts[j].id)) {
				rc = eg__perr(p, s->line,
					      "sweep \"%s\": point id \"%s\" "
					      "repeats",
					      s->name, pts[i].id);
				break;
			}
	}
	free(pts);
	return rc;
}

int eg_profile_parse(eg_profile_t *pf, const char *text, size_t len,
		     const char *name, char *err, size_t errlen)
{
	struct eg__pp p = {NULL, name, err, errlen};
	yaml_parser_t parser;
	yaml_document_t doc, more;
	yaml_node_t *root;
	int rc;

	memset(pf, 0, sizeof(*pf));
	eg__defaults(pf);
	if (!(pf->path = strdup(name)))
		return EG_ENOMEM;
	if (!yaml_parser_initialize(&parser)) {
		eg_profile_free(pf);
		return EG_ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: YAML syntax: %s%s%s", name,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "error",
			 parser.context ? " " : "",
			 parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		eg_profile_free(pf);
		return EG_EPARSE;
	}
	p.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		snprintf(err, errlen, "%s:1: empty profile", name);
		rc = EG_EPARSE;
	} else {
		rc = eg__top(&p, root, pf);
	}
	if (!rc && yaml_parser_load(&parser, &more)) {
		yaml_node_t *r2 = yaml_document_get_root_node(&more);

		if (r2)
			rc = eg__perr(&p, eg__line(r2),
				      "a second YAML document; a profile holds "
				      "one");
		yaml_document_delete(&more);
	} else if (!rc) {
		snprintf(err, errlen, "%s:%zu: YAML syntax: %s", name,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "error");
		rc = EG_EPARSE;
	}
	if (!rc)
		rc = eg__check_points(&p, pf);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc)
		eg_profile_free(pf);
	return rc;
}

int eg_profile_load(eg_profile_t *p, const char *path, char *err, size_t errlen)
{
	size_t len = 0, cap = 0, got;
	char *text = NULL;
	FILE *f = fopen(path, "r");
	int rc;

	memset(p, 0, sizeof(*p));
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
	rc = eg_profile_parse(p, text ? text : "", len, path, err, errlen);
	free(text);
	return rc;
}
