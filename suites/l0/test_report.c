/* Report writers: TAP 14 lines read back exactly, YAML read back with
 * libyaml's parser, JUnit read back with libxml2 and validated against
 * reports/schema/junit.xsd (which must also reject broken documents). */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <yaml.h>

#include "epgate/error.h"
#include "epgate/report.h"

#define X(s) ((const xmlChar *)(s))

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/eg_report_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int rm1(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

static void teardown(void)
{
	nftw(dir, rm1, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(const char *name)
{
	static char buf[4][256];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* The file must be exactly these lines, each ended by '\n'. */
static void expect_lines(const char *path, const char *const *want, int n)
{
	char *s = slurp(path), *p = s;
	int i;

	for (i = 0; i < n; i++) {
		char *nl = strchr(p, '\n');

		ck_assert_msg(nl, "line %d missing, want \"%s\"", i + 1,
			      want[i]);
		*nl = '\0';
		ck_assert_str_eq(p, want[i]);
		p = nl + 1;
	}
	ck_assert_msg(*p == '\0', "extra output: \"%s\"", p);
	free(s);
}

/* --- TAP ------------------------------------------------------------ */

START_TEST(test_tap_points)
{
	static const char *const want[] = {
	    "TAP version 14",
	    "1..5",
	    "ok 1 - alpha \\\\ 1",
	    "not ok 2 - beta \\# 2 line",
	    "  ---",
	    "  got: 3",
	    "  want: 4",
	    "  ...",
	    "ok 3 - gamma # SKIP no gpu",
	    "not ok 4 - 4 delta # TODO bug 7",
	    "not ok 5 - eps",
	    "  ---",
	    "  message: deadline",
	    "  status: error",
	    "  ...",
	    "# two",
	    "# lines",
	};
	const char *p = path_in("t.tap");
	json_t *diag = json_pack("{s:i, s:i}", "got", 3, "want", 4);
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_open(&t, p, 5), 0);
	ck_assert_int_eq(
	    eg_tap_point(t, EG_STATUS_PASS, "alpha \\ 1", NULL, NULL), 1);
	ck_assert_int_eq(
	    eg_tap_point(t, EG_STATUS_FAIL, "beta # 2\nline", NULL, diag), 2);
	ck_assert_int_eq(
	    eg_tap_point(t, EG_STATUS_SKIP, "gamma", "no gpu", NULL), 3);
	ck_assert_int_eq(
	    eg_tap_point(t, EG_STATUS_TODO, "4 delta", "bug 7", NULL), 4);
	ck_assert_int_eq(
	    eg_tap_point(t, EG_STATUS_ERROR, "eps", "deadline", NULL), 5);
	ck_assert_int_eq(eg_tap_comment(t, "two\nlines\n"), 0);
	/* Written as they arrive: all there before close. */
	expect_lines(p, want, 17);
	ck_assert_int_eq(eg_tap_close(t), 0);
	expect_lines(p, want, 17);
	json_decref(diag);
}
END_TEST

START_TEST(test_tap_plan_at_close)
{
	static const char *const want[] = {
	    "TAP version 14", "ok 1 - a", "not ok 2 - b", "ok 3", "1..3",
	};
	const char *p = path_in("c.tap");
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_open(&t, p, -1), 0);
	eg_tap_point(t, EG_STATUS_PASS, "a", NULL, NULL);
	eg_tap_point(t, EG_STATUS_FAIL, "b", NULL, NULL);
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_PASS, NULL, NULL, NULL), 3);
	expect_lines(p, want, 4); /* no plan yet */
	ck_assert_int_eq(eg_tap_close(t), 0);
	expect_lines(p, want, 5);
}
END_TEST

START_TEST(test_tap_plan_mismatch)
{
	static const char *const want[] = {
	    "TAP version 14",
	    "1..3",
	    "ok 1 - a",
	    "ok 2 - b",
	};
	const char *p = path_in("m.tap");
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_open(&t, p, 3), 0);
	eg_tap_point(t, EG_STATUS_PASS, "a", NULL, NULL);
	eg_tap_point(t, EG_STATUS_PASS, "b", NULL, NULL);
	ck_assert_int_eq(eg_tap_close(t), EG_ERANGE);
	expect_lines(p, want, 4);
}
END_TEST

