/* Rank 0's door of the bootstrap (docs/world.md, "Joining"; the
 * protocol's whole story is lib/world/boot_join.c's head): it accepts
 * connections, challenges each with a fresh nonce, admits a peer that
 * proves the job's secret for a rank not yet taken, and keeps strangers
 * side by side in a table of EG__PENDING, the oldest going when it is
 * full; refusals logged in full EG__LOG_FIRST times, then once a
 * second. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/world/boot_int.h"
#include "lib/world/hmac.h"
#include "lib/world/boot_join.h"

/* ---- rank 0 ---- */

typedef struct {
	int fd;
	double t0; /* accepted at */
	char addr[64];
	unsigned char nonce[EG_BOOT_NONCE];
	unsigned char in[EG_BOOT_HDR + EG_BOOT_HELLO];
	size_t have;
} eg__pending_t;

typedef struct {
	eg_boot_t *b;
	eg__pending_t pend[EG__PENDING];
	uint32_t joined;
	/* refusal log: lines written, refusals since the last line */
	unsigned logged, quiet, total;
	double next_line;
	char last[160];
} eg__door_t;

/* Logs a refusal: in full at first, then a count at most once per
 * EG__LOG_EVERY (force: say what is left now). */
static void eg__log(eg__door_t *d, const char *addr, const char *why, int force)
{
	double now = eg_now();

	if (addr) {
		d->total++;
		if (d->logged < EG__LOG_FIRST) {
			fprintf(stderr,
				"epgate boot: refused a peer from %s: %s\n",
				addr, why);
			d->logged++;
			if (d->logged == EG__LOG_FIRST)
				d->next_line = now + EG__LOG_EVERY;
			return;
		}
		d->quiet++;
		snprintf(d->last, sizeof(d->last), "%s: %s", addr, why);
	}
	if (d->quiet && (force || now >= d->next_line)) {
		fprintf(stderr,
			"epgate boot: refused %u more peer%s (the last from "
			"%s); %u refused in all\n",
			d->quiet, d->quiet == 1 ? "" : "s", d->last, d->total);
		d->quiet = 0;
		d->next_line = now + EG__LOG_EVERY;
	}
}

/* Refuses p: the code (and, when mac is given, the proof that rank 0
 * knows the secret) to the peer, detail to the log; closes it. A
 * connection that closed before saying anything is only counted. */
static void eg__refuse(eg__door_t *d, eg__pending_t *p, unsigned code,
		       const char *detail, const unsigned char *mac)
{
	unsigned char zero[EG_BOOT_MAC] = {0};

	if (code == EG__WHY_CLOSED && p->have == 0) {
		d->total++; /* a port scan, or a peer that retried */
	} else {
		eg__log(d, p->addr, detail ? detail : eg__boot_why(code), 0);
		eg_boot_send_frame(p->fd, EG_BOOT_OP_REFUSE, (int)code, 0, 0,
				   mac ? mac : zero, EG_BOOT_MAC);
	}
	close(p->fd);
	p->fd = -1;
}

