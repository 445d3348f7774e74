/* The batch job's report: the steps file the sbatch script writes as its
 * steps end becomes one TAP stream and one JUnit file. A step that did
 * not run, or died part-way, still accounts for everything it owed: its
 * L2 workloads appear as skips that say why, so a case never vanishes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/job_crash.h"
#include "lib/suite/job_report.h"
#include "lib/suite/suite.h"

#define EG__FIELDS 8
#define EG__TAIL   12

typedef struct eg__step {
	const char *kind, *name, *world, *exit, *secs, *results, *log, *note;
	int line;
} eg__step_t;

typedef struct eg__ctx {
	const eg_job_report_opts_t *o;
	eg_workload_list_t wl;
	eg_tap_t *tap;
	eg_junit_t *junit;
	eg_job_totals_t *t;
	const char *suite;
} eg__ctx_t;

static void eg__count(eg_job_totals_t *t, eg_status_t st)
{
	if (st == EG_STATUS_PASS)
		t->passed++;
	else if (st == EG_STATUS_SKIP)
		t->skipped++;
	else if (st == EG_STATUS_ERROR)
		t->errors++;
	else if (st == EG_STATUS_CRASH)
		t->crashed++;
	else
		t->failed++;
}

/* One result both ways: a TAP point and a JUnit case. */
static void eg__emit(eg_tap_t *tap, eg_junit_t *junit, const char *cls,
		     const char *name, const char *desc, double dt,
		     eg_status_t st, const char *msg, json_t *diag,
		     eg_job_totals_t *t)
{
	char *txt = diag ? json_dumps(diag, JSON_INDENT(2)) : NULL;

	eg_tap_point(tap, st == EG_STATUS_ERROR ? EG_STATUS_FAIL : st, desc,
		     st == EG_STATUS_SKIP || st == EG_STATUS_CRASH ? msg : NULL,
		     diag);
	eg_junit_case(junit, cls, name, dt, st, msg, txt);
	free(txt);
	eg__count(t, st);
}

/* One JSON line of l2-rank; 1 when it named a workload. */
static int eg__l2_line(const char *line, const eg_workload_list_t *wl,
		       unsigned char *seen, eg_tap_t *tap, eg_junit_t *junit,
		       const char *cls, const char *prefix, double dt,
		       eg_job_totals_t *t)
{
	json_error_t je;
	json_t *j = json_loads(line, 0, &je);
	const char *wname = json_string_value(json_object_get(j, "workload"));
	const char *st = json_string_value(json_object_get(j, "status"));
	const char *shape = json_string_value(json_object_get(j, "shape"));
	const json_t *secs = json_object_get(j, "seconds");
	char desc[512];

	if (!wname || !st) {
		json_decref(j);
		return 0;
	}
	if (json_is_number(secs)) /* the case's own time, from rank 0 */
		dt = json_number_value(secs);
	for (size_t i = 0; i < wl->n; i++)
		if (!strcmp(wl->items[i].name, wname))
			seen[i] = 1;
	snprintf(desc, sizeof(desc), "%s: %s%s%s", prefix, wname,
		 shape ? ": " : "", shape ? shape : "");
	if (!strcmp(st, "pass"))
		eg__emit(tap, junit, cls, wname, desc, dt, EG_STATUS_PASS, NULL,
			 NULL, t);
	else if (!strcmp(st, "skip")) /* the engine declined it at create */
		eg__emit(tap, junit, cls, wname, desc, dt, EG_STATUS_SKIP,
			 json_string_value(json_object_get(
			     json_object_get(j, "diag"), "engine_message")),
			 NULL, t);
	else if (!strcmp(st, "error"))
		eg__emit(tap, junit, cls, wname, desc, dt, EG_STATUS_ERROR,
			 "harness error", json_object_get(j, "diag"), t);
	else
		eg__emit(tap, junit, cls, wname, desc, dt, EG_STATUS_FAIL,
			 "mismatch", json_object_get(j, "diag"), t);
	json_decref(j);
	return 1;
}

