/* A workload's steps (include/epgate/workload.h, eg_workload_step): the
 * sequence of shapes one engine instance runs, as serving feeds it: new
 * routing every step, token counts that change, a rank with none; or the
 * counts the workload names (step_tokens: all ranks empty, one rank
 * empty, counts that shrink and grow). */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/workload.h"

#define eg__fail(err, rc, ...)                                                 \
	eg_err_set((err), EG_ERRMSG_MAX, (rc), __VA_ARGS__)

static uint64_t eg__mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Entries of a step_tokens value ('/' separated); 0 when empty. */
static uint32_t eg__entries(const char *v)
{
	uint32_t n = 1;

	if (!*v)
		return 0;
	for (; *v; v++)
		n += *v == '/';
	return n;
}

/* The counts of entry e of v ("N" or "a,b,..."): up to max of them into
 * list (may be NULL), their number in *n. */
static int eg__entry(const char *v, uint32_t e, uint32_t *list, uint32_t max,
		     uint32_t *n, char *err)
{
	const char *p = v, *end;

	for (uint32_t i = 0; i < e; i++)
		p = strchr(p, '/') + 1;
	end = p + strcspn(p, "/");
	*n = 0;
	for (const char *q = p;;) {
		char *stop;
		unsigned long c;

		if (q == end || *q < '0' || *q > '9')
			return eg__fail(err, EG_EINVAL,
					"step_tokens: entry %u \"%.*s\" is not "
					"N or a,b,... (counts separated by "
					"',', entries by '/', no blanks)",
					e + 1, (int)(end - p), p);
		c = strtoul(q, &stop, 10);
		if (c > EG_TOKENS_MAX)
			return eg__fail(err, EG_ERANGE,
					"step_tokens: entry %u: %lu tokens "
					"exceed the limit %u",
					e + 1, c, EG_TOKENS_MAX);
		if (list && *n < max)
			list[*n] = (uint32_t)c;
		++*n;
		q = stop;
		if (q == end)
			return EG_OK;
		if (*q++ != ',')
			return eg__fail(err, EG_EINVAL,
					"step_tokens: entry %u \"%.*s\" is not "
					"N or a,b,...",
					e + 1, (int)(end - p), p);
	}
}

/* Rank r's count in entry e (one count for all ranks or one per rank). */
static int eg__counts(const eg_workload_t *w, uint32_t e, uint32_t *list,
		      char *err)
{
	uint32_t n;
	int rc = eg__entry(w->step_tokens, e, list, w->world, &n, err);

	if (rc < 0)
		return rc;
	if (n == 1)
		for (uint32_t r = 1; r < w->world; r++)
			list[r] = list[0];
	else if (n != w->world)
		return eg__fail(err, EG_EINVAL,
				"step_tokens: entry %u has %u counts but "
				"world=%u: give one count, or one per rank",
				e + 1, n, w->world);
	return EG_OK;
}

int eg_step_tokens_check(const char *v, const eg_workload_t *w,
			 char err[EG_ERRMSG_MAX])
{
	uint32_t n = eg__entries(v), c, *list;
	int rc = EG_OK;

	if (strlen(v) >= EG_STEP_TOKENS_LEN)
		return eg__fail(err, EG_ERANGE,
				"step_tokens: longer than %d characters",
				EG_STEP_TOKENS_LEN - 1);
	if (!w) {
		for (uint32_t e = 0; e < n && rc == EG_OK; e++)
			rc = eg__entry(v, e, NULL, 0, &c, err);
		return rc;
	}
	if (n && w->steps < 2)
		return eg__fail(err, EG_EINVAL,
				"step_tokens: needs steps of 2 or more (steps "
				"1 and on take its entries)");
	if (!(list = calloc(w->world, sizeof(*list))))
		return eg__fail(err, EG_ENOMEM, "step_tokens: out of memory");
	for (uint32_t e = 0; e < n && rc == EG_OK; e++) {
		rc = eg__counts(w, e, list, err);
		for (uint32_t r = 0; rc == EG_OK && r < w->world; r++)
			if (list[r] > eg_workload_tokens(w, r))
				rc = eg__fail(
				    err, EG_ERANGE,
				    "step_tokens: entry %u gives rank %u %u "
				    "tokens, more than its %u of step 0 (the "
				    "buffers are made for step 0)",
				    e + 1, r, list[r],
				    eg_workload_tokens(w, r));
	}
	free(list);
	return rc;
}

/* Step s's drawn counts: each rank's in [0, its count in w], one rank
 * none (the first, a middle one, the last, in turn). */
static void eg__drawn(const eg_workload_t *w, uint32_t s, uint32_t *list)
{
	uint32_t W = w->world;
	uint32_t none = s % 3 == 1 ? 0 : s % 3 == 2 ? W / 2 : W - 1;

	for (uint32_t r = 0; r < W; r++) {
		uint64_t cap = eg_workload_tokens(w, r);

		list[r] =
		    r == none
			? 0
			: (uint32_t)(eg__mix(w->seed ^ (uint64_t)s << 32 ^ r) %
				     (cap + 1));
	}
}

int eg_workload_step(const eg_workload_t *w, uint32_t s, eg_workload_t *out)
{
	uint32_t W = w->world, n = eg__entries(w->step_tokens);
	uint32_t *list;
	char err[EG_ERRMSG_MAX];
	int rc;

	if ((rc = eg_workload_copy(out, w)) < 0)
		return rc;
	if (s == 0)
		return EG_OK;
	list = malloc((W ? W : 1) * sizeof(*list));
	if (!list) {
		eg_workload_fini(out);
		return EG_ENOMEM;
	}
	if (n)
		rc = eg__counts(w, (s - 1) % n, list, err);
	else
		eg__drawn(w, s, list);
	if (rc < 0) {
		free(list);
		eg_workload_fini(out);
		return rc;
	}
	free(out->tokens_list);
	out->tokens_list = list;
	out->n_tokens_list = W;
	out->tokens_mode = EG_TOKENS_LIST;
	out->zero_ranks = 0;
	/* another seed: another routing (and other values) */
	out->seed = eg__mix(w->seed + s);
	return EG_OK;
}
