/* The watchdog of `epgate stress` (lib/stress/stress_int.h): an engine in
 * this process that never returns cannot be stopped, only reported; the
 * reports already written stay (TAP and JUnit are written case by
 * case). A plugin's instance runs in a child with its own deadline, which
 * ends its case first. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/stress/stress_int.h"

#define EG__GRACE_S 30.0

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, armed;
	double deadline, timeout;
	char what[400];
} eg__wd = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void eg__at(double t, struct timespec *ts)
{
	ts->tv_sec = (time_t)t;
	ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9);
}

static void *eg__wd_run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&eg__wd.mu);
	for (;;) {
		struct timespec ts;

		if (!eg__wd.armed) {
			pthread_cond_wait(&eg__wd.cv, &eg__wd.mu);
			continue;
		}
		eg__at(eg__wd.deadline, &ts);
		pthread_cond_timedwait(&eg__wd.cv, &eg__wd.mu, &ts);
		if (eg__wd.armed && eg_now() >= eg__wd.deadline) {
			fprintf(stderr,
				"epgate stress: %s did not return within %.0f "
				"s (EPGATE_TIMEOUT + %.0f s); stopping (exit "
				"99)\n",
				eg__wd.what, eg__wd.timeout, EG__GRACE_S);
			fflush(NULL);
			_exit(EG_EXIT_HARD);
		}
	}
	return NULL;
}

void eg_stress_watchdog_start(double timeout_s)
{
	pthread_condattr_t ca;
	pthread_t th;

	if (eg__wd.started)
		return;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&eg__wd.cv, &ca);
	pthread_condattr_destroy(&ca);
	eg__wd.timeout = timeout_s + EG__GRACE_S;
	if (pthread_create(&th, NULL, eg__wd_run, NULL) == 0) {
		pthread_detach(th);
		eg__wd.started = 1;
	}
}

void eg_stress_watchdog_arm(const char *stage, const char *name, uint64_t call,
			    uint32_t iter)
{
	if (!eg__wd.started)
		return;
	pthread_mutex_lock(&eg__wd.mu);
	snprintf(eg__wd.what, sizeof(eg__wd.what),
		 "case %s: call %llu (iteration %u): %s in this process", name,
		 (unsigned long long)call, iter, stage);
	eg__wd.deadline = eg_now() + eg__wd.timeout;
	eg__wd.armed = 1;
	pthread_cond_signal(&eg__wd.cv);
	pthread_mutex_unlock(&eg__wd.mu);
}

void eg_stress_watchdog_disarm(void)
{
	if (!eg__wd.started)
		return;
	pthread_mutex_lock(&eg__wd.mu);
	eg__wd.armed = 0;
	pthread_mutex_unlock(&eg__wd.mu);
}
