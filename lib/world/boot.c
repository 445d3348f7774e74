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
 * poll(), a deadline on every wait. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epgate/boot.h"
#include "epgate/error.h"

#define EG__MAGIC   0x45504742u /* "EPGB" */
#define EG__VERSION 1
#define EG__HDR	    32
#define EG__NONCE   16
#define EG__MAC	    32
#define EG__JOBLEN  64
#define EG__HELLO   (4 + EG__JOBLEN + EG__NONCE + EG__MAC)
#define EG__TEXT    255 /* longest abort/refusal text on the wire */
#define EG__PENDING 64	/* strangers in handshake at once */
/* Ranks other than 0 wait this much longer, so that when a rank stalls,
 * rank 0 (which knows who is missing) reports first and stops the rest. */
#define EG__GRACE 1.0
/* A rendezvous name that the resolver says does not exist is retried
 * this long (a fresh node's DNS may be late), not to the deadline. */
#define EG__RESOLVE_S 5.0

enum {
	EG__OP_HELLO0 = 1, /* rank 0 -> peer: nonce */
	EG__OP_HELLO,	   /* peer -> rank 0: who, proof */
	EG__OP_WELCOME,	   /* rank 0 -> peer: rank 0's proof */
	EG__OP_REFUSE,	   /* rank 0 -> peer: why not */
	EG__OP_ABORT,	   /* either way: the job failed, text follows */
	EG__OP_ALLGATHER,
	EG__OP_BCAST,
	EG__OP_BARRIER,
};

struct eg_boot {
	uint32_t rank, size;
	double timeout_s;
	char job_id[EG__JOBLEN];
	char secret[EG_SECRET_MAX];
	char addr[EG_HOST_MAX + 8]; /* rank 0's host:port, for messages */
	int *fd;		    /* rank 0: fd[r] per peer; else fd[0] */
	uint32_t seq;		    /* collective calls so far */
	int failed;		    /* sticky: the first error */
	char err[512], first[512];
};

/* ---- SHA-256 and HMAC (FIPS 180-4, RFC 2104) ---- */

typedef struct {
	uint32_t h[8];
	uint64_t n;
	unsigned char buf[64];
} eg__sha_t;

static const uint32_t eg__k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t eg__ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void eg__sha_block(eg__sha_t *s, const unsigned char *p)
{
	uint32_t w[64], v[8], t1, t2;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = eg__ror(w[i - 15], 7) ^ eg__ror(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = eg__ror(w[i - 2], 17) ^ eg__ror(w[i - 2], 19) ^
			      (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, s->h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		t1 =
		    v[7] +
		    (eg__ror(v[4], 6) ^ eg__ror(v[4], 11) ^ eg__ror(v[4], 25)) +
		    ((v[4] & v[5]) ^ (~v[4] & v[6])) + eg__k[i] + w[i];
		t2 =
		    (eg__ror(v[0], 2) ^ eg__ror(v[0], 13) ^ eg__ror(v[0], 22)) +
		    ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		s->h[i] += v[i];
}

static void eg__sha_init(eg__sha_t *s)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
				       0xa54ff53a, 0x510e527f, 0x9b05688c,
				       0x1f83d9ab, 0x5be0cd19};
	memcpy(s->h, h0, sizeof(h0));
	s->n = 0;
}

static void eg__sha_add(eg__sha_t *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) {
		size_t have = s->n % 64, take = 64 - have;
		if (take > len)
			take = len;
		memcpy(s->buf + have, p, take);
		s->n += take;
		p += take;
		len -= take;
		if (s->n % 64 == 0)
			eg__sha_block(s, s->buf);
	}
}

