/* The local launcher. One process group holds every rank (and whatever
 * they start), so one killpg() reaches them all; exited ranks are noted
 * with WNOWAIT and only reaped at the very end, so the group's id cannot
 * be reused by a stranger while we may still signal it. Children die with
 * the launcher (PR_SET_PDEATHSIG) even if it is killed outright. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* execvpe, pipe2 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/launch.h"
#include "epgate/world.h"

extern char **environ;

#define EG__LINE_MAX 65536 /* longer lines are cut into pieces */

typedef struct {
	pid_t pid;
	int fd[2]; /* read ends of its stdout, stderr; -1 when closed */
	char *buf[2];
	size_t have[2];
	int exited, code;
} eg__rank_t;

static int eg__sigpipe[2] = {-1, -1};
static volatile sig_atomic_t eg__got_sig;

static void eg__on_signal(int sig)
{
	int saved = errno;
	if (sig != SIGCHLD)
		eg__got_sig = sig;
	if (write(eg__sigpipe[1], "x", 1) < 0) {
		/* pipe full: a wakeup is already pending */
	}
	errno = saved;
}

static const int eg__sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define EG__NSIGS (sizeof(eg__sigs) / sizeof(eg__sigs[0]))

/* The launcher's own lines: one write each, on stderr. */
static void eg__say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n = snprintf(line, sizeof(line), "[launch] ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nowhere left to report to */
	}
}

static void eg__write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno == EAGAIN) {
				struct pollfd pf = {.fd = fd,
						    .events = POLLOUT};
				poll(&pf, 1, 100);
				continue;
			}
			return; /* EPIPE: the reader left; keep running */
		}
		p += w;
		n -= (size_t)w;
	}
}

/* "[r] " + line + "\n" in one write, so lines never interleave. */
static void eg__emit(unsigned r, int stream, const char *s, size_t n)
{
	char stackbuf[4096], *m = stackbuf;
	size_t cap = n + 24;
	if (cap > sizeof(stackbuf) && !(m = malloc(cap)))
		return;
	int k = snprintf(m, cap, "[%u] ", r);
	memcpy(m + k, s, n);
	m[k + n] = '\n';
	eg__write_all(stream ? STDERR_FILENO : STDOUT_FILENO, m,
		      (size_t)k + n + 1);
	if (m != stackbuf)
		free(m);
}

/* Reads what a rank wrote; prints each complete line. At EOF a last line
 * without a newline is printed too. */
static void eg__drain(eg__rank_t *rk, unsigned r, int s)
{
	for (;;) {
		if (rk->have[s] == EG__LINE_MAX) {
			eg__emit(r, s, rk->buf[s], rk->have[s]);
			rk->have[s] = 0;
		}
		ssize_t n = read(rk->fd[s], rk->buf[s] + rk->have[s],
				 EG__LINE_MAX - rk->have[s]);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (rk->have[s])
				eg__emit(r, s, rk->buf[s], rk->have[s]);
			rk->have[s] = 0;
			close(rk->fd[s]);
			rk->fd[s] = -1;
			return;
		}
		char *p = rk->buf[s], *end = p + rk->have[s] + n, *nl;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			eg__emit(r, s, p, (size_t)(nl - p));
			p = nl + 1;
		}
		rk->have[s] = (size_t)(end - p);
		memmove(rk->buf[s], p, rk->have[s]);
	}
}

/* automake's order: 99 > failures > 77 > 0. */
static int eg__severity(int code)
{
	if (code == EG_EXIT_HARD)
		return 3;
	if (code == EG_EXIT_PASS)
		return 0;
	if (code == EG_EXIT_SKIP)
		return 1;
	return 2;
}

static int eg__worse(int a, int b)
{
	return eg__severity(b) > eg__severity(a) ? b : a;
}

static void eg__running(const eg__rank_t *rk, unsigned n, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (unsigned r = 0; r < n && o + 16 < len; r++)
		if (!rk[r].exited)
			o += (size_t)snprintf(out + o, len - o, "%s%u",
					      o ? ", " : "", r);
	if (o == 0)
		snprintf(out, len, "none");
}

