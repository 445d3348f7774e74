/* Workload files (INI, parsed by inih). Keys before the first [section]
 * are defaults; each section is one workload named after it.
 *
 * inih reports only key/value pairs, so the file is fed to it through our
 * own line reader: that reader counts lines, refuses NUL bytes, sees
 * section headers (to catch duplicates, malformed headers such as "[a]]"
 * and empty sections, and to remember where each one starts), drops
 * leading blanks (no continuation lines: indentation means nothing) and
 * cuts blank-preceded '#' comments. A key given twice in one section is
 * an error (inih would keep the last). Names are found through a hash
 * table: a file of many sections loads in linear time. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/workload.h"

#define EG__ERR_LEN  (EG_ERRMSG_MAX + 512)
#define EG__LINE_MAX 1024

struct eg__section {
	int line; /* of the [header]; 0 for the defaults-only workload */
	char raw[EG_NAME_MAX];
};

/* Open addressing over indices + 1 (0: empty), by name. */
struct eg__names {
	size_t *slot, cap, n;
};

/* The keys of the section being read, and their lines. */
#define EG__KEYS_MAX 32
struct eg__keys {
	char name[EG__KEYS_MAX][24];
	int line[EG__KEYS_MAX];
	int n;
};

struct eg__ctx {
	FILE *f;
	int lineno;
	int read_errno;
	eg_workload_t defaults;
	eg_workload_t *items;
	struct eg__section *secs;
	size_t n, cap;
	struct eg__names names; /* sections by name */
	struct eg__keys keys;
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

static uint64_t eg__hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The index whose name is name, or -1; name_of(i) names index i. */
static long eg__names_find(const struct eg__names *t, const char *name,
			   const char *(*name_of)(const void *, size_t),
			   const void *arg)
{
	if (!t->cap)
		return -1;
	for (size_t i = eg__hash(name) & (t->cap - 1);;
	     i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i])
			return -1;
		if (!strcmp(name_of(arg, t->slot[i] - 1), name))
			return (long)(t->slot[i] - 1);
	}
}

/* Adds index idx under name (not present). */
static int eg__names_add(struct eg__names *t, const char *name, size_t idx,
			 const char *(*name_of)(const void *, size_t),
			 const void *arg)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		size_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return EG_ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			size_t j;

			if (!t->slot[i])
				continue;
			j = eg__hash(name_of(arg, t->slot[i] - 1)) & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	size_t i = eg__hash(name) & (t->cap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = idx + 1;
	t->n++;
	return EG_OK;
}

static const char *eg__sec_name(const void *c, size_t i)
{
	return ((const struct eg__ctx *)c)->secs[i].raw;
}

