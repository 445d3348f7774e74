/* TAP writer, version 14 by default or 13 (eg_tap_set_version,
 * EPGATE_TAP_VERSION) for harnesses that know no later one, such as
 * Debian 12's prove (Test::Harness 3.44).  The two differ only in the
 * version line: what epgate writes (plan, points, directives, YAML
 * blocks) is the same in both.  Every line is flushed as soon as it is written,
 * so a crash loses no finished test point.  Verdicts live only on column-0
 * "ok"/"not ok" lines (automake's tap-driver.sh ignores YAML).
 *
 * Status mapping: PASS "ok", FAIL, ERROR and CRASH "not ok", SKIP "ok #
 * SKIP", TODO "not ok # TODO".  For PASS/FAIL/ERROR/CRASH a reason goes
 * into the YAML block as "message" (and ERROR adds "status: error", CRASH
 * "status: crash"), since TAP has no directive for them.
 *
 * Plan mismatch: with a plan given at open, eg_tap_close writes nothing
 * more (the harness reports the mismatch itself, and a second plan would
 * make the file invalid) but returns EG_ERANGE so the caller can turn it
 * into a hard error.  Points beyond the plan are still written: losing a
 * verdict is worse than an over-long run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/report.h"

struct eg_tap {
	FILE *f;
	int own;     /* opened by us, fclose at the end */
	int planned; /* < 0: plan written at close */
	int n;	     /* test points written */
	int bailed;
	int err; /* first write error, sticky */
};

/* 0: not set by eg_tap_set_version; EPGATE_TAP_VERSION, else 14. */
static int eg__tap_version;

int eg_tap_version_parse(const char *s)
{
	if (s && !strcmp(s, "13"))
		return 13;
	if (s && !strcmp(s, "14"))
		return 14;
	return EG_EINVAL;
}

int eg_tap_set_version(int version)
{
	if (version != 13 && version != 14)
		return EG_EINVAL;
	eg__tap_version = version;
	return EG_OK;
}

int eg_tap_version(void)
{
	static int warned;
	const char *env = getenv("EPGATE_TAP_VERSION");
	int v;

	if (eg__tap_version)
		return eg__tap_version;
	if (!env || !*env)
		return 14;
	v = eg_tap_version_parse(env);
	if (v < 0 && !warned) {
		warned = 1;
		fprintf(stderr,
			"epgate: EPGATE_TAP_VERSION=\"%s\": want 13 or 14; "
			"writing TAP version 14\n",
			env);
	}
	return v > 0 ? v : 14;
}

static int eg__tap_printf(eg_tap_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int eg__tap_printf(eg_tap_t *t, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfprintf(t->f, fmt, ap);
	va_end(ap);
	if (r < 0 || fflush(t->f) != 0) {
		if (!t->err)
			t->err = EG_EIO;
		return EG_EIO;
	}
	return 0;
}

/* One-line copy of s: CR/LF and other control characters (tab kept)
 * become one space per run; with esc, '\' and '#' are backslash-escaped
 * as TAP 14 asks for descriptions. */
static char *eg__tap_clean(const char *s, int esc)
{
	size_t i, n = 0;
	int gap = 0;
	char *o;

	if (!s)
		s = "";
	o = malloc(2 * strlen(s) + 1);
	if (!o)
		return NULL;
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			if (!gap && n > 0)
				o[n++] = ' ';
			gap = 1;
			continue;
		}
		gap = 0;
		if (esc && (c == '#' || c == '\\'))
			o[n++] = '\\';
		o[n++] = (char)c;
	}
	while (n > 0 && o[n - 1] == ' ')
		n--;
	o[n] = '\0';
	return o;
}

int eg_tap_open(eg_tap_t **t, const char *path, int planned)
{
	eg_tap_t *p;
	int r;

	if (!t || !path)
		return EG_EINVAL;
	*t = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return EG_ENOMEM;
	p->planned = planned < 0 ? -1 : planned;
	if (!strcmp(path, "-")) {
		p->f = stdout;
	} else {
		p->f = fopen(path, "w");
		p->own = 1;
		if (!p->f) {
			free(p);
			return EG_EIO;
		}
	}
	r = eg__tap_printf(p, "TAP version %d\n", eg_tap_version());
	if (!r && p->planned >= 0)
		r = eg__tap_printf(p, "1..%d\n", p->planned);
	if (r) {
		if (p->own)
			fclose(p->f);
		free(p);
		return r;
	}
	*t = p;
	return 0;
}