static void eg__sha_end(eg__sha_t *s, unsigned char out[32])
{
	uint64_t bits = s->n * 8;
	unsigned char pad = 0x80, len[8];
	eg__sha_add(s, &pad, 1);
	pad = 0;
	while (s->n % 64 != 56)
		eg__sha_add(s, &pad, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	eg__sha_add(s, len, 8);
	for (int i = 0; i < 32; i++)
		out[i] = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

static void eg__hmac(const char *key, const unsigned char *msg, size_t len,
		     unsigned char out[32])
{
	unsigned char k[64] = {0}, pad[64], inner[32];
	size_t kl = strlen(key);
	eg__sha_t s;
	if (kl > 64) {
		eg__sha_init(&s);
		eg__sha_add(&s, key, kl);
		eg__sha_end(&s, k);
	} else {
		memcpy(k, key, kl);
	}
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	eg__sha_init(&s);
	eg__sha_add(&s, pad, 64);
	eg__sha_add(&s, msg, len);
	eg__sha_end(&s, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	eg__sha_init(&s);
	eg__sha_add(&s, pad, 64);
	eg__sha_add(&s, inner, 32);
	eg__sha_end(&s, out);
}

static int eg__ct_equal(const unsigned char *a, const unsigned char *b,
			size_t n)
{
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* The proof one side gives: binds the role, job, rank, size and both
 * nonces, so it cannot be replayed to another connection or role. */
static void eg__proof(const char *secret, const char *role, const char *job_id,
		      uint32_t rank, uint32_t size, const unsigned char *n0,
		      const unsigned char *n1, unsigned char out[EG__MAC])
{
	unsigned char m[8 + EG__JOBLEN + 8 + 2 * EG__NONCE] = {0};
	unsigned char *p = m;
	memcpy(p, role, 8);
	p += 8;
	memcpy(p, job_id, strnlen(job_id, EG__JOBLEN - 1));
	p += EG__JOBLEN;
	for (int i = 0; i < 4; i++) {
		p[i] = (unsigned char)(rank >> (24 - 8 * i));
		p[4 + i] = (unsigned char)(size >> (24 - 8 * i));
	}
	p += 8;
	memcpy(p, n0, EG__NONCE);
	memcpy(p + EG__NONCE, n1, EG__NONCE);
	eg__hmac(secret, m, sizeof(m), out);
}

static int eg__random(void *buf, size_t n)
{
	ssize_t r;
	do
		r = getrandom(buf, n, 0);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n ? EG_OK : EG_ESYS;
}

/* ---- frames ---- */

typedef struct {
	uint16_t op, aux; /* aux: version, root, or -error */
	uint32_t seq, rank;
	uint64_t arg; /* the collective's length as the caller gave it */
	uint64_t len; /* payload bytes that follow */
} eg__frame_t;

static void eg__put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static uint64_t eg__get(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void eg__encode(unsigned char h[EG__HDR], const eg__frame_t *f)
{
	eg__put(h, EG__MAGIC, 4);
	eg__put(h + 4, f->op, 2);
	eg__put(h + 6, f->aux, 2);
	eg__put(h + 8, f->seq, 4);
	eg__put(h + 12, f->rank, 4);
	eg__put(h + 16, f->arg, 8);
	eg__put(h + 24, f->len, 8);
}

static int eg__decode(const unsigned char h[EG__HDR], eg__frame_t *f)
{
	if (eg__get(h, 4) != EG__MAGIC)
		return EG_EPARSE;
	f->op = (uint16_t)eg__get(h + 4, 2);
	f->aux = (uint16_t)eg__get(h + 6, 2);
	f->seq = (uint32_t)eg__get(h + 8, 4);
	f->rank = (uint32_t)eg__get(h + 12, 4);
	f->arg = eg__get(h + 16, 8);
	f->len = eg__get(h + 24, 8);
	return EG_OK;
}

static const char *eg__op_name(unsigned op)
{
	switch (op) {
	case EG__OP_ALLGATHER:
		return "allgather";
	case EG__OP_BCAST:
		return "bcast";
	case EG__OP_BARRIER:
		return "barrier";
	case EG__OP_ABORT:
		return "abort";
	default:
		return "handshake";
	}
}

/* ---- errors ---- */

static int eg__set_err(eg_boot_t *b, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* Appends ", r" to a list of ranks; ends it with "..." when full. */
static void eg__add_rank(char *list, size_t len, uint32_t r)
{
	size_t o = strlen(list);
	if (o + 16 >= len) {
		if (o + 5 < len && (o < 3 || strcmp(list + o - 3, "...")))
			strcat(list, ", ...");
		return;
	}
	snprintf(list + o, len - o, "%s%u", o ? ", " : "", r);
}

static void eg__sock_addr(int fd, int peer, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	int rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &sl)
		      : getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (rc == 0 && ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
	} else if (rc == 0 && ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
	}
	snprintf(out, len, "%s:%u", host, port);
}

static int eg__nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return EG_ESYS;
	return EG_OK;
}

static int eg__ms_left(double deadline)
{
	double left = deadline - eg_now();
	if (left <= 0)
		return 0;
	if (left > 1e6)
		return 1000000000;
	return (int)(left * 1000.0) + 1;
}

/* One best-effort, non-blocking frame with a short text: never waits. */
static void eg__send_text(int fd, uint16_t op, int code, uint32_t seq,
			  uint32_t rank, const char *text)
{
	unsigned char m[EG__HDR + EG__TEXT];
	size_t n = strlen(text);
	if (n > EG__TEXT)
		n = EG__TEXT;
	eg__frame_t f = {.op = op,
			 .aux = (uint16_t)(code < 0 ? -code : code),
			 .seq = seq,
			 .rank = rank,
			 .len = n};
	eg__encode(m, &f);
	memcpy(m + EG__HDR, text, n);
	if (send(fd, m, EG__HDR + n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return; /* the peer is gone or jammed: it will time out */
}

/* The job failed here: tell every connected rank why, so they stop now
 * rather than at their deadline, and remember it (later calls fail the
 * same way). */
static int eg__fail(eg_boot_t *b, int rc)
{
	if (b->failed)
		return rc;
	b->failed = rc;
	memcpy(b->first, b->err, sizeof(b->first));
	int n = b->rank == 0 ? (int)b->size : 1;
	for (int i = 0; i < n; i++) {
		if (b->fd[i] < 0)
			continue;
		eg__send_text(b->fd[i], EG__OP_ABORT, rc, b->seq, b->rank,
			      b->err);
		shutdown(b->fd[i], SHUT_WR);
	}
	return rc;
}

/* ---- progress: many transfers, one poll ---- */

typedef struct {
	int fd;
	uint32_t peer;
	int send;
	unsigned char hdr[EG__HDR];
	size_t hdr_done;
	unsigned char *buf; /* payload */
	size_t len, done;
	int fin, broken;
	/* recv: what the frame must say */
	eg__frame_t want;
	char text[EG__TEXT + 1]; /* an abort's reason */
} eg__xfer_t;

static const char *eg__call_desc(const eg__frame_t *f, char *out, size_t len)
{
	unsigned long long n = (unsigned long long)f->arg;
	const char *s = n == 1 ? "" : "s";
	if (f->op == EG__OP_BCAST)
		snprintf(out, len,
			 "bcast of %llu byte%s from root %u (call %u)", n, s,
			 f->aux, f->seq);
	else
		snprintf(out, len, "%s of %llu byte%s (call %u)",
			 eg__op_name(f->op), n, s, f->seq);
	return out;
}

/* A header arrived: is it the frame this rank expects? */
static int eg__check_hdr(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	eg__frame_t f;
	char mine[128], theirs[128];
	if (eg__decode(x->hdr, &f) < 0)
		return eg__set_err(b, EG_EPEER,
				   "%s: rank %u sent a frame with a bad magic "
				   "number (protocol error)",
				   step, x->peer);
	if (f.op == EG__OP_ABORT) {
		if (f.len > EG__TEXT)
			return eg__set_err(b, EG_EPEER,
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
	    (f.op == EG__OP_BCAST && f.aux != x->want.aux))
		return eg__set_err(
		    b, EG_EPEER,
		    "%s: ranks disagree: rank %u called %s, "
		    "rank %u called %s",
		    step, x->peer, eg__call_desc(&f, theirs, sizeof(theirs)),
		    b->rank, eg__call_desc(&x->want, mine, sizeof(mine)));
	if (f.len != x->want.len || f.rank != x->peer)
		return eg__set_err(b, EG_EPEER,
				   "%s: rank %u sent %llu bytes as rank %u, "
				   "want %llu (protocol error)",
				   step, x->peer, (unsigned long long)f.len,
				   f.rank, (unsigned long long)x->want.len);
	return EG_OK;
}

static int eg__gone(eg_boot_t *b, const char *step, uint32_t peer, int err)
{
	if (err == 0)
		return eg__set_err(b, EG_EPEER,
				   "%s: rank %u closed its connection (it "
				   "exited or was killed)",
				   step, peer);
	return eg__set_err(b, EG_EPEER, "%s: connection to rank %u: %s", step,
			   peer, strerror(err));
}

/* Reads what is there. 1 = progress made or done, 0 = nothing yet. */
static int eg__do_recv(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	int rc;
	for (;;) {
		unsigned char *p;
		size_t want;
		if (x->hdr_done < EG__HDR) {
			p = x->hdr + x->hdr_done;
			want = EG__HDR - x->hdr_done;
		} else if (x->done < x->len) {
			p = x->buf + x->done;
			want = x->len - x->done;
		} else {
			break;
		}
		ssize_t n = recv(x->fd, p, want, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return eg__gone(b, step, x->peer, n < 0 ? errno : 0);
		if (x->hdr_done < EG__HDR) {
			x->hdr_done += (size_t)n;
			if (x->hdr_done == EG__HDR &&
			    (rc = eg__check_hdr(b, x, step)) < 0)
				return rc;
		} else {
			x->done += (size_t)n;
		}
	}
	x->fin = 1;
	if (x->want.op == EG__OP_ABORT) {
		x->text[x->len] = '\0';
		int code = -(int)x->want.aux;
		if (code >= 0 || code < -100)
			code = EG_EPEER;
		if (x->peer == 0)
			return eg__set_err(b, code,
					   "%s: rank 0 stopped the job: %s",
					   step, x->text);
		return eg__set_err(b, code, "%s: rank %u failed: %s", step,
				   x->peer, x->text);
	}
	return 1;
}

static int eg__do_send(eg_boot_t *b, eg__xfer_t *x, const char *step)
{
	for (;;) {
		const unsigned char *p;
		size_t want;
		if (x->hdr_done < EG__HDR) {
			p = x->hdr + x->hdr_done;
			want = EG__HDR - x->hdr_done;
		} else if (x->done < x->len) {
			p = x->buf + x->done;
			want = x->len - x->done;
		} else {
			break;
		}
		ssize_t n = send(x->fd, p, want, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return eg__gone(b, step, x->peer,
					errno == EPIPE ? 0 : errno);
		if (x->hdr_done < EG__HDR)
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
		int ms = eg__ms_left(deadline);
		rc = ms ? poll(pfd, np, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return eg__set_err(b, EG_ESYS, "%s: poll: %s", step,
					   strerror(errno));
		if (rc == 0 && eg__ms_left(deadline) == 0) {
			char list[256] = "";
			for (size_t j = 0; j < np; j++)
				if (j == 0 ||
				    x[idx[j]].peer != x[idx[j - 1]].peer)
					eg__add_rank(list, sizeof(list),
						     x[idx[j]].peer);
			if (b->rank == 0)
				return eg__set_err(b, EG_ETIMEDOUT,
						   "%s: deadline %.1f s "
						   "expired; rank 0 still "
						   "waits on ranks %s",
						   step, timeout, list);
			return eg__set_err(b, EG_ETIMEDOUT,
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
		eg__set_err(b, rc, "%s: out of memory", step);
	free(pfd);
	free(idx);
	return rc;
}

/* ---- joining ---- */

typedef struct {
	int fd;
	char addr[64];
	unsigned char nonce[EG__NONCE];
	unsigned char in[EG__HDR + EG__HELLO];
	size_t have;
} eg__pending_t;

static void eg__refuse(eg__pending_t *p, const char *why)
{
	fprintf(stderr, "epgate boot: refused a peer from %s: %s\n", p->addr,
		why);
	eg__send_text(p->fd, EG__OP_REFUSE, EG_EAUTH, 0, 0, why);
	close(p->fd);
	p->fd = -1;
}

/* A complete hello: who is it, and may it join? Returns the rank, or -1
 * after refusing it. */
static int eg__judge(eg_boot_t *b, eg__pending_t *p)
{
	eg__frame_t f;
	unsigned char mac[EG__MAC], reply[EG__HDR + EG__MAC];
	const unsigned char *q = p->in + EG__HDR;
	char job[EG__JOBLEN + 1], why[160];

	eg__decode(p->in, &f);
	uint32_t size = (uint32_t)eg__get(q, 4);
	memcpy(job, q + 4, EG__JOBLEN);
	job[EG__JOBLEN] = '\0';
	const unsigned char *nonce1 = q + 4 + EG__JOBLEN;
	const unsigned char *proof = nonce1 + EG__NONCE;
	if (f.aux != EG__VERSION) {
		snprintf(why, sizeof(why), "protocol version %u, want %u",
			 f.aux, EG__VERSION);
		goto refuse;
	}
	if (strcmp(job, b->job_id)) {
		snprintf(why, sizeof(why), "job id \"%.64s\" is not this job's",
			 job);
		goto refuse;
	}
	eg__proof(b->secret, "peer....", b->job_id, f.rank, size, p->nonce,
		  nonce1, mac);
	if (!eg__ct_equal(mac, proof, EG__MAC)) {
		snprintf(why, sizeof(why), "wrong secret");
		goto refuse;
	}
	if (size != b->size || f.rank == 0 || f.rank >= b->size) {
		snprintf(why, sizeof(why),
			 "rank %u of %u does not fit a job of %u ranks", f.rank,
			 size, b->size);
		goto refuse;
	}
	if (b->fd[f.rank] >= 0) {
		snprintf(why, sizeof(why), "rank %u has already joined",
			 f.rank);
		goto refuse;
	}
	eg__proof(b->secret, "root....", b->job_id, f.rank, size, p->nonce,
		  nonce1, mac);
	eg__frame_t w = {.op = EG__OP_WELCOME, .rank = 0, .len = EG__MAC};
	eg__encode(reply, &w);
	memcpy(reply + EG__HDR, mac, EG__MAC);
	/* 64 bytes into a fresh socket whose peer reads: cannot block. */
	if (send(p->fd, reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(reply)) {
		snprintf(why, sizeof(why), "rank %u: welcome: %s", f.rank,
			 strerror(errno));
		goto refuse;
	}
	b->fd[f.rank] = p->fd;
	p->fd = -1;
	return (int)f.rank;
refuse:
	eg__refuse(p, why);
	return -1;
}

/* Reads from one pending peer; refuses at the first wrong byte. Returns
 * the rank that joined, -1 while pending or refused, <-1 on EOF. */
static int eg__pending_read(eg_boot_t *b, eg__pending_t *p)
{
	for (;;) {
		size_t want = sizeof(p->in) - p->have;
		if (p->have >= EG__HDR) {
			eg__frame_t f;
			eg__decode(p->in, &f);
			if (f.op != EG__OP_HELLO || f.len != EG__HELLO) {
				eg__refuse(p, "not an epgate hello");
				return -1;
			}
		}
		if (want == 0)
			return eg__judge(b, p);
		ssize_t n = recv(p->fd, p->in + p->have, want, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -1;
		if (n <= 0) {
			eg__refuse(p, "closed during the handshake");
			return -1;
		}
		p->have += (size_t)n;
		if (p->have >= 4 && eg__get(p->in, 4) != EG__MAGIC) {
			eg__refuse(p, "not an epgate bootstrap client (bad "
				      "magic number)");
			return -1;
		}
	}
}

static int eg__listen(eg_boot_t *b, const eg_world_t *w, double deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*res, *ai;
	char port[8];
	int fd = -1, err = 0, one = 1;

	if (w->boot_fd >= 0) {
		if (eg__nonblock(w->boot_fd) < 0)
			return eg__set_err(b, EG_ESYS,
					   "open: EPGATE_BOOT_FD=%d: %s",
					   w->boot_fd, strerror(errno));
		return w->boot_fd;
	}
	snprintf(port, sizeof(port), "%u", w->boot_port);
	/* Under Slurm, rank 0's node name may resolve to an address other
	 * nodes cannot use; listen on all and let the secret decide. */
	int rc = getaddrinfo(w->from_slurm ? NULL : w->boot_host, port, &hints,
			     &res);
	if (rc)
		return eg__set_err(b, EG_ESYS, "open: %s: %s", b->addr,
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
			    listen(fd, 128) == 0 && eg__nonblock(fd) == 0)
				break;
			err = errno;
			close(fd);
			fd = -1;
		}
		/* A previous job's socket may linger: retry a while. */
		if (fd >= 0 || err != EADDRINUSE || eg_now() >= deadline)
			break;
		poll(NULL, 0, 100);
	}
	freeaddrinfo(res);
	if (fd < 0)
		return eg__set_err(b, EG_ESYS, "open: listen on %s: %s",
				   b->addr, strerror(err));
	return fd;
}

static int eg__open_root(eg_boot_t *b, const eg_world_t *w, double timeout,
			 double deadline)
{
	eg__pending_t pend[EG__PENDING];
	struct pollfd pfd[EG__PENDING + 1];
	int lfd, rc = EG_OK;
	uint32_t joined = 0;

	for (int i = 0; i < EG__PENDING; i++)
		pend[i].fd = -1;
	if ((lfd = eg__listen(b, w, deadline)) < 0)
		return lfd;
	while (joined < b->size - 1) {
		int np = 1, ms = eg__ms_left(deadline);
		int map[EG__PENDING + 1];
		pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (int i = 0; i < EG__PENDING; i++) {
			if (pend[i].fd < 0)
				continue;
			pfd[np] =
			    (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
			map[np++] = i;
		}
		rc = ms ? poll(pfd, (nfds_t)np, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			rc = eg__set_err(b, EG_ESYS, "open: poll: %s",
					 strerror(errno));
			break;
		}
		if (rc == 0 && eg__ms_left(deadline) == 0) {
			char list[256] = "";
			for (uint32_t r = 1; r < b->size; r++)
				if (b->fd[r] < 0)
					eg__add_rank(list, sizeof(list), r);
			rc =
			    eg__set_err(b, EG_ETIMEDOUT,
					"open: deadline %.1f s expired; rank 0 "
					"still waits on ranks %s (%u of %u "
					"joined)",
					timeout, list, joined + 1, b->size);
			break;
		}
		rc = EG_OK;
		for (int j = 1; j < np; j++) {
			eg__pending_t *p = &pend[map[j]];
			if (pfd[j].revents && eg__pending_read(b, p) >= 0)
				joined++;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		for (;;) {
			int fd = accept4(lfd, NULL, NULL,
					 SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				break;
			int slot = -1, one = 1;
			for (int i = 0; i < EG__PENDING && slot < 0; i++)
				if (pend[i].fd < 0)
					slot = i;
			eg__pending_t tmp, *p = slot < 0 ? &tmp : &pend[slot];
			p->fd = fd;
			p->have = 0;
			eg__sock_addr(fd, 1, p->addr, sizeof(p->addr));
			if (slot < 0) {
				eg__refuse(p, "too many connections in "
					      "handshake");
				continue;
			}
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			unsigned char m[EG__HDR + EG__NONCE];
			eg__frame_t f = {.op = EG__OP_HELLO0,
					 .aux = EG__VERSION,
					 .len = EG__NONCE};
			if (eg__random(p->nonce, EG__NONCE) < 0) {
				rc = eg__set_err(b, EG_ESYS,
						 "open: getrandom: %s",
						 strerror(errno));
				break;
			}
			eg__encode(m, &f);
			memcpy(m + EG__HDR, p->nonce, EG__NONCE);
			if (send(fd, m, sizeof(m),
				 MSG_NOSIGNAL | MSG_DONTWAIT) !=
			    (ssize_t)sizeof(m))
				eg__refuse(p, "could not send the challenge");
		}
		if (rc < 0)
			break;
	}
	/* Whoever is still in handshake is not part of this job. */
	for (int i = 0; i < EG__PENDING; i++)
		if (pend[i].fd >= 0)
			eg__refuse(&pend[i], "still in handshake when every "
					     "rank had joined");
	close(lfd); /* later strangers get "connection refused" */
	return rc;
}

/* Reads exactly n bytes or fails: EG_EPEER on EOF, EG_ETIMEDOUT. */
static int eg__read_full(int fd, void *buf, size_t n, double deadline)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = eg__ms_left(deadline);
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
		int ms = eg__ms_left(deadline), rc;
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

/* The peer's half of the handshake on a connected socket. When the other
 * end goes away or is not rank 0 it returns EG_EPEER (why says what) and
 * the caller retries; a refusal or a rank 0 without the secret is final
 * (EG_EAUTH). */
static int eg__hello(eg_boot_t *b, int fd, double deadline, char *why,
		     size_t wl)
{
	unsigned char in[EG__HDR + EG__TEXT + 1], out[EG__HDR + EG__HELLO];
	unsigned char nonce0[EG__NONCE], nonce1[EG__NONCE], mac[EG__MAC];
	eg__frame_t f;
	int rc;

	if ((rc = eg__read_full(fd, in, EG__HDR + EG__NONCE, deadline)) < 0) {
		snprintf(why, wl, "%s",
			 rc == EG_ETIMEDOUT ? "no challenge from rank 0"
					    : "rank 0 closed the connection "
					      "before its challenge");
		return rc;
	}
	if (eg__decode(in, &f) < 0 || f.op != EG__OP_HELLO0 ||
	    f.len != EG__NONCE) {
		snprintf(why, wl, "not an epgate rank 0 at %s", b->addr);
		return EG_EPEER;
	}
	if (eg__random(nonce1, EG__NONCE) < 0)
		return eg__set_err(b, EG_ESYS, "open: getrandom: %s",
				   strerror(errno));
	memcpy(nonce0, in + EG__HDR, EG__NONCE);
	eg__frame_t h = {.op = EG__OP_HELLO,
			 .aux = EG__VERSION,
			 .rank = b->rank,
			 .len = EG__HELLO};
	unsigned char *q = out + EG__HDR;
	eg__encode(out, &h);
	memset(q, 0, EG__HELLO);
	eg__put(q, b->size, 4);
	memcpy(q + 4, b->job_id, strnlen(b->job_id, EG__JOBLEN - 1));
	memcpy(q + 4 + EG__JOBLEN, nonce1, EG__NONCE);
	eg__proof(b->secret, "peer....", b->job_id, b->rank, b->size, nonce0,
		  nonce1, q + 4 + EG__JOBLEN + EG__NONCE);
	/* what rank 0 must answer */
	eg__proof(b->secret, "root....", b->job_id, b->rank, b->size, nonce0,
		  nonce1, mac);
	if (send(fd, out, sizeof(out), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(out)) {
		snprintf(why, wl, "sending the hello: %s", strerror(errno));
		return EG_EPEER;
	}
	if ((rc = eg__read_full(fd, in, EG__HDR, deadline)) < 0) {
		snprintf(why, wl, "%s",
			 rc == EG_ETIMEDOUT ? "no answer from rank 0"
					    : "rank 0 closed the connection "
					      "during the handshake");
		return rc;
	}
	if (eg__decode(in, &f) < 0 ||
	    (f.op != EG__OP_REFUSE && f.op != EG__OP_WELCOME) ||
	    f.len > EG__TEXT) {
		snprintf(why, wl, "not an epgate rank 0 at %s", b->addr);
		return EG_EPEER;
	}
	if ((rc = eg__read_full(fd, in + EG__HDR, (size_t)f.len, deadline)) <
	    0) {
		snprintf(why, wl, "rank 0 went away during the handshake");
		return rc;
	}
	if (f.op == EG__OP_REFUSE) {
		in[EG__HDR + f.len] = '\0';
		return eg__set_err(b, EG_EAUTH,
				   "open: rank 0 at %s refused rank %u: %s",
				   b->addr, b->rank, (char *)in + EG__HDR);
	}
	if (f.len != EG__MAC || !eg__ct_equal(in + EG__HDR, mac, EG__MAC))
		return eg__set_err(b, EG_EAUTH,
				   "open: the rank 0 at %s does not know this "
				   "job's secret",
				   b->addr);
	return EG_OK;
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
	return eg__set_err(b, EG_EINVAL,
			   "open: rank %u cannot find rank 0: host \"%s\" (%s) "
			   "does not resolve (%s) after %.0f s; set "
			   "EPGATE_ROOT_ADDR to rank 0's address (host or "
			   "host:port)",
			   b->rank, w->boot_host,
			   w->boot_src[0] ? w->boot_src : "rendezvous host",
			   gai_strerror(rc), EG__RESOLVE_S);
}

static int eg__open_peer(eg_boot_t *b, const eg_world_t *w, double timeout,
			 double deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV},
			*res = NULL;
	char port[8], why[600] = "no attempt made";
	int backoff = 10, rc;
	double first_fail = 0;

	snprintf(port, sizeof(port), "%u", w->boot_port);
	for (;;) {
		if (!res &&
		    (rc = eg__resolve(b, w, port, &hints, &res, &first_fail,
				      why, sizeof(why))) < 0)
			return rc;
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int err = 0, fd = eg__connect(ai, deadline, &err);
			if (fd < 0) {
				snprintf(why, sizeof(why),
					 "connecting to %s: %s", b->addr,
					 strerror(err));
				continue;
			}
			rc = eg__hello(b, fd, deadline, why, sizeof(why));
			if (rc == EG_OK) {
				b->fd[0] = fd;
				freeaddrinfo(res);
				return EG_OK;
			}
			close(fd);
			if (rc != EG_EPEER && rc != EG_ETIMEDOUT) {
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
	}
	if (res)
		freeaddrinfo(res);
	return eg__set_err(b, EG_ETIMEDOUT,
			   "open: deadline %.1f s expired; rank %u still waits "
			   "on rank 0 at %s (%s)",
			   timeout, b->rank, b->addr, why);
}

/* ---- the API ---- */

static double eg__timeout(const eg_boot_t *b, double t)
{
	return t > 0 ? t : b->timeout_s;
}

static double eg__deadline(const eg_boot_t *b, double t)
{
	return eg_now() + t + (b->rank ? EG__GRACE : 0.0);
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
		rc = eg__open_root(b, w, t, eg__deadline(b, t));
		if (rc < 0)
			return eg__fail(b, rc);
		return EG_OK;
	}
	rc = eg__open_peer(b, w, t, eg__deadline(b, t));
	return rc < 0 ? eg__fail(b, rc) : EG_OK;
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
	if (c->op == EG__OP_BCAST)
		return r == c->root ? c->arg : 0;
	return c->per;
}

static size_t eg__back_to(const eg__coll_t *c, uint32_t r)
{
	if (c->op == EG__OP_BCAST && r == c->root)
		return 0; /* the root has it */
	return c->result_len;
}

static int eg__coll(eg_boot_t *b, const eg__coll_t *c, double timeout_s)
{
	const char *step = eg__op_name(c->op);
	double t = eg__timeout(b, timeout_s);
	double deadline = eg__deadline(b, t);
	uint32_t seq = ++b->seq;
	eg__xfer_t *x;
	int rc;

	if (b->failed)
		return eg__set_err(b, b->failed,
				   "%s: not run: the bootstrap failed "
				   "earlier (%.400s)",
				   step, b->first);
	if (!(x = calloc(b->size < 2 ? 2 : b->size, sizeof(*x))))
		return EG_ENOMEM;
	eg__frame_t f = {.op = c->op,
			 .aux = c->root,
			 .seq = seq,
			 .rank = b->rank,
			 .arg = c->arg};
	if (b->rank != 0) {
		f.len = eg__sent_by(c, b->rank);
		x[0] = (eg__xfer_t){.fd = b->fd[0], .peer = 0, .send = 1};
		x[0].buf = (unsigned char *)c->mine;
		x[0].len = (size_t)f.len;
		eg__encode(x[0].hdr, &f);
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
		eg__encode(x[n].hdr, &f);
		x[n].buf = c->result;
		x[n].len = (size_t)f.len;
	}
	rc = eg__run(b, x, n, t, deadline, step);
out:
	free(x);
	return rc < 0 ? eg__fail(b, rc) : EG_OK;
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
	eg__coll_t c = {.op = EG__OP_ALLGATHER,
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
	eg__coll_t c = {.op = EG__OP_BCAST,
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
	eg__coll_t c = {.op = EG__OP_BARRIER};
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
