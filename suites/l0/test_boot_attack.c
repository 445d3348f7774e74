/* The bootstrap under attack, on loopback, each attack bounded in count
 * and time (docs/world.md, "Threat model"):
 *   - idle strangers that fill rank 0's handshake table and hold it past
 *     the deadline: the job's ranks still join;
 *   - a squatter on the rendezvous port answering with a refusal, a
 *     bogus welcome or junk, then leaving: the ranks ignore it (its
 *     bytes are never printed) and the job joins once rank 0 has the
 *     port;
 *   - a flood of strangers of every kind (wrong secret, another job,
 *     HTTP, a connection closed at once): every one refused, rank 0
 *     leaks no descriptor, its log is rate-limited;
 *   - what a stranger still in handshake is told when rank 0 gives up
 *     (not "every rank has joined").
 * The figures (refusal times, descriptors, log lines) are printed, never
 * asserted against a clock. */
#define _GNU_SOURCE /* prctl */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eg_test.h"
#include "epgate/boot.h"
#include "epgate/world.h"

#define SECRET "00112233445566778899aabbccddeeff"
/* What a squatter says: must never reach a message. */
#define EVIL "EVIL\033]0;owned\007"

#define CHILD_CHECK(cond, code)                                                \
	do {                                                                   \
		if (!(cond))                                                   \
			_exit(code);                                           \
	} while (0)

static int listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_port = htons(*port);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 256), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static eg_world_t mkworld(uint32_t rank, uint32_t size, uint16_t port, int fd)
{
	eg_world_t w = {.rank = rank, .size = size, .ranks_per_node = size};
	snprintf(w.boot_host, sizeof(w.boot_host), "127.0.0.1");
	w.boot_port = port;
	w.boot_fd = rank == 0 ? fd : -1;
	snprintf(w.secret, sizeof(w.secret), SECRET);
	snprintf(w.job_id, sizeof(w.job_id), "attack");
	w.timeout_s = 20;
	return w;
}

static pid_t fork_rank(void)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static int dial(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Reads up to n bytes until EOF or 10 s; returns the count. */
static size_t slurp(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10000) <= 0)
			break;
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

static void put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static void frame(unsigned char h[32], uint16_t op, uint16_t aux, uint32_t rank,
		  uint64_t len)
{
	memset(h, 0, 32);
	memcpy(h, "EPGB", 4);
	put(h + 4, op, 2);
	put(h + 6, aux, 2);
	put(h + 12, rank, 4);
	put(h + 24, len, 8);
}

/* ---- idle strangers hold the table past the deadline ---- */

/* 100 idle connections (more than rank 0's table of 64) are opened
 * before the ranks start and held to the end; three ranks still join
 * (before: "too many connections in handshake", a refusal the ranks took
 * as final). */
START_TEST(test_idle_strangers)
{
	enum { N = 100 };
	uint16_t port = 0;
	int lfd = listener(&port), idle[N];
	for (int i = 0; i < N; i++)
		idle[i] = dial(port);
	double t0 = eg_now();
	pid_t kid[2];
	for (uint32_t r = 1; r < 3; r++) {
		kid[r - 1] = fork_rank();
		if (kid[r - 1] == 0) {
			eg_world_t w = mkworld(r, 3, port, -1);
			eg_boot_t *b;
			CHILD_CHECK(eg_boot_open(&b, &w, 10) == EG_OK, 10);
			CHILD_CHECK(eg_boot_barrier(b, 10) == EG_OK, 11);
			eg_boot_close(b);
			_exit(0);
		}
	}
	eg_world_t w = mkworld(0, 3, port, lfd);
	eg_boot_t *b;
	int rc = eg_boot_open(&b, &w, 10);
	ck_assert_msg(rc == EG_OK, "%s", eg_boot_error(b));
	ck_assert_int_eq(eg_boot_barrier(b, 10), EG_OK);
	eg_boot_close(b);
	ck_assert_int_eq(wait_exit(kid[0]), 0);
	ck_assert_int_eq(wait_exit(kid[1]), 0);
	printf("idle strangers: %d held, 3 ranks joined in %.2f s\n", N,
	       eg_now() - t0);
	for (int i = 0; i < N; i++)
		close(idle[i]);
}
END_TEST

/* ---- a squatter on the port ---- */

/* Answers k connections on lfd the way kind says, then closes the port
 * and exits. Kinds: 0 a refusal whose text is EVIL (the old format),
 * 1 a refusal with a made-up proof, 2 a bogus welcome, 3 junk. */
