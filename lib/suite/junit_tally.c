/* A JUnit report read back (the run's summary takes its counts and
 * failures from the very reports it names, so the two cannot disagree):
 * every testcase counted as passed, failed, error (a crash among them)
 * or skipped, and each failure or error as {"kind": fail, error or
 * crash, "case", "message", "repro"}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "epgate/error.h"

#include "lib/suite/run_report.h"

static xmlNode *eg__child(xmlNode *n, const char *name)
{
	for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    !strcmp((const char *)c->name, name))
			return c;
	return NULL;
}

/* The repro line of a case's text: "repro: CMD" (L1) or a JSON diag's
 * "repro" (L2); NULL when there is none. */
static char *eg__repro(const char *text)
{
	const char *at = text ? strstr(text, "repro: ") : NULL;
	json_t *j;
	char *out = NULL;

	if (at && (at == text || at[-1] == '\n'))
		return strndup(at + 7, strcspn(at + 7, "\n"));
	if (!text || !(j = json_loads(text, 0, NULL)))
		return NULL;
	if (json_is_string(json_object_get(j, "repro")))
		out = strdup(json_string_value(json_object_get(j, "repro")));
	json_decref(j);
	return out;
}

/* One failure or error: appended to failures (up to max). */
static void eg__failure(json_t *failures, size_t max, xmlNode *tc, xmlNode *f,
			const char *kind)
{
	xmlChar *name = xmlGetProp(tc, (const xmlChar *)"name");
	xmlChar *cls = xmlGetProp(tc, (const xmlChar *)"classname");
	xmlChar *msg = xmlGetProp(f, (const xmlChar *)"message");
	xmlChar *text = xmlNodeGetContent(f);
	char *repro = eg__repro((const char *)text);
	json_t *o;

	if (json_array_size(failures) < max &&
	    (o = json_pack("{s:s, s:s, s:s, s:s}", "kind", kind, "class",
			   cls ? (const char *)cls : "", "case",
			   name ? (const char *)name : "", "message",
			   msg ? (const char *)msg : ""))) {
		if (repro)
			json_object_set_new(o, "repro", json_string(repro));
		json_array_append_new(failures, o);
	}
	free(repro);
	xmlFree(name);
	xmlFree(cls);
	xmlFree(msg);
	xmlFree(text);
}

static void eg__cases(xmlNode *n, eg_tally_t *t, json_t *failures, size_t max)
{
	for (xmlNode *c = n; c; c = c->next) {
		xmlNode *f;

		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (strcmp((const char *)c->name, "testcase")) {
			eg__cases(c->children, t, failures, max);
			continue;
		}
		if ((f = eg__child(c, "failure"))) {
			t->failed++;
			eg__failure(failures, max, c, f, "fail");
		} else if ((f = eg__child(c, "error"))) {
			xmlChar *ty = xmlGetProp(f, (const xmlChar *)"type");
			int crash = ty && !strcmp((const char *)ty, "crash");

			t->errors++;
			t->crashed += crash;
			eg__failure(failures, max, c, f,
				    crash ? "crash" : "error");
			xmlFree(ty);
		} else if ((f = eg__child(c, "skipped"))) {
			xmlChar *m = xmlGetProp(f, (const xmlChar *)"message");

			if (m && !strncmp((const char *)m, "INCONCLUSIVE", 12))
				t->inconclusive++;
			else
				t->skipped++;
			xmlFree(m);
		} else {
			t->passed++;
		}
	}
}

int eg_junit_tally(const char *path, eg_tally_t *t, json_t *failures,
		   size_t max)
{
	xmlDoc *doc;

	memset(t, 0, sizeof(*t));
	doc = xmlReadFile(path, NULL,
			  XML_PARSE_NONET | XML_PARSE_NOERROR |
			      XML_PARSE_NOWARNING);
	if (!doc)
		return EG_EPARSE;
	eg__cases(xmlDocGetRootElement(doc), t, failures, max);
	xmlFreeDoc(doc);
	return EG_OK;
}
