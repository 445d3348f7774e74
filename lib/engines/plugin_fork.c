/* A plugin instance in a forked child, for in-process suites (L1 at
 * world 1): the plugin is code nobody here wrote, and in this process a
 * crash would end the whole run and a hang would stall it. The child
 * creates the instance and serves dispatch and combine; data travels
 * through one shared mapping sized for the case, commands and results
 * through a socket pair; every call waits at most EPGATE_TIMEOUT
 * seconds. A child that dies ends the case with EG_ECRASH, its signal
 * (or exit status) and the last lines it wrote to stderr (a library's
 * assert text), kept in a file of its own and copied to this process's
 * stderr; one that does not answer in time is killed and ends it with
 * the deadline. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, sigabbrev_np */
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/world.h"
#include "plugin_int.h"

/* The shared mapping starts with this header; arrays follow. */
typedef struct eg__hdr {
	uint32_t tokens, iter, num_rows;
	int32_t stepped; /* a step of a multi-step case: seed, tokens */
	uint64_t seed;
	int32_t has_findings, mapped;
	char err[EG_PLUG_ERR_MAX];
	eg_verdict_t findings;
} eg__hdr_t;

enum {
	A_X,
	A_SC,
	A_IDX,
	A_W,
	R_X,
	R_SC,
	R_SR,
	R_ST,
	R_IDX,
	R_W,
	R_EC,
	R_PF,
	Y,
	OUT,
	N_AREAS
};

struct eg_plug_proxy {
	const eg_plug_t *pl; /* with flags and seed: what a kept child
				serves (eg__renew) */
	uint32_t flags;
	uint64_t seed;
	const char *name;
	pid_t pid;
	int fd; /* our end of the socket pair */
	int dead;
	double timeout;
	uint8_t *map;
	size_t bytes, off[N_AREAS], len[N_AREAS];
	uint32_t T, H, K, L, W, cap;
	eg_dtype_t dtype;
	FILE *said;   /* the child's stderr */
	off_t echoed; /* how much of it is copied to ours */
	char err[EG_PLUG_ERR_MAX];
};

static void *eg__at(const eg_plug_proxy_t *p, int a)
{
	return p->map + p->off[a];
}

static void eg__layout(eg_plug_proxy_t *p, const eg_workload_t *w)
{
	size_t T = p->T, H = p->H, K = p->K, cap = p->cap;
	size_t esz = eg_dtype_size(w->dtype), fp8 = w->dtype == EG_DTYPE_FP8;
	size_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	size_t nb = H / EG_FP8_BLOCK * sizeof(float);
	size_t o = (sizeof(eg__hdr_t) + 63) & ~(size_t)63;

	p->len[A_X] = T * H * esz;
	p->len[A_SC] = fp8 ? T * nb : 0;
	p->len[A_IDX] = p->len[A_W] = T * K * 4;
	p->len[R_X] = cap * H * esz;
	p->len[R_SC] = fp8 ? cap * nb : 0;
	p->len[R_SR] = p->len[R_ST] = cap * 4;
	p->len[R_IDX] = p->len[R_W] = cap * K * 4;
	p->len[R_EC] = p->L * 4;
	p->len[R_PF] = (p->W + 1) * 4;
	p->len[Y] = cap * H * csz;
	p->len[OUT] = T * H * csz;
	for (int a = 0; a < N_AREAS; a++) {
		p->off[a] = o;
		o += (p->len[a] + 64) & ~(size_t)63;
	}
	p->bytes = o;
}

static int eg__fail(eg_plug_proxy_t *p, int rc, const char *stage,
		    const char *what)
{
	snprintf(p->err, sizeof(p->err), "plugin %s: %s: %s", p->name, stage,
		 what);
	return rc;
}

/* What the child wrote to stderr since the last copy, to ours. */
static void eg__echo(eg_plug_proxy_t *p)
{
	char buf[4096];
	ssize_t n;

	while (p->said &&
	       (n = pread(fileno(p->said), buf, sizeof(buf), p->echoed)) > 0) {
		fwrite(buf, 1, (size_t)n, stderr);
		p->echoed += n;
	}
	fflush(stderr);
}

