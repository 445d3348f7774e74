/* The bootstrap: small-blob collectives through a TCP star at rank 0.
 *
 * Every collective is one round trip: each rank sends rank 0 a frame
 * saying what it is calling (op, call number, length, root) with its
 * part of the data, rank 0 checks that all agree, then sends every rank
 * its result. So rank 0 always knows which ranks it still waits on, and
 * a rank that calls something else is reported instead of hanging.
 *
 * Joining: rank 0 sends a random nonce, the peer answers with its rank,
 * the job id, its own nonce and HMAC-SHA256(secret, both nonces, ...),
 * and rank 0 answers with its own HMAC, so neither side ever sends the
 * secret and a peer will not talk to a rank 0 that lacks it. Threat
 * model (docs/world.md): processes that can reach the port on the
 * loopback or cluster network but do not know the per-job secret; the
 * data itself is not encrypted. No threads: non-blocking sockets and
 * poll(), a deadline on every wait. Joining is lib/world/boot_join.c;
 * frames and proofs lib/world/boot_wire.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/world/boot_int.h"

/* ---- progress: many transfers, one poll ---- */

typedef struct {
	int fd;
	uint32_t peer;
	int send;
	unsigned char hdr[EG_BOOT_HDR];
	size_t hdr_done;
	unsigned char *buf; /* payload */
	size_t len, done;
	int fin, broken;
	/* recv: what the frame must say */
	eg_boot_frame_t want;
	char text[EG_BOOT_TEXT + 1]; /* an abort's reason */
} eg__xfer_t;

static const char *eg__call_desc(const eg_boot_frame_t *f, char *out,
				 size_t len)
{
	unsigned long long n = (unsigned long long)f->arg;
	const char *s = n == 1 ? "" : "s";
	if (f->op == EG_BOOT_OP_BCAST)
		snprintf(out, len,
			 "bcast of %llu byte%s from root %u (call %u)", n, s,
			 f->aux, f->seq);
	else
		snprintf(out, len, "%s of %llu byte%s (call %u)",
			 eg_boot_op_name(f->op), n, s, f->seq);
	return out;
}

/* A header arrived: is it the frame this rank expects? */
static int eg__check_hdr(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	eg_boot_frame_t f;
	char mine[128], theirs[128];
	if (eg_boot_decode(x->hdr, &f) < 0)
		return eg_boot_set_err(
		    b, EG_EPEER,
		    "%s: rank %u sent a frame with a bad magic "
		    "number (protocol error)",
		    step, x->peer);
	if (f.op == EG_BOOT_OP_ABORT) {
		if (f.len > EG_BOOT_TEXT)
			return eg_boot_set_err(b, EG_EPEER,
					       "%s: rank %u sent an oversized "
					       "abort",
					       step, x->peer);
		x->buf = (unsigned char *)x->text;
		x->len = (size_t)f.len;
		x->want = f; /* read the reason, then fail */
		return EG_OK;
	}
	if (f.op != x->want.op || f.seq != x->want.seq ||
	    f.arg != x->want.arg ||
	    (f.op == EG_BOOT_OP_BCAST && f.aux != x->want.aux))
		return eg_boot_set_err(
		    b, EG_EPEER,
		    "%s: ranks disagree: rank %u called %s, "
		    "rank %u called %s",
		    step, x->peer, eg__call_desc(&f, theirs, sizeof(theirs)),
		    b->rank, eg__call_desc(&x->want, mine, sizeof(mine)));
	if (f.len != x->want.len || f.rank != x->peer)
		return eg_boot_set_err(
		    b, EG_EPEER,
		    "%s: rank %u sent %llu bytes as rank %u, "
		    "want %llu (protocol error)",
		    step, x->peer, (unsigned long long)f.len, f.rank,
		    (unsigned long long)x->want.len);
	return EG_OK;
}

static int eg__gone(eg_boot_t *b, const char *step, uint32_t peer, int err)
{
	if (err == 0)
		return eg_boot_set_err(b, EG_EPEER,
				       "%s: rank %u closed its connection (it "
				       "exited or was killed)",
				       step, peer);
	return eg_boot_set_err(b, EG_EPEER, "%s: connection to rank %u: %s",
			       step, peer, strerror(err));
}

/* Where the transfer goes on: the rest of the header, then of the
 * payload; NULL when both are done. */
