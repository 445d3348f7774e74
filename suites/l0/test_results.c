/* Results schema v1: writer/reader round trip, the atomic incremental
 * write (a crash or a failed write leaves a valid file with every point
 * so far), and each rejection of the reader with the place it names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "epgate/error.h"
#include "epgate/results.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/eg-results.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const double step[] = {101.5, 99.0, 100.25, 103.0, 98.5, 100.0};

/* A measured point: step_us as samples, so_gbps as a summary only. */
static void make_point(eg_point_t *p, eg_metric_t *m, const char *id, int conc)
{
	memset(p, 0, sizeof(*p));
	memset(m, 0, 2 * sizeof(*m));
	p->id = (char *)id;
	p->suite = "ep-local";
	p->arm = "a2a";
	p->axes = json_pack("{s:i, s:i, s:s}", "concurrency", conc, "world", 4,
			    "dtype", "bf16");
	p->evidence =
	    json_pack("{s:s, s:s}", "transport", "shm", "provider", "shm");
	m[0].name = "step_us";
	m[0].samples = (double *)step;
	m[0].n_samples = 6;
	m[1].name = "so_gbps";
	m[1].s = (eg_summary_t){3, 33.5, NAN, NAN, NAN, 32.0, 35.0};
	p->metrics = m;
	p->n_metrics = 2;
}

static void free_point(eg_point_t *p)
{
	json_decref(p->axes);
	json_decref(p->evidence);
}

START_TEST(round_trip)
{
	char path[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_results_t r;
	eg_point_t p;
	eg_metric_t m[2];
	eg_summary_t s;
	json_t *ctx = json_pack("{s:[s,s], s:s, s:s, s:{s:s}}", "hosts", "a",
				"b", "provider", "shm", "profile", "local",
				"env", "FI_PROVIDER", "shm");

	snprintf(path, sizeof(path), "%s/r.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, ctx, err, sizeof(err)),
			 0);
	make_point(&p, m, "p1", 32);
	ck_assert_msg(eg_results_append(w, &p, err, sizeof(err)) == 0, "%s",
		      err);
	free_point(&p);
	make_point(&p, m, "p2", 64);
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), 0);
	free_point(&p);
	ck_assert_uint_eq(eg_results_count(w), 2);
	eg_results_close(w);
	json_decref(ctx);

	ck_assert_msg(eg_results_read(&r, path, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert(!r.recorded);
	ck_assert_uint_eq(r.n_points, 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(r.context, "provider")), "shm");
	/* "created" is stamped when the writer is not given one */
	ck_assert_ptr_nonnull(json_object_get(r.context, "created"));
	ck_assert_str_eq(r.points[1].id, "p2");
	ck_assert_str_eq(r.points[1].arm, "a2a");
	ck_assert_int_eq(json_integer_value(
			     json_object_get(r.points[1].axes, "concurrency")),
			 64);
	ck_assert_str_eq(
	    json_string_value(json_object_get(r.points[0].axes, "dtype")),
	    "bf16");
	ck_assert_str_eq(json_string_value(json_object_get(r.points[0].evidence,
							   "transport")),
			 "shm");
	{
		const eg_metric_t *st =
		    eg_point_metric(&r.points[0], "step_us");
		const eg_metric_t *so =
		    eg_point_metric(&r.points[0], "so_gbps");

		ck_assert_ptr_nonnull(st);
		ck_assert_ptr_nonnull(so);
		ck_assert_ptr_null(eg_point_metric(&r.points[0], "tok_s"));
		/* samples come back bit for bit; the stats are the writer's */
		ck_assert_uint_eq(st->n_samples, 6);
		ck_assert(!memcmp(st->samples, step, sizeof(step)));
		eg_stats_summarize(step, 6, 0, &s);
		ck_assert_double_eq(st->s.median, s.median);
		ck_assert_double_eq(st->s.median, 100.125);
		ck_assert_double_eq(st->s.p10, s.p10);
		ck_assert_double_eq(st->s.p90, s.p90);
		ck_assert_double_eq(st->s.cv, s.cv);
		ck_assert(st->s.ci_lo <= st->s.median &&
			  st->s.median <= st->s.ci_hi);
		ck_assert_uint_eq(st->s.n, 6);
		/* a summary stays a summary */
		ck_assert_ptr_null(so->samples);
		ck_assert_double_eq(so->s.median, 33.5);
		ck_assert_double_eq(so->s.ci_lo, 32.0);
		ck_assert(isnan(so->s.p10));
		ck_assert_uint_eq(so->s.n, 3);
	}
	eg_results_free(&r);
}
END_TEST

