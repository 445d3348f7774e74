/* `epgate stress`, run to run (docs/stress.md, "Run to run"): a fixed
 * order promises the same bytes in every process, not only call to call
 * in one. A combine whose order follows where its buffers landed, which
 * peer registered first or a per-process seed passes every comparison
 * inside one process. So each case's call 0 (its first inputs, on a fresh
 * instance) is hashed, the same call is run again in fresh processes of
 * other allocation histories (EPGATE_STRESS_HISTORY) and their hashes
 * compared; --hashes and --compare-hashes carry the hashes to another
 * run or machine. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/stress/stress_int.h"

#define EG__HISTORY "EPGATE_STRESS_HISTORY"
#define EG__PAD_MAX 4096 /* the most blocks a history keeps */

struct eg_stress_hashes {
	FILE *out;
	const char *in_path;
	char **keys; /* the compared file: keys and hash per line */
	uint64_t *hash;
	unsigned *line;
	size_t n;
};

uint64_t eg_stress_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

void eg_stress_runs_note(eg_stress_case_t *c, const eg_step_t *st)
{
	uint64_t h = EG_STRESS_FNV_BASIS;

	for (uint32_t r = 0; r < c->w->world; r++) {
		const void *p;
		size_t n;

		if (eg_step_output(st, r, &p, &n) < 0)
			return; /* not on the host: not hashed */
		if (n)
			h = eg_stress_fnv1a(h, p, n);
	}
	c->hash = h;
	c->hashed = 1;
}

/* ---- the history of a fresh process ------------------------------------ */

typedef struct eg__pad {
	void *block[EG__PAD_MAX];
	size_t n;
	void *map;
	size_t map_len;
} eg__pad_t;

/* History h (EPGATE_STRESS_HISTORY): before the instance, h*h*17 blocks
 * of sizes 24 + 40 i bytes (every small size class moves) and h MiB and a
 * page mapped, kept; from h = 2 one instance of the case opened and
 * closed first (a library's state of the first instance). */
static void eg__history(const eg_stress_case_t *c, const eg_engine_ops_t *ops,
			eg__pad_t *pad)
{
	const char *s = getenv(EG__HISTORY);
	long h = s ? strtol(s, NULL, 10) : 0;

	if (h <= 0 || h > 15)
		return;
	for (size_t i = 0; i < (size_t)(h * h * 17) && pad->n < EG__PAD_MAX;
	     i++)
		if ((pad->block[pad->n] = malloc(24 + 40 * (i % 100))))
			memset(pad->block[pad->n++], 0x5a, 24);
	pad->map_len = ((size_t)h << 20) + 4096;
	pad->map = mmap(NULL, pad->map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pad->map == MAP_FAILED)
		pad->map = NULL;
	if (h >= 2) {
		eg_stress_case_t first = {.w = c->w};
		eg_step_t *st = NULL;

		if (eg_stress_open(&first, ops, &st) == EG_OK)
			eg_step_close(st);
		eg_stress_case_fini(&first);
	}
}

static void eg__history_free(eg__pad_t *pad)
{
	while (pad->n)
		free(pad->block[--pad->n]);
	if (pad->map)
		munmap(pad->map, pad->map_len);
}

void *eg_stress_runs_history(const eg_stress_case_t *c,
			     const eg_engine_ops_t *ops)
{
	eg__pad_t *pad;

	if (!getenv(EG__HISTORY) || !(pad = calloc(1, sizeof(*pad))))
		return NULL;
	eg__history(c, ops, pad);
	return pad;
}

void eg_stress_runs_history_free(void *pad)
{
	if (pad)
		eg__history_free(pad);
	free(pad);
}

/* ---- the fresh processes ------------------------------------------------- */

static int eg__hex(const char *s, uint64_t *out)
{
	char *end;

	if (!s || strlen(s) != 16)
		return EG_EPARSE;
	errno = 0;
	*out = strtoull(s, &end, 16);
	return *end || errno ? EG_EPARSE : EG_OK;
}

