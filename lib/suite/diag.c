/* Diagnostics of one failed case, as a JSON object for TAP YAML and the
 * results files: where it failed, wrong counts per field, the first
 * mismatches with coordinates, and the command that reproduces it; and
 * the same case said on the terminal in two or three lines. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sigabbrev_np */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"

json_t *eg_case_diag(const eg_workload_t *w, const eg_verdict_t *v,
		     const char *stage, unsigned iter, int engine_err,
		     const char *repro)
{
	json_t *d = json_object(), *wrong = json_object(), *first;
	char sum[256], say[320];

	eg_workload_summary(w, sum, sizeof(sum));
	json_object_set_new(d, "workload", json_string(sum));
	json_object_set_new(d, "stage", json_string(stage ? stage : ""));
	json_object_set_new(d, "iteration", json_integer(iter));
	if (engine_err)
		json_object_set_new(d, "engine_error",
				    json_string(eg_strerror(engine_err)));
	for (int f = 0; f < EG_FIELD__COUNT; f++)
		if (v->wrong[f])
			json_object_set_new(
			    wrong, eg_field_name((eg_field_t)f),
			    json_integer((json_int_t)v->wrong[f]));
	if (v->missing_rows)
		json_object_set_new(wrong, "missing_rows",
				    json_integer((json_int_t)v->missing_rows));
	if (v->duplicate_rows)
		json_object_set_new(
		    wrong, "duplicate_rows",
		    json_integer((json_int_t)v->duplicate_rows));
	if (v->unknown_rows)
		json_object_set_new(wrong, "unknown_rows",
				    json_integer((json_int_t)v->unknown_rows));
	if (v->nonfinite)
		json_object_set_new(wrong, "nonfinite",
				    json_integer((json_int_t)v->nonfinite));
	json_object_set_new(d, "wrong", wrong);
	first = json_array();
	for (uint32_t i = 0; i < v->n_first; i++) {
		const eg_mismatch_t *m = &v->first[i];
		json_t *o = json_object();
		json_object_set_new(o, "field",
				    json_string(eg_field_name(m->field)));
		json_object_set_new(o, "rank", json_integer(m->rank));
		json_object_set_new(o, "src_rank", json_integer(m->src_rank));
		json_object_set_new(o, "src_token", json_integer(m->src_token));
		json_object_set_new(o, "expert", json_integer(m->expert));
		json_object_set_new(o, "row", json_integer(m->row));
		json_object_set_new(o, "col", json_integer(m->col));
		char b[32];
		snprintf(b, sizeof(b), "0x%llx",
			 (unsigned long long)m->expected);
		json_object_set_new(o, "expected", json_string(b));
		snprintf(b, sizeof(b), "0x%llx", (unsigned long long)m->actual);
		json_object_set_new(o, "actual", json_string(b));
		/* a field a library may read two ways says which it is */
		if (eg_mismatch_explain(m, say, sizeof(say)) > 0)
			json_object_set_new(o, "message", json_string(say));
		json_array_append_new(first, o);
	}
	json_object_set_new(d, "first_mismatches", first);
	json_object_set_new(d, "repro", json_string(repro));
	return d;
}

void eg_crash_from_msg(const char *msg, eg_crash_t *c)
{
	const char *nl = msg ? strchr(msg, '\n') : NULL, *p;
	size_t n = nl ? (size_t)(nl - msg) : (msg ? strlen(msg) : 0);

	memset(c, 0, sizeof(*c));
	c->status = c->rank = -1;
	snprintf(c->what, sizeof(c->what), "%.*s", (int)n, msg ? msg : "");
	if (nl)
		snprintf(c->output, sizeof(c->output), "%s", nl + 1);
	if ((p = strstr(c->what, "signal ")))
		c->sig = atoi(p + 7);
	else if ((p = strstr(c->what, "status ")))
		c->status = atoi(p + 7);
}

