/* Results files, schema epgate/results/v1: the reader, the validation
 * shared with the writer, and the tables of known metrics and axes.
 * Validation is strict (unknown keys are errors) so that a typo in a
 * hand-written recorded campaign cannot silently drop a figure. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/mem.h"
#include "results_int.h"

const eg_metric_info_t eg_known_metrics[] = {
    {"dispatch_us", "us", EG_BETTER_LOWER, "dispatch time, slowest rank"},
    {"combine_us", "us", EG_BETTER_LOWER, "combine time, slowest rank"},
    {"step_us", "us", EG_BETTER_LOWER,
     "dispatch + expert stage + combine, slowest rank"},
    {"so_bytes", "B", EG_BETTER_NONE, "dispatch bytes to other nodes, per GPU"},
    {"su_bytes", "B", EG_BETTER_NONE,
     "dispatch bytes to other ranks of the same node, per GPU"},
    {"so_gbps", "GB/s", EG_BETTER_HIGHER, "so_bytes / dispatch time, per GPU"},
    {"su_gbps", "GB/s", EG_BETTER_HIGHER, "su_bytes / dispatch time, per GPU"},
    {"transport_so_gbps", "GB/s", EG_BETTER_HIGHER,
     "cross-node bytes / time through the transport alone, per GPU"},
    {"ops_posted", "ops", EG_BETTER_NONE, "transport operations posted"},
    {"post_rate", "ops/s", EG_BETTER_HIGHER,
     "operations posted per second per progress thread"},
    {"tok_s", "tokens/s", EG_BETTER_HIGHER, "aggregate tokens per second"},
    {"model_bw_us", "us", EG_BETTER_NONE,
     "model: step time if bandwidth-bound"},
    {"model_issue_us", "us", EG_BETTER_NONE, "model: step time if issue-bound"},
    {"model_frac", "1", EG_BETTER_NONE,
     "model: larger model time / measured dispatch + combine time"},
    {"raw_gbps", "GB/s", EG_BETTER_HIGHER,
     "transport alone: bytes to other ranks per second, per rank"},
    {"raw_post_rate", "ops/s", EG_BETTER_HIGHER,
     "transport alone: operations per second, busiest endpoint"},
    {NULL, NULL, EG_BETTER_NONE, NULL},
};

const char *const eg_known_axes[] = {
    "concurrency", "tokens", "world", "experts", "num_comms",
    "nodes",	   "hidden", "topk",  "dtype",	 "routing",
    "phase",	   "shape",  "isl",   "osl",	 NULL,
};

const char *const eg_known_arms[] = {"a2a", "dense", NULL};

const eg_metric_info_t *eg_metric_info(const char *name)
{
	for (const eg_metric_info_t *m = eg_known_metrics; m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static int eg__in_list(const char *const *l, const char *name)
{
	for (; *l; l++)
		if (!strcmp(*l, name))
			return 1;
	return 0;
}

int eg_axis_known(const char *name)
{
	return eg__in_list(eg_known_axes, name);
}

int eg_arm_known(const char *name)
{
	return eg__in_list(eg_known_arms, name);
}

void eg__results_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int eg__results_rbad(eg__rerr_t *e, const char *jpath, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e->err && e->len)
		snprintf(e->err, e->len, "%s: %s: %s", e->name, jpath, msg);
	return EG_EPARSE;
}

uint64_t eg__results_seed(const char *id, const char *metric)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (const char *s = id; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ '/') * 0x100000001b3ull;
	for (const char *s = metric; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int eg_results_name_ok(const char *s)
{
	if (!islower((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int eg__results_keys_allowed(json_t *o, const char *const *allowed,
			     const char *jpath, eg__rerr_t *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		if (!eg__in_list(allowed, k)) {
			char p[256];

			eg__results_fmt(p, sizeof(p), "%s%s%s", jpath,
					*jpath ? "." : "", k);
			return eg__results_rbad(e, p, "unknown key");
		}
	}
	return 0;
}

/* Non-empty string member; sets *out (borrowed). */
static int eg__str(json_t *o, const char *key, int required, const char *jpath,
		   const char **out, eg__rerr_t *e)
{
	json_t *v = json_object_get(o, key);
	char p[256];

	eg__results_fmt(p, sizeof(p), "%s%s%s", jpath, *jpath ? "." : "", key);
	*out = NULL;
	if (!v) {
		if (required)
			return eg__results_rbad(
			    e, p, "missing (a string is required)");
		return 0;
	}
	if (!json_is_string(v))
		return eg__results_rbad(e, p, "expected a string");
	if (!*json_string_value(v))
		return eg__results_rbad(e, p, "empty string");
	*out = json_string_value(v);
	return 0;
}