/* The workload the job's end fell on, named with how it ended. */
static void eg__cut(eg_job_cut_t *cut, const eg_workload_list_t *wl, uint32_t W,
		    unsigned char *seen, eg_tap_t *tap, eg_junit_t *junit,
		    const char *cls, const char *prefix, eg_job_totals_t *t)
{
	size_t at;
	const eg_workload_t *w = eg_job_cut_at(cut->jc, wl, W, seen, &at);
	char repro[4800] = "", msg[700], desc[512], sum[256];
	json_t *d = NULL;
	eg_status_t st;

	if (!w)
		return;
	if (cut->repro)
		cut->repro(w, cut->arg, repro, sizeof(repro));
	st = eg_job_crash_case(cut->jc, w, repro, cut->log, cut->rc, &d, msg,
			       sizeof(msg));
	eg_workload_summary(w, sum, sizeof(sum));
	snprintf(desc, sizeof(desc), "%s: %s: %s", prefix, w->name, sum);
	eg__emit(tap, junit, cls, w->name, desc, 0, st, msg, d, t);
	json_decref(d);
	seen[at] = 1;
	cut->at = w;
}

unsigned eg_l2_lines_collect(FILE *f, const eg_workload_list_t *wl, uint32_t W,
			     unsigned char *seen, eg_tap_t *tap,
			     eg_junit_t *junit, const char *cls,
			     const char *prefix, double dt, eg_job_cut_t *cut,
			     eg_job_totals_t *t)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;

	while (f && getline(&line, &cap, f) > 0)
		n += (unsigned)eg__l2_line(line, wl, seen, tap, junit, cls,
					   prefix, dt, t);
	free(line);
	if (cut)
		eg__cut(cut, wl, W, seen, tap, junit, cls, prefix, t);
	return n;
}

void eg_l2_lines_missing(const eg_workload_list_t *wl, uint32_t W,
			 unsigned char *seen, eg_tap_t *tap, eg_junit_t *junit,
			 const char *cls, const char *prefix,
			 const char *why_missing, eg_job_totals_t *t)
{
	char desc[256];

	for (size_t i = 0; i < wl->n; i++) {
		if (seen[i] || wl->items[i].world != W)
			continue;
		snprintf(desc, sizeof(desc), "%s: %s", prefix,
			 wl->items[i].name);
		eg__emit(tap, junit, cls, wl->items[i].name, desc, 0,
			 EG_STATUS_SKIP, why_missing, NULL, t);
		seen[i] = 1;
	}
}

unsigned eg_l2_lines_report(FILE *f, const eg_workload_list_t *wl, uint32_t W,
			    eg_tap_t *tap, eg_junit_t *junit, const char *cls,
			    const char *prefix, double dt,
			    const char *why_missing, eg_job_cut_t *cut,
			    eg_job_totals_t *t)
{
	unsigned char *seen = calloc(wl->n + 1, 1);
	unsigned n;

	if (!seen)
		return 0;
	n = eg_l2_lines_collect(f, wl, W, seen, tap, junit, cls, prefix, dt,
				cut, t);
	eg_l2_lines_missing(wl, W, seen, tap, junit, cls, prefix, why_missing,
			    t);
	free(seen);
	return n;
}

/* The last lines of a step's log, for its failure. */
static json_t *eg__tail(const char *log)
{
	char *keep[EG__TAIL] = {0}, buf[512];
	json_t *arr = json_array();
	FILE *f = strcmp(log, "-") ? fopen(log, "r") : NULL;
	unsigned n = 0;

	while (f && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		free(keep[n % EG__TAIL]);
		keep[n++ % EG__TAIL] = strdup(buf);
	}
	if (f)
		fclose(f);
	for (unsigned i = n > EG__TAIL ? n - EG__TAIL : 0; i < n; i++) {
		json_array_append_new(
		    arr,
		    json_string(keep[i % EG__TAIL] ? keep[i % EG__TAIL] : ""));
		free(keep[i % EG__TAIL]);
		keep[i % EG__TAIL] = NULL;
	}
	return arr;
}