json_t *eg_crash_diag(const eg_workload_t *w, const char *stage, unsigned step,
		      unsigned iter, const eg_crash_t *c, const char *repro)
{
	json_t *d = json_object();
	char sum[256];
	const char *ab = c->sig ? sigabbrev_np(c->sig) : NULL;

	eg_workload_summary(w, sum, sizeof(sum));
	json_object_set_new(d, "workload", json_string(sum));
	json_object_set_new(d, "stage", json_string(stage ? stage : ""));
	if (w->steps > 1)
		json_object_set_new(d, "step", json_integer(step));
	json_object_set_new(d, "iteration", json_integer(iter));
	json_object_set_new(d, "crash", json_string(c->what));
	if (c->sig) {
		char sig[32];

		snprintf(sig, sizeof(sig), "SIG%s", ab ? ab : "?");
		json_object_set_new(d, "signal", json_string(sig));
	}
	if (c->status >= 0)
		json_object_set_new(d, "exit_status", json_integer(c->status));
	if (c->rank >= 0)
		json_object_set_new(d, "rank", json_integer(c->rank));
	if (*c->where)
		json_object_set_new(d, "where", json_string(c->where));
	/* one string: TAP::Parser's YAMLish misreads a list item that
	 * starts "word: " (a library's "prog: file:line: Assertion") */
	if (*c->output)
		json_object_set_new(d, "output", json_string(c->output));
	json_object_set_new(d, "repro", json_string(repro ? repro : ""));
	return d;
}

int eg_rank_declined(const eg_rank_verdict_t *all, uint32_t W)
{
	for (uint32_t r = 0; r < W; r++)
		if (all[r].harness_err || all[r].engine_err != EG_ENOSYS ||
		    strcmp(all[r].stage, "create") ||
		    eg_verdict_total_wrong(&all[r].v))
			return 0;
	return W > 0;
}

json_t *eg_rank_results_line(const eg_workload_t *w,
			     const eg_rank_verdict_t *all, uint32_t W,
			     const char *repro, json_t *extra)
{
	eg_verdict_t v;
	const char *status = "pass", *stage = "";
	int engine_err = 0, harness_err = 0;
	unsigned iter = 0, step = 0;
	const char *msg = "";
	int32_t bad_rank = -1;

	eg_verdict_init(&v);
	for (uint32_t r = 0; r < W; r++) {
		eg_verdict_merge(&v, &all[r].v);
		if (all[r].harness_err && !harness_err) {
			harness_err = all[r].harness_err;
			bad_rank = (int32_t)r;
		}
		if (all[r].engine_err && !engine_err) {
			engine_err = all[r].engine_err;
			stage = all[r].stage;
			iter = all[r].iter;
			step = all[r].step;
			msg = all[r].engine_msg;
			bad_rank = (int32_t)r;
		}
		if (eg_verdict_total_wrong(&all[r].v) && !*stage) {
			stage = all[r].stage;
			iter = all[r].iter;
			step = all[r].step;
		}
	}
	/* without an error, the first rank that found a mismatch */
	for (uint32_t r = 0; bad_rank < 0 && r < W; r++)
		if (eg_verdict_total_wrong(&all[r].v))
			bad_rank = (int32_t)r;
	if (harness_err)
		status = "error";
	else if (eg_rank_declined(all, W))
		status = "skip"; /* the diag says why: engine_message */
	else if (engine_err || eg_verdict_total_wrong(&v))
		status = "fail";
	json_t *line = json_object();
	json_object_set_new(line, "workload", json_string(w->name));
	json_object_set_new(line, "status", json_string(status));
	if (extra) {
		json_object_update(line, extra);
		json_decref(extra);
	}
	if (*status != 'p') {
		json_t *d = eg_case_diag(w, &v, stage, iter, engine_err, repro);
		if (harness_err)
			json_object_set_new(
			    d, "harness_error",
			    json_string(eg_strerror(harness_err)));
		json_object_set_new(d, "rank", json_integer(bad_rank));
		if (w->steps > 1)
			json_object_set_new(d, "step", json_integer(step));
		if (*msg) /* the engine's own words, from the rank it failed on
			   */
			json_object_set_new(d, "engine_message",
					    json_string(msg));
		json_object_set_new(line, "diag", d);
	}
	return line;
}

