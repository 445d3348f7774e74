/* This process's evidence (include/epgate/evidence.h): what a suite that
 * writes no results file (check, L2) records of where it ran, in the
 * shape of eg_results_evidence, for its JUnit properties and summary.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/evidence.h"
#include "epgate/plugin_info.h"

json_t *eg_process_evidence(const char *engine)
{
	json_t *o = json_object(), *env = json_object();
	eg_plugin_info_t pi;
	eg_loaded_t l;
	int bad = !o || !env;

	eg_loaded_read(&l);
	if (!bad)
		bad = eg_loaded_to_json(&l, o) < 0 || eg_env_knobs(env) < 0;
	if (!bad && eg_plugin_info_loaded(engine, &pi) == EG_OK)
		bad = eg_plugin_info_evidence(&pi, o) < 0;
	if (!bad && json_object_size(env))
		bad = json_object_set(o, "env", env) < 0;
	json_decref(env);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void eg_suite_junit_evidence(eg_junit_t *j, const char *engine)
{
	json_t *ev = eg_process_evidence(engine);

	if (ev)
		eg_junit_evidence(j, ev);
	json_decref(ev);
}

int eg_summary_evidence(const char *path, const json_t *ev)
{
	char err[4400], *text = NULL;
	size_t len;
	json_t *j;
	int rc;

	if (!ev)
		return EG_OK;
	if ((rc = eg_file_read(path, (size_t)1 << 26, &text, &len, err,
			       sizeof(err))) < 0)
		goto out;
	j = json_loads(text, 0, NULL);
	free(text);
	text = NULL;
	rc = EG_EJSON;
	if (j && !json_object_set_new(j, "evidence", json_deep_copy(ev)))
		text = json_dumps(j, JSON_INDENT(2));
	json_decref(j);
	snprintf(err, sizeof(err), "%s: cannot add the evidence", path);
	if (text)
		rc = eg_file_write_atomic_buf(path, text, strlen(text), err,
					      sizeof(err));
out:
	free(text);
	if (rc < 0)
		fprintf(stderr, "epgate: %s\n", err);
	return rc < 0 ? rc : EG_OK;
}
