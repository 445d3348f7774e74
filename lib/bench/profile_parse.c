/* Profiles through the strict YAML reader (lib/base/yaml_reader.c), so
 * every error names file:line; strict like gate files: unknown or
 * repeated keys, unknown axes and arms, malformed numbers and points
 * that are not valid workloads are errors (docs/profiles.md). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/profile.h"
#include "epgate/yaml_reader.h"

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

static int eg__axis_of(const char *s)
{
	for (int i = 0; eg_profile_axes[i]; i++)
		if (!strcmp(s, eg_profile_axes[i]))
			return i;
	return -1;
}

/* Limits of the numeric axes. */
static const unsigned eg__axis_hi[EG_AXIS_COUNT] = {
    [EG_AXIS_CONCURRENCY] = EG_TOKENS_MAX, [EG_AXIS_WORLD] = EG_WORLD_MAX,
    [EG_AXIS_NODES] = EG_WORLD_MAX,	   [EG_AXIS_EXPERTS] = EG_EXPERTS_MAX,
    [EG_AXIS_NUM_COMMS] = EG_COMMS_MAX,	   [EG_AXIS_HIDDEN] = EG_HIDDEN_MAX,
    [EG_AXIS_TOPK] = EG_TOPK_WIRE_MAX,
};

/* A workload key's text, checked by a throwaway workload. */
static int eg__workload_key(eg_yaml_t *y, const yaml_node_t *n,
			    const char *prefix, const char *key,
			    const char *val)
{
	char werr[EG_ERRMSG_MAX];
	eg_workload_t w;
	int rc;

	eg_workload_init(&w);
	rc = eg_workload_set(&w, key, val, werr);
	eg_workload_fini(&w);
	/* the workload's message names the key already */
	return rc < 0 ? eg_yaml_err(y, n, "%s%s", prefix, werr) : 0;
}

/* One value of axis a from n, checked on its own. */
static int eg__axis_value(eg_yaml_t *y, eg_axis_t a, const yaml_node_t *n,
			  eg_axis_value_t *v)
{
	const char *name = eg_profile_axes[a], *s = eg_yaml_scalar(n);
	int rc;

	memset(v, 0, sizeof(*v));
	if (!eg_profile_axis_is_string(a))
		return eg_yaml_uint(y, name, n, 1, eg__axis_hi[a], &v->num);
	if (!s || !*s)
		return eg_yaml_err(y, n, "%s: expected a word", name);
	if (strlen(s) >= sizeof(v->str))
		return eg_yaml_err(y, n, "%s: \"%s\" is too long", name, s);
	if ((rc = eg__workload_key(y, n, "", name, s)))
		return rc;
	snprintf(v->str, sizeof(v->str), "%s", s);
	return 0;
}

/* A key of a small mapping of numbers (repetitions, remeasure, model,
 * raw): how its value reads, its range and where it goes. */
typedef struct eg__num_key {
	const char *key;
	enum { EG__KEY_UINT, EG__KEY_NUM, EG__KEY_BYTES } kind;
	double lo, hi;
	unsigned flags; /* EG__KEY_NUM: eg_parse_double's */
	void *out;	/* unsigned, double or size_t */
} eg__num_key_t;

#define EG__NUM_KEYS_MAX 8

/* The mapping n of what: each key one of keys[0..nk), its value read
 * into its out. */
static int eg__num_keys(eg_yaml_t *y, const char *what, const yaml_node_t *n,
			const eg__num_key_t *keys, size_t nk)
{
	const char *allowed[EG__NUM_KEYS_MAX + 1];
	int rc;

	for (size_t j = 0; j < nk; j++)
		allowed[j] = keys[j].key;
	allowed[nk] = NULL;
	rc = eg_yaml_keys(y, what, n, allowed);
	for (size_t i = 0; !rc && i < eg_yaml_len(n); i++) {
		const char *ks = eg_yaml_scalar(eg_yaml_key(y, n, i));
		yaml_node_t *v = eg_yaml_value(y, n, i);
		const eg__num_key_t *k = keys;

		while (strcmp(k->key, ks)) /* eg_yaml_keys: it is there */
			k++;
		if (k->kind == EG__KEY_UINT)
			rc = eg_yaml_uint(y, ks, v, (unsigned)k->lo,
					  (unsigned)k->hi, k->out);
		else if (k->kind == EG__KEY_NUM)
			rc = eg_yaml_num(y, ks, v, k->lo, k->hi, k->flags,
					 k->out);
		else
			rc = eg_yaml_bytes(y, ks, v, (size_t)k->lo,
					   (size_t)k->hi, k->out);
	}
	return rc;
}