/* --tap-version 13: the version line, and nothing else, changes. */
START_TEST(test_tap_version)
{
	static const char *const want[] = {
	    "TAP version 13",
	    "1..2",
	    "ok 1 - a \\# b",
	    "not ok 2 - c # TODO d",
	};
	const char *p = path_in("v.tap");
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_version_parse("13"), 13);
	ck_assert_int_eq(eg_tap_version_parse("14"), 14);
	ck_assert_int_eq(eg_tap_version_parse("12"), EG_EINVAL);
	ck_assert_int_eq(eg_tap_version_parse(NULL), EG_EINVAL);
	ck_assert_int_eq(eg_tap_set_version(15), EG_EINVAL);
	ck_assert_int_eq(eg_tap_set_version(13), 0);
	ck_assert_int_eq(eg_tap_version(), 13);
	ck_assert_int_eq(eg_tap_open(&t, p, 2), 0);
	eg_tap_point(t, EG_STATUS_PASS, "a # b", NULL, NULL);
	eg_tap_point(t, EG_STATUS_TODO, "c", "d", NULL);
	ck_assert_int_eq(eg_tap_close(t), 0);
	expect_lines(p, want, 4);
	ck_assert_int_eq(eg_tap_set_version(14), 0); /* CK_FORK=no: reset */
}
END_TEST

START_TEST(test_tap_bail_and_bad_args)
{
	static const char *const want[] = {
	    "TAP version 14",
	    "ok 1 - a",
	    "Bail out! gpu lost again",
	};
	const char *p = path_in("b.tap");
	json_t *arr = json_array();
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_open(&t, p, -1), 0);
	/* Rejected before anything is written or numbered. */
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_FAIL, "x", NULL, arr),
			 EG_EINVAL);
	ck_assert_int_eq(eg_tap_point(t, (eg_status_t)9, "x", NULL, NULL),
			 EG_EINVAL);
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_PASS, "a", NULL, NULL), 1);
	ck_assert_int_eq(eg_tap_bail(t, "gpu lost\nagain"), 0);
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_PASS, "c", NULL, NULL),
			 EG_EINVAL);
	ck_assert_int_eq(eg_tap_close(t), 0);
	expect_lines(p, want, 3); /* no plan after a bail out */
	ck_assert_int_eq(eg_tap_open(&t, path_in("no/such/dir.tap"), 1),
			 EG_EIO);
	json_decref(arr);
}
END_TEST

/* --- YAML ----------------------------------------------------------- */

/* Plain scalars resolved the YAML 1.2 core way; quoted ones are strings. */
static json_t *yplain(const char *v, size_t l)
{
	char *end;
	long long i;
	double d;

	if (l == 0 || !strcmp(v, "null") || !strcmp(v, "~"))
		return json_null();
	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return json_boolean(v[0] == 't');
	i = strtoll(v, &end, 10);
	if (*end == '\0' && end != v)
		return json_integer(i);
	d = strtod(v, &end);
	if (*end == '\0' && end != v && strpbrk(v, ".eE"))
		return json_real(d);
	return json_stringn(v, l);
}

static json_t *ynode(yaml_document_t *doc, yaml_node_t *n)
{
	yaml_node_item_t *it;
	yaml_node_pair_t *pr;
	json_t *j;

	ck_assert_ptr_nonnull(n);
	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			return json_stringn((char *)n->data.scalar.value,
					    n->data.scalar.length);
		return yplain((char *)n->data.scalar.value,
			      n->data.scalar.length);
	case YAML_SEQUENCE_NODE:
		j = json_array();
		for (it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			yaml_node_t *c = yaml_document_get_node(doc, *it);

			json_array_append_new(j, ynode(doc, c));
		}
		return j;
	case YAML_MAPPING_NODE:
		j = json_object();
		for (pr = n->data.mapping.pairs.start;
		     pr < n->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(doc, pr->key);

			ck_assert_int_eq(k->type, YAML_SCALAR_NODE);
			json_object_setn_new(
			    j, (char *)k->data.scalar.value,
			    k->data.scalar.length,
			    ynode(doc, yaml_document_get_node(doc, pr->value)));
		}
		return j;
	default:
		ck_abort_msg("unexpected YAML node");
	}
	return NULL;
}

