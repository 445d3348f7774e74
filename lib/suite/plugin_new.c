/* `epgate plugin new NAME` (docs/plugins.md, "A new plugin"): the
 * template's source, as this epgate was built with it (plugins/template/
 * template.c, embedded by the build), renamed NAME and without its
 * planted-fault hooks, into NAME/NAME.c with a Makefile that builds
 * libeg-NAME.so against this epgate's plugin.h: the installed one (its
 * pkg-config file) for an installed epgate, the tree's include/ for one
 * run from its build tree. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/job.h"
#include "lib/suite/plugin_cmd.h"

static const unsigned char eg__tpl[] = {
#include "lib/suite/plugin_template.inc"
    0};

typedef struct eg__buf {
	char *s;
	size_t n, cap;
	int bad;
} eg__buf_t;

static void eg__put(eg__buf_t *b, const char *s, size_t n)
{
	char *t;

	if (b->bad)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;

		if (!(t = realloc(b->s, cap))) {
			b->bad = 1;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* One line with the template's names made the plugin's. */
static void eg__put_line(eg__buf_t *b, const char *line, size_t n,
			 const char *name)
{
	char quoted[80];
	const struct {
		const char *from, *to;
	} rep[] = {
	    {"TPL_V2 && ", ""},
	    {"TPL_SIZE", "sizeof(eg_plugin_t)"},
	    {"TPL_ABI", "EG_PLUGIN_ABI_VERSION"},
	    {"TPL_ENTRY", "eg_plugin_entry"},
	    {"\"epgate-template\"", quoted},
	    {"\"template\"", quoted},
	    {"built with the epgate tree", "made from epgate's template"}};
	size_t i = 0;

	snprintf(quoted, sizeof(quoted), "\"%s\"", name);
	while (i < n) {
		size_t k, len = 0;

		for (k = 0; k < sizeof(rep) / sizeof(rep[0]); k++) {
			len = strlen(rep[k].from);
			if (len <= n - i &&
			    !strncmp(line + i, rep[k].from, len))
				break;
		}
		if (k == sizeof(rep) / sizeof(rep[0])) {
			eg__put(b, line + i++, 1);
			continue;
		}
		eg__put(b, rep[k].to, strlen(rep[k].to));
		i += len;
	}
}

/* A hook of the planted faults: a local #include, or a statement of its
 * own that is one upper-case macro call ("FAULT_KEEP(t, s, i, n);");
 * prev: the last character of the code line before it. */
static int eg__hook(const char *line, size_t n, char prev)
{
	size_t i = strspn(line, " \t"), k = i;

	if (!strncmp(line + i, "#include \"", 10))
		return strncmp(line + i + 10, "epgate/", 7) != 0;
	if (!strchr(";{}/:", prev)) /* a continuation: not a statement */
		return 0;
	while (k < n && ((line[k] >= 'A' && line[k] <= 'Z') ||
			 (line[k] >= '0' && line[k] <= '9') || line[k] == '_'))
		k++;
	while (n > k && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	return k > i && line[k] == '(' && n >= 2 && line[n - 2] == ')' &&
	       line[n - 1] == ';';
}

/* The last character of a line of code (a blank line keeps prev; a
 * preprocessor line counts as a statement's end). */
static char eg__last(const char *line, size_t n, char prev)
{
	size_t i = strspn(line, " \t");

	while (n > i && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	if (n == i)
		return prev;
	return line[i] == '#' ? ';' : line[n - 1];
}

/* The header comment: the plugin's own, then the template's paragraph
 * on its options. */
static void eg__header(eg__buf_t *b, const char *name, const char *opts,
		       size_t n)
{
	char h[1024];

	snprintf(
	    h, sizeof(h),
	    "/* %s: an epgate plugin (docs/plugins.md), written by `epgate "
	    "plugin new\n * %s` from the template of epgate %s: a "
	    "complete EP engine on host\n * memory that needs nothing but "
	    "the bootstrap epgate hands it. Dispatch\n * allgathers every "
	    "rank's input and keeps the tokens routed here;\n * combine "
	    "allgathers every rank's expert outputs and sums each of its\n"
	    " * tokens' rows. Put your library's calls in their place, "
	    "declare what\n * it does in query, and keep `make check` "
	    "passing.\n",
	    name, name, PACKAGE_VERSION);
	eg__put(b, h, strlen(h));
	if (opts) {
		eg__put(b, " *\n", 3);
		eg__put(b, opts, n);
	} else {
		eg__put(b, " */\n", 4);
	}
}

int eg_plugin_skeleton(const char *src, const char *name, char **out, char *err,
		       size_t errlen)
{
	eg__buf_t b = {0};
	const char *end = strstr(src, "*/"), *opts, *s;
	int depth = -1; /* inside #ifndef TPL_WRAPPED: its #if depth */
	char prev = ';';

	*out = NULL;
	if (!end)
		return eg_err_set(err, errlen, EG_EPARSE,
				  "the template has no header comment");
	opts = strstr(src, " * Options:");
	end += strcspn(end, "\n") + 1;
	eg__header(&b, name, opts && opts < end ? opts : NULL,
		   opts && opts < end ? (size_t)(end - opts) : 0);
	for (s = end; *s;) {
		size_t n = strcspn(s, "\n"), t = strspn(s, " \t");

		if (!strncmp(s + t, "#if", 3) && depth >= 0)
			depth++;
		if (!strncmp(s + t, "#ifndef TPL_WRAPPED", 19))
			depth = 0;
		else if (!strncmp(s + t, "#endif", 6) && depth == 0)
			depth = -1;
		else if (depth > 0 && !strncmp(s + t, "#endif", 6) && depth--)
			eg__put_line(&b, s, n + (s[n] == '\n'), name);
		else if (!eg__hook(s, n, prev))
			eg__put_line(&b, s, n + (s[n] == '\n'), name);
		prev = eg__last(s, n, prev);
		s += n + (s[n] == '\n');
	}
	if (b.bad) {
		free(b.s);
		return EG_ENOMEM;
	}
	if ((s = strstr(b.s, "TPL_")) || (s = strstr(b.s, "FAULT_"))) {
		eg_err_set(err, errlen, EG_EPARSE,
			   "the template holds a hook this epgate cannot take "
			   "out: %.*s",
			   (int)strcspn(s, "\n"), s);
		free(b.s);
		return EG_EPARSE;
	}
	*out = b.s;
	return EG_OK;
}

const char *eg_plugin_template_src(void)
{
	return (const char *)eg__tpl;
}