/* repetitions: {warmup, iters, launches} of a profile or a sweep. */
static int eg__repetitions(eg_yaml_t *y, const yaml_node_t *n, unsigned *warmup,
			   unsigned *iters, unsigned *launches)
{
	const eg__num_key_t keys[] = {
	    {"warmup", EG__KEY_UINT, 0, 100000, 0, warmup},
	    {"iters", EG__KEY_UINT, 1, 1000000, 0, iters},
	    {"launches", EG__KEY_UINT, 1, 1000, 0, launches},
	};

	return eg__num_keys(y, "repetitions", n, keys, 3);
}

/* remeasure: {rounds, launches}: extra launches of the points a gate
 * finds inconclusive or failing, before the verdict stands. */
static int eg__remeasure(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	const eg__num_key_t keys[] = {
	    {"rounds", EG__KEY_UINT, 0, 10, 0, &pf->remeasure_rounds},
	    {"launches", EG__KEY_UINT, 1, 1000, 0, &pf->remeasure_launches},
	};

	return eg__num_keys(y, "remeasure", n, keys, 2);
}

static int eg__model(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	const eg__num_key_t keys[] = {
	    {"bw_gbps", EG__KEY_NUM, 0, 1e6, EG_NUM_LO_OPEN,
	     &pf->model_bw_gbps},
	    {"post_rate", EG__KEY_NUM, 0, 1e12, EG_NUM_LO_OPEN,
	     &pf->model_post_rate},
	};
	int rc = eg__num_keys(y, "model", n, keys, 2);

	if (!rc && (!pf->model_bw_gbps || !pf->model_post_rate))
		return eg_yaml_err(y, n,
				   "model: give both bw_gbps and post_rate");
	return rc;
}

static int eg__raw(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	const eg__num_key_t keys[] = {
	    {"msgs", EG__KEY_UINT, 1, 1u << 20, 0, &pf->raw_msgs},
	    {"msg_size", EG__KEY_BYTES, 1, 1u << 20, 0, &pf->raw_msg_size},
	    {"size", EG__KEY_BYTES, 1, 1u << 30, 0, &pf->raw_size},
	    {"iters", EG__KEY_UINT, 1, 100000, 0, &pf->raw_iters},
	    {"warmup", EG__KEY_UINT, 0, 100000, 0, &pf->raw_warmup},
	};
	int rc = eg__num_keys(y, "raw", n, keys, 5);

	if (!rc && (unsigned long long)pf->raw_msgs * pf->raw_msg_size >
		       ((size_t)1 << 30))
		return eg_yaml_err(y, n, "raw: msgs x msg_size over 1G");
	return rc;
}

/* [A-Z_][A-Z0-9_]* */
static int eg__env_name(const char *s)
{
	int ok = isupper((unsigned char)s[0]) || s[0] == '_';

	for (const char *c = s; *c; c++)
		ok &= isupper((unsigned char)*c) ||
		      isdigit((unsigned char)*c) || *c == '_';
	return ok;
}

static int eg__env(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	size_t cnt = eg_yaml_len(n);
	int rc;

	if ((rc = eg_yaml_mapping(y, "env", n)))
		return rc;
	pf->env_keys = calloc(cnt + 1, sizeof(char *));
	pf->env_vals = calloc(cnt + 1, sizeof(char *));
	if (!pf->env_keys || !pf->env_vals)
		return EG_ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *k = eg_yaml_key(y, n, i),
			    *v = eg_yaml_value(y, n, i);
		const char *ks = eg_yaml_scalar(k);

		if (!eg__env_name(ks))
			return eg_yaml_err(y, k,
					   "env: \"%s\" is not a variable name "
					   "([A-Z_][A-Z0-9_]*)",
					   ks);
		if (!eg_yaml_scalar(v))
			return eg_yaml_err(y, v, "env: %s: expected a string",
					   ks);
		pf->env_keys[pf->n_env] = strdup(ks);
		pf->env_vals[pf->n_env] = strdup(eg_yaml_scalar(v));
		if (!pf->env_keys[pf->n_env++] || !pf->env_vals[pf->n_env - 1])
			return EG_ENOMEM;
	}
	return 0;
}

