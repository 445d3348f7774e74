/* Verifier: compares an engine's dispatch and combine results with the
 * reference. Counts wrong elements per field and records the first
 * mismatches with their coordinates and bits. */
#ifndef EPGATE_VERIFY_H
#define EPGATE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/ep.h"

#define EG_VERIFY_MAX_FIRST 8

#define EG_FIELD_MAP(F)                                                        \
	F(NUM_ROWS, "num_rows")                                                \
	F(RANK_PREFIX, "rank_prefix")                                          \
	F(SRC, "src")	      /* (src_rank, src_token) per row */              \
	F(ROW_SET, "row_set") /* rows missing, duplicated or unknown */        \
	F(X, "x")                                                              \
	F(SCALES, "scales")                                                    \
	F(TOPK_IDX, "topk_idx")                                                \
	F(TOPK_W, "topk_w")                                                    \
	F(EXPERT_COUNT, "expert_count")                                        \
	F(COMBINE, "combine")                                                  \
	/* a plugin's native layout: counters beyond the rows, keys out of     \
	 * range, duplicated or for an expert not selected, copies of one      \
	 * token that differ */                                                \
	F(NATIVE_COUNT, "native_count")                                        \
	F(NATIVE_KEY, "native_key")                                            \
	F(NATIVE_COPY, "native_copy")                                          \
	/* the buffers epgate hands a plugin: bytes written past the end of    \
	 * one (row: the buffer, col: the byte), an input it changed, output   \
	 * it left unwritten (still the poison) */                             \
	F(NATIVE_GUARD, "native_guard")                                        \
	F(NATIVE_INPUT, "native_input")                                        \
	F(NATIVE_UNWRITTEN, "native_unwritten")                                \
	/* a fixed-order combine that gave other bytes for the same inputs */  \
	F(COMBINE_REPEAT, "combine_repeat")

typedef enum eg_field {
#define EG__FIELD_ENUM(n, s) EG_FIELD_##n,
	EG_FIELD_MAP(EG__FIELD_ENUM)
#undef EG__FIELD_ENUM
	    EG_FIELD__COUNT
} eg_field_t;

const char *eg_field_name(eg_field_t f);

typedef enum eg_compare {
	EG_COMPARE_BITS = 0,	/* bit-exact */
	EG_COMPARE_BOUNDED = 1, /* combine within an error bound of fp64 */
} eg_compare_t;

typedef struct eg_mismatch {
	eg_field_t field;
	int32_t rank;	   /* rank whose output is wrong */
	int32_t src_rank;  /* -1 if not applicable */
	int32_t src_token; /* -1 if not applicable */
	int32_t expert;	   /* global expert id or -1 */
	int64_t row;	   /* row in the output, -1 if n/a */
	int64_t col;	   /* column / slot / index, -1 if n/a */
	uint64_t expected; /* raw bits (or count) */
	uint64_t actual;
} eg_mismatch_t;

typedef struct eg_verdict {
	uint64_t checked[EG_FIELD__COUNT];
	uint64_t wrong[EG_FIELD__COUNT];
	uint64_t missing_rows, duplicate_rows, unknown_rows;
	uint64_t nonfinite;   /* NaN/Inf where the reference has none */
	double max_abs_err;   /* bounded mode: worst |actual - ref64| */
	double max_err_ratio; /* worst |actual - ref64| / bound */
	uint32_t n_first;
	eg_mismatch_t first[EG_VERIFY_MAX_FIRST];
} eg_verdict_t;

void eg_verdict_init(eg_verdict_t *v);
uint64_t eg_verdict_total_wrong(const eg_verdict_t *v);
/* Adds b's counts into a; keeps the first mismatches of both. */
void eg_verdict_merge(eg_verdict_t *a, const eg_verdict_t *b);
/* Counts one wrong element of m->field and keeps m if there is room
 * (for checkers outside this module, e.g. a plugin's native layout). */
void eg_verdict_wrong(eg_verdict_t *v, const eg_mismatch_t *m);
/* The same with m's fields as arguments, in their order. */
void eg_verdict_wrong_at(eg_verdict_t *v, eg_field_t f, int32_t rank,
			 int32_t src_rank, int32_t src_token, int32_t expert,
			 int64_t row, int64_t col, uint64_t expected,
			 uint64_t actual);

/* Dispatch of rank d: bit-exact comparison of every field; rows are also
 * matched by (src_rank, src_token) to tell dropped, duplicated and
 * unknown rows apart from misplaced ones. Returns EG_OK when equal,
 * EG_EMISMATCH when not, <0 on other errors. */
int eg_verify_dispatch(const eg_workload_t *w, const eg_recv_t *expected,
		       const eg_recv_t *actual, eg_verdict_t *v);

/* Combine of source rank s: actual vs expected (bits) or vs ref64 within
 * bound = 4 * 2^-(p-1) * mag64 + 2^-(p-1) * |ref64| with p the combine
 * dtype's significand bits (bounded). NaN/Inf always fail. */
int eg_verify_combine(const eg_workload_t *w, uint32_t s, eg_compare_t mode,
		      const void *expected, const double *ref64,
		      const double *mag64, const void *actual, eg_verdict_t *v);
/* Whether eg_verify_combine's arguments (and those of its device twin,
 * eg_verify_combine_cuda) can be checked: w, actual and v given, s a rank
 * of w, and what mode compares against given.  Else both EG_EINVAL. */
int eg_verify_combine_args_ok(const eg_workload_t *w, uint32_t s,
			      eg_compare_t mode, const void *expected,
			      const double *ref64, const double *mag64,
			      const void *actual, const eg_verdict_t *v);

/* Scales the bound eg_verify_combine (and its device twin) applies to
 * each of n elements by factor, through their magnitudes: mag64[i] is
 * rewritten so that 4u * mag + u * |ref| becomes factor times what it was,
 * and every memory space's verifier applies it as it is. factor > 0. */
void eg_verify_bound_scale(const double *ref64, double *mag64, size_t n,
			   double factor);
/* The combine of source rank s run twice on the same inputs by an engine
 * that promises a fixed order: first and again (host memory) must hold
 * the same bytes; each differing element is counted under combine_repeat
 * with both bit patterns. EG_OK, EG_EMISMATCH or EG_EINVAL. */
int eg_verify_combine_repeat(const eg_workload_t *w, uint32_t s,
			     const void *first, const void *again,
			     eg_verdict_t *v);

/* What expert_count counts (docs/semantics.md), said with each of its
 * mismatches: a library may read "per expert" as rows or as slots. */
#define EG_EXPERT_COUNT_MEANING                                                \
	"expert_count counts slots: the top-k slots of the received rows "     \
	"that name the local expert, so a row naming it in two slots counts "  \
	"2 (docs/semantics.md)"

/* One sentence for m where its field can be read more than one way
 * (expert_count: the expert, got, expected and what it counts), into buf
 * (snprintf style); 0 and buf "" for the other fields. */
int eg_mismatch_explain(const eg_mismatch_t *m, char *buf, size_t len);

/* Multi-line human-readable description (fields with wrong counts, first
 * mismatches, each with its explanation where it has one). Returns chars
 * written (snprintf style). */
int eg_verdict_format(const eg_verdict_t *v, char *buf, size_t len);

#endif