/* A trimmed copy: reals with 3 significant digits read back rounded. */
START_TEST(writer_digits)
{
	char path[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_results_t r;
	eg_point_t p;
	eg_metric_t m[2];

	snprintf(path, sizeof(path), "%s/d.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, NULL, err, sizeof(err)),
			 0);
	eg_results_set_digits(w, 3);
	make_point(&p, m, "p1", 32);
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), 0);
	free_point(&p);
	eg_results_close(w);
	ck_assert_int_eq(eg_results_read(&r, path, err, sizeof(err)), 0);
	ck_assert_double_eq(
	    eg_point_metric(&r.points[0], "step_us")->samples[0],
	    102.0); /* 101.5 */
	ck_assert_double_eq(eg_point_metric(&r.points[0], "so_gbps")->s.median,
			    33.5);
	eg_results_free(&r);
}
END_TEST

/* Counts the points in a file; -1 if the reader rejects it. */
static long points_in(const char *path)
{
	char err[EG_RESULTS_ERR_MAX];
	eg_results_t r;
	long n;

	if (eg_results_read(&r, path, err, sizeof(err)))
		return -1;
	n = (long)r.n_points;
	eg_results_free(&r);
	return n;
}

START_TEST(incremental_and_atomic)
{
	char path[256], tmp[300], moved[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_point_t p;
	eg_metric_t m[2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sub/r.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(eg_results_create(&w, path, 1, NULL, err, sizeof(err)),
			 0);
	/* valid with zero points from the start */
	ck_assert_int_eq(points_in(path), 0);
	for (int k = 1; k <= 3; k++) {
		char id[8];

		snprintf(id, sizeof(id), "p%d", k);
		make_point(&p, m, id, 16 * k);
		ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), 0);
		free_point(&p);
		/* what a crash right now would leave: k points, no tmp */
		ck_assert_int_eq(points_in(path), k);
		ck_assert_int_ne(access(tmp, F_OK), 0);
	}
	/* a crash in the middle of a rewrite leaves a stale tmp file;
	 * the file itself is untouched by it */
	f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"schema\": \"epgate/results/v1\", \"points\": [", f);
	fclose(f);
	ck_assert_int_eq(points_in(path), 3);
	/* a write that fails (the folder is gone) reports an error, keeps
	 * the count, and the file written last is still whole */
	snprintf(moved, sizeof(moved), "%s/gone", dir);
	ck_assert_int_eq(rename(tmp, path), 0); /* planted: the torn file */
	ck_assert_int_eq(points_in(path), -1);	/* ...the reader sees it */
	eg_results_close(w);

	ck_assert_int_eq(eg_results_create(&w, path, 1, NULL, err, sizeof(err)),
			 0);
	make_point(&p, m, "q1", 8);
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), 0);
	free_point(&p);
	snprintf(path, sizeof(path), "%s/sub", dir);
	ck_assert_int_eq(rename(path, moved), 0);
	make_point(&p, m, "q2", 8);
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), EG_EIO);
	free_point(&p);
	ck_assert_uint_eq(eg_results_count(w), 1);
	eg_results_close(w);
	snprintf(path, sizeof(path), "%s/r.json", moved);
	ck_assert_int_eq(points_in(path), 1);
}
END_TEST

