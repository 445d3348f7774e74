/* Results writer: the document lives in memory and after every point is
 * rewritten whole, atomically (lib/base/file.c: PATH.tmp, fsync, rename),
 * so readers (and a crash) only ever see a complete, valid file.  One
 * point per line keeps the file readable and friendly to grep and sed.
 * Every point goes through the reader's validation before it is
 * written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/clock.h"
#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/mem.h"
#include "results_int.h"

struct eg_results_writer {
	char *path;
	int recorded;
	json_t *context;
	json_t *points; /* array of point objects */
	json_t *ids;	/* id -> index */
	int digits;	/* 0: jansson's 17 */
};

static int eg__put(FILE *f, json_t *v, int digits)
{
	size_t fl =
	    JSON_ENCODE_ANY | (digits ? JSON_REAL_PRECISION(digits) : 0);
	char *s = json_dumps(v, fl);
	int r;

	if (!s)
		return EG_ENOMEM;
	r = fputs(s, f);
	free(s);
	return r < 0 ? EG_EIO : 0;
}

/* The whole document, one point per line. */
static int eg__fill(FILE *f, void *arg)
{
	const eg_results_writer_t *w = arg;
	size_t i;
	json_t *p;
	int rc = 0;

	if (fprintf(f, "{\"schema\": \"%s\", \"recorded\": %s,\n\"context\": ",
		    EG_RESULTS_SCHEMA, w->recorded ? "true" : "false") < 0)
		rc = EG_EIO;
	if (!rc)
		rc = eg__put(f, w->context, w->digits);
	if (!rc && fputs(",\n\"points\": [", f) < 0)
		rc = EG_EIO;
	json_array_foreach(w->points, i, p)
	{
		if (!rc && fputs(i ? ",\n  " : "\n  ", f) < 0)
			rc = EG_EIO;
		if (!rc)
			rc = eg__put(f, p, w->digits);
	}
	if (!rc && fputs("\n]}\n", f) < 0)
		rc = EG_EIO;
	return rc;
}

static int eg__flush(eg_results_writer_t *w, char *err, size_t errlen)
{
	return eg_file_write_atomic(w->path, eg__fill, w, err, errlen);
}

void eg_results_set_digits(eg_results_writer_t *w, int digits)
{
	if (w && digits >= 0 && digits <= 17)
		w->digits = digits;
}

void eg_results_close(eg_results_writer_t *w)
{
	if (!w)
		return;
	json_decref(w->context);
	json_decref(w->points);
	json_decref(w->ids);
	EG_FREE(w->path, w);
}

int eg_results_create(eg_results_writer_t **out, const char *path, int recorded,
		      json_t *context, char *err, size_t errlen)
{
	eg__rerr_t e = {path, err, errlen};
	eg_results_writer_t *w;
	char now[32];
	int rc = EG_ENOMEM;

	*out = NULL;
	if (!path || (context && !json_is_object(context)))
		return EG_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return EG_ENOMEM;
	w->recorded = !!recorded;
	w->path = strdup(path);
	w->context = context ? json_deep_copy(context) : json_object();
	w->points = json_array();
	w->ids = json_object();
	if (!w->path || !w->context || !w->points || !w->ids)
		goto fail;
	if (!json_object_get(w->context, "created")) {
		eg_utc_stamp(now, sizeof(now));
		if (json_object_set_new(w->context, "created",
					json_string(now)))
			goto fail;
	}
	if ((rc = eg__results_context_check(w->context, &e)))
		goto fail;
	if ((rc = eg__flush(w, err, errlen)))
		goto fail;
	*out = w;
	return 0;
fail:
	eg_results_close(w);
	return rc;
}

int eg_results_append(eg_results_writer_t *w, const eg_point_t *p, char *err,
		      size_t errlen)
{
	eg__rerr_t e = {w ? w->path : "", err, errlen};
	size_t idx;
	eg_point_t chk;
	char q[64];
	json_t *o;
	int rc;

	if (!w || !p)
		return EG_EINVAL;
	idx = json_array_size(w->points);
	snprintf(q, sizeof(q), "points[%zu]", idx);
	if ((rc = eg_point_to_json(p, &o, w->path, q, err, errlen)))
		return rc;
	/* what the reader would reject is never written */
	rc = eg__results_point_from_json(o, q, &chk, &e);
	if (!rc) {
		eg_point_fini(&chk);
		if (json_object_get(w->ids, p->id))
			rc = eg__results_rbad(
			    &e, q, "id \"%s\" already written", p->id);
	}
	if (!rc &&
	    (json_array_append(w->points, o) ||
	     json_object_set_new(w->ids, p->id, json_integer((json_int_t)idx))))
		rc = EG_ENOMEM;
	json_decref(o);
	if (rc)
		return rc;
	rc = eg__flush(w, err, errlen);
	if (rc) {
		/* keep memory and file in step: the point is not written */
		json_array_remove(w->points, idx);
		json_object_del(w->ids, p->id);
	}
	return rc;
}

int eg_results_put(eg_results_writer_t *w, const eg_point_t *p, char *err,
		   size_t errlen)
{
	eg__rerr_t e = {w ? w->path : "", err, errlen};
	json_t *at, *o, *old;
	eg_point_t chk;
	size_t idx;
	char q[64];
	int rc;

	if (!w || !p || !p->id)
		return EG_EINVAL;
	if (!(at = json_object_get(w->ids, p->id)))
		return eg_results_append(w, p, err, errlen);
	idx = (size_t)json_integer_value(at);
	snprintf(q, sizeof(q), "points[%zu]", idx);
	if ((rc = eg_point_to_json(p, &o, w->path, q, err, errlen)))
		return rc;
	rc = eg__results_point_from_json(o, q, &chk, &e);
	if (rc) {
		json_decref(o);
		return rc;
	}
	eg_point_fini(&chk);
	old = json_incref(json_array_get(w->points, idx));
	if (json_array_set_new(w->points, idx, o)) {
		json_decref(old);
		return EG_ENOMEM;
	}
	rc = eg__flush(w, err, errlen);
	if (rc) /* keep memory and file in step */
		json_array_set(w->points, idx, old);
	json_decref(old);
	return rc;
}

size_t eg_results_count(const eg_results_writer_t *w)
{
	return w ? json_array_size(w->points) : 0;
}
