/* The template's intermittent faults, one per -D flag, each on the last
 * rank only: bugs that one pass over a workload matrix does not see and
 * `epgate stress` must (docs/stress.md, "Planted intermittent faults").
 * Every one acts in combine, after the allgather and before the rows are
 * summed (template.c's one hook, TPL_INTERMITTENT), on the rows that are
 * about to be summed:
 *
 * FLAKY    one row wrong in about 1 of 50 calls, seeded: call n of an
 *          instance fails when a hash of (EPGATE_FAULT_SEED, n) is 0
 *          mod 50, so a run replays its failures call for call;
 * OVERLAP  a routing cache shared by every instance the process forked
 *          after loading the plugin (an arena set up at load), used when
 *          the instance's routing epoch has not changed: when two
 *          instances run at once, one reuses the other's rows (stale
 *          data only when calls of two instances overlap);
 * RACE     the expert outputs reach the rows late, copied by a helper
 *          thread that the combine waits to start, not to finish (a
 *          missing fence): right or wrong as the two threads run;
 * NONDET   every third call, each expert output one ulp off: within any
 *          error bound, but identical inputs give different bytes;
 * LEAK     1 MiB of memory and one file descriptor per call, never given
 *          back;
 * WARM_PATH right for the first 64 combine calls of an instance, then a
 *          "warmed-up" path that gets one row wrong on every call: a
 *          fault of the call count (state), not of the inputs, that a
 *          replay on the same instance sees again and one call on a
 *          fresh instance never does;
 * TUNED_PATH_LATE the same from call 1536 on: past the calls that
 *          stress's old floor made (300 checked, about 435 calls), within
 *          its long-instance floor (--long, 2048 calls);
 * SLOW_GROWTH each combine call n of an instance spins n microseconds
 *          longer (by the clock: load cannot shorten it): a registry
 *          that is never pruned, right bytes, growing call time;
 * LEAK_PER_INSTANCE destroy forgets 1 MiB (written, so resident) and one
 *          descriptor: right bytes, flat over one instance's calls, a
 *          leak of every instance a framework re-creates.
 *
 * Without a flag the hook is empty. Built with -D_DEFAULT_SOURCE (the
 * arena's mmap flags) and -pthread (Makefile.am). */
#if defined(EG_FAULT_FLAKY) || defined(EG_FAULT_OVERLAP) ||                    \
    defined(EG_FAULT_RACE) || defined(EG_FAULT_NONDET) ||                      \
    defined(EG_FAULT_LEAK) || defined(EG_FAULT_WARM_PATH) ||                   \
    defined(EG_FAULT_TUNED_PATH_LATE) || defined(EG_FAULT_SLOW_GROWTH) ||      \
    defined(EG_FAULT_LEAK_PER_INSTANCE)
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define TPL_I_LAST(t) ((t)->env.rank + 1 == (t)->env.world)

/* Rank d's blob after the allgather: G counters, the source ranks and
 * tokens of its slots, its expert outputs. */
static uint8_t *tpl_i_blob(const tpl_t *t, uint32_t d)
{
	return t->all + (size_t)d * t->outb;
}

static size_t tpl_i_lists(const tpl_t *t)
{
	return 4 * (size_t)t->G + 8 * (size_t)t->G * t->S;
}

__attribute__((unused)) static uint8_t *tpl_i_y(const tpl_t *t, uint32_t d)
{
	return tpl_i_blob(t, d) + tpl_i_lists(t);
}

/* This instance's combine calls so far (one instance at a time per
 * process; instances one after another in one process start again at 0:
 * destroy forgets the owner, as a new one may get the same address). */
static const tpl_t *tpl_i_owner;
static uint64_t tpl_i_n;

__attribute__((unused)) static uint64_t tpl_i_calls(const tpl_t *t)
{
	if (tpl_i_owner != t)
		tpl_i_owner = t, tpl_i_n = 0;
	return tpl_i_n++;
}

#if defined(EG_FAULT_LEAK_PER_INSTANCE)
static void *tpl_i_kept; /* a chain: reachable, so never optimized out */

/* What create would have mapped and destroy forgets: 1 MiB, written so
 * that it is resident, and a descriptor. */
