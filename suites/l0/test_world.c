/* The world from the environment (launcher, Slurm, virtual nodes, every
 * bad variable named), Slurm hostlists, and the bootstrap between forked
 * processes: refusals, disagreement, a dead and a stalled peer. */
#define _GNU_SOURCE /* setenv, prctl */
#include <arpa/inet.h>
#include <netinet/in.h>
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
#include "epgate/job.h"
#include "epgate/world.h"
#include "lib/base/data_path.h"

#define SECRET "00112233445566778899aabbccddeeff"

static const char *const vars[] = {
    "EPGATE_RANK",	   "EPGATE_SIZE",    "EPGATE_RANKS_PER_NODE",
    "EPGATE_BOOT_ADDR",	   "EPGATE_BOOT_FD", "EPGATE_SECRET",
    "EPGATE_JOB_ID",	   "EPGATE_TIMEOUT", "EPGATE_BOOT_PORT",
    "SLURM_PROCID",	   "SLURM_NTASKS",   "SLURM_LOCALID",
    "SLURM_NODEID",	   "SLURM_NNODES",   "SLURM_JOB_NODELIST",
    "SLURM_STEP_NODELIST", "SLURM_JOB_ID",   "EPGATE_ROOT_ADDR",
    "EPGATE_BOOT_LISTEN",  "SLURM_STEP_ID",
};

/* Clears every variable the world reads, then sets "K=V" pairs. */
static void env(const char *const *kv)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	for (; kv && *kv; kv++) {
		char k[64];
		const char *eq = strchr(*kv, '=');
		ck_assert_ptr_nonnull(eq);
		snprintf(k, sizeof(k), "%.*s", (int)(eq - *kv), *kv);
		ck_assert_int_eq(setenv(k, eq + 1, 1), 0);
	}
}

static void world_ok(eg_world_t *w)
{
	char err[256];
	int rc = eg_world_from_env(w, err, sizeof(err));
	ck_assert_msg(rc == EG_OK, "rc %d: %s", rc, err);
}

START_TEST(test_world_of_one)
{
	eg_world_t w;
	env(NULL);
	world_ok(&w);
	ck_assert_uint_eq(w.rank, 0);
	ck_assert_uint_eq(w.size, 1);
	ck_assert_uint_eq(w.ranks_per_node, 1);
	ck_assert_uint_eq(w.node, 0);
	ck_assert_uint_eq(w.nodes, 1);
	ck_assert_uint_eq(w.local_rank, 0);
	ck_assert_uint_eq(w.local_size, 1);
	ck_assert_int_eq(w.boot_fd, -1);
	ck_assert_int_eq(w.from_slurm, 0);
	ck_assert(w.timeout_s == 60.0);
	ck_assert_str_eq(w.job_id, "local");
}
END_TEST

START_TEST(test_launcher)
{
	static const char *const kv[] = {
	    "EPGATE_RANK=3",
	    "EPGATE_SIZE=4",
	    "EPGATE_RANKS_PER_NODE=2",
	    "EPGATE_BOOT_ADDR=127.0.0.1:4567",
	    "EPGATE_SECRET=" SECRET,
	    "EPGATE_JOB_ID=launch-42",
	    "EPGATE_TIMEOUT=2.5",
	    "EPGATE_BOOT_FD=0", /* rank 3: ignored */
	    "SLURM_PROCID=7",	/* the launcher wins */
	    NULL,
	};
	eg_world_t w;
	env(kv);
	world_ok(&w);
	ck_assert_uint_eq(w.rank, 3);
	ck_assert_uint_eq(w.size, 4);
	ck_assert_uint_eq(w.ranks_per_node, 2);
	ck_assert_uint_eq(w.node, 1);
	ck_assert_uint_eq(w.nodes, 2);
	ck_assert_uint_eq(w.local_rank, 1);
	ck_assert_uint_eq(w.local_size, 2);
	ck_assert_uint_eq(eg_world_node_of(&w, 1), 0);
	ck_assert_str_eq(w.boot_host, "127.0.0.1");
	ck_assert_uint_eq(w.boot_port, 4567);
	ck_assert_int_eq(w.boot_fd, -1);
	ck_assert_str_eq(w.secret, SECRET);
	ck_assert_str_eq(w.job_id, "launch-42");
	ck_assert(w.timeout_s == 2.5);
	ck_assert_int_eq(w.from_slurm, 0);
}
END_TEST

