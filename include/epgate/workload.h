/* Workload: the shape, routing and data of one EP dispatch/combine case.
 * Every field has a key (the same in workload files and on the command
 * line as --key=value); see docs/workloads.md. */
#ifndef EPGATE_WORKLOAD_H
#define EPGATE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "epgate/dtype.h"

#define EG_NAME_MAX    64
#define EG_ERRMSG_MAX  256
#define EG_WORLD_MAX   4096
#define EG_EXPERTS_MAX 65536
#define EG_HIDDEN_MAX  (1u << 20)
#define EG_TOKENS_MAX  (1u << 24)
#define EG_STEPS_MAX   64
/* step_tokens: the value as written, e.g. "0/3,0/24,24" */
#define EG_STEP_TOKENS_LEN 256

typedef enum eg_routing {
	EG_ROUTING_UNIFORM = 0,
	EG_ROUTING_ZIPF = 1,	   /* expert e drawn with weight 1/(e+1)^s */
	EG_ROUTING_HOT_EXPERT = 2, /* with prob p, slot 0 is the hot expert */
	EG_ROUTING_HOT_RANK = 3,   /* with prob p, all slots on the hot rank */
} eg_routing_t;

typedef enum eg_data_mode {
	EG_DATA_EXACT = 0,  /* small integers, power-of-two weights */
	EG_DATA_RANDOM = 1, /* approx. normal values, uniform weights */
} eg_data_mode_t;

/* Non-finite values in the data (docs/semantics.md, "Non-finite
 * values"). */
typedef enum eg_nonfinite {
	EG_NONFINITE_NONE = 0,
	EG_NONFINITE_INPUT = 1,	 /* input:P: a token's input element */
	EG_NONFINITE_EXPERT = 2, /* expert:E: expert E's output is +Inf */
} eg_nonfinite_t;

typedef enum eg_tokens_mode {
	EG_TOKENS_UNIFORM = 0, /* T_r = T */
	EG_TOKENS_UNEVEN = 1,  /* T_r = max(0, T - r) */
	EG_TOKENS_LIST = 2,    /* explicit per-rank list */
} eg_tokens_mode_t;

typedef struct eg_workload {
	char name[EG_NAME_MAX];
	uint32_t world;	  /* W */
	uint32_t experts; /* E, divisible by W */
	uint32_t topk;	  /* K <= E */
	uint32_t hidden;  /* H */
	eg_dtype_t dtype;
	eg_tokens_mode_t tokens_mode;
	uint32_t tokens;	/* T for uniform/uneven */
	uint32_t *tokens_list;	/* W entries when tokens_mode == LIST */
	uint32_t n_tokens_list; /* entries given (must equal W) */
	uint64_t zero_ranks;	/* bitmask of ranks forced to 0 tokens (<64) */
	eg_routing_t routing;
	double zipf_s;	     /* zipf exponent */
	uint32_t hot_target; /* hot expert or hot rank */
	double hot_frac;     /* probability of the hot choice, [0,1] */
	double mask_ratio;   /* probability a top-k slot is -1, [0,1] */
	eg_data_mode_t data;
	uint64_t seed;
	uint32_t iter; /* iteration: reseeds token values, not routing */
	/* steps one engine instance runs (0 or 1: one); step s > 0 has new
	 * routing and new token counts (eg_workload_step) */
	uint32_t steps;
	/* token counts of steps 1, 2, ... (docs/workloads.md, "Steps"):
	 * entries separated by '/', each one count for every rank or one
	 * per rank; step s > 0 takes entry (s - 1) mod entries. Empty: the
	 * drawn counts of eg_workload_step. */
	char step_tokens[EG_STEP_TOKENS_LEN];
	/* probability that a top-k slot k > 0 repeats the expert of an
	 * earlier slot of its token (duplicate expert ids), [0, 1] */
	double dup_ratio;
	eg_nonfinite_t nonfinite;
	double nonfinite_p;	   /* input:P, (0, 1] */
	uint32_t nonfinite_expert; /* expert:E, < experts */
} eg_workload_t;

/* Defaults: W=2 E=8 K=2 H=128 T=16 bf16 uniform exact seed=1. */
void eg_workload_init(eg_workload_t *w);
void eg_workload_fini(eg_workload_t *w);
int eg_workload_copy(eg_workload_t *dst, const eg_workload_t *src);