int eg_put_json_line(FILE *f, json_t *line)
{
	char *s = json_dumps(line, JSON_COMPACT);

	json_decref(line);
	if (!s)
		return EG_ENOMEM;
	if (f) {
		fprintf(f, "%s\n", s);
		fflush(f);
	}
	free(s);
	return EG_OK;
}

/* ---- failures on the terminal ----------------------------------------- */

static int eg__shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789_./:,=+-@%",
			*s))
			return 0;
	return 1;
}

void eg_shell_append(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);

	if (n + 1 >= len)
		return;
	if (eg__shell_safe(s)) {
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", s);
		return;
	}
	/* 'it'\''s': single quotes, each quote closed, escaped, reopened */
	n += (size_t)snprintf(buf + n, len - n, "%s'", n ? " " : "");
	for (; *s && n + 5 < len; s++) {
		if (*s == '\'')
			n += (size_t)snprintf(buf + n, len - n, "'\\''");
		else
			buf[n++] = *s;
	}
	if (n + 1 < len)
		buf[n++] = '\'';
	buf[n < len ? n : len - 1] = '\0';
}

void eg_repro_env(char *buf, size_t len)
{
	static const char *const vars[] = {"EPGATE_FAULT", "FI_PROVIDER", NULL};

	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		char kv[512];

		if (!v)
			continue;
		snprintf(kv, sizeof(kv), "%s=%s", vars[i], v);
		eg_shell_append(buf, len, kv);
	}
}

/* "x 124, combine 3, missing rows 2" from diag's "wrong". */
static void eg__wrong_list(const json_t *wrong, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	size_t n = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)wrong, k, v)
	{
		int m = snprintf(buf + n, len - n, "%s%s %lld", n ? ", " : "",
				 k, (long long)json_integer_value(v));

		if (m < 0 || (size_t)m >= len - n)
			break;
		n += (size_t)m;
	}
}

