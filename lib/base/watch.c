/* The bound on calls into code that is not epgate's (lib/base/watch.h).
 * The call's side only stores its start; a thread of the watch's own
 * looks a few times per bound (so it is late by a fraction of the bound,
 * never early) and ends the process for a call still running past it. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "epgate/clock.h"
#include "epgate/error.h"
#include "lib/base/watch.h"

static struct {
	_Atomic(const char *) who, call;
	_Atomic double since; /* the call's start (eg_now); 0: none */
	atomic_int started;
	double bound;
	eg_watch_say_fn say;
} eg__w;

static void *eg__run(void *arg)
{
	/* a twentieth of the bound, within [10 ms, 250 ms] */
	double step = eg__w.bound / 20 < 0.01	? 0.01
		      : eg__w.bound / 20 > 0.25 ? 0.25
						: eg__w.bound / 20;
	struct timespec ts = {0, (long)(step * 1e9)};

	(void)arg;
	for (;;) {
		double t0;
		const char *who, *call;

		nanosleep(&ts, NULL);
		t0 = atomic_load(&eg__w.since);
		if (t0 <= 0 || eg_now() - t0 < eg__w.bound)
			continue;
		who = atomic_load(&eg__w.who);
		call = atomic_load(&eg__w.call);
		if (atomic_load(&eg__w.since) != t0)
			continue; /* it returned, or another call began */
		eg__w.say(who, call, eg__w.bound);
		_exit(EG_EXIT_FAIL);
	}
	return NULL;
}

int eg_watch_start(double bound_s, eg_watch_say_fn say)
{
	sigset_t all, old;
	pthread_t th;
	int rc;

	if (bound_s <= 0 || !say)
		return EG_EINVAL;
	if (atomic_exchange(&eg__w.started, 1))
		return EG_OK;
	eg__w.bound = bound_s;
	eg__w.say = say;
	/* the process's signals stay with its other threads (where.c's
	 * last words, a transport's own) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&th, NULL, eg__run, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		atomic_store(&eg__w.started, 0);
		return EG_ESYS;
	}
	pthread_detach(th);
	return EG_OK;
}

void eg_watch_enter(const char *who, const char *call)
{
	if (!atomic_load_explicit(&eg__w.started, memory_order_relaxed))
		return;
	atomic_store(&eg__w.who, who);
	atomic_store(&eg__w.call, call);
	atomic_store(&eg__w.since, eg_now());
}

void eg_watch_leave(void)
{
	if (atomic_load_explicit(&eg__w.started, memory_order_relaxed))
		atomic_store(&eg__w.since, 0.0);
}