static void squat(int lfd, int kind, int k)
{
	for (int i = 0; i < k; i++) {
		unsigned char m[32 + 116];
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			_exit(90);
		if (kind == 3) {
			if (write(fd, EVIL EVIL EVIL, 3 * strlen(EVIL)) < 0)
				_exit(91);
			close(fd);
			continue;
		}
		frame(m, 1, 2, 0, 16);
		memset(m + 32, 0, 16);
		if (write(fd, m, 48) != 48 || slurp(fd, m, sizeof(m)) == 0)
			_exit(92);
		if (kind == 0) {
			frame(m, 4, 14, 0, strlen(EVIL));
			memcpy(m + 32, EVIL, strlen(EVIL));
			if (write(fd, m, 32 + strlen(EVIL)) < 0)
				_exit(93);
		} else {
			frame(m, kind == 1 ? 4 : 3, kind == 1 ? 4 : 0, 0, 32);
			memset(m + 32, 0x5a, 32);
			if (write(fd, m, 64) != 64)
				_exit(94);
		}
		close(fd);
	}
	close(lfd);
	_exit(0);
}

/* The squatter holds the rendezvous port and answers the first
 * connections; rank 0 binds the port once it is free. Rank 1 must keep
 * trying (before: it took the answer as final and printed its text) and
 * the job joins. */