START_TEST(writer_refuses_bad_points)
{
	char path[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_point_t p;
	eg_metric_t m[2];
	double bad[] = {1, NAN};

	snprintf(path, sizeof(path), "%s/w.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, NULL, err, sizeof(err)),
			 0);
	make_point(&p, m, "a", 1);
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), 0);
	/* the same id twice */
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "id \"a\" already written"));
	/* a sample that is not a number */
	p.id = "b";
	m[0].samples = bad;
	m[0].n_samples = 2;
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), EG_ERANGE);
	/* a summary without a median */
	m[0].n_samples = 0;
	m[0].s = (eg_summary_t){3, NAN, NAN, NAN, NAN, NAN, NAN};
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), EG_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "points[1]: incomplete point"));
	/* an axis value the schema does not allow */
	m[0].s.median = 5;
	json_object_set_new(p.axes, "bad", json_true());
	ck_assert_int_eq(eg_results_append(w, &p, err, sizeof(err)), EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "points[1].axes.bad:"));
	free_point(&p);
	ck_assert_uint_eq(eg_results_count(w), 1);
	eg_results_close(w);
	ck_assert_int_eq(points_in(path), 1);
}
END_TEST

/* One point, one codec: object and line both ways, the same figures as
 * the writer's; each refusal on a planted bad input. */
START_TEST(point_codec)
{
	char err[EG_RESULTS_ERR_MAX], *line;
	eg_point_t p, back, one;
	eg_metric_t m[2];
	json_t *o;

	make_point(&p, m, "c1", 4);
	ck_assert_int_eq(
	    eg_point_to_json(&p, &o, "mem", "points[0]", err, sizeof(err)), 0);
	/* the summary of samples is computed, the samples kept */
	ck_assert_double_eq(
	    json_real_value(json_object_get(
		json_object_get(json_object_get(o, "metrics"), "step_us"),
		"median")),
	    100.125);
	ck_assert_int_eq(
	    eg_point_from_json(o, &back, "mem", "points[0]", err, sizeof(err)),
	    0);
	json_decref(o);
	ck_assert_str_eq(back.id, "c1");
	ck_assert_uint_eq(back.n_metrics, 2);
	ck_assert_uint_eq(eg_point_metric(&back, "step_us")->n_samples, 6);
	ck_assert(!isnan(eg_point_metric(&back, "step_us")->s.ci_lo));
	/* the line form: one line, parsed to the same point */
	ck_assert_int_eq(eg_point_line(&back, &line, "spool", err, sizeof(err)),
			 0);
	ck_assert_ptr_null(strchr(line, '\n'));
	ck_assert_int_eq(
	    eg_point_parse_line(line, &one, "spool", err, sizeof(err)), 0);
	ck_assert_double_eq(eg_point_metric(&one, "step_us")->s.ci_hi,
			    eg_point_metric(&back, "step_us")->s.ci_hi);
	ck_assert_double_eq(eg_point_metric(&one, "so_gbps")->s.median, 33.5);
	free(line);
	eg_point_fini(&one);
	eg_point_fini(&back);
	ck_assert_ptr_null(back.id); /* fini zeroes */
	/* planted: an incomplete point is not serialised */
	p.arm = NULL;
	ck_assert_int_eq(eg_point_line(&p, &line, "spool", err, sizeof(err)),
			 EG_EINVAL);
	ck_assert_ptr_null(line);
	ck_assert_str_eq(err, "spool: point: incomplete point (id, suite, arm, "
			      "a finite median and n are required)");
	free_point(&p);
	/* planted: bad lines */
	ck_assert_int_eq(eg_point_parse_line("{\"id\": \"a\", \"id\": \"b\"}",
					     &one, "s.spool:3", err,
					     sizeof(err)),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "s.spool:3: malformed point: "));
	ck_assert_int_eq(eg_point_parse_line("{\"id\": \"a\", \"suite\": "
					     "\"s\", \"arm\": \"a2a\", "
					     "\"axes\": {}, \"metrics\": {}}",
					     &one, "s.spool:4", err,
					     sizeof(err)),
			 EG_EPARSE);
	ck_assert_str_eq(err, "s.spool:4: point.metrics: expected a non-empty "
			      "object");
	ck_assert_ptr_null(one.id);
}
END_TEST

/* Points pushed into results in memory; several files read at once,
 * stopping at a planted missing one. */