/* One fresh process of history h: its call 0's hash into c. */
static void eg__fresh(const eg_stress_opts_t *o, eg_stress_case_t *c, int h)
{
	eg_stress_fail_t f = {.iter = c->w->iter, .mode = EG_STRESS_REDRAW};
	char in[6000], seq[6000], line[6100], saw[300];
	const char *hx;
	json_t *doc = NULL, *cs;
	uint64_t got;
	size_t l;

	eg_stress_repro(o, c, &f, in, sizeof(in), seq, sizeof(seq));
	snprintf(line, sizeof(line), EG__HISTORY "=%d %s", h, in);
	eg_stress_run_json(line, &doc, saw, sizeof(saw));
	cs = json_array_get(json_object_get(doc, "cases"), 0);
	hx = json_string_value(
	    json_object_get(json_object_get(cs, "run_to_run"), "hash"));
	l = strlen(c->runs_saw);
	if (!doc) {
		snprintf(c->runs_saw + l, sizeof(c->runs_saw) - l,
			 "%shistory %d: %.150s", l ? "; " : "", h, saw);
		c->runs_broke = 1;
	} else if (eg__hex(hx, &got) < 0) {
		/* a wrong call 0 there is a failure, not another order */
		json_t *f0 =
		    json_array_get(json_object_get(cs, "failures_listed"), 0);
		const char *what =
		    json_string_value(json_object_get(f0, "what"));

		snprintf(c->runs_saw + l, sizeof(c->runs_saw) - l,
			 "%shistory %d: not compared: call 0 %s%.100s",
			 l ? "; " : "", h,
			 f0 ? "failed there: " : "gave no output",
			 what ? what : "");
	} else {
		c->runs_hash[c->runs_n++] = got;
		c->runs_differ += got != c->hash;
		snprintf(c->runs_saw + l, sizeof(c->runs_saw) - l,
			 "%shistory %d: %016llx%s", l ? "; " : "", h,
			 (unsigned long long)got,
			 got != c->hash ? " (differs)" : "");
	}
	json_decref(doc);
}

void eg_stress_runs_check(const eg_stress_opts_t *o, eg_stress_case_t *c)
{
	if (c->skipped || !c->hashed || eg_stress_is_check())
		return;
	if (!c->promised) {
		snprintf(c->runs_saw, sizeof(c->runs_saw),
			 "not run: the engine promises no fixed order");
		return;
	}
	for (int h = 1; h <= EG_STRESS_RUNS; h++)
		eg__fresh(o, c, h);
}

/* ---- hash files ------------------------------------------------------------
 */

/* The keys that name a case in a hash file: its workload as arguments. */
static void eg__keys(const eg_workload_t *w, char *buf, size_t len)
{
	static const char check[] = "epgate check ";
	char args[4096];

	if (eg_workload_to_args(w, args, sizeof(args)) < 0) {
		snprintf(buf, len, "--name=%s", w->name);
		return;
	}
	snprintf(buf, len, "%s",
		 strncmp(args, check, sizeof(check) - 1)
		     ? args
		     : args + sizeof(check) - 1);
}

static int eg__load(eg_stress_hashes_t *hs, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4300];
	unsigned ln = 0;
	int rc = EG_OK;

	if (!f) {
		fprintf(stderr, "epgate stress: --compare-hashes %s: %s\n",
			path, strerror(errno));
		return EG_ENOENT;
	}
	while (rc == EG_OK && fgets(buf, sizeof(buf), f)) {
		char *sp = strchr(buf, ' '), *nl = strchr(buf, '\n');
		uint64_t h;
		void *a, *b, *d;

		ln++;
		if (nl)
			*nl = '\0';
		if (buf[0] == '#' || !buf[0])
			continue;
		if (!sp || (*sp = '\0', eg__hex(buf, &h) < 0) || !sp[1]) {
			fprintf(stderr,
				"epgate stress: %s:%u: want a hash (16 hex "
				"digits), a space and the case's keys\n",
				path, ln);
			rc = EG_EPARSE;
			break;
		}
		a = realloc(hs->keys, (hs->n + 1) * sizeof(*hs->keys));
		hs->keys = a ? a : hs->keys;
		b = realloc(hs->hash, (hs->n + 1) * sizeof(*hs->hash));
		hs->hash = b ? b : hs->hash;
		d = realloc(hs->line, (hs->n + 1) * sizeof(*hs->line));
		hs->line = d ? d : hs->line;
		if (!a || !b || !d || !(hs->keys[hs->n] = strdup(sp + 1))) {
			rc = EG_ENOMEM;
			break;
		}
		hs->hash[hs->n] = h;
		hs->line[hs->n++] = ln;
	}
	fclose(f);
	return rc;
}

int eg_stress_hashes_open(const eg_stress_opts_t *o, eg_stress_hashes_t **out)
{
	eg_stress_hashes_t *hs;
	int rc = EG_OK;

	*out = NULL;
	if (!o->hashes && !o->compare_hashes)
		return EG_OK;
	if (!(hs = calloc(1, sizeof(*hs))))
		return EG_ENOMEM;
	hs->in_path = o->compare_hashes;
	if (o->compare_hashes && (rc = eg__load(hs, o->compare_hashes)) < 0)
		goto fail;
	if (o->hashes) {
		if (!(hs->out = fopen(o->hashes, "w"))) {
			fprintf(stderr, "epgate stress: --hashes %s: %s\n",
				o->hashes, strerror(errno));
			rc = EG_EIO;
			goto fail;
		}
		fprintf(hs->out, "# epgate stress: FNV-1a 64 of each case's "
				 "call 0 combine output, then its keys "
				 "(docs/stress.md)\n");
		fflush(hs->out);
	}
	*out = hs;
	return EG_OK;
fail:
	eg_stress_hashes_close(hs);
	return rc;
}