/* A job id as rank 0's log may show it: [A-Za-z0-9._-], else '?'. */
static void eg__printable(const char *in, char *out, size_t len)
{
	size_t i = 0;

	for (; in[i] && i + 1 < len; i++) {
		char c = in[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			 c == '-';
		out[i] = ok ? c : '?';
	}
	out[i] = '\0';
}

/* A complete hello: who is it, and may it join? Returns the rank, or -1
 * after refusing it. */
static int eg__judge(eg__door_t *d, eg__pending_t *p)
{
	eg_boot_t *b = d->b;
	eg_boot_frame_t f;
	unsigned char mac[EG_BOOT_MAC], reply[EG_BOOT_HDR + EG_BOOT_MAC];
	const unsigned char *q = p->in + EG_BOOT_HDR;
	char job[EG_BOOT_JOBLEN + 1], safe[EG_BOOT_JOBLEN + 1], why[200];
	char role[8];
	unsigned code;

	eg_boot_decode(p->in, &f);
	uint32_t size = (uint32_t)eg_boot_get(q, 4);
	memcpy(job, q + 4, EG_BOOT_JOBLEN);
	job[EG_BOOT_JOBLEN] = '\0';
	const unsigned char *nonce1 = q + 4 + EG_BOOT_JOBLEN;
	const unsigned char *proof = nonce1 + EG_BOOT_NONCE;
	if (f.aux != EG_BOOT_VERSION) {
		snprintf(why, sizeof(why), "protocol version %u, want %u",
			 f.aux, EG_BOOT_VERSION);
		eg__refuse(d, p, EG__WHY_VERSION, why, NULL);
		return -1;
	}
	if (strcmp(job, b->job_id)) {
		eg__printable(job, safe, sizeof(safe));
		snprintf(why, sizeof(why), "job id \"%s\" is not this job's",
			 safe);
		eg__refuse(d, p, EG__WHY_JOB, why, NULL);
		return -1;
	}
	eg_boot_proof(b->secret, "peer....", b->job_id, f.rank, size, p->nonce,
		      nonce1, mac);
	if (!eg_ct_equal(mac, proof, EG_BOOT_MAC)) {
		eg__refuse(d, p, EG__WHY_SECRET, NULL, NULL);
		return -1;
	}
	/* it knows the secret: a refusal now is proven, and final */
	code = 0;
	if (size != b->size || f.rank == 0 || f.rank >= b->size) {
		snprintf(why, sizeof(why),
			 "rank %u of %u does not fit a job of %u ranks", f.rank,
			 size, b->size);
		code = EG__WHY_FIT;
	} else if (b->fd[f.rank] >= 0) {
		snprintf(why, sizeof(why), "rank %u has already joined",
			 f.rank);
		code = EG__WHY_JOINED;
	}
	if (code) {
		eg__boot_refuse_role(code, role);
		eg_boot_proof(b->secret, role, b->job_id, f.rank, size,
			      p->nonce, nonce1, mac);
		eg__refuse(d, p, code, why, mac);
		return -1;
	}
	eg_boot_proof(b->secret, "root....", b->job_id, f.rank, size, p->nonce,
		      nonce1, mac);
	eg_boot_frame_t w = {.op = EG_BOOT_OP_WELCOME, .len = EG_BOOT_MAC};
	eg_boot_encode(reply, &w);
	memcpy(reply + EG_BOOT_HDR, mac, EG_BOOT_MAC);
	/* 64 bytes into a fresh socket whose peer reads: cannot block. */
	if (send(p->fd, reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(reply)) {
		snprintf(why, sizeof(why), "rank %u: welcome: %s", f.rank,
			 strerror(errno));
		eg__refuse(d, p, EG__WHY_CLOSED, why, NULL);
		return -1;
	}
	b->fd[f.rank] = p->fd;
	p->fd = -1;
	return (int)f.rank;
}

/* Reads from one pending peer; refuses at the first wrong byte. Returns
 * the rank that joined, or -1 while pending or refused. */
static int eg__pending_read(eg__door_t *d, eg__pending_t *p)
{
	for (;;) {
		size_t want = sizeof(p->in) - p->have;
		if (p->have >= EG_BOOT_HDR) {
			eg_boot_frame_t f;
			eg_boot_decode(p->in, &f);
			if (f.op != EG_BOOT_OP_HELLO ||
			    f.len != EG_BOOT_HELLO) {
				eg__refuse(d, p, EG__WHY_NOT_HELLO, NULL, NULL);
				return -1;
			}
		}
		if (want == 0)
			return eg__judge(d, p);
		ssize_t n = recv(p->fd, p->in + p->have, want, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -1;
		if (n <= 0) {
			eg__refuse(d, p, EG__WHY_CLOSED, NULL, NULL);
			return -1;
		}
		p->have += (size_t)n;
		if (p->have >= 4 && eg_boot_get(p->in, 4) != EG_BOOT_MAGIC) {
			eg__refuse(d, p, EG__WHY_MAGIC, NULL, NULL);
			return -1;
		}
	}
}

/* Where rank 0 listens: the launcher's socket, else the world's listen
 * address (EPGATE_BOOT_LISTEN, "" = every interface) under Slurm, else
 * the rendezvous host. */
static int eg__listen(eg_boot_t *b, const eg_world_t *w, double deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*res, *ai;
	const char *host = w->from_slurm
			       ? (w->boot_listen[0] ? w->boot_listen : NULL)
			       : w->boot_host;
	char port[8];
	int fd = -1, err = 0, one = 1;

	if (w->boot_fd >= 0) {
		if (eg_boot_nonblock(w->boot_fd) < 0)
			return eg_boot_set_err(b, EG_ESYS,
					       "open: EPGATE_BOOT_FD=%d: %s",
					       w->boot_fd, strerror(errno));
		return w->boot_fd;
	}
	snprintf(port, sizeof(port), "%u", w->boot_port);
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return eg_boot_set_err(b, EG_ESYS, "open: listen on %s: %s",
				       host ? host : "every interface",
				       gai_strerror(rc));
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family,
				    ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd < 0) {
				err = errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
			    listen(fd, 128) == 0 && eg_boot_nonblock(fd) == 0)
				break;
			err = errno;
			close(fd);
			fd = -1;
		}
		/* A previous job's socket (or a squatter) may hold the
		 * port a while: retry to the deadline. */
		if (fd >= 0 || err != EADDRINUSE || eg_now() >= deadline)
			break;
		poll(NULL, 0, 100);
	}
	freeaddrinfo(res);
	if (fd < 0)
		return eg_boot_set_err(b, EG_ESYS, "open: listen on %s%s%s: %s",
				       host ? host : "every interface",
				       host ? " port " : ", port ", port,
				       strerror(err));
	return fd;
}

/* A slot for a new connection: a free one, else the oldest stranger's
 * (refused), so that idle strangers cannot keep the ranks out. */
static eg__pending_t *eg__slot(eg__door_t *d)
{
	eg__pending_t *old = NULL;

	for (int i = 0; i < EG__PENDING; i++) {
		if (d->pend[i].fd < 0)
			return &d->pend[i];
		if (!old || d->pend[i].t0 < old->t0)
			old = &d->pend[i];
	}
	eg__refuse(d, old, EG__WHY_FULL, NULL, NULL);
	return old;
}