START_TEST(push_and_read_all)
{
	char path[128], missing[128], err[EG_RESULTS_ERR_MAX];
	char *paths[3] = {path, missing, path};
	eg_results_writer_t *w;
	eg_results_t held = {0}, *all;
	eg_point_t p, q;
	eg_metric_t m[2];
	json_t *o;
	size_t n;

	make_point(&p, m, "h1", 2);
	ck_assert_int_eq(eg_point_to_json(&p, &o, "mem", "p", err, sizeof(err)),
			 0);
	ck_assert_int_eq(
	    eg_point_from_json(o, &q, "mem", "p", err, sizeof(err)), 0);
	json_decref(o);
	free_point(&p);
	ck_assert_int_eq(eg_results_push(&held, &q), 0);
	ck_assert_ptr_null(q.id);
	ck_assert_uint_eq(held.n_points, 1);
	ck_assert_str_eq(held.points[0].id, "h1");
	eg_results_free(&held);

	snprintf(path, sizeof(path), "%s/a.json", dir);
	snprintf(missing, sizeof(missing), "%s/none.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, NULL, err, sizeof(err)),
			 0);
	eg_results_close(w);
	ck_assert_int_eq(
	    eg_results_read_all(paths, 1, &all, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 1);
	eg_results_free_all(all, n);
	ck_assert_int_eq(
	    eg_results_read_all(paths, 3, &all, &n, err, sizeof(err)),
	    EG_ENOENT);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(strstr(err, "none.json: cannot open"));
	eg_results_free_all(all, n);
}
END_TEST

/* A valid document; each rejection below is one edit of it. */
static const char *good =
    "{\"schema\": \"epgate/results/v1\", \"recorded\": true,\n"
    "\"context\": {\"provider\": \"efa\", \"hosts\": [\"a\"], "
    "\"env\": {\"K\": \"v\"}},\n"
    "\"points\": [\n"
    "  {\"id\": \"x\", \"suite\": \"s\", \"arm\": \"a2a\", "
    "\"axes\": {\"world\": 16, \"phase\": \"decode\"}, "
    "\"metrics\": {\"tok_s\": {\"median\": 10, \"ci_lo\": 9, "
    "\"ci_hi\": 11, \"n\": 5}, \"step_us\": {\"median\": 2, \"n\": 3, "
    "\"samples\": [1, 2, 3]}}, \"evidence\": {\"provider\": \"efa\"}}\n"
    "]}\n";

/* good with the first occurrence of from replaced by to. */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(good, from);
	size_t n = strlen(good) - strlen(from) + strlen(to) + 1;
	char *s = malloc(n);

	ck_assert_msg(at != NULL, "\"%s\" not in the document", from);
	snprintf(s, n, "%.*s%s%s", (int)(at - good), good, to,
		 at + strlen(from));
	return s;
}

