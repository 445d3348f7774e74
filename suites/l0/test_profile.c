/* Profiles (docs/profiles.md): every file under profiles/ parses and
 * yields valid points; every file under fixtures/profiles/bad/ is rejected
 * with the file:line message its first line names; point enumeration
 * (product, zip, ids, base values) and the workload of a point. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/profile.h"

static const char *srcdir(void)
{
	const char *s = getenv("EG_SRCDIR");

#ifdef EG_SRCDIR
	if (!s || !*s)
		s = EG_SRCDIR;
#endif
	return s && *s ? s : ".";
}

static int parse(const char *text, eg_profile_t *p, char *err, size_t len)
{
	return eg_profile_parse(p, text, strlen(text), "p.profile", err, len);
}

/* Names of the files in dir ending in .profile, sorted; count in *n. */
static char **list(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = calloc(256, sizeof(char *));

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	*n = 0;
	while ((e = readdir(d)) && *n < 256) {
		size_t l = strlen(e->d_name);

		if (l > 8 && !strcmp(e->d_name + l - 8, ".profile"))
			v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	return v;
}

START_TEST(every_shipped_profile)
{
	static const char *const want[] = {
	    "local", "h200x2-nvlink", "h200x2-xnode", "p5en-ep16", "p5en-ep32"};
	char dir[1024], path[1400], err[EG_PROFILE_ERR_MAX];
	size_t n, found = 0;
	char **names;

	snprintf(dir, sizeof(dir), "%s/profiles", srcdir());
	names = list(dir, &n);
	ck_assert_uint_ge(n, 5);
	for (size_t i = 0; i < n; i++) {
		eg_profile_t p;
		eg_bench_point_t *pts;
		size_t np;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ck_assert_msg(eg_profile_load(&p, path, err, sizeof(err)) ==
				  EG_OK,
			      "%s", err);
		/* the name inside is the file's name */
		ck_assert_uint_eq(strlen(p.name) + 8, strlen(names[i]));
		ck_assert(!strncmp(p.name, names[i], strlen(p.name)));
		ck_assert_ptr_nonnull(p.gates);
		ck_assert_int_eq(
		    eg_profile_points(&p, &pts, &np, err, sizeof(err)), EG_OK);
		ck_assert_uint_gt(np, 0);
		for (size_t k = 0; k < np; k++) {
			eg_workload_t w;

			ck_assert_msg(
			    eg_bench_point_workload(&p, &pts[k], &w, err,
						    sizeof(err)) == EG_OK,
			    "%s: %s", pts[k].id, err);
			ck_assert_uint_eq(w.world, pts[k].v[EG_AXIS_WORLD].num);
			eg_workload_fini(&w);
		}
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			found += !strcmp(p.name, want[k]);
		/* the two cluster profiles run under Slurm only */
		ck_assert_int_eq(p.launcher, !strncmp(p.name, "p5en", 4)
						 ? EG_LAUNCHER_SLURM
						 : EG_LAUNCHER_LOCAL);
		free(pts);
		eg_profile_free(&p);
		free(names[i]);
	}
	ck_assert_uint_eq(found, 5);
	free(names);
}
END_TEST

/* Every bad fixture: its first line is "# expect: MESSAGE" and the error
 * must start with that message (after the folder). */
START_TEST(every_bad_fixture)
{
	char dir[1024], path[1400], err[EG_PROFILE_ERR_MAX], line[512];
	size_t n;
	char **names;

	snprintf(dir, sizeof(dir), "%s/fixtures/profiles/bad", srcdir());
	names = list(dir, &n);
	ck_assert_uint_ge(n, 15);
	for (size_t i = 0; i < n; i++) {
		eg_profile_t p;
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
		fclose(f);
		line[strcspn(line, "\n")] = 0;
		ck_assert_msg(!strncmp(line, "# expect: ", 10),
			      "%s: no expect line", names[i]);
		rc = eg_profile_load(&p, path, err, sizeof(err));
		ck_assert_msg(rc == EG_EPARSE, "%s accepted (%d)", names[i],
			      rc);
		ck_assert_ptr_null(p.sweeps);
		ck_assert_msg(!strncmp(err, dir, strlen(dir)) &&
				  !strncmp(err + strlen(dir) + 1, line + 10,
					   strlen(line + 10)),
			      "%s: got \"%s\", want \"%s\"", names[i], err,
			      line + 10);
		ck_assert_ptr_null(strchr(err, '\n'));
		free(names[i]);
	}
	free(names);
}
END_TEST

static const char *const good =
    "profile: t\n"
    "transport: fabric\n"
    "provider: auto\n"
    "timeout: 7\n"
    "env: {FI_PROVIDER: tcp}\n"
    "repetitions: {warmup: 2, iters: 9}\n"
    "model: {bw_gbps: 12.5, post_rate: 2e6}\n"
    "raw: {msgs: 64, msg_size: 16, size: 64K, iters: 5, warmup: 1}\n"
    "base: {world: 4, nodes: 2, experts: 16, topk: 4, hidden: 256,\n"
    "       concurrency: 8, dtype: bf16, mask: 0.25}\n"
    "sweeps:\n"
    "  - name: prod\n"
    "    arms: [a2a, dense]\n"
    "    axes: {concurrency: [8, 32], num_comms: [1, 2, 4]}\n"
    "  - name: zip\n"
    "    arms: a2a\n"
    "    zip: true\n"
    "    repetitions: {iters: 3}\n"
    "    axes: {world: [2, 4], nodes: [2, 1], routing: [uniform, "
    "\"zipf:1.5\"]}\n";

START_TEST(points_and_fields)
{
	char err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_bench_point_t *pts;
	size_t n;

	ck_assert_msg(parse(good, &p, err, sizeof(err)) == EG_OK, "%s", err);
	ck_assert_str_eq(p.name, "t");
	ck_assert_ptr_null(p.provider); /* auto */
	ck_assert_double_eq(p.timeout_s, 7);
	ck_assert_uint_eq(p.n_env, 1);
	ck_assert_str_eq(p.env_keys[0], "FI_PROVIDER");
	ck_assert_double_eq(p.model_bw_gbps, 12.5);
	ck_assert_double_eq(p.model_post_rate, 2e6);
	ck_assert_uint_eq(p.raw_size, 65536);
	ck_assert_uint_eq(p.raw_msg_size, 16);
	ck_assert_ptr_null(p.gates);
	ck_assert_int_eq(eg_profile_points(&p, &pts, &n, err, sizeof(err)),
			 EG_OK);
	/* 2 arms x 2 x 3, then 2 zipped */
	ck_assert_uint_eq(n, 14);
	ck_assert_str_eq(pts[0].id, "prod/a2a/concurrency=8,num_comms=1");
	ck_assert_str_eq(pts[1].id, "prod/a2a/concurrency=8,num_comms=2");
	ck_assert_str_eq(pts[3].id, "prod/a2a/concurrency=32,num_comms=1");
	ck_assert_str_eq(pts[6].id, "prod/dense/concurrency=8,num_comms=1");
	ck_assert_str_eq(pts[6].arm, "dense");
	ck_assert_str_eq(pts[6].suite, "prod");
	ck_assert_uint_eq(pts[5].v[EG_AXIS_CONCURRENCY].num, 32);
	ck_assert_uint_eq(pts[5].v[EG_AXIS_NUM_COMMS].num, 4);
	/* the rest from the base */
	ck_assert_uint_eq(pts[5].v[EG_AXIS_EXPERTS].num, 16);
	ck_assert_uint_eq(pts[5].v[EG_AXIS_NODES].num, 2);
	ck_assert_str_eq(pts[5].v[EG_AXIS_DTYPE].str, "bf16");
	ck_assert_str_eq(pts[5].v[EG_AXIS_ROUTING].str, "uniform");
	ck_assert_uint_eq(pts[5].warmup, 2);
	ck_assert_uint_eq(pts[5].iters, 9);
	/* zip: the i-th values together, and the sweep's own repetitions */
	ck_assert_str_eq(pts[12].id, "zip/a2a/world=2,nodes=2,routing=uniform");
	ck_assert_str_eq(pts[13].id,
			 "zip/a2a/world=4,nodes=1,routing=zipf:1.5");
	ck_assert_uint_eq(pts[13].iters, 3);
	ck_assert_uint_eq(pts[13].warmup, 2);

	/* the workload of a point */
	eg_workload_t w;
	ck_assert_int_eq(
	    eg_bench_point_workload(&p, &pts[12], &w, err, sizeof(err)), EG_OK);
	ck_assert_uint_eq(w.world, 2);
	ck_assert_uint_eq(w.tokens, 8);
	ck_assert_uint_eq(w.experts, 16);
	ck_assert_uint_eq(w.topk, 4);
	ck_assert_uint_eq(w.hidden, 256);
	ck_assert_double_eq(w.mask_ratio, 0.25);
	ck_assert_str_eq(w.name, "zip");
	eg_workload_fini(&w);
	ck_assert_int_eq(
	    eg_bench_point_workload(&p, &pts[13], &w, err, sizeof(err)), EG_OK);
	ck_assert_int_eq(w.routing, EG_ROUTING_ZIPF);
	ck_assert_double_eq(w.zipf_s, 1.5);
	eg_workload_fini(&w);
	free(pts);
	eg_profile_free(&p);
}
END_TEST

START_TEST(defaults)
{
	char err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;

	ck_assert_int_eq(parse("profile: d\ntransport: null\nsweeps:\n"
			       "  - {name: s, arms: [empty, \"work:50\", "
			       "\"loop:1000\"], axes: {world: 1}}\n",
			       &p, err, sizeof(err)),
			 EG_OK);
	ck_assert_uint_eq(p.warmup, 3);
	ck_assert_uint_eq(p.iters, 20);
	ck_assert_double_eq(p.timeout_s, 60);
	ck_assert_int_eq(p.launcher, EG_LAUNCHER_LOCAL);
	ck_assert_double_eq(p.model_bw_gbps, 0);
	ck_assert_uint_eq(p.base[EG_AXIS_NUM_COMMS].num, 1);
	ck_assert_uint_eq(p.base[EG_AXIS_NODES].num, 1);
	ck_assert_uint_eq(p.sweeps[0].n_arms, 3);
	ck_assert_int_eq(p.interleave, 0); /* one arm after the other */
	eg_profile_free(&p);
	ck_assert_int_eq(parse("profile: d\ntransport: null\ninterleave: "
			       "steps\nsweeps:\n  - {name: s, arms: [empty, "
			       "\"work:50\"], axes: {world: 1}}\n",
			       &p, err, sizeof(err)),
			 EG_OK);
	ck_assert_int_eq(p.interleave, 1);
	eg_profile_free(&p);
	/* the null transport's arms are not engines, and vice versa */
	ck_assert_int_eq(parse("profile: d\ntransport: null\nsweeps:\n"
			       "  - {name: s, arms: [a2a], axes: {world: 1}}\n",
			       &p, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "p.profile:4: arms: unknown arm"));
	ck_assert_int_eq(parse("profile: d\ntransport: fabric\nsweeps:\n"
			       "  - {name: s, arms: [empty], axes: {world: "
			       "2}}\n",
			       &p, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_int_eq(parse("", &p, err, sizeof(err)), EG_EPARSE);
	ck_assert_str_eq(err, "p.profile:1: empty profile");
	ck_assert_int_eq(
	    eg_profile_load(&p, "/nonexistent/x.profile", err, sizeof(err)),
	    EG_ENOENT);
	ck_assert_ptr_nonnull(
	    strstr(err, "/nonexistent/x.profile: cannot open"));
}
END_TEST

/* Launches and re-measurement, and arms the registry spells with a path
 * or a planted slowdown; a point's arm changed, its id follows. */
START_TEST(launches_and_arms)
{
	static const char *t =
	    "profile: l\ntransport: fabric\n"
	    "repetitions: {iters: 10, launches: 6}\n"
	    "remeasure: {rounds: 2, launches: 3}\n"
	    "sweeps:\n"
	    "  - {name: a, arms: [a2a, \"slow:10%:a2a\", \"slow:50us:dense\"], "
	    "axes: {concurrency: [8]}}\n"
	    "  - {name: b, arms: [a2a], axes: {concurrency: [8]}, "
	    "repetitions: {launches: 2}}\n";
	static const char *nccl =
	    "profile: n\ntransport: nccl\nsweeps:\n  - {name: a, arms: "
	    "[\"plugin:/x/libep.so,mode=ll\", \"slow:5%:dense\"], axes: "
	    "{concurrency: [8]}}\n";
	char err[EG_PROFILE_ERR_MAX];
	eg_profile_t p;
	eg_bench_point_t *pts;
	size_t n;

	ck_assert_msg(parse(t, &p, err, sizeof(err)) == EG_OK, "%s", err);
	ck_assert_uint_eq(p.launches, 6);
	ck_assert_uint_eq(p.remeasure_rounds, 2);
	ck_assert_uint_eq(p.remeasure_launches, 3);
	ck_assert_int_eq(eg_profile_points(&p, &pts, &n, err, sizeof(err)),
			 EG_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(pts[0].launches, 6);
	ck_assert_uint_eq(pts[3].launches, 2);
	ck_assert_str_eq(pts[1].id, "a/slow:10%:a2a/concurrency=8");
	eg_bench_point_set_arm(&p, &pts[1], "a2a");
	ck_assert_str_eq(pts[1].id, "a/a2a/concurrency=8");
	free(pts);
	eg_profile_free(&p);
	/* nccl: a plugin (not loaded here) and a slowdown of dense */
	ck_assert_msg(parse(nccl, &p, err, sizeof(err)) == EG_OK, "%s", err);
	eg_profile_free(&p);
	/* a slowdown of an unknown engine, a blank in an arm: refused */
	ck_assert_int_eq(parse("profile: x\ntransport: fabric\nsweeps:\n  - "
			       "{name: a, arms: [\"slow:10%:dens\"], axes: "
			       "{concurrency: [8]}}\n",
			       &p, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_msg(strstr(err, "unknown arm \"slow:10%:dens\""), "%s", err);
	ck_assert_int_eq(parse("profile: x\ntransport: fabric\nrepetitions: "
			       "{launches: 0}\nsweeps:\n  - {name: a, arms: "
			       "[a2a], axes: {concurrency: [8]}}\n",
			       &p, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_msg(strstr(err, ":3: launches: 0 is out of range"), "%s",
		      err);
}
END_TEST

/* Named arms: written as their name, run as their spec with the point's
 * num_comms put in (also inside a planted slowdown); python: a venv
 * folder is its bin/python3 (docs/profiles.md, "Named arms"). */
START_TEST(named_arms_and_python)
{
	static const char *t =
	    "profile: n\ntransport: nccl\npython: /nonexistent/venv\n"
	    "arms:\n  lib: \"plugin:nccl-ep,mode=ll,qps={num_comms}\"\n"
	    "  v2: \"plugin:python,module=deepep\"\n"
	    "sweeps:\n  - {name: a, arms: [a2a, lib, \"slow:10%:lib\", v2], "
	    "axes: {num_comms: [1, 4]}}\n";
	char err[EG_PROFILE_ERR_MAX], eng[64], py[64];
	eg_profile_t p;
	eg_bench_point_t *pts;
	size_t n;

	ck_assert_msg(parse(t, &p, err, sizeof(err)) == EG_OK, "%s", err);
	ck_assert_int_eq(eg_profile_points(&p, &pts, &n, err, sizeof(err)),
			 EG_OK);
	ck_assert_uint_eq(n, 8);
	ck_assert_str_eq(pts[3].id, "a/lib/num_comms=4");
	ck_assert_int_eq(eg_profile_arm_engine(&p, &pts[3], eng, sizeof(eng)),
			 EG_OK);
	ck_assert_str_eq(eng, "plugin:nccl-ep,mode=ll,qps=4");
	ck_assert_int_eq(eg_profile_arm_engine(&p, &pts[4], eng, sizeof(eng)),
			 EG_OK);
	ck_assert_str_eq(eng, "slow:10%:plugin:nccl-ep,mode=ll,qps=1");
	ck_assert_int_eq(eg_profile_arm_engine(&p, &pts[6], eng, sizeof(eng)),
			 EG_OK);
	ck_assert_str_eq(eng, "plugin:python,module=deepep");
	ck_assert_int_eq(eg_profile_arm_engine(&p, &pts[0], eng, sizeof(eng)),
			 EG_OK);
	ck_assert_str_eq(eng, "a2a");
	/* planted: a buffer too small is refused, never cut */
	ck_assert_int_eq(eg_profile_arm_engine(&p, &pts[3], eng, 20),
			 EG_ERANGE);
	ck_assert_ptr_null(eg_profile_arm_spec(&p, "a2a"));
	/* not a folder here: taken as the interpreter it names */
	ck_assert_str_eq(eg_profile_python(&p, py, sizeof(py)),
			 "/nonexistent/venv");
	free(pts);
	eg_profile_free(&p);
	/* a named arm unknown to a sweep, and one the fabric parser would
	 * have loaded: refused, and accepted without loading */
	ck_assert_int_eq(parse("profile: x\ntransport: nccl\nsweeps:\n  - "
			       "{name: a, arms: [lib], axes: {concurrency: "
			       "[8]}}\n",
			       &p, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_msg(strstr(err, "unknown arm \"lib\""), "%s", err);
	ck_assert_msg(parse("profile: x\ntransport: fabric\narms: {g: "
			    "\"plugin:eg-absent\"}\nsweeps:\n  - {name: a, "
			    "arms: [a2a, g], axes: {concurrency: [8]}}\n",
			    &p, err, sizeof(err)) == EG_OK,
		      "%s", err);
	eg_profile_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("profile");
	TCase *t = tcase_create("core");

	tcase_add_test(t, every_shipped_profile);
	tcase_add_test(t, every_bad_fixture);
	tcase_add_test(t, points_and_fields);
	tcase_add_test(t, defaults);
	tcase_add_test(t, launches_and_arms);
	tcase_add_test(t, named_arms_and_python);
	suite_add_tcase(s, t);
	return eg_test_main(s);
}