void eg_stress_hashes_case(eg_stress_hashes_t *hs, eg_stress_case_t *c)
{
	char keys[4300];

	if (!hs || c->skipped || !c->hashed)
		return;
	eg__keys(c->w, keys, sizeof(keys));
	if (hs->out) {
		fprintf(hs->out, "%016llx %s\n", (unsigned long long)c->hash,
			keys);
		fflush(hs->out);
	}
	if (!hs->in_path)
		return;
	c->against = EG_STRESS_AGAINST_MISSING;
	for (size_t i = 0; i < hs->n; i++)
		if (!strcmp(hs->keys[i], keys)) {
			c->against = hs->hash[i] == c->hash
					 ? EG_STRESS_AGAINST_SAME
					 : EG_STRESS_AGAINST_DIFFERS;
			c->against_hash = hs->hash[i];
			snprintf(c->against_where, sizeof(c->against_where),
				 "%.250s:%u", hs->in_path, hs->line[i]);
			return;
		}
	snprintf(c->against_where, sizeof(c->against_where), "%.250s",
		 hs->in_path);
}

void eg_stress_hashes_close(eg_stress_hashes_t *hs)
{
	if (!hs)
		return;
	if (hs->out)
		fclose(hs->out);
	for (size_t i = 0; i < hs->n; i++)
		free(hs->keys[i]);
	free(hs->keys);
	free(hs->hash);
	free(hs->line);
	free(hs);
}

/* ---- what the reports say ---------------------------------------------- */

int eg_stress_runs_failed(const eg_stress_case_t *c)
{
	return c->promised &&
	       (c->runs_differ || c->against == EG_STRESS_AGAINST_DIFFERS);
}

static void eg__verdict(const eg_stress_case_t *c, char *buf, size_t len)
{
	if (!c->hashed)
		snprintf(buf, len,
			 "not judged: call 0 failed or gave no "
			 "output");
	else if (!c->promised)
		snprintf(buf, len,
			 "not judged: the engine promises no fixed order");
	else if (eg_stress_runs_failed(c))
		snprintf(buf, len,
			 "differs: the same inputs gave other bytes in %s",
			 c->runs_differ ? "a fresh process of another "
					  "allocation history"
					: "the run of the compared hashes");
	else if (c->runs_n == EG_STRESS_RUNS)
		snprintf(buf, len, "the same bytes in %d fresh processes",
			 c->runs_n);
	else
		snprintf(buf, len, "not judged: %d of %d fresh processes ran",
			 c->runs_n, EG_STRESS_RUNS);
}

json_t *eg_stress_runs_json(const eg_stress_case_t *c)
{
	char hx[24], v[200];
	json_t *j, *fresh = json_array();

	eg__verdict(c, v, sizeof(v));
	snprintf(hx, sizeof(hx), "%016llx", (unsigned long long)c->hash);
	j = json_pack("{ss}", "verdict", v);
	if (!j || !fresh)
		return json_decref(fresh), j;
	if (c->hashed)
		json_object_set_new(j, "hash", json_string(hx));
	for (int i = 0; i < c->runs_n; i++) {
		snprintf(hx, sizeof(hx), "%016llx",
			 (unsigned long long)c->runs_hash[i]);
		json_array_append_new(fresh, json_string(hx));
	}
	json_object_set_new(j, "fresh", fresh);
	if (c->runs_saw[0])
		json_object_set_new(j, "saw", json_string(c->runs_saw));
	if (c->against) {
		snprintf(hx, sizeof(hx), "%016llx",
			 (unsigned long long)c->against_hash);
		json_object_set_new(
		    j, "compared",
		    json_pack("{ss ss}", "where", c->against_where, "hash",
			      c->against == EG_STRESS_AGAINST_MISSING ? "none"
								      : hx));
	}
	return j;
}

void eg_stress_runs_say(FILE *f, const eg_stress_case_t *c)
{
	char v[200];

	eg__verdict(c, v, sizeof(v));
	fprintf(f, "    run to run: %s", v);
	if (c->hashed)
		fprintf(f, " (call 0's hash %016llx%s%s)",
			(unsigned long long)c->hash, c->runs_saw[0] ? "; " : "",
			c->runs_saw);
	if (c->against == EG_STRESS_AGAINST_MISSING)
		fprintf(f, "; not in %s", c->against_where);
	else if (c->against)
		fprintf(f, "; %s: %016llx, %s", c->against_where,
			(unsigned long long)c->against_hash,
			c->against == EG_STRESS_AGAINST_SAME ? "the same"
							     : "differs");
	fputc('\n', f);
}