/* 5 ranks in virtual nodes of 2: the last node holds one rank. */
START_TEST(test_uneven_nodes)
{
	static const char *const kv[] = {
	    "EPGATE_RANK=4",	       "EPGATE_SIZE=5",
	    "EPGATE_RANKS_PER_NODE=2", "EPGATE_BOOT_ADDR=[::1]:5000",
	    "EPGATE_SECRET=" SECRET,   NULL,
	};
	eg_world_t w;
	env(kv);
	world_ok(&w);
	ck_assert_uint_eq(w.node, 2);
	ck_assert_uint_eq(w.nodes, 3);
	ck_assert_uint_eq(w.local_rank, 0);
	ck_assert_uint_eq(w.local_size, 1);
	ck_assert_str_eq(w.boot_host, "::1");
	ck_assert_uint_eq(w.boot_port, 5000);
	ck_assert_str_eq(w.job_id, "local");
	setenv("EPGATE_RANK", "3", 1);
	world_ok(&w);
	ck_assert_uint_eq(w.node, 1);
	ck_assert_uint_eq(w.local_rank, 1);
	ck_assert_uint_eq(w.local_size, 2);
	unsetenv("EPGATE_RANKS_PER_NODE"); /* default: one node */
	world_ok(&w);
	ck_assert_uint_eq(w.ranks_per_node, 5);
	ck_assert_uint_eq(w.nodes, 1);
	ck_assert_uint_eq(w.local_size, 5);
}
END_TEST

/* Rank 0 with an inherited socket needs no address. */
START_TEST(test_boot_fd)
{
	static const char *const kv[] = {
	    "EPGATE_RANK=0",
	    "EPGATE_SIZE=2",
	    "EPGATE_SECRET=" SECRET,
	    NULL,
	};
	int p[2];
	char fd[16];
	eg_world_t w;
	ck_assert_int_eq(pipe(p), 0);
	snprintf(fd, sizeof(fd), "%d", p[0]);
	env(kv);
	setenv("EPGATE_BOOT_FD", fd, 1);
	world_ok(&w);
	ck_assert_int_eq(w.boot_fd, p[0]);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_slurm)
{
	static const char *const kv[] = {
	    "SLURM_PROCID=5",
	    "SLURM_NTASKS=8",
	    "SLURM_NNODES=2",
	    "SLURM_NODEID=1",
	    "SLURM_LOCALID=1",
	    "SLURM_JOB_NODELIST=gpu[07-08]",
	    "SLURM_JOB_ID=123456",
	    "EPGATE_SECRET=" SECRET,
	    NULL,
	};
	eg_world_t w;
	env(kv);
	world_ok(&w);
	ck_assert_int_eq(w.from_slurm, 1);
	ck_assert_uint_eq(w.rank, 5);
	ck_assert_uint_eq(w.size, 8);
	ck_assert_uint_eq(w.ranks_per_node, 4);
	ck_assert_uint_eq(w.node, 1);
	ck_assert_uint_eq(w.nodes, 2);
	ck_assert_uint_eq(w.local_rank, 1);
	ck_assert_uint_eq(w.local_size, 4);
	ck_assert_str_eq(w.boot_host, "gpu07");
	ck_assert_str_eq(w.job_id, "123456");
	ck_assert_int_eq(w.boot_fd, -1);
	ck_assert_str_eq(w.boot_listen, ""); /* every interface */
	/* the default port comes from the secret, the job and the step: a
	 * stranger who knows the job id cannot guess it */
	uint16_t port = w.boot_port;
	ck_assert_uint_ge(port, 20000);
	ck_assert_uint_lt(port, 32000); /* below the ephemeral ports */
	world_ok(&w);
	ck_assert_uint_eq(w.boot_port, port);
	setenv("EPGATE_SECRET", "ffeeddccbbaa99887766554433221100", 1);
	world_ok(&w);
	ck_assert_uint_ne(w.boot_port, port);
	setenv("EPGATE_SECRET", SECRET, 1);
	setenv("SLURM_STEP_ID", "3", 1);
	world_ok(&w);
	ck_assert_uint_ne(w.boot_port, port);
	unsetenv("SLURM_STEP_ID");
	/* where rank 0 listens: EPGATE_ROOT_ADDR's host, else every
	 * interface; EPGATE_BOOT_LISTEN wins */
	setenv("EPGATE_ROOT_ADDR", "10.1.2.3", 1);
	world_ok(&w);
	ck_assert_str_eq(w.boot_listen, "10.1.2.3");
	setenv("EPGATE_BOOT_LISTEN", "*", 1);
	world_ok(&w);
	ck_assert_str_eq(w.boot_listen, "");
	setenv("EPGATE_BOOT_LISTEN", "[fe80::3]", 1);
	world_ok(&w);
	ck_assert_str_eq(w.boot_listen, "fe80::3");
	unsetenv("EPGATE_BOOT_LISTEN");
	unsetenv("EPGATE_ROOT_ADDR");
	/* the step's node list and an explicit port win */
	setenv("SLURM_STEP_NODELIST", "gpu[08],gpu07", 1);
	setenv("EPGATE_BOOT_PORT", "31000", 1);
	world_ok(&w);
	ck_assert_str_eq(w.boot_host, "gpu08");
	ck_assert_uint_eq(w.boot_port, 31000);
	/* virtual nodes inside the real ones */
	setenv("EPGATE_RANKS_PER_NODE", "2", 1);
	world_ok(&w);
	ck_assert_uint_eq(w.ranks_per_node, 2);
	ck_assert_uint_eq(w.node, 2);
	ck_assert_uint_eq(w.nodes, 4);
	ck_assert_uint_eq(w.local_rank, 1);
	ck_assert_uint_eq(w.local_size, 2);
}
END_TEST