/* One signal per rank: the group's, and a kill() only for a rank that
 * left the group (unreaped, so its pid is still ours). Two signals would
 * reach a rank whose handler (a library's) is still running from the
 * first on another thread. */
static void eg__signal_all(eg__rank_t *rk, unsigned n, pid_t pgid, int sig)
{
	int group = pgid > 0 && killpg(pgid, sig) == 0;

	for (unsigned r = 0; r < n; r++)
		if (rk[r].pid > 0 && !rk[r].exited &&
		    (!group || getpgid(rk[r].pid) != pgid))
			kill(rk[r].pid, sig);
}

/* The environment of rank r: ours minus the EPGATE_ world variables,
 * plus the rank's own. */
static char **eg__child_env(char *const *vars, size_t nvars)
{
	static const char *const drop[] = {
	    "EPGATE_RANK=",	 "EPGATE_SIZE=",    "EPGATE_RANKS_PER_NODE=",
	    "EPGATE_BOOT_ADDR=", "EPGATE_BOOT_FD=", "EPGATE_SECRET=",
	    "EPGATE_JOB_ID=",	 "EPGATE_TIMEOUT=",
	};
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = malloc((n + nvars + 1) * sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = 0;
		for (; d < sizeof(drop) / sizeof(drop[0]); d++)
			if (!strncmp(environ[i], drop[d], strlen(drop[d])))
				break;
		if (d == sizeof(drop) / sizeof(drop[0]))
			env[k++] = environ[i];
	}
	for (size_t i = 0; i < nvars; i++)
		env[k++] = vars[i];
	env[k] = NULL;
	return env;
}

/* In the child, after fork: nothing here may return. */
static void eg__child(char **argv, char **env, int out, int err, int in,
		      int lfd, pid_t pgid, pid_t parent, unsigned r)
{
	sigset_t none;
	setpgid(0, pgid);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(EG_EXIT_HARD); /* the launcher died before prctl */
	for (size_t i = 0; i < EG__NSIGS; i++)
		signal(eg__sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0)
		_exit(EG_EXIT_HARD);
	if (r == 0 && lfd >= 0)
		fcntl(lfd, F_SETFD, 0); /* rank 0 keeps the listener */
	execvpe(argv[0], argv, env);
	dprintf(STDERR_FILENO, "epgate launch: cannot run \"%s\": %s\n",
		argv[0], strerror(errno));
	_exit(EG_EXIT_HARD);
}

/* Moves fd above stdio: a launcher started with fd 0, 1 or 2 closed
 * would otherwise hand out a pipe that the child's dup2 onto 0-2 clobbers
 * or leaves close-on-exec. */
static int eg__high(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return hi;
}

static int eg__listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return eg__high(fd);
}

typedef struct {
	const eg_launch_opts_t *o;
	eg__rank_t *rk;
	unsigned n;
	pid_t pgid;
	double grace, deadline, kill_at;
	int stopping, stop_sig, sent_kill, worst;
	char held[128];	   /* a rank's nonzero exit, before it stops the job */
	double held_until; /* when the held exit stops the job */
	double settle;	   /* o->settle_s resolved */
} eg__job_t;

static const char *eg__sig_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGHUP:
		return "SIGHUP";
	case SIGKILL:
		return "SIGKILL";
	default:
		return "SIGTERM";
	}
}

/* Begins the stop: sig now, SIGKILL at kill_at. */
static void eg__stop(eg__job_t *j, int sig, const char *why)
{
	char list[512];
	if (j->stopping)
		return;
	eg__running(j->rk, j->n, list, sizeof(list));
	if (!strcmp(list, "none"))
		eg__say("%s; no rank left to stop", why);
	else
		eg__say("%s; stopping ranks %s (%s, SIGKILL after %.1f s)", why,
			list, eg__sig_name(sig), j->grace);
	j->stopping = 1;
	j->stop_sig = sig;
	j->sent_kill |= sig == SIGKILL;
	eg__signal_all(j->rk, j->n, j->pgid, sig);
	j->kill_at = eg_now() + j->grace;
}

