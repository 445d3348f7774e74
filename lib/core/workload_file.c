/* Workload files (INI, parsed by inih). Keys before the first [section]
 * are defaults; each section is one workload named after it.
 *
 * inih reports only key/value pairs, so the file is fed to it through our
 * own line reader: that reader counts lines, sees section headers (to
 * catch duplicates and empty sections and to remember where each one
 * starts), drops leading blanks (no continuation lines: indentation means
 * nothing) and cuts blank-preceded '#' comments. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "epgate/error.h"
#include "epgate/workload.h"

#define EG__ERR_LEN  (EG_ERRMSG_MAX + 512)
#define EG__LINE_MAX 1024

struct eg__section {
	int line; /* of the [header]; 0 for the defaults-only workload */
	char raw[EG_NAME_MAX];
};

struct eg__ctx {
	FILE *f;
	int lineno;
	int read_errno;
	eg_workload_t defaults;
	eg_workload_t *items;
	struct eg__section *secs;
	size_t n, cap;
	int err_line, err_rc; /* first error of ours; 0 = none */
	char err_msg[EG_ERRMSG_MAX + 128];
};

static void eg__ctx_error(struct eg__ctx *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void eg__ctx_error(struct eg__ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->err_line)
		return;
	c->err_line = c->lineno;
	c->err_rc = rc;
	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof(c->err_msg), fmt, ap);
	va_end(ap);
}

static int eg__push(struct eg__ctx *c, const char *name, int line)
{
	char msg[EG_ERRMSG_MAX];
	eg_workload_t *w;
	int rc;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		eg_workload_t *items = realloc(c->items, cap * sizeof(*items));
		struct eg__section *secs;

		if (!items)
			return EG_ENOMEM;
		c->items = items;
		secs = realloc(c->secs, cap * sizeof(*secs));
		if (!secs)
			return EG_ENOMEM;
		c->secs = secs;
		c->cap = cap;
	}
	w = &c->items[c->n];
	rc = eg_workload_copy(w, &c->defaults);
	if (rc)
		return rc;
	if (name) {
		rc = eg_workload_set(w, "name", name, msg);
		if (rc) {
			eg_workload_fini(w);
			eg__ctx_error(c, rc, "[%s]: section %s", name, msg);
			return rc;
		}
	}
	c->secs[c->n].line = line;
	snprintf(c->secs[c->n].raw, sizeof(c->secs[c->n].raw), "%s", w->name);
	c->n++;
	return 0;
}

/* A "[name]" line: a new workload, unless the name is taken. */
static void eg__section_start(struct eg__ctx *c, const char *line)
{
	char name[EG__LINE_MAX];
	const char *end = strchr(line, ']');
	size_t len;

	if (!end)
		return; /* inih reports the malformed header */
	len = (size_t)(end - line - 1);
	memcpy(name, line + 1, len);
	name[len] = '\0';
	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->secs[i].raw, name)) {
			eg__ctx_error(c, EG_EPARSE,
				      "duplicate section [%s] (first at line "
				      "%d)",
				      c->secs[i].raw, c->secs[i].line);
			return;
		}
	}
	if (eg__push(c, name, c->lineno) == EG_ENOMEM)
		eg__ctx_error(c, EG_ENOMEM, "out of memory");
}

/* fgets-style reader handed to inih: one call, one line. */
static char *eg__reader(char *str, int num, void *stream)
{
	struct eg__ctx *c = stream;
	char line[EG__LINE_MAX];
	char *s = line, *p;
	size_t n;
	int ch;

	if (c->err_line) /* our first error ends the parse */
		return NULL;
	if (!fgets(line, sizeof(line), c->f)) {
		if (ferror(c->f))
			c->read_errno = errno ? errno : EIO;
		return NULL;
	}
	c->lineno++;
	n = strlen(line);
	if (n && line[n - 1] != '\n' && !feof(c->f)) {
		while ((ch = fgetc(c->f)) != EOF && ch != '\n')
			;
		n = sizeof(line);
	}
	while (*s == ' ' || *s == '\t')
		s++;
	for (p = s; *p; p++) {
		if (*p == '#' && p > s && (p[-1] == ' ' || p[-1] == '\t')) {
			p[0] = '\n';
			p[1] = '\0';
			break;
		}
	}
	if (n >= sizeof(line) - 1 || strlen(s) >= (size_t)num) {
		eg__ctx_error(c, EG_EPARSE, "line is longer than %d characters",
			      num - 2);
		return NULL;
	}
	if (*s == '[')
		eg__section_start(c, s);
	memcpy(str, s, strlen(s) + 1);
	return str;
}