static void tpl_i_forget(void)
{
	void **p = malloc(1u << 20);
	int fd = open("/dev/null", O_RDONLY);

	(void)fd;
	if (!p)
		return;
	memset(p, 0x5a, 1u << 20);
	*p = tpl_i_kept;
	tpl_i_kept = p;
}
#define TPL_DESTROY(t) (tpl_i_owner = NULL, tpl_i_forget())
#else
#define TPL_DESTROY(t) (tpl_i_owner = NULL)
#endif
#else
#define TPL_DESTROY(t) ((void)0)
#endif

#if defined(EG_FAULT_FLAKY) || defined(EG_FAULT_WARM_PATH) ||                  \
    defined(EG_FAULT_TUNED_PATH_LATE)
/* An exponent bit of the first output element of a row summed here:
 * wrong in every compare mode, whatever the value. */
static void tpl_i_flip_one(tpl_t *t)
{
	size_t w = t->cb / t->env.hidden; /* element bytes */

	for (uint32_t d = 0; d < t->env.world; d++) {
		const int32_t *cnt = (const int32_t *)tpl_i_blob(t, d);
		const int32_t *src = cnt + t->G;

		for (uint32_t g = 0; g < t->G; g++)
			for (int32_t c = 0; c < cnt[g]; c++) {
				size_t r = (size_t)g * t->S + (size_t)c;

				if (src[r] != (int32_t)t->env.rank)
					continue;
				tpl_i_y(t, d)[r * t->cb + w - 1] ^= 0x40;
				return;
			}
	}
}
#endif