/* The last lines (at most 4) the child wrote to stderr, joined by
 * newlines, into out (len bytes); "" when it wrote none. */
static void eg__said_tail(const eg_plug_proxy_t *p, char *out, size_t len)
{
	char buf[1024], *s;
	off_t end = p->said ? lseek(fileno(p->said), 0, SEEK_END) : 0;
	off_t from = end > 1023 ? end - 1023 : 0;
	ssize_t n = end > 0 ? pread(fileno(p->said), buf, 1023, from) : 0;
	int lines = 0;

	out[0] = '\0';
	if (n <= 0)
		return;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	for (s = buf + n; s > buf; s--)
		if (s[-1] == '\n' && ++lines == 4)
			break;
	if (s == buf && from > 0 && strchr(buf, '\n'))
		s = strchr(buf, '\n') + 1; /* the first line is cut */
	n = (ssize_t)strlen(s) < (ssize_t)len ? (ssize_t)strlen(s)
					      : (ssize_t)len - 1;
	memcpy(out, s, (size_t)n);
	out[n] = '\0';
}

/* How a child ended: "killed by signal 6 (SIGABRT, Aborted)", "exited
 * with status 0 (exit() inside the plugin or its library)". */
static void eg__ended(int st, char *what, size_t len)
{
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	const char *ab = sig ? sigabbrev_np(sig) : NULL;

	if (sig)
		snprintf(what, len,
			 "its process was killed by signal %d (%s%s%s%s)", sig,
			 ab ? "SIG" : "", ab ? ab : "", ab ? ", " : "",
			 strsignal(sig));
	else
		snprintf(what, len,
			 "its process exited with status %d (exit() inside the "
			 "plugin or its library)",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* Reaps the child by time end (eg_now): 0 with its status in *st, -1
 * when it is still running then. A child that closed its end of the
 * socket is not always ending: a library may close every descriptor it
 * did not open and go on, so even this wait has the call's deadline. */
static int eg__reap(pid_t pid, double end, int *st)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	int fd = -1;
#endif

	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);
		double left = end - eg_now();
		struct pollfd pf = {.fd = fd, .events = POLLIN};

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (left <= 0) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		/* readable when the child ends; without pidfd, look again in
		 * 10 ms */
		poll(&pf, fd >= 0 ? 1 : 0,
		     fd >= 0 ? (int)(left * 1000) + 1 : 10);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* The child is gone or stuck: reap it and say how it ended; a child that
 * ended by itself is a crash, with its last words on the lines after; one
 * that closed the socket and is still running at the call's deadline
 * (end) is killed and is a hang. */
static int eg__lost(eg_plug_proxy_t *p, const char *stage, int stuck,
		    double end)
{
	char what[256], tail[800];
	int st = 0, open = 0;

	if (!stuck && eg__reap(p->pid, end, &st) < 0)
		stuck = open = 1;
	if (stuck) {
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	p->dead = 1;
	eg__echo(p);
	if (stuck) {
		snprintf(what, sizeof(what),
			 "did not return within the deadline of %.1f s "
			 "(EPGATE_TIMEOUT)%s; its process was killed",
			 p->timeout,
			 open ? ", its end of the socket closed" : "");
		return eg__fail(p, EG_ETIMEDOUT, stage, what);
	}
	eg__ended(st, what, sizeof(what));
	eg__said_tail(p, tail, sizeof(tail));
	snprintf(p->err, sizeof(p->err), "plugin %s: %s: %s%s%s", p->name,
		 stage, what, *tail ? "\n" : "", tail);
	return EG_ECRASH;
}

/* The child's answer to one command, within the deadline. */
static int eg__wait(eg_plug_proxy_t *p, const char *stage)
{
	double end = eg_now() + p->timeout;
	int32_t rc;

	for (;;) {
		struct pollfd pf = {.fd = p->fd, .events = POLLIN};
		double left = end - eg_now();
		int n;

		if (left <= 0)
			return eg__lost(p, stage, 1, end);
		n = poll(&pf, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			continue; /* the deadline is checked above */
		n = (int)recv(p->fd, &rc, sizeof(rc), MSG_WAITALL);
		if (n == (int)sizeof(rc))
			return rc;
		return eg__lost(p, stage, 0, end);
	}
}

static int eg__call(eg_plug_proxy_t *p, char cmd, const char *stage)
{
	const eg__hdr_t *h = (const eg__hdr_t *)p->map;
	int rc;

	if (p->dead)
		return EG_EPEER;
	if (send(p->fd, &cmd, 1, MSG_NOSIGNAL) != 1)
		return eg__lost(p, stage, 0, eg_now() + p->timeout);
	rc = eg__wait(p, stage);
	if (rc < 0 && !p->dead)
		snprintf(p->err, sizeof(p->err), "%s", h->err);
	return rc;
}

/* ---- the child ---- */
static void eg__reply(int fd, int32_t rc)
{
	if (send(fd, &rc, sizeof(rc), MSG_NOSIGNAL) != sizeof(rc))
		_exit(1);
}

static void eg__child_dispatch(eg_plug_proxy_t *p, eg_plug_run_t *run,
			       eg_recv_t *rv, int fd)
{
	eg__hdr_t *h = (eg__hdr_t *)p->map;
	/* world 1: a step is the case with its seed and token count */
	eg_workload_t step = run->w;
	uint32_t list[1] = {h->tokens};
	eg_rank_input_t in = {.rank = 0,
			      .tokens = h->tokens,
			      .iter = h->iter,
			      .dtype = p->dtype,
			      .hidden = p->H,
			      .topk = p->K,
			      .x = eg__at(p, A_X),
			      .scales = p->len[A_SC] ? eg__at(p, A_SC) : NULL,
			      .topk_idx = eg__at(p, A_IDX),
			      .topk_w = eg__at(p, A_W)};
	int rc;

	step.seed = h->seed;
	step.tokens_mode = EG_TOKENS_LIST;
	step.tokens_list = list;
	step.n_tokens_list = 1;
	step.zero_ranks = 0;
	in.step = h->stepped ? &step : NULL;
	rc = eg_plug_run_dispatch(run, &in, rv);

	h->mapped = run->last_mapped;
	h->num_rows = rv->num_rows;
	h->has_findings = rv->findings != NULL;
	if (rv->findings)
		h->findings = *rv->findings;
	snprintf(h->err, sizeof(h->err), "%s",
		 eg_plug_run_error(run) ? eg_plug_run_error(run) : "");
	eg__reply(fd, rc);
}

static void eg__child(eg_plug_proxy_t *p, const eg_plug_t *pl,
		      const eg_workload_t *w, uint32_t flags, int fd)
{
	eg__hdr_t *h = (eg__hdr_t *)p->map;
	eg_engine_ctx_t ctx = {
	    .size = sizeof(ctx), .n_ranks = 1, .flags = flags};
	eg_plug_run_t *run = NULL;
	eg_recv_t rv = {.capacity = p->cap,
			.dtype = p->dtype,
			.world = p->W,
			.hidden = p->H,
			.topk = p->K,
			.local_experts = p->L,
			.x = eg__at(p, R_X),
			.scales = p->len[R_SC] ? eg__at(p, R_SC) : NULL,
			.src_rank = eg__at(p, R_SR),
			.src_token = eg__at(p, R_ST),
			.topk_idx = eg__at(p, R_IDX),
			.topk_w = eg__at(p, R_W),
			.expert_count = eg__at(p, R_EC),
			.rank_prefix = eg__at(p, R_PF)};
	char c;
	int rc = eg_plug_run_create(&run, pl, w, &ctx, h->err, sizeof(h->err));

	eg__reply(fd, rc);
	while (rc == EG_OK && recv(fd, &c, 1, 0) == 1 && c != 'q') {
		/* a kept process (eg_engine_keep_process): 'x' destroys the
		 * instance and stays, 'n' creates the next one here */
		if (c == 'x' || c == 'n') {
			eg_plug_run_destroy(run);
			run = NULL;
			eg__reply(fd, c == 'x' ? EG_OK
					       : eg_plug_run_create(
						     &run, pl, w, &ctx, h->err,
						     sizeof(h->err)));
			continue;
		}
		if (!run) { /* a failed 'n': the parent ends us */
			eg__reply(fd, EG_EINVAL);
			continue;
		}
		if (c == 'd') {
			eg__child_dispatch(p, run, &rv, fd);
			continue;
		}
		int r2 = eg_plug_run_combine(run, eg__at(p, Y), eg__at(p, OUT));
		h->findings = *eg_plug_run_found(run);
		snprintf(h->err, sizeof(h->err), "%s",
			 eg_plug_run_error(run) ? eg_plug_run_error(run) : "");
		eg__reply(fd, r2);
	}
	eg_plug_run_destroy(run);
	free(rv.findings);
	_exit(0);
}

/* ---- the parent ---- */

/* eg_engine_keep_process: the child of the last instance destroyed, its
 * instance gone, waiting for the next of the same plugin and shape. */
static int eg__keep;
static eg_plug_proxy_t *eg__kept;

static void eg__end(eg_plug_proxy_t *p);

void eg_engine_keep_process(int on)
{
	eg__keep = on;
	if (!on && eg__kept)
		eg__end(eg__kept), eg__kept = NULL;
}

/* A new instance in the kept child, when it is this plugin's on this
 * shape (the child creates it on the workload it was forked with):
 * 1 done (rc its create's), 0 not kept. */
static int eg__renew(eg_plug_proxy_t **out, const eg_plug_t *pl,
		     const eg_workload_t *w, uint32_t flags, int *rc, char *err,
		     size_t errlen)
{
	eg_plug_proxy_t *p = eg__kept;

	if (!p || p->pl != pl || p->flags != flags ||
	    p->T != eg_workload_tokens(w, 0) || p->H != w->hidden ||
	    p->K != w->topk || p->W != w->world ||
	    p->cap != eg_recv_max_rows(w) || p->dtype != w->dtype ||
	    p->seed != w->seed)
		return 0;
	eg__kept = NULL;
	p->err[0] = '\0';
	if ((*rc = eg__call(p, 'n', "create")) < 0) {
		snprintf(err, errlen, "%s", p->err);
		eg__end(p);
		return 1;
	}
	*out = p;
	return 1;
}

int eg_plug_proxy_create(eg_plug_proxy_t **out, const eg_plug_t *pl,
			 const eg_workload_t *w, uint32_t flags, char *err,
			 size_t errlen)
{
	eg_plug_proxy_t *p;
	int sv[2], rc;

	*out = NULL;
	if (eg__renew(out, pl, w, flags, &rc, err, errlen))
		return rc;
	if (!(p = calloc(1, sizeof(*p))))
		return EG_ENOMEM;
	p->pl = pl;
	p->flags = flags;
	p->seed = w->seed;
	p->name = pl->p->name ? pl->p->name : pl->path;
	p->timeout = eg_plug_timeout();
	p->T = eg_workload_tokens(w, 0);
	p->H = w->hidden;
	p->K = w->topk;
	p->L = eg_workload_local_experts(w);
	p->W = w->world;
	p->cap = eg_recv_max_rows(w);
	p->dtype = w->dtype;
	p->fd = -1;
	eg__layout(p, w);
	p->map = mmap(NULL, p->bytes, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->map == MAP_FAILED) {
		free(p);
		snprintf(err, errlen, "plugin: shared mapping: %s",
			 strerror(errno));
		return EG_ESYS;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		snprintf(err, errlen, "plugin: socketpair: %s",
			 strerror(errno));
		p->map = (munmap(p->map, p->bytes), NULL);
		free(p);
		return EG_ESYS;
	}
	fflush(NULL);	     /* nothing buffered is written twice */
	p->said = tmpfile(); /* without it, the child's stderr is ours */
	p->pid = fork();
	if (p->pid == 0) {
		close(sv[0]);
		if (p->said)
			dup2(fileno(p->said), STDERR_FILENO);
		eg__child(p, pl, w, flags, sv[1]);
	}
	close(sv[1]);
	p->fd = sv[0];
	if (p->pid < 0) {
		p->dead = 1;
		rc = eg__fail(p, EG_ESYS, "fork", strerror(errno));
	} else {
		rc = eg__wait(p, "create");
		if (rc < 0 && !p->dead)
			snprintf(p->err, sizeof(p->err), "%s",
				 ((eg__hdr_t *)p->map)->err);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", p->err);
		eg_plug_proxy_destroy(p);
		return rc;
	}
	*out = p;
	return EG_OK;
}

int eg_plug_proxy_dispatch(eg_plug_proxy_t *p, const eg_rank_input_t *in,
			   eg_recv_t *out)
{
	eg__hdr_t *h = (eg__hdr_t *)p->map;
	size_t H = p->H, K = p->K, n, nb = H / EG_FP8_BLOCK;
	size_t esz = eg_dtype_size(p->dtype);
	int rc;

	if (in->tokens > p->T || out->capacity < p->cap)
		return eg__fail(p, EG_EINVAL, "dispatch", "shape changed");
	h->tokens = in->tokens;
	h->iter = in->iter;
	h->stepped = in->step != NULL;
	h->seed = in->step ? in->step->seed : 0;
	if (in->tokens) { /* no tokens: no arrays at all */
		size_t t = in->tokens;

		memcpy(eg__at(p, A_X), in->x, t * H * esz);
		if (p->len[A_SC])
			memcpy(eg__at(p, A_SC), in->scales, t * nb * 4);
		memcpy(eg__at(p, A_IDX), in->topk_idx, t * K * 4);
		memcpy(eg__at(p, A_W), in->topk_w, t * K * 4);
	}
	if ((rc = eg__call(p, 'd', "dispatch")) < 0 || !h->mapped)
		return rc; /* a timed step leaves the layout alone */
	n = h->num_rows < p->cap ? h->num_rows : p->cap;
	out->num_rows = h->num_rows;
	memcpy(out->x, eg__at(p, R_X), n * H * esz);
	if (p->len[R_SC])
		memcpy(out->scales, eg__at(p, R_SC), n * nb * sizeof(float));
	memcpy(out->src_rank, eg__at(p, R_SR), n * 4);
	memcpy(out->src_token, eg__at(p, R_ST), n * 4);
	memcpy(out->topk_idx, eg__at(p, R_IDX), n * K * 4);
	memcpy(out->topk_w, eg__at(p, R_W), n * K * 4);
	memcpy(out->expert_count, eg__at(p, R_EC), p->len[R_EC]);
	memcpy(out->rank_prefix, eg__at(p, R_PF), p->len[R_PF]);
	if (h->has_findings) {
		if (!out->findings &&
		    !(out->findings = malloc(sizeof(*out->findings))))
			return EG_ENOMEM;
		*out->findings = h->findings;
	}
	return EG_OK;
}

int eg_plug_proxy_combine(eg_plug_proxy_t *p, const void *y, void *out,
			  eg_verdict_t *found)
{
	eg__hdr_t *h = (eg__hdr_t *)p->map;
	size_t rb = p->len[Y] / (p->cap ? p->cap : 1);
	int rc;

	memcpy(eg__at(p, Y), y,
	       (h->num_rows < p->cap ? h->num_rows : p->cap) * rb);
	if ((rc = eg__call(p, 'c', "combine")) < 0)
		return rc;
	memcpy(out, eg__at(p, OUT), p->len[OUT]);
	if (found)
		*found = h->findings;
	return EG_OK;
}

void eg_plug_proxy_destroy(eg_plug_proxy_t *p)
{
	if (!p)
		return;
	if (eg__keep && !p->dead && p->pid > 0 && !eg__kept &&
	    eg__call(p, 'x', "destroy") == EG_OK) {
		eg__echo(p);
		eg__kept = p; /* its instance is gone, its process stays */
		return;
	}
	eg__end(p);
}

static void eg__end(eg_plug_proxy_t *p)
{
	if (!p->dead && p->pid > 0) {
		/* a clean exit, or the deadline */
		if (send(p->fd, "q", 1, MSG_NOSIGNAL) != 1 ||
		    eg__wait(p, "destroy") != EG_ECRASH)
			if (!p->dead)
				eg__lost(p, "destroy", 1, 0);
	}
	eg__echo(p);
	if (p->said)
		fclose(p->said);
	if (p->fd >= 0)
		close(p->fd);
	if (p->map)
		munmap(p->map, p->bytes);
	free(p);
}

const char *eg_plug_proxy_error(const eg_plug_proxy_t *p)
{
	return p && p->err[0] ? p->err : NULL;
}
