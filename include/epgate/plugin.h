/* The epgate plugin ABI: an expert-parallel library that nobody here
 * wrote (NCCL EP, DeepEP, UCCL-EP, pplx-kernels, ...) put under epgate's
 * bit-exact suites and its measurements. A plugin is a shared object that
 * includes only this header (no other epgate header, no epgate library to
 * link) and exports one C symbol, eg_plugin_entry. docs/plugins.md
 * explains every field with a worked example.
 *
 * Versioning (libfabric's convention): every struct that crosses the
 * boundary starts with its size, and grows only by appending. The table
 * a plugin returns says which ABI version it was built for; epgate loads
 * any version from 1 up to its own (a slot past the table's size counts
 * as absent) and refuses a newer one, naming both versions. Structs that
 * epgate hands over are zero-filled before it sets their fields, so a
 * field a plugin does not know is never read, and a field epgate does not
 * know (zero) always means "default".
 *
 * Memory: every pointer in the input, receive and combine arguments lives
 * in the plugin's memory space (caps.memory): host memory, or device
 * memory of env.cuda_device. epgate copies its generated data there and
 * reads results back itself, in verification steps only. */
#ifndef EPGATE_PLUGIN_H
#define EPGATE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. 2 appended to eg_plugin_caps_t the
 * combine order (order, order_bound), the library's identity (lib_name,
 * lib_version, lib_build) and the options it takes; a version-1 plugin
 * loads as before (those fields read as zero). */
#define EG_PLUGIN_ABI_VERSION 2
/* A size-versioned struct holds field: its size (set by whoever made it)
 * covers the field. A plugin writes an appended caps field only when
 * EG_PLUGIN_HAS(caps, eg_plugin_caps_t, field), so that an older epgate,
 * whose caps end earlier, is never written past. */
#define EG_PLUGIN_HAS(p, type, field)                                          \
	((p)->size >= offsetof(type, field) + sizeof(((type *)0)->field))
/* The one exported symbol (an eg_plugin_entry_fn). */
#define EG_PLUGIN_ENTRY_NAME "eg_plugin_entry"

/* Returns of every fallible call. Any other value, negative or positive,
 * is a failure like EG_PLUGIN_EFAIL (a positive one is said with its
 * code). */
#define EG_PLUGIN_OK 0
/* This shape, dtype or option is not supported: the case is skipped
 * (reported as a skip with the plugin's message), not failed. */
#define EG_PLUGIN_ENOTSUP (-1)
/* Anything else that went wrong: the case fails with the plugin's own
 * message (err at query/create, error(inst) afterwards). */
#define EG_PLUGIN_EFAIL (-2)

/* Memory spaces (caps.memory). */
#define EG_PLUGIN_MEM_HOST 0
#define EG_PLUGIN_MEM_CUDA 1 /* device memory of env.cuda_device */

/* Element types. fp8 is e4m3 with one fp32 scale per 128 channels of a
 * token (scale * e4m3 value = the channel); its expert outputs and combine
 * results are bf16. The others combine in themselves. */
#define EG_PLUGIN_DTYPE_BF16   0
#define EG_PLUGIN_DTYPE_FP32   1
#define EG_PLUGIN_DTYPE_FP8    2
#define EG_PLUGIN_DTYPE_BIT(t) (1u << (t))

/* Native receive layouts (caps.layout). A layout has G groups of
 * recv.stride rows each; rows of group g are [g * stride, g * stride +
 * count[g]) and rows past count[g] are padding, never read.
 *
 * FLAT (G = 1; NCCL EP high-throughput, DeepEP normal mode): one row per
 * (source token, this rank) for every token with at least one of its
 * experts here, rows in any order, each with the token's K top-k slots
 * made local (local expert id or -1) and their weights (0 where -1).
 * The expert stage writes one weighted row per row (y = sum over local
 * slots of w_k * f_e(x)); combine sums one row per destination rank.
 *
 * RANK_MAJOR (G = world; NCCL EP low-latency rank-major): FLAT rows
 * grouped by source rank: group g holds rows from source rank g.
 *
 * EXPERT_MAJOR (G = local experts; DeepEP low-latency, NCCL EP
 * low-latency expert-major, [L x (W * max tokens) x H]): one copy of a
 * token per (token, local expert it selected), in the block of that
 * expert; no top-k slots and no weights are delivered. The expert stage
 * writes one UNWEIGHTED row per copy (y = f_e(x)) and the plugin's
 * combine applies the weights, taking them from the source rank's input
 * (in->topk_idx, in->topk_w): out[t] = sum over the token's slots k of
 * w_k * y(copy of t in expert topk_idx[k]). */
