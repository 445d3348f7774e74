/* The strict YAML reader (include/epgate/yaml_reader.h): loading with
 * its limits, errors, and the document's structure.  The typed scalar
 * getters are in yaml_scalar.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/yaml_reader.h"

int eg_yaml_line(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 1;
}

static int eg__verr(eg_yaml_t *y, int line, const char *fmt, va_list ap)
{
	char msg[768];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (y->err && y->errlen)
		snprintf(y->err, y->errlen, "%s:%d: %s", y->name, line, msg);
	return EG_EPARSE;
}

int eg_yaml_err(eg_yaml_t *y, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = eg__verr(y, eg_yaml_line(n), fmt, ap);
	va_end(ap);
	return rc;
}

int eg_yaml_err_at(eg_yaml_t *y, int line, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = eg__verr(y, line, fmt, ap);
	va_end(ap);
	return rc;
}

/* libyaml's own words, with where it started looking when that is
 * another line. */
static int eg__syntax(eg_yaml_t *y, const yaml_parser_t *p)
{
	char where[48] = "";

	if (p->context && p->context_mark.line != p->problem_mark.line)
		snprintf(where, sizeof(where), " (from line %zu)",
			 p->context_mark.line + 1);
	return eg_yaml_err_at(
	    y, (int)p->problem_mark.line + 1, "YAML syntax: %s%s%s%s",
	    p->problem ? p->problem : "error", p->context ? " " : "",
	    p->context ? p->context : "", where);
}

static int eg__node_event(yaml_event_type_t t)
{
	return t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
	       t == YAML_MAPPING_START_EVENT || t == YAML_ALIAS_EVENT;
}

/* One event of the scan: depth, documents and aliases.  1 at the end of
 * the stream. */
static int eg__scan_event(eg_yaml_t *y, const yaml_event_t *e, int *depth,
			  int *docs, const char *what)
{
	int line = (int)e->start_mark.line + 1;

	if (e->type == YAML_STREAM_END_EVENT)
		return 1;
	if (e->type == YAML_DOCUMENT_START_EVENT)
		++*docs;
	if (*docs > 1 && eg__node_event(e->type))
		return eg_yaml_err_at(
		    y, line, "a second YAML document; a %s holds one", what);
	if (e->type == YAML_ALIAS_EVENT)
		return eg_yaml_err_at(y, line,
				      "YAML aliases (*name) are not supported");
	if (e->type == YAML_SEQUENCE_START_EVENT ||
	    e->type == YAML_MAPPING_START_EVENT) {
		if (++*depth > EG_YAML_MAX_DEPTH)
			return eg_yaml_err_at(y, line,
					      "nested deeper than %d levels",
					      EG_YAML_MAX_DEPTH);
	} else if (e->type == YAML_SEQUENCE_END_EVENT ||
		   e->type == YAML_MAPPING_END_EVENT) {
		--*depth;
	}
	return 0;
}

/* The event stream, before any document is built: syntax, depth,
 * aliases and a second document stop it where they stand, so a hostile
 * file costs no more than its first EG_YAML_MAX_DEPTH levels. */
static int eg__scan(eg_yaml_t *y, const char *text, size_t len,
		    const char *what)
{
	yaml_parser_t p;
	yaml_event_t e;
	int depth = 0, docs = 0, rc = 0;

	if (!yaml_parser_initialize(&p))
		return EG_ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!rc) {
		if (!yaml_parser_parse(&p, &e)) {
			rc = eg__syntax(y, &p);
			break;
		}
		rc = eg__scan_event(y, &e, &depth, &docs, what);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return rc < 0 ? rc : 0;
}

/* Line of byte offset off in text. */
static int eg__line_of(const char *text, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

int eg_yaml_parse(eg_yaml_t *y, const char *text, size_t len, const char *name,
		  const char *what, char *err, size_t errlen)
{
	yaml_parser_t p;
	int rc;

	memset(y, 0, sizeof(*y));
	snprintf(y->name, sizeof(y->name), "%s", name);
	y->err = err;
	y->errlen = errlen;
	if (len > EG_YAML_MAX_BYTES)
		return eg_yaml_err_at(
		    y, eg__line_of(text, EG_YAML_MAX_BYTES),
		    "larger than %zu bytes, the limit for a %s",
		    EG_YAML_MAX_BYTES, what);
	if ((rc = eg__scan(y, text, len, what)))
		return rc;
	if (!yaml_parser_initialize(&p))
		return EG_ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &y->doc))
		rc = eg__syntax(y, &p); /* the scan saw none: memory */
	yaml_parser_delete(&p);
	if (rc)
		return rc;
	y->loaded = 1;
	if (!yaml_document_get_root_node(&y->doc)) {
		eg_yaml_fini(y);
		return eg_yaml_err_at(y, 1, "empty %s", what);
	}
	return 0;
}

int eg_yaml_load(eg_yaml_t *y, const char *path, const char *what, char *err,
		 size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	memset(y, 0, sizeof(*y));
	rc = eg_file_read(path, EG_YAML_MAX_BYTES, &text, &len, err, errlen);
	if (rc == EG_ERANGE) {
		snprintf(err, errlen,
			 "%s:1: larger than %zu bytes, the limit "
			 "for a %s",
			 path, EG_YAML_MAX_BYTES, what);
		return EG_EPARSE;
	}
	if (rc < 0)
		return rc;
	rc = eg_yaml_parse(y, text, len, path, what, err, errlen);
	free(text);
	return rc;
}

void eg_yaml_fini(eg_yaml_t *y)
{
	if (y && y->loaded) {
		yaml_document_delete(&y->doc);
		y->loaded = 0;
	}
}

yaml_node_t *eg_yaml_root(eg_yaml_t *y)
{
	return y->loaded ? yaml_document_get_root_node(&y->doc) : NULL;
}