/* Parses exactly one YAML document. */
static json_t *yparse(const char *text)
{
	yaml_parser_t ps;
	yaml_document_t doc, next;
	json_t *j;

	ck_assert(yaml_parser_initialize(&ps));
	yaml_parser_set_input_string(&ps, (const unsigned char *)text,
				     strlen(text));
	ck_assert_msg(yaml_parser_load(&ps, &doc), "YAML error: %s",
		      ps.problem ? ps.problem : "?");
	j = ynode(&doc, yaml_document_get_root_node(&doc));
	ck_assert(yaml_parser_load(&ps, &next));
	ck_assert_ptr_null(yaml_document_get_root_node(&next));
	yaml_document_delete(&next);
	yaml_document_delete(&doc);
	yaml_parser_delete(&ps);
	return j;
}

static const char *const nasty[] = {
    "key: value",
    "it's \"quoted\"",
    "line1\nline2\n",
    "\n",
    "- leading dash",
    "-",
    "--- doc",
    "...",
    "# hash",
    "a #b",
    "",
    " ",
    "123",
    "-5",
    "1e3",
    "0x1F",
    "1.5",
    ".inf",
    "true",
    "No",
    "null",
    "~",
    " leading",
    "trailing ",
    "tab\there",
    "\x01"
    "ctl\x7f",
    "h\xc3\xa9llo \xe2\x9c\x93",
    "[flow]",
    "{flow}",
    "&anchor",
    "*alias",
    "!tag",
    "%dir",
    "@at",
    "`tick",
    "|",
    ">",
    "?",
    "a,b",
    "back\\slash",
    "crlf\r\n",
    "ls\xe2\x80\xa8"
    "x",
    "'",
    "\"",
};

static json_t *nasty_object(void)
{
	json_t *o = json_object(), *a = json_array(), *v;
	size_t i;

	for (i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		json_array_append_new(a, json_string(nasty[i]));
		/* Nasty keys too (jansson keys are strings by nature). */
		json_object_set_new(o, nasty[i], json_integer((long long)i));
	}
	json_object_set_new(o, "strings", a);
	json_object_set_new(o, "nul", json_stringn("a\0b", 3));
	v = json_pack("[I, I, i, f, f, f, f, f, b, b, n, [[i, [i, []]], {}],"
		      " {s: {s: [i]}}]",
		      (json_int_t)INT64_MAX, (json_int_t)INT64_MIN, 0, 0.1,
		      -2.5e-300, 1e300, 3.0, 123456789.125, 1, 0, 1, 2, "k",
		      "deep", 7);
	ck_assert_ptr_nonnull(v);
	json_object_set_new(o, "values", v);
	json_object_set_new(o, "emptyo", json_object());
	json_object_set_new(o, "emptya", json_array());
	return o;
}

/* Every line starts with indent spaces; no document markers. */
static char *unindent(const char *y, int indent)
{
	char *out = malloc(strlen(y) + 1), *o = out;
	const char *p = y;

	ck_assert_ptr_nonnull(out);
	while (*p) {
		const char *nl = strchr(p, '\n');
		int k;

		ck_assert_ptr_nonnull(nl);
		for (k = 0; k < indent; k++)
			ck_assert_msg(p[k] == ' ', "unindented: %.*s",
				      (int)(nl - p), p);
		p += indent;
		ck_assert(strncmp(p, "---", 3) && strncmp(p, "...", 3));
		memcpy(o, p, (size_t)(nl - p) + 1);
		o += nl - p + 1;
		p = nl + 1;
	}
	*o = '\0';
	return out;
}