#define EG_PLUGIN_LAYOUT_FLAT	      1
#define EG_PLUGIN_LAYOUT_RANK_MAJOR   2
#define EG_PLUGIN_LAYOUT_EXPERT_MAJOR 3

/* caps.flags */
/* Combine sums the rows of destination ranks in ascending rank order in
 * fp32 and casts once, as the reference does: results must then match
 * bit for bit on random data too (else within an error bound). FLAT and
 * RANK_MAJOR only: an expert-major expert stage rounds every copy. */
#define EG_PLUGIN_CANONICAL_ORDER 0x1u
/* CUDA plugins: epgate opens an NCCL communicator over the world and
 * passes it in env.nccl_comm. */
#define EG_PLUGIN_WANTS_NCCL 0x2u
/* Input top-k ids as int64 instead of int32. */
#define EG_PLUGIN_INPUT_IDX64 0x4u
/* FLAT, RANK_MAJOR: a row's K slots may come in any order (NCCL EP
 * high-throughput gives the local experts ascending, then -1): epgate
 * compares a row's slots as a set of (local id, weight) pairs and puts
 * them back in the token's slot order before it checks and maps them. */
#define EG_PLUGIN_SLOTS_ANY_ORDER 0x8u
/* CUDA plugins: dispatch and combine may be captured into a CUDA graph
 * on env.cuda_stream after the instance's first call of a routing epoch,
 * and the graph launched in place of the call (the replay boundary,
 * docs/metrics.md "Boundaries"): a call queues only stream-ordered work
 * on cuda_stream (or streams joined back to it), waits for nothing on
 * the host, allocates nothing, and what it returned in recv at the
 * capture holds for every replay on new data staged in the same input
 * buffers. epgate captures after a verified call, then verifies replays
 * on new data before it times any: a replay that writes nothing or
 * writes elsewhere fails the case. A host plugin may declare it for
 * epgate's host model of a replay (the call made again with the
 * captured arguments, its returned recv ignored). */
#define EG_PLUGIN_CAPTURE_SAFE 0x10u

/* How combine sums a token's rows (caps.order, ABI 2), i.e. what epgate
 * demands of it on random data (exact data is bit-exact in any order):
 * UNSTATED (0, every ABI-1 plugin): the CANONICAL_ORDER flag decides
 *   between CANONICAL and ANY;
 * CANONICAL: destination ranks ascending in fp32, one cast: bit for bit
 *   against the reference (= the CANONICAL_ORDER flag);
 * FIXED: an order of its own, the same every call: within order_bound of
 *   the fp64 reference, and identical inputs give identical output bytes
 *   (run to run, call to call);
 * ANY: no fixed order (atomics, arrival order): within order_bound only. */
#define EG_PLUGIN_ORDER_UNSTATED  0
#define EG_PLUGIN_ORDER_CANONICAL 1
#define EG_PLUGIN_ORDER_FIXED	  2
#define EG_PLUGIN_ORDER_ANY	  3

/* Options from the command line: --engine plugin:PATH,key=value,... */
typedef struct eg_plugin_opts {
	uint32_t n;
	const char *const *key;
	const char *const *value;
} eg_plugin_opts_t;

/* What a plugin declares (query). epgate zero-fills it and sets size. */
typedef struct eg_plugin_caps {
	size_t size;
	uint32_t memory; /* EG_PLUGIN_MEM_* */
	uint32_t layout; /* EG_PLUGIN_LAYOUT_* */
	uint32_t dtypes; /* EG_PLUGIN_DTYPE_BIT(...) of each supported */
	uint32_t flags;	 /* EG_PLUGIN_CANONICAL_ORDER, ... */
	/* limits, 0: none. Cases beyond a limit are skipped. */
	uint32_t max_world, max_tokens, max_hidden, max_experts, max_topk;
	uint32_t hidden_multiple; /* hidden must be a multiple of it (0: any) */
	/* --- ABI 2 (write only where EG_PLUGIN_HAS) --- */
	uint32_t order; /* EG_PLUGIN_ORDER_* */
	/* FIXED, ANY: the largest error of a combined element the library
	 * promises, in units of the reference's bound (docs/plugins.md,
	 * "Combine order"); 0: epgate's default bound */
	double order_bound;
	/* The library under test as this plugin loaded it (not as it was
	 * compiled, where the two can differ): its name ("DeepEP"), version
	 * ("1.2.1") and build (commit, options), for the evidence of every
	 * result. Static strings, valid until exit, or NULL. */
	const char *lib_name, *lib_version, *lib_build;
	/* The options it takes, for `epgate plugin info`: one line per
	 * option, "key=VALUES  what it does"; NULL: not stated. */
	const char *options;
} eg_plugin_caps_t;