static int eg__str_array(json_t *a, const char *p, eg__rerr_t *e)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return eg__results_rbad(e, p, "expected an array of strings");
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v)) {
			char q[256];

			eg__results_fmt(q, sizeof(q), "%s[%zu]", p, i);
			return eg__results_rbad(e, q, "expected a string");
		}
	}
	return 0;
}

/* Object whose members are all strings. */
static int eg__str_object(json_t *o, const char *p, eg__rerr_t *e)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return eg__results_rbad(e, p, "expected an object of strings");
	json_object_foreach(o, k, v)
	{
		if (!json_is_string(v)) {
			char q[256];

			eg__results_fmt(q, sizeof(q), "%s.%s", p, k);
			return eg__results_rbad(e, q, "expected a string");
		}
	}
	return 0;
}

/* context.plan: how the campaign was measured (launches, order seed,
 * re-measurement), numbers and words. */
static int eg__plan(json_t *o, eg__rerr_t *e)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return eg__results_rbad(e, "context.plan",
					"expected an object");
	json_object_foreach(o, k, v)
	{
		if (!json_is_number(v) && !json_is_string(v)) {
			char q[256];

			eg__results_fmt(q, sizeof(q), "context.plan.%s", k);
			return eg__results_rbad(e, q,
						"expected a number or a word");
		}
	}
	return 0;
}

int eg__results_context_check(json_t *o, eg__rerr_t *e)
{
	static const char *const strs[] = {
	    "node_list",    "driver",	"cuda",	     "nccl",
	    "libfabric",    "provider", "transport", "build",
	    "slurm_job_id", "profile",	"created",   "source",
	    "notes",	    "machine",	"planted",   NULL};
	static const char *const allowed[] = {
	    "hosts",	"gpus",	     "env",    "node_list",
	    "driver",	"cuda",	     "nccl",   "libfabric",
	    "provider", "transport", "build",  "slurm_job_id",
	    "profile",	"created",   "source", "notes",
	    "machine",	"planted",   "plan",   "ab",
	    "revision", NULL};
	const char *s;
	json_t *v;
	int rc;

	if (!json_is_object(o))
		return eg__results_rbad(e, "context", "expected an object");
	rc = eg__results_keys_allowed(o, allowed, "context", e);
	if (rc)
		return rc;
	for (const char *const *k = strs; *k; k++) {
		rc = eg__str(o, *k, 0, "context", &s, e);
		if (rc)
			return rc;
	}
	if ((v = json_object_get(o, "hosts")) &&
	    (rc = eg__str_array(v, "context.hosts", e)))
		return rc;
	if ((v = json_object_get(o, "gpus")) &&
	    (rc = eg__str_array(v, "context.gpus", e)))
		return rc;
	if ((v = json_object_get(o, "env")) &&
	    (rc = eg__str_object(v, "context.env", e)))
		return rc;
	if ((v = json_object_get(o, "ab")) &&
	    (rc = eg__str_object(v, "context.ab", e)))
		return rc;
	if ((v = json_object_get(o, "plan")) && (rc = eg__plan(v, e)))
		return rc;
	if ((v = json_object_get(o, "revision")) &&
	    (!json_is_integer(v) || json_integer_value(v) < 1))
		return eg__results_rbad(e, "context.revision",
					"expected an integer >= 1");
	return 0;
}

static int eg__axes(json_t *o, const char *p, eg__rerr_t *e)
{
	const char *k;
	json_t *v;
	char q[320];

	if (!json_is_object(o))
		return eg__results_rbad(e, p, "expected an object");
	json_object_foreach(o, k, v)
	{
		eg__results_fmt(q, sizeof(q), "%s.%s", p, k);
		if (!eg_results_name_ok(k))
			return eg__results_rbad(
			    e, q, "axis names are [a-z][a-z0-9_]*");
		if (!json_is_number(v) && !json_is_string(v))
			return eg__results_rbad(
			    e, q, "expected a number or a string");
	}
	return 0;
}