/* Each bad setting fails and its message quotes the variable=value. */
static const struct bad_env {
	const char *kv[10];
	const char *want;
} bad[] = {
    {{"EPGATE_RANK=x", "EPGATE_SIZE=4"}, "EPGATE_RANK=\"x\""},
    {{"EPGATE_RANK=-1", "EPGATE_SIZE=4"}, "EPGATE_RANK=\"-1\""},
    {{"EPGATE_RANK=4", "EPGATE_SIZE=4"}, "EPGATE_RANK=4"},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=0"}, "EPGATE_SIZE=0"},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=2x"}, "EPGATE_SIZE=\"2x\""},
    {{"EPGATE_RANK=0"}, "EPGATE_SIZE is not set"},
    {{"EPGATE_SIZE=2"}, "EPGATE_RANK is not set"},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=4", "EPGATE_RANKS_PER_NODE=0"},
     "EPGATE_RANKS_PER_NODE=0"},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=4", "EPGATE_RANKS_PER_NODE=5"},
     "EPGATE_RANKS_PER_NODE=5"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_SECRET=" SECRET},
     "EPGATE_BOOT_ADDR is not set"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=nohost"},
     "EPGATE_BOOT_ADDR=\"nohost\""},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:0"},
     "EPGATE_BOOT_ADDR=\"h:0\""},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:65536"},
     "EPGATE_BOOT_ADDR=\"h:65536\""},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=:80"},
     "EPGATE_BOOT_ADDR=\":80\""},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=::1:80"},
     "EPGATE_BOOT_ADDR=\"::1:80\""},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=2", "EPGATE_BOOT_FD=abc"},
     "EPGATE_BOOT_FD=\"abc\""},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=2", "EPGATE_BOOT_FD=999"},
     "EPGATE_BOOT_FD=999"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:1"},
     "EPGATE_SECRET is not set"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:1",
      "EPGATE_SECRET=0123456789abcdefXY"},
     "EPGATE_SECRET (18 characters, not shown): character 17 is not a hex "
     "digit"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:1",
      "EPGATE_SECRET=abcd"},
     "EPGATE_SECRET (4 hex digits, not shown): want 16 to 64"},
    {{"EPGATE_RANK=1", "EPGATE_SIZE=2", "EPGATE_BOOT_ADDR=h:1",
      "EPGATE_SECRET=" SECRET SECRET "00"},
     "EPGATE_SECRET (66 hex digits, not shown)"},
    {{"EPGATE_RANK=0", "EPGATE_SIZE=1", "EPGATE_JOB_ID=a b"},
     "EPGATE_JOB_ID=\"a b\""},
    {{"EPGATE_TIMEOUT=0"}, "EPGATE_TIMEOUT=\"0\""},
    {{"EPGATE_TIMEOUT=-1"}, "EPGATE_TIMEOUT=\"-1\""},
    {{"EPGATE_TIMEOUT=inf"}, "EPGATE_TIMEOUT=\"inf\""},
    {{"EPGATE_TIMEOUT=5s"}, "EPGATE_TIMEOUT=\"5s\""},
    {{"SLURM_PROCID=0", "SLURM_NTASKS=7", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=1", "EPGATE_SECRET=" SECRET},
     "SLURM_NTASKS=7 is not a multiple of SLURM_NNODES=2"},
    {{"SLURM_PROCID=8", "SLURM_NTASKS=8", "SLURM_NNODES=2"}, "SLURM_PROCID=8"},
    {{"SLURM_PROCID=0", "SLURM_NNODES=2"}, "SLURM_NTASKS is not set"},
    {{"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_NNODES=x"},
     "SLURM_NNODES=\"x\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2", "SLURM_NODEID=1"},
     "SLURM_NODEID=1"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2", "SLURM_LOCALID=0"},
     "SLURM_LOCALID=0"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2"},
     "SLURM_JOB_NODELIST is not set"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n[01-"},
     "SLURM_JOB_NODELIST=\"n[01-\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=abc"},
     "SLURM_JOB_ID=\"abc\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_BOOT_PORT=70000"},
     "EPGATE_BOOT_PORT=\"70000\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7"},
     "EPGATE_SECRET is not set"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_ROOT_ADDR=h:0"},
     "EPGATE_ROOT_ADDR=\"h:0\": want host, host:port"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_ROOT_ADDR=:80"},
     "EPGATE_ROOT_ADDR=\":80\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_ROOT_ADDR="},
     "EPGATE_ROOT_ADDR=\"\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_ROOT_ADDR=[::1"},
     "EPGATE_ROOT_ADDR=\"[::1\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_ROOT_ADDR=a b:5"},
     "EPGATE_ROOT_ADDR=\"a b:5\""},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7",
      "EPGATE_ROOT_ADDR=10.0.0.5:4000", "EPGATE_BOOT_PORT=4001"},
     "EPGATE_ROOT_ADDR=10.0.0.5:4000 and EPGATE_BOOT_PORT=4001 name "
     "different ports"},
    {{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_NNODES=2",
      "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=7", "EPGATE_SECRET=" SECRET,
      "EPGATE_BOOT_LISTEN=10.0.0.5:4000"},
     "EPGATE_BOOT_LISTEN=\"10.0.0.5:4000\": want an address without a "
     "port"},
};