static unsigned char *eg__cursor(eg__xfer_t *x, size_t *want)
{
	if (x->hdr_done < EG_BOOT_HDR) {
		*want = EG_BOOT_HDR - x->hdr_done;
		return x->hdr + x->hdr_done;
	}
	if (x->done < x->len) {
		*want = x->len - x->done;
		return x->buf + x->done;
	}
	return NULL;
}

/* Reads what is there. 1 = progress made or done, 0 = nothing yet. */
static int eg__do_recv(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	unsigned char *p;
	size_t want;
	int rc;

	while ((p = eg__cursor(x, &want))) {
		ssize_t n = recv(x->fd, p, want, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return eg__gone(b, step, x->peer, n < 0 ? errno : 0);
		if (x->hdr_done < EG_BOOT_HDR) {
			x->hdr_done += (size_t)n;
			if (x->hdr_done == EG_BOOT_HDR &&
			    (rc = eg__check_hdr(b, x, step)) < 0)
				return rc;
		} else {
			x->done += (size_t)n;
		}
	}
	x->fin = 1;
	if (x->want.op == EG_BOOT_OP_ABORT) {
		x->text[x->len] = '\0';
		int code = -(int)x->want.aux;
		if (code >= 0 || code < -100)
			code = EG_EPEER;
		if (x->peer == 0)
			return eg_boot_set_err(b, code,
					       "%s: rank 0 stopped the job: %s",
					       step, x->text);
		return eg_boot_set_err(b, code, "%s: rank %u failed: %s", step,
				       x->peer, x->text);
	}
	return 1;
}

static int eg__do_send(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	const unsigned char *p;
	size_t want;

	while ((p = eg__cursor(x, &want))) {
		ssize_t n = send(x->fd, p, want, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return eg__gone(b, step, x->peer,
					errno == EPIPE ? 0 : errno);
		if (x->hdr_done < EG_BOOT_HDR)
			x->hdr_done += (size_t)n;
		else
			x->done += (size_t)n;
	}
	x->fin = 1;
	return 1;
}

/* Drives all transfers to completion or to the deadline. A send that
 * fails while a receive on the same socket is pending lets the receive
 * speak: it may hold the reason (an abort) the send cannot see. */
static int eg__run_io(eg_boot_t *b, eg__xfer_t *x, size_t n, struct pollfd *pfd,
		      size_t *idx, double timeout, double deadline,
		      const char *step)
{
	int rc;

	for (;;) {
		size_t np = 0;
		for (size_t i = 0; i < n; i++) {
			if (x[i].fin)
				continue;
			pfd[np].fd = x[i].fd;
			pfd[np].events = x[i].send ? POLLOUT : POLLIN;
			pfd[np].revents = 0;
			idx[np++] = i;
		}
		if (np == 0)
			return EG_OK;
		int ms = eg_boot_ms_left(deadline);
		rc = ms ? poll(pfd, np, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return eg_boot_set_err(b, EG_ESYS, "%s: poll: %s", step,
					       strerror(errno));
		if (rc == 0 && eg_boot_ms_left(deadline) == 0) {
			char list[256] = "";
			for (size_t j = 0; j < np; j++)
				if (j == 0 ||
				    x[idx[j]].peer != x[idx[j - 1]].peer)
					eg_boot_add_rank(list, sizeof(list),
							 x[idx[j]].peer);
			if (b->rank == 0)
				return eg_boot_set_err(b, EG_ETIMEDOUT,
						       "%s: deadline %.1f s "
						       "expired; rank 0 still "
						       "waits on ranks %s",
						       step, timeout, list);
			return eg_boot_set_err(
			    b, EG_ETIMEDOUT,
			    "%s: deadline %.1f s expired; rank "
			    "%u still waits on rank 0",
			    step, timeout, b->rank);
		}
		/* Receives first: an abort explains a failing send. */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t j = 0; j < np; j++) {
				eg__xfer_t *t = &x[idx[j]];
				if (!pfd[j].revents || t->fin ||
				    t->send != pass)
					continue;
				rc = t->send ? eg__do_send(b, t, step)
					     : eg__do_recv(b, t, step);
				if (rc >= 0)
					continue;
				if (t->send && b->rank != 0) {
					/* let the receive explain */
					t->fin = t->broken = 1;
					continue;
				}
				return rc;
			}
		}
	}
}

static int eg__run(eg_boot_t *b, eg__xfer_t *x, size_t n, double timeout,
		   double deadline, const char *step)
{
	struct pollfd *pfd = malloc((n ? n : 1) * sizeof(*pfd));
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	int rc = EG_ENOMEM;
	if (pfd && idx)
		rc = eg__run_io(b, x, n, pfd, idx, timeout, deadline, step);
	else
		eg_boot_set_err(b, rc, "%s: out of memory", step);
	free(pfd);
	free(idx);
	return rc;
}

/* ---- the API ---- */

static double eg__timeout(const eg_boot_t *b, double t)
{
	return t > 0 ? t : b->timeout_s;
}

static double eg__deadline(const eg_boot_t *b, double t)
{
	return eg_now() + t + (b->rank ? EG_BOOT_GRACE : 0.0);
}

int eg_boot_open(eg_boot_t **bp, const eg_world_t *w, double timeout_s)
{
	eg_boot_t *b;
	int rc;

	if (!bp || !w)
		return EG_EINVAL;
	*bp = NULL;
	if (w->size == 0 || w->rank >= w->size ||
	    (w->size > 1 && strlen(w->secret) == 0))
		return EG_EINVAL;
	if (!(b = calloc(1, sizeof(*b))) ||
	    !(b->fd = malloc(sizeof(int) * w->size))) {
		free(b);
		return EG_ENOMEM;
	}
	for (uint32_t r = 0; r < w->size; r++)
		b->fd[r] = -1;
	b->rank = w->rank;
	b->size = w->size;
	b->timeout_s = w->timeout_s > 0 ? w->timeout_s : 60.0;
	snprintf(b->job_id, sizeof(b->job_id), "%s", w->job_id);
	memcpy(b->secret, w->secret, sizeof(b->secret));
	b->secret[EG_SECRET_MAX - 1] = '\0';
	snprintf(b->addr, sizeof(b->addr),
		 strchr(w->boot_host, ':') ? "[%s]:%u" : "%s:%u", w->boot_host,
		 w->boot_port);
	*bp = b;
	double t = eg__timeout(b, timeout_s);
	if (b->size == 1) {
		if (w->boot_fd >= 0)
			close(w->boot_fd);
		return EG_OK;
	}
	if (b->rank == 0) {
		rc = eg_boot_open_root(b, w, t, eg__deadline(b, t));
		if (rc < 0)
			return eg_boot_fail(b, rc);
		return EG_OK;
	}
	rc = eg_boot_open_peer(b, w, t, eg__deadline(b, t));
	return rc < 0 ? eg_boot_fail(b, rc) : EG_OK;
}

/* One collective: everyone's frame to rank 0, then rank 0's answer to
 * everyone. */
typedef struct {
	uint16_t op, root;
	uint64_t arg;
	const void *mine; /* what this rank sends */
	void *gather;	  /* rank 0: peer r's payload at gather + r * per */
	size_t per;	  /* what each peer sends (0 for some in a bcast) */
	void *result;	  /* what rank 0 sends back, and where others get it */
	size_t result_len;
} eg__coll_t;

static size_t eg__sent_by(const eg__coll_t *c, uint32_t r)
{
	if (c->op == EG_BOOT_OP_BCAST)
		return r == c->root ? c->arg : 0;
	return c->per;
}

static size_t eg__back_to(const eg__coll_t *c, uint32_t r)
{
	if (c->op == EG_BOOT_OP_BCAST && r == c->root)
		return 0; /* the root has it */
	return c->result_len;
}

static int eg__coll(eg_boot_t *b, const eg__coll_t *c, double timeout_s)
{
	const char *step = eg_boot_op_name(c->op);
	double t = eg__timeout(b, timeout_s);
	double deadline = eg__deadline(b, t);
	uint32_t seq = ++b->seq;
	eg__xfer_t *x;
	int rc;

	if (b->failed)
		return eg_boot_set_err(b, b->failed,
				       "%s: not run: the bootstrap failed "
				       "earlier (%.400s)",
				       step, b->first);
	if (!(x = calloc(b->size < 2 ? 2 : b->size, sizeof(*x))))
		return EG_ENOMEM;
	eg_boot_frame_t f = {.op = c->op,
			     .aux = c->root,
			     .seq = seq,
			     .rank = b->rank,
			     .arg = c->arg};
	if (b->rank != 0) {
		f.len = eg__sent_by(c, b->rank);
		x[0] = (eg__xfer_t){.fd = b->fd[0], .peer = 0, .send = 1};
		x[0].buf = (unsigned char *)c->mine;
		x[0].len = (size_t)f.len;
		eg_boot_encode(x[0].hdr, &f);
		x[1] = (eg__xfer_t){.fd = b->fd[0], .peer = 0, .want = f};
		x[1].want.rank = 0;
		x[1].want.len = eg__back_to(c, b->rank);
		x[1].buf = c->result;
		x[1].len = (size_t)x[1].want.len;
		rc = eg__run(b, x, 2, t, deadline, step);
		if (rc == EG_OK && x[0].broken)
			rc = eg__gone(b, step, 0, 0);
		goto out;
	}
	/* rank 0: gather */
	size_t n = 0;
	for (uint32_t r = 1; r < b->size; r++, n++) {
		x[n] = (eg__xfer_t){.fd = b->fd[r], .peer = r, .want = f};
		x[n].want.rank = r;
		x[n].want.len = eg__sent_by(c, r);
		x[n].buf = (unsigned char *)c->gather + r * c->per;
		x[n].len = (size_t)x[n].want.len;
	}
	if ((rc = eg__run(b, x, n, t, deadline, step)) < 0)
		goto out;
	/* ...and answer */
	n = 0;
	for (uint32_t r = 1; r < b->size; r++, n++) {
		x[n] = (eg__xfer_t){.fd = b->fd[r], .peer = r, .send = 1};
		f.rank = 0;
		f.len = eg__back_to(c, r);
		eg_boot_encode(x[n].hdr, &f);
		x[n].buf = c->result;
		x[n].len = (size_t)f.len;
	}
	rc = eg__run(b, x, n, t, deadline, step);
out:
	free(x);
	return rc < 0 ? eg_boot_fail(b, rc) : EG_OK;
}

int eg_boot_allgather(eg_boot_t *b, const void *mine, size_t len, void *all,
		      double timeout_s)
{
	if (!b || (len && (!mine || !all)) || (len && b->size > SIZE_MAX / len))
		return EG_EINVAL;
	if (len)
		memmove((char *)all + (size_t)b->rank * len, mine, len);
	if (b->size == 1)
		return EG_OK;
	eg__coll_t c = {.op = EG_BOOT_OP_ALLGATHER,
			.arg = len,
			.mine = mine,
			.gather = all,
			.per = len,
			.result = all,
			.result_len = len * b->size};
	return eg__coll(b, &c, timeout_s);
}

int eg_boot_bcast(eg_boot_t *b, void *buf, size_t len, unsigned root,
		  double timeout_s)
{
	if (!b || (len && !buf) || root >= b->size || root > UINT16_MAX)
		return EG_EINVAL;
	if (b->size == 1)
		return EG_OK;
	/* Rank 0 collects the root's payload straight into buf (per = 0:
	 * every peer's part lands at buf, and only the root's is not
	 * empty). */
	eg__coll_t c = {.op = EG_BOOT_OP_BCAST,
			.root = (uint16_t)root,
			.arg = len,
			.mine = buf,
			.gather = buf,
			.per = 0,
			.result = buf,
			.result_len = len};
	return eg__coll(b, &c, timeout_s);
}

int eg_boot_barrier(eg_boot_t *b, double timeout_s)
{
	if (!b)
		return EG_EINVAL;
	if (b->size == 1)
		return EG_OK;
	eg__coll_t c = {.op = EG_BOOT_OP_BARRIER};
	return eg__coll(b, &c, timeout_s);
}

const char *eg_boot_error(const eg_boot_t *b)
{
	return b ? b->err : "no bootstrap";
}

void eg_boot_close(eg_boot_t *b)
{
	char junk[4096];
	if (!b)
		return;
	int n = b->rank == 0 ? (int)b->size : 1;
	for (int i = 0; i < n; i++) {
		if (b->fd[i] < 0)
			continue;
		/* Unread bytes would turn our FIN into a reset that could
		 * destroy an abort still on its way to the peer. */
		shutdown(b->fd[i], SHUT_WR);
		while (recv(b->fd[i], junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
		close(b->fd[i]);
	}
	free(b->fd);
	free(b);
}
