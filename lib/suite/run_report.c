/* epgate run's closing and summary.json (lib/suite/run_report.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "lib/suite/run_report.h"
#include "lib/suite/suite.h"

int eg_run_worse(int a, int b)
{
	if (a == EG_EXIT_HARD || b == EG_EXIT_HARD)
		return EG_EXIT_HARD;
	if (a == EG_EXIT_FAIL || b == EG_EXIT_FAIL)
		return EG_EXIT_FAIL;
	if (a == EG_EXIT_PASS || b == EG_EXIT_PASS)
		return EG_EXIT_PASS;
	return EG_EXIT_SKIP;
}

int eg_run_exit(const eg_stage_t *st, size_t n)
{
	int rc = EG_EXIT_SKIP;

	for (size_t i = 0; i < n; i++)
		rc = eg_run_worse(rc, st[i].rc);
	return rc;
}

/* ---- the run folder's files, by stage ---------------------------------- */

/* The stage whose longest prefix starts name; n (none) when no stage's
 * does. */
static size_t eg__owner(const eg_stage_t *st, size_t n, const char *name)
{
	size_t best = n, len = 0;

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < EG_STAGE_PREFIXES && st[i].prefixes[k];
		     k++) {
			size_t l = strlen(st[i].prefixes[k]);

			if (l > len && !strncmp(name, st[i].prefixes[k], l)) {
				best = i;
				len = l;
			}
		}
	return best;
}

static int eg__regular(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Every file of the run folder, sorted, summary.json among them (being
 * written): a JSON array of names. */
static json_t *eg__files(const char *run)
{
	struct dirent **list = NULL;
	json_t *a = json_array();
	int n = scandir(run, &list, eg__regular, alphasort), seen = 0;

	for (int i = 0; i < n; i++) {
		char path[4400];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", run, list[i]->d_name);
		seen |= !strcmp(list[i]->d_name, "summary.json");
		if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
			json_array_append_new(a, json_string(list[i]->d_name));
		free(list[i]);
	}
	free(list);
	if (!seen)
		json_array_append_new(a, json_string("summary.json"));
	return a;
}

/* The files of stage i (n: those of no stage). */
static json_t *eg__stage_files(const eg_stage_t *st, size_t n, size_t i,
			       const json_t *all)
{
	json_t *a = json_array(), *v;
	size_t k;

	json_array_foreach((json_t *)all, k, v)
	{
		if (eg__owner(st, n, json_string_value(v)) == i)
			json_array_append(a, v);
	}
	return a;
}

/* ---- summary.json ---------------------------------------------------------
 */

static const char *eg__status(const eg_stage_t *s)
{
	if (!s->ran)
		return s->rc == EG_EXIT_HARD ? "error" : "skip";
	switch (s->rc) {
	case EG_EXIT_PASS:
		return "pass";
	case EG_EXIT_FAIL:
		return "fail";
	case EG_EXIT_SKIP:
		return "skip";
	default:
		return "error";
	}
}

static json_t *eg__stage_json(const eg_stage_t *st, size_t n, size_t i,
			      const json_t *all)
{
	const eg_stage_t *s = &st[i];
	json_t *o = json_pack(
	    "{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:s}", "name",
	    s->name, "label", s->label, "status", eg__status(s), "exit", s->rc,
	    "passed", (int)s->t.passed, "failed", (int)s->t.failed, "errors",
	    (int)s->t.errors, "skipped", (int)s->t.skipped, "inconclusive",
	    (int)s->t.inconclusive, "seconds", s->seconds < 0 ? 0 : s->seconds,
	    "detail", s->detail);

	if (!o)
		return NULL;
	/* of the errors: the cases whose process ended (CRASH) */
	json_object_set_new(o, "crashed", json_integer((int)s->t.crashed));
	if (s->why[0])
		json_object_set_new(o, "reason", json_string(s->why));
	json_object_set_new(o, "files", eg__stage_files(st, n, i, all));
	json_object_set(o, "failures",
			s->failures ? s->failures : json_array());
	if (!s->failures)
		json_decref(json_object_get(o, "failures"));
	return o;
}

/* The totals over the stages. */
static eg_tally_t eg__sum(const eg_stage_t *st, size_t n)
{
	eg_tally_t t = {0};

	for (size_t i = 0; i < n; i++) {
		t.passed += st[i].t.passed;
		t.failed += st[i].t.failed;
		t.errors += st[i].t.errors;
		t.skipped += st[i].t.skipped;
		t.inconclusive += st[i].t.inconclusive;
		t.crashed += st[i].t.crashed;
	}
	return t;
}

/* The legacy per-suite objects ("l1", "l2"): counts and reports. */
static void eg__legacy(json_t *j, const eg_stage_t *s, const char *run)
{
	char tap[4400], junit[4400];
	struct stat sb;

	snprintf(tap, sizeof(tap), "%s/%s.tap", run, s->name);
	snprintf(junit, sizeof(junit), "%s/%s.junit.xml", run, s->name);
	/* epgate run's reports only (check's are named check*.junit.xml) */
	if (!s->ran || stat(junit, &sb) < 0)
		return;
	json_object_set_new(
	    j, s->name,
	    json_pack(
		"{s:i, s:i, s:i, s:i, s:s, s:s}", "results",
		(int)(s->t.passed + s->t.failed + s->t.errors + s->t.skipped),
		"passed", (int)s->t.passed, "failed", (int)s->t.failed,
		"errors", (int)s->t.errors, "tap", tap, "junit", junit));
}

static json_t *eg__summary_json(const char *run, const char *command,
				const char *profile, const char *engine,
				const eg_stage_t *st, size_t n, int done,
				int rc)
{
	json_t *all = eg__files(run), *stages = json_array();
	eg_tally_t t = eg__sum(st, n);
	json_t *j = json_pack(
	    "{s:s, s:s?, s:s, s:o, s:o, s:{s:i, s:i, s:i, s:i, s:i}}", "schema",
	    "epgate/run-summary/v1", "profile", profile, "run_dir", run, "exit",
	    done ? json_integer(rc) : json_null(), "verdict",
	    json_string(done ? eg_exit_word(rc) : "running"), "totals",
	    "passed", (int)t.passed, "failed", (int)t.failed, "errors",
	    (int)t.errors, "skipped", (int)t.skipped, "inconclusive",
	    (int)t.inconclusive);

	json_object_set_new(json_object_get(j, "totals"), "crashed",
			    json_integer((int)t.crashed));
	if (j && command)
		json_object_set_new(j, "command", json_string(command));
	if (j && engine)
		json_object_set_new(j, "engine_l1", json_string(engine));
	for (size_t i = 0; j && i < n; i++)
		json_array_append_new(stages, eg__stage_json(st, n, i, all));
	if (j) {
		json_object_set_new(j, "stages", stages);
		json_object_set_new(j, "files", all);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(st[i].name, "l1") ||
			    !strcmp(st[i].name, "l2"))
				eg__legacy(j, &st[i], run);
	} else {
		json_decref(stages);
		json_decref(all);
	}
	return j;
}

