/* lib/base/yaml_reader.c and yaml_scalar.c: the strict YAML reader of
 * profiles and gate files.  Loading (syntax, empty, a second document,
 * aliases, the depth and size limits, checked before libyaml builds a
 * document), mappings (repeated and unknown keys), and every typed
 * getter, each refusal on a planted bad input with its file:line. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "eg_test.h"
#include "epgate/num.h"
#include "epgate/yaml_reader.h"

static char err[1024];
static eg_yaml_t y;

static yaml_node_t *load(const char *text)
{
	int rc = eg_yaml_parse(&y, text, strlen(text), "t.yml", "test file",
			       err, sizeof(err));

	ck_assert_msg(rc == 0, "%s", err);
	return eg_yaml_root(&y);
}

static void refused(const char *text, const char *want)
{
	eg_yaml_t z;
	int rc = eg_yaml_parse(&z, text, strlen(text), "t.yml", "test file",
			       err, sizeof(err));

	ck_assert_int_eq(rc, EG_EPARSE);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(eg_yaml_root(&z));
	eg_yaml_fini(&z); /* harmless after an error */
}

START_TEST(load_refuses)
{
	refused("a: [1, 2\nb: 3\n",
		"t.yml:2: YAML syntax: did not find expected ',' or ']' while "
		"parsing a flow sequence (from line 1)");
	refused("", "t.yml:1: empty test file");
	refused("# only a comment\n", "t.yml:1: empty test file");
	refused("a: 1\n---\nb: 2\n",
		"t.yml:3: a second YAML document; a test file holds one");
	refused("a: &x 1\nb: *x\n",
		"t.yml:2: YAML aliases (*name) are not supported");
}
END_TEST

/* n levels of flow sequences around a scalar, on one line. */
static char *nested(size_t n)
{
	char *s = malloc(2 * n + 8);
	size_t k = 0;

	k += (size_t)sprintf(s, "a: ");
	for (size_t i = 1; i < n; i++)
		s[k++] = '[';
	s[k++] = '1';
	for (size_t i = 1; i < n; i++)
		s[k++] = ']';
	s[k] = '\0';
	return s;
}

START_TEST(depth_limit)
{
	char want[128];
	char *ok = nested(EG_YAML_MAX_DEPTH),
	     *deep = nested(EG_YAML_MAX_DEPTH + 1);
	/* far deeper than libyaml handles in good time: refused at once */
	char *hostile = nested(100000);

	load(ok); /* the mapping plus 31 sequences: exactly the limit */
	eg_yaml_fini(&y);
	snprintf(want, sizeof(want), "t.yml:1: nested deeper than %d levels",
		 EG_YAML_MAX_DEPTH);
	refused(deep, want);
	refused(hostile, want);
	/* block nesting counts too */
	char block[4096] = "";

	for (int i = 0; i <= EG_YAML_MAX_DEPTH; i++)
		snprintf(block + strlen(block), sizeof(block) - strlen(block),
			 "%*sk%d:\n", i, "", i);
	snprintf(want, sizeof(want), "t.yml:%d: nested deeper than %d levels",
		 EG_YAML_MAX_DEPTH + 1, EG_YAML_MAX_DEPTH);
	refused(block, want);
	free(ok);
	free(deep);
	free(hostile);
}
END_TEST