#if defined(EG_FAULT_FLAKY)
static uint64_t tpl_i_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Call n of the instance fails when the seeded hash says so. */
static void tpl_i_flaky(tpl_t *t)
{
	const char *s = getenv("EPGATE_FAULT_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 1, n = tpl_i_calls(t);

	if (tpl_i_mix(seed * 0x100000001b3ull + n) % 50 == 0)
		tpl_i_flip_one(t);
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_flaky(t);
#elif defined(EG_FAULT_OVERLAP)
/* The arena: set up when the plugin is loaded, so every process forked
 * after that shares it (the L1 instances are forked children). */
#define TPL_I_ARENA (64u << 20)
static uint8_t *tpl_i_arena;

__attribute__((constructor)) static void tpl_i_arena_map(void)
{
	void *p = mmap(NULL, TPL_I_ARENA, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	tpl_i_arena = p == MAP_FAILED ? NULL : p;
}

/* The bug: "my routing did not change, so the cache is still mine". */
static void tpl_i_overlap(tpl_t *t, const eg_plugin_input_t *in)
{
	static uint32_t seen; /* this process's last epoch */
	size_t l = tpl_i_lists(t), need = l * t->env.world;

	if (!tpl_i_arena || need > TPL_I_ARENA)
		return;
	for (uint32_t d = 0; d < t->env.world; d++) {
		uint8_t *c = tpl_i_arena + d * l;

		if (seen == in->routing_epoch)
			memcpy(tpl_i_blob(t, d), c, l);
		else
			memcpy(c, tpl_i_blob(t, d), l);
	}
	seen = in->routing_epoch;
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_overlap(t, in);
#elif defined(EG_FAULT_RACE)
/* One helper thread per process copies job.src to job.dst when asked. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int made;
	atomic_int state; /* 0 idle, 1 asked, 2 copying */
	uint8_t *dst, *src, *prev;
	size_t n, cap;
} tpl_i_job = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *tpl_i_helper(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&tpl_i_job.mu);
		while (atomic_load(&tpl_i_job.state) != 1)
			pthread_cond_wait(&tpl_i_job.cv, &tpl_i_job.mu);
		atomic_store(&tpl_i_job.state, 2);
		pthread_mutex_unlock(&tpl_i_job.mu);
		/* from the end, while the sum reads from the start: who
		 * wins the first rows is a matter of timing */
		for (size_t e = tpl_i_job.n; e > 0;) {
			size_t b = e > 64 ? e - 64 : 0;

			memcpy(tpl_i_job.dst + b, tpl_i_job.src + b, e - b);
			e = b;
		}
		atomic_store(&tpl_i_job.state, 0);
	}
	return NULL;
}

/* Waits (bounded: it is only a test plugin) while the job is in state
 * s, or (s < 0) until it is idle. */
static void tpl_i_wait(int s)
{
	for (long i = 0; i < 2000000; i++) {
		int now = atomic_load(&tpl_i_job.state);

		if (s < 0 ? now == 0 : now != s)
			return;
		sched_yield();
	}
}

/* This rank's own blob's outputs (the last rank, world 1 in L1): the
 * previous call's left in place, the right ones copied by the helper. */
static void tpl_i_race(tpl_t *t)
{
	size_t n = (size_t)t->G * t->S * t->cb;
	uint8_t *y = tpl_i_y(t, t->env.rank);
	pthread_t th;

	tpl_i_wait(-1); /* the last job is done */
	if (n > tpl_i_job.cap) {
		free(tpl_i_job.src), free(tpl_i_job.prev);
		tpl_i_job.src = calloc(n, 1), tpl_i_job.prev = calloc(n, 1);
		tpl_i_job.cap = tpl_i_job.src && tpl_i_job.prev ? n : 0;
	}
	if (!tpl_i_job.cap ||
	    (!tpl_i_job.made && pthread_create(&th, NULL, tpl_i_helper, NULL)))
		return;
	if (!tpl_i_job.made)
		pthread_detach(th), tpl_i_job.made = 1;
	memcpy(tpl_i_job.src, y, n);
	memcpy(y, tpl_i_job.prev, n); /* stale until the helper writes */
	memcpy(tpl_i_job.prev, tpl_i_job.src, n);
	pthread_mutex_lock(&tpl_i_job.mu);
	tpl_i_job.dst = y, tpl_i_job.n = n;
	atomic_store(&tpl_i_job.state, 1);
	pthread_cond_signal(&tpl_i_job.cv);
	pthread_mutex_unlock(&tpl_i_job.mu);
	tpl_i_wait(1); /* started: "done" is the fence that is missing */
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_race(t);
#elif defined(EG_FAULT_NONDET)
/* The lowest bit of every output element summed here, every third call
 * (not every other: a verified call of a fixed-order engine combines
 * twice, and its two results must be able to agree). */
static void tpl_i_nondet(tpl_t *t)
{
	size_t n = (size_t)t->G * t->S * t->env.hidden;
	size_t w = t->cb / t->env.hidden; /* element bytes */

	if (tpl_i_calls(t) % 3 != 1)
		return;
	for (uint32_t d = 0; d < t->env.world; d++)
		for (size_t i = 0; i < n; i++)
			tpl_i_y(t, d)[i * w] ^= 1; /* little endian: low byte */
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_nondet(t);
#elif defined(EG_FAULT_LEAK)
static void *tpl_i_leaked; /* a chain: reachable, so never optimized out */

static void tpl_i_leak(tpl_t *t)
{
	void **p = malloc(1u << 20);
	int fd = open("/dev/null", O_RDONLY);

	(void)t, (void)fd;
	if (!p)
		return;
	memset(p, 0x5a, 1u << 20); /* resident, not just reserved */
	*p = tpl_i_leaked;
	tpl_i_leaked = p;
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_leak(t);
#elif defined(EG_FAULT_WARM_PATH)
/* Calls 0-63 (the first 64) on the checked path, every later one on the
 * "tuned" path with the bug: a counter of the instance's calls, the way a
 * library switches algorithms once it has seen enough calls. */
#define TPL_I_WARM_CALLS 64
static void tpl_i_warm_path(tpl_t *t)
{
	if (tpl_i_calls(t) >= TPL_I_WARM_CALLS)
		tpl_i_flip_one(t);
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_warm_path(t);
#elif defined(EG_FAULT_TUNED_PATH_LATE)
/* WARM_PATH's bug on a path taken later than a short run reaches. */
#define TPL_I_TUNED_CALLS 1536
static void tpl_i_tuned_late(tpl_t *t)
{
	if (tpl_i_calls(t) >= TPL_I_TUNED_CALLS)
		tpl_i_flip_one(t);
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_tuned_late(t);
#elif defined(EG_FAULT_SLOW_GROWTH)
#include <time.h>
/* Call n spins n microseconds on the monotonic clock: a lookup in a
 * registry that gains an entry per call and is never pruned. */
static void tpl_i_slow(tpl_t *t)
{
	uint64_t n = tpl_i_calls(t);
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
		   (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec <
	       n * 1000u);
}
#define TPL_INTERMITTENT(t, in)                                                \
	if (TPL_I_LAST(t))                                                     \
		tpl_i_slow(t);
#else
#define TPL_INTERMITTENT(t, in)
#endif