START_TEST(test_bad_env)
{
	const struct bad_env *b = &bad[_i];
	char err[256] = "";
	eg_world_t w;
	env(b->kv);
	int rc = eg_world_from_env(&w, err, sizeof(err));
	ck_assert_msg(rc < 0, "case %d accepted", _i);
	ck_assert_msg(strstr(err, b->want), "case %d: \"%s\" lacks \"%s\"", _i,
		      err, b->want);
	/* no secret in any message, however malformed */
	for (size_t k = 0; k < 10 && b->kv[k]; k++)
		if (!strncmp(b->kv[k], "EPGATE_SECRET=", 14) && b->kv[k][14])
			ck_assert_msg(!strstr(err, b->kv[k] + 14),
				      "case %d echoes the secret: %s", _i, err);
}
END_TEST

/* EPGATE_ROOT_ADDR replaces the step's first node name (and its port the
 * job's default; 0 below: the default) and is where rank 0 listens;
 * EPGATE_BOOT_PORT still gives the port of a bare host. */
static const struct {
	const char *root, *port, *host;
	unsigned want_port;
} roots[] = {
    {"10.0.0.5", NULL, "10.0.0.5", 0},
    {"10.0.0.5", "31000", "10.0.0.5", 31000},
    {"head-ib0:4000", NULL, "head-ib0", 4000},
    {"head-ib0:4000", "4000", "head-ib0", 4000},
    {"[fe80::1]:4000", NULL, "fe80::1", 4000},
    {"[::1]", "5000", "::1", 5000},
    {"fe80::2", NULL, "fe80::2", 0},
};