/* Notes ranks that exited since the last look (they stay zombies). All
 * exits seen before a stop happened before it, so they count as the
 * ranks' own; a signal we did not send counts too. A death by signal
 * stops the job at once; a nonzero exit is held for the settle first. */
static unsigned eg__notice_exits(eg__job_t *j)
{
	unsigned running = 0;
	char why[128] = "";
	int why_is_signal = 0;
	for (unsigned r = 0; r < j->n; r++) {
		eg__rank_t *rk = &j->rk[r];
		siginfo_t si;
		if (rk->exited)
			continue;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)rk->pid, &si,
			   WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid != rk->pid) {
			running++;
			continue;
		}
		rk->exited = 1;
		if (si.si_code == CLD_EXITED) {
			rk->code = si.si_status;
			if (rk->code != 0 && rk->code != EG_EXIT_SKIP &&
			    !why[0])
				snprintf(why, sizeof(why),
					 "rank %u exited with status %d", r,
					 rk->code);
		} else if (j->stopping &&
			   (si.si_status == j->stop_sig ||
			    (si.si_status == SIGKILL && j->sent_kill))) {
			eg__say("rank %u stopped by signal %d", r,
				si.si_status);
			continue; /* our own signal: not a failure of its own */
		} else {
			rk->code = EG_EXIT_HARD;
			eg__say("rank %u killed by signal %d", r, si.si_status);
			/* a death by signal is a cause, seldom a consequence */
			if (!why_is_signal)
				snprintf(why, sizeof(why),
					 "rank %u killed by signal %d", r,
					 si.si_status);
			why_is_signal = 1;
		}
		j->worst = eg__worse(j->worst, rk->code);
	}
	if (why_is_signal) {
		eg__stop(j, SIGTERM, why); /* a held exit was its consequence */
	} else if (why[0] && !j->stopping && !j->held[0]) {
		/* the death that caused it may not be waitable yet
		 * (signals.sh (b): 6 jobs in 90 blamed the wrong rank) */
		snprintf(j->held, sizeof(j->held), "%s", why);
		j->held_until = eg_now() + j->settle;
	}
	if (j->held[0] && !j->stopping &&
	    (!running || eg_now() >= j->held_until))
		eg__stop(j, SIGTERM, j->held);
	return running;
}

/* Rank r's own variables into v (9 at most): its place in the world, the
 * bootstrap's address and secret, the step timeout, and for rank 0 the
 * listener it inherits; how many. */
static size_t eg__rank_vars(const eg__job_t *j, unsigned r, int lfd,
			    uint16_t port, const char *secret,
			    const char *job_id, const char *tenv, char v[][128])
{
	double step = 60;
	size_t nv = 0;

	if (j->o->timeout_s > 0 && j->o->timeout_s * 0.75 < step)
		step = j->o->timeout_s * 0.75;
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_RANK=%u", r);
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_SIZE=%u", j->n);
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_RANKS_PER_NODE=%u",
		 j->o->ranks_per_node ? j->o->ranks_per_node : j->n);
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_BOOT_ADDR=127.0.0.1:%u", port);
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_SECRET=%s", secret);
	snprintf(v[nv++], sizeof(v[0]), "EPGATE_JOB_ID=%s", job_id);
	if (tenv)
		snprintf(v[nv++], sizeof(v[0]), "EPGATE_TIMEOUT=%.100s", tenv);
	else
		snprintf(v[nv++], sizeof(v[0]), "EPGATE_TIMEOUT=%g", step);
	if (r == 0)
		snprintf(v[nv++], sizeof(v[0]), "EPGATE_BOOT_FD=%d", lfd);
	/* libfabric loads PSM's libinfinipath, whose SIGSEGV handler
	 * litters the working directory with *.btr backtrace files;
	 * a crash is reported by the launcher instead */
	if (!getenv("IPATH_NO_BACKTRACE"))
		snprintf(v[nv++], sizeof(v[0]), "IPATH_NO_BACKTRACE=1");
	return nv;
}

/* Forks rank r with env (freed here) into the job's process group, its
 * stdout and stderr on pipes whose read ends the job keeps, non-blocking;
 * -1 (errno says why) when it cannot. */
