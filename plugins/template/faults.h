/* The template's planted faults, one per -D flag, each on the last rank
 * only (EXIT0, HANG_EMPTY and SPIN: every rank): the suites must catch
 * every one of them with the right verdict (suites/l1/plugin.sh,
 * suites/l2/plugin.sh, suites/l1/plugin-hang.sh, suites/l2/hang.sh).
 * Also the ABI variants the loader must accept or refuse
 * (suites/l0/test_plugin.c). Without flags every hook is empty. */
#include <signal.h>
#include <unistd.h>

#define TPL_LAST(t) ((t)->env.rank + 1 == (t)->env.world)
#if defined(EG_FAULT_ERROR) /* an error of its own */
#define FAULT_DISPATCH(t)                                                      \
	if (TPL_LAST(t)) {                                                     \
		snprintf((t)->err, sizeof((t)->err),                           \
			 "planted error: the template refuses to dispatch");   \
		return EG_PLUGIN_EFAIL;                                        \
	}
#elif defined(EG_FAULT_CRASH) /* SIGSEGV, even under a sanitizer */
#define FAULT_DISPATCH(t)                                                      \
	if (TPL_LAST(t)) {                                                     \
		signal(SIGSEGV, SIG_DFL);                                      \
		raise(SIGSEGV);                                                \
	}
#elif defined(EG_FAULT_HANG) /* never returns */
#define FAULT_DISPATCH(t)                                                      \
	while (TPL_LAST(t))                                                    \
		pause();
#elif defined(EG_FAULT_POSITIVE_RC) /* an error returned as 2, not < 0 */
#define FAULT_DISPATCH(t)                                                      \
	if (TPL_LAST(t)) {                                                     \
		snprintf(                                                      \
		    (t)->err, sizeof((t)->err),                                \
		    "planted error: the template returns 2 for an error");     \
		return 2;                                                      \
	}
#else
#define FAULT_DISPATCH(t)
#endif

/* A library that ends the process (docs/plugins.md, "Verdicts": CRASH):
 * an assert on an odd token count in a dispatch (in: dispatch's input)
 * on the last rank, as NCCL EP's HT mode asserts on some shapes; exit(0)
 * on every rank given top-k 1, as a library giving up on a shape it does
 * not take. */
#if defined(EG_FAULT_ABORT)
#undef NDEBUG
#include <assert.h>
#undef FAULT_DISPATCH
#define FAULT_DISPATCH(t)                                                      \
	assert((!TPL_LAST(t) || in->tokens % 2 == 0) &&                        \
	       "planted abort: the template takes even token counts only");
#elif defined(EG_FAULT_EXIT0)
#include <stdlib.h>
#undef FAULT_DISPATCH
#define FAULT_DISPATCH(t)                                                      \
	if ((t)->env.topk == 1)                                                \
		exit(0);
#endif

/* A library whose ranks wait on one another forever at 100% CPU (issue
 * 37: an L2 job spinning for 760 s without a word): every rank spins in
 * its first dispatch and never returns, so no rank waits in epgate's
 * bootstrap to name a peer; only l2-rank's bound on the plugin's calls
 * (lib/base/watch.h) ends it. */
#if defined(EG_FAULT_SPIN)
#undef FAULT_DISPATCH
#define FAULT_DISPATCH(t)                                                      \
	for (volatile uint64_t spin_ = 0; (t)->env.world > 0; spin_++)         \
		;
#endif

/* A library that deadlocks in a process forked from a threaded one: a
 * lock another thread held at the fork (its allocator's, ASan's) stays
 * locked in the child forever. Stress's watchdog thread did this to the
 * race fault's child in the ASan build. Planted deterministically: the
 * last rank's dispatch never returns when the process it was forked from
 * has more than one thread (suites/l1/plugin-fork.sh). */
