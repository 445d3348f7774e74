/* Joining the bootstrap (docs/world.md, "Joining").
 *
 * Rank 0 keeps a door: it accepts connections, sends each a fresh nonce
 * and admits a peer that proves the job's secret for a rank not yet
 * taken. Strangers (anyone without the secret: scanners, other jobs,
 * stale ranks of an earlier job) are handled side by side in a table
 * of EG__PENDING; each has EG__HANDSHAKE_S to say its hello, and when
 * the table is full the oldest goes, so idle strangers cannot keep the
 * job's ranks out. Refusals are logged on stderr, the first
 * EG__LOG_FIRST in full, then at most one line a second.
 *
 * A peer connects and proves the secret; it believes only an answer
 * that proves the secret back. An answer without that proof (a
 * refusal or a welcome from whatever listens on the port) is never
 * final and its bytes are never printed: the peer retries until the
 * deadline and then says what it got. */
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

static const char *const eg__why_text[EG__WHY_N] = {
    [EG__WHY_VERSION] = "another protocol version",
    [EG__WHY_JOB] = "another job's id",
    [EG__WHY_SECRET] = "wrong secret",
    [EG__WHY_FIT] = "rank or size does not fit this job",
    [EG__WHY_JOINED] = "that rank has already joined",
    [EG__WHY_NOT_HELLO] = "not an epgate hello",
    [EG__WHY_MAGIC] = "not an epgate bootstrap client (bad magic number)",
    [EG__WHY_CLOSED] = "closed during the handshake",
    [EG__WHY_SLOW] = "no hello within the handshake time limit",
    [EG__WHY_FULL] = "too many connections in handshake",
    [EG__WHY_CHALLENGE] = "could not send the challenge",
    [EG__WHY_ALL_JOINED] = "every rank of the job has joined",
    [EG__WHY_GAVE_UP] = "rank 0 stopped waiting (the job failed)",
};

const char *eg__boot_why(unsigned code)
{
	return code > 0 && code < EG__WHY_N ? eg__why_text[code]
					    : "an unknown reason";
}

/* The role string of a refusal's proof: the code is bound into it. */
void eg__boot_refuse_role(unsigned code, char role[8])
{
	memcpy(role, "refuse", 6);
	role[6] = (char)(code >> 8);
	role[7] = (char)code;
}

/* ---- every other rank ---- */

/* What the answers on the port were, when they did not prove the
 * secret: said at the deadline. */
typedef struct {
	unsigned refusals, welcomes, strangers;
	unsigned last_code;
} eg__heard_t;

/* Reads exactly n bytes or fails: EG_EPEER on EOF, EG_ETIMEDOUT. */
static int eg__read_full(int fd, void *buf, size_t n, double deadline)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = eg_boot_ms_left(deadline);
		int rc = ms ? poll(&p, 1, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0)
			return EG_ETIMEDOUT;
		ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return EG_EPEER;
		got += (size_t)r;
	}
	return EG_OK;
}

/* Connects once (non-blocking, bounded by the deadline). */
static int eg__connect(const struct addrinfo *ai, double deadline, int *err)
{
	int fd = socket(ai->ai_family,
			ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			ai->ai_protocol);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			*err = errno;
			close(fd);
			return -1;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int ms = eg_boot_ms_left(deadline), rc;
		do
			rc = ms ? poll(&p, 1, ms) : 0;
		while (rc < 0 && errno == EINTR);
		socklen_t sl = sizeof(*err);
		if (rc <= 0) {
			*err = ETIMEDOUT;
			close(fd);
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &sl) < 0 ||
		    *err) {
			close(fd);
			return -1;
		}
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Sends this rank's hello for rank 0's nonce n0; mac gets the proof
 * rank 0 must answer with, n1 this rank's nonce. */