static int eg__base(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	const char *keys[EG_AXIS_COUNT + 4];
	int rc;

	for (int a = 0; a < EG_AXIS_COUNT; a++)
		keys[a] = eg_profile_axes[a];
	keys[EG_AXIS_COUNT] = "data";
	keys[EG_AXIS_COUNT + 1] = "mask";
	keys[EG_AXIS_COUNT + 2] = "seed";
	keys[EG_AXIS_COUNT + 3] = NULL;
	rc = eg_yaml_keys(y, "base", n, keys);
	for (size_t i = 0; !rc && i < eg_yaml_len(n); i++) {
		const char *ks = eg_yaml_scalar(eg_yaml_key(y, n, i));
		yaml_node_t *v = eg_yaml_value(y, n, i);
		int a = eg__axis_of(ks);
		char **extra = !strcmp(ks, "data")   ? &pf->base_data
			       : !strcmp(ks, "mask") ? &pf->base_mask
						     : &pf->base_seed;

		if (a >= 0)
			rc = eg__axis_value(y, (eg_axis_t)a, v, &pf->base[a]);
		else if (!(rc = eg_yaml_str(y, ks, v, extra)))
			rc = eg__workload_key(y, v, "base: ", ks, *extra);
	}
	return rc;
}

/* An arm's name: a word, or a spelling the engine registry knows with
 * a path and keys in it ("plugin:PATH[,key=value...]", "slow:10%:a2a"):
 * printable, no blank, no quote. */
static int eg__arm_name_ok(const char *s)
{
	if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s) || strchr("\"'\\`$", *s))
			return 0;
	return 1;
}

/* An nccl arm: a2a, dense, a plugin, or a planted slowdown of one. */
static int eg__nccl_arm_ok(const char *arm)
{
	double f, t;
	const char *inner;

	if (!strcmp(arm, "a2a") || !strcmp(arm, "dense") ||
	    !strncmp(arm, "plugin:", 7))
		return 1;
	return eg_slow_parse(arm, &f, &t, &inner) == 0 &&
	       eg__nccl_arm_ok(inner);
}

/* A named arm of the profile, alone or inside a planted slowdown. */
static int eg__named_arm(const eg_profile_t *pf, const char *arm)
{
	double f, t;
	const char *inner = arm;

	if (!strncmp(arm, EG_SLOW_PREFIX, strlen(EG_SLOW_PREFIX)) &&
	    eg_slow_parse(arm, &f, &t, &inner) < 0)
		return 0;
	return eg_profile_arm_spec(pf, inner) != NULL;
}

/* Arms the transport can run. */
static int eg__arm_ok(const eg_profile_t *pf, const char *arm)
{
	const char *transport = pf->transport;

	if (strcmp(transport, "null") && eg__named_arm(pf, arm))
		return 1;
	if (!strcmp(transport, "null")) {
		unsigned v;

		if (!strcmp(arm, "empty"))
			return 1;
		if (!strncmp(arm, "sim:", 4))
			return !eg_parse_uint(NULL, arm + 4, 1, 1000000000, &v,
					      NULL, 0);
		return (!strncmp(arm, "work:", 5) ||
			!strncmp(arm, "loop:", 5)) &&
		       !eg_parse_uint(NULL, arm + 5, 1, 1000000000, &v, NULL,
				      0);
	}
	if (!strcmp(transport, "fabric")) {
		const eg_engine_ops_t *e = eg_engine_find(arm);

		return e && (e->flags & EG_ENGINE_MULTI_PROCESS);
	}
	return eg__nccl_arm_ok(arm);
}

/* A named arm's spec: a2a, dense or a plugin (nccl, fabric; a plugin is
 * not loaded here: one absent where the profile runs makes its points
 * skips, docs/profiles.md), "{num_comms}" its only placeholder. */
