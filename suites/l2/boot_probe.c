/* boot_probe: the bootstrap under a launcher. 100 rounds of allgather
 * (every rank's blob checked), bcast from a non-zero root and barrier,
 * with blobs of 0 bytes, 1 byte and 64 KiB; then one line with the
 * world. Exit: 0 pass, 1 wrong data, 99 a bootstrap error.
 *
 * EPGATE_FAULT plants a fault (docs/world.md):
 *   stall:R     rank R sleeps an hour before its first allgather
 *   kill:R      rank R kills itself (SIGKILL) after round 10
 *   corrupt:R   rank R flips a bit of its round-5 allgather blob
 *   mismatch:R  rank R gives round 4's allgather one byte more
 *   stranger    rank 1 first plays strangers against the rendezvous
 *               (wrong secret, wrong job, garbage bytes, an idle
 *               connection), each of which must be refused, then joins
 *               one second late */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epgate/boot.h"
#include "epgate/error.h"
#include "epgate/signals.h"
#include "epgate/world.h"

#define ROUNDS 100

static unsigned char pattern(uint32_t r, unsigned round, size_t i)
{
	return (unsigned char)(r * 131u + round * 17u + i * 7u + (i >> 8));
}

static int connect_raw(const eg_world_t *w)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	char port[8];
	int fd = -1;
	snprintf(port, sizeof(port), "%u", w->boot_port);
	if (getaddrinfo(w->boot_host, port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* A client that joins with a wrong world must be refused: rank 0's
 * refusals prove nothing to it (no shared secret), so it retries to its
 * deadline and says it was refused. */
static int stranger_open(const eg_world_t *real, const char *what,
			 void (*spoil)(eg_world_t *))
{
	eg_world_t w = *real;
	eg_boot_t *b = NULL;
	spoil(&w);
	int rc = eg_boot_open(&b, &w, 1.0);
	int refused = rc == EG_ETIMEDOUT &&
		      strstr(eg_boot_error(b), "ignored: 0 refusals") == NULL &&
		      strstr(eg_boot_error(b), " refusal");
	printf("boot_probe: stranger with %s: %s (%s)\n", what,
	       refused ? "refused" : "NOT refused", eg_boot_error(b));
	eg_boot_close(b);
	return refused ? 0 : -1;
}

static void spoil_secret(eg_world_t *w)
{
	w->secret[0] = w->secret[0] == '0' ? '1' : '0';
}

static void spoil_job(eg_world_t *w)
{
	snprintf(w->job_id, sizeof(w->job_id), "another-job");
}

/* Strangers first; returns an idle connection to hold while the job
 * runs (rank 0 must not wait for it), or -2 on a failed check. */
static int play_strangers(const eg_world_t *w)
{
	char junk[256];
	int fails = 0;
	fails += stranger_open(w, "a wrong secret", spoil_secret) < 0;
	fails += stranger_open(w, "another job's id", spoil_job) < 0;
	/* Not our protocol at all: rank 0 must hang up on it. */
	int fd = connect_raw(w);
	if (fd >= 0) {
		static const char get[] = "GET / HTTP/1.0\r\n\r\n";
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n = 1;
		if (send(fd, get, sizeof(get) - 1, MSG_NOSIGNAL) < 0)
			n = 0;
		while (n > 0 && poll(&p, 1, 3000) == 1)
			n = recv(fd, junk, sizeof(junk), 0);
		printf("boot_probe: stranger speaking HTTP: %s\n",
		       n <= 0 ? "hung up on" : "NOT hung up on");
		fails += n > 0;
		close(fd);
	} else {
		fails++;
	}
	if (fails)
		return -2;
	return connect_raw(w); /* says nothing, holds on */
}

static int check_blob(const unsigned char *p, size_t len, uint32_t r,
		      unsigned round, uint32_t me, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(r, round, i)) {
			printf("boot_probe: rank %u: %s round %u: byte %zu of "
			       "rank %u's blob is 0x%02x, want 0x%02x\n",
			       me, what, round, i, r, p[i],
			       pattern(r, round, i));
			return -1;
		}
	return 0;
}

static int parse_fault(const char *f, const char *name, long *rank)
{
	size_t n = strlen(name);
	char *end;
	if (strncmp(f, name, n) || f[n] != ':')
		return 0;
	*rank = strtol(f + n + 1, &end, 10);
	return *end == '\0' && *rank >= 0;
}

int main(void)
{
	eg_signals_own();
	static const size_t sizes[] = {0, 1, 65536};
	const char *fault = getenv("EPGATE_FAULT");
	long stall = -1, killr = -1, corrupt = -1, mismatch = -1;
	int stranger = 0, idle = -1, rc, ret = 1;
	unsigned char *mine = NULL, *all = NULL, *buf = NULL;
	eg_boot_t *b = NULL;
	char err[256];
	eg_world_t w;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = eg_world_from_env(&w, err, sizeof(err))) < 0) {
		fprintf(stderr, "boot_probe: %s\n", err);
		return 99;
	}
	if (fault && !parse_fault(fault, "stall", &stall) &&
	    !parse_fault(fault, "kill", &killr) &&
	    !parse_fault(fault, "corrupt", &corrupt) &&
	    !parse_fault(fault, "mismatch", &mismatch) &&
	    !(stranger = !strcmp(fault, "stranger"))) {
		fprintf(stderr, "boot_probe: EPGATE_FAULT=\"%s\": unknown\n",
			fault);
		return 99;
	}
	if (stranger && w.rank == 1) {
		if ((idle = play_strangers(&w)) == -2)
			return 1;
		sleep(1);
	}
	if ((rc = eg_boot_open(&b, &w, 0)) < 0) {
		fprintf(stderr, "boot_probe: rank %u: %s (%s)\n", w.rank,
			eg_boot_error(b), eg_err_name(rc));
		eg_boot_close(b);
		return 99;
	}
	if (!(mine = malloc(65536 + 1)) || !(buf = malloc(65536)) ||
	    !(all = malloc((size_t)w.size * (65536 + 1)))) {
		fprintf(stderr, "boot_probe: out of memory\n");
		ret = 99;
		goto out;
	}
	for (unsigned round = 0; round < ROUNDS; round++) {
		size_t len = sizes[round % 3], mylen = len;
		uint32_t root = w.size > 1 ? 1 + round % (w.size - 1) : 0;

		if (stall == (long)w.rank && round == 0)
			sleep(3600);
		for (size_t i = 0; i < len; i++)
			mine[i] = pattern(w.rank, round, i);
		if (corrupt == (long)w.rank && round == 5)
			mine[0] ^= 1;
		if (mismatch == (long)w.rank && round == 4)
			mine[mylen++] = 0;
		rc = eg_boot_allgather(b, mine, mylen, all, 0);
		if (rc < 0)
			goto boot_err;
		for (uint32_t r = 0; r < w.size; r++)
			if (check_blob(all + r * len, len, r, round, w.rank,
				       "allgather") < 0)
				goto out;
		for (size_t i = 0; i < len; i++)
			buf[i] =
			    w.rank == root ? pattern(root, round + 1000, i) : 0;
		if ((rc = eg_boot_bcast(b, buf, len, root, 0)) < 0)
			goto boot_err;
		if (check_blob(buf, len, root, round + 1000, w.rank, "bcast") <
		    0)
			goto out;
		if ((rc = eg_boot_barrier(b, 0)) < 0)
			goto boot_err;
		if (killr == (long)w.rank && round == 9)
			raise(SIGKILL);
	}
	printf("boot_probe: rank %u of %u, node %u of %u, local rank %u of "
	       "%u: %d rounds of allgather, bcast and barrier passed\n",
	       w.rank, w.size, w.node, w.nodes, w.local_rank, w.local_size,
	       ROUNDS);
	ret = 0;
	goto out;
boot_err:
	fprintf(stderr, "boot_probe: rank %u: %s (%s)\n", w.rank,
		eg_boot_error(b), eg_err_name(rc));
	ret = 99;
out:
	eg_boot_close(b);
	if (idle >= 0)
		close(idle);
	free(mine);
	free(buf);
	free(all);
	return ret;
}
