/* A rank's position and last words (lib/step/where.h). The position is
 * kept preformatted in one of two buffers, the one to read switched only
 * once the other is complete, so a signal handler reads a whole line
 * with nothing but write(2). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* on_exit, sigabbrev_np */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/step/where.h"

#define EG__POS 256

static char eg__pos[2][EG__POS];
static struct {
	uint32_t step, iter;
} eg__at[2]; /* eg__pos's numbers, for eg_where_now */
static volatile sig_atomic_t eg__cur, eg__inside, eg__armed;
static char eg__name[128];
static uint32_t eg__steps, eg__rank;

static void eg__format(uint32_t step, uint32_t iter, const char *phase)
{
	int next = !eg__cur;
	char st[48] = "";

	if (eg__steps > 1)
		snprintf(st, sizeof(st), ", step %u of %u", step + 1,
			 eg__steps);
	snprintf(eg__pos[next], EG__POS, "%s%s, iteration %u%s%s", eg__name, st,
		 iter, phase && *phase ? ", " : "", phase ? phase : "");
	eg__at[next].step = step;
	eg__at[next].iter = iter;
	eg__cur = next;
}

void eg_where_workload(const char *name, uint32_t steps)
{
	eg__inside = 0;
	if (!name)
		return;
	snprintf(eg__name, sizeof(eg__name), "%s", name);
	eg__steps = steps;
	eg__format(0, 0, "setup");
	eg__inside = 1;
}

void eg_where_at(uint32_t step, uint32_t iter, const char *phase)
{
	if (eg__inside)
		eg__format(step, iter, phase);
}

void eg_where_now(eg_where_pos_t *out)
{
	int cur = eg__cur, in = eg__inside;

	snprintf(out->workload, sizeof(out->workload), "%s",
		 in ? eg__name : "");
	snprintf(out->line, sizeof(out->line), "%s",
		 in ? eg__pos[cur] : "no workload (between them)");
	out->step = in ? eg__at[cur].step : 0;
	out->steps = in ? eg__steps : 0;
	out->iter = in ? eg__at[cur].iter : 0;
}

/* Appends s to buf (len bytes) at *n, async-signal-safe. */
static void eg__put(char *buf, size_t len, size_t *n, const char *s)
{
	while (s && *s && *n + 1 < len)
		buf[(*n)++] = *s++;
}

static void eg__put_u(char *buf, size_t len, size_t *n, unsigned v)
{
	char d[16];
	int k = 0;

	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 15);
	while (k && *n + 1 < len)
		buf[(*n)++] = d[--k];
}

/* "epgate: rank R: <how> in <position>\n" in one write. */
static void eg__say(const char *how, int sig, int status)
{
	char line[512];
	size_t n = 0;
	const char *ab = sig ? sigabbrev_np(sig) : NULL;

	eg__put(line, sizeof(line), &n, "epgate: rank ");
	eg__put_u(line, sizeof(line), &n, eg__rank);
	eg__put(line, sizeof(line), &n, ": ");
	eg__put(line, sizeof(line), &n, how);
	if (sig) {
		eg__put(line, sizeof(line), &n, "signal ");
		eg__put_u(line, sizeof(line), &n, (unsigned)sig);
		eg__put(line, sizeof(line), &n, ab ? " (SIG" : "");
		eg__put(line, sizeof(line), &n, ab);
		eg__put(line, sizeof(line), &n, ab ? ")" : "");
	} else {
		eg__put(line, sizeof(line), &n, "exit(");
		eg__put_u(line, sizeof(line), &n, (unsigned)status);
		eg__put(line, sizeof(line), &n, ")");
	}
	eg__put(line, sizeof(line), &n, " in ");
	eg__put(line, sizeof(line), &n,
		eg__inside ? eg__pos[eg__cur] : "no workload (between them)");
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to say it */
	}
}

static void eg__on_signal(int sig)
{
	int stop = sig == SIGTERM || sig == SIGINT || sig == SIGHUP;

	eg__say(stop ? EG_WHERE_STOPPED : EG_WHERE_ENDED, sig, 0);
	/* the disposition is the default again (SA_RESETHAND): the signal,
	 * blocked while this runs, ends the process as it would have */
	raise(sig);
}

/* exit() inside a workload: the engine or its library gave up. Said,
 * and a failure, whatever status it asked for (a rank that leaves with
 * 0 before the job's last workload must not read as a pass). */
static void eg__on_exit(int status, void *arg)
{
	(void)arg;
	if (!eg__inside || !eg__armed)
		return;
	fflush(stdout);
	eg__say(EG_WHERE_ENDED, 0, status);
	_exit(EG_EXIT_FAIL);
}

void eg_where_arm(uint32_t rank)
{
	static const int sigs[] = {SIGSEGV, SIGBUS,  SIGILL, SIGFPE,
				   SIGABRT, SIGTERM, SIGINT, SIGHUP};
	struct sigaction sa;

	eg__rank = rank;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = eg__on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* an ignored signal stays ignored (nohup) */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
	if (!eg__armed)
		on_exit(eg__on_exit, NULL);
	eg__armed = 1;
}
