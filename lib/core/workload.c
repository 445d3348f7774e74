/* Workload keys: strict parsing, cross-field validation, derived token
 * counts and the one-line repro command. A typo in a workload file or on
 * the command line is an error that names the key and the bad value, never
 * a silent default. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/workload.h"

#define EG__ZIPF_MAX 100.0     /* beyond this every weight but one is ~0 */
#define EG__ITER_MAX 0xffffffu /* the Philox counter keeps 24 iter bits */

static const char eg__routing_help[] =
    "(uniform, zipf:S, hot-expert:E[:P], hot-rank:R[:P])";

/* Workload messages fill an EG_ERRMSG_MAX buffer. */
#define eg__fail(err, rc, ...)                                                 \
	eg_err_set((err), (err) ? EG_ERRMSG_MAX : 0, (rc), __VA_ARGS__)

/* A value shortened for messages, so one line stays one line. */
static const char *eg__shown(const char *v, char out[48])
{
	size_t n = strlen(v);

	if (n < 48)
		return v;
	memcpy(out, v, 40);
	memcpy(out + 40, "...", 4);
	return out;
}

static int eg__is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Numbers through the base parser (lib/base/num.c): one message shape
 * for workload keys, options and profile keys. */

/* Whole-string unsigned integer, decimal or 0x hex; no sign, no blanks. */
static int eg__parse_u64(const char *key, const char *s, uint64_t max,
			 uint64_t *out, char *err)
{
	return eg_parse_u64(key, s, 0, max, EG_NUM_HEX, out, err,
			    err ? EG_ERRMSG_MAX : 0);
}

static int eg__parse_u32(const char *key, const char *s, uint32_t max,
			 uint32_t *out, char *err)
{
	uint64_t v;
	int rc = eg__parse_u64(key, s, max, &v, err);

	if (!rc)
		*out = (uint32_t)v;
	return rc;
}

/* Whole-string finite number in [lo, hi], no inf/nan; a sign is read so
 * that "-0.1" is out of range rather than not a number. */
static int eg__parse_double(const char *key, const char *s, double lo,
			    double hi, double *out, char *err)
{
	return eg_parse_double(key, s, lo, hi, EG_NUM_SIGNED, out, err,
			       err ? EG_ERRMSG_MAX : 0);
}

/* Names end up in report files, JUnit classnames and shell commands. */
static int eg__check_name(const char *s, char *err)
{
	char buf[48];
	size_t n = strlen(s);

	if (!n)
		return eg__fail(err, EG_EINVAL, "name: empty value");
	if (n >= EG_NAME_MAX)
		return eg__fail(err, EG_ERANGE,
				"name: \"%s\" is longer than %d characters",
				eg__shown(s, buf), EG_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = eg__is_digit(c) || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z');

		if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.')))
			return eg__fail(
			    err, EG_EINVAL,
			    "name: \"%s\" must start with a letter "
			    "or digit and use only A-Z a-z 0-9 - _ .",
			    eg__shown(s, buf));
	}
	return 0;
}

static int eg__set_name(eg_workload_t *w, const char *v, char *err)
{
	int rc = eg__check_name(v, err);

	if (!rc)
		snprintf(w->name, sizeof(w->name), "%s", v);
	return rc;
}

static int eg__set_world(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u32("world", v, EG_WORLD_MAX, &w->world, err);
}

static int eg__set_experts(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u32("experts", v, EG_EXPERTS_MAX, &w->experts, err);
}

static int eg__set_topk(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u32("topk", v, EG_EXPERTS_MAX, &w->topk, err);
}

static int eg__set_hidden(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u32("hidden", v, EG_HIDDEN_MAX, &w->hidden, err);
}

static const eg_dtype_t eg__dtypes[] = {EG_DTYPE_BF16, EG_DTYPE_FP32,
					EG_DTYPE_FP8};

