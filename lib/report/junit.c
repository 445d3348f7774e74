/* JUnit XML as Jenkins and GitLab read it, built with libxml2's tree API.
 * The document lives in memory; after every case it is serialized and
 * replaces the file atomically (lib/base/file.c: "<path>.tmp", fsync,
 * rename), so the file on disk is always a complete, valid report of the
 * cases finished so far.
 *
 * Status mapping: FAIL <failure>, ERROR <error>, CRASH <error
 * type="crash">, SKIP <skipped>, TODO a
 * passing testcase with a "TODO: ..." <system-out> note, PASS a bare
 * testcase (details, if any, in <system-out>). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libxml/tree.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/mem.h"
#include "epgate/report.h"

#define EG__X(s) ((const xmlChar *)(s))

struct eg_junit {
	char *path;
	char *name; /* suite name, the default classname */
	xmlDocPtr doc;
	xmlNodePtr suites;
	xmlNodePtr suite;
	int tests, failures, errors, skipped;
	long long ms; /* sum of case times, rounded per case */
};

/* Length of the UTF-8 sequence at s (n bytes left) if it encodes an XML
 * 1.0 Char, else 0. */
static size_t eg__xml_char(const unsigned char *s, size_t n)
{
	unsigned long cp, min;
	size_t len, i;

	if (s[0] < 0x80)
		return (s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' ||
			s[0] == '\r')
			   ? 1
			   : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, min = 0x80, cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, min = 0x800, cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, min = 0x10000, cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

/* Copy of s without bytes that are not XML characters: control
 * characters other than tab/LF/CR, and invalid UTF-8. */
static xmlChar *eg__xml_clean(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0, n = strlen(s);
	xmlChar *out = malloc(n + 1);

	if (!out)
		return NULL;
	while (i < n) {
		size_t l = eg__xml_char(u + i, n - i);

		if (!l) {
			i++;
			continue;
		}
		memcpy(out + o, u + i, l);
		o += l;
		i += l;
	}
	out[o] = '\0';
	return out;
}

/* Sets attribute name to the cleaned value. */
static int eg__xml_prop(xmlNodePtr node, const char *name, const char *v)
{
	xmlChar *c = eg__xml_clean(v);
	int ok;

	if (!c)
		return EG_ENOMEM;
	ok = xmlSetProp(node, EG__X(name), c) != NULL;
	free(c);
	return ok ? 0 : EG_EXML;
}

/* New child element with the cleaned text (NULL: empty element). */
static xmlNodePtr eg__xml_child(xmlNodePtr parent, const char *name,
				const char *text)
{
	xmlChar *c = NULL;
	xmlNodePtr n;

	if (text && !(c = eg__xml_clean(text)))
		return NULL;
	/* xmlNewTextChild escapes, so "]]>", '<' and '&' are safe. */
	n = xmlNewTextChild(parent, NULL, EG__X(name), c);
	free(c);
	return n;
}

static void eg__ms_str(long long ms, char *buf, size_t len)
{
	snprintf(buf, len, "%lld.%03lld", ms / 1000, ms % 1000);
}

static int eg__set_int(xmlNodePtr node, const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return eg__xml_prop(node, name, buf);
}

static int eg__junit_counts(eg_junit_t *j)
{
	xmlNodePtr nodes[2] = {j->suites, j->suite};
	char t[48];
	int i, r = 0;

	eg__ms_str(j->ms, t, sizeof(t));
	for (i = 0; i < 2 && !r; i++) {
		r = eg__set_int(nodes[i], "tests", j->tests);
		r = r ? r : eg__set_int(nodes[i], "failures", j->failures);
		r = r ? r : eg__set_int(nodes[i], "errors", j->errors);
		r = r ? r : eg__set_int(nodes[i], "skipped", j->skipped);
		r = r ? r : eg__xml_prop(nodes[i], "time", t);
	}
	return r;
}

/* Serialize and replace the file atomically (lib/base/file.c). */
static int eg__junit_flush(eg_junit_t *j)
{
	xmlChar *buf = NULL;
	int len = 0, r;

	xmlDocDumpFormatMemoryEnc(j->doc, &buf, &len, "UTF-8", 1);
	if (!buf || len < 0) {
		xmlFree(buf);
		return EG_EXML;
	}
	r = eg_file_write_atomic_buf(j->path, buf, (size_t)len, NULL, 0);
	xmlFree(buf);
	return r;
}

static void eg__junit_free(eg_junit_t *j)
{
	if (!j)
		return;
	if (j->doc)
		xmlFreeDoc(j->doc);
	EG_FREE(j->name, j->path, j);
}

int eg_junit_open(eg_junit_t **jp, const char *path, const char *suite)
{
	char stamp[32], host[256];
	struct tm tm;
	time_t now = time(NULL);
	eg_junit_t *j;
	int r = EG_ENOMEM;

	if (!jp || !path || !*path || !suite)
		return EG_EINVAL;
	*jp = NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return EG_ENOMEM;
	j->path = strdup(path);
	j->name = strdup(suite);
	if (!j->path || !j->name)
		goto fail;

	r = EG_EXML;
	j->doc = xmlNewDoc(EG__X("1.0"));
	if (!j->doc)
		goto fail;
	j->suites = xmlNewDocNode(j->doc, NULL, EG__X("testsuites"), NULL);
	if (!j->suites)
		goto fail;
	xmlDocSetRootElement(j->doc, j->suites);
	j->suite = xmlNewChild(j->suites, NULL, EG__X("testsuite"), NULL);
	if (!j->suite)
		goto fail;

	/* Local time zones are not allowed by the Ant/Jenkins schema's
	 * timestamp; this one is UTC. */
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';

	r = eg__xml_prop(j->suites, "name", suite);
	r = r ? r : eg__xml_prop(j->suite, "name", suite);
	r = r ? r : eg__junit_counts(j);
	r = r ? r : eg__xml_prop(j->suite, "timestamp", stamp);
	r = r ? r : eg__xml_prop(j->suite, "hostname", host);
	/* An empty but valid report exists from the start. */
	r = r ? r : eg__junit_flush(j);
	if (r)
		goto fail;
	*jp = j;
	return 0;
fail:
	eg__junit_free(j);
	return r;
}

/* ---- properties (the evidence, docs/results-v1.md) ----------------- */

int eg_junit_property(eg_junit_t *j, const char *name, const char *value)
{
	xmlNodePtr props = j && j->suite ? j->suite->children : NULL;
	xmlNodePtr p;
	int r;

	if (!j || !name || !*name || !value)
		return EG_EINVAL;
	/* <properties> is the testsuite's first child (the schema's order) */
	if (!props || xmlStrcmp(props->name, EG__X("properties"))) {
		xmlNodePtr n =
		    xmlNewDocNode(j->doc, NULL, EG__X("properties"), NULL);

		if (!n)
			return EG_EXML;
		props = props ? xmlAddPrevSibling(props, n)
			      : xmlAddChild(j->suite, n);
		if (!props)
			return EG_EXML;
	}
	if (!(p = xmlNewChild(props, NULL, EG__X("property"), NULL)))
		return EG_EXML;
	r = eg__xml_prop(p, "name", name);
	r = r ? r : eg__xml_prop(p, "value", value);
	return r ? r : eg__junit_flush(j);
}

int eg_junit_evidence(eg_junit_t *j, const json_t *ev)
{
	const char *k;
	json_t *v;
	char name[256];
	int r = 0;

	json_object_foreach((json_t *)ev, k, v)
	{
		if (!r && json_is_string(v))
			r = eg_junit_property(j, k, json_string_value(v));
	}
	json_object_foreach(json_object_get(ev, "env"), k, v)
	{
		snprintf(name, sizeof(name), "env.%s", k);
		if (!r && json_is_string(v))
			r = eg_junit_property(j, name, json_string_value(v));
	}
	return r;
}

/* 1 if suite already has a testcase classname/name (both cleaned). */
static int eg__junit_has(eg_junit_t *j, const xmlChar *cls, const xmlChar *name)
{
	xmlNodePtr n;

	for (n = j->suite->children; n; n = n->next) {
		xmlChar *c, *m;
		int same;

		if (n->type != XML_ELEMENT_NODE ||
		    xmlStrcmp(n->name, EG__X("testcase")))
			continue;
		c = xmlGetProp(n, EG__X("classname"));
		m = xmlGetProp(n, EG__X("name"));
		same = c && m && !xmlStrcmp(c, cls) && !xmlStrcmp(m, name);
		xmlFree(c);
		xmlFree(m);
		if (same)
			return 1;
	}
	return 0;
}

/* "pre: a\nb" with absent parts (NULL or empty) left out; *need says
 * whether there was anything to join (NULL then means out of memory). */
static char *eg__join(const char *pre, const char *a, const char *b, int *need)
{
	size_t n;
	char *s;

	a = a && *a ? a : NULL;
	b = b && *b ? b : NULL;
	*need = pre || a || b;
	if (!*need)
		return NULL;
	n = strlen(pre ? pre : "") + strlen(a ? a : "") + strlen(b ? b : "") +
	    4;
	s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s%s%s", pre ? pre : "",
			 pre && (a || b) ? ": " : "", a ? a : "",
			 a && b ? "\n" : "", b ? b : "");
	return s;
}

