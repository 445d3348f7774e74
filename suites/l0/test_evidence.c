/* Evidence (docs/results-v1.md, "Evidence", "Older files"): what the
 * reader derives for an older epgate's file and only for one, the
 * evidence of results folded into one object, the environment's knobs,
 * the libraries as loaded, and the skeleton `plugin new` makes of the
 * template (hooks out, continuation lines kept, a hook it cannot take
 * out refused). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#ifdef HAVE_LIBFABRIC
#include <rdma/fabric.h>
#endif

#include "epgate/error.h"
#include "epgate/evidence.h"
#include "lib/suite/plugin_cmd.h"

/* A one-point results document: its context's extra members, the
 * point's evidence and axes. */
static int parse(eg_results_t *r, int recorded, const char *ctx, const char *ev,
		 const char *axes)
{
	char text[2048], err[512];

	snprintf(text, sizeof(text),
		 "{\"schema\": \"epgate/results/v1\", \"recorded\": %s, "
		 "\"context\": {%s}, \"points\": [{\"id\": \"p\", \"suite\": "
		 "\"s\", \"arm\": \"a2a\", \"axes\": {%s}, \"evidence\": {%s}, "
		 "\"metrics\": {\"step_us\": {\"median\": 1, \"n\": 1}}}]}",
		 recorded ? "true" : "false", ctx, axes, ev);
	return eg_results_parse(r, text, "r.json", err, sizeof(err));
}

static const char *ev_of(const eg_results_t *r, const char *k)
{
	return json_string_value(json_object_get(r->points[0].evidence, k));
}

START_TEST(older_file_derives)
{
	eg_results_t r;

	ck_assert_int_eq(parse(&r, 0,
			       "\"hosts\": [\"vm\"], \"build\": \"epgate "
			       "0.1.0 (8acb843)\"",
			       "\"transport\": \"nccl P2P/CUMEM (NVL) | nccl "
			       "NET/Socket\", \"versions\": \"NCCL 2.28.3, "
			       "CUDA runtime 13.0, driver API 12.8\"",
			       "\"nodes\": 1"),
			 0);
	ck_assert_uint_eq(r.revision, 1);
	ck_assert(eg_results_older(&r));
	/* what its epgate did not write yet, not what it could have */
	ck_assert(eg_results_older_lacks(&r, "lib_version"));
	ck_assert(!eg_results_older_lacks(&r, "provider"));
	ck_assert_str_eq(ev_of(&r, "transport_class"), "nvlink | socket");
	ck_assert_str_eq(ev_of(&r, "nccl"), "2.28.3");
	ck_assert_str_eq(ev_of(&r, "cuda"), "13.0");
	ck_assert_str_eq(ev_of(&r, "cuda_driver"), "12.8");
	ck_assert_str_eq(
	    json_string_value(json_object_get(r.derived, "transport_class")),
	    "transport");
	eg_results_free(&r);
}
END_TEST

START_TEST(current_file_derives_nothing)
{
	eg_results_t r;

	ck_assert_int_eq(parse(&r, 0, "\"revision\": 2",
			       "\"transport\": \"nccl NET/Socket\"", ""),
			 0);
	ck_assert_uint_eq(r.revision, 2);
	ck_assert(!eg_results_older(&r));
	ck_assert_ptr_null(ev_of(&r, "transport_class"));
	ck_assert_ptr_null(r.derived);
	eg_results_free(&r);
	/* a recorded campaign is never "older" (its report is its record) */
	ck_assert_int_eq(parse(&r, 1, "", "\"transport\": \"NVLink\"", ""), 0);
	ck_assert(!eg_results_older(&r));
	ck_assert_str_eq(ev_of(&r, "transport_class"), "nvlink");
	eg_results_free(&r);
	/* revision 1 but no epgate's build: written by hand, judged as is */
	ck_assert_int_eq(parse(&r, 0, "", "\"transport\": \"NVLink\"", ""), 0);
	ck_assert_uint_eq(r.revision, 1);
	ck_assert(!eg_results_older(&r));
	eg_results_free(&r);
	ck_assert_int_eq(parse(&r, 0, "\"revision\": \"2\"", "", ""),
			 EG_EPARSE);
}
END_TEST