int eg_yaml_read(const char *text, size_t len, const char *name,
		 const char *what, eg_yaml_fn fn, void *arg, char *err,
		 size_t errlen)
{
	eg_yaml_t y;
	int rc = text ? eg_yaml_parse(&y, text, len, name, what, err, errlen)
		      : eg_yaml_load(&y, name, what, err, errlen);

	if (rc)
		return rc;
	rc = fn(&y, eg_yaml_root(&y), arg);
	eg_yaml_fini(&y);
	return rc;
}

/* ---- structure ---------------------------------------------------------- */

size_t eg_yaml_len(const yaml_node_t *n)
{
	if (n && n->type == YAML_SEQUENCE_NODE)
		return (size_t)(n->data.sequence.items.top -
				n->data.sequence.items.start);
	if (n && n->type == YAML_MAPPING_NODE)
		return (size_t)(n->data.mapping.pairs.top -
				n->data.mapping.pairs.start);
	return 0;
}

yaml_node_t *eg_yaml_item(eg_yaml_t *y, const yaml_node_t *seq, size_t i)
{
	return yaml_document_get_node(&y->doc,
				      seq->data.sequence.items.start[i]);
}

yaml_node_t *eg_yaml_key(eg_yaml_t *y, const yaml_node_t *map, size_t i)
{
	return yaml_document_get_node(&y->doc,
				      map->data.mapping.pairs.start[i].key);
}

yaml_node_t *eg_yaml_value(eg_yaml_t *y, const yaml_node_t *map, size_t i)
{
	return yaml_document_get_node(&y->doc,
				      map->data.mapping.pairs.start[i].value);
}

const char *eg_yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		   ? (const char *)n->data.scalar.value
		   : NULL;
}

int eg_yaml_plain(const yaml_node_t *n)
{
	return eg_yaml_scalar(n) &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

yaml_node_t *eg_yaml_get(eg_yaml_t *y, const yaml_node_t *map, const char *key)
{
	for (size_t i = 0; i < eg_yaml_len(map); i++) {
		const char *k = eg_yaml_scalar(eg_yaml_key(y, map, i));

		if (k && !strcmp(k, key))
			return eg_yaml_value(y, map, i);
	}
	return NULL;
}

const char *eg_yaml_words(const char *const *words, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; words[i]; i++) {
		strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
		strncat(buf, words[i], len - strlen(buf) - 1);
	}
	return buf;
}

typedef struct eg__key {
	const char *k;
	size_t i;
} eg__key_t;

static int eg__key_cmp(const void *a, const void *b)
{
	const eg__key_t *x = a, *y = b;
	int c = strcmp(x->k, y->k);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The first of the first cnt keys (in document order) that repeats an
 * earlier one, or (size_t)-1; *first = that earlier one.  Sorted, so a
 * mapping of many keys costs n log n, not n^2. */
static size_t eg__first_repeat(eg_yaml_t *y, const yaml_node_t *n, size_t cnt,
			       size_t *first, int *nomem)
{
	size_t rep = (size_t)-1, g = 0;
	eg__key_t *keys = calloc(cnt ? cnt : 1, sizeof(*keys));

	*nomem = !keys;
	if (!keys)
		return rep;
	for (size_t i = 0; i < cnt; i++)
		keys[i] = (eg__key_t){eg_yaml_scalar(eg_yaml_key(y, n, i)), i};
	qsort(keys, cnt, sizeof(*keys), eg__key_cmp);
	for (size_t i = 1; i < cnt; i++) {
		if (strcmp(keys[i].k, keys[g].k)) {
			g = i;
		} else if (keys[i].i < rep) {
			rep = keys[i].i;
			*first = keys[g].i;
		}
	}
	free(keys);
	return rep;
}

int eg_yaml_mapping(eg_yaml_t *y, const char *what, const yaml_node_t *n)
{
	const char *pre = what ? what : "", *sep = what ? ": " : "";
	size_t cnt = eg_yaml_len(n), bad = 0, rep, first = 0;
	int nomem;

	if (n->type != YAML_MAPPING_NODE)
		return eg_yaml_err(y, n, "%s%sexpected a mapping", pre, sep);
	while (bad < cnt && eg_yaml_scalar(eg_yaml_key(y, n, bad)))
		bad++;
	/* in document order: a repeat before the first bad key wins */
	rep = eg__first_repeat(y, n, bad, &first, &nomem);
	if (nomem)
		return EG_ENOMEM;
	if (rep != (size_t)-1)
		return eg_yaml_err(y, eg_yaml_key(y, n, rep),
				   "key \"%s\" repeats line %d",
				   eg_yaml_scalar(eg_yaml_key(y, n, rep)),
				   eg_yaml_line(eg_yaml_key(y, n, first)));
	if (bad < cnt)
		return eg_yaml_err(y, eg_yaml_key(y, n, bad),
				   "%s%skeys must be plain words", pre, sep);
	return 0;
}

int eg_yaml_keys(eg_yaml_t *y, const char *what, const yaml_node_t *n,
		 const char *const *allowed)
{
	char list[512];
	int rc = eg_yaml_mapping(y, what, n);

	for (size_t i = 0; !rc && i < eg_yaml_len(n); i++) {
		yaml_node_t *k = eg_yaml_key(y, n, i);
		const char *const *a = allowed;

		while (*a && strcmp(*a, eg_yaml_scalar(k)))
			a++;
		if (!*a)
			rc = eg_yaml_err(
			    y, k, "%s%sunknown key \"%s\" (%s)",
			    what ? what : "", what ? ": " : "",
			    eg_yaml_scalar(k),
			    eg_yaml_words(allowed, list, sizeof(list)));
	}
	return rc;
}