#if defined(EG_FAULT_FORK_THREADS)
#include <stdio.h>
static int fault_parent_threads(void)
{
	char path[64], line[128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}
#undef FAULT_DISPATCH
#define FAULT_DISPATCH(t)                                                      \
	while (TPL_LAST(t) && fault_parent_threads() > 1)                      \
		pause();
#endif

/* A library that closes every descriptor it did not open (as code that
 * daemonizes does) and never returns: in a forked instance the socket to
 * epgate closes while the process lives on, so only the call's deadline
 * ends the wait (lib/engines/plugin_fork.c, suites/l1/plugin-fork.sh). */
#if defined(EG_FAULT_CLOSE_HANG)
#undef FAULT_DISPATCH
#define FAULT_DISPATCH(t)                                                      \
	if (TPL_LAST(t)) {                                                     \
		for (int fd_ = 3; fd_ < 1024; fd_++)                           \
			close(fd_);                                            \
		for (;;)                                                       \
			pause();                                               \
	}
#endif

#if defined(EG_FAULT_COPY_DIFFERS) /* later copies of a token one bit off */
#define FAULT_KEEP(t, s, i, n)                                                 \
	if (TPL_LAST(t) && (t)->prev_s == (int32_t)(s) &&                      \
	    (t)->prev_i == (int32_t)(i))                                       \
		(t)->x[(n) * (t)->xb] ^= 1;
#elif defined(EG_FAULT_DEDUP_SLOTS) /* a repeated expert's later slot lost */
#define FAULT_KEEP(t, s, i, n)                                                 \
	for (uint32_t k = 0; TPL_LAST(t) && k < (t)->env.topk; k++)            \
		if (chosen_before((t)->idx + (n) * (t)->env.topk, k) &&        \
		    (t)->idx[(n) * (t)->env.topk + k] >= 0) {                  \
			(t)->idx[(n) * (t)->env.topk + k] = -1;                \
			(t)->w[(n) * (t)->env.topk + k] = 0.0f;                \
		}
#elif defined(EG_FAULT_TOKEN_8BIT) /* a row's source token kept in 8 bits */
#define FAULT_KEEP(t, s, i, n)                                                 \
	if (TPL_LAST(t))                                                       \
		(t)->tok[n] &= 0xff;
#else
#define FAULT_KEEP(t, s, i, n)
#endif

/* The receive slot n a kept row is written to. */
#if defined(EG_FAULT_RECV_INDEX_16BIT) /* kept in 16 bits: past 65535 wraps */
#define FAULT_SLOT(t, n)                                                       \
	if (TPL_LAST(t))                                                       \
		(n) &= 0xffffu;
#else
#define FAULT_SLOT(t, n)
#endif

/* Slot k of kept row n left out of its expert's expert_count, which
 * counts every slot (docs/semantics.md). */
#if defined(EG_FAULT_EXPERT_COUNT_ROWS) /* rows per expert, not slots */
#define FAULT_UNCOUNTED(t, n, k)                                               \
	(TPL_LAST(t) && chosen_before((t)->idx + (n) * (t)->env.topk, k))
#else
#define FAULT_UNCOUNTED(t, n, k) 0
#endif

#if defined(EG_FAULT_DROP_ROW) /* the last row is not counted */
#define FAULT_RECV(t, out)                                                     \
	if (TPL_LAST(t) && (t)->count[0] > 0)                                  \
		(t)->count[0]--;
#elif defined(EG_FAULT_DUP_KEY) /* row 1 claims row 0's key */
#define FAULT_RECV(t, out)                                                     \
	if (TPL_LAST(t) && (t)->count[0] > 1) {                                \
		(t)->src[1] = (t)->src[0];                                     \
		(t)->tok[1] = (t)->tok[0];                                     \
	}
#elif defined(EG_FAULT_BAD_COUNT) /* a counter beyond the stride */
#define FAULT_RECV(t, out)                                                     \
	if (TPL_LAST(t))                                                       \
		(t)->count[0] = (int32_t)(t)->S + 1;
#else
#define FAULT_RECV(t, out)
#endif

/* ORDER_PER_PROCESS: a fixed order that is fixed per process only, as
 * a library's that follows where its buffers landed or a seed of its
 * own. The seed: where a block of its own and its stack landed, drawn at
 * the first combine of the process; each token whose bit of the seed is
 * set is summed again from its last row to its first. Every call of the
 * process agrees with every other (identical rounds, combine_repeat),
 * every order is within the error bound; another process, or another
 * allocation history, gives other bytes (docs/stress.md, "Run to
 * run"). */
#if defined(EG_FAULT_ORDER_PER_PROCESS)
#include <stdint.h>
static void *fault_where; /* kept: its address is the point */

static uint64_t fault_process_seed(void)
{
	static uint64_t seed;
	int here;

	if (!fault_where) {
		fault_where = malloc(40);
		seed = (uint64_t)(uintptr_t)fault_where ^
		       ((uint64_t)(uintptr_t)&here << 21);
		for (int i = 0; i < 3; i++) /* mix: every bit counts */
			seed = (seed ^ (seed >> 31)) * 0x9e3779b97f4a7c15ull;
	}
	return seed;
}

static void fault_order_per_process(
    tpl_t *t, const eg_plugin_input_t *in, void *out,
    float (*ld)(const tpl_t *, const void *, size_t),
    void (*st)(const tpl_t *, void *, size_t, float),
    float (*wt)(const tpl_t *, const eg_plugin_input_t *, int32_t, uint32_t))
{
	uint64_t seed = fault_process_seed();
	uint32_t H = t->env.hidden, L = t->env.local_experts;
	size_t slots = (size_t)t->G * t->S;

#define FAULT_REV(i) ((seed >> ((i) % 64)) & 1)
	for (uint32_t i = 0; i < in->tokens; i++)
		if (FAULT_REV(i))
			memset(t->acc + (size_t)i * H, 0, (size_t)H * 4);
	for (uint32_t d = t->env.world; d-- > 0;) { /* last row first */
		const uint8_t *b = t->all + d * t->outb;
		const int32_t *cnt = (const int32_t *)b;
		const int32_t *src = cnt + t->G, *tok = src + slots;
		const uint8_t *yd = b + 4 * t->G + 8 * slots;

		for (uint32_t g = t->G; g-- > 0;)
			for (int32_t c = cnt[g]; c-- > 0;) {
				size_t n = (size_t)g * t->S + (size_t)c;
				float w = 1.0f;

				if (src[n] != (int32_t)t->env.rank ||
				    !FAULT_REV(tok[n]))
					continue;
				if (t->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
					w = wt(t, in, tok[n], d * L + g);
				for (uint32_t h = 0; h < H; h++)
					t->acc[(size_t)tok[n] * H + h] +=
					    w * ld(t, yd + n * t->cb, h);
			}
	}
	for (uint32_t i = 0; i < in->tokens; i++)
		for (uint32_t h = 0; FAULT_REV(i) && h < H; h++)
			st(t, out, (size_t)i * H + h,
			   t->acc[(size_t)i * H + h]);
#undef FAULT_REV
}
#define FAULT_COMBINE(t, in, out)                                              \
	if (TPL_LAST(t))                                                       \
		fault_order_per_process(t, in, out, load, store, copy_weight);
#elif defined(EG_FAULT_COMBINE_ULP) /* the first element one ulp off */
#define FAULT_COMBINE(t, in, out)                                              \
	if (TPL_LAST(t) && (in)->tokens > 0)                                   \
		((uint8_t *)(out))[0] ^= 1;
#elif defined(EG_FAULT_WRITE_PAST) /* one element past the end (i <= n) */
#define FAULT_COMBINE(t, in, out)                                              \
	if (TPL_LAST(t) && (in)->tokens > 0)                                   \
		store(t, out, (in)->tokens *(size_t)(t)->env.hidden, t->acc[0]);
#elif defined(EG_FAULT_INPUT_WRITTEN) /* normalizes the weights in place */
#define FAULT_COMBINE(t, in, out)                                              \
	for (size_t q = 0;                                                     \
	     TPL_LAST(t) && q < (in)->tokens * (size_t)(t)->env.topk; q++)     \
		((float *)(in)->topk_w)[q] *= 2.0f;
#else
#define FAULT_COMBINE(t, in, out)
#endif

/* Element i of combine's output left unwritten. */
#if defined(EG_FAULT_BF16_TAIL) /* a row's tail past its last 8-wide vector */
#define FAULT_UNSTORED(t, in, i)                                               \
	(TPL_LAST(t) && (t)->env.combine_dtype == EG_PLUGIN_DTYPE_BF16 &&      \
	 (i) % (t)->env.hidden >= (t)->env.hidden / 8 * 8)
#elif defined(EG_FAULT_LAST_CHUNK)
/* staged in chunks of 8192 elements; above one chunk, n / 8192 whole
 * ones are written and a partial last one is lost */
#define TPL_CHUNK 8192u
#define FAULT_UNSTORED(t, in, i)                                               \
	(TPL_LAST(t) && (in)->tokens * (size_t)(t)->env.hidden > TPL_CHUNK &&  \
	 (i) >=                                                                \
	     (in)->tokens * (size_t)(t)->env.hidden / TPL_CHUNK * TPL_CHUNK)
#elif defined(EG_FAULT_UNROUTED_UNWRITTEN) /* a token without rows */
#define FAULT_UNSTORED(t, in, i)                                               \
	(TPL_LAST(t) && !(t)->hit[(i) / (t)->env.hidden])
#else
#define FAULT_UNSTORED(t, in, i) 0
#endif

/* After destination rank d's rows are summed. */
#if defined(EG_FAULT_ROUND_PER_NODE) /* the running sum to bf16 per node */
#define FAULT_AFTER_RANK(t, in, d)                                             \
	if (TPL_LAST(t) && ((d) + 1) % (t)->env.local_size == 0)               \
		for (size_t q = 0; q < (in)->tokens * (size_t)(t)->env.hidden; \
		     q++) {                                                    \
			float c;                                               \
			store(t, &c, 0, (t)->acc[q]);                          \
			(t)->acc[q] = load(t, &c, 0);                          \
		}
#elif defined(EG_FAULT_MASKED_TIMES_ZERO)
/* A masked slot not skipped: the combine multiplies its weight 0 by every
 * row destination d sent (a dense product of weights and rows, its zero
 * entries multiplied all the same). 0 x finite = 0 changes no bit, so
 * finite data never shows it; one non-finite row anywhere turns every
 * token with a masked slot into NaN (0 x NaN, 0 x Inf). */
static float load(const tpl_t *t, const void *p, size_t i);
static void masked_times_zero(tpl_t *t, const eg_plugin_input_t *in, uint32_t d)
{
	const uint8_t *b = t->all + d * t->outb;
	const int32_t *cnt = (const int32_t *)b, *id = in->topk_idx;
	const uint8_t *yd = b + 4 * t->G + 8 * (size_t)t->G * t->S;
	uint32_t H = t->env.hidden, K = t->env.topk;

	for (size_t q = 0; q < in->tokens * (size_t)K; q++)
		for (uint32_t g = 0; id[q] < 0 && g < t->G; g++)
			for (int32_t c = 0; c < cnt[g]; c++)
				for (uint32_t h = 0; h < H; h++)
					t->acc[q / K * H + h] +=
					    in->topk_w[q] *
					    load(t,
						 yd + ((size_t)g * t->S + c) *
							  t->cb,
						 h);
}
#define FAULT_AFTER_RANK(t, in, d)                                             \
	if (TPL_LAST(t))                                                       \
		masked_times_zero(t, in, d);
#else
#define FAULT_AFTER_RANK(t, in, d)
#endif

/* Dispatch's copy of token i into its blob at r: its ids (ids) and fp8
 * scales (sc); in->scales of rank's tokens. */
#define TPL_IDS(t, r) ((int32_t *)((r) + (t)->ib))
#if defined(EG_FAULT_EXPERT_ID_8BIT) /* expert ids sent in 8 bits */
#define FAULT_ROW(t, in, i, r)                                                 \
	for (uint32_t k = 0; TPL_LAST(t) && k < (t)->env.topk; k++)            \
		if (TPL_IDS(t, r)[k] >= 0)                                     \
			TPL_IDS(t, r)[k] &= 0xff;
#elif defined(EG_FAULT_STAGING_8K) /* rows through an 8 KiB staging buffer */
#define FAULT_ROW(t, in, i, r)                                                 \
	if (TPL_LAST(t) && (t)->xb > 8192)                                     \
		memset((r) + 8192, 0, (t)->xb - 8192);
#elif defined(EG_FAULT_SCALE_PITCH) /* transposed, pitch T rounded up to 4 */
#define FAULT_ROW(t, in, i, r)                                                 \
	for (uint32_t c = 0; TPL_LAST(t) && c < (t)->sb / 4; c++) {            \
		size_t T = (in)->tokens, P = (T + 3) / 4 * 4;                  \
		size_t q = c * T + (i), tt = q % P, cc = q / P;                \
		((float *)((r) + (t)->xb))[c] =                                \
		    tt < T ? (in)->scales[tt * ((t)->sb / 4) + cc] : 0.0f;     \
	}
#else
#define FAULT_ROW(t, in, i, r)
#endif

/* A library whose graph replay is wrong (the replay boundary,
 * docs/metrics.md "Boundaries"), declaring itself capture-safe:
 * REPLAY_NOOP: a call on the input of the call before it (the same
 * buffers, the same epoch; for combine the same expert outputs) does
 * nothing and returns what it returned then, as a library whose capture
 * records no work because a host-side check found nothing new: a replay
 * writes nothing. Every rank alike (its collective skipped together).
 * Plain checks of several iterations find it too (epgate stages each
 * iteration in the same buffers); a measurement, which verifies its
 * first call only, finds it only at the replay boundary.
 * REPLAY_PARITY: the payload written to one of two buffers, the other at
 * every call, and recv.x naming the one written (a double buffer whose
 * parity the library keeps on the host): right at every call, wrong in
 * a replay, which writes the other buffer than the one the capture's
 * recv names. Last rank only. */
#if defined(EG_FAULT_REPLAY_NOOP) || defined(EG_FAULT_REPLAY_NOOP_COMBINE)
#if defined(EG_FAULT_REPLAY_NOOP) /* _COMBINE: combine's alone */
#define FAULT_DISPATCH_AGAIN(t, in, out)                                       \
	if ((t)->memo_x == (in)->x && (t)->memo_epoch == epoch)                \
		return received(t, out);                                       \
	(t)->memo_x = (in)->x;                                                 \
	(t)->memo_epoch = epoch;
#endif
#define FAULT_COMBINE_AGAIN(t, in, y)                                          \
	if ((t)->memo_y == (y))                                                \
		return EG_PLUGIN_OK;                                           \
	(t)->memo_y = (y);
#elif defined(EG_FAULT_REPLAY_PARITY)
#define FAULT_DISPATCH_AGAIN(t, in, out)                                       \
	if (TPL_LAST(t)) {                                                     \
		uint8_t *other_ = (t)->x2;                                     \
		if (!other_ &&                                                 \
		    !(other_ =                                                 \
			  malloc(((size_t)(t)->G * (t)->S + 1) * (t)->xb)))    \
			return EG_PLUGIN_EFAIL;                                \
		(t)->x2 = (t)->x;                                              \
		(t)->x = other_;                                               \
	}
#endif
#ifndef FAULT_DISPATCH_AGAIN
#define FAULT_DISPATCH_AGAIN(t, in, out)
#endif
#ifndef FAULT_COMBINE_AGAIN
#define FAULT_COMBINE_AGAIN(t, in, y)
#endif

/* The routing epoch the template works by. */
#if defined(EG_FAULT_EPOCH_PER_RANK) /* its own, from its rank's routing */
#define TPL_EPOCH(t, in) own_epoch(t, in)
static uint32_t own_epoch(tpl_t *t, const eg_plugin_input_t *in)
{
	size_t nk = (size_t)in->tokens * t->env.topk;
	uint64_t h = 14695981039346656037ull;
	const uint8_t *b[2] = {in->topk_idx, (const uint8_t *)in->topk_w};

	for (int a = 0; a < 2; a++)
		for (size_t q = 0; q < nk * 4; q++)
			h = (h ^ b[a][q]) * 1099511628211ull;
	if (!t->own_epoch || (nk && h != t->own_hash)) {
		t->own_epoch++;
		t->own_hash = h;
	}
	return (uint32_t)t->own_epoch;
}
#else
#define TPL_EPOCH(t, in) ((in)->routing_epoch)
#endif

/* ABI variants */
#ifdef EG_ABI_NEWER /* built for an ABI this epgate does not know */
#define TPL_ABI (EG_PLUGIN_ABI_VERSION + 1)
#else
#define TPL_ABI EG_PLUGIN_ABI_VERSION
#endif
#ifdef EG_ABI_V1 /* built for ABI 1: writes no ABI-2 caps field */
#undef TPL_ABI
#define TPL_ABI 1
#define TPL_V2	0
#else
#define TPL_V2 1
#endif
#ifdef EG_ABI_OLD_SIZE /* an older table: no error slot */
#define TPL_SIZE offsetof(eg_plugin_t, error)
#else
#define TPL_SIZE sizeof(eg_plugin_t)
#endif
#ifdef EG_ABI_NO_ENTRY /* the entry symbol misspelt */
#define TPL_ENTRY eg_plugin_entri
const eg_plugin_t *eg_plugin_entri(uint32_t host_abi);
#else
#define TPL_ENTRY eg_plugin_entry
#endif

/* After dispatch's exchange, when no rank has tokens (the global count
 * 0: all-zero, a steps workload's empty step): every rank waits for rows
 * that never come, a library whose receive loop has no empty case. */
#if defined(EG_FAULT_HANG_EMPTY)
static uint64_t gathered_tokens(const tpl_t *t)
{
	uint64_t sum = 0;
	uint32_t n;

	for (uint32_t s = 0; s < t->env.world; s++) {
		memcpy(&n, t->all + s * t->inb, 4);
		sum += n;
	}
	return sum;
}
#define FAULT_GATHERED(t)                                                      \
	while (gathered_tokens(t) == 0)                                        \
		pause();
#else
#define FAULT_GATHERED(t)
#endif

/* Not a fault: a library's own call marked (env.mark, include/epgate/
 * plugin.h), here the allgather of dispatch and of combine, as an adapter
 * marks its library's call. suites/l0/test_plugin.c checks that the
 * marks of timed calls reach the engine ctx's lib_mark, the hook of the
 * kernel boundary's span (lib/step/kern.c). */
#if defined(EG_TPL_MARKS)
#define TPL_MARK(t, end)                                                       \
	if (EG_PLUGIN_HAS(&(t)->env, eg_plugin_env_t, mark_ctx) &&             \
	    (t)->env.mark &&                                                   \
	    (t)->env.mark((t)->env.mark_ctx, end) != EG_PLUGIN_OK) {           \
		snprintf((t)->err, sizeof((t)->err), "env.mark(%d) refused",   \
			 end);                                                 \
		return EG_PLUGIN_EFAIL;                                        \
	}
#else
#define TPL_MARK(t, end)
#endif