static int eg__set_dtype(eg_workload_t *w, const char *v, char *err)
{
	char buf[48];

	if (!*v)
		return eg__fail(err, EG_EINVAL, "dtype: empty value");
	for (size_t i = 0; i < sizeof(eg__dtypes) / sizeof(*eg__dtypes); i++) {
		if (!strcmp(v, eg_dtype_name(eg__dtypes[i]))) {
			w->dtype = eg__dtypes[i];
			return 0;
		}
	}
	return eg__fail(err, EG_EINVAL,
			"dtype: unknown dtype \"%s\" (bf16, fp32, fp8)",
			eg__shown(v, buf));
}

/* "list:a,b,c": the entries, with T set to the largest (T_max). */
static int eg__parse_list(eg_workload_t *w, const char *s, char *err)
{
	char buf[48], item[32];
	uint32_t n = 1, i = 0, tmax = 0, *list;
	const char *p;
	int rc;

	if (!*s)
		return eg__fail(err, EG_EINVAL,
				"tokens: \"list:\" needs entries (list:a,b,c)");
	for (p = s; *p; p++)
		n += *p == ',';
	if (n > EG_WORLD_MAX)
		return eg__fail(err, EG_ERANGE,
				"tokens: list has %" PRIu32
				" entries, more than the limit %u",
				n, EG_WORLD_MAX);
	list = malloc((size_t)n * sizeof(*list));
	if (!list)
		return eg__fail(err, EG_ENOMEM, "tokens: out of memory");
	for (p = s; i < n; i++) {
		size_t len = strcspn(p, ",");

		if (!len) {
			rc = eg__fail(err, EG_EINVAL,
				      "tokens: empty entry %" PRIu32
				      " in \"%s\"",
				      i + 1, eg__shown(s, buf));
			goto fail;
		}
		if (len >= sizeof(item)) {
			rc = eg__fail(err, EG_ERANGE,
				      "tokens: entry %" PRIu32
				      " in \"%s\" is too long",
				      i + 1, eg__shown(s, buf));
			goto fail;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		rc =
		    eg__parse_u32("tokens", item, EG_TOKENS_MAX, &list[i], err);
		if (rc)
			goto fail;
		if (list[i] > tmax)
			tmax = list[i];
		p += len + (p[len] == ',');
	}
	free(w->tokens_list);
	w->tokens_list = list;
	w->n_tokens_list = n;
	w->tokens_mode = EG_TOKENS_LIST;
	w->tokens = tmax;
	return 0;
fail:
	free(list);
	return rc;
}

static int eg__set_tokens(eg_workload_t *w, const char *v, char *err)
{
	eg_tokens_mode_t mode = EG_TOKENS_UNIFORM;
	uint32_t t;
	int rc;

	if (!strncmp(v, "list:", 5))
		return eg__parse_list(w, v + 5, err);
	if (!strncmp(v, "uneven:", 7)) {
		mode = EG_TOKENS_UNEVEN;
		v += 7;
	}
	rc = eg__parse_u32("tokens", v, EG_TOKENS_MAX, &t, err);
	if (rc)
		return rc;
	free(w->tokens_list);
	w->tokens_list = NULL;
	w->n_tokens_list = 0;
	w->tokens_mode = mode;
	w->tokens = t;
	return 0;
}

static int eg__set_zero_ranks(eg_workload_t *w, const char *v, char *err)
{
	char buf[48], item[32];
	uint64_t mask = 0, r;
	const char *p = v;
	int rc;

	while (*p) { /* empty value: no rank is forced to zero */
		size_t len = strcspn(p, ",");

		if (!len || len >= sizeof(item))
			return eg__fail(err, EG_EINVAL,
					"zero_ranks: \"%s\" is not a comma "
					"list of ranks",
					eg__shown(v, buf));
		memcpy(item, p, len);
		item[len] = '\0';
		rc = eg__parse_u64("zero_ranks", item, UINT64_MAX, &r, err);
		if (rc)
			return rc;
		if (r >= 64)
			return eg__fail(
			    err, EG_ERANGE,
			    "zero_ranks: rank %" PRIu64 " is not below 64", r);
		mask |= (uint64_t)1 << r;
		p += len;
		if (*p == ',' && !*++p)
			return eg__fail(err, EG_EINVAL,
					"zero_ranks: \"%s\" ends with a comma",
					eg__shown(v, buf));
	}
	w->zero_ranks = mask;
	return 0;
}

/* "hot-expert:E[:P]" / "hot-rank:R[:P]" after the prefix. */
static int eg__parse_hot(const char *what, const char *s, uint32_t *target,
			 double *frac, char *err)
{
	char key[40], tgt[32];
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	int rc;

	snprintf(key, sizeof(key), "routing: %s target", what);
	if (len >= sizeof(tgt))
		return eg__fail(err, EG_ERANGE, "%s is too long", key);
	memcpy(tgt, s, len);
	tgt[len] = '\0';
	rc = eg__parse_u32(key, tgt, EG_EXPERTS_MAX, target, err);
	if (rc)
		return rc;
	*frac = 1.0;
	if (!colon)
		return 0;
	snprintf(key, sizeof(key), "routing: %s probability", what);
	return eg__parse_double(key, colon + 1, 0.0, 1.0, frac, err);
}

static int eg__set_routing(eg_workload_t *w, const char *v, char *err)
{
	char buf[48];
	eg_routing_t r;
	double s = 1.0, frac = 1.0;
	uint32_t target = 0;
	int rc = 0;

	if (!*v)
		return eg__fail(err, EG_EINVAL, "routing: empty value");
	if (!strcmp(v, "uniform")) {
		r = EG_ROUTING_UNIFORM;
	} else if (!strncmp(v, "zipf:", 5)) {
		r = EG_ROUTING_ZIPF;
		rc = eg__parse_double("routing: zipf exponent", v + 5, 0.0,
				      EG__ZIPF_MAX, &s, err);
		if (!rc && !(s > 0.0))
			rc = eg__fail(err, EG_ERANGE,
				      "routing: zipf exponent %s must be > 0",
				      eg__shown(v + 5, buf));
	} else if (!strncmp(v, "hot-expert:", 11)) {
		r = EG_ROUTING_HOT_EXPERT;
		rc = eg__parse_hot("hot-expert", v + 11, &target, &frac, err);
	} else if (!strncmp(v, "hot-rank:", 9)) {
		r = EG_ROUTING_HOT_RANK;
		rc = eg__parse_hot("hot-rank", v + 9, &target, &frac, err);
	} else if (!strcmp(v, "zipf") || !strcmp(v, "hot-expert") ||
		   !strcmp(v, "hot-rank")) {
		return eg__fail(err, EG_EINVAL,
				"routing: \"%s\" needs a parameter %s", v,
				eg__routing_help);
	} else {
		return eg__fail(err, EG_EINVAL,
				"routing: unknown routing \"%s\" %s",
				eg__shown(v, buf), eg__routing_help);
	}
	if (rc)
		return rc;
	/* Unused parameters go back to their defaults, so that equal
	 * routings compare equal field by field. */
	w->routing = r;
	w->zipf_s = s;
	w->hot_target = target;
	w->hot_frac = frac;
	return 0;
}

static int eg__set_mask(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_double("mask", v, 0.0, 1.0, &w->mask_ratio, err);
}

static int eg__set_data(eg_workload_t *w, const char *v, char *err)
{
	char buf[48];

	if (!*v)
		return eg__fail(err, EG_EINVAL, "data: empty value");
	if (!strcmp(v, "exact"))
		w->data = EG_DATA_EXACT;
	else if (!strcmp(v, "random"))
		w->data = EG_DATA_RANDOM;
	else
		return eg__fail(
		    err, EG_EINVAL,
		    "data: unknown data mode \"%s\" (exact, random)",
		    eg__shown(v, buf));
	return 0;
}

static int eg__set_seed(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u64("seed", v, UINT64_MAX, &w->seed, err);
}

static int eg__set_iter(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_u32("iter", v, EG__ITER_MAX, &w->iter, err);
}

static int eg__set_dup(eg_workload_t *w, const char *v, char *err)
{
	return eg__parse_double("dup", v, 0.0, 1.0, &w->dup_ratio, err);
}

static int eg__set_step_tokens(eg_workload_t *w, const char *v, char *err)
{
	int rc = eg_step_tokens_check(v, NULL, err);

	if (!rc)
		snprintf(w->step_tokens, sizeof(w->step_tokens), "%s", v);
	return rc;
}

static int eg__set_steps(eg_workload_t *w, const char *v, char *err)
{
	int rc = eg__parse_u32("steps", v, EG_STEPS_MAX, &w->steps, err);

	if (rc == 0 && w->steps == 0)
		return eg__fail(err, EG_ERANGE,
				"steps: 0 is out of range [1, %d]",
				EG_STEPS_MAX);
	return rc;
}

static const struct {
	const char *key;
	int (*set)(eg_workload_t *w, const char *v, char *err);
} eg__keys[] = {
    {"name", eg__set_name},
    {"world", eg__set_world},
    {"experts", eg__set_experts},
    {"topk", eg__set_topk},
    {"hidden", eg__set_hidden},
    {"dtype", eg__set_dtype},
    {"tokens", eg__set_tokens},
    {"zero_ranks", eg__set_zero_ranks},
    {"routing", eg__set_routing},
    {"mask", eg__set_mask},
    {"data", eg__set_data},
    {"seed", eg__set_seed},
    {"iter", eg__set_iter},
    {"steps", eg__set_steps},
    {"step_tokens", eg__set_step_tokens},
    {"dup", eg__set_dup},
    {"nonfinite", eg_nonfinite_set},
};

void eg_workload_init(eg_workload_t *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "default");
	w->world = 2;
	w->experts = 8;
	w->topk = 2;
	w->hidden = 128;
	w->dtype = EG_DTYPE_BF16;
	w->tokens_mode = EG_TOKENS_UNIFORM;
	w->tokens = 16;
	w->routing = EG_ROUTING_UNIFORM;
	w->zipf_s = 1.0;
	w->hot_target = 0;
	w->hot_frac = 1.0;
	w->mask_ratio = 0.0;
	w->data = EG_DATA_EXACT;
	w->seed = 1;
	w->iter = 0;
}