/* Fills testcase tc according to st. */
static int eg__junit_body(xmlNodePtr tc, eg_status_t st, const char *message,
			  const char *details)
{
	const char *tag = st == EG_STATUS_FAIL ? "failure"
			  : st == EG_STATUS_ERROR || st == EG_STATUS_CRASH
			      ? "error"
			      : "skipped";
	xmlNodePtr el;
	char *out;
	int need, r = 0;

	if (st == EG_STATUS_PASS || st == EG_STATUS_TODO) {
		out = eg__join(st == EG_STATUS_TODO ? "TODO (expected failure)"
						    : NULL,
			       message, details, &need);
		if (need && !out)
			return EG_ENOMEM;
		if (out && !eg__xml_child(tc, "system-out", out))
			r = EG_EXML;
		free(out);
		return r;
	}
	el = eg__xml_child(tc, tag, details);
	if (!el)
		return EG_EXML;
	if (message)
		r = eg__xml_prop(el, "message", message);
	if (!r && st != EG_STATUS_SKIP)
		r = eg__xml_prop(el, "type",
				 st == EG_STATUS_CRASH ? "crash" : tag);
	return r;
}

int eg_junit_case(eg_junit_t *j, const char *classname, const char *name,
		  double time_s, eg_status_t st, const char *message,
		  const char *details)
{
	xmlChar *cls = NULL, *nm = NULL, *uniq = NULL;
	xmlNodePtr tc = NULL;
	char t[48];
	long long ms = 0;
	int r = EG_ENOMEM, k;

	if (!j || !name || st < EG_STATUS_PASS || st > EG_STATUS_CRASH)
		return EG_EINVAL;
	/* classname is required by the schema; default to the suite. */
	cls = eg__xml_clean(classname && *classname ? classname : j->name);
	nm = eg__xml_clean(name);
	if (!cls || !nm)
		goto out;
	r = EG_EINVAL; /* the schema needs a name */
	if (!*nm)
		goto out;
	r = EG_ENOMEM;
	/* GitLab keeps only the first of duplicate names; keep all. */
	uniq = xmlStrdup(nm);
	for (k = 2; uniq && eg__junit_has(j, cls, uniq); k++) {
		char sfx[24];

		xmlFree(uniq);
		snprintf(sfx, sizeof(sfx), " (%d)", k);
		uniq = xmlStrncatNew(nm, EG__X(sfx), -1);
	}
	if (!uniq)
		goto out;

	if (time_s > 0 && time_s < 1e12)
		ms = (long long)(time_s * 1000.0 + 0.5);
	eg__ms_str(ms, t, sizeof(t));

	r = EG_EXML;
	tc = xmlNewChild(j->suite, NULL, EG__X("testcase"), NULL);
	if (!tc || !xmlSetProp(tc, EG__X("classname"), cls) ||
	    !xmlSetProp(tc, EG__X("name"), uniq) ||
	    !xmlSetProp(tc, EG__X("time"), EG__X(t)))
		goto out;
	r = eg__junit_body(tc, st, message, details);
	if (r)
		goto out;
	j->tests++;
	j->failures += st == EG_STATUS_FAIL;
	j->errors += st == EG_STATUS_ERROR || st == EG_STATUS_CRASH;
	j->skipped += st == EG_STATUS_SKIP;
	j->ms += ms;
	tc = NULL; /* now part of the report */
	r = eg__junit_counts(j);
	if (!r)
		r = eg__junit_flush(j);
out:
	if (tc) {
		xmlUnlinkNode(tc);
		xmlFreeNode(tc);
	}
	xmlFree(uniq);
	EG_FREE(nm, cls);
	return r;
}

int eg_junit_close(eg_junit_t *j)
{
	int r;

	if (!j)
		return EG_EINVAL;
	/* Normally a no-op rewrite; retries a write that failed earlier. */
	r = eg__junit_flush(j);
	eg__junit_free(j);
	return r;
}