START_TEST(test_root_addr)
{
	static const char *const kv[] = {
	    "SLURM_PROCID=1",
	    "SLURM_NTASKS=2",
	    "SLURM_NNODES=2",
	    "SLURM_JOB_NODELIST=gpu[07-08]",
	    "SLURM_JOB_ID=123456",
	    "EPGATE_SECRET=" SECRET,
	    NULL,
	};
	eg_world_t w;
	env(kv);
	world_ok(&w);
	ck_assert_str_eq(w.boot_src, "first node of SLURM_JOB_NODELIST");
	uint16_t derived = w.boot_port; /* 0 below: this one */
	setenv("EPGATE_ROOT_ADDR", roots[_i].root, 1);
	if (roots[_i].port)
		setenv("EPGATE_BOOT_PORT", roots[_i].port, 1);
	world_ok(&w);
	ck_assert_str_eq(w.boot_host, roots[_i].host);
	ck_assert_uint_eq(w.boot_port,
			  roots[_i].want_port ? roots[_i].want_port : derived);
	ck_assert_str_eq(w.boot_listen, roots[_i].host);
	ck_assert_str_eq(w.boot_src, "EPGATE_ROOT_ADDR");
}
END_TEST

static const struct {
	const char *list, *first;
} hosts[] = {
    {"a", "a"},
    {"a,b", "a"},
    {"n[01-04]", "n01"},
    {"n[01-04,07],gpu[1-2]", "n01"},
    {"n[007,001-004]", "n007"},
    {"rack1-n[3-5]-ib,x", "rack1-n3-ib"},
    {"c[1-2]s[03-04]", "c1s03"},
    {"node-17.cluster", "node-17.cluster"},
};

START_TEST(test_hostlist)
{
	char out[64];
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		ck_assert_int_eq(
		    eg_hostlist_first(hosts[i].list, out, sizeof(out)), EG_OK);
		ck_assert_str_eq(out, hosts[i].first);
	}
	static const char *const bad_lists[] = {
	    "", ",a", "n[", "n[]", "n[01-", "n[a-b]", "n]", "a b", "n[1-2",
	};
	for (size_t i = 0; i < sizeof(bad_lists) / sizeof(bad_lists[0]); i++)
		ck_assert_msg(eg_hostlist_first(bad_lists[i], out,
						sizeof(out)) == EG_EPARSE,
			      "\"%s\" accepted", bad_lists[i]);
	ck_assert_int_eq(eg_hostlist_first("n[0001-0004]", out, 5), EG_ERANGE);
	ck_assert_int_eq(eg_hostlist_first("n[0001-0004]", out, 6), EG_OK);
	ck_assert_str_eq(out, "n0001");
	ck_assert_int_eq(eg_hostlist_first("abcdef", out, 6), EG_ERANGE);
}
END_TEST

/* ---- the bootstrap between forked processes ---- */

/* Rank 0's listener on 127.0.0.1, port 0. */
static int listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 16), 0);
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
	snprintf(w.job_id, sizeof(w.job_id), "unit");
	w.timeout_s = 20;
	return w;
}

/* A forked rank: dies with the test, and cannot hang past 30 s. */
static pid_t fork_rank(int lfd)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(30);
		close(lfd);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Child exit codes: 0 as expected, else which check failed. */
#define CHILD_CHECK(cond, code)                                                \
	do {                                                                   \
		if (!(cond))                                                   \
			_exit(code);                                           \
	} while (0)

START_TEST(test_boot_world_of_one)
{
	eg_world_t w = mkworld(0, 1, 0, -1);
	eg_boot_t *b;
	unsigned char x = 7, all = 0;
	ck_assert_int_eq(eg_boot_open(&b, &w, 1), EG_OK);
	ck_assert_int_eq(eg_boot_allgather(b, &x, 1, &all, 1), EG_OK);
	ck_assert_uint_eq(all, 7);
	ck_assert_int_eq(eg_boot_bcast(b, &x, 1, 0, 1), EG_OK);
	ck_assert_int_eq(eg_boot_bcast(b, &x, 1, 1, 1), EG_EINVAL);
	ck_assert_int_eq(eg_boot_barrier(b, 1), EG_OK);
	ck_assert_ptr_nonnull(eg_boot_error(b));
	eg_boot_close(b);
	w.size = 2; /* more than one rank needs a secret */
	w.secret[0] = '\0';
	ck_assert_int_eq(eg_boot_open(&b, &w, 1), EG_EINVAL);
}
END_TEST

