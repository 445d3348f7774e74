/* The template's planted faults, one per -D flag, each on the last rank
 * only: the suites must catch every one of them with the right verdict
 * (suites/l1/plugin.sh, suites/l2/plugin.sh). Also the ABI variants the
 * loader must accept or refuse (suites/l0/test_plugin.c). Without flags
 * every hook is empty. */
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

#if defined(EG_FAULT_COPY_DIFFERS) /* later copies of a token one bit off */
#define FAULT_KEEP(t, s, i, n)                                                 \
	if (TPL_LAST(t) && (t)->prev_s == (int32_t)(s) &&                      \
	    (t)->prev_i == (int32_t)(i))                                       \
		(t)->x[(n) * (t)->xb] ^= 1;
#else
#define FAULT_KEEP(t, s, i, n)
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

#if defined(EG_FAULT_COMBINE_ULP) /* the first element one ulp off */
#define FAULT_COMBINE(t, in, out)                                              \
	if (TPL_LAST(t) && (in)->tokens > 0)                                   \
		((uint8_t *)(out))[0] ^= 1;
#else
#define FAULT_COMBINE(t, in, out)
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