static const char *eg__item_name(const void *c, size_t i)
{
	return ((const struct eg__ctx *)c)->items[i].name;
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

/* A "[name]" line: a new workload, unless the name is taken or the
 * header has more than blanks after its ']' ("[a]]", "[a] b"). */
static void eg__section_start(struct eg__ctx *c, const char *line)
{
	char name[EG__LINE_MAX];
	const char *end = strchr(line, ']');
	size_t len;
	long at;

	if (!end)
		return; /* inih reports the malformed header */
	if (end[1 + strspn(end + 1, " \t\r\n")]) {
		eg__ctx_error(c, EG_EPARSE,
			      "malformed section header: \"%.*s\" after its "
			      "']' (want [name])",
			      (int)strcspn(end + 1, "\r\n") > 40
				  ? 40
				  : (int)strcspn(end + 1, "\r\n"),
			      end + 1);
		return;
	}
	len = (size_t)(end - line - 1);
	memcpy(name, line + 1, len);
	name[len] = '\0';
	c->keys.n = 0; /* a new section: no key given yet */
	if ((at = eg__names_find(&c->names, name, eg__sec_name, c)) >= 0) {
		eg__ctx_error(c, EG_EPARSE,
			      "duplicate section [%s] (first at line %d)",
			      c->secs[at].raw, c->secs[at].line);
		return;
	}
	/* (a name push refuses has its error already) */
	int rc = eg__push(c, name, c->lineno);
	if (rc == 0)
		rc = eg__names_add(&c->names, c->secs[c->n - 1].raw, c->n - 1,
				   eg__sec_name, c);
	if (rc == EG_ENOMEM)
		eg__ctx_error(c, EG_ENOMEM, "out of memory");
}

/* A key of the section being read: once only. */
static int eg__key_once(struct eg__ctx *c, const char *key, const char *sec)
{
	for (int i = 0; i < c->keys.n; i++)
		if (!strcmp(c->keys.name[i], key)) {
			eg__ctx_error(c, EG_EPARSE,
				      "key \"%s\" given twice in %s%s%s "
				      "(first at line %d)",
				      key, *sec ? "[" : "the defaults", sec,
				      *sec ? "]" : "", c->keys.line[i]);
			return -1;
		}
	if (c->keys.n < EG__KEYS_MAX) {
		snprintf(c->keys.name[c->keys.n], sizeof(c->keys.name[0]), "%s",
			 key);
		c->keys.line[c->keys.n++] = c->lineno;
	}
	return 0;
}

/* One line of the file into line (at most len - 1 bytes, NUL ended);
 * *cut when it was longer, *nul the column of a NUL byte (0: none).
 * 0 at the end of the file. */
static int eg__getline(FILE *f, char *line, size_t len, int *cut, size_t *nul)
{
	size_t n = 0;
	int ch, any = 0;

	*cut = 0;
	*nul = 0;
	while ((ch = getc(f)) != EOF) {
		any = 1;
		if (ch == '\0' && !*nul)
			*nul = n + 1;
		if (n + 1 < len)
			line[n++] = (char)ch;
		else
			*cut = 1;
		if (ch == '\n')
			break;
	}
	line[n] = '\0';
	return any;
}

/* fgets-style reader handed to inih: one call, one line. */
static char *eg__reader(char *str, int num, void *stream)
{
	struct eg__ctx *c = stream;
	char line[EG__LINE_MAX];
	char *s = line, *p;
	size_t n, nul;
	int cut;

	if (c->err_line) /* our first error ends the parse */
		return NULL;
	if (!eg__getline(c->f, line, sizeof(line), &cut, &nul)) {
		if (ferror(c->f))
			c->read_errno = errno ? errno : EIO;
		return NULL;
	}
	c->lineno++;
	if (nul) {
		eg__ctx_error(c, EG_EPARSE,
			      "NUL byte in column %zu (not a text file?)", nul);
		return NULL;
	}
	n = cut ? sizeof(line) : strlen(line);
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

	if (c->err_line || eg__key_once(c, name, section) < 0)
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
	EG_FREE(c->items, c->secs, c->names.slot);
	eg_workload_fini(&c->defaults);
}

/* Every workload valid, every name unique (a name key may rename). */
static int eg__check_all(struct eg__ctx *c, const char *path, char *err)
{
	char msg[EG_ERRMSG_MAX], at[32] = "";
	struct eg__names by = {0};
	int rc = 0;

	for (size_t i = 0; i < c->n && !rc; i++) {
		const eg_workload_t *w = &c->items[i];
		long j;

		rc = eg_workload_validate(w, msg);
		if (c->secs[i].line)
			snprintf(at, sizeof(at), ":%d", c->secs[i].line);
		if (rc) {
			snprintf(err, EG__ERR_LEN, "%s%s: [%s]: %s", path, at,
				 c->secs[i].raw, msg);
			break;
		}
		if ((j = eg__names_find(&by, w->name, eg__item_name, c)) >= 0) {
			snprintf(err, EG__ERR_LEN,
				 "%s%s: [%s]: duplicate workload name \"%s\" "
				 "(also [%s] at line %d)",
				 path, at, c->secs[i].raw, w->name,
				 c->secs[j].raw, c->secs[j].line);
			rc = EG_EINVAL;
		} else if (eg__names_add(&by, w->name, i, eg__item_name, c) <
			   0) {
			snprintf(err, EG__ERR_LEN, "%s: out of memory", path);
			rc = EG_ENOMEM;
		}
	}
	free(by.slot);
	return rc;
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
	free(c.names.slot);
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

void eg_workload_list_filter(eg_workload_list_t *l, const char *filter)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (filter && !strstr(l->items[i].name, filter)) {
			eg_workload_fini(&l->items[i]);
			continue;
		}
		l->items[n++] = l->items[i];
	}
	l->n = n;
}