/* Three ranks; rank 2 first knocks with a wrong secret and another job's
 * id (refusals that prove nothing: retried to its short deadline, then
 * reported without the answer's bytes), as rank 1 (taken) and as rank 5
 * of 6 (refusals that prove the secret: final at once), then joins. */
START_TEST(test_boot_refusals)
{
	uint16_t port;
	int lfd = listener(&port), go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t a = fork_rank(lfd);
	if (a == 0) {
		eg_world_t w = mkworld(1, 3, port, -1);
		eg_boot_t *b;
		uint32_t mine = 11, all[3];
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_OK, 10);
		CHILD_CHECK(write(go[1], "g", 1) == 1, 11);
		CHILD_CHECK(eg_boot_allgather(b, &mine, 4, all, 0) == EG_OK,
			    12);
		CHILD_CHECK(all[0] == 10 && all[1] == 11 && all[2] == 12, 13);
		eg_boot_close(b);
		_exit(0);
	}
	pid_t c = fork_rank(lfd);
	if (c == 0) {
		char g;
		eg_boot_t *b;
		uint32_t mine = 12, all[3];
		CHILD_CHECK(read(go[0], &g, 1) == 1, 20); /* rank 1 is in */
		eg_world_t w = mkworld(2, 3, port, -1);
		w.secret[0] = 'f';
		CHILD_CHECK(eg_boot_open(&b, &w, 0.5) == EG_ETIMEDOUT, 21);
		CHILD_CHECK(strstr(eg_boot_error(b),
				   "refusals (the last claiming \"wrong "
				   "secret\")"),
			    22);
		eg_boot_close(b);
		w = mkworld(1, 3, port, -1);
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_EAUTH, 23);
		CHILD_CHECK(strstr(eg_boot_error(b), "already joined"), 24);
		eg_boot_close(b);
		w = mkworld(5, 6, port, -1);
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_EAUTH, 25);
		CHILD_CHECK(strstr(eg_boot_error(b), "does not fit"), 26);
		eg_boot_close(b);
		w = mkworld(2, 3, port, -1);
		snprintf(w.job_id, sizeof(w.job_id), "other");
		CHILD_CHECK(eg_boot_open(&b, &w, 0.5) == EG_ETIMEDOUT, 27);
		CHILD_CHECK(strstr(eg_boot_error(b), "another job's id"), 28);
		eg_boot_close(b);
		w = mkworld(2, 3, port, -1);
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_OK, 29);
		CHILD_CHECK(eg_boot_allgather(b, &mine, 4, all, 0) == EG_OK,
			    30);
		eg_boot_close(b);
		_exit(0);
	}
	eg_world_t w = mkworld(0, 3, port, lfd);
	eg_boot_t *b;
	uint32_t mine = 10, all[3];
	int rc = eg_boot_open(&b, &w, 0);
	ck_assert_msg(rc == EG_OK, "%s", eg_boot_error(b));
	ck_assert_int_eq(eg_boot_allgather(b, &mine, 4, all, 0), EG_OK);
	ck_assert(all[0] == 10 && all[1] == 11 && all[2] == 12);
	eg_boot_close(b);
	ck_assert_int_eq(wait_exit(a), 0);
	ck_assert_int_eq(wait_exit(c), 0);
}
END_TEST

/* A rank 0 that lacks the secret is not believed: a fake one that
 * welcomes anybody (frames as in docs/world.md) is ignored; the peer
 * retries to its deadline and says what it got. */
static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void frame(unsigned char h[32], uint16_t op, uint32_t len)
{
	memset(h, 0, 32);
	memcpy(h, "EPGB", 4);
	h[5] = (unsigned char)op;
	h[7] = 2; /* version */
	put32(h + 28, len);
}