/* Accepts what the listener holds and challenges each. */
static int eg__accept(eg__door_t *d, int lfd)
{
	for (;;) {
		int one = 1,
		    fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return EG_OK;
		eg__pending_t *p = eg__slot(d);
		p->fd = fd;
		p->have = 0;
		p->t0 = eg_now();
		eg_boot_sock_addr(fd, 1, p->addr, sizeof(p->addr));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (eg_boot_random(p->nonce, EG_BOOT_NONCE) < 0)
			return eg_boot_set_err(d->b, EG_ESYS,
					       "open: getrandom: %s",
					       strerror(errno));
		unsigned char m[EG_BOOT_HDR + EG_BOOT_NONCE];
		eg_boot_frame_t f = {.op = EG_BOOT_OP_HELLO0,
				     .aux = EG_BOOT_VERSION,
				     .len = EG_BOOT_NONCE};
		eg_boot_encode(m, &f);
		memcpy(m + EG_BOOT_HDR, p->nonce, EG_BOOT_NONCE);
		if (send(fd, m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(m))
			eg__refuse(d, p, EG__WHY_CHALLENGE, NULL, NULL);
	}
}

/* Refuses the strangers whose handshake time is up; returns the
 * earliest time one of the others' will be. */
static double eg__expire(eg__door_t *d, double now)
{
	double next = now + EG__HANDSHAKE_S;

	for (int i = 0; i < EG__PENDING; i++) {
		eg__pending_t *p = &d->pend[i];
		if (p->fd < 0)
			continue;
		if (now >= p->t0 + EG__HANDSHAKE_S)
			eg__refuse(d, p, EG__WHY_SLOW, NULL, NULL);
		else if (p->t0 + EG__HANDSHAKE_S < next)
			next = p->t0 + EG__HANDSHAKE_S;
	}
	return next;
}

/* One round of the door: poll, read the pending, accept. 1 when the
 * deadline passed, 0 to go on, <0 on error. */
static int eg__door_round(eg__door_t *d, int lfd, double deadline)
{
	struct pollfd pfd[EG__PENDING + 1];
	int map[EG__PENDING + 1], np = 1;
	double now = eg_now(), next = eg__expire(d, now);
	int ms = eg_boot_ms_left(next < deadline ? next : deadline), rc;

	pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
	for (int i = 0; i < EG__PENDING; i++) {
		if (d->pend[i].fd < 0)
			continue;
		pfd[np] =
		    (struct pollfd){.fd = d->pend[i].fd, .events = POLLIN};
		map[np++] = i;
	}
	rc = ms ? poll(pfd, (nfds_t)np, ms) : 0;
	if (rc < 0 && errno == EINTR)
		return 0;
	if (rc < 0)
		return eg_boot_set_err(d->b, EG_ESYS, "open: poll: %s",
				       strerror(errno));
	if (rc == 0 && eg_boot_ms_left(deadline) == 0)
		return 1;
	for (int j = 1; j < np; j++) {
		eg__pending_t *p = &d->pend[map[j]];
		if (pfd[j].revents && p->fd >= 0 && eg__pending_read(d, p) >= 0)
			d->joined++;
	}
	if (pfd[0].revents & POLLIN)
		return eg__accept(d, lfd);
	return 0;
}

int eg_boot_open_root(eg_boot_t *b, const eg_world_t *w, double timeout,
		      double deadline)
{
	eg__door_t *d = calloc(1, sizeof(*d));
	int lfd, rc = EG_OK;

	if (!d)
		return eg_boot_set_err(b, EG_ENOMEM, "open: out of memory");
	d->b = b;
	for (int i = 0; i < EG__PENDING; i++)
		d->pend[i].fd = -1;
	if ((lfd = eg__listen(b, w, deadline)) < 0) {
		free(d);
		return lfd;
	}
	while (d->joined < b->size - 1 &&
	       (rc = eg__door_round(d, lfd, deadline)) == 0)
		;
	if (rc == 1) {
		char list[256] = "";
		for (uint32_t r = 1; r < b->size; r++)
			if (b->fd[r] < 0)
				eg_boot_add_rank(list, sizeof(list), r);
		rc = eg_boot_set_err(b, EG_ETIMEDOUT,
				     "open: deadline %.1f s expired; rank 0 "
				     "still waits on ranks %s (%u of %u "
				     "joined)",
				     timeout, list, d->joined + 1, b->size);
	}
	/* Whoever is still in handshake is not part of this job. */
	for (int i = 0; i < EG__PENDING; i++)
		if (d->pend[i].fd >= 0)
			eg__refuse(d, &d->pend[i],
				   rc == EG_OK ? EG__WHY_ALL_JOINED
					       : EG__WHY_GAVE_UP,
				   NULL, NULL);
	eg__log(d, NULL, NULL, 1);
	close(lfd); /* later strangers get "connection refused" */
	free(d);
	return rc;
}