static const char *eg__spec_bad(const char *transport, const char *spec)
{
	const char *b = spec;

	if (!strcmp(transport, "null"))
		return "the null transport runs no engine";
	if (strcmp(spec, "a2a") && strcmp(spec, "dense") &&
	    strncmp(spec, "plugin:", 7))
		return "want a2a, dense or plugin:NAME|PATH[,key=value...]";
	if (!eg__arm_name_ok(spec))
		return "a blank, a quote, a backslash or a $ in it";
	/* without its placeholders, no brace is left */
	for (; *b; b++) {
		if (!strncmp(b, "{num_comms}", 11))
			b += 10;
		else if (*b == '{' || *b == '}')
			return "{num_comms} is the only placeholder";
	}
	return NULL;
}

/* arms: {NAME: SPEC, ...}: engines under a name of their own. */
static int eg__named_arms(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf)
{
	size_t cnt = eg_yaml_len(n);
	int rc;

	if ((rc = eg_yaml_mapping(y, "arms", n)))
		return rc;
	pf->arm_names = calloc(cnt + 1, sizeof(char *));
	pf->arm_specs = calloc(cnt + 1, sizeof(char *));
	if (!pf->arm_names || !pf->arm_specs)
		return EG_ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *k = eg_yaml_key(y, n, i),
			    *v = eg_yaml_value(y, n, i);
		const char *ks = eg_yaml_scalar(k), *vs = eg_yaml_scalar(v);
		const char *why;

		if (!eg__word_ok(ks) || strchr(ks, ':') || strlen(ks) > 32 ||
		    !strcmp(ks, "a2a") || !strcmp(ks, "dense"))
			return eg_yaml_err(y, k,
					   "arms: \"%s\" is not an arm name "
					   "([a-z0-9][a-z0-9._-]*, 32 "
					   "characters at most, not a2a or "
					   "dense)",
					   ks);
		if (!vs)
			return eg_yaml_err(y, v, "arms: %s: expected an engine",
					   ks);
		if ((why = eg__spec_bad(pf->transport, vs)))
			return eg_yaml_err(y, v, "arms: %s: \"%s\": %s", ks, vs,
					   why);
		pf->arm_names[pf->n_arm_names] = strdup(ks);
		pf->arm_specs[pf->n_arm_names] = strdup(vs);
		if (!pf->arm_names[pf->n_arm_names++] ||
		    !pf->arm_specs[pf->n_arm_names - 1])
			return EG_ENOMEM;
	}
	return 0;
}

static int eg__arms(eg_yaml_t *y, const yaml_node_t *n, const eg_profile_t *pf,
		    eg_sweep_t *s)
{
	int rc = eg_yaml_strs(y, "arms", n, &s->arms, &s->n_arms);

	for (size_t i = 0; !rc && i < s->n_arms; i++) {
		const yaml_node_t *e =
		    n->type == YAML_SEQUENCE_NODE ? eg_yaml_item(y, n, i) : n;

		if (!eg__arm_name_ok(s->arms[i]) || !eg__arm_ok(pf, s->arms[i]))
			return eg_yaml_err(
			    y, e,
			    "arms: unknown arm \"%s\" for transport %s (%s)",
			    s->arms[i], pf->transport,
			    !strcmp(pf->transport, "null")
				? "empty, work:US, loop:N, sim:US"
				: "a2a, dense, plugin:PATH[,key=value], "
				  "slow:N%:ARM, a name of the profile's "
				  "arms:");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->arms[j], s->arms[i]))
				return eg_yaml_err(y, e,
						   "arms: \"%s\" given twice",
						   s->arms[i]);
	}
	return rc;
}

/* The values of one swept axis: a value or a non-empty list. */
static int eg__axis_values(eg_yaml_t *y, const yaml_node_t *k,
			   const yaml_node_t *v, eg_sweep_axis_t *ax)
{
	int seq = v->type == YAML_SEQUENCE_NODE;
	size_t nv = seq ? eg_yaml_len(v) : 1;
	int rc;

	if ((!seq && v->type != YAML_SCALAR_NODE) || !nv)
		return eg_yaml_err(y, v,
				   "%s: expected a value or a non-empty list",
				   eg_yaml_scalar(k));
	ax->line = eg_yaml_line(k);
	ax->values = calloc(nv, sizeof(*ax->values));
	if (!ax->values)
		return EG_ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		const yaml_node_t *e = seq ? eg_yaml_item(y, v, i) : v;

		if ((rc = eg__axis_value(y, ax->axis, e, &ax->values[i])))
			return rc;
		ax->n_values++;
		for (size_t j = 0; j < i; j++)
			if (ax->values[j].num == ax->values[i].num &&
			    !strcmp(ax->values[j].str, ax->values[i].str))
				return eg_yaml_err(y, e,
						   "%s: value given twice",
						   eg_yaml_scalar(k));
	}
	return 0;
}