START_TEST(test_boot_fake_root)
{
	uint16_t port;
	int lfd = listener(&port);
	pid_t a = fork_rank(lfd);
	if (a == 0) {
		eg_world_t w = mkworld(1, 2, port, -1);
		eg_boot_t *b;
		CHILD_CHECK(eg_boot_open(&b, &w, 1) == EG_ETIMEDOUT, 30);
		CHILD_CHECK(strstr(eg_boot_error(b), "1 welcome,"), 31);
		eg_boot_close(b);
		_exit(0);
	}
	unsigned char m[32 + 116];
	int fd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(fd, 0);
	frame(m, 1, 16); /* HELLO0 and a nonce of zeros */
	memset(m + 32, 0, 16);
	ck_assert_int_eq(write(fd, m, 48), 48);
	size_t got = 0;
	while (got < sizeof(m)) {
		ssize_t n = read(fd, m + got, sizeof(m) - got);
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	ck_assert_int_eq(memcmp(m, "EPGB", 4), 0);
	ck_assert_uint_eq(m[5], 2); /* HELLO */
	frame(m, 3, 32);	    /* WELCOME with a made-up proof */
	memset(m + 32, 0x5a, 32);
	ck_assert_int_eq(write(fd, m, 64), 64);
	close(lfd); /* later attempts: connection refused */
	ck_assert_int_eq(wait_exit(a), 0);
	close(fd);
}
END_TEST

/* Ranks that call different collectives are told so, not hung. Case 0:
 * only the op differs (allgather of 0 bytes vs barrier); case 1: only
 * the bcast root. */
START_TEST(test_boot_disagree)
{
	uint16_t port;
	int lfd = listener(&port);
	char x[8] = "abcdefg";
	pid_t a = fork_rank(lfd);
	if (a == 0) {
		eg_world_t w = mkworld(1, 2, port, -1);
		eg_boot_t *b;
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_OK, 40);
		int rc = _i == 0 ? eg_boot_barrier(b, 0)
				 : eg_boot_bcast(b, x, 8, 0, 0);
		CHILD_CHECK(rc == EG_EPEER, 41);
		CHILD_CHECK(strstr(eg_boot_error(b), "ranks disagree"), 42);
		eg_boot_close(b);
		_exit(0);
	}
	eg_world_t w = mkworld(0, 2, port, lfd);
	eg_boot_t *b;
	ck_assert_int_eq(eg_boot_open(&b, &w, 0), EG_OK);
	if (_i == 0) {
		ck_assert_int_eq(eg_boot_allgather(b, NULL, 0, NULL, 0),
				 EG_EPEER);
		ck_assert_str_eq(eg_boot_error(b),
				 "allgather: ranks disagree: rank 1 called "
				 "barrier of 0 bytes (call 1), rank 0 called "
				 "allgather of 0 bytes (call 1)");
	} else {
		ck_assert_int_eq(eg_boot_bcast(b, x, 8, 1, 0), EG_EPEER);
		ck_assert_str_eq(eg_boot_error(b),
				 "bcast: ranks disagree: rank 1 called bcast "
				 "of 8 bytes from root 0 (call 1), rank 0 "
				 "called bcast of 8 bytes from root 1 (call "
				 "1)");
	}
	/* sticky: the next call fails at once, saying why */
	ck_assert_int_eq(eg_boot_barrier(b, 0), EG_EPEER);
	ck_assert_ptr_nonnull(strstr(eg_boot_error(b),
				     "barrier: not run: the bootstrap failed "
				     "earlier ("));
	eg_boot_close(b);
	ck_assert_int_eq(wait_exit(a), 0);
}
END_TEST