static int eg__send_hello(eg_boot_t *b, int fd, const unsigned char *n0,
			  unsigned char n1[EG_BOOT_NONCE],
			  unsigned char mac[EG_BOOT_MAC], char *why, size_t wl)
{
	unsigned char out[EG_BOOT_HDR + EG_BOOT_HELLO];
	unsigned char *q = out + EG_BOOT_HDR;
	eg_boot_frame_t h = {.op = EG_BOOT_OP_HELLO,
			     .aux = EG_BOOT_VERSION,
			     .rank = b->rank,
			     .len = EG_BOOT_HELLO};

	if (eg_boot_random(n1, EG_BOOT_NONCE) < 0)
		return eg_boot_set_err(b, EG_ESYS, "open: getrandom: %s",
				       strerror(errno));
	eg_boot_encode(out, &h);
	memset(q, 0, EG_BOOT_HELLO);
	eg_boot_put(q, b->size, 4);
	memcpy(q + 4, b->job_id, strnlen(b->job_id, EG_BOOT_JOBLEN - 1));
	memcpy(q + 4 + EG_BOOT_JOBLEN, n1, EG_BOOT_NONCE);
	eg_boot_proof(b->secret, "peer....", b->job_id, b->rank, b->size, n0,
		      n1, q + 4 + EG_BOOT_JOBLEN + EG_BOOT_NONCE);
	eg_boot_proof(b->secret, "root....", b->job_id, b->rank, b->size, n0,
		      n1, mac);
	if (send(fd, out, sizeof(out), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(out)) {
		snprintf(why, wl, "sending the hello: %s", strerror(errno));
		return EG_EPEER;
	}
	return EG_OK;
}

/* Rank 0's answer to the hello: a welcome or a refusal that proves the
 * secret. EG_OK joined; EG_EAUTH a proven refusal (final); EG_EPEER or
 * EG_ETIMEDOUT anything else (retry; heard counts what it was). */
static int eg__answer(eg_boot_t *b, int fd, const unsigned char *n0,
		      const unsigned char *n1, const unsigned char *mac,
		      double deadline, eg__heard_t *heard, char *why, size_t wl)
{
	unsigned char in[EG_BOOT_HDR + EG_BOOT_MAC], want[EG_BOOT_MAC];
	eg_boot_frame_t f;
	char role[8];
	int rc;

	if ((rc = eg__read_full(fd, in, EG_BOOT_HDR, deadline)) < 0) {
		snprintf(why, wl, "%s",
			 rc == EG_ETIMEDOUT ? "no answer from rank 0"
					    : "rank 0 closed the connection "
					      "during the handshake");
		return rc;
	}
	if (eg_boot_decode(in, &f) < 0 || f.len != EG_BOOT_MAC ||
	    (f.op != EG_BOOT_OP_REFUSE && f.op != EG_BOOT_OP_WELCOME) ||
	    eg__read_full(fd, in + EG_BOOT_HDR, EG_BOOT_MAC, deadline) < 0) {
		heard->strangers++;
		snprintf(why, wl, "not an epgate rank 0 at %s", b->addr);
		return EG_EPEER;
	}
	if (f.op == EG_BOOT_OP_WELCOME) {
		if (eg_ct_equal(in + EG_BOOT_HDR, mac, EG_BOOT_MAC))
			return EG_OK;
		heard->welcomes++;
		snprintf(why, wl, "a welcome from %s without this job's secret",
			 b->addr);
		return EG_EPEER;
	}
	eg__boot_refuse_role(f.aux, role);
	eg_boot_proof(b->secret, role, b->job_id, b->rank, b->size, n0, n1,
		      want);
	if (eg_ct_equal(in + EG_BOOT_HDR, want, EG_BOOT_MAC))
		return eg_boot_set_err(b, EG_EAUTH,
				       "open: rank 0 at %s refused rank %u: %s",
				       b->addr, b->rank, eg__boot_why(f.aux));
	heard->refusals++;
	heard->last_code = f.aux;
	snprintf(why, wl, "a refusal from %s without this job's secret",
		 b->addr);
	return EG_EPEER;
}

/* The peer's half of the handshake on a connected socket: the challenge
 * within attempt (rank 0 may be busy), then the answer within the
 * deadline (a rank 0 that read the hello may have admitted this rank:
 * leaving now would strand it). */
static int eg__hello(eg_boot_t *b, int fd, double attempt, double deadline,
		     eg__heard_t *heard, char *why, size_t wl)
{
	unsigned char in[EG_BOOT_HDR + EG_BOOT_NONCE];
	unsigned char n1[EG_BOOT_NONCE], mac[EG_BOOT_MAC];
	eg_boot_frame_t f;
	int rc;

	if ((rc = eg__read_full(fd, in, sizeof(in), attempt)) < 0) {
		snprintf(why, wl, "%s",
			 rc == EG_ETIMEDOUT ? "no challenge from rank 0"
					    : "rank 0 closed the connection "
					      "before its challenge");
		return rc;
	}
	if (eg_boot_decode(in, &f) < 0 || f.op != EG_BOOT_OP_HELLO0 ||
	    f.len != EG_BOOT_NONCE) {
		heard->strangers++;
		snprintf(why, wl, "not an epgate rank 0 at %s", b->addr);
		return EG_EPEER;
	}
	if (f.aux != EG_BOOT_VERSION) {
		snprintf(why, wl,
			 "rank 0 at %s speaks protocol version %u, "
			 "want %u",
			 b->addr, f.aux, EG_BOOT_VERSION);
		return EG_EPEER;
	}
	if ((rc = eg__send_hello(b, fd, in + EG_BOOT_HDR, n1, mac, why, wl)) <
	    0)
		return rc;
	return eg__answer(b, fd, in + EG_BOOT_HDR, n1, mac, deadline, heard,
			  why, wl);
}

/* Resolves rank 0's host. A name the resolver says does not exist fails
 * after EG__RESOLVE_S, saying where the name came from and what to set;
 * other resolver errors (a DNS server not answering) are retried to the
 * deadline like a refused connection. *res stays NULL while it fails. */
static int eg__resolve(eg_boot_t *b, const eg_world_t *w, const char *port,
		       const struct addrinfo *hints, struct addrinfo **res,
		       double *first_fail, char *why, size_t wlen)
{
	int rc = getaddrinfo(w->boot_host, port, hints, res);

	if (!rc)
		return EG_OK;
	*res = NULL;
	snprintf(why, wlen, "%s: %s", w->boot_host, gai_strerror(rc));
	if (rc != EAI_NONAME && rc != EAI_FAIL
#ifdef EAI_NODATA
	    && rc != EAI_NODATA
#endif
	)
		return EG_OK;
	if (*first_fail == 0)
		*first_fail = eg_now();
	if (eg_now() - *first_fail < EG__RESOLVE_S)
		return EG_OK;
	return eg_boot_set_err(
	    b, EG_EINVAL,
	    "open: rank %u cannot find rank 0: host \"%s\" (%s) "
	    "does not resolve (%s) after %.0f s; set "
	    "EPGATE_ROOT_ADDR to rank 0's address (host or "
	    "host:port)",
	    b->rank, w->boot_host,
	    w->boot_src[0] ? w->boot_src : "rendezvous host", gai_strerror(rc),
	    EG__RESOLVE_S);
}

/* The deadline's message: the last reason, and what answered without
 * the secret (never its bytes). */
static int eg__peer_timeout(eg_boot_t *b, double timeout, const char *why,
			    const eg__heard_t *h)
{
	char heard[256] = "";

	if (h->refusals || h->welcomes || h->strangers)
		snprintf(heard, sizeof(heard),
			 "; answers without this job's secret, ignored: %u "
			 "refusal%s%s%s%s, %u welcome%s, %u not epgate",
			 h->refusals, h->refusals == 1 ? "" : "s",
			 h->refusals ? " (the last claiming \"" : "",
			 h->refusals ? eg__boot_why(h->last_code) : "",
			 h->refusals ? "\")" : "", h->welcomes,
			 h->welcomes == 1 ? "" : "s", h->strangers);
	return eg_boot_set_err(b, EG_ETIMEDOUT,
			       "open: deadline %.1f s expired; rank %u still "
			       "waits on rank 0 at %s (%s%s)",
			       timeout, b->rank, b->addr, why, heard);
}

/* One pass over rank 0's addresses. EG_OK joined, EG__RETRY again. */
static int eg__try(eg_boot_t *b, struct addrinfo *res, double attempt_s,
		   double deadline, eg__heard_t *heard, char *why, size_t wl)
{
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int err = 0, fd = eg__connect(ai, deadline, &err), rc;
		double attempt = eg_now() + attempt_s;

		if (fd < 0) {
			snprintf(why, wl, "connecting to %s: %s", b->addr,
				 strerror(err));
			continue;
		}
		rc = eg__hello(b, fd, attempt < deadline ? attempt : deadline,
			       deadline, heard, why, wl);
		if (rc == EG_OK) {
			b->fd[0] = fd;
			return EG_OK;
		}
		close(fd);
		if (rc != EG_EPEER && rc != EG_ETIMEDOUT)
			return rc;
	}
	return EG__RETRY;
}