static const char *eg__js(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The first mismatch: "x rank=0 src=(0,1) expert=-1 row=0 col=0
 * expected=0x4130 actual=0x4000", and its message where it has one. */
static void eg__first(FILE *f, const json_t *m)
{
	fprintf(f,
		"  first: %s rank=%lld src=(%lld,%lld) expert=%lld row=%lld "
		"col=%lld expected=%s actual=%s\n",
		eg__js(m, "field"),
		(long long)json_integer_value(json_object_get(m, "rank")),
		(long long)json_integer_value(json_object_get(m, "src_rank")),
		(long long)json_integer_value(json_object_get(m, "src_token")),
		(long long)json_integer_value(json_object_get(m, "expert")),
		(long long)json_integer_value(json_object_get(m, "row")),
		(long long)json_integer_value(json_object_get(m, "col")),
		eg__js(m, "expected"), eg__js(m, "actual"));
	if (*eg__js(m, "message"))
		fprintf(f, "  that is: %s\n", eg__js(m, "message"));
}

/* "CRASH NAME: STAGE, step S, iteration I, rank R: WHAT" (a hang: FAIL
 * and what its peers waited on), where, its last output, a line each. */
static void eg__say_crash(FILE *f, const char *name, const json_t *diag,
			  const char *at, const char *st)
{
	const char *out = eg__js(diag, "output");
	int hang = !*eg__js(diag, "crash");

	fprintf(
	    f, "%s %s: %s%s, iteration %lld%s: %s\n", hang ? "FAIL" : "CRASH",
	    name, eg__js(diag, "stage"), st,
	    (long long)json_integer_value(json_object_get(diag, "iteration")),
	    at, eg__js(diag, hang ? "hang" : "crash"));
	if (*eg__js(diag, "where"))
		fprintf(f, "  where: %s\n", eg__js(diag, "where"));
	while (*out) {
		int n = (int)strcspn(out, "\n");

		fprintf(f, "  said: %.*s\n", n, out);
		out += n + (out[n] == '\n');
	}
}

void eg_case_say(FILE *f, const char *name, const json_t *diag, int verbose)
{
	const json_t *first = json_object_get(diag, "first_mismatches");
	const json_t *rank = json_object_get(diag, "rank");
	const json_t *step = json_object_get(diag, "step");
	char wrong[256], at[64] = "", st[32] = "", said[80];
	size_t n = json_array_size(first);

	if (!f)
		return;
	if (json_is_integer(rank) && json_integer_value(rank) >= 0)
		snprintf(at, sizeof(at), ", rank %lld",
			 (long long)json_integer_value(rank));
	if (json_is_integer(step)) /* steps count from 1 where said */
		snprintf(st, sizeof(st), ", step %lld",
			 (long long)json_integer_value(step) + 1);
	eg__wrong_list(json_object_get(diag, "wrong"), wrong, sizeof(wrong));
	if (*eg__js(diag, "crash") || *eg__js(diag, "hang"))
		eg__say_crash(f, name, diag, at, st);
	else if (*eg__js(diag, "harness_error") || *eg__js(diag, "error"))
		fprintf(f, "ERROR %s: %s%s\n", name,
			*eg__js(diag, "error") ? eg__js(diag, "error")
					       : eg__js(diag, "harness_error"),
			at);
	else if (*eg__js(diag, "engine_error"))
		fprintf(f, "FAIL %s: %s %s (%s%siteration %lld%s)%s%s\n", name,
			eg__js(diag, "stage"),
			eg_suite_engine_said(eg__js(diag, "engine_error"), said,
					     sizeof(said)),
			st + (*st ? 2 : 0), *st ? ", " : "",
			(long long)json_integer_value(
			    json_object_get(diag, "iteration")),
			at, *eg__js(diag, "engine_message") ? ": " : "",
			eg__js(diag, "engine_message"));
	else
		fprintf(f, "FAIL %s: %s%s, iteration %lld%s: %s wrong\n", name,
			eg__js(diag, "stage"), st,
			(long long)json_integer_value(
			    json_object_get(diag, "iteration")),
			at, wrong[0] ? wrong : "(none counted)");
	for (size_t i = 0; i < n && i < (verbose ? n : 1); i++)
		eg__first(f, json_array_get(first, i));
	if (*eg__js(diag, "repro"))
		fprintf(f, "  repro: %s\n", eg__js(diag, "repro"));
}

const char *eg_exit_word(int rc)
{
	static const char *const w[] = {
	    [EG_EXIT_PASS] = "PASS",
	    [EG_EXIT_FAIL] = "FAIL",
	    [EG_EXIT_SKIP] = "SKIP",
	};

	return rc >= 0 && (size_t)rc < sizeof(w) / sizeof(w[0]) && w[rc]
		   ? w[rc]
		   : "ERROR";
}

void eg_say_more_failures(FILE *out, unsigned said,
			  const struct eg_l1_totals *tot)
{
	unsigned all = tot->failed + tot->errors + tot->crashed;

	if (out && said < all)
		fprintf(out,
			"... and %u more failure(s): every one is in the TAP "
			"and JUnit (-v says each here)\n",
			all - said);
}

int eg_suite_exit(const struct eg_l1_totals *tot, int hard)
{
	if (hard)
		return EG_EXIT_HARD;
	if (tot->failed || tot->crashed)
		return EG_EXIT_FAIL;
	return tot->run > tot->skipped ? EG_EXIT_PASS : EG_EXIT_SKIP;
}