void eg_workload_fini(eg_workload_t *w)
{
	free(w->tokens_list);
	w->tokens_list = NULL;
	w->n_tokens_list = 0;
}

/* dst is overwritten as if uninitialised: it must not own a list. */
int eg_workload_copy(eg_workload_t *dst, const eg_workload_t *src)
{
	uint32_t *list = NULL;
	size_t n = src->tokens_list ? src->n_tokens_list : 0;

	if (dst == src)
		return 0;
	if (n) {
		list = malloc(n * sizeof(*list));
		if (!list)
			return EG_ENOMEM;
		memcpy(list, src->tokens_list, n * sizeof(*list));
	}
	*dst = *src;
	dst->tokens_list = list;
	dst->n_tokens_list = (uint32_t)n;
	return 0;
}

int eg_workload_set(eg_workload_t *w, const char *key, const char *value,
		    char err[EG_ERRMSG_MAX])
{
	char buf[48];

	if (!key || !*key)
		return eg__fail(err, EG_EINVAL, "empty key");
	if (!value)
		value = "";
	for (size_t i = 0; i < sizeof(eg__keys) / sizeof(*eg__keys); i++)
		if (!strcmp(key, eg__keys[i].key))
			return eg__keys[i].set(w, value, err);
	return eg__fail(err, EG_EINVAL,
			"unknown key \"%s\" (name, world, experts, topk, "
			"hidden, dtype, tokens, zero_ranks, routing, mask, "
			"data, seed, iter, steps, step_tokens, dup, "
			"nonfinite)",
			eg__shown(key, buf));
}