/* A rank that exits is named; one that stalls is named at the deadline. */
START_TEST(test_boot_dead_and_stalled)
{
	uint16_t port;
	int lfd = listener(&port), hold[2];
	pid_t a = fork_rank(lfd), c = -1;
	if (a == 0) {
		eg_world_t w = mkworld(1, 3, port, -1);
		eg_boot_t *b;
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_OK, 50);
		_exit(0); /* gone without a word */
	}
	c = fork_rank(lfd);
	if (c == 0) {
		eg_world_t w = mkworld(2, 3, port, -1);
		eg_boot_t *b;
		char g = 2, gall[3];
		CHILD_CHECK(eg_boot_open(&b, &w, 0) == EG_OK, 60);
		CHILD_CHECK(eg_boot_allgather(b, &g, 1, gall, 0) == EG_EPEER,
			    61);
		CHILD_CHECK(strstr(eg_boot_error(b), "rank 0 stopped the job"),
			    62);
		CHILD_CHECK(strstr(eg_boot_error(b), "rank 1 closed"), 63);
		eg_boot_close(b);
		_exit(0);
	}
	eg_world_t w = mkworld(0, 3, port, lfd);
	eg_boot_t *b;
	char all[3], x = 1;
	ck_assert_int_eq(eg_boot_open(&b, &w, 0), EG_OK);
	ck_assert_int_eq(wait_exit(a), 0);
	ck_assert_int_eq(eg_boot_allgather(b, &x, 1, all, 0), EG_EPEER);
	ck_assert_ptr_nonnull(
	    strstr(eg_boot_error(b), "rank 1 closed its connection"));
	eg_boot_close(b);
	ck_assert_int_eq(wait_exit(c), 0);

	/* stalled: rank 1 joins, then waits on a pipe nobody writes */
	lfd = listener(&port);
	ck_assert_int_eq(pipe(hold), 0);
	a = fork_rank(lfd);
	if (a == 0) {
		eg_world_t w1 = mkworld(1, 2, port, -1);
		char g;
		close(hold[1]);
		CHILD_CHECK(eg_boot_open(&b, &w1, 0) == EG_OK, 70);
		CHILD_CHECK(read(hold[0], &g, 1) == 0, 71);
		eg_boot_close(b);
		_exit(0);
	}
	close(hold[0]);
	w = mkworld(0, 2, port, lfd);
	ck_assert_int_eq(eg_boot_open(&b, &w, 0), EG_OK);
	ck_assert_int_eq(eg_boot_barrier(b, 0.2), EG_ETIMEDOUT);
	ck_assert_str_eq(eg_boot_error(b), "barrier: deadline 0.2 s expired; "
					   "rank 0 still waits on ranks 1");
	eg_boot_close(b);
	close(hold[1]); /* releases rank 1 */
	ck_assert_int_eq(wait_exit(a), 0);
}
END_TEST

/* The job helper's own path: this program, absolute, read once.  (Its
 * jobs run `<self> launch`, so they are exercised by the epgate command:
 * suites/l2/l2.sh and suites/bench/local.sh.) */
START_TEST(test_self_exe)
{
	const char *a = eg_self_exe(), *b = eg_self_exe();
	size_t n;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq(a[0], '/');
	n = strlen(a);
	ck_assert_uint_ge(n, 11);
	ck_assert_str_eq(a + n - 11, "/test_world");
	ck_assert_int_eq(access(a, X_OK), 0);
}
END_TEST

/* A peer whose rendezvous name does not resolve fails in seconds, not at
 * the deadline, and says what to set. */
START_TEST(test_boot_unresolvable)
{
	eg_world_t w = mkworld(1, 2, 4242, -1);
	eg_boot_t *b = NULL;
	snprintf(w.boot_host, sizeof(w.boot_host), "eg-no-such-node.invalid");
	snprintf(w.boot_src, sizeof(w.boot_src),
		 "first node of SLURM_STEP_NODELIST");
	/* EG_EINVAL, not EG_ETIMEDOUT: it gave up on the name, not at the
	 * 60 s deadline (no clock read: a loaded machine is slow) */
	ck_assert_int_eq(eg_boot_open(&b, &w, 60), EG_EINVAL);
	ck_assert_ptr_nonnull(b);
	const char *e = eg_boot_error(b);
	ck_assert_msg(strstr(e, "\"eg-no-such-node.invalid\" (first node of "
				"SLURM_STEP_NODELIST) does not resolve") &&
			  strstr(e, "set EPGATE_ROOT_ADDR"),
		      "%s", e);
	eg_boot_close(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("world");
	TCase *tc = tcase_create("env");
	tcase_add_test(tc, test_world_of_one);
	tcase_add_test(tc, test_launcher);
	tcase_add_test(tc, test_uneven_nodes);
	tcase_add_test(tc, test_boot_fd);
	tcase_add_test(tc, test_slurm);
	tcase_add_loop_test(tc, test_bad_env, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_hostlist);
	tcase_add_test(tc, test_self_exe);
	tcase_add_loop_test(tc, test_root_addr, 0,
			    (int)(sizeof(roots) / sizeof(roots[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("boot");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_boot_world_of_one);
	tcase_add_test(tc, test_boot_refusals);
	tcase_add_test(tc, test_boot_fake_root);
	tcase_add_loop_test(tc, test_boot_disagree, 0, 2);
	tcase_add_test(tc, test_boot_dead_and_stalled);
	tcase_add_test(tc, test_boot_unresolvable);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