static int eg__axes(eg_yaml_t *y, const yaml_node_t *n, eg_sweep_t *s)
{
	size_t cnt = eg_yaml_len(n);
	char list[256];
	int rc;

	if ((rc = eg_yaml_mapping(y, "axes", n)))
		return rc;
	if (!cnt)
		return eg_yaml_err(y, n, "axes: no axis");
	s->axes = calloc(cnt, sizeof(*s->axes));
	if (!s->axes)
		return EG_ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *k = eg_yaml_key(y, n, i);
		eg_sweep_axis_t *ax = &s->axes[s->n_axes];
		int a = eg__axis_of(eg_yaml_scalar(k));

		if (a < 0)
			return eg_yaml_err(
			    y, k, "unknown axis \"%s\" (%s)", eg_yaml_scalar(k),
			    eg_yaml_words(eg_profile_axes, list, sizeof(list)));
		ax->axis = (eg_axis_t)a;
		s->n_axes++;
		if ((rc = eg__axis_values(y, k, eg_yaml_value(y, n, i), ax)))
			return rc;
	}
	return 0;
}

/* A sweep's own keys; arms and axes come after (they need the rest). */
static int eg__sweep_key(eg_yaml_t *y, const char *ks, const yaml_node_t *v,
			 eg_sweep_t *s)
{
	int rc;

	if (!strcmp(ks, "name")) {
		if ((rc = eg_yaml_str(y, ks, v, &s->name)))
			return rc;
		if (!eg__word_ok(s->name) || strlen(s->name) > 48)
			return eg_yaml_err(y, v,
					   "name: \"%s\" is not a sweep "
					   "name ([a-z0-9][a-z0-9._:-]*, "
					   "48 characters at most)",
					   s->name);
		return 0;
	}
	if (!strcmp(ks, "zip"))
		return eg_yaml_bool(y, ks, v, &s->zip);
	if (!strcmp(ks, "repetitions"))
		return eg__repetitions(y, v, &s->warmup, &s->iters,
				       &s->launches);
	if (!strcmp(ks, "description") && !eg_yaml_scalar(v))
		return eg_yaml_err(y, v, "description: expected text");
	return 0;
}

static int eg__zip_check(eg_yaml_t *y, const eg_sweep_t *s)
{
	for (size_t i = 1; s->zip && i < s->n_axes; i++)
		if (s->axes[i].n_values != s->axes[0].n_values)
			return eg_yaml_err_at(
			    y, s->axes[i].line,
			    "sweep \"%s\": zip: %s has %zu value(s), %s has "
			    "%zu",
			    s->name, eg_profile_axes[s->axes[i].axis],
			    s->axes[i].n_values,
			    eg_profile_axes[s->axes[0].axis],
			    s->axes[0].n_values);
	return 0;
}

static int eg__sweep(eg_yaml_t *y, const yaml_node_t *n, eg_profile_t *pf,
		     eg_sweep_t *s)
{
	static const char *const keys[] = {
	    "name", "arms", "axes", "zip", "repetitions", "description", NULL};
	const yaml_node_t *axes, *arms;
	int rc;

	s->line = eg_yaml_line(n);
	s->warmup = pf->warmup;
	s->iters = pf->iters;
	s->launches = pf->launches;
	if ((rc = eg_yaml_keys(y, "sweep", n, keys)))
		return rc;
	for (size_t i = 0; i < eg_yaml_len(n); i++)
		if ((rc = eg__sweep_key(y, eg_yaml_scalar(eg_yaml_key(y, n, i)),
					eg_yaml_value(y, n, i), s)))
			return rc;
	arms = eg_yaml_get(y, n, "arms");
	axes = eg_yaml_get(y, n, "axes");
	if (!s->name)
		return eg_yaml_err_at(y, s->line, "sweep: no name");
	if (!arms)
		return eg_yaml_err_at(y, s->line, "sweep \"%s\": no arms",
				      s->name);
	if (!axes)
		return eg_yaml_err_at(y, s->line, "sweep \"%s\": no axes",
				      s->name);
	if ((rc = eg__arms(y, arms, pf, s)) || (rc = eg__axes(y, axes, s)))
		return rc;
	return eg__zip_check(y, s);
}