START_TEST(size_limit)
{
	size_t n = EG_YAML_MAX_BYTES + 1, lines = 0;
	char *big = malloc(n + 1), want[512], path[256];
	FILE *f;

	/* "k0000: 0\n" lines up to one byte over the limit */
	for (size_t k = 0; k < n; k++)
		big[k] = k % 16 == 15 ? '\n' : 'x';
	big[n] = '\0';
	for (size_t k = 0; k < EG_YAML_MAX_BYTES; k++)
		lines += big[k] == '\n';
	snprintf(want, sizeof(want),
		 "t.yml:%zu: larger than %zu bytes, the limit for a test file",
		 lines + 1, EG_YAML_MAX_BYTES);
	refused(big, want);
	/* the same from a file, refused before it is read */
	snprintf(path, sizeof(path), "/tmp/eg-test-base-yaml-%ld.yml",
		 (long)getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(big, f);
	fclose(f);
	ck_assert_int_eq(eg_yaml_load(&y, path, "test file", err, sizeof(err)),
			 EG_EPARSE);
	snprintf(want, sizeof(want),
		 "%s:1: larger than %zu bytes, the limit for a test file", path,
		 EG_YAML_MAX_BYTES);
	ck_assert_str_eq(err, want);
	unlink(path);
	ck_assert_int_eq(eg_yaml_load(&y, path, "test file", err, sizeof(err)),
			 EG_ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot open"));
	free(big);
}
END_TEST

START_TEST(load_file)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/eg-test-base-yaml-%ld.yml",
		 (long)getpid());
	f = fopen(path, "w");
	fputs("a: 1\nb: [x, y]\n", f);
	fclose(f);
	ck_assert_int_eq(eg_yaml_load(&y, path, "test file", err, sizeof(err)),
			 0);
	yaml_node_t *r = eg_yaml_root(&y);

	ck_assert_uint_eq(eg_yaml_len(r), 2);
	ck_assert_str_eq(eg_yaml_scalar(eg_yaml_key(&y, r, 1)), "b");
	ck_assert_str_eq(
	    eg_yaml_scalar(eg_yaml_item(&y, eg_yaml_value(&y, r, 1), 1)), "y");
	ck_assert_int_eq(eg_yaml_line(eg_yaml_get(&y, r, "b")), 2);
	ck_assert_ptr_null(eg_yaml_get(&y, r, "c"));
	/* errors from the getters name the file */
	ck_assert_int_eq(eg_yaml_err(&y, eg_yaml_get(&y, r, "b"), "no %s", "b"),
			 EG_EPARSE);
	char want[300];

	snprintf(want, sizeof(want), "%s:2: no b", path);
	ck_assert_str_eq(err, want);
	eg_yaml_fini(&y);
	unlink(path);
}
END_TEST

static int count_keys(eg_yaml_t *z, yaml_node_t *root, void *arg)
{
	ck_assert_str_eq(z->name, "r.yml");
	*(size_t *)arg = eg_yaml_len(root);
	return eg_yaml_len(root) > 2 ? eg_yaml_err(z, root, "too many") : 0;
}

/* eg_yaml_read: the document's whole life around one call; the loader's
 * errors and fn's come back. */