static int eg__handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct eg__ctx *c = user;
	char msg[EG_ERRMSG_MAX];
	eg_workload_t *w = &c->defaults;
	int rc;

	if (c->err_line)
		return 0;
	if (*section) {
		/* inih truncates long section names: compare its prefix */
		if (!c->n ||
		    strncmp(section, c->secs[c->n - 1].raw, strlen(section))) {
			eg__ctx_error(c, EG_EPARSE,
				      "section [%s] was not recognised",
				      section);
			return 0;
		}
		w = &c->items[c->n - 1];
	}
	rc = eg_workload_set(w, name, value, msg);
	if (rc) {
		eg__ctx_error(c, rc, "%s", msg);
		return 0;
	}
	return 1;
}

static void eg__ctx_free(struct eg__ctx *c)
{
	for (size_t i = 0; i < c->n; i++)
		eg_workload_fini(&c->items[i]);
	free(c->items);
	free(c->secs);
	eg_workload_fini(&c->defaults);
}

/* Every workload valid, every name unique. */
static int eg__check_all(struct eg__ctx *c, const char *path, char *err)
{
	char msg[EG_ERRMSG_MAX], at[32] = "";

	for (size_t i = 0; i < c->n; i++) {
		const eg_workload_t *w = &c->items[i];
		int rc = eg_workload_validate(w, msg);

		if (c->secs[i].line)
			snprintf(at, sizeof(at), ":%d", c->secs[i].line);
		if (rc) {
			snprintf(err, EG__ERR_LEN, "%s%s: [%s]: %s", path, at,
				 c->secs[i].raw, msg);
			return rc;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(w->name, c->items[j].name))
				continue;
			snprintf(err, EG__ERR_LEN,
				 "%s%s: [%s]: duplicate workload name \"%s\" "
				 "(also [%s] at line %d)",
				 path, at, c->secs[i].raw, w->name,
				 c->secs[j].raw, c->secs[j].line);
			return EG_EINVAL;
		}
	}
	return 0;
}

int eg_workload_load(const char *path, eg_workload_list_t *out,
		     char err[EG_ERRMSG_MAX + 512])
{
	struct eg__ctx c;
	char dummy[EG__ERR_LEN];
	int ret, rc = 0;

	if (!err)
		err = dummy;
	err[0] = '\0';
	out->items = NULL;
	out->n = 0;
	memset(&c, 0, sizeof(c));
	eg_workload_init(&c.defaults);
	c.f = fopen(path, "r");
	if (!c.f) {
		int e = errno;

		snprintf(err, EG__ERR_LEN, "%s: cannot open: %s", path,
			 strerror(e));
		return e == ENOENT ? EG_ENOENT : EG_EIO;
	}
	ret = ini_parse_stream(eg__reader, &c, eg__handler, &c);
	if (c.read_errno) {
		snprintf(err, EG__ERR_LEN, "%s: cannot read: %s", path,
			 strerror(c.read_errno));
		rc = EG_EIO;
	} else if (ret > 0 && (!c.err_line || ret < c.err_line)) {
		/* an error inih found on its own: a line it cannot read */
		snprintf(err, EG__ERR_LEN,
			 "%s:%d: malformed line (expected key = value, "
			 "[section] or a comment)",
			 path, ret);
		rc = EG_EPARSE;
	} else if (c.err_line) {
		snprintf(err, EG__ERR_LEN, "%s:%d: %s", path, c.err_line,
			 c.err_msg);
		rc = c.err_rc;
	} else if (ret < 0) {
		snprintf(err, EG__ERR_LEN, "%s: out of memory", path);
		rc = EG_ENOMEM;
	}
	fclose(c.f);
	if (!rc && !c.n && eg__push(&c, NULL, 0)) {
		snprintf(err, EG__ERR_LEN, "%s: out of memory", path);
		rc = EG_ENOMEM;
	}
	if (!rc)
		rc = eg__check_all(&c, path, err);
	if (rc) {
		eg__ctx_free(&c);
		return rc;
	}
	eg_workload_fini(&c.defaults);
	free(c.secs);
	out->items = c.items;
	out->n = c.n;
	return 0;
}

void eg_workload_list_free(eg_workload_list_t *l)
{
	for (size_t i = 0; i < l->n; i++)
		eg_workload_fini(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}
