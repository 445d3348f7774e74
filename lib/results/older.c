/* Results files of an older epgate (docs/results-v1.md, "Older files"):
 * the same schema, with less in it. The reader takes the revision from
 * the context (1 where there is none) and, for such a file, derives
 * what the fields it has determine: the transport class from the
 * transport string (the writer's own mapping, eg_transport_class), the
 * versions of the old "versions" string. What cannot be derived stays
 * missing, and the gates say so (lib/gate/rules.c, rule_regress.c). */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/nccl.h" /* eg_transport_class */
#include "results_int.h"

int eg_results_older(const eg_results_t *r)
{
	const char *build =
	    r ? json_string_value(json_object_get(r->context, "build")) : NULL;

	/* an epgate's own measurement says so in its build ("epgate 0.1.0
	 * (6c67c4e)"); a file written by hand or a test is none */
	return r && !r->recorded && r->revision &&
	       r->revision < EG_RESULTS_REVISION && build &&
	       !strncmp(build, "epgate", 6);
}

/* The evidence keys revision 2 added: an older file cannot have them. A
 * key it could have had (transport, provider, ...) and lacks is missing,
 * not old. */
static const char *const eg__rev2_keys[] = {
    "host",	 "gpu",		  "nccl",   "libfabric", "nvshmem",
    "cuda",	 "cuda_driver",	  "driver", "lib_name",	 "lib_version",
    "lib_build", "raw_transport", NULL};

int eg_results_older_lacks(const eg_results_t *r, const char *key)
{
	if (!eg_results_older(r))
		return 0;
	for (size_t i = 0; eg__rev2_keys[i]; i++)
		if (!strcmp(eg__rev2_keys[i], key))
			return 1;
	return 0;
}

static int eg__mark(eg_results_t *r, const char *key, const char *from)
{
	if (!r->derived && !(r->derived = json_object()))
		return EG_ENOMEM;
	return json_object_set_new(r->derived, key, json_string(from))
		   ? EG_ENOMEM
		   : EG_OK;
}

/* Each " | "-joined value of the transport mapped to its class. */
static int eg__class(eg_point_t *p, const char *tr, eg_results_t *r)
{
	json_t *nodes = json_object_get(p->axes, "nodes");
	int cross = json_is_number(nodes) && json_number_value(nodes) > 1;
	char one[256], cls[256] = "", pad[300];

	for (const char *s = tr; *s;) {
		size_t n = strcspn(s, "|");
		const char *c;

		snprintf(one, sizeof(one), "%.*s", (int)n, s);
		for (size_t k = strlen(one); k && one[k - 1] == ' ';)
			one[--k] = '\0';
		c = eg_transport_class(one + strspn(one, " "), cross);
		snprintf(pad, sizeof(pad), " | %s | ", cls);
		snprintf(one, sizeof(one), " | %s | ", c);
		if (!strstr(pad, one))
			snprintf(cls + strlen(cls), sizeof(cls) - strlen(cls),
				 "%s%s", cls[0] ? " | " : "", c);
		s += n + (s[n] == '|');
	}
	if (json_object_set_new(p->evidence, "transport_class",
				json_string(cls)))
		return EG_ENOMEM;
	return eg__mark(r, "transport_class", "transport");
}

/* "NCCL 2.28.3, CUDA runtime 13.0, driver API 13.0", "libfabric 1.17" */
static int eg__versions(eg_point_t *p, const char *v, eg_results_t *r)
{
	static const struct {
		const char *word, *key;
	} map[] = {{"NCCL ", "nccl"},
		   {"CUDA runtime ", "cuda"},
		   {"driver API ", "cuda_driver"},
		   {"libfabric ", "libfabric"}};
	int rc = EG_OK;

	for (size_t i = 0; !rc && i < sizeof(map) / sizeof(map[0]); i++) {
		const char *at = strstr(v, map[i].word);
		char ver[32];

		if (!at || json_object_get(p->evidence, map[i].key))
			continue;
		at += strlen(map[i].word);
		snprintf(ver, sizeof(ver), "%.*s", (int)strcspn(at, ", |"), at);
		if (!ver[0])
			continue;
		rc = json_object_set_new(p->evidence, map[i].key,
					 json_string(ver))
			 ? EG_ENOMEM
			 : eg__mark(r, map[i].key, "versions");
	}
	return rc;
}

int eg__results_older_read(eg_results_t *r)
{
	json_t *rev = json_object_get(r->context, "revision");
	int rc = EG_OK;

	r->revision = rev ? (unsigned)json_integer_value(rev) : 1;
	if (r->revision >= EG_RESULTS_REVISION)
		return EG_OK;
	for (size_t i = 0; !rc && i < r->n_points; i++) {
		eg_point_t *p = &r->points[i];
		const char *tr, *v;

		if (!p->evidence)
			continue;
		tr = json_string_value(
		    json_object_get(p->evidence, "transport"));
		v = json_string_value(json_object_get(p->evidence, "versions"));
		if (tr && !json_object_get(p->evidence, "transport_class"))
			rc = eg__class(p, tr, r);
		if (!rc && v)
			rc = eg__versions(p, v, r);
	}
	return rc;
}