/* Small-blob collectives over epgate's out-of-band bootstrap (every rank
 * calls them in the same order). Each has epgate's deadline; on failure
 * (deadline, a peer gone) it returns a negative value and error(ctx)
 * names the missing ranks. */
typedef struct eg_plugin_boot {
	void *ctx;
	/* all = world * len bytes, rank r's blob at r * len */
	int (*allgather)(void *ctx, const void *mine, size_t len, void *all);
	int (*bcast)(void *ctx, void *buf, size_t len, uint32_t root);
	int (*barrier)(void *ctx);
	const char *(*error)(void *ctx);
} eg_plugin_boot_t;

/* What epgate gives an instance: one instance per case (one workload
 * shape), created and destroyed by every rank together; at most one
 * instance lives in a process at a time. */
typedef struct eg_plugin_env {
	size_t size;
	uint32_t rank, world;		 /* this rank among world ranks */
	uint32_t local_rank, local_size; /* within this (virtual) node */
	/* the workload's shape */
	uint32_t experts, local_experts; /* expert e lives on rank
					    e / local_experts */
	uint32_t topk, hidden;
	uint32_t dtype;		/* EG_PLUGIN_DTYPE_* of the payload */
	uint32_t combine_dtype; /* of expert outputs and combine results */
	uint32_t tokens;	/* this rank's tokens (may be 0) */
	uint32_t max_tokens;	/* most tokens of any rank */
	uint64_t total_tokens;	/* tokens of all ranks */
	const eg_plugin_boot_t *boot;
	/* CUDA plugins: the device (current when epgate calls in), a
	 * cudaStream_t to run on, and a ncclComm_t over the world when
	 * caps.flags asked for one (else NULL). -1 and NULL on the host. */
	int cuda_device;
	void *cuda_stream;
	void *nccl_comm;
	eg_plugin_opts_t opts;
	double timeout_s; /* epgate's deadline per call */
	/* --- appended (read where size covers it) --- */
	/* The library's own call inside dispatch or combine, for a plugin
	 * that does work of its own around it (staging copies, a language
	 * bridge): mark(mark_ctx, 0) just before the library's call,
	 * mark(mark_ctx, 1) just after, on cuda_stream (the host clock for
	 * a host plugin). In timed steps epgate then times that span, the
	 * rest of the call a phase of its own (docs/metrics.md,
	 * "Boundaries"). Outside timed steps it does nothing. Returns
	 * EG_PLUGIN_OK, or EG_PLUGIN_EFAIL for marks out of order (a start
	 * twice, an end without a start). NULL: not offered. */
	int (*mark)(void *mark_ctx, int end);
	void *mark_ctx;
} eg_plugin_env_t;

/* One rank's dispatch input, epgate's generated data (also passed to
 * combine, for expert-major combines that apply the weights): a copy
 * for the plugin, checked after each verified call (a plugin must not
 * write into it). Within one instance the routing (topk_idx, topk_w)
 * changes only when routing_epoch does, and routing_epoch changes on
 * every rank at the same call (also on a rank without tokens); token
 * values change every iteration. A token may select one expert in two
 * slots (docs/semantics.md). */
typedef struct eg_plugin_input {
	size_t size;
	uint32_t tokens;
	uint32_t routing_epoch; /* 1, 2, ...: a plugin may cache per epoch */
	const void *x;		/* tokens * hidden payload elements */
	const float *scales;	/* fp8: tokens * hidden / 128, else NULL */
	/* tokens * topk global expert ids, -1 where masked; int32, or int64
	 * with EG_PLUGIN_INPUT_IDX64 */
	const void *topk_idx;
	const float *topk_w; /* tokens * topk, 0 where masked */
} eg_plugin_input_t;