int eg_run_summary_cmd(const char *path, const char *run, const char *command,
		       const char *profile, const char *engine,
		       const eg_stage_t *st, size_t n, int done, int rc)
{
	char err[4400], *text = NULL;
	json_t *j =
	    eg__summary_json(run, command, profile, engine, st, n, done, rc);
	int bad;

	text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	json_decref(j);
	snprintf(err, sizeof(err), "%s: out of memory", path);
	bad = !text || eg_file_write_atomic_buf(path, text, strlen(text), err,
						sizeof(err)) < 0;
	free(text);
	if (bad) {
		fprintf(stderr, "epgate: %s\n", err);
		return EG_EIO;
	}
	return EG_OK;
}

int eg_run_summary_of(const char *path, const char *run, const char *profile,
		      const char *engine, const eg_stage_t *st, size_t n,
		      int done, int rc)
{
	return eg_run_summary_cmd(path, run, NULL, profile, engine, st, n, done,
				  rc);
}

int eg_run_summary(const char *path, const char *run, const char *engine,
		   const eg_stage_t *st, size_t n, int done, int rc)
{
	return eg_run_summary_of(path, run, "local", engine, st, n, done, rc);
}

/* ---- the closing ------------------------------------------------------ */

/* A count, or "-" for a stage that did not run. */
static void eg__count(FILE *f, const eg_stage_t *s, unsigned v)
{
	if (s->ran)
		fprintf(f, " %7u", v);
	else
		fprintf(f, " %7s", "-");
}

static void eg__table(FILE *f, const eg_stage_t *st, size_t n)
{
	fprintf(f, "  %-6s %-7s %7s %7s %7s %7s %9s  %s\n", "stage", "verdict",
		"passed", "failed", "crashed", "skipped", "time", "what");
	for (size_t i = 0; i < n; i++) {
		const eg_stage_t *s = &st[i];

		fprintf(f, "  %-6s %-7s", s->label,
			s->ran || s->rc == EG_EXIT_HARD ? eg_exit_word(s->rc)
							: "SKIP");
		eg__count(f, s, s->t.passed);
		eg__count(f, s, s->t.failed + s->t.errors - s->t.crashed);
		eg__count(f, s, s->t.crashed);
		eg__count(f, s, s->t.skipped + s->t.inconclusive);
		if (s->ran && s->seconds >= 0)
			fprintf(f, " %7.1f s", s->seconds);
		else
			fprintf(f, " %9s", "-");
		fprintf(f, "  %s%s%s\n", s->detail,
			s->detail[0] && s->why[0] ? "; " : "", s->why);
	}
}

