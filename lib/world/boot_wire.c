/* The bootstrap's wire: frames, proofs, errors (lib/world/boot_int.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/world/boot_int.h"
#include "lib/world/hmac.h"

/* The proof one side gives: binds the role, job, rank, size and both
 * nonces, so it cannot be replayed to another connection or role. */
void eg_boot_proof(const char *secret, const char *role, const char *job_id,
		   uint32_t rank, uint32_t size, const unsigned char *n0,
		   const unsigned char *n1, unsigned char out[EG_BOOT_MAC])
{
	unsigned char m[8 + EG_BOOT_JOBLEN + 8 + 2 * EG_BOOT_NONCE] = {0};
	unsigned char *p = m;
	memcpy(p, role, 8);
	p += 8;
	memcpy(p, job_id, strnlen(job_id, EG_BOOT_JOBLEN - 1));
	p += EG_BOOT_JOBLEN;
	for (int i = 0; i < 4; i++) {
		p[i] = (unsigned char)(rank >> (24 - 8 * i));
		p[4 + i] = (unsigned char)(size >> (24 - 8 * i));
	}
	p += 8;
	memcpy(p, n0, EG_BOOT_NONCE);
	memcpy(p + EG_BOOT_NONCE, n1, EG_BOOT_NONCE);
	eg_hmac_sha256(secret, m, sizeof(m), out);
}

int eg_boot_random(void *buf, size_t n)
{
	ssize_t r;
	do
		r = getrandom(buf, n, 0);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n ? EG_OK : EG_ESYS;
}

/* ---- frames ---- */

void eg_boot_put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

uint64_t eg_boot_get(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

void eg_boot_encode(unsigned char h[EG_BOOT_HDR], const eg_boot_frame_t *f)
{
	eg_boot_put(h, EG_BOOT_MAGIC, 4);
	eg_boot_put(h + 4, f->op, 2);
	eg_boot_put(h + 6, f->aux, 2);
	eg_boot_put(h + 8, f->seq, 4);
	eg_boot_put(h + 12, f->rank, 4);
	eg_boot_put(h + 16, f->arg, 8);
	eg_boot_put(h + 24, f->len, 8);
}

int eg_boot_decode(const unsigned char h[EG_BOOT_HDR], eg_boot_frame_t *f)
{
	if (eg_boot_get(h, 4) != EG_BOOT_MAGIC)
		return EG_EPARSE;
	f->op = (uint16_t)eg_boot_get(h + 4, 2);
	f->aux = (uint16_t)eg_boot_get(h + 6, 2);
	f->seq = (uint32_t)eg_boot_get(h + 8, 4);
	f->rank = (uint32_t)eg_boot_get(h + 12, 4);
	f->arg = eg_boot_get(h + 16, 8);
	f->len = eg_boot_get(h + 24, 8);
	return EG_OK;
}

const char *eg_boot_op_name(unsigned op)
{
	/* the rest (hello, welcome, refuse, unknown) is the handshake */
	static const char *const n[] = {
	    [EG_BOOT_OP_ABORT] = "abort",
	    [EG_BOOT_OP_ALLGATHER] = "allgather",
	    [EG_BOOT_OP_BCAST] = "bcast",
	    [EG_BOOT_OP_BARRIER] = "barrier",
	};

	return op < sizeof(n) / sizeof(n[0]) && n[op] ? n[op] : "handshake";
}

/* ---- errors ---- */

int eg_boot_set_err(eg_boot_t *b, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* Appends ", r" to a list of ranks; ends it with "..." when full. */
void eg_boot_add_rank(char *list, size_t len, uint32_t r)
{
	size_t o = strlen(list);
	if (o + 16 >= len) {
		if (o + 5 < len && (o < 3 || strcmp(list + o - 3, "...")))
			strcat(list, ", ...");
		return;
	}
	snprintf(list + o, len - o, "%s%u", o ? ", " : "", r);
}

void eg_boot_sock_addr(int fd, int peer, char *out, size_t len)
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

int eg_boot_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return EG_ESYS;
	return EG_OK;
}

int eg_boot_ms_left(double deadline)
{
	double left = deadline - eg_now();
	if (left <= 0)
		return 0;
	if (left > 1e6)
		return 1000000000;
	return (int)(left * 1000.0) + 1;
}

void eg_boot_send_frame(int fd, uint16_t op, int code, uint32_t seq,
			uint32_t rank, const void *payload, size_t n)
{
	unsigned char m[EG_BOOT_HDR + EG_BOOT_TEXT];

	if (n > EG_BOOT_TEXT)
		n = EG_BOOT_TEXT;
	eg_boot_frame_t f = {.op = op,
			     .aux = (uint16_t)(code < 0 ? -code : code),
			     .seq = seq,
			     .rank = rank,
			     .len = n};
	eg_boot_encode(m, &f);
	if (n)
		memcpy(m + EG_BOOT_HDR, payload, n);
	if (send(fd, m, EG_BOOT_HDR + n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return; /* the peer is gone or jammed: it will time out */
}

void eg_boot_send_text(int fd, uint16_t op, int code, uint32_t seq,
		       uint32_t rank, const char *text)
{
	eg_boot_send_frame(fd, op, code, seq, rank, text, strlen(text));
}

/* The job failed here: tell every connected rank why, so they stop now
 * rather than at their deadline, and remember it (later calls fail the
 * same way). */
int eg_boot_fail(eg_boot_t *b, int rc)
{
	if (b->failed)
		return rc;
	b->failed = rc;
	memcpy(b->first, b->err, sizeof(b->first));
	int n = b->rank == 0 ? (int)b->size : 1;
	for (int i = 0; i < n; i++) {
		if (b->fd[i] < 0)
			continue;
		eg_boot_send_text(b->fd[i], EG_BOOT_OP_ABORT, rc, b->seq,
				  b->rank, b->err);
		shutdown(b->fd[i], SHUT_WR);
	}
	return rc;
}
