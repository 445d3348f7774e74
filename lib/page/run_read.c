/* A run folder as the page shows it: summary.json (what `epgate run`
 * says of itself), every JUnit file (a suite's counts, and each failed
 * or errored case with its diagnosis and repro line), and the results
 * files (bench-*.json), grouped by profile. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "lib/page/page.h"

#define EG__X(s) ((const xmlChar *)(s))

static unsigned eg__attr_u(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, EG__X(name));
	unsigned u = v ? (unsigned)strtoul((const char *)v, NULL, 10) : 0;

	xmlFree(v);
	return u;
}

static char *eg__attr_s(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, EG__X(name));
	char *s = strdup(v ? (const char *)v : "");

	xmlFree(v);
	return s;
}

static int eg__attr_is(xmlNodePtr n, const char *name, const char *want)
{
	xmlChar *v = xmlGetProp(n, EG__X(name));
	int is = v && !strcmp((const char *)v, want);

	xmlFree(v);
	return is;
}

/* The line that reproduces a failure: "repro: CMD" in the text, or the
 * "repro" member of JSON diagnostics. */
static char *eg__repro(const char *body)
{
	json_error_t je;
	json_t *j;
	char *r = NULL;

	for (const char *s = body; s && *s; s = strchr(s, '\n') + 1) {
		const char *t = s + strspn(s, " ");

		if (!strncmp(t, "repro: ", 7))
			return strndup(t + 7, strcspn(t + 7, "\n"));
		if (!strchr(s, '\n'))
			break;
	}
	j = body ? json_loads(body, 0, &je) : NULL;
	if (json_is_string(json_object_get(j, "repro")))
		r = strdup(json_string_value(json_object_get(j, "repro")));
	json_decref(j);
	return r;
}

static int eg__fail_add(eg__page_t *pg, const char *suite, xmlNodePtr tc,
			xmlNodePtr el)
{
	eg__fail_t *f = eg__page_push(&pg->fails, pg->n_fails, sizeof(*f));
	xmlChar *body;

	if (!f)
		return EG_ENOMEM;
	pg->n_fails++;
	body = xmlNodeGetContent(el);
	f->suite = strdup(suite);
	f->cls = eg__attr_s(tc, "classname");
	f->name = eg__attr_s(tc, "name");
	f->message = eg__attr_s(el, "message");
	f->body = strdup(body ? (const char *)body : "");
	f->repro = eg__repro(f->body);
	f->error = !xmlStrcmp(el->name, EG__X("error"));
	f->crash = f->error && eg__attr_is(el, "type", "crash");
	xmlFree(body);
	return f->suite && f->cls && f->name && f->message && f->body
		   ? EG_OK
		   : EG_ENOMEM;
}

/* A gate's inconclusive verdict, as lib/gate/run.c reports it: a
 * skipped case whose message says so. */
static unsigned eg__inconclusive(xmlNodePtr skipped)
{
	char *m = eg__attr_s(skipped, "message");
	unsigned yes = m && !strncmp(m, "INCONCLUSIVE: ", 14);

	free(m);
	return yes;
}

/* One <testsuite>: its counts into s, its failures into the page. */
static int eg__testsuite(eg__page_t *pg, xmlNodePtr ts, eg__jsuite_t *s)
{
	char *name = eg__attr_s(ts, "name");
	int rc = name ? EG_OK : EG_ENOMEM;

	if (name && !s->name[0])
		snprintf(s->name, sizeof(s->name), "%s", name);
	s->tests += eg__attr_u(ts, "tests");
	s->failures += eg__attr_u(ts, "failures");
	s->errors += eg__attr_u(ts, "errors");
	s->skipped += eg__attr_u(ts, "skipped");
	for (xmlNodePtr tc = ts->children; !rc && tc; tc = tc->next) {
		if (tc->type != XML_ELEMENT_NODE ||
		    xmlStrcmp(tc->name, EG__X("testcase")))
			continue;
		for (xmlNodePtr el = tc->children; !rc && el; el = el->next) {
			if (el->type != XML_ELEMENT_NODE)
				continue;
			if (!xmlStrcmp(el->name, EG__X("failure")) ||
			    !xmlStrcmp(el->name, EG__X("error"))) {
				rc = eg__fail_add(pg, name, tc, el);
				s->crashed +=
				    !rc && pg->fails[pg->n_fails - 1].crash;
			} else if (!xmlStrcmp(el->name, EG__X("skipped")))
				s->inconclusive += eg__inconclusive(el);
		}
	}
	free(name);
	return rc;
}

static int eg__junit(eg__page_t *pg, const char *dir, const char *file)
{
	char path[4400];
	xmlDocPtr doc;
	xmlNodePtr root;
	eg__jsuite_t *s = eg__page_push(&pg->js, pg->n_js, sizeof(*s));
	int rc = EG_OK;

	if (!s)
		return EG_ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	doc = xmlReadFile(path, NULL,
			  XML_PARSE_NONET | XML_PARSE_NOWARNING |
			      XML_PARSE_NOERROR);
	root = doc ? xmlDocGetRootElement(doc) : NULL;
	if (!root) { /* a report being written, or not JUnit: not a suite */
		xmlFreeDoc(doc);
		return EG_OK;
	}
	snprintf(s->file, sizeof(s->file), "%s", file);
	snprintf(path, sizeof(path), "%s/%.*s.tap", dir,
		 (int)(strlen(file) - strlen(".junit.xml")), file);
	if (access(path, R_OK) == 0)
		snprintf(s->tap, sizeof(s->tap), "%s", strrchr(path, '/') + 1);
	if (!xmlStrcmp(root->name, EG__X("testsuite")))
		rc = eg__testsuite(pg, root, s);
	for (xmlNodePtr n = root->children; !rc && n; n = n->next)
		if (n->type == XML_ELEMENT_NODE &&
		    !xmlStrcmp(n->name, EG__X("testsuite")))
			rc = eg__testsuite(pg, n, s);
	xmlFreeDoc(doc);
	pg->n_js++;
	return rc;
}