START_TEST(test_yaml_roundtrip)
{
	static const int indents[] = {0, 2, 4};
	json_t *o = nasty_object(), *back;
	int i;

	for (i = 0; i < 3; i++) {
		char *y = eg_json_to_yaml(o, indents[i]), *u;

		ck_assert_ptr_nonnull(y);
		u = unindent(y, indents[i]);
		back = yparse(u);
		ck_assert_msg(json_equal(o, back), "differs:\n%s", y);
		json_decref(back);
		free(u);
		free(y);
	}
	json_decref(o);
}
END_TEST

/* The comparison above can fail: unquoted, "123" is a number and a
 * trailing-colon key line is a mapping, not a string. */
START_TEST(test_yaml_checker_catches)
{
	json_t *a = yparse("k: 123\n"), *b = json_pack("{s:s}", "k", "123");

	ck_assert(json_is_integer(json_object_get(a, "k")));
	ck_assert(!json_equal(a, b));
	json_decref(a);
	json_decref(b);
}
END_TEST

/* Shape that TAP harnesses' YAMLish readers need: sequences indented
 * under their key, non-identifier and boolean-like keys quoted. */
START_TEST(test_yaml_shape)
{
	json_t *o = json_pack("{s:s, s:[i, {s:i, s:[i]}], s:{s:b}, s:i, s:i}",
			      "name", "x", "vals", 1, "a", 2, "b", 3, "sub",
			      "ok", 1, "yes", 1, "a b", 2);
	char *y = eg_json_to_yaml(o, 2);

	ck_assert_ptr_nonnull(y);
	ck_assert_str_eq(y, "  name: x\n"
			    "  vals:\n"
			    "    - 1\n"
			    "    - a: 2\n"
			    "      b:\n"
			    "        - 3\n"
			    "  sub:\n"
			    "    ok: true\n"
			    "  \"yes\": 1\n"
			    "  \"a b\": 2\n");
	free(y);
	json_decref(o);
	ck_assert_ptr_null(eg_json_to_yaml(NULL, 2));
}
END_TEST

/* A TAP diagnostic block parses back to the diag object. */
START_TEST(test_tap_yaml_block)
{
	const char *p = path_in("y.tap");
	json_t *o = nasty_object(), *back;
	char *s, *start, *end, *u;
	eg_tap_t *t;

	ck_assert_int_eq(eg_tap_open(&t, p, 1), 0);
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_FAIL, "d", NULL, o), 1);
	ck_assert_int_eq(eg_tap_close(t), 0);
	s = slurp(p);
	start = strstr(s, "\nnot ok 1 - d\n  ---\n");
	ck_assert_ptr_nonnull(start);
	start += strlen("\nnot ok 1 - d\n  ---\n");
	end = strstr(start, "\n  ...\n");
	ck_assert_ptr_nonnull(end);
	ck_assert_str_eq(end, "\n  ...\n"); /* last line of the file */
	end[1] = '\0';
	u = unindent(start, 2);
	back = yparse(u);
	ck_assert(json_equal(o, back));
	json_decref(back);
	json_decref(o);
	free(u);
	free(s);
}
END_TEST

/* --- JUnit ---------------------------------------------------------- */

static const char *fail_msg = "bad\x01\x02 value ]]> <&>\"";
static const char *fail_det = "line1\n\x1b[31mred\x1b[0m ]]> end\xff\xfe\xc3";

static xmlDocPtr read_xml(const char *path)
{
	xmlDocPtr d = xmlReadFile(path, NULL, XML_PARSE_NONET);

	ck_assert_msg(d != NULL, "not well-formed XML: %s", path);
	return d;
}

static xmlNodePtr child(xmlNodePtr n, const char *name, int nth)
{
	for (n = n->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE &&
		    !xmlStrcmp(n->name, X(name)) && nth-- == 0)
			return n;
	return NULL;
}

static int nchildren(xmlNodePtr n, const char *name)
{
	int k = 0;

	while (child(n, name, k))
		k++;
	return k;
}

static void attr_eq(xmlNodePtr n, const char *name, const char *want)
{
	xmlChar *v = xmlGetProp(n, X(name));

	ck_assert_msg(v != NULL, "no %s on <%s>", name, n->name);
	ck_assert_str_eq((char *)v, want);
	xmlFree(v);
}