static int eg__fork_rank(eg__job_t *j, unsigned r, char **argv, char **env,
			 int in, int lfd, pid_t parent)
{
	int po[2], pe[2];

	if (pipe2(po, O_CLOEXEC) < 0) {
		free(env);
		return -1;
	}
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		free(env);
		return -1;
	}
	po[1] = eg__high(po[1]);
	pe[1] = eg__high(pe[1]);
	pid_t pid = fork();
	if (pid == 0)
		eg__child(argv, env, po[1], pe[1], in, lfd, j->pgid, parent, r);
	free(env);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	if (j->pgid == 0)
		j->pgid = pid;
	setpgid(pid, j->pgid); /* also here: no race with killpg */
	j->rk[r].pid = pid;
	j->rk[r].fd[0] = po[0];
	j->rk[r].fd[1] = pe[0];
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	return 0;
}

static int eg__spawn(eg__job_t *j, char **argv, int lfd, uint16_t port,
		     const char *secret, const char *job_id)
{
	char v[9][128];
	char *vars[9];
	size_t nv = 0;
	int in = eg__high(open("/dev/null", O_RDONLY | O_CLOEXEC));
	pid_t parent = getpid();
	const char *tenv = getenv("EPGATE_TIMEOUT");
	unsigned r = 0;

	if (in < 0)
		return EG_ESYS;
	for (; r < j->n; r++) {
		nv = eg__rank_vars(j, r, lfd, port, secret, job_id, tenv, v);
		for (size_t i = 0; i < nv; i++)
			vars[i] = v[i];
		char **env = eg__child_env(vars, nv);
		if (!env)
			goto fail;
		if (eg__fork_rank(j, r, argv, env, in, lfd, parent) < 0)
			goto fail;
	}
	close(in);
	return EG_OK;
fail:
	eg__say("cannot start rank %u of %u: %s", r, j->n, strerror(errno));
	for (; r < j->n; r++) {
		j->rk[r].exited = 1; /* never started */
		j->rk[r].code = EG_EXIT_HARD;
	}
	close(in);
	return EG_ESYS;
}

/* A signal to the launcher: the first stops the job with it (SIGINT and
 * SIGHUP as they came, else SIGTERM), another one kills at once. */
static void eg__on_signal_got(eg__job_t *j, int *handled_sig)
{
	char why[64];

	if (!eg__got_sig || eg__got_sig == *handled_sig)
		return;
	*handled_sig = eg__got_sig;
	j->worst = EG_EXIT_HARD;
	snprintf(why, sizeof(why), "got %s", eg__sig_name(*handled_sig));
	if (j->stopping) {
		eg__say("%s again: SIGKILL now", why);
		j->sent_kill = 1;
		eg__signal_all(j->rk, j->n, j->pgid, SIGKILL);
		return;
	}
	eg__stop(j,
		 *handled_sig == SIGINT || *handled_sig == SIGHUP ? *handled_sig
								  : SIGTERM,
		 why);
}

/* The timers while ranks run: the job's deadline stops it, and the stop's
 * grace running out kills what is left. */
static void eg__on_timers(eg__job_t *j, double now)
{
	if (!j->stopping && now >= j->deadline) {
		char why[160];
		snprintf(why, sizeof(why), "deadline %.1f s expired%s",
			 j->o->timeout_s,
			 j->o->timeout_default ? EG_LAUNCH_HINT : "");
		j->worst = eg__worse(j->worst, EG_EXIT_FAIL); /* a hang */
		eg__stop(j, SIGTERM, why);
	}
	if (j->stopping && now >= j->kill_at) {
		char list[512];
		eg__running(j->rk, j->n, list, sizeof(list));
		eg__say("ranks %s still running %.1f s after the stop; "
			"sending SIGKILL",
			list, j->grace);
		j->sent_kill = 1;
		eg__signal_all(j->rk, j->n, j->pgid, SIGKILL);
		j->kill_at = INFINITY;
	}
}

/* What to poll: the signal pipe first, then every rank output still open
 * (who: rank * 2 + stream); how many. */