static int eg__ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a > b && !strcmp(s + a - b, suffix);
}

/* L1 and L2 first, as `epgate run` runs them; the gates last. */
static int eg__rank(const char *name)
{
	static const char *const order[] = {
	    "l1.", "l2.", "check.", "epgate.", "gate.", "bench-gates.", NULL};
	int i = 0;

	while (order[i] && strncmp(name, order[i], strlen(order[i])))
		i++;
	return i;
}

static int eg__cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int d = eg__rank(x) - eg__rank(y);

	return d ? d : strcmp(x, y);
}

/* A name starting with fix[0] and ending in fix[1]. */
static int eg__keep(const char *dir, const char *name, void *arg)
{
	const char *const *fix = arg;

	(void)dir;
	return !strncmp(name, fix[0], strlen(fix[0])) && eg__ends(name, fix[1]);
}

/* The folder's file names ending in suffix (starting with prefix),
 * sorted. */
static int eg__list(const char *dir, const char *prefix, const char *suffix,
		    char ***out, size_t *n)
{
	const char *fix[2] = {prefix, suffix};

	return eg_file_names(dir, eg__keep, fix, eg__cmp, out, n);
}

void eg__page_results_profile(const eg_results_t *r, char *out, size_t len)
{
	const char *p =
	    json_string_value(json_object_get(r->context, "profile"));
	const char *base =
	    strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 : r->path;
	char *dot;

	if (p && *p) {
		snprintf(out, len, "%s", p);
		return;
	}
	snprintf(out, len, "%s", strncmp(base, "bench-", 6) ? base : base + 6);
	if ((dot = strstr(out, ".json")))
		*dot = '\0';
	if ((dot = strstr(out, ".w")) && dot[2] >= '0' && dot[2] <= '9')
		*dot = '\0';
}

int eg__page_add_results(eg__page_t *pg, eg_results_t *r, const char *profile)
{
	char name[128];
	eg__prof_t *p;
	eg_results_t *c;
	size_t i;

	if (profile)
		snprintf(name, sizeof(name), "%s", profile);
	else
		eg__page_results_profile(r, name, sizeof(name));
	for (i = 0; i < pg->n_prof && strcmp(pg->prof[i].name, name); i++)
		;
	if (i == pg->n_prof) {
		if (!(p = eg__page_push(&pg->prof, pg->n_prof, sizeof(*p))))
			return EG_ENOMEM;
		snprintf(p->name, sizeof(p->name), "%s", name);
		pg->n_prof++;
	}
	p = &pg->prof[i];
	c = realloc(p->cur, (p->n_cur + 1) * sizeof(*c));
	if (!c)
		return EG_ENOMEM;
	p->cur = c;
	p->cur[p->n_cur++] = *r; /* moved: the page frees it */
	memset(r, 0, sizeof(*r));
	return EG_OK;
}

/* Is name one of the n claimed? */
static int eg__claimed(char *const *claimed, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(claimed[i], name))
			return 1;
	return 0;
}

/* The results files of the folder, each to its profile (those a gate
 * run's record judged are its profile's already). */
static int eg__results(eg__page_t *pg, const char *dir, char *const *claimed,
		       size_t n_claimed, char *err, size_t len)
{
	char **names, path[4400];
	size_t n;
	int rc = eg__list(dir, "bench-", ".json", &names, &n);

	for (size_t i = 0; !rc && i < n; i++) {
		eg_results_t r;

		if (eg__ends(names[i], ".judged.json") ||
		    eg__claimed(claimed, n_claimed, names[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = eg_results_read(&r, path, err, len);
		if (!rc) {
			rc = eg__page_add_results(pg, &r, NULL);
			eg_results_free(&r);
		}
	}
	eg_file_names_free(names, n);
	return rc;
}

int eg__run_read(eg__page_t *pg, const char *dir, char *err, size_t len)
{
	char path[4400], **names;
	json_error_t je;
	size_t n;
	int rc;

	snprintf(pg->run_dir, sizeof(pg->run_dir), "%s", dir);
	if (access(dir, R_OK | X_OK)) {
		snprintf(err, len, "%s: not a readable run folder", dir);
		return EG_ENOENT;
	}
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	if (access(path, R_OK) == 0 &&
	    !(pg->summary = json_load_file(path, 0, &je))) {
		snprintf(err, len, "%s:%d:%d: malformed JSON: %s", path,
			 je.line, je.column, je.text);
		return EG_EPARSE;
	}
	rc = eg__list(dir, "", ".junit.xml", &names, &n);
	for (size_t i = 0; !rc && i < n; i++)
		rc = eg__junit(pg, dir, names[i]);
	eg_file_names_free(names, n);
	if (!rc)
		rc = eg__run_judged(pg, dir, &names, &n);
	if (!rc) {
		rc = eg__results(pg, dir, names, n, err, len);
		eg_file_names_free(names, n);
	}
	if (rc == EG_ENOMEM)
		snprintf(err, len, "out of memory");
	return rc;
}