/* The step's own point: how it ended. */
static void eg__step_point(eg__ctx_t *c, const eg__step_t *s, int ex,
			   unsigned seen, unsigned owed, double dt)
{
	char cls[160], desc[256], msg[300] = "";
	json_t *d = NULL;
	eg_status_t st = EG_STATUS_PASS;

	snprintf(cls, sizeof(cls), "%s.%s.%s", c->suite, s->kind, s->name);
	snprintf(desc, sizeof(desc), "%s %s: step", s->kind, s->name);
	if (ex < 0) {
		st = EG_STATUS_SKIP;
		snprintf(msg, sizeof(msg), "not run: %s",
			 *s->note ? s->note : "no reason given");
	} else if (ex == EG_EXIT_SKIP) {
		st = EG_STATUS_SKIP;
		snprintf(msg, sizeof(msg), "the step skipped (exit 77)%s%s",
			 *s->note ? ": " : "", s->note);
	} else if (ex != 0 && !(ex == EG_EXIT_FAIL && seen == owed && owed)) {
		/* a failed case is reported by its own point; how the step
		 * ended is the step's: 1 a failure, else an error */
		st = ex == EG_EXIT_FAIL ? EG_STATUS_FAIL : EG_STATUS_ERROR;
		if (owed)
			snprintf(msg, sizeof(msg),
				 "step exited %d after %u of %u workloads%s%s",
				 ex, seen, owed, *s->note ? ": " : "", s->note);
		else
			snprintf(msg, sizeof(msg), "step exited %d%s%s", ex,
				 *s->note ? ": " : "", s->note);
		d = json_pack("{s:i, s:s, s:o}", "exit", ex, "log", s->log,
			      "log_tail", eg__tail(s->log));
		c->t->steps_failed++;
	}
	eg__emit(c->tap, c->junit, cls, "step", desc, dt, st,
		 st == EG_STATUS_PASS ? NULL : msg, d, c->t);
	json_decref(d);
	if (st == EG_STATUS_PASS && !strcmp(s->kind, "preflight"))
		c->t->checks_passed++;
	if (st == EG_STATUS_PASS && *s->note) {
		/* a warning of a step that passed: said, not judged */
		snprintf(msg, sizeof(msg), "%s %s: %s", s->kind, s->name,
			 s->note);
		eg_tap_comment(c->tap, msg);
	}
}

static int eg__parse_exit(const char *s)
{
	char *end;
	long v;

	if (!strcmp(s, "-"))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 255)
		return -2;
	return (int)v;
}

/* One line of the steps file. */
static int eg__step(eg__ctx_t *c, const eg__step_t *s)
{
	int ex = eg__parse_exit(s->exit);
	double dt = strtod(s->secs, NULL);
	unsigned long W = strtoul(s->world, NULL, 10);
	unsigned owed = 0, seen = 0;
	char cls[160], prefix[200], why[320];

	if (ex == -2) {
		fprintf(stderr,
			"epgate job-report: %s:%d: exit \"%s\": want 0..255 "
			"or - (did not run)\n",
			c->o->steps_path, s->line, s->exit);
		return EG_EXIT_HARD;
	}
	c->t->steps++;
	c->t->steps_run += ex >= 0;
	if (!strcmp(s->kind, "l2")) {
		FILE *f = ex >= 0 && strcmp(s->results, "-")
			      ? fopen(s->results, "r")
			      : NULL;
		eg_job_crash_t jc;
		eg_job_cut_t cut = {.jc = &jc, .log = s->log, .rc = ex};
		/* a step that ended early names the workload it ended in
		 * when its log says how */
		int cut_known = ex > 0 && ex != EG_EXIT_SKIP &&
				strcmp(s->log, "-") &&
				eg_job_crash_read(s->log, &jc) == EG_OK &&
				jc.end != EG_JOB_END_NONE;

		for (size_t i = 0; i < c->wl.n; i++)
			owed += c->wl.items[i].world == W;
		if (ex < 0)
			snprintf(why, sizeof(why), "not run: %s", s->note);
		else
			snprintf(why, sizeof(why),
				 "never ran: the step ended (exit %d) before "
				 "it",
				 ex);
		snprintf(cls, sizeof(cls), "%s.l2.%s", c->suite, s->name);
		snprintf(prefix, sizeof(prefix), "l2 %s", s->name);
		seen = eg_l2_lines_report(
		    f, &c->wl, (uint32_t)W, c->tap, c->junit, cls, prefix,
		    owed ? dt / owed : dt, why, cut_known ? &cut : NULL, c->t);
		if (f)
			fclose(f);
	}
	eg__step_point(c, s, ex, seen, owed, dt);
	return EG_OK;
}