START_TEST(test_squatter)
{
	uint16_t port = 0;
	int lfd = listener(&port), err[2];
	pid_t sq = fork_rank();
	if (sq == 0)
		squat(lfd, _i, 3);
	close(lfd);
	ck_assert_int_eq(pipe(err), 0);
	double t0 = eg_now();
	pid_t r1 = fork_rank();
	if (r1 == 0) {
		eg_world_t w = mkworld(1, 2, port, -1);
		eg_boot_t *b;
		int rc = eg_boot_open(&b, &w, 15);
		const char *e = eg_boot_error(b);
		CHILD_CHECK(write(err[1], e, strlen(e)) >= 0, 19);
		CHILD_CHECK(rc == EG_OK, 20);
		CHILD_CHECK(eg_boot_barrier(b, 10) == EG_OK, 21);
		eg_boot_close(b);
		_exit(0);
	}
	close(err[1]);
	/* rank 0 binds the port itself, once the squatter has left */
	ck_assert_int_eq(wait_exit(sq), 0);
	eg_world_t w = mkworld(0, 2, port, -1);
	eg_boot_t *b;
	int rc = eg_boot_open(&b, &w, 15);
	ck_assert_msg(rc == EG_OK, "%s", eg_boot_error(b));
	ck_assert_int_eq(eg_boot_barrier(b, 10), EG_OK);
	eg_boot_close(b);
	int st = wait_exit(r1);
	char said[600] = "";
	ssize_t n = read(err[0], said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	close(err[0]);
	ck_assert_msg(st == 0, "rank 1 exit %d: %s", st, said);
	ck_assert_ptr_null(strstr(said, "EVIL"));
	printf("squatter kind %d: 3 answers ignored, joined in %.2f s\n", _i,
	       eg_now() - t0);
}
END_TEST

/* A squatter that never leaves: rank 1 gives up at its deadline, says
 * what answered (counts and a fixed text, never the bytes). */
START_TEST(test_squatter_stays)
{
	uint16_t port = 0;
	int lfd = listener(&port);
	pid_t sq = fork_rank();
	if (sq == 0)
		squat(lfd, 0, 1000);
	close(lfd);
	eg_world_t w = mkworld(1, 2, port, -1);
	eg_boot_t *b;
	double t0 = eg_now();
	ck_assert_int_eq(eg_boot_open(&b, &w, 1), EG_ETIMEDOUT);
	const char *e = eg_boot_error(b);
	ck_assert_ptr_null(strstr(e, "EVIL"));
	ck_assert_msg(strstr(e, "answers without this job's secret, ignored") &&
			  strstr(e, "not epgate"),
		      "%s", e);
	printf("squatter that stays: rank 1 gave up after %.2f s: %s\n",
	       eg_now() - t0, e);
	eg_boot_close(b);
	kill(sq, SIGKILL);
	wait_exit(sq);
}
END_TEST

/* ---- a flood of strangers ---- */

/* One stranger of kind k (0 wrong secret, 1 another job, 2 HTTP,
 * 3 closed at once); returns 1 when rank 0 answered with a refusal (or,
 * for kind 3, nothing was due). */
static int stranger(uint16_t port, int k)
{
	unsigned char m[32 + 116], in[128];
	int fd = dial(port), ok;

	if (k == 3) {
		close(fd);
		return 1;
	}
	if (k == 2) {
		static const char http[] = "GET / HTTP/1.0\r\n\r\n";
		ok = write(fd, http, sizeof(http) - 1) > 0;
	} else {
		ok = slurp(fd, in, 48) == 48;
		frame(m, 2, 2, 1, 116);
		memset(m + 32, 0, 116);
		put(m + 32, 2, 4);
		memcpy(m + 36, k == 0 ? "attack" : "other", k == 0 ? 6 : 5);
		ok = ok && write(fd, m, sizeof(m)) == (ssize_t)sizeof(m);
	}
	size_t got = slurp(fd, in, sizeof(in));
	close(fd);
	/* (HTTP sees the challenge first, then the refusal) */
	for (size_t o = 0; ok && o + 32 <= got && o <= 48; o += 48)
		if (!memcmp(in + o, "EPGB", 4) && in[o + 5] == 4)
			return 1;
	return 0;
}

/* 2000 strangers, then the real rank 1: all refused, the job joins;
 * rank 0 holds no more descriptors than before, and its log has the
 * first refusals in full and then at most one line a second. */
START_TEST(test_flood)
{
	enum { N = 2000 };
	uint16_t port = 0;
	int lfd = listener(&port), go[2], rep[2];
	char log[] = "/tmp/eg-boot-flood-XXXXXX";
	int lf = mkstemp(log);
	ck_assert_int_ge(lf, 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(rep), 0);
	pid_t r0 = fork_rank();
	if (r0 == 0) {
		int fds0, fds1, lines = 0;
		dup2(lf, 2);
		fds0 = open_fds();
		eg_world_t w = mkworld(0, 2, port, lfd);
		eg_boot_t *b;
		double t0 = eg_now();
		CHILD_CHECK(eg_boot_open(&b, &w, 60) == EG_OK, 40);
		CHILD_CHECK(eg_boot_barrier(b, 10) == EG_OK, 41);
		double dt = eg_now() - t0;
		eg_boot_close(b);
		fds1 = open_fds(); /* the listener was handed over */
		FILE *f = fopen(log, "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f))
			lines++;
		if (f)
			fclose(f);
		dprintf(rep[1], "%d %d %d %.3f\n", fds0, fds1, lines, dt);
		_exit(0);
	}
	close(lfd);
	double t0 = eg_now();
	int refused = 0;
	for (int i = 0; i < N; i++)
		refused += stranger(port, i % 4);
	double per = (eg_now() - t0) / N * 1e3;
	pid_t r1 = fork_rank();
	if (r1 == 0) {
		eg_world_t w = mkworld(1, 2, port, -1);
		eg_boot_t *b;
		CHILD_CHECK(eg_boot_open(&b, &w, 30) == EG_OK, 50);
		CHILD_CHECK(eg_boot_barrier(b, 10) == EG_OK, 51);
		eg_boot_close(b);
		_exit(0);
	}
	ck_assert_int_eq(wait_exit(r1), 0);
	ck_assert_int_eq(wait_exit(r0), 0);
	int fds0 = 0, fds1 = 0, lines = 0;
	double dt = 0;
	char buf[128] = "";
	ck_assert_int_gt(read(rep[0], buf, sizeof(buf) - 1), 0);
	ck_assert_int_eq(sscanf(buf, "%d %d %d %lf", &fds0, &fds1, &lines, &dt),
			 4);
	unlink(log);
	close(lf);
	ck_assert_int_eq(refused, N);
	/* rank 0 had its stdio, the log, the listener and the pipes: the
	 * listener is gone, nothing else may stay */
	ck_assert_int_eq(fds1, fds0 - 1);
	/* 8 in full, then one line a second (and one at the end) */
	ck_assert_int_le(lines, 8 + (int)dt + 2);
	printf("flood: %d strangers refused, %.3f ms each on average, rank 0 "
	       "descriptors %d before and %d after (the listener closed), %d "
	       "log lines in %.1f s\n",
	       N, per, fds0, fds1, lines, dt);
}
END_TEST

/* ---- what a stranger is told when rank 0 gives up ---- */

/* A stranger still in handshake at rank 0's deadline is told that rank
 * 0 stopped waiting, not "every rank has joined" (which was false). */
START_TEST(test_gave_up)
{
	uint16_t port = 0;
	int lfd = listener(&port);
	pid_t r0 = fork_rank();
	if (r0 == 0) {
		eg_world_t w = mkworld(0, 2, port, lfd);
		eg_boot_t *b;
		int fd2 = open("/dev/null", O_WRONLY);
		dup2(fd2, 2);
		CHILD_CHECK(eg_boot_open(&b, &w, 1) == EG_ETIMEDOUT, 60);
		eg_boot_close(b);
		_exit(0);
	}
	close(lfd);
	int fd = dial(port);
	unsigned char in[256];
	size_t got = slurp(fd, in, sizeof(in));
	close(fd);
	ck_assert_int_eq(wait_exit(r0), 0);
	/* the challenge, then a refusal with code 13 ("rank 0 stopped
	 * waiting"), not 12 ("every rank of the job has joined") */
	ck_assert_uint_ge(got, 48 + 32);
	ck_assert_int_eq(memcmp(in + 48, "EPGB", 4), 0);
	ck_assert_uint_eq(in[48 + 5], 4);
	ck_assert_uint_eq(in[48 + 7], 13);
}
END_TEST

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* strangers write to closed sockets */
	Suite *s = suite_create("boot_attack");
	TCase *tc = tcase_create("attack");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_idle_strangers);
	tcase_add_loop_test(tc, test_squatter, 0, 4);
	tcase_add_test(tc, test_squatter_stays);
	tcase_add_test(tc, test_flood);
	tcase_add_test(tc, test_gave_up);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