static char *eg__dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int eg__results_point_from_json(json_t *o, const char *jpath, eg_point_t *p,
				eg__rerr_t *e)
{
	static const char *const allowed[] = {
	    "id",	"suite",  "arm",	"axes", "metrics",
	    "evidence", "passes", "remeasured", NULL};
	const char *id, *suite, *arm, *k;
	json_t *axes, *ms, *ev, *v;
	char q[320];
	size_t i = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(o))
		return eg__results_rbad(e, jpath, "expected an object");
	if ((rc = eg__results_keys_allowed(o, allowed, jpath, e)) ||
	    (rc = eg__str(o, "id", 1, jpath, &id, e)) ||
	    (rc = eg__str(o, "suite", 1, jpath, &suite, e)) ||
	    (rc = eg__str(o, "arm", 1, jpath, &arm, e)))
		return rc;
	eg__results_fmt(q, sizeof(q), "%s.axes", jpath);
	axes = json_object_get(o, "axes");
	if (!axes)
		return eg__results_rbad(e, q,
					"missing (an object is required)");
	if ((rc = eg__axes(axes, q, e)))
		return rc;
	eg__results_fmt(q, sizeof(q), "%s.evidence", jpath);
	ev = json_object_get(o, "evidence");
	if (ev && (rc = eg__str_object(ev, q, e)))
		return rc;
	eg__results_fmt(q, sizeof(q), "%s.metrics", jpath);
	ms = json_object_get(o, "metrics");
	if (!ms)
		return eg__results_rbad(e, q,
					"missing (an object is required)");
	if (!json_is_object(ms) || !json_object_size(ms))
		return eg__results_rbad(e, q, "expected a non-empty object");
	p->id = eg__dup(id);
	p->suite = eg__dup(suite);
	p->arm = eg__dup(arm);
	p->axes = json_deep_copy(axes);
	p->evidence = ev ? json_deep_copy(ev) : NULL;
	p->metrics = calloc(json_object_size(ms), sizeof(*p->metrics));
	rc = EG_ENOMEM;
	if (!p->id || !p->suite || !p->arm || !p->axes ||
	    (ev && !p->evidence) || !p->metrics)
		goto fail;
	json_object_foreach(ms, k, v)
	{
		eg_metric_t *m = &p->metrics[i++];

		p->n_metrics = i;
		eg__results_fmt(q, sizeof(q), "%s.metrics.%s", jpath, k);
		if (!eg_results_name_ok(k)) {
			rc = eg__results_rbad(
			    e, q, "metric names are [a-z][a-z0-9_]*");
			goto fail;
		}
		if (!(m->name = strdup(k))) {
			rc = EG_ENOMEM;
			goto fail;
		}
		if ((rc = eg__metric(v, q, id, m, e)))
			goto fail;
	}
	if ((rc = eg__results_point_launches(o, jpath, p, e)))
		goto fail;
	return 0;
fail:
	eg_point_fini(p);
	return rc;
}

const eg_metric_t *eg_point_metric(const eg_point_t *p, const char *name)
{
	for (size_t i = 0; i < p->n_metrics; i++)
		if (!strcmp(p->metrics[i].name, name))
			return &p->metrics[i];
	return NULL;
}

void eg_results_free(eg_results_t *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_points; i++)
		eg_point_fini(&r->points[i]);
	EG_FREE(r->points, r->path);
	json_decref(r->context);
	json_decref(r->derived);
	memset(r, 0, sizeof(*r));
}

static int eg__schema(json_t *root, eg__rerr_t *e)
{
	json_t *v = json_object_get(root, "schema");
	const char *s;

	if (!v)
		return eg__results_rbad(e, "schema",
					"missing: not an epgate results file");
	if (!json_is_string(v))
		return eg__results_rbad(e, "schema", "expected a string");
	s = json_string_value(v);
	if (!strcmp(s, EG_RESULTS_SCHEMA))
		return 0;
	if (!strncmp(s, "epgate/results/", 15))
		return eg__results_rbad(
		    e, "schema",
		    "unsupported version \"%s\" (this epgate "
		    "reads %s)",
		    s, EG_RESULTS_SCHEMA);
	return eg__results_rbad(e, "schema", "\"%s\" is not %s", s,
				EG_RESULTS_SCHEMA);
}