/* Set one key from text. On error returns <0 and writes a one-line
 * message (without the file/argument prefix) into err. */
int eg_workload_set(eg_workload_t *w, const char *key, const char *value,
		    char err[EG_ERRMSG_MAX]);
/* Cross-field checks (E % W, K <= E, fp8 needs H % 128, exact-mode
 * budget, list length ...). Same error convention. */
int eg_workload_validate(const eg_workload_t *w, char err[EG_ERRMSG_MAX]);

/* The nonfinite key (lib/core/workload_nonfinite.c): set from text
 * ("none", "input:P", "expert:E"), and checked against w (P in (0, 1],
 * E < experts). Same error convention. */
int eg_nonfinite_set(eg_workload_t *w, const char *v, char err[EG_ERRMSG_MAX]);
int eg_nonfinite_check(const eg_workload_t *w, char err[EG_ERRMSG_MAX]);

/* Exact-mode magnitude budget A: every |x + b_e| <= A keeps all sums
 * exact. A = min(64, floor((2^p - 1) / (4 K))) with p the significand
 * bits of the combine dtype (weights are 0.5, 1 or 2). validate rejects
 * data=exact when A < 1. */
uint32_t eg_exact_budget(const eg_workload_t *w);

/* Step s of w's sequence (docs/workloads.md, "Steps"), the shapes one
 * engine instance meets as serving does: step 0 is w; step s > 0 draws
 * new routing (another seed) and new token counts, each rank's at most
 * its count in w (so w's buffers fit every step), and one rank has none
 * (the first, a middle one and the last in turn), or takes its counts
 * from w->step_tokens. out is overwritten (free it with
 * eg_workload_fini). */
int eg_workload_step(const eg_workload_t *w, uint32_t s, eg_workload_t *out);
/* A step_tokens value's syntax (world 0: any number of counts per entry)
 * or, with w's world, every entry against it and against step 0's counts;
 * EG_EINVAL / EG_ERANGE with the message in err. */
int eg_step_tokens_check(const char *v, const eg_workload_t *w,
			 char err[EG_ERRMSG_MAX]);

/* What verifying w costs a process that holds ranks [first, first + n):
 * bytes of memory, and element operations of one verified iteration,
 * estimated (lib/core/workload_budget.c). */
typedef struct eg_workload_cost {
	uint64_t bytes, ops;
} eg_workload_cost_t;
void eg_workload_cost(const eg_workload_t *w, uint32_t first, uint32_t n,
		      eg_workload_cost_t *c);
/* EG_ERANGE with a message naming the workload, the estimate and the
 * variable to raise when the cost exceeds this process's budgets:
 * EPGATE_MEM_BUDGET (bytes, default 1 GiB) and EPGATE_WORK_BUDGET
 * (element operations, default 2^32); EG_EINVAL for a bad variable. */
int eg_workload_budget(const eg_workload_t *w, uint32_t first, uint32_t n,
		       char *err, size_t len);

/* Derived quantities (valid after validate). */
uint32_t eg_workload_tokens(const eg_workload_t *w, uint32_t rank);
uint64_t eg_workload_total_tokens(const eg_workload_t *w);
static inline uint32_t eg_workload_local_experts(const eg_workload_t *w)
{
	return w->experts / w->world;
}

const char *eg_routing_name(eg_routing_t r);
const char *eg_data_mode_name(eg_data_mode_t d);

/* One-line command reproducing this workload: "epgate check --world=..." */
int eg_workload_to_args(const eg_workload_t *w, char *buf, size_t len);
/* Compact one-line summary "W=4 E=16 K=4 H=256 T=64 bf16 uniform exact". */
int eg_workload_summary(const eg_workload_t *w, char *buf, size_t len);

/* Workload files: INI (inih). Each [section] is one workload named after
 * the section; keys before any section are defaults for all sections.
 * Errors: "<path>:<line>: <message>" in err. Caller frees with
 * eg_workload_list_free. */
typedef struct eg_workload_list {
	eg_workload_t *items;
	size_t n;
} eg_workload_list_t;

int eg_workload_load(const char *path, eg_workload_list_t *out,
		     char err[EG_ERRMSG_MAX + 512]);
void eg_workload_list_free(eg_workload_list_t *l);
/* Keeps, in order, the workloads whose name contains filter (all when
 * filter is NULL). */
void eg_workload_list_filter(eg_workload_list_t *l, const char *filter);

#endif