uint32_t eg_exact_budget(const eg_workload_t *w)
{
	unsigned p = eg_dtype_mantissa_bits(eg_combine_dtype(w->dtype));
	uint64_t a;

	if (!w->topk || !p || p >= 64)
		return 0;
	a = (((uint64_t)1 << p) - 1) / (4 * (uint64_t)w->topk);
	return a < 64 ? (uint32_t)a : 64;
}

/* Plain field limits, for workloads filled in by code rather than set. */
static int eg__validate_fields(const eg_workload_t *w, char *err)
{
	if (eg__check_name(w->name, err))
		return EG_EINVAL;
	if (w->world < 1)
		return eg__fail(err, EG_EINVAL,
				"world=0: need at least one rank");
	if (w->world > EG_WORLD_MAX || w->experts > EG_EXPERTS_MAX ||
	    w->hidden > EG_HIDDEN_MAX || w->iter > EG__ITER_MAX ||
	    w->steps > EG_STEPS_MAX)
		return eg__fail(err, EG_ERANGE,
				"world=%" PRIu32 " experts=%" PRIu32
				" hidden=%" PRIu32 " iter=%" PRIu32
				": a value exceeds its limit",
				w->world, w->experts, w->hidden, w->iter);
	if (w->experts < 1)
		return eg__fail(err, EG_EINVAL,
				"experts=0: need at least one expert");
	if (w->hidden < 1)
		return eg__fail(err, EG_EINVAL,
				"hidden=0: need at least one channel");
	if (w->topk < 1)
		return eg__fail(err, EG_EINVAL,
				"topk=0: need at least one expert per token");
	if ((unsigned)w->dtype > EG_DTYPE_FP8 ||
	    (unsigned)w->data > EG_DATA_RANDOM ||
	    (unsigned)w->routing > EG_ROUTING_HOT_RANK ||
	    (unsigned)w->tokens_mode > EG_TOKENS_LIST)
		return eg__fail(err, EG_EINVAL, "an enum field is invalid");
	if (!(w->mask_ratio >= 0.0 && w->mask_ratio <= 1.0))
		return eg__fail(err, EG_ERANGE, "mask=%g is outside [0, 1]",
				w->mask_ratio);
	if (!(w->dup_ratio >= 0.0 && w->dup_ratio <= 1.0))
		return eg__fail(err, EG_ERANGE, "dup=%g is outside [0, 1]",
				w->dup_ratio);
	if (!(w->hot_frac >= 0.0 && w->hot_frac <= 1.0))
		return eg__fail(err, EG_ERANGE,
				"routing: hot probability %g is outside [0, 1]",
				w->hot_frac);
	if (w->routing == EG_ROUTING_ZIPF &&
	    !(w->zipf_s > 0.0 && w->zipf_s <= EG__ZIPF_MAX))
		return eg__fail(err, EG_ERANGE,
				"routing: zipf exponent %g is outside (0, %g]",
				w->zipf_s, EG__ZIPF_MAX);
	return 0;
}