/* Splits a line at tabs into the step's fields; <0 if too few. */
static int eg__split(char *line, eg__step_t *s)
{
	const char **f[EG__FIELDS] = {&s->kind, &s->name, &s->world,
				      &s->exit, &s->secs, &s->results,
				      &s->log,	&s->note};
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line; n < EG__FIELDS; n++) {
		*f[n] = p;
		char *tab = n < EG__FIELDS - 1 ? strchr(p, '\t') : NULL;
		if (!tab) {
			n++;
			break;
		}
		*tab = '\0';
		p = tab + 1;
	}
	if (n < EG__FIELDS - 1)
		return -1;
	if (n == EG__FIELDS - 1)
		s->note = "";
	return **f[0] && **f[1] ? 0 : -1;
}

static int eg__steps(eg__ctx_t *c, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	int ln = 0, rc = EG_OK;

	while (rc == EG_OK && getline(&line, &cap, f) > 0) {
		eg__step_t s = {.line = ++ln};

		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (eg__split(line, &s) < 0) {
			fprintf(stderr,
				"epgate job-report: %s:%d: want %d or %d "
				"tab-separated fields: kind name world exit "
				"seconds results log [note]\n",
				c->o->steps_path, ln, EG__FIELDS - 1,
				EG__FIELDS);
			rc = EG_EXIT_HARD;
			break;
		}
		rc = eg__step(c, &s);
	}
	free(line);
	return rc;
}

static int eg__open(eg__ctx_t *c)
{
	char path[4096];
	const char *m = c->o->workload_path;

	if (!m) {
		if (eg_find_data("fixtures/workloads/l2-matrix.ini", path,
				 sizeof(path)) < 0) {
			fprintf(stderr, "epgate job-report: cannot find "
					"fixtures/workloads/l2-matrix.ini\n");
			return EG_EXIT_HARD;
		}
		m = path;
	}
	eg_overrides_t ov = {0};
	if (eg_cli_load_workloads("epgate job-report", m, &ov, &c->wl) < 0)
		return EG_EXIT_HARD;
	if (eg_tap_open(&c->tap, c->o->report.tap, -1) < 0 ||
	    eg_junit_open(&c->junit, c->o->report.junit, c->suite) < 0) {
		fprintf(stderr, "epgate job-report: cannot write %s or %s\n",
			c->o->report.tap, c->o->report.junit);
		return EG_EXIT_HARD;
	}
	return EG_OK;
}

int eg_job_report(const eg_job_report_opts_t *o, eg_job_totals_t *t)
{
	eg__ctx_t c = {.o = o, .t = t};
	FILE *f = fopen(o->steps_path, "r");
	int rc;

	memset(t, 0, sizeof(*t));
	c.suite = o->suite ? o->suite : "epgate-job";
	if (!f) {
		fprintf(stderr, "epgate job-report: %s: cannot open: %s\n",
			o->steps_path, strerror(errno));
		return EG_EXIT_HARD;
	}
	rc = eg__open(&c);
	if (rc == EG_OK)
		rc = eg__steps(&c, f);
	fclose(f);
	if (rc == EG_OK && !t->steps) {
		/* a job that planned nothing says so, in both reports */
		eg_tap_point(c.tap, EG_STATUS_SKIP, "job: no step planned",
			     "the steps file lists no step", NULL);
		eg_junit_case(c.junit, c.suite, "job", 0, EG_STATUS_SKIP,
			      "the steps file lists no step", NULL);
		t->skipped++;
	}
	if (c.tap && eg_tap_close(c.tap) < 0)
		rc = EG_EXIT_HARD;
	if (c.junit && eg_junit_close(c.junit) < 0)
		rc = EG_EXIT_HARD;
	eg_workload_list_free(&c.wl);
	if (rc != EG_OK)
		return EG_EXIT_HARD;
	if (t->failed || t->errors || t->crashed)
		return EG_EXIT_FAIL;
	return t->passed > t->checks_passed ? EG_EXIT_PASS : EG_EXIT_SKIP;
}