static void text_eq(xmlNodePtr n, const char *want)
{
	xmlChar *v = xmlNodeGetContent(n);

	ck_assert_str_eq((char *)v, want);
	xmlFree(v);
}

static void noop_err(void *ctx, xmlErrorPtr e)
{
	(void)ctx, (void)e;
}

/* 0 if doc is valid against the schema. */
static int validate(xmlDocPtr doc)
{
	const char *src = getenv("EG_SRCDIR");
	char xsd[512];
	xmlSchemaParserCtxtPtr pc;
	xmlSchemaValidCtxtPtr vc;
	xmlSchemaPtr schema;
	int r;

	/* The build may also bake the source folder in. */
#ifdef EG_SRCDIR
	if (!src || !*src)
		src = EG_SRCDIR;
#endif
	snprintf(xsd, sizeof(xsd), "%s/reports/schema/junit.xsd",
		 src && *src ? src : ".");
	pc = xmlSchemaNewParserCtxt(xsd);
	ck_assert_ptr_nonnull(pc);
	schema = xmlSchemaParse(pc);
	ck_assert_msg(schema != NULL, "cannot load %s", xsd);
	vc = xmlSchemaNewValidCtxt(schema);
	ck_assert_ptr_nonnull(vc);
	xmlSchemaSetValidStructuredErrors(vc, (xmlStructuredErrorFunc)noop_err,
					  NULL);
	r = xmlSchemaValidateDoc(vc, doc);
	xmlSchemaFreeValidCtxt(vc);
	xmlSchemaFree(schema);
	xmlSchemaFreeParserCtxt(pc);
	return r;
}

static int validate_str(const char *xml)
{
	xmlDocPtr d = xmlReadMemory(xml, (int)strlen(xml), "mem.xml", NULL,
				    XML_PARSE_NONET);
	int r;

	ck_assert_ptr_nonnull(d);
	r = validate(d);
	xmlFreeDoc(d);
	return r;
}

static void three_cases(eg_junit_t *j, int upto)
{
	if (upto >= 1)
		ck_assert_int_eq(eg_junit_case(j, "l0.report", "pass", 0.25,
					       EG_STATUS_PASS, NULL, NULL),
				 0);
	if (upto >= 2)
		ck_assert_int_eq(eg_junit_case(j, "l0.report", "fail", 1.5,
					       EG_STATUS_FAIL, fail_msg,
					       fail_det),
				 0);
	if (upto >= 3)
		ck_assert_int_eq(eg_junit_case(j, "l0.report", "skip", 0,
					       EG_STATUS_SKIP, "no gpu", NULL),
				 0);
}

