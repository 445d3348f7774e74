/* The buffers epgate hands a plugin, so that its verdict never rests on
 * luck: every one is a copy in the plugin's space (an input the plugin
 * changes is found by comparing it with epgate's own, which it never
 * sees), followed by guard bytes right after the bytes of the call (a
 * write past the end is found, however short); the combine output is
 * filled with a poison pattern before each call (NaN in every float type,
 * so an unwritten region fails even where the last iteration's bytes
 * would have been right). Checked after every verified call; timed steps
 * only run the plugin. Findings: native_guard, native_input,
 * native_unwritten, and a line naming the buffer on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "plugin_int.h"

/* The poison of out: a signaling NaN in its element type (bf16 0x7fa5,
 * fp32 0x7fa5a5a5, little-endian), which no arithmetic writes (a NaN it
 * makes is quiet): a library's own NaN (torch's bf16 0xffff) is never
 * taken for the poison, so a token that carries NaN is judged as
 * written. */
static uint8_t eg__poison_byte(size_t es, size_t i)
{
	return i % es == es - 1 ? 0x7f : 0xa5;
}
#define EG__POISON 0x7fa5u /* as reported: the bf16 pattern */

static const char *const eg__names[EG_PLUG_B__N] = {
    "x", "scales", "topk_idx", "topk_w", "y", "out"};

static uint8_t eg__guard_byte(size_t i)
{
	return (uint8_t)(0xa5u ^ (i * 0x3bu));
}

/* At least cap bytes (and the guard) in b. */
static int eg__reserve(eg_plug_run_t *r, eg_plug_buf_t *b, size_t cap)
{
	int rc;

	if (b->p && cap <= b->cap)
		return EG_OK;
	r->mem->free(r->ms, b->p);
	b->p = NULL;
	b->cap = 0;
	if ((rc = r->mem->zalloc(r->ms, &b->p, cap + EG_PLUG_GUARD)) < 0)
		return rc;
	b->cap = cap;
	return EG_OK;
}

/* Room for n bytes of host scratch (a buffer read back). */
static int eg__scratch(eg_plug_run_t *r, size_t n)
{
	if (n <= r->scratch_cap)
		return EG_OK;
	free(r->scratch);
	r->scratch_cap = 0;
	if (!(r->scratch = malloc(n)))
		return EG_ENOMEM;
	r->scratch_cap = n;
	return EG_OK;
}

/* n bytes of src, or of poison when src is NULL, into b, and the guard
 * right after them. */
static int eg__fill(eg_plug_run_t *r, eg_plug_buf_t *b, const void *src,
		    size_t n)
{
	size_t off = src ? 0 : n; /* the guard's place in scratch */
	size_t es;
	uint8_t *d = b->p;
	int rc;

	b->n = n;
	if ((rc = eg__scratch(r, off + EG_PLUG_GUARD)) < 0)
		return rc;
	es = eg_dtype_size(eg_combine_dtype(r->w.dtype));
	for (size_t i = 0; i < off; i++)
		r->scratch[i] = eg__poison_byte(es, i);
	for (size_t i = 0; i < EG_PLUG_GUARD; i++)
		r->scratch[off + i] = eg__guard_byte(i);
	if (!src)
		return r->mem->copy(r->ms, d, r->scratch, n + EG_PLUG_GUARD);
	if (n && (rc = r->mem->copy(r->ms, d, src, n)) < 0)
		return rc;
	return r->mem->copy(r->ms, d + n, r->scratch, EG_PLUG_GUARD);
}

int eg_plug_buf_put(eg_plug_run_t *r, int id, const void *src, size_t n)
{
	eg_plug_buf_t *b = &r->buf[id];
	int rc = eg__reserve(r, b, n);

	r->orig[id] = src;
	if (rc == EG_OK)
		rc = eg__fill(r, b, src, n);
	return rc < 0 ? eg_plug_run_err(r, rc, "%s to %s memory: %s",
					eg__names[id], r->mem->name,
					eg_strerror(rc))
		      : EG_OK;
}

int eg_plug_buf_poison(eg_plug_run_t *r, int id, size_t n)
{
	return eg_plug_buf_put(r, id, NULL, n);
}