static int eg__sweeps(eg_yaml_t *y, const yaml_node_t *root,
		      const yaml_node_t *sweeps, eg_profile_t *pf)
{
	int rc;

	if (!sweeps)
		return eg_yaml_err(y, root, "no sweeps");
	if (sweeps->type != YAML_SEQUENCE_NODE || !eg_yaml_len(sweeps))
		return eg_yaml_err(y, sweeps,
				   "sweeps: expected a non-empty list");
	pf->sweeps = calloc(eg_yaml_len(sweeps), sizeof(*pf->sweeps));
	if (!pf->sweeps)
		return EG_ENOMEM;
	for (size_t i = 0; i < eg_yaml_len(sweeps); i++) {
		eg_sweep_t *s = &pf->sweeps[pf->n_sweeps++];

		if ((rc = eg__sweep(y, eg_yaml_item(y, sweeps, i), pf, s)))
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pf->sweeps[j].name, s->name))
				return eg_yaml_err_at(
				    y, s->line, "sweep \"%s\" repeats line %d",
				    s->name, pf->sweeps[j].line);
	}
	return 0;
}

static const char *const eg__top_keys[] = {
    "profile", "description", "transport",   "provider",  "launcher", "gates",
    "timeout", "env",	      "repetitions", "remeasure", "model",    "raw",
    "base",    "sweeps",      "interleave",  "arms",	  "python",   NULL,
};

static int eg__name(eg_yaml_t *y, const yaml_node_t *v, eg_profile_t *pf)
{
	int rc = eg_yaml_str(y, "profile", v, &pf->name);

	if (!rc && !eg__word_ok(pf->name))
		return eg_yaml_err(
		    y, v, "profile: \"%s\" is not a profile name", pf->name);
	return rc;
}

/* One top-level key; base and sweeps are read after the rest. */
static int eg__top_key(eg_yaml_t *y, const char *ks, const yaml_node_t *v,
		       eg_profile_t *pf)
{
	static const char *const launchers[] = {"local", "slurm", NULL};
	int rc, idx = 0;

	if (!strcmp(ks, "profile"))
		return eg__name(y, v, pf);
	if (!strcmp(ks, "description"))
		return eg_yaml_str(y, ks, v, &pf->description);
	if (!strcmp(ks, "provider")) {
		rc = eg_yaml_str(y, ks, v, &pf->provider);
		if (!rc && !strcmp(pf->provider, "auto")) {
			free(pf->provider);
			pf->provider = NULL;
		}
		return rc;
	}
	if (!strcmp(ks, "launcher")) {
		rc = eg_yaml_word(y, ks, v, launchers, &idx);
		pf->launcher = idx ? EG_LAUNCHER_SLURM : EG_LAUNCHER_LOCAL;
		return rc;
	}
	if (!strcmp(ks, "interleave")) {
		static const char *const ways[] = {"none", "steps", NULL};

		rc = eg_yaml_word(y, ks, v, ways, &idx);
		pf->interleave = idx == 1;
		return rc;
	}
	if (!strcmp(ks, "gates"))
		return eg_yaml_str(y, ks, v, &pf->gates);
	if (!strcmp(ks, "timeout")) {
		unsigned u = 0;

		rc = eg_yaml_uint(y, ks, v, 1, 86400, &u);
		pf->timeout_s = rc ? pf->timeout_s : (double)u;
		return rc;
	}
	if (!strcmp(ks, "env"))
		return eg__env(y, v, pf);
	if (!strcmp(ks, "repetitions"))
		return eg__repetitions(y, v, &pf->warmup, &pf->iters,
				       &pf->launches);
	if (!strcmp(ks, "remeasure"))
		return eg__remeasure(y, v, pf);
	if (!strcmp(ks, "model"))
		return eg__model(y, v, pf);
	if (!strcmp(ks, "raw"))
		return eg__raw(y, v, pf);
	if (!strcmp(ks, "arms"))
		return eg__named_arms(y, v, pf);
	if (!strcmp(ks, "python")) {
		rc = eg_yaml_str(y, ks, v, &pf->python);
		if (!rc && !*pf->python)
			return eg_yaml_err(y, v,
					   "python: want a venv folder or an "
					   "interpreter");
		return rc;
	}
	return 0; /* transport (read first), base, sweeps */
}

