/* The evidence of results files in one object (include/epgate/
 * evidence.h): what summary.json, the JUnit properties and the HTML
 * page's header show. Every value is a key's distinct values over the
 * points and the contexts, joined as the launches join them. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/evidence.h"

const char *const eg_evidence_keys[] = {"host",
					"gpu",
					"lib_name",
					"lib_version",
					"lib_build",
					"transport",
					"transport_class",
					"provider",
					"raw_transport",
					"nccl",
					"libfabric",
					"nvshmem",
					"cuda",
					"cuda_driver",
					"driver",
					"build",
					NULL};

/* Per point only, written since the boundaries (docs/metrics.md): known
 * to the gates, not folded into a run's evidence */
static const char *const eg__point_keys[] = {
    "boundary",	    "boundary_detail",	   "window_hold_us",
    "window_short", "window_host_sync",	   "replays_verified",
    "kernels",	    "kernel_records_lost", NULL};

int eg_evidence_point_key(const char *name)
{
	for (size_t i = 0; eg__point_keys[i]; i++)
		if (!strcmp(eg__point_keys[i], name))
			return 1;
	return eg_evidence_key(name);
}

int eg_evidence_key(const char *name)
{
	for (size_t i = 0; eg_evidence_keys[i]; i++)
		if (!strcmp(eg_evidence_keys[i], name))
			return 1;
	return 0;
}

/* Where a context keeps a key, when it does: the same name, or an array
 * of them. */
static const char *eg__context_key(const char *key)
{
	if (!strcmp(key, "host") || !strcmp(key, "gpu"))
		return !strcmp(key, "host") ? "hosts" : "gpus";
	return key;
}

/* Appends each " | "-separated part of s not in vals yet. */
static int eg__add(json_t *vals, const char *s)
{
	while (s && *s) {
		size_t n = strcspn(s, "|"), k = n, i;
		const char *t = s + strspn(s, " ");
		int seen = 0;
		json_t *v;

		k -= (size_t)(t - s);
		while (k && t[k - 1] == ' ')
			k--;
		json_array_foreach(vals, i, v)
		{
			const char *u = json_string_value(v);
			seen |= strlen(u) == k && !strncmp(u, t, k);
		}
		if (k && !seen &&
		    json_array_append_new(vals, json_stringn(t, k)))
			return EG_ENOMEM;
		s += n + (s[n] == '|');
	}
	return EG_OK;
}

static int eg__add_json(json_t *vals, const json_t *v)
{
	size_t i;
	json_t *x;
	int rc = EG_OK;

	if (json_is_string(v))
		return eg__add(vals, json_string_value(v));
	json_array_foreach((json_t *)v, i, x)
	{
		if (!rc && json_is_string(x))
			rc = eg__add(vals, json_string_value(x));
	}
	return rc;
}

/* The values " | "-joined, as launches and ranks join them. */
static json_t *eg__joined(const json_t *vals)
{
	char buf[2048] = "";
	size_t i;
	json_t *v;

	json_array_foreach((json_t *)vals, i, v)
	{
		size_t at = strlen(buf);
		snprintf(buf + at, sizeof(buf) - at, "%s%s", i ? " | " : "",
			 json_string_value(v));
	}
	return json_string(buf);
}

/* One key over the files: its values joined, or NULL when none. */
static json_t *eg__key(const eg_results_t *r, size_t n, const char *key)
{
	json_t *vals = json_array(), *out = NULL;
	int rc = vals ? EG_OK : EG_ENOMEM;
	const char *ck = eg__context_key(key);

	/* the points' own first: a context's "transport" is the profile's
	 * word ("fabric"), its versions the orchestrator's */
	for (size_t f = 0; !rc && f < n; f++)
		for (size_t p = 0; !rc && p < r[f].n_points; p++)
			rc = eg__add_json(
			    vals,
			    json_object_get(r[f].points[p].evidence, key));
	for (size_t f = 0; !rc && !json_array_size(vals) && f < n; f++)
		rc = eg__add_json(vals, json_object_get(r[f].context, ck));
	if (!rc && json_array_size(vals))
		out = eg__joined(vals);
	json_decref(vals);
	return out;
}

/* into[k] with the " | "-parts of v not in it yet. */
static int eg__merge_key(json_t *into, const char *k, const json_t *v)
{
	json_t *vals = json_array();
	const char *old = json_string_value(json_object_get(into, k));
	int rc = vals ? EG_OK : EG_ENOMEM;

	if (!rc && old)
		rc = eg__add(vals, old);
	if (!rc)
		rc = eg__add_json(vals, v);
	if (!rc && json_array_size(vals) &&
	    json_object_set_new(into, k, eg__joined(vals)))
		rc = EG_ENOMEM;
	json_decref(vals);
	return rc;
}

/* The contexts' knobs: each name with its distinct values. */
static json_t *eg__env(const eg_results_t *r, size_t n)
{
	json_t *env = json_object(), *v;
	const char *k;
	int rc = env ? EG_OK : EG_ENOMEM;

	for (size_t f = 0; !rc && f < n; f++)
		json_object_foreach(json_object_get(r[f].context, "env"), k, v)
		{
			if (!rc)
				rc = eg__merge_key(env, k, v);
		}
	if (rc) {
		json_decref(env);
		return NULL;
	}
	return env;
}

json_t *eg_results_evidence(const eg_results_t *r, size_t n)
{
	json_t *o = json_object(), *env = eg__env(r, n);
	int bad = !o || !env;

	for (size_t i = 0; !bad && eg_evidence_keys[i]; i++) {
		json_t *v = eg__key(r, n, eg_evidence_keys[i]);

		if (v)
			bad |= json_object_set_new(o, eg_evidence_keys[i], v);
	}
	if (!bad && json_object_size(env))
		bad |= json_object_set(o, "env", env);
	json_decref(env);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int eg_evidence_merge(json_t *into, const json_t *from)
{
	const char *k;
	json_t *v, *env = json_object_get(into, "env");
	int rc = EG_OK;

	json_object_foreach((json_t *)from, k, v)
	{
		if (rc || !strcmp(k, "env"))
			continue;
		rc = eg__merge_key(into, k, v);
	}
	if (rc || !json_object_size(json_object_get(from, "env")))
		return rc;
	if (!env && json_object_set_new(into, "env", env = json_object()))
		return EG_ENOMEM;
	json_object_foreach(json_object_get(from, "env"), k, v)
	{
		if (!rc)
			rc = eg__merge_key(env, k, v);
	}
	return rc;
}