START_TEST(test_junit_three_cases)
{
	const char *p = path_in("j.xml");
	xmlNodePtr root, suite, tc, f;
	xmlChar *stamp, *host;
	eg_junit_t *j;
	xmlDocPtr d;
	char *raw;
	int k;

	ck_assert_int_eq(eg_junit_open(&j, p, "suite1"), 0);
	three_cases(j, 3);
	ck_assert_int_eq(eg_junit_close(j), 0);

	/* Only XML characters reach the file; "]]>" never appears raw. */
	raw = slurp(p);
	for (k = 0; raw[k]; k++)
		ck_assert((unsigned char)raw[k] >= 0x20 || raw[k] == '\n' ||
			  raw[k] == '\t' || raw[k] == '\r');
	ck_assert_ptr_null(strstr(raw, "]]>"));
	free(raw);

	d = read_xml(p);
	root = xmlDocGetRootElement(d);
	ck_assert_str_eq((char *)root->name, "testsuites");
	attr_eq(root, "name", "suite1");
	attr_eq(root, "tests", "3");
	attr_eq(root, "failures", "1");
	attr_eq(root, "errors", "0");
	attr_eq(root, "skipped", "1");
	attr_eq(root, "time", "1.750");
	ck_assert_int_eq(nchildren(root, "testsuite"), 1);
	suite = child(root, "testsuite", 0);
	attr_eq(suite, "name", "suite1");
	attr_eq(suite, "tests", "3");
	attr_eq(suite, "failures", "1");
	attr_eq(suite, "errors", "0");
	attr_eq(suite, "skipped", "1");
	attr_eq(suite, "time", "1.750");
	stamp = xmlGetProp(suite, X("timestamp"));
	ck_assert_ptr_nonnull(stamp);
	ck_assert_uint_eq(strlen((char *)stamp), 19);
	ck_assert(stamp[4] == '-' && stamp[10] == 'T' && stamp[16] == ':');
	host = xmlGetProp(suite, X("hostname"));
	ck_assert(host && *host);
	xmlFree(stamp);
	xmlFree(host);

	ck_assert_int_eq(nchildren(suite, "testcase"), 3);
	tc = child(suite, "testcase", 0);
	attr_eq(tc, "classname", "l0.report");
	attr_eq(tc, "name", "pass");
	attr_eq(tc, "time", "0.250");
	ck_assert_ptr_null(xmlFirstElementChild(tc));

	tc = child(suite, "testcase", 1);
	attr_eq(tc, "name", "fail");
	attr_eq(tc, "time", "1.500");
	ck_assert_int_eq(nchildren(tc, "failure"), 1);
	f = child(tc, "failure", 0);
	attr_eq(f, "message", "bad value ]]> <&>\"");
	attr_eq(f, "type", "failure");
	text_eq(f, "line1\n[31mred[0m ]]> end");

	tc = child(suite, "testcase", 2);
	attr_eq(tc, "name", "skip");
	attr_eq(tc, "time", "0.000");
	f = child(tc, "skipped", 0);
	ck_assert_ptr_nonnull(f);
	attr_eq(f, "message", "no gpu");
	ck_assert_ptr_null(child(tc, "failure", 0));

	ck_assert_int_eq(validate(d), 0);
	xmlFreeDoc(d);
}
END_TEST

START_TEST(test_junit_schema)
{
	const char *p = path_in("s.xml");
	xmlNodePtr suite, tc;
	eg_junit_t *j;
	xmlDocPtr d;

	ck_assert_int_eq(eg_junit_open(&j, p, "all"), 0);
	three_cases(j, 3);
	ck_assert_int_eq(eg_junit_case(j, NULL, "hang", 2.0, EG_STATUS_ERROR,
				       "deadline", "rank 3 silent"),
			 0);
	ck_assert_int_eq(eg_junit_case(j, "l0", "todo", 0.001, EG_STATUS_TODO,
				       "known bug", NULL),
			 0);
	ck_assert_int_eq(eg_junit_close(j), 0);

	d = read_xml(p);
	ck_assert_int_eq(validate(d), 0);
	suite = child(xmlDocGetRootElement(d), "testsuite", 0);
	attr_eq(suite, "tests", "5");
	attr_eq(suite, "failures", "1");
	attr_eq(suite, "errors", "1");
	attr_eq(suite, "skipped", "1");
	tc = child(suite, "testcase", 3);
	attr_eq(tc, "classname", "all"); /* NULL classname: the suite */
	attr_eq(child(tc, "error", 0), "message", "deadline");
	text_eq(child(tc, "error", 0), "rank 3 silent");
	tc = child(suite, "testcase", 4);
	ck_assert_ptr_null(child(tc, "failure", 0));
	text_eq(child(tc, "system-out", 0),
		"TODO (expected failure): known bug");
	xmlFreeDoc(d);
}
END_TEST

/* A crash is its own verdict: TAP "not ok" with "status: crash" and the
 * library's message in the YAML (TAP 14 has no directive for it), JUnit
 * <error type="crash">, counted with the errors, valid by the schema. */