static size_t eg__poll_set(const eg__job_t *j, struct pollfd *pfd,
			   unsigned *who)
{
	size_t np = 0;

	pfd[np++] = (struct pollfd){.fd = eg__sigpipe[0], .events = POLLIN};
	for (unsigned r = 0; r < j->n; r++)
		for (int s = 0; s < 2; s++)
			if (j->rk[r].fd[s] >= 0) {
				who[np] = r * 2 + (unsigned)s;
				pfd[np++] = (struct pollfd){
				    .fd = j->rk[r].fd[s], .events = POLLIN};
			}
	return np;
}

/* Once every rank has exited: output still open is held by a process
 * outside the job; what it has is drained, then it is closed. */
static void eg__close_leftovers(eg__job_t *j)
{
	for (unsigned r = 0; r < j->n; r++)
		for (int s = 0; s < 2; s++)
			if (j->rk[r].fd[s] >= 0) {
				eg__say("output of rank %u still open after "
					"every rank exited (held by a process "
					"outside the job); closing it",
					r);
				eg__drain(&j->rk[r], r, s);
				close(j->rk[r].fd[s]);
				j->rk[r].fd[s] = -1;
			}
}

/* Polls output, exits, signals and timers until every rank has exited and
 * its output is drained. */
static void eg__supervise(eg__job_t *j)
{
	size_t cap = 2 * (size_t)j->n + 1;
	struct pollfd *pfd = calloc(cap, sizeof(*pfd));
	unsigned *who = calloc(cap, sizeof(*who));
	double drain_until = INFINITY;
	int handled_sig = 0, swept = 0;

	if (!pfd || !who) {
		eg__stop(j, SIGKILL, "out of memory");
		j->worst = EG_EXIT_HARD;
	}
	for (;;) {
		unsigned running = eg__notice_exits(j);
		double now = eg_now();
		eg__on_signal_got(j, &handled_sig);
		if (running)
			eg__on_timers(j, now);
		if (!running && !swept) {
			/* Whatever the ranks left behind in their group
			 * goes too; then their pipes reach EOF. */
			if (j->pgid > 0)
				killpg(j->pgid, SIGKILL);
			swept = 1;
			drain_until = now + 2.0;
		}
		size_t np = pfd ? eg__poll_set(j, pfd, who) : 0;
		if (!running && (np <= 1 || now >= drain_until))
			break;
		double until = fmin(fmin(j->deadline, j->kill_at), drain_until);
		if (j->held[0] && !j->stopping)
			until = fmin(until, j->held_until);
		double ms = (until - now) * 1000.0 + 1;
		if (ms > 500)
			ms = 500; /* a safety net: exits are checked anyway */
		if (ms < 0)
			ms = 0;
		if (!pfd) {
			poll(NULL, 0, (int)ms);
			continue;
		}
		if (poll(pfd, np, (int)ms) < 0 && errno != EINTR)
			poll(NULL, 0, 10);
		if (pfd[0].revents) {
			char junk[64];
			while (read(eg__sigpipe[0], junk, sizeof(junk)) > 0)
				;
		}
		for (size_t i = 1; i < np; i++)
			if (pfd[i].revents)
				eg__drain(&j->rk[who[i] / 2], who[i] / 2,
					  (int)(who[i] % 2));
	}
	eg__close_leftovers(j);
	free(pfd);
	free(who);
}

/* Gives each rank its output line buffers and marks its pipes not open;
 * -1 when out of memory (said). */
static int eg__ranks_init(eg__job_t *j)
{
	for (unsigned r = 0; r < j->n; r++) {
		j->rk[r].fd[0] = j->rk[r].fd[1] = -1;
		if (!(j->rk[r].buf[0] = malloc(EG__LINE_MAX)) ||
		    !(j->rk[r].buf[1] = malloc(EG__LINE_MAX))) {
			eg__say("out of memory");
			return -1;
		}
	}
	return 0;
}

/* The job's bootstrap secret (32 hex digits, random) and its id (o's, else
 * launch-<our pid>); -1 when no randomness came (said). */