/* One finding of field f in buffer id at byte (or element) col. */
static void eg__found(eg_plug_run_t *r, eg_field_t f, int id, size_t col,
		      uint64_t expected, uint64_t actual)
{
	eg_verdict_wrong_at(&r->found, f, (int32_t)r->me, -1, -1, -1, id,
			    (int64_t)col, expected, actual);
}

/* The finding said where it happens (the rank's log; L1: the case's). */
static void eg__say(const eg_plug_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void eg__say(const eg_plug_run_t *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "epgate: rank %u: plugin %s: ", r->me, r->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Buffer id after a call: its guard, its bytes against epgate's (inputs),
 * its elements against the poison (out); host copies in r->scratch. */
static int eg__check(eg_plug_run_t *r, int id, const char *stage)
{
	const eg_plug_buf_t *b = &r->buf[id];
	size_t n = b->n, bad = 0;
	int rc = EG_OK; /* read only when b->p: set by then (GCC -O with ASan
			   cannot tell) */

	if (!b->p || (rc = eg__scratch(r, n + EG_PLUG_GUARD)) < 0 ||
	    (rc = r->mem->copy(r->ms, r->scratch, b->p, n + EG_PLUG_GUARD)) < 0)
		return b->p ? eg_plug_run_err(r, rc, "reading %s back: %s",
					      eg__names[id], eg_strerror(rc))
			    : EG_OK;
	r->found.checked[EG_FIELD_NATIVE_GUARD] += EG_PLUG_GUARD;
	for (size_t i = 0; i < EG_PLUG_GUARD; i++)
		if (r->scratch[n + i] != eg__guard_byte(i)) {
			eg__found(r, EG_FIELD_NATIVE_GUARD, id, n + i,
				  eg__guard_byte(i), r->scratch[n + i]);
			bad++;
		}
	if (bad)
		eg__say(r,
			"%s wrote past the end of %s (%zu of the %d guard "
			"bytes after its %zu changed)",
			stage, eg__names[id], bad, EG_PLUG_GUARD, n);
	bad = 0;
	if (r->orig[id]) {
		const uint8_t *o = r->orig[id];

		r->found.checked[EG_FIELD_NATIVE_INPUT] += n;
		for (size_t i = 0; i < n; i++)
			if (r->scratch[i] != o[i]) {
				eg__found(r, EG_FIELD_NATIVE_INPUT, id, i, o[i],
					  r->scratch[i]);
				bad++;
			}
		if (bad)
			eg__say(r, "%s changed its input %s (%zu of %zu bytes)",
				stage, eg__names[id], bad, n);
	}
	return EG_OK;
}

/* Elements of out still all poison after combine (es bytes each). */
static void eg__unwritten(eg_plug_run_t *r, const char *stage, size_t es)
{
	size_t n = r->buf[EG_PLUG_B_OUT].n / es, bad = 0;

	r->found.checked[EG_FIELD_NATIVE_UNWRITTEN] += n;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < es &&
		       r->scratch[i * es + j] == eg__poison_byte(es, j))
			j++;
		if (j < es)
			continue;
		if (!bad++)
			eg__found(r, EG_FIELD_NATIVE_UNWRITTEN, EG_PLUG_B_OUT,
				  i, 0, EG__POISON);
		else
			r->found.wrong[EG_FIELD_NATIVE_UNWRITTEN]++;
	}
	if (bad)
		eg__say(r,
			"%s left %zu of the %zu elements of out unwritten "
			"(still the poison it was filled with)",
			stage, bad, n);
}

int eg_plug_bufs_check(eg_plug_run_t *r, unsigned mask, const char *stage)
{
	size_t es = eg_dtype_size(eg_combine_dtype(r->w.dtype));
	int rc;

	eg_verdict_init(&r->found);
	for (int id = 0; id < EG_PLUG_B__N; id++) {
		if (!(mask & 1u << id))
			continue;
		if ((rc = eg__check(r, id, stage)) < 0)
			return rc;
		/* out is the last: its bytes are still in scratch */
		if (id == EG_PLUG_B_OUT)
			eg__unwritten(r, stage, es);
	}
	return EG_OK;
}

void eg_plug_bufs_free(eg_plug_run_t *r)
{
	for (int id = 0; id < EG_PLUG_B__N; id++) {
		if (r->ms)
			r->mem->free(r->ms, r->buf[id].p);
		r->buf[id] = (eg_plug_buf_t){0};
	}
	free(r->scratch);
	r->scratch = NULL;
	r->scratch_cap = 0;
}