START_TEST(test_crash_status)
{
	static const char *const want[] = {
	    "TAP version 14",	      "1..1",
	    "not ok 1 - w: dispatch", "  ---",
	    "  signal: SIGABRT",      "  message: killed by signal 6",
	    "  status: crash",	      "  ...",
	};
	const char *p = path_in("c.tap"), *x = path_in("c.xml");
	json_t *diag = json_pack("{s:s}", "signal", "SIGABRT");
	xmlNodePtr tc;
	eg_junit_t *j;
	eg_tap_t *t;
	xmlDocPtr d;

	ck_assert_int_eq(eg_tap_open(&t, p, 1), 0);
	ck_assert_int_eq(eg_tap_point(t, EG_STATUS_CRASH, "w: dispatch",
				      "killed by signal 6", diag),
			 1);
	ck_assert_int_eq(eg_tap_close(t), 0);
	expect_lines(p, want, 8);
	json_decref(diag);

	ck_assert_int_eq(eg_junit_open(&j, x, "all"), 0);
	ck_assert_int_eq(eg_junit_case(j, "l1", "w", 0.1, EG_STATUS_CRASH,
				       "killed by signal 6", "assert failed"),
			 0);
	ck_assert_int_eq(eg_junit_close(j), 0);
	d = read_xml(x);
	ck_assert_int_eq(validate(d), 0);
	attr_eq(child(xmlDocGetRootElement(d), "testsuite", 0), "errors", "1");
	tc = child(child(xmlDocGetRootElement(d), "testsuite", 0), "testcase",
		   0);
	attr_eq(child(tc, "error", 0), "type", "crash");
	attr_eq(child(tc, "error", 0), "message", "killed by signal 6");
	text_eq(child(tc, "error", 0), "assert failed");
	xmlFreeDoc(d);
}
END_TEST

/* The schema is strict enough to catch broken documents. */
START_TEST(test_junit_schema_rejects)
{
	ck_assert_int_eq(
	    validate_str("<testsuites><testsuite name='s' tests='1'>"
			 "<testcase classname='c' name='n' time='0.5'>"
			 "<failure message='m'>d</failure></testcase>"
			 "</testsuite></testsuites>"),
	    0);
	/* testcase without name */
	ck_assert_int_ne(
	    validate_str("<testsuites><testsuite name='s' tests='1'>"
			 "<testcase classname='c' time='0.5'/>"
			 "</testsuite></testsuites>"),
	    0);
	/* failure outside testcase */
	ck_assert_int_ne(
	    validate_str("<testsuites><testsuite name='s' tests='1'>"
			 "<failure message='m'/>"
			 "</testsuite></testsuites>"),
	    0);
	/* negative time, non-numeric count */
	ck_assert_int_ne(
	    validate_str("<testsuite name='s' tests='x'>"
			 "<testcase classname='c' name='n' time='-1'/>"
			 "</testsuite>"),
	    0);
	/* skipped and failure together */
	ck_assert_int_ne(
	    validate_str("<testsuite name='s' tests='1'>"
			 "<testcase classname='c' name='n'>"
			 "<skipped/><failure/></testcase></testsuite>"),
	    0);
}
END_TEST

START_TEST(test_junit_incremental)
{
	const char *p = path_in("i.xml");
	char tmp[300];
	xmlNodePtr suite;
	eg_junit_t *j;
	xmlDocPtr d;

	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	ck_assert_int_eq(eg_junit_open(&j, p, "inc"), 0);
	d = read_xml(p); /* valid and empty from the start */
	ck_assert_int_eq(validate(d), 0);
	ck_assert_int_eq(
	    nchildren(child(xmlDocGetRootElement(d), "testsuite", 0),
		      "testcase"),
	    0);
	xmlFreeDoc(d);

	three_cases(j, 2);
	d = read_xml(p);
	ck_assert_int_eq(validate(d), 0);
	suite = child(xmlDocGetRootElement(d), "testsuite", 0);
	attr_eq(suite, "tests", "2");
	attr_eq(suite, "failures", "1");
	ck_assert_int_eq(nchildren(suite, "testcase"), 2);
	ck_assert_int_ne(access(tmp, F_OK), 0); /* renamed, not left over */
	xmlFreeDoc(d);

	ck_assert_int_eq(eg_junit_case(j, "l0.report", "skip", 0,
				       EG_STATUS_SKIP, NULL, NULL),
			 0);
	d = read_xml(p);
	ck_assert_int_eq(
	    nchildren(child(xmlDocGetRootElement(d), "testsuite", 0),
		      "testcase"),
	    3);
	xmlFreeDoc(d);
	ck_assert_int_eq(eg_junit_close(j), 0);
}
END_TEST

