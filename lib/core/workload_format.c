/* A workload as text: the one-line repro command (every key, canonical,
 * parsed back to the same workload) and the compact summary of logs and
 * report titles (docs/workloads.md, "Repro command and summary"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/out.h"
#include "epgate/workload.h"

#define EG__LIST_SHOW 8 /* summary prints lists up to this length */

/* Shortest of %.15g..%.17g that reads back to the same double: exact
 * round trip without "0.10000000000000001" where "0.1" will do. */
static void eg__put_double(eg_out_t *o, double v)
{
	char s[40];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	eg_out_put(o, "%s", s);
}

static void eg__put_tokens(eg_out_t *o, const eg_workload_t *w)
{
	switch (w->tokens_mode) {
	case EG_TOKENS_UNIFORM:
		eg_out_put(o, "%" PRIu32, w->tokens);
		break;
	case EG_TOKENS_UNEVEN:
		eg_out_put(o, "uneven:%" PRIu32, w->tokens);
		break;
	case EG_TOKENS_LIST:
		eg_out_put(o, "list:");
		for (uint32_t i = 0; i < w->n_tokens_list; i++)
			eg_out_put(o, "%s%" PRIu32, i ? "," : "",
				   w->tokens_list[i]);
		break;
	}
}

static void eg__put_zero_ranks(eg_out_t *o, uint64_t mask)
{
	int first = 1;

	for (unsigned r = 0; r < 64; r++) {
		if (mask >> r & 1) {
			eg_out_put(o, "%s%u", first ? "" : ",", r);
			first = 0;
		}
	}
}

static void eg__put_routing(eg_out_t *o, const eg_workload_t *w)
{
	eg_out_put(o, "%s", eg_routing_name(w->routing));
	if (w->routing == EG_ROUTING_ZIPF) {
		eg_out_put(o, ":");
		eg__put_double(o, w->zipf_s);
	} else if (w->routing == EG_ROUTING_HOT_EXPERT ||
		   w->routing == EG_ROUTING_HOT_RANK) {
		eg_out_put(o, ":%" PRIu32 ":", w->hot_target);
		eg__put_double(o, w->hot_frac);
	}
}

static void eg__put_nonfinite(eg_out_t *o, const eg_workload_t *w)
{
	if (w->nonfinite == EG_NONFINITE_INPUT) {
		eg_out_put(o, "input:");
		eg__put_double(o, w->nonfinite_p);
	} else if (w->nonfinite == EG_NONFINITE_EXPERT) {
		eg_out_put(o, "expert:%" PRIu32, w->nonfinite_expert);
	}
}

static void eg__put_args(eg_out_t *o, const eg_workload_t *w)
{
	eg_out_put(o,
		   "epgate check --name=%s --world=%" PRIu32
		   " --experts=%" PRIu32 " --topk=%" PRIu32 " --hidden=%" PRIu32
		   " --tokens=",
		   w->name, w->world, w->experts, w->topk, w->hidden);
	eg__put_tokens(o, w);
	eg_out_put(o, " --zero_ranks=");
	eg__put_zero_ranks(o, w->zero_ranks);
	eg_out_put(o, " --dtype=%s --routing=", eg_dtype_name(w->dtype));
	eg__put_routing(o, w);
	eg_out_put(o, " --mask=");
	eg__put_double(o, w->mask_ratio);
	if (w->dup_ratio > 0.0) {
		eg_out_put(o, " --dup=");
		eg__put_double(o, w->dup_ratio);
	}
	if (w->nonfinite != EG_NONFINITE_NONE) {
		eg_out_put(o, " --nonfinite=");
		eg__put_nonfinite(o, w);
	}
	eg_out_put(o, " --data=%s --seed=%" PRIu64 " --iter=%" PRIu32,
		   eg_data_mode_name(w->data), w->seed, w->iter);
	if (w->steps > 1)
		eg_out_put(o, " --steps=%" PRIu32, w->steps);
	if (w->step_tokens[0])
		eg_out_put(o, " --step_tokens=%s", w->step_tokens);
}

static void eg__put_summary(eg_out_t *o, const eg_workload_t *w)
{
	eg_out_put(o,
		   "W=%" PRIu32 " E=%" PRIu32 " K=%" PRIu32 " H=%" PRIu32 " T=",
		   w->world, w->experts, w->topk, w->hidden);
	if (w->tokens_mode == EG_TOKENS_LIST &&
	    w->n_tokens_list > EG__LIST_SHOW)
		eg_out_put(o, "list[%" PRIu32 "]", w->n_tokens_list);
	else
		eg__put_tokens(o, w);
	if (w->zero_ranks) {
		eg_out_put(o, " zero=");
		eg__put_zero_ranks(o, w->zero_ranks);
	}
	eg_out_put(o, " %s ", eg_dtype_name(w->dtype));
	eg__put_routing(o, w);
	if (w->mask_ratio > 0.0)
		eg_out_put(o, " mask=%g", w->mask_ratio);
	if (w->dup_ratio > 0.0)
		eg_out_put(o, " dup=%g", w->dup_ratio);
	if (w->nonfinite != EG_NONFINITE_NONE) {
		eg_out_put(o, " nonfinite=");
		eg__put_nonfinite(o, w);
	}
	eg_out_put(o, " %s seed=%" PRIu64, eg_data_mode_name(w->data), w->seed);
	if (w->iter)
		eg_out_put(o, " iter=%" PRIu32, w->iter);
	if (w->steps > 1)
		eg_out_put(o, " steps=%" PRIu32, w->steps);
	if (w->step_tokens[0])
		eg_out_put(o, " step_tokens=%s", w->step_tokens);
}

/* w through put into buf: 0, or EG_ERANGE when buf is too small (buf
 * then holds a truncated, terminated string). */
static int eg__format(const eg_workload_t *w, char *buf, size_t len,
		      void (*put)(eg_out_t *, const eg_workload_t *))
{
	eg_out_t o;

	if (!buf || !len)
		return EG_ERANGE;
	eg_out_init(&o, buf, len);
	put(&o, w);
	return eg_out_full(&o) ? EG_ERANGE : 0;
}

int eg_workload_to_args(const eg_workload_t *w, char *buf, size_t len)
{
	return eg__format(w, buf, len, eg__put_args);
}

int eg_workload_summary(const eg_workload_t *w, char *buf, size_t len)
{
	return eg__format(w, buf, len, eg__put_summary);
}
