/* Profiles (docs/profiles.md): the axes, the points a profile's sweeps
 * make and their workloads.  The parser is profile_parse.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/profile.h"
#include "epgate/yaml_reader.h"

const char *const eg_profile_axes[] = {
    "concurrency", "world", "nodes", "experts", "num_comms",
    "hidden",	   "topk",  "dtype", "routing", NULL,
};

int eg_profile_axis_is_string(eg_axis_t a)
{
	return a == EG_AXIS_DTYPE || a == EG_AXIS_ROUTING;
}

void eg_profile_free(eg_profile_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_sweeps; i++) {
		eg_sweep_t *s = &p->sweeps[i];

		eg_yaml_strs_free(s->arms, s->n_arms);
		for (size_t j = 0; j < s->n_axes; j++)
			free(s->axes[j].values);
		EG_FREE(s->axes, s->name);
	}
	eg_yaml_strs_free(p->env_keys, p->n_env);
	eg_yaml_strs_free(p->env_vals, p->n_env);
	eg_yaml_strs_free(p->arm_names, p->n_arm_names);
	eg_yaml_strs_free(p->arm_specs, p->n_arm_names);
	EG_FREE(p->sweeps, p->python, p->path, p->name, p->description,
		p->transport, p->provider, p->gates, p->base_data, p->base_mask,
		p->base_seed);
	memset(p, 0, sizeof(*p));
}

/* "sweep/arm/axis=value,..." for the swept axes of point pt. */
static void eg__point_id(const eg_sweep_t *s, eg_bench_point_t *pt)
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

void eg_bench_point_set_arm(const eg_profile_t *p, eg_bench_point_t *pt,
			    const char *arm)
{
	pt->arm = arm;
	eg__point_id(&p->sweeps[pt->sweep], pt);
}

const char *eg_profile_arm_spec(const eg_profile_t *p, const char *arm)
{
	for (size_t i = 0; arm && i < p->n_arm_names; i++)
		if (!strcmp(p->arm_names[i], arm))
			return p->arm_specs[i];
	return NULL;
}

#define EG__COMMS_KEY "{num_comms}"

int eg_profile_arm_engine(const eg_profile_t *p, const eg_bench_point_t *pt,
			  char *buf, size_t len)
{
	const char *inner = pt->arm, *spec, *k;
	size_t pre = 0, n;
	double f, t;

	/* a planted slowdown of a named arm keeps its prefix */
	if (!strncmp(pt->arm, EG_SLOW_PREFIX, strlen(EG_SLOW_PREFIX)) &&
	    eg_slow_parse(pt->arm, &f, &t, &inner) == 0)
		pre = (size_t)(inner - pt->arm);
	if (!(spec = eg_profile_arm_spec(p, inner)))
		spec = inner;
	n = (size_t)snprintf(buf, len, "%.*s", (int)pre, pt->arm);
	while (n < len && (k = strstr(spec, EG__COMMS_KEY))) {
		n += (size_t)snprintf(buf + n, len - n, "%.*s%u",
				      (int)(k - spec), spec,
				      pt->v[EG_AXIS_NUM_COMMS].num);
		spec = k + strlen(EG__COMMS_KEY);
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s", spec);
	return n < len ? EG_OK : EG_ERANGE;
}

const char *eg_profile_python(const eg_profile_t *p, char *buf, size_t len)
{
	struct stat st;

	if (!p->python)
		return NULL;
	if (stat(p->python, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* a venv: its interpreter, whose pyvenv.cfg brings its
		 * packages (docs/python.md) */
		snprintf(buf, len, "%s/bin/python3", p->python);
		if (access(buf, X_OK) == 0)
			return buf;
		snprintf(buf, len, "%s/bin/python", p->python);
		return buf;
	}
	snprintf(buf, len, "%s", p->python);
	return buf;
}

int eg_bench_point_same_shape(const eg_bench_point_t *a,
			      const eg_bench_point_t *b)
{
	if (a->sweep != b->sweep)
		return 0;
	for (int i = 0; i < EG_AXIS_COUNT; i++)
		if (a->v[i].num != b->v[i].num ||
		    strcmp(a->v[i].str, b->v[i].str))
			return 0;
	return 1;
}

int eg_bench_point_workload(const eg_profile_t *p, const eg_bench_point_t *pt,
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

int eg_profile_points(const eg_profile_t *p, eg_bench_point_t **pts, size_t *n,
		      char *err, size_t errlen)
{
	size_t cap = 0, cnt = 0;
	eg_bench_point_t *out = NULL;

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
				eg_bench_point_t *pt;
				size_t rest = c;

				if (cnt == cap) {
					size_t nc = cap ? 2 * cap : 32;
					eg_bench_point_t *t =
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
				pt->launches = s->launches;
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