static int eg__job_names(const eg_launch_opts_t *o, char *secret, char *job_id,
			 size_t idlen)
{
	unsigned char rnd[16];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		eg__say("getrandom: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(secret + 2 * i, 3, "%02x", rnd[i]);
	if (o->job_id)
		snprintf(job_id, idlen, "%s", o->job_id);
	else
		snprintf(job_id, idlen, "launch-%ld", (long)getpid());
	return 0;
}

/* Our handlers for the signals we watch (SIGPIPE ignored); the ones they
 * replace into old. */
static void eg__signals_catch(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < EG__NSIGS; i++) {
		sa.sa_handler =
		    eg__sigs[i] == SIGPIPE ? SIG_IGN : eg__on_signal;
		sa.sa_flags = eg__sigs[i] == SIGCHLD ? SA_NOCLDSTOP : 0;
		sigaction(eg__sigs[i], &sa, &old[i]);
	}
}

/* Reaps the ranks that started, sweeps the shm regions named after them,
 * and closes and frees what each rank held. */
static void eg__ranks_fini(eg__job_t *j)
{
	for (unsigned r = 0; r < j->n; r++) {
		if (j->rk[r].pid > 0) {
			while (waitpid(j->rk[r].pid, NULL, 0) < 0 &&
			       errno == EINTR)
				;
			eg_shm_sweep((long)j->rk[r].pid);
		}
		for (int s = 0; s < 2; s++) {
			if (j->rk[r].fd[s] >= 0)
				close(j->rk[r].fd[s]);
			free(j->rk[r].buf[s]);
		}
	}
}

int eg_launch(const eg_launch_opts_t *o, char **argv)
{
	struct sigaction old[EG__NSIGS];
	char secret[33], job_id[64];
	eg__job_t j = {.o = o, .deadline = INFINITY, .kill_at = INFINITY};
	uint16_t port = 0;
	int lfd = -1, rc = EG_EXIT_HARD, sigs_set = 0;

	if (!o || !argv || !argv[0] || o->n == 0 || o->ranks_per_node > o->n) {
		eg__say("bad options: need at least one rank, a command, and "
			"at most as many ranks per node as ranks");
		return EG_EXIT_HARD;
	}
	/* what a launcher killed outright left behind (its own sweep, at
	 * the end, never ran) */
	eg_shm_sweep_dead();
	j.n = o->n;
	j.grace = o->grace_s > 0 ? o->grace_s : 2.0;
	j.settle = o->settle_s > 0   ? o->settle_s
		   : o->settle_s < 0 ? 0
				     : EG_LAUNCH_SETTLE_S;
	if (!(j.rk = calloc(o->n, sizeof(*j.rk))))
		return EG_EXIT_HARD;
	if (eg__ranks_init(&j) < 0 ||
	    eg__job_names(o, secret, job_id, sizeof(job_id)) < 0)
		goto out;
	if ((lfd = eg__listener(&port)) < 0) {
		eg__say("cannot listen on 127.0.0.1: %s", strerror(errno));
		goto out;
	}
	if (pipe2(eg__sigpipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		eg__say("pipe: %s", strerror(errno));
		goto out;
	}
	eg__got_sig = 0;
	eg__signals_catch(old);
	sigs_set = 1;
	fflush(NULL); /* no stdio buffer is copied into the children */
	if (o->timeout_s > 0)
		j.deadline = eg_now() + o->timeout_s;
	if (eg__spawn(&j, argv, lfd, port, secret, job_id) < 0) {
		j.worst = EG_EXIT_HARD;
		eg__stop(&j, SIGTERM, "start failed");
	}
	close(lfd); /* rank 0 has it now */
	lfd = -1;
	eg__supervise(&j);
	rc = j.worst;
out:
	eg__ranks_fini(&j);
	if (sigs_set)
		for (size_t i = 0; i < EG__NSIGS; i++)
			sigaction(eg__sigs[i], &old[i], NULL);
	for (int i = 0; i < 2; i++) {
		if (eg__sigpipe[i] >= 0)
			close(eg__sigpipe[i]);
		eg__sigpipe[i] = -1;
	}
	if (lfd >= 0)
		close(lfd);
	free(j.rk);
	return rc;
}