START_TEST(read_with_fn)
{
	size_t n = 0;

	ck_assert_int_eq(eg_yaml_read("a: 1\nb: 2\n", 10, "r.yml", "test file",
				      count_keys, &n, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(eg_yaml_read("a: 1\nb: 2\nc: 3\n", 15, "r.yml",
				      "test file", count_keys, &n, err,
				      sizeof(err)),
			 EG_EPARSE);
	ck_assert_str_eq(err, "r.yml:1: too many");
	n = 99;
	ck_assert_int_eq(eg_yaml_read("a: [1\n", 6, "r.yml", "test file",
				      count_keys, &n, err, sizeof(err)),
			 EG_EPARSE);
	ck_assert_uint_eq(n, 99); /* fn never ran */
	ck_assert_int_eq(eg_yaml_read(NULL, 0, "/nonexistent/r.yml",
				      "test file", count_keys, &n, err,
				      sizeof(err)),
			 EG_ENOENT);
}
END_TEST

START_TEST(mappings)
{
	static const char *const allowed[] = {"a", "b", NULL};
	yaml_node_t *r;

	r = load("a: 1\nb: 2\n");
	ck_assert_int_eq(eg_yaml_keys(&y, "top", r, allowed), 0);
	eg_yaml_fini(&y);
	r = load("a: 1\nc: 2\n");
	ck_assert_int_eq(eg_yaml_keys(&y, "top", r, allowed), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:2: top: unknown key \"c\" (a, b)");
	ck_assert_int_eq(eg_yaml_keys(&y, NULL, r, allowed), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:2: unknown key \"c\" (a, b)");
	eg_yaml_fini(&y);
	r = load("a: 1\nb: 2\nc: 3\nb: 4\na: 5\n");
	ck_assert_int_eq(eg_yaml_mapping(&y, "top", r), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:4: key \"b\" repeats line 2");
	eg_yaml_fini(&y);
	r = load("a: 1\n[x]: 2\na: 3\n");
	ck_assert_int_eq(eg_yaml_mapping(&y, "top", r), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:2: top: keys must be plain words");
	eg_yaml_fini(&y);
	r = load("a: 1\na: 2\n[x]: 3\n");
	ck_assert_int_eq(eg_yaml_mapping(&y, "top", r), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:2: key \"a\" repeats line 1");
	eg_yaml_fini(&y);
	r = load("- 1\n");
	ck_assert_int_eq(eg_yaml_mapping(&y, "top", r), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:1: top: expected a mapping");
	eg_yaml_fini(&y);
}
END_TEST

/* Thousands of keys: the repeat check stays n log n and still finds
 * the one repeat, at its line. */
START_TEST(many_keys)
{
	size_t n = 20000, k = 0;
	char *text = malloc(n * 16 + 32);
	yaml_node_t *r;

	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(text + k, "k%zu: %zu\n", i, i);
	sprintf(text + k, "k123: x\n");
	r = load(text);
	ck_assert_int_eq(eg_yaml_mapping(&y, NULL, r), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:20001: key \"k123\" repeats line 124");
	eg_yaml_fini(&y);
	free(text);
}
END_TEST

static const char doc[] = "s: text\n"	       /* 1 */
			  "e: ''\n"	       /* 2 */
			  "m: {x: 1}\n"	       /* 3 */
			  "n: 12\n"	       /* 4 */
			  "q: \"12\"\n"	       /* 5 */
			  "neg: -3\n"	       /* 6 */
			  "d: -2.5e1\n"	       /* 7 */
			  "z: 0\n"	       /* 8 */
			  "b: 64K\n"	       /* 9 */
			  "t: true\n"	       /* 10 */
			  "qt: 'true'\n"       /* 11 */
			  "w: log2\n"	       /* 12 */
			  "l: [a, b]\n"	       /* 13 */
			  "l0: []\n"	       /* 14 */
			  "ln: [a, [b]]\n"     /* 15 */
			  "big: 99999999999\n" /* 16 */
			  "nan: .nan\n";       /* 17 */

#define G(k) eg_yaml_get(&y, r, k)

START_TEST(strings_words_lists)
{
	static const char *const scales[] = {"linear", "log2", NULL};
	yaml_node_t *r = load(doc);
	char *s = NULL, **l = NULL;
	size_t nl;
	int i, b;

	ck_assert_int_eq(eg_yaml_str(&y, "s", G("s"), &s), 0);
	ck_assert_str_eq(s, "text");
	ck_assert_int_eq(eg_yaml_str(&y, "e", G("e"), &s), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:2: e: empty");
	ck_assert_int_eq(eg_yaml_str(&y, "m", G("m"), &s), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:3: m: expected a string");
	free(s);
	ck_assert_int_eq(eg_yaml_word(&y, "scale", G("w"), scales, &i), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(eg_yaml_word(&y, "scale", G("s"), scales, &i),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:1: unknown scale \"text\" (linear, log2)");
	ck_assert_int_eq(eg_yaml_word(&y, "scale", G("m"), scales, &i),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:3: scale: expected one of linear, log2");
	ck_assert_int_eq(eg_yaml_bool(&y, "t", G("t"), &b), 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(eg_yaml_bool(&y, "qt", G("qt"), &b), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:11: qt: expected true or false");
	ck_assert_int_eq(eg_yaml_strs(&y, "l", G("l"), &l, &nl), 0);
	ck_assert_uint_eq(nl, 2);
	ck_assert_str_eq(l[1], "b");
	ck_assert_ptr_null(l[2]);
	eg_yaml_strs_free(l, nl);
	ck_assert_int_eq(eg_yaml_strs(&y, "s", G("s"), &l, &nl), 0);
	ck_assert_uint_eq(nl, 1);
	ck_assert_str_eq(l[0], "text");
	eg_yaml_strs_free(l, nl);
	ck_assert_int_eq(eg_yaml_strs(&y, "l0", G("l0"), &l, &nl), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:14: l0: empty list");
	eg_yaml_strs_free(l, nl);
	ck_assert_int_eq(eg_yaml_strs(&y, "ln", G("ln"), &l, &nl), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:15: ln: expected a string");
	eg_yaml_strs_free(l, nl);
	ck_assert_int_eq(eg_yaml_strs(&y, "m", G("m"), &l, &nl), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:3: m: expected a string or a list");
	eg_yaml_strs_free(l, nl);
	eg_yaml_fini(&y);
}
END_TEST

START_TEST(numbers)
{
	yaml_node_t *r = load(doc);
	unsigned u;
	uint64_t u64;
	double d;
	size_t sz;

	ck_assert_int_eq(eg_yaml_uint(&y, "n", G("n"), 1, 100, &u), 0);
	ck_assert_uint_eq(u, 12);
	ck_assert_int_eq(eg_yaml_uint(&y, "n", G("n"), 1, 10, &u), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:4: n: 12 is out of range [1, 10]");
	ck_assert_int_eq(eg_yaml_uint(&y, "q", G("q"), 1, 100, &u), EG_EPARSE);
	ck_assert_str_eq(err,
			 "t.yml:5: q: \"12\" is not a non-negative integer");
	ck_assert_int_eq(eg_yaml_uint(&y, "neg", G("neg"), 0, 100, &u),
			 EG_EPARSE);
	ck_assert_str_eq(err,
			 "t.yml:6: neg: \"-3\" is not a non-negative integer");
	ck_assert_int_eq(eg_yaml_uint(&y, "m", G("m"), 0, 100, &u), EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:3: m: expected an integer");
	ck_assert_int_eq(eg_yaml_uint(&y, "big", G("big"), 0, 4000000000u, &u),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:16: big: 99999999999 is out of range [0, "
			      "4000000000]");
	ck_assert_int_eq(eg_yaml_u64(&y, "big", G("big"), 0, UINT64_MAX, &u64),
			 0);
	ck_assert_uint_eq(u64, 99999999999ull);
	ck_assert_int_eq(eg_yaml_num(&y, "d", G("d"), -100, 100, 0, &d), 0);
	ck_assert_double_eq(d, -25);
	ck_assert_int_eq(eg_yaml_num(&y, "z", G("z"), 0, 1, EG_NUM_LO_OPEN, &d),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:8: z: 0 is out of range (0, 1]");
	ck_assert_int_eq(eg_yaml_num(&y, "q", G("q"), 0, 100, 0, &d),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:5: q: \"12\" is not a number");
	ck_assert_int_eq(eg_yaml_num(&y, "nan", G("nan"), 0, 100, 0, &d),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:17: nan: \".nan\" is not a number");
	ck_assert_int_eq(eg_yaml_num(&y, "l", G("l"), 0, 100, 0, &d),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:13: l: expected a number");
	ck_assert_int_eq(eg_yaml_bytes(&y, "b", G("b"), 1, 1u << 20, &sz), 0);
	ck_assert_uint_eq(sz, 65536);
	ck_assert_int_eq(eg_yaml_bytes(&y, "b", G("b"), 1, 1024, &sz),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:9: b: 64K is out of range [1, 1K]");
	ck_assert_int_eq(eg_yaml_bytes(&y, "s", G("s"), 1, 1024, &sz),
			 EG_EPARSE);
	ck_assert_str_eq(err, "t.yml:1: s: \"text\" is not a byte count (an "
			      "integer with K, M or G)");
	ck_assert_int_eq(eg_yaml_bytes(&y, "m", G("m"), 1, 1024, &sz),
			 EG_EPARSE);
	ck_assert_str_eq(err,
			 "t.yml:3: m: expected bytes (an integer with K, M "
			 "or G)");
	ck_assert(eg_yaml_is_number(G("d"), &d) && d == -25);
	ck_assert(!eg_yaml_is_number(G("q"), &d));
	ck_assert(!eg_yaml_is_number(G("s"), &d));
	ck_assert(!eg_yaml_is_number(G("nan"), &d));
	eg_yaml_fini(&y);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base_yaml");
	TCase *t = tcase_create("reader");

	tcase_add_test(t, load_refuses);
	tcase_add_test(t, depth_limit);
	tcase_add_test(t, size_limit);
	tcase_add_test(t, load_file);
	tcase_add_test(t, read_with_fn);
	tcase_add_test(t, mappings);
	tcase_add_test(t, many_keys);
	tcase_add_test(t, strings_words_lists);
	tcase_add_test(t, numbers);
	suite_add_tcase(s, t);
	return eg_test_main(s);
}