/* What dispatch received on this rank, in the native layout (see the
 * layouts above); filled by the plugin. Pointers are the plugin's (in its
 * memory space) and must stay valid and unchanged until the next dispatch
 * or destroy. Row i of the layout is element i of every per-row array. */
typedef struct eg_plugin_recv {
	size_t size;	 /* set by epgate */
	uint32_t stride; /* rows per group */
	/* G counters (int32, or int64 with count_bytes 8): valid rows of
	 * each group. FLAT may leave it NULL and set rows instead. */
	const void *count;
	uint32_t count_bytes; /* 4 (or 0) or 8 */
	uint32_t rows;	      /* FLAT without count: rows received */
	const void *x;	      /* G * stride * hidden payload elements */
	const float *scales;  /* fp8: G * stride * hidden / 128 */
	/* Per row: the key. Source rank and the token's index there (and
	 * the group: the expert of a copy, the source rank of a rank-major
	 * row). Both NULL: epgate finds each row's key by its content (see
	 * docs/plugins.md); RANK_MAJOR may give src_token alone. */
	const int32_t *src_rank;
	const int32_t *src_token;
	/* FLAT, RANK_MAJOR: G * stride * topk local expert ids (-1 where
	 * the slot's expert is elsewhere or masked), int32 or with
	 * idx_bytes 8 int64, and their weights (0 where -1). */
	const void *topk_idx;
	uint32_t idx_bytes; /* 4 (or 0) or 8 */
	const float *topk_w;
	/* FLAT, RANK_MAJOR, optional: local_experts counters (count_bytes
	 * wide), checked when given: the slots naming each local expert,
	 * i.e. its count in the valid rows' topk_idx, so a row naming one
	 * expert in two slots counts 2 there (docs/semantics.md). */
	const void *expert_count;
	/* Optional: where the expert outputs go (G * stride * hidden
	 * combine elements, plugin memory), e.g. a registered buffer; NULL:
	 * epgate allocates one. */
	void *y;
} eg_plugin_recv_t;

typedef struct eg_plugin {
	size_t size;	      /* sizeof(eg_plugin_t) as the plugin was built */
	uint32_t abi_version; /* EG_PLUGIN_ABI_VERSION it was built with */
	const char *name;     /* "nccl-ep" */
	const char *version;  /* the library's version, free text */
	/* Declares what the plugin does with these options; unknown or bad
	 * options: EG_PLUGIN_EFAIL with a message naming them. Called once
	 * per process for each option set, before any create. */
	int (*query)(const eg_plugin_opts_t *opts, eg_plugin_caps_t *caps,
		     char *err, size_t errlen);
	/* A new instance for env's shape (collective: every rank calls it).
	 * EG_PLUGIN_ENOTSUP skips the case; err is a one-line message. */
	int (*create)(const eg_plugin_env_t *env, void **inst, char *err,
		      size_t errlen);
	/* Collective. Fills out (size set, the rest zero). CUDA: work may
	 * still be queued on env.cuda_stream when it returns; epgate
	 * synchronizes that stream before reading or stopping a clock
	 * (work on other streams must be ordered before it). */
	int (*dispatch)(void *inst, const eg_plugin_input_t *in,
			eg_plugin_recv_t *out);
	/* Collective. y: the expert outputs in the native layout of the last
	 * dispatch (its recv.y, or epgate's buffer of that size); in: the
	 * same input as that dispatch; out: in->tokens * hidden combine
	 * elements, to be fully written (epgate fills it with a NaN pattern
	 * before the call, and a write past its end is found). */
	int (*combine)(void *inst, const eg_plugin_input_t *in, const void *y,
		       void *out);
	void (*destroy)(void *inst);
	/* The last failure of inst as one line, or NULL. Optional. */
	const char *(*error)(void *inst);
} eg_plugin_t;

/* The entry point: returns the plugin's table (static storage) or NULL.
 * host_abi is the newest ABI version the loading epgate speaks, so a
 * plugin may return an older table to an older epgate. */
typedef const eg_plugin_t *(*eg_plugin_entry_fn)(uint32_t host_abi);
const eg_plugin_t *eg_plugin_entry(uint32_t host_abi);

#ifdef __cplusplus
}
#endif

#endif