/* Validates a parsed document into r (zeroed first). */
static int eg__results_from_json(eg_results_t *r, json_t *root, eg__rerr_t *e)
{
	static const char *const allowed[] = {"schema", "recorded", "context",
					      "points", NULL};
	json_t *v, *pts, *ids = NULL;
	size_t i;
	int rc;

	if (!json_is_object(root))
		return eg__results_rbad(e, "(top level)", "expected an object");
	if ((rc = eg__schema(root, e)) ||
	    (rc = eg__results_keys_allowed(root, allowed, "", e)))
		return rc;
	v = json_object_get(root, "recorded");
	if (!v)
		return eg__results_rbad(e, "recorded",
					"missing (true or false)");
	if (!json_is_boolean(v))
		return eg__results_rbad(e, "recorded",
					"expected true or false");
	r->recorded = json_is_true(v);
	v = json_object_get(root, "context");
	if (!v)
		return eg__results_rbad(e, "context", "missing (an object)");
	if ((rc = eg__results_context_check(v, e)))
		return rc;
	r->context = json_incref(v);
	pts = json_object_get(root, "points");
	if (!pts)
		return eg__results_rbad(e, "points", "missing (an array)");
	if (!json_is_array(pts))
		return eg__results_rbad(e, "points", "expected an array");
	r->points = calloc(json_array_size(pts) + 1, sizeof(*r->points));
	ids = json_object();
	if (!r->points || !ids) {
		rc = EG_ENOMEM;
		goto out;
	}
	json_array_foreach(pts, i, v)
	{
		char q[64];
		eg_point_t *p = &r->points[i];

		eg__results_fmt(q, sizeof(q), "points[%zu]", i);
		if ((rc = eg__results_point_from_json(v, q, p, e)))
			goto out;
		r->n_points = i + 1;
		if (json_object_get(ids, p->id)) {
			eg__results_fmt(q, sizeof(q), "points[%zu].id", i);
			rc = eg__results_rbad(
			    e, q,
			    "\"%s\" repeats points[%" JSON_INTEGER_FORMAT "]",
			    p->id,
			    json_integer_value(json_object_get(ids, p->id)));
			goto out;
		}
		json_object_set_new(ids, p->id, json_integer((json_int_t)i));
	}
	rc = eg__results_older_read(r);
out:
	json_decref(ids);
	return rc;
}

int eg_results_parse(eg_results_t *r, const char *text, const char *name,
		     char *err, size_t errlen)
{
	eg__rerr_t e = {name, err, errlen};
	json_error_t je;
	json_t *root;
	int rc;

	memset(r, 0, sizeof(*r));
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: malformed JSON: %s", name,
			 je.line, je.column, je.text);
		return EG_EPARSE;
	}
	rc = eg__results_from_json(r, root, &e);
	json_decref(root);
	if (!rc && !(r->path = strdup(name)))
		rc = EG_ENOMEM;
	if (rc)
		eg_results_free(r);
	return rc;
}

int eg_results_read(eg_results_t *r, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = eg_file_read(path, EG_RESULTS_MAX_BYTES, &text, &len, err, errlen);
	if (rc < 0)
		return rc;
	if (strlen(text) != len) {
		snprintf(err, errlen, "%s: malformed JSON: a NUL byte", path);
		free(text);
		return EG_EPARSE;
	}
	rc = eg_results_parse(r, text, path, err, errlen);
	free(text);
	return rc;
}

int eg_results_read_all(char *const *paths, size_t n, eg_results_t **out,
			size_t *nout, char *err, size_t errlen)
{
	*nout = 0;
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return EG_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = eg_results_read(&(*out)[i], paths[i], err, errlen);

		if (rc)
			return rc;
		*nout = i + 1;
	}
	return 0;
}

void eg_results_free_all(eg_results_t *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		eg_results_free(&r[i]);
	free(r);
}