static int eg__top(eg_yaml_t *y, const yaml_node_t *root, eg_profile_t *pf)
{
	static const char *const transports[] = {"fabric", "nccl", "null",
						 NULL};
	const yaml_node_t *tr, *base;
	int rc, idx;

	if (root->type != YAML_MAPPING_NODE)
		return eg_yaml_err(y, root,
				   "a profile is a mapping (profile:, "
				   "transport:, base:, sweeps:, ...)");
	if ((rc = eg_yaml_keys(y, NULL, root, eg__top_keys)))
		return rc;
	/* transport first: arms are checked against it */
	if (!(tr = eg_yaml_get(y, root, "transport")))
		return eg_yaml_err(y, root,
				   "no transport (fabric, nccl, null)");
	if ((rc = eg_yaml_word(y, "transport", tr, transports, &idx)))
		return rc;
	if (!(pf->transport = strdup(transports[idx])))
		return EG_ENOMEM;
	for (size_t i = 0; i < eg_yaml_len(root); i++)
		if ((rc =
			 eg__top_key(y, eg_yaml_scalar(eg_yaml_key(y, root, i)),
				     eg_yaml_value(y, root, i), pf)))
			return rc;
	if (!pf->name)
		return eg_yaml_err(y, root, "no profile name (profile:)");
	base = eg_yaml_get(y, root, "base");
	if (base && (rc = eg__base(y, base, pf)))
		return rc;
	return eg__sweeps(y, root, eg_yaml_get(y, root, "sweeps"), pf);
}

/* Every point must be a valid workload on a world that splits into its
 * nodes, and every id unique. */
static int eg__check_points(eg_yaml_t *y, const eg_profile_t *pf)
{
	eg_bench_point_t *pts;
	size_t n;
	char e[512];
	int rc = eg_profile_points(pf, &pts, &n, y->err, y->errlen);

	for (size_t i = 0; !rc && i < n; i++) {
		const eg_sweep_t *s = &pf->sweeps[pts[i].sweep];
		eg_workload_t w;

		if (eg_bench_point_workload(pf, &pts[i], &w, e, sizeof(e)) <
		    0) {
			rc = eg_yaml_err_at(y, s->line,
					    "sweep \"%s\": point %s: %s",
					    s->name, pts[i].id, e);
			break;
		}
		eg_workload_fini(&w);
		for (size_t j = 0; !rc && j < i; j++)
			if (!strcmp(pts[i].id, pts[j].id))
				rc = eg_yaml_err_at(
				    y, s->line,
				    "sweep \"%s\": point id \"%s\" repeats",
				    s->name, pts[i].id);
	}
	free(pts);
	return rc;
}

/* The defaults every profile starts from; name is its path. */
static int eg__init(eg_profile_t *pf, const char *name)
{
	eg_workload_t w;

	memset(pf, 0, sizeof(*pf));
	if (!(pf->path = strdup(name)))
		return EG_ENOMEM;
	eg_workload_init(&w);
	pf->timeout_s = 60;
	pf->warmup = 3;
	pf->iters = 20;
	pf->launches = 1;
	pf->remeasure_rounds = 0;
	pf->remeasure_launches = 0; /* 0: half the launches, at least 1 */
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
	return 0;
}

static int eg__from_yaml(eg_yaml_t *y, yaml_node_t *root, void *arg)
{
	eg_profile_t *pf = arg;
	int rc = eg__top(y, root, pf);

	return rc ? rc : eg__check_points(y, pf);
}

/* The profile from text, or from the file name when text is NULL. */
static int eg__read(eg_profile_t *pf, const char *text, size_t len,
		    const char *name, char *err, size_t errlen)
{
	int rc = eg__init(pf, name);

	if (!rc)
		rc = eg_yaml_read(text, len, name, "profile", eg__from_yaml, pf,
				  err, errlen);
	if (rc)
		eg_profile_free(pf);
	return rc;
}

int eg_profile_parse(eg_profile_t *pf, const char *text, size_t len,
		     const char *name, char *err, size_t errlen)
{
	return eg__read(pf, text ? text : "", len, name, err, errlen);
}

int eg_profile_load(eg_profile_t *pf, const char *path, char *err,
		    size_t errlen)
{
	return eg__read(pf, NULL, 0, path, err, errlen);
}