/* Each failing stage's first failures, with their repro lines. */
static void eg__failures(FILE *f, const eg_stage_t *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k, shown = 0, all = st[i].t.failed + st[i].t.errors;
		json_t *v;

		json_array_foreach(st[i].failures, k, v)
		{
			if (shown == EG_SAY_FAILURES)
				break;
			const char *kind =
			    json_string_value(json_object_get(v, "kind"));

			fprintf(
			    f, "  %s %s: %s: %s\n",
			    !strcmp(kind, "error")   ? "ERROR"
			    : !strcmp(kind, "crash") ? "CRASH"
						     : "FAIL",
			    st[i].label,
			    json_string_value(json_object_get(v, "case")),
			    json_string_value(json_object_get(v, "message")));
			if (json_object_get(v, "repro"))
				fprintf(f, "    repro: %s\n",
					json_string_value(
					    json_object_get(v, "repro")));
			shown++;
		}
		if (all > shown && shown)
			fprintf(f,
				"  ... %zu more %s failure(s) in its "
				"reports\n",
				all - shown, st[i].label);
	}
}

/* The files of stage i on one line: reports by name, logs and results
 * lines as "PREFIX*.EXT (N)". */
static void eg__stage_line(FILE *f, const char *label, const json_t *files)
{
	static const char *const bulk[] = {".log", ".jsonl", ".spool", NULL};
	size_t k;
	json_t *v;

	if (!json_array_size(files))
		return;
	fprintf(f, "  %-6s", label);
	json_array_foreach((json_t *)files, k, v)
	{
		const char *s = json_string_value(v);
		int b = 0;

		for (int e = 0; bulk[e]; e++) {
			size_t l = strlen(s), el = strlen(bulk[e]);

			b |= l > el && !strcmp(s + l - el, bulk[e]);
		}
		if (!b)
			fprintf(f, " %s", s);
	}
	for (int e = 0; bulk[e]; e++) {
		unsigned cnt = 0;
		char first[256] = "";
		size_t common = 0; /* the names' common start */

		json_array_foreach((json_t *)files, k, v)
		{
			const char *s = json_string_value(v);
			size_t l = strlen(s), el = strlen(bulk[e]);

			if (l <= el || strcmp(s + l - el, bulk[e]))
				continue;
			if (!cnt++) {
				snprintf(first, sizeof(first), "%s", s);
				common = strlen(first);
			}
			while (common && strncmp(first, s, common))
				common--;
		}
		if (cnt == 1)
			fprintf(f, " %s", first);
		else if (cnt)
			fprintf(f, " %.*s*%s (%u)", (int)common, first, bulk[e],
				cnt);
	}
	fputc('\n', f);
}

void eg_run_closing(FILE *f, const char *run, const eg_stage_t *st, size_t n,
		    int rc)
{
	json_t *all = eg__files(run);

	fprintf(f, "\nepgate run: %s\n", eg_exit_word(rc));
	eg__table(f, st, n);
	eg__failures(f, st, n);
	fprintf(f, "reports: %s/\n", run);
	for (size_t i = 0; i <= n; i++) {
		json_t *mine = eg__stage_files(st, n, i, all);

		eg__stage_line(f, i < n ? st[i].label : "", mine);
		json_decref(mine);
	}
	json_decref(all);
	eg_run_last_line(f, st, n, rc);
}

void eg_run_last_line(FILE *f, const eg_stage_t *st, size_t n, int rc)
{
	eg_tally_t t = eg__sum(st, n);

	/* a case counts once, as check's last line and the page count it:
	 * failed (FAIL, ERROR) or crashed (CRASH) */
	fprintf(f, "%s: %u passed, %u failed", eg_exit_word(rc), t.passed,
		t.failed + t.errors - t.crashed);
	if (t.crashed)
		fprintf(f, ", %u crashed", t.crashed);
	fprintf(f, ", %u skipped", t.skipped);
	if (t.inconclusive)
		fprintf(f, ", %u inconclusive", t.inconclusive);
	fprintf(f, " (exit %d)\n", rc);
	fflush(f);
}