int eg_workload_validate(const eg_workload_t *w, char err[EG_ERRMSG_MAX])
{
	int rc = eg__validate_fields(w, err);

	if (rc)
		return rc;
	if (w->experts % w->world)
		return eg__fail(err, EG_EINVAL,
				"experts=%" PRIu32
				" is not divisible by world=%" PRIu32,
				w->experts, w->world);
	if (w->topk > w->experts)
		return eg__fail(err, EG_EINVAL,
				"topk=%" PRIu32 " exceeds experts=%" PRIu32,
				w->topk, w->experts);
	if (w->dtype == EG_DTYPE_FP8 && w->hidden % EG_FP8_BLOCK)
		return eg__fail(err, EG_EINVAL,
				"dtype=fp8 needs hidden to be a multiple of "
				"%d (hidden=%" PRIu32 ")",
				EG_FP8_BLOCK, w->hidden);
	if (w->tokens_mode == EG_TOKENS_LIST &&
	    (!w->tokens_list || w->n_tokens_list != w->world))
		return eg__fail(
		    err, EG_EINVAL,
		    "tokens: list has %" PRIu32 " entries but world=%" PRIu32,
		    w->tokens_list ? w->n_tokens_list : 0, w->world);
	if (w->world < 64 && w->zero_ranks >> w->world) {
		unsigned r = 63;

		while (!(w->zero_ranks >> r & 1))
			r--;
		return eg__fail(
		    err, EG_EINVAL,
		    "zero_ranks: rank %u is not below world=%" PRIu32, r,
		    w->world);
	}
	if (w->routing == EG_ROUTING_HOT_EXPERT && w->hot_target >= w->experts)
		return eg__fail(err, EG_EINVAL,
				"routing: hot expert %" PRIu32
				" is not below experts=%" PRIu32,
				w->hot_target, w->experts);
	if (w->routing == EG_ROUTING_HOT_RANK && w->hot_target >= w->world)
		return eg__fail(err, EG_EINVAL,
				"routing: hot rank %" PRIu32
				" is not below world=%" PRIu32,
				w->hot_target, w->world);
	if ((rc = eg_nonfinite_check(w, err)))
		return rc;
	if (w->data == EG_DATA_EXACT && eg_exact_budget(w) < 1) {
		eg_dtype_t c = eg_combine_dtype(w->dtype);
		unsigned p = eg_dtype_mantissa_bits(c);

		return eg__fail(
		    err, EG_EINVAL,
		    "data=exact: topk=%" PRIu32
		    " is too large for exact sums in %s%s (%u "
		    "significand bits allow topk <= %u); use "
		    "data=random",
		    w->topk, eg_dtype_name(c),
		    w->dtype == EG_DTYPE_FP8 ? ", fp8's combine type" : "", p,
		    ((1u << p) - 1) / 4);
	}
	if (eg_workload_total_tokens(w) > EG_TOKENS_MAX)
		return eg__fail(err, EG_ERANGE,
				"tokens: %" PRIu64
				" tokens in total exceed the limit %u",
				eg_workload_total_tokens(w), EG_TOKENS_MAX);
	return eg_step_tokens_check(w->step_tokens, w, err);
}

