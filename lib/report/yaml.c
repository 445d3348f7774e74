/* JSON -> YAML through libyaml's emitter, so quoting and escaping are
 * libyaml's, not ours.  The output also has to survive the YAMLish subset
 * that TAP harnesses read (Perl's TAP::Parser::YAMLish): multi-line
 * strings are forced into single-line double-quoted form, keys that are not
 * simple identifiers are double-quoted, and a sequence directly inside a
 * sequence is written in flow style ("- [1, 2]"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "epgate/report.h"

struct eg__ybuf {
	char *p;
	size_t len;
	size_t cap;
};

static int eg__yout(void *data, unsigned char *s, size_t n)
{
	struct eg__ybuf *b = data;

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 1;
}

/* Plain scalars that a YAML 1.1 or 1.2 reader would not take as a string
 * (numbers, booleans, null, empty).  Over-quoting is harmless. */
static int eg__yspecial(const char *s, size_t n)
{
	static const char *const words[] = {
	    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
	};
	size_t i;

	if (n == 0 || strchr("0123456789+-.", s[0]))
		return 1;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == n && !strncasecmp(s, words[i], n))
			return 1;
	return 0;
}

/* Line breaks as libyaml counts them: LF, CR, NEL, LS, PS. */
static int eg__ybreaks(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const unsigned char *u = (const unsigned char *)s + i;

		if (*u == '\n' || *u == '\r')
			return 1;
		if (i + 1 < n && u[0] == 0xc2 && u[1] == 0x85)
			return 1;
		if (i + 2 < n && u[0] == 0xe2 && u[1] == 0x80 &&
		    (u[2] == 0xa8 || u[2] == 0xa9))
			return 1;
	}
	return 0;
}