int eg_boot_open_peer(eg_boot_t *b, const eg_world_t *w, double timeout,
		      double deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV},
			*res = NULL;
	char port[8], why[600] = "no attempt made";
	int backoff = 10, rc;
	double first_fail = 0, attempt_s = EG__ATTEMPT_S;
	eg__heard_t heard = {0};

	snprintf(port, sizeof(port), "%u", w->boot_port);
	for (;;) {
		if (!res &&
		    (rc = eg__resolve(b, w, port, &hints, &res, &first_fail,
				      why, sizeof(why))) < 0)
			return rc;
		if (res) {
			rc = eg__try(b, res, attempt_s, deadline, &heard, why,
				     sizeof(why));
			if (rc != EG__RETRY) {
				freeaddrinfo(res);
				return rc;
			}
		}
		double left = deadline - eg_now();
		if (left <= 0)
			break;
		poll(NULL, 0,
		     (int)(left * 1000 < backoff ? left * 1000 + 1 : backoff));
		backoff = backoff * 2 > 500 ? 500 : backoff * 2;
		attempt_s = attempt_s * 2 > EG__ATTEMPT_MAX ? EG__ATTEMPT_MAX
							    : attempt_s * 2;
	}
	if (res)
		freeaddrinfo(res);
	return eg__peer_timeout(b, timeout, why, &heard);
}