uint32_t eg_workload_tokens(const eg_workload_t *w, uint32_t rank)
{
	uint32_t t = 0;

	if (rank >= w->world)
		return 0;
	if (rank < 64 && (w->zero_ranks >> rank & 1))
		return 0;
	switch (w->tokens_mode) {
	case EG_TOKENS_UNIFORM:
		t = w->tokens;
		break;
	case EG_TOKENS_UNEVEN:
		t = w->tokens > rank ? w->tokens - rank : 0;
		break;
	case EG_TOKENS_LIST:
		t = w->tokens_list && rank < w->n_tokens_list
			? w->tokens_list[rank]
			: 0;
		break;
	}
	return t;
}

uint64_t eg_workload_total_tokens(const eg_workload_t *w)
{
	uint64_t sum = 0;

	for (uint32_t r = 0; r < w->world; r++)
		sum += eg_workload_tokens(w, r);
	return sum;
}

const char *eg_routing_name(eg_routing_t r)
{
	static const char *const name[] = {
	    [EG_ROUTING_UNIFORM] = "uniform",
	    [EG_ROUTING_ZIPF] = "zipf",
	    [EG_ROUTING_HOT_EXPERT] = "hot-expert",
	    [EG_ROUTING_HOT_RANK] = "hot-rank",
	};

	return (size_t)r < sizeof(name) / sizeof(name[0]) ? name[r] : "unknown";
}

const char *eg_data_mode_name(eg_data_mode_t d)
{
	return d == EG_DATA_EXACT    ? "exact"
	       : d == EG_DATA_RANDOM ? "random"
				     : "unknown";
}
