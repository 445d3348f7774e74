/* The watchdog of `epgate stress` (lib/stress/stress_int.h): an engine in
 * this process that never returns cannot be stopped, only reported; the
 * reports already written stay (TAP and JUnit are written case by
 * case). A plugin's instance runs in a child with its own deadline, which
 * ends its case first.
 *
 * A timer (SIGALRM), not a thread: the plugin children are forked from
 * this process, and a process with a second thread can fork while that
 * thread holds a lock (ASan's allocator, malloc's arena), which the child
 * then inherits locked forever. A watchdog thread did exactly that in
 * the ASan build: the race fault's helper thread in a child blocked on
 * ASan's allocator mutex. Timers are not inherited by fork, so a child
 * never fires this one. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/stress/stress_int.h"

#define EG__GRACE_S 30.0

static struct {
	int started;
	double timeout;
	char line[600]; /* the whole line, made before the timer is set */
	volatile sig_atomic_t len;
} eg__wd;

/* Only async-signal-safe calls: the line is ready, the reports are
 * flushed case by case. */
static void eg__wd_fire(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, eg__wd.line, (size_t)eg__wd.len);
	(void)n;
	_exit(EG_EXIT_HARD);
}

static void eg__wd_set(double s)
{
	struct itimerval it = {{0, 0}, {0, 0}};

	it.it_value.tv_sec = (time_t)s;
	it.it_value.tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6);
	setitimer(ITIMER_REAL, &it, NULL);
}

void eg_stress_watchdog_start(double timeout_s)
{
	struct sigaction sa;

	if (eg__wd.started)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = eg__wd_fire;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		return;
	eg__wd.timeout = timeout_s + EG__GRACE_S;
	eg__wd.started = 1;
}

void eg_stress_watchdog_arm(const char *stage, const char *name, uint64_t call,
			    uint32_t iter)
{
	sigset_t alrm, old;
	int n;

	if (!eg__wd.started)
		return;
	/* the line is not half written when the timer fires */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, &old);
	n = snprintf(eg__wd.line, sizeof(eg__wd.line),
		     "epgate stress: case %s: call %llu (iteration %u): %s in "
		     "this process did not return within %.0f s "
		     "(EPGATE_TIMEOUT + %.0f s); stopping (exit 99)\n",
		     name, (unsigned long long)call, iter, stage,
		     eg__wd.timeout, EG__GRACE_S);
	if (n < 0)
		n = 0;
	eg__wd.len =
	    n < (int)sizeof(eg__wd.line) ? n : (int)sizeof(eg__wd.line) - 1;
	eg__wd_set(eg__wd.timeout);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void eg_stress_watchdog_disarm(void)
{
	if (eg__wd.started)
		eg__wd_set(0);
}