START_TEST(test_junit_names)
{
	const char *p = path_in("n.xml");
	xmlNodePtr suite;
	eg_junit_t *j;
	xmlDocPtr d;

	ck_assert_int_eq(eg_junit_open(&j, p, "names"), 0);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", "n", 0, EG_STATUS_PASS, NULL, NULL), 0);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", "n", 0, EG_STATUS_FAIL, "m", NULL), 0);
	ck_assert_int_eq(
	    eg_junit_case(j, "c2", "n", 0, EG_STATUS_PASS, NULL, NULL), 0);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", NULL, 0, EG_STATUS_PASS, NULL, NULL),
	    EG_EINVAL);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", "\x01\x02", 0, EG_STATUS_PASS, NULL, NULL),
	    EG_EINVAL);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", "x", 0, (eg_status_t)7, NULL, NULL),
	    EG_EINVAL);
	ck_assert_int_eq(eg_junit_close(j), 0);
	d = read_xml(p);
	suite = child(xmlDocGetRootElement(d), "testsuite", 0);
	ck_assert_int_eq(nchildren(suite, "testcase"), 3);
	attr_eq(suite, "tests", "3");
	attr_eq(child(suite, "testcase", 1), "name", "n (2)");
	attr_eq(child(suite, "testcase", 2), "name", "n"); /* other class */
	ck_assert_int_eq(validate(d), 0);
	xmlFreeDoc(d);
	ck_assert_int_eq(eg_junit_open(&j, path_in("no/dir/x.xml"), "s"),
			 EG_EIO);
}
END_TEST

/* --- run folders ---------------------------------------------------- */

START_TEST(test_run_dir)
{
	char root[300], out[400], want[64], small[8];
	const char *base;
	struct stat sb;
	FILE *f;
	int k;

	snprintf(root, sizeof(root), "%s/a/b/c", dir);
	ck_assert_int_eq(eg_run_dir_create(root, out, sizeof(out)), 0);
	ck_assert_uint_eq(strncmp(out, root, strlen(root)), 0);
	ck_assert_int_eq(out[strlen(root)], '/');
	base = out + strlen(root) + 1;
	/* yyyymmddThhmmssZ-pid */
	for (k = 0; k < 16; k++)
		ck_assert(k == 8    ? base[k] == 'T'
			  : k == 15 ? base[k] == 'Z'
				    : (base[k] >= '0' && base[k] <= '9'));
	snprintf(want, sizeof(want), "-%ld", (long)getpid());
	ck_assert_str_eq(base + 16, want);
	ck_assert_int_eq(stat(out, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));

	/* Trailing slash: no "//". */
	snprintf(root, sizeof(root), "%s/d/", dir);
	ck_assert_int_eq(eg_run_dir_create(root, out, sizeof(out)), 0);
	ck_assert_ptr_null(strstr(out, "//"));

	ck_assert_int_eq(eg_run_dir_create(dir, small, sizeof(small)),
			 EG_ERANGE);
	/* A file in the way is an error, not a silent success. */
	f = fopen(path_in("file"), "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(eg_run_dir_create(path_in("file"), out, sizeof(out)),
			 EG_EIO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tap_points);
	tcase_add_test(tc, test_tap_plan_at_close);
	tcase_add_test(tc, test_tap_plan_mismatch);
	tcase_add_test(tc, test_tap_version);
	tcase_add_test(tc, test_tap_bail_and_bad_args);
	tcase_add_test(tc, test_yaml_roundtrip);
	tcase_add_test(tc, test_yaml_checker_catches);
	tcase_add_test(tc, test_yaml_shape);
	tcase_add_test(tc, test_tap_yaml_block);
	tcase_add_test(tc, test_junit_three_cases);
	tcase_add_test(tc, test_junit_schema);
	tcase_add_test(tc, test_junit_schema_rejects);
	tcase_add_test(tc, test_crash_status);
	tcase_add_test(tc, test_junit_incremental);
	tcase_add_test(tc, test_junit_names);
	tcase_add_test(tc, test_run_dir);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