static int eg__yident(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') ||
			(s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (i = 1; i < n; i++) {
		char c = s[i];

		if (!(c == '_' || c == '-' || c == '.' ||
		      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

static int eg__yscalar(yaml_emitter_t *e, const char *s, size_t n, int is_key,
		       int is_str)
{
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	int plain_ok = 1;
	yaml_event_t ev;

	if (n > 0x7fffffff)
		return 0;
	if (is_str) {
		plain_ok = !eg__yspecial(s, n);
		if (is_key)
			plain_ok = plain_ok && eg__yident(s, n);
		style = YAML_ANY_SCALAR_STYLE;
		if (!plain_ok || eg__ybreaks(s, n))
			style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	}
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL,
					  (yaml_char_t *)(uintptr_t)s, (int)n,
					  plain_ok, is_str, style))
		return 0;
	return yaml_emitter_emit(e, &ev);
}

static void eg__yreal(double d, char *buf, size_t len)
{
	char *e;
	int prec;

	if (isnan(d)) {
		snprintf(buf, len, ".nan");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, len, d > 0 ? ".inf" : "-.inf");
		return;
	}
	/* Shortest form that reads back to the same double. */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (prec == 17)
		snprintf(buf, len, "%.17g", d);
	/* YAML 1.1 floats need a '.' in the mantissa: 1e+20 -> 1.0e+20. */
	if (!strchr(buf, '.')) {
		size_t l = strlen(buf);

		e = strpbrk(buf, "eE");
		if (!e)
			e = buf + l;
		if (l + 3 <= len) {
			memmove(e + 2, e, (size_t)(buf + l - e) + 1);
			e[0] = '.';
			e[1] = '0';
		}
	}
}

static int eg__yemit(yaml_emitter_t *e, json_t *v, int in_seq)
{
	yaml_event_t ev;
	char num[64];
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (!yaml_mapping_start_event_initialize(
			&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		json_object_foreach(v, key, item)
		{
			if (!eg__yscalar(e, key, strlen(key), 1, 1) ||
			    !eg__yemit(e, item, 0))
				return 0;
		}
		if (!yaml_mapping_end_event_initialize(&ev))
			return 0;
		return yaml_emitter_emit(e, &ev);
	case JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(
			&ev, NULL, NULL, 1,
			in_seq ? YAML_FLOW_SEQUENCE_STYLE
			       : YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		json_array_foreach(v, i, item)
		{
			if (!eg__yemit(e, item, 1))
				return 0;
		}
		if (!yaml_sequence_end_event_initialize(&ev))
			return 0;
		return yaml_emitter_emit(e, &ev);
	case JSON_STRING:
		return eg__yscalar(e, json_string_value(v),
				   json_string_length(v), 0, 1);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return eg__yscalar(e, num, strlen(num), 0, 0);
	case JSON_REAL:
		eg__yreal(json_real_value(v), num, sizeof(num));
		return eg__yscalar(e, num, strlen(num), 0, 0);
	case JSON_TRUE:
		return eg__yscalar(e, "true", 4, 0, 0);
	case JSON_FALSE:
		return eg__yscalar(e, "false", 5, 0, 0);
	case JSON_NULL:
		return eg__yscalar(e, "null", 4, 0, 0);
	}
	return 0;
}

/* Copies libyaml's output, dropping document markers, prefixing every
 * line with indent spaces and indenting block sequences that are mapping
 * values by two more: libyaml writes "k:\n- 1", which YAMLish readers
 * take for a sibling of k.  Every line is structural here (no block
 * scalars: multi-line strings are double-quoted), a line ending in ':' is
 * a key whose value follows, and "- " starts a sequence item. */
static char *eg__yindent(const char *src, int indent)
{
	struct eg__ybuf b = {0};
	size_t nopen = 0, lines = 1;
	const char *p, *nl;
	int pend = -1, *open;

	for (p = src; *p; p++)
		lines += *p == '\n';
	open = malloc(lines * sizeof(*open));
	if (!open)
		return NULL;
	for (p = src; *p; p = *nl ? nl + 1 : nl) {
		const char *c, *q;
		int ind = 0, seq, shift, ok = 1;
		size_t l, cl;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		l = (size_t)(nl - p);
		if (l == 3 && (!strncmp(p, "---", 3) || !strncmp(p, "...", 3)))
			continue;
		while ((size_t)ind < l && p[ind] == ' ')
			ind++;
		c = p + ind;
		cl = l - (size_t)ind;
		seq = cl >= 2 && c[0] == '-' && c[1] == ' ';
		while (nopen > 0 && (ind < open[nopen - 1] ||
				     (ind == open[nopen - 1] && !seq)))
			nopen--;
		if (seq && ind == pend)
			open[nopen++] = ind;
		shift = indent + 2 * (int)nopen;
		while (ok && shift-- > 0)
			ok = eg__yout(&b, (unsigned char *)" ", 1);
		if (!ok || !eg__yout(&b, (unsigned char *)(uintptr_t)p, l) ||
		    !eg__yout(&b, (unsigned char *)"\n", 1)) {
			free(b.p);
			b.p = NULL;
			break;
		}
		/* Column of the key on a "k:" or "- - k:" line. */
		pend = -1;
		if (cl > 0 && c[cl - 1] == ':') {
			pend = ind;
			for (q = c; q[0] == '-' && q[1] == ' '; q += 2)
				pend += 2;
		}
	}
	free(open);
	if (!b.p && !*src)
		b.p = calloc(1, 1);
	return b.p;
}

char *eg_json_to_yaml(json_t *obj, int indent)
{
	struct eg__ybuf b = {0};
	yaml_emitter_t e;
	yaml_event_t ev;
	char *out = NULL;
	int ok;

	if (!obj || indent < 0 || indent > 256)
		return NULL;
	if (!yaml_emitter_initialize(&e))
		return NULL;
	yaml_emitter_set_output(&e, eg__yout, &b);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_indent(&e, 2);
	yaml_emitter_set_width(&e, -1); /* never fold long lines */
	yaml_emitter_set_break(&e, YAML_LN_BREAK);

	ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	     yaml_emitter_emit(&e, &ev) &&
	     yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
	     yaml_emitter_emit(&e, &ev) && eg__yemit(&e, obj, 0) &&
	     yaml_document_end_event_initialize(&ev, 1) &&
	     yaml_emitter_emit(&e, &ev) &&
	     yaml_stream_end_event_initialize(&ev) &&
	     yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
	if (ok && b.p)
		out = eg__yindent(b.p, indent);
	yaml_emitter_delete(&e);
	free(b.p);
	return out;
}
