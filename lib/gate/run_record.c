/* What a gate run judged, kept beside its reports (docs/reports.md, "One
 * verdict"): STEM.judged.json next to STEM.junit.xml names the gate
 * file, the results and the baseline (inside the run folder by name,
 * elsewhere by absolute path) and the verdicts, so that the page of the
 * folder judges the same files by the same gates; and, in a run folder
 * of its own, summary.json with the exit status. */
#define _XOPEN_SOURCE 700

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/evidence.h"
#include "epgate/file.h"
#include "lib/gate/gate_int.h"
#include "lib/gate/run_record.h"

static const char *eg__word(int rc)
{
	return rc == EG_EXIT_PASS   ? "PASS"
	       : rc == EG_EXIT_FAIL ? "FAIL"
	       : rc == EG_EXIT_SKIP ? "SKIP"
				    : "ERROR";
}

/* {"path": inside dir by name, else absolute, "given": as given}. */
static json_t *eg__where(const char *given, const char *dir)
{
	char abs[PATH_MAX];
	size_t n = strlen(dir);
	const char *p = given;

	if (given && realpath(given, abs)) {
		p = abs;
		if (!strncmp(abs, dir, n) && abs[n] == '/')
			p = abs + n + 1;
	}
	return json_pack("{s:s, s:s}", "path", p ? p : "-", "given",
			 given ? given : "-");
}

static json_t *eg__files(const eg_results_t *r, size_t n, const char *dir)
{
	json_t *a = json_array();

	for (size_t i = 0; a && r && i < n; i++)
		json_array_append_new(a, eg__where(r[i].path, dir));
	return a;
}

static int eg__write(const char *path, json_t *j)
{
	char err[4400], *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	int rc = text ? eg_file_write_atomic_buf(path, text, strlen(text), err,
						 sizeof(err))
		      : EG_ENOMEM;

	free(text);
	json_decref(j);
	return rc < 0 ? rc : EG_OK;
}

int eg__gate_judged(const eg__record_t *rec)
{
	const eg_gate_data_t *d = rec->o->data;
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *j = rec->junit, *slash = strrchr(j, '/');
	size_t n = strlen(j), k = strlen(".junit.xml");
	json_t *o;

	if (n <= k || strcmp(j + n - k, ".junit.xml"))
		return EG_OK; /* not a run folder's name: nothing to pair */
	snprintf(path, sizeof(path), "%.*s", slash ? (int)(slash - j) : 1,
		 slash ? j : ".");
	if (!realpath(path, dir))
		return EG_ENOENT;
	snprintf(path, sizeof(path), "%.*s.judged.json", (int)(n - k), j);
	o = json_pack("{s:s, s:o, s:o, s:o, s:b, s:b, s:{s:i, s:i, s:i, s:i, "
		      "s:i}, s:i}",
		      "schema", "epgate/gate-judged/v1", "gates",
		      eg__where(rec->o->gates, dir), "results",
		      eg__files(d->cur, d->n_cur, dir), "baseline",
		      eg__files(d->base, d->base ? d->n_base : 0, dir),
		      "history", eg_gate_data_history(d), "strict",
		      rec->o->strict, "verdicts", "pass",
		      (int)rec->count[EG_VERDICT_PASS], "fail",
		      (int)rec->count[EG_VERDICT_FAIL], "inconclusive",
		      (int)rec->count[EG_VERDICT_INCONCLUSIVE], "skip",
		      (int)rec->count[EG_VERDICT_SKIP], "error",
		      (int)rec->errors, "exit", rec->rc);
	return eg__write(path, o);
}

int eg__gate_summary(const eg__record_t *rec, const char *run,
		     const char *profile)
{
	char path[4400];
	json_t *files = json_pack("[sss]", "gate.tap", "gate.junit.xml",
				  "gate.judged.json");
	json_t *st = json_pack(
	    "{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:O, s:O}",
	    "name", "gates", "label", "gates", "status", eg__word(rec->rc),
	    "exit", rec->rc, "passed", (int)rec->count[EG_VERDICT_PASS],
	    "failed", (int)rec->count[EG_VERDICT_FAIL], "errors",
	    (int)rec->errors, "skipped", (int)rec->count[EG_VERDICT_SKIP],
	    "inconclusive", (int)rec->count[EG_VERDICT_INCONCLUSIVE], "detail",
	    rec->o->gates, "files", files, "failures", rec->failures);
	json_t *o = json_pack(
	    "{s:s, s:s, s:s, s:s, s:i, s:s, s:{s:i, s:i, s:i, s:i, s:i}, "
	    "s:[o], s:o}",
	    "schema", "epgate/run-summary/v1", "command", "gate", "profile",
	    profile, "run_dir", run, "exit", rec->rc, "verdict",
	    eg__word(rec->rc), "totals", "passed",
	    (int)rec->count[EG_VERDICT_PASS], "failed",
	    (int)rec->count[EG_VERDICT_FAIL], "errors", (int)rec->errors,
	    "skipped", (int)rec->count[EG_VERDICT_SKIP], "inconclusive",
	    (int)rec->count[EG_VERDICT_INCONCLUSIVE], "stages", st, "files",
	    json_pack("[ssss]", "gate.judged.json", "gate.junit.xml",
		      "gate.tap", "summary.json"));
	const eg_gate_data_t *d = rec->o->data;

	json_decref(files);
	/* a gate judges no test case: none crashed (the key as every run
	 * folder's summary.json has it); the evidence of what it judged */
	if (o) {
		json_object_set_new(st, "crashed", json_integer(0));
		json_object_set_new(json_object_get(o, "totals"), "crashed",
				    json_integer(0));
		if (d && d->n_cur)
			json_object_set_new(
			    o, "evidence",
			    eg_results_evidence(d->cur, d->n_cur));
	}
	snprintf(path, sizeof(path), "%s/summary.json", run);
	return eg__write(path, o);
}

const char *eg__gate_exit_word(int rc)
{
	return eg__word(rc);
}