/* diag plus what the point line cannot carry; NULL when nothing to say. */
static json_t *eg__tap_diag(eg_status_t st, const char *reason, json_t *diag)
{
	int msg = reason && (st == EG_STATUS_PASS || st == EG_STATUS_FAIL ||
			     st == EG_STATUS_ERROR || st == EG_STATUS_CRASH);
	int err = st == EG_STATUS_ERROR || st == EG_STATUS_CRASH;
	json_t *d;

	if (!msg && !err)
		return diag ? json_incref(diag) : NULL;
	d = diag ? json_copy(diag) : json_object();
	if (!d)
		return NULL;
	if (msg && !json_object_get(d, "message"))
		json_object_set_new(d, "message", json_string(reason));
	if (err && !json_object_get(d, "status"))
		json_object_set_new(
		    d, "status",
		    json_string(st == EG_STATUS_CRASH ? "crash" : "error"));
	return d;
}

int eg_tap_point(eg_tap_t *t, eg_status_t st, const char *desc,
		 const char *reason, json_t *diag)
{
	const char *ok, *dir = NULL;
	char *d = NULL, *why = NULL, *yaml = NULL;
	json_t *dj = NULL;
	int r = EG_ENOMEM;

	if (!t || t->bailed || (diag && !json_is_object(diag)))
		return EG_EINVAL;
	switch (st) {
	case EG_STATUS_PASS:
		ok = "ok";
		break;
	case EG_STATUS_SKIP:
		ok = "ok";
		dir = "SKIP";
		break;
	case EG_STATUS_TODO:
		ok = "not ok";
		dir = "TODO";
		break;
	case EG_STATUS_FAIL:
	case EG_STATUS_ERROR:
	case EG_STATUS_CRASH:
		ok = "not ok";
		break;
	default:
		return EG_EINVAL;
	}
	d = eg__tap_clean(desc, 1);
	why = eg__tap_clean(reason, 0);
	if (!d || !why)
		goto out;
	dj = eg__tap_diag(st, reason, diag);
	if (dj && json_object_size(dj) > 0) {
		yaml = eg_json_to_yaml(dj, 2);
		if (!yaml)
			goto out;
	}

	t->n++;
	r = eg__tap_printf(t, "%s %d%s%s%s%s%s%s\n", ok, t->n, *d ? " - " : "",
			   d, dir ? " # " : "", dir ? dir : "",
			   dir && *why ? " " : "", dir ? why : "");
	if (!r && yaml)
		r = eg__tap_printf(t, "  ---\n%s  ...\n", yaml);
	if (!r)
		r = t->n;
out:
	json_decref(dj);
	free(yaml);
	free(why);
	free(d);
	return r;
}

int eg_tap_comment(eg_tap_t *t, const char *text)
{
	const char *p, *nl;
	int r = 0;

	if (!t || !text)
		return EG_EINVAL;
	/* One "# " line per line of text; a final newline adds none. */
	for (p = text; !r; p = nl + 1) {
		int l;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		l = (int)(nl - p);
		if (l > 0 && p[l - 1] == '\r')
			l--;
		r = eg__tap_printf(t, "#%s%.*s\n", l ? " " : "", l, p);
		if (!*nl || !nl[1])
			break;
	}
	return r;
}

int eg_tap_bail(eg_tap_t *t, const char *reason)
{
	char *why;
	int r;

	if (!t)
		return EG_EINVAL;
	why = eg__tap_clean(reason, 0);
	if (!why)
		return EG_ENOMEM;
	r = eg__tap_printf(t, "Bail out!%s%s\n", *why ? " " : "", why);
	free(why);
	t->bailed = 1;
	return r;
}

int eg_tap_close(eg_tap_t *t)
{
	int r;

	if (!t)
		return EG_EINVAL;
	/* After "Bail out!" the harness stops reading; no plan. */
	if (t->planned < 0 && !t->bailed)
		eg__tap_printf(t, "1..%d\n", t->n);
	r = t->err;
	if (t->own && fclose(t->f) != 0 && !r)
		r = EG_EIO;
	else if (!t->own && fflush(t->f) != 0 && !r)
		r = EG_EIO;
	if (!r && t->planned >= 0 && !t->bailed && t->n != t->planned)
		r = EG_ERANGE;
	free(t);
	return r;
}