static const struct bad_case {
	const char *from, *to, *msg;
} bad_cases[] = {
    {"\"recorded\": true,\n", "\"recorded\": true\n",
     "doc.json:2:9: malformed JSON: '}' expected"},
    {"\"epgate/results/v1\"", "\"epgate/results/v2\"",
     "doc.json: schema: unsupported version \"epgate/results/v2\""},
    {"\"epgate/results/v1\"", "\"nccl-tests\"",
     "doc.json: schema: \"nccl-tests\" is not epgate/results/v1"},
    {"\"schema\": \"epgate/results/v1\", ", "", "doc.json: schema: missing"},
    {"\"recorded\": true", "\"recorded\": 1",
     "doc.json: recorded: expected true or false"},
    {"\"recorded\": true,", "\"recorded\": true, \"extra\": 1,",
     "doc.json: extra: unknown key"},
    {"\"context\": {", "\"context\": {\"gpu\": \"h200\", ",
     "doc.json: context.gpu: unknown key"},
    {"\"hosts\": [\"a\"]", "\"hosts\": \"a\"",
     "doc.json: context.hosts: expected an array of strings"},
    {"{\"K\": \"v\"}", "{\"K\": 1}",
     "doc.json: context.env.K: expected a string"},
    {"\"id\": \"x\", ", "", "doc.json: points[0].id: missing"},
    {"\"arm\": \"a2a\"", "\"arm\": 3",
     "doc.json: points[0].arm: expected a string"},
    {"\"suite\": \"s\"", "\"suite\": \"\"",
     "doc.json: points[0].suite: empty string"},
    {"\"world\": 16", "\"world\": true",
     "doc.json: points[0].axes.world: expected a number or a string"},
    {"\"evidence\": {\"provider\": \"efa\"}",
     "\"evidence\": {\"provider\": null}",
     "doc.json: points[0].evidence.provider: expected a string"},
    {"\"median\": 10, ", "",
     "doc.json: points[0].metrics.tok_s.median: missing"},
    {"\"median\": 10", "\"median\": \"10\"",
     "doc.json: points[0].metrics.tok_s.median: expected a number"},
    {"\"n\": 5", "\"n\": 2.5",
     "doc.json: points[0].metrics.tok_s.n: expected an integer >= 1"},
    {"\"n\": 5", "\"n\": 0",
     "doc.json: points[0].metrics.tok_s.n: expected an integer >= 1"},
    {"\"ci_hi\": 11, ", "",
     "doc.json: points[0].metrics.tok_s: ci_lo and ci_hi come together"},
    {"\"ci_hi\": 11", "\"ci_hi\": 8",
     "doc.json: points[0].metrics.tok_s.ci_hi: below ci_lo"},
    {"\"n\": 5}", "\"n\": 5, \"mean\": 10}",
     "doc.json: points[0].metrics.tok_s.mean: unknown key"},
    {"\"n\": 3", "\"n\": 4",
     "doc.json: points[0].metrics.step_us.n: 4, but there are 3 samples"},
    {"\"median\": 2", "\"median\": 2.5",
     "doc.json: points[0].metrics.step_us.median: 2.5, but the median"},
    {"[1, 2, 3]", "[1, \"2\", 3]",
     "doc.json: points[0].metrics.step_us.samples[1]: expected a number"},
    {"[1, 2, 3]", "[]",
     "doc.json: points[0].metrics.step_us.samples: expected a non-empty"},
    {"\"tok_s\":", "\"Tok-s\":",
     "doc.json: points[0].metrics.Tok-s: metric names are"},
    {"\"metrics\": {\"tok_s\": {\"median\": 10, \"ci_lo\": 9, \"ci_hi\": 11, "
     "\"n\": 5}, \"step_us\": {\"median\": 2, \"n\": 3, \"samples\": [1, 2, "
     "3]}}",
     "\"metrics\": {}",
     "doc.json: points[0].metrics: expected a non-empty object"},
    {"\"points\": [\n", "\"points\": {\n", "doc.json:4:3: malformed JSON"},
    {"\n]}",
     ",\n  {\"id\": \"x\", \"suite\": \"s\", \"arm\": \"d\", "
     "\"axes\": {}, \"metrics\": {\"tok_s\": {\"median\": 1, "
     "\"n\": 1}}}\n]}",
     "doc.json: points[1].id: \"x\" repeats points[0]"},
    {"\"tok_s\": {\"median\": 10",
     "\"tok_s\": {\"median\": 10, "
     "\"median\": 11",
     "doc.json:4:"}, /* duplicate key */
    /* issue 17: what cannot be judged never reaches a gate */
    {"\"median\": 10, \"ci_lo\": 9", "\"median\": -10, \"ci_lo\": -11",
     "doc.json: points[0].metrics.tok_s.median: -10: tok_s (tokens/s) "
     "cannot be negative"},
    {"[1, 2, 3]", "[1, 2, -3]",
     "doc.json: points[0].metrics.step_us.samples[2]: -3: step_us (us) "
     "cannot be negative"},
    {"\"step_us\": {\"median\": 2, ", "\"step_us\": {",
     "doc.json: points[0].metrics.step_us.median: missing"},
    {"\"median\": 10", "\"median\": 1e999", "doc.json:4:"},
    /* launches */
    {"\"samples\": [1, 2, 3]", "\"samples\": [1, 2, 3], \"launches\": [1, 1]",
     "doc.json: points[0].metrics.step_us.launches: they add up to 2, but "
     "there are 3 samples"},
    {"\"samples\": [1, 2, 3]", "\"samples\": [1, 2, 3], \"launches\": [3, -1]",
     "doc.json: points[0].metrics.step_us.launches[1]: expected an integer"},
    {"\"ci_hi\": 11, ", "\"ci_hi\": 11, \"launches\": [5], ",
     "doc.json: points[0].metrics.tok_s.launches: launch counts without "
     "samples"},
    {"\"samples\": [1, 2, 3]", "\"samples\": [1, 2, 3], \"cv_between\": 0.1",
     "doc.json: points[0].metrics.step_us.cv_within: spread without launch "
     "counts"},
    {"\"samples\": [1, 2, 3]",
     "\"samples\": [1, 2, 3], \"launches\": [1, 2], \"cv_within\": -1",
     "doc.json: points[0].metrics.step_us.cv_within: negative spread"},
    {"\"evidence\":", "\"passes\": [0, 2, 1], \"evidence\":",
     "doc.json: points[0].passes: [2]: 1 after 2 (launch numbers increase)"},
    {"\"samples\": [1, 2, 3]}}, \"evidence\":",
     "\"samples\": [1, 2, 3], \"launches\": [1, 2]}}, \"passes\": [0, 1, "
     "2], \"evidence\":",
     "doc.json: points[0].passes: 3 launch(es), but metric step_us has 2"},
    {"\"evidence\":", "\"passes\": [0], \"remeasured\": 2, \"evidence\":",
     "doc.json: points[0].remeasured: expected an integer from 0 to the "
     "number of launches (1)"},
    {"\"context\": {", "\"context\": {\"plan\": {\"launches\": [1]}, ",
     "doc.json: context.plan.launches: expected a number or a word"},
};