START_TEST(evidence_folded)
{
	eg_results_t r[2];
	json_t *ev, *more;

	ck_assert_int_eq(parse(&r[0], 0,
			       "\"revision\": 2, \"hosts\": [\"ctx\"], "
			       "\"env\": {\"NCCL_NET\": \"Socket\"}",
			       "\"host\": \"a\", \"nccl\": \"2.28.3\"", ""),
			 0);
	ck_assert_int_eq(parse(&r[1], 0,
			       "\"revision\": 2, \"env\": {\"NCCL_NET\": "
			       "\"IB\", \"FI_PROVIDER\": \"efa\"}",
			       "\"host\": \"a | b\", \"nccl\": \"2.28.3\"", ""),
			 0);
	ev = eg_results_evidence(r, 2);
	ck_assert_ptr_nonnull(ev);
	/* the points' hosts, not the context's; each value once */
	ck_assert_str_eq(json_string_value(json_object_get(ev, "host")),
			 "a | b");
	ck_assert_str_eq(json_string_value(json_object_get(ev, "nccl")),
			 "2.28.3");
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(ev, "env"), "NCCL_NET")),
			 "Socket | IB");
	ck_assert_ptr_null(json_object_get(ev, "gpu"));
	/* the context's where no point has the key */
	more = eg_results_evidence(r, 1);
	json_object_del(r[0].points[0].evidence, "host");
	json_decref(more);
	more = eg_results_evidence(r, 1);
	ck_assert_str_eq(json_string_value(json_object_get(more, "host")),
			 "ctx");
	ck_assert_int_eq(eg_evidence_merge(ev, more), 0);
	ck_assert_str_eq(json_string_value(json_object_get(ev, "host")),
			 "a | b | ctx");
	ck_assert(eg_evidence_key("lib_version") && eg_evidence_key("host"));
	ck_assert(!eg_evidence_key("lib_versoin"));
	json_decref(ev);
	json_decref(more);
	eg_results_free(&r[0]);
	eg_results_free(&r[1]);
}
END_TEST

START_TEST(knobs_and_loaded)
{
	eg_loaded_t l;

	ck_assert(eg_env_knob("NCCL_DEBUG") && eg_env_knob("FI_PROVIDER"));
	ck_assert(eg_env_knob("NVSHMEM_BOOTSTRAP"));
	ck_assert(eg_env_knob("CUDA_VISIBLE_DEVICES"));
	ck_assert(!eg_env_knob("EPGATE_SECRET") && !eg_env_knob("HOME"));
	eg_loaded_read(&l);
	ck_assert(l.host[0]);
	ck_assert_str_eq(l.nvshmem, EG_NOT_LOADED);
#ifdef HAVE_LIBFABRIC /* linked in: loaded, and its own answer */
	{
		char want[24];

		snprintf(want, sizeof(want), "%u.%u", FI_MAJOR(fi_version()),
			 FI_MINOR(fi_version()));
		ck_assert_str_eq(l.libfabric, want);
	}
#endif
}
END_TEST

static const char tpl[] =
    "/* The template.\n *\n * Options: a=b (what).\n */\n"
    "#include <stdio.h>\n#include \"epgate/plugin.h\"\n"
    "#include \"faults.h\"\n"
    "static int f(int t)\n{\n\tint x = 1 |\n\t    BIT(2);\n"
    "\tFAULT_ONE(t);\n\tif (TPL_V2 && x)\n\t\treturn \"template\"[0];\n"
    "\treturn x;\n}\n"
    "#ifndef TPL_WRAPPED /* wraps */\n#ifdef KEEP\nint k;\n#endif\n"
    "size_t s = TPL_SIZE;\n#endif\n";

START_TEST(skeleton)
{
	char *out = NULL, err[256];

	ck_assert_int_eq(eg_plugin_skeleton(tpl, "foo", &out, err, sizeof(err)),
			 0);
	ck_assert_ptr_null(strstr(out, "faults.h"));
	ck_assert_ptr_null(strstr(out, "FAULT_ONE"));
	ck_assert_ptr_null(strstr(out, "TPL_"));
	ck_assert_ptr_null(strstr(out, "#ifndef"));
	ck_assert_ptr_nonnull(strstr(out, "BIT(2);")); /* a continuation */
	ck_assert_ptr_nonnull(strstr(out, "#ifdef KEEP\nint k;\n#endif\n"));
	ck_assert_ptr_nonnull(strstr(out, "size_t s = sizeof(eg_plugin_t);"));
	ck_assert_ptr_nonnull(strstr(out, "\"foo\"[0]"));
	ck_assert_ptr_nonnull(strstr(out, " * Options: a=b (what).\n */\n"));
	ck_assert_ptr_nonnull(strstr(out, "#include \"epgate/plugin.h\""));
	/* the last #endif (of TPL_WRAPPED) is gone, KEEP's stays */
	ck_assert_ptr_null(strstr(out, "#endif\n#endif"));
	free(out);
	/* the template as built: nothing left to take out */
	ck_assert_int_eq(eg_plugin_skeleton(eg_plugin_template_src(), "foo",
					    &out, err, sizeof(err)),
			 0);
	ck_assert_ptr_null(strstr(out, "TPL_"));
	free(out);
	/* a hook it cannot take out: refused, naming it */
	ck_assert_int_eq(
	    eg_plugin_skeleton("/* x */\nint a = TPL_NEW(1) + 2;\n", "foo",
			       &out, err, sizeof(err)),
	    EG_EPARSE);
	ck_assert_ptr_null(out);
	ck_assert_ptr_nonnull(strstr(err, "TPL_NEW(1) + 2;"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("evidence");
	TCase *t = tcase_create("core");
	SRunner *r;
	int failed;

	tcase_add_test(t, older_file_derives);
	tcase_add_test(t, current_file_derives_nothing);
	tcase_add_test(t, evidence_folded);
	tcase_add_test(t, knobs_and_loaded);
	tcase_add_test(t, skeleton);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