START_TEST(reader_rejects)
{
	const struct bad_case *c = &bad_cases[_i];
	char err[EG_RESULTS_ERR_MAX];
	eg_results_t r;
	char *doc = edit(c->from, c->to);
	int rc = eg_results_parse(&r, doc, "doc.json", err, sizeof(err));

	ck_assert_msg(rc == EG_EPARSE, "case %d accepted: %s", _i, doc);
	ck_assert_msg(strstr(err, c->msg) != NULL,
		      "case %d: \"%s\", want \"%s\"", _i, err, c->msg);
	/* one line */
	ck_assert_ptr_null(strchr(err, '\n'));
	free(doc);
}
END_TEST

START_TEST(reader_accepts_the_base)
{
	/* the rejections above are due to their edit alone */
	char err[EG_RESULTS_ERR_MAX];
	eg_results_t r;

	ck_assert_msg(
	    eg_results_parse(&r, good, "doc.json", err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert(r.recorded);
	ck_assert_uint_eq(r.n_points, 1);
	/* stats absent next to samples are computed */
	ck_assert_double_eq_tol(eg_point_metric(&r.points[0], "step_us")->s.p10,
				1.2, 1e-12);
	eg_results_free(&r);
	ck_assert_int_eq(
	    eg_results_read(&r, "/nonexistent/x.json", err, sizeof(err)),
	    EG_ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.json: cannot open"));
}
END_TEST

/* A point of 3 launches: samples per launch, passes, the spread
 * written and read back; a launch added, a summary kept, evidence that
 * differs joined; the writer's put replaces a point. */
START_TEST(launches_round_trip)
{
	double x[] = {10, 11, 12, 20, 21, 22, 30, 31, 32};
	uint32_t ln[] = {3, 3, 3}, ps[] = {0, 1, 2};
	eg_metric_t m[2] = {{.name = "step_us",
			     .samples = x,
			     .n_samples = 9,
			     .launch_n = ln,
			     .n_launches = 3},
			    {.name = "so_bytes", .s = {.n = 9, .median = 64}}};
	eg_point_t p = {.id = "p",
			.suite = "s",
			.arm = "a2a",
			.metrics = m,
			.n_metrics = 2,
			.passes = ps,
			.n_passes = 3,
			.remeasured = 1};
	char path[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_results_t r;
	const eg_metric_t *st;

	p.axes = json_pack("{s:i}", "world", 4);
	snprintf(path, sizeof(path), "%s/l.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, NULL, err, sizeof(err)),
			 0);
	ck_assert_msg(eg_results_append(w, &p, err, sizeof(err)) == 0, "%s",
		      err);
	x[8] = 33; /* put: the same id, replaced */
	ck_assert_msg(eg_results_put(w, &p, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(eg_results_count(w), 1);
	eg_results_close(w);
	ck_assert_msg(eg_results_read(&r, path, err, sizeof(err)) == 0, "%s",
		      err);
	st = eg_point_metric(&r.points[0], "step_us");
	ck_assert_uint_eq(st->n_launches, 3);
	ck_assert_uint_eq(st->launch_n[2], 3);
	ck_assert_double_eq(st->samples[8], 33);
	ck_assert_uint_eq(r.points[0].n_passes, 3);
	ck_assert_uint_eq(r.points[0].remeasured, 1);
	/* between launches 10 vs 20 vs 30: far more than within */
	ck_assert(st->cv_between > 5 * st->cv_within);
	/* the launch-level interval is wider than the samples' would be */
	ck_assert(st->s.ci_hi - st->s.ci_lo >= 10);
	ck_assert_uint_eq(eg_point_launches(&r.points[0]), 3);
	eg_results_free(&r);
	json_decref(p.axes);
}
END_TEST

START_TEST(add_launch)
{
	double a[] = {1, 2}, b[] = {3, 4, 5};
	eg_point_t acc = {0}, one, two;
	eg_metric_t *m1 = calloc(2, sizeof(*m1)), *m2 = calloc(1, sizeof(*m2));

	m1[0] = (eg_metric_t){.name = strdup("step_us"),
			      .samples = malloc(sizeof(a)),
			      .n_samples = 2};
	memcpy(m1[0].samples, a, sizeof(a));
	m1[1] = (eg_metric_t){.name = strdup("so_bytes"),
			      .s = {.n = 2, .median = 8}};
	m2[0] = (eg_metric_t){.name = strdup("step_us"),
			      .samples = malloc(sizeof(b)),
			      .n_samples = 3};
	memcpy(m2[0].samples, b, sizeof(b));
	one = (eg_point_t){.id = strdup("p"),
			   .suite = strdup("s"),
			   .arm = strdup("a"),
			   .axes = json_object(),
			   .evidence = json_pack("{s:s}", "provider", "shm"),
			   .metrics = m1,
			   .n_metrics = 2};
	two = (eg_point_t){.id = strdup("p"),
			   .suite = strdup("s"),
			   .arm = strdup("a"),
			   .axes = json_object(),
			   .evidence = json_pack("{s:s}", "provider", "sh"),
			   .metrics = m2,
			   .n_metrics = 1};
	ck_assert_int_eq(eg_point_add_launch(&acc, &one, 0, 0), 0);
	ck_assert_int_eq(eg_point_add_launch(&acc, &two, 3, 1), 0);
	ck_assert_uint_eq(acc.n_passes, 2);
	ck_assert_uint_eq(acc.passes[1], 3);
	ck_assert_uint_eq(acc.remeasured, 1);
	ck_assert_uint_eq(eg_point_metric(&acc, "step_us")->n_samples, 5);
	ck_assert_uint_eq(eg_point_metric(&acc, "step_us")->launch_n[1], 3);
	/* so_bytes: absent in launch 2, kept as it was */
	ck_assert_double_eq(eg_point_metric(&acc, "so_bytes")->s.median, 8);
	/* a launch that ran another path shows in the evidence */
	ck_assert_str_eq(
	    json_string_value(json_object_get(acc.evidence, "provider")),
	    "shm | sh");
	/* passes go forward only */
	ck_assert_int_eq(eg_point_add_launch(&acc, &acc, 1, 0), EG_EINVAL);
	eg_point_fini(&acc);
}
END_TEST

/* One point of 6 launches, the third an outlier (the case: a
 * sweep's table and in-run gates read launch 1 alone).  After each
 * launch the held summary is the one the file gets: the median of all
 * samples and the interval over launches, identical to what the writer
 * writes and the reader reads back. */
static eg_point_t one_launch(double center)
{
	eg_metric_t *m = calloc(1, sizeof(*m));
	eg_point_t p = {.id = strdup("w1"),
			.suite = strdup("s"),
			.arm = strdup("a2a"),
			.axes = json_object(),
			.metrics = m,
			.n_metrics = 1};

	m->name = strdup("step_us");
	m->samples = malloc(5 * sizeof(double));
	m->n_samples = 5;
	for (int i = 0; i < 5; i++)
		m->samples[i] = center + i - 2;
	/* what the spool line of one launch says of itself */
	ck_assert_int_eq(eg_metric_summary(p.id, m, &m->s), 0);
	return p;
}

START_TEST(launches_summarized_together)
{
	const double centers[] = {651.5, 809.0, 7876.9, 838.2, 693.1, 665.3};
	eg_point_t acc = {0};
	char path[128], err[EG_RESULTS_ERR_MAX];
	eg_results_writer_t *w;
	eg_results_t r;
	const eg_metric_t *held, *back;
	double all[30];

	for (size_t l = 0; l < 6; l++) {
		eg_point_t add = one_launch(centers[l]);

		for (int i = 0; i < 5; i++)
			all[l * 5 + i] = centers[l] + i - 2;
		ck_assert_int_eq(
		    eg_point_add_launch(&acc, &add, (uint32_t)l, 0), 0);
		held = eg_point_metric(&acc, "step_us");
		ck_assert_double_eq_tol(
		    held->s.median, eg_stats_median(all, (l + 1) * 5), 1e-9);
		ck_assert_uint_eq(held->s.n, (l + 1) * 5);
	}
	held = eg_point_metric(&acc, "step_us");
	/* not launch 1's 651.5 [649.5, 653.5]: the six launches' */
	ck_assert_double_gt(held->s.median, 700);
	ck_assert_double_gt(held->s.ci_hi, 838);
	ck_assert(isfinite(held->cv_between) && held->cv_between > 0.1);
	snprintf(path, sizeof(path), "%s/six.json", dir);
	ck_assert_int_eq(eg_results_create(&w, path, 0, NULL, err, sizeof(err)),
			 0);
	ck_assert_msg(eg_results_append(w, &acc, err, sizeof(err)) == 0, "%s",
		      err);
	eg_results_close(w);
	ck_assert_msg(eg_results_read(&r, path, err, sizeof(err)) == 0, "%s",
		      err);
	back = eg_point_metric(&r.points[0], "step_us");
	ck_assert_double_eq(back->s.median, held->s.median);
	ck_assert_double_eq(back->s.ci_lo, held->s.ci_lo);
	ck_assert_double_eq(back->s.ci_hi, held->s.ci_hi);
	ck_assert_double_eq(back->s.p90, held->s.p90);
	ck_assert_double_eq(back->cv_between, held->cv_between);
	eg_results_free(&r);
	eg_point_fini(&acc);
}
END_TEST

START_TEST(known_names)
{
	const eg_metric_info_t *m = eg_metric_info("step_us");

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->better, EG_BETTER_LOWER);
	ck_assert_int_eq(eg_metric_info("tok_s")->better, EG_BETTER_HIGHER);
	ck_assert_int_eq(eg_metric_info("so_bytes")->better, EG_BETTER_NONE);
	ck_assert_ptr_null(eg_metric_info("tok_ss"));
	ck_assert(eg_axis_known("num_comms"));
	ck_assert(!eg_axis_known("comms"));
	ck_assert(eg_arm_known("dense"));
	ck_assert(!eg_arm_known("dens"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("results");
	TCase *t = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, round_trip);
	tcase_add_test(t, incremental_and_atomic);
	tcase_add_test(t, writer_digits);
	tcase_add_test(t, writer_refuses_bad_points);
	tcase_add_test(t, point_codec);
	tcase_add_test(t, push_and_read_all);
	tcase_add_test(t, reader_accepts_the_base);
	tcase_add_test(t, known_names);
	tcase_add_test(t, launches_round_trip);
	tcase_add_test(t, add_launch);
	tcase_add_test(t, launches_summarized_together);
	tcase_add_loop_test(t, reader_rejects, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
