/* The world from the environment: the local launcher's EPGATE_* variables,
 * else Slurm's, else a world of one. Every error names the variable and
 * its value, because a wrong world otherwise shows up as a hang. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/world.h"
#include "lib/world/hmac.h"

#define EG__DEFAULT_TIMEOUT 60.0
#define EG__SECRET_MIN	    16 /* hex digits: 64 bits at least */

/* A decimal integer in [lo, hi], nothing else (no sign, no spaces):
 * the base parser (lib/base/num.c); the messages are this file's, in the
 * VAR=value form the user wrote. */
static int eg__parse_u(const char *s, unsigned long long lo,
		       unsigned long long hi, unsigned long long *out)
{
	uint64_t v;
	int rc = s ? eg_parse_u64(NULL, s, lo, hi, 0, &v, NULL, 0) : EG_EINVAL;

	if (rc == EG_EINVAL)
		return EG_EPARSE;
	if (rc == EG_OK)
		*out = v;
	return rc;
}

/* var must hold an integer in [lo, hi]; names it otherwise. */
static int eg__env_u32(const char *var, unsigned long long lo,
		       unsigned long long hi, uint32_t *out, char *err,
		       size_t len)
{
	const char *s = getenv(var);
	unsigned long long v = 0;
	if (!s)
		return eg_err_set(err, len, EG_EINVAL, "%s is not set", var);
	int rc = eg__parse_u(s, lo, hi, &v);
	if (rc == EG_EPARSE)
		return eg_err_set(err, len, rc,
				  "%s=\"%s\": not a non-negative integer", var,
				  s);
	if (rc < 0)
		return eg_err_set(err, len, rc,
				  "%s=%s: out of range [%llu, %llu]", var, s,
				  lo, hi);
	*out = (uint32_t)v;
	return EG_OK;
}

static int eg__env_timeout(eg_world_t *w, char *err, size_t len)
{
	const char *s = getenv("EPGATE_TIMEOUT");
	double v;
	w->timeout_s = EG__DEFAULT_TIMEOUT;
	if (!s)
		return EG_OK;
	if (eg_parse_double(NULL, s, 0, 1e6, EG_NUM_SIGNED | EG_NUM_LO_OPEN, &v,
			    NULL, 0) < 0)
		return eg_err_set(
		    err, len, EG_EINVAL,
		    "EPGATE_TIMEOUT=\"%s\": not a number of seconds "
		    "in (0, 1e6]",
		    s);
	w->timeout_s = v;
	return EG_OK;
}

/* The secret is never echoed: its length and the first character that
 * is not a hex digit say enough. */
static int eg__env_secret(eg_world_t *w, char *err, size_t len)
{
	const char *s = getenv("EPGATE_SECRET");
	if (!s) {
		if (w->size > 1)
			return eg_err_set(err, len, EG_EINVAL,
					  "EPGATE_SECRET is not set (required "
					  "for a job of %u ranks)",
					  w->size);
		return EG_OK;
	}
	size_t n = strlen(s), hex = strspn(s, "0123456789abcdefABCDEF");
	if (hex != n)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_SECRET (%zu characters, not shown): "
				  "character %zu is not a hex digit; want %d "
				  "to %d hex digits",
				  n, hex + 1, EG__SECRET_MIN,
				  EG_SECRET_MAX - 1);
	if (n < EG__SECRET_MIN || n >= EG_SECRET_MAX)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_SECRET (%zu hex digits, not shown): "
				  "want %d to %d hex digits",
				  n, EG__SECRET_MIN, EG_SECRET_MAX - 1);
	memcpy(w->secret, s, n + 1);
	return EG_OK;
}

/* A job id travels in the handshake and in error lines: keep it short
 * and printable. */
static int eg__set_job_id(eg_world_t *w, const char *var, const char *s,
			  char *err, size_t len)
{
	size_t n = strlen(s);
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	if (n == 0 || n >= sizeof(w->job_id) || strspn(s, ok) != n)
		return eg_err_set(err, len, EG_EINVAL,
				  "%s=\"%.80s\": want 1 to %zu characters of "
				  "[A-Za-z0-9._-]",
				  var, s, sizeof(w->job_id) - 1);
	memcpy(w->job_id, s, n + 1);
	return EG_OK;
}

/* "host:port", "[v6addr]:port", or with port_opt also "host", "[v6addr]"
 * and a bare IPv6 address (more than one colon, no brackets: no port).
 * *port is 0 when none is given. */
static int eg__parse_addr(const char *s, int port_opt, char *host, size_t hlen,
			  unsigned long long *port)
{
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hl = strlen(s);

	*port = 0;
	if (hl == 0)
		return EG_EPARSE;
	if (port_opt && colon && memchr(s, ':', (size_t)(colon - s)) &&
	    s[0] != '[')
		colon = NULL; /* a bare v6 address: all host */
	if (port_opt && s[0] == '[' && s[hl - 1] == ']')
		colon = NULL; /* "[v6addr]" */
	if (colon) {
		hl = (size_t)(colon - s);
		if (eg__parse_u(colon + 1, 1, 65535, port) < 0)
			return EG_EPARSE;
	} else if (!port_opt) {
		return EG_EPARSE;
	}
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		h = s + 1;
		hl -= 2;
	} else if (colon && memchr(s, ':', hl)) {
		return EG_EPARSE; /* a v6 address with a port needs brackets */
	}
	if (hl == 0 || hl >= hlen || memchr(h, '[', hl) || memchr(h, ']', hl) ||
	    memchr(h, ' ', hl))
		return EG_EPARSE;
	memcpy(host, h, hl);
	host[hl] = '\0';
	return EG_OK;
}

static int eg__env_boot_addr(eg_world_t *w, char *err, size_t len)
{
	const char *s = getenv("EPGATE_BOOT_ADDR");
	unsigned long long port;

	if (!s)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_ADDR is not set (required for "
				  "rank %u of %u)",
				  w->rank, w->size);
	if (eg__parse_addr(s, 0, w->boot_host, sizeof(w->boot_host), &port) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_ADDR=\"%.200s\": want host:port "
				  "with a port in [1, 65535]",
				  s);
	w->boot_port = (uint16_t)port;
	snprintf(w->boot_src, sizeof(w->boot_src), "EPGATE_BOOT_ADDR");
	return EG_OK;
}

static int eg__env_boot_fd(eg_world_t *w, char *err, size_t len)
{
	const char *s = getenv("EPGATE_BOOT_FD");
	unsigned long long fd = 0;
	if (!s || w->rank != 0)
		return EG_OK; /* only rank 0 listens */
	if (eg__parse_u(s, 0, 65535, &fd) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_FD=\"%.80s\": not a file "
				  "descriptor number",
				  s);
	if (fcntl((int)fd, F_GETFD) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_FD=%s: not an open file "
				  "descriptor",
				  s);
	w->boot_fd = (int)fd;
	return EG_OK;
}

static int eg__from_launcher(eg_world_t *w, char *err, size_t len)
{
	const char *job;
	int rc;

	if (!getenv("EPGATE_SIZE"))
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_SIZE is not set (EPGATE_RANK=%s is)",
				  getenv("EPGATE_RANK"));
	if ((rc = eg__env_u32("EPGATE_SIZE", 1, 1u << 20, &w->size, err, len)) <
		0 ||
	    (rc = eg__env_u32("EPGATE_RANK", 0, w->size - 1, &w->rank, err,
			      len)) < 0)
		return rc;
	w->ranks_per_node = w->size;
	if (getenv("EPGATE_RANKS_PER_NODE") &&
	    (rc = eg__env_u32("EPGATE_RANKS_PER_NODE", 1, w->size,
			      &w->ranks_per_node, err, len)) < 0)
		return rc;
	if ((rc = eg__env_boot_fd(w, err, len)) < 0)
		return rc;
	/* Rank 0 with an inherited socket needs no address; anyone else
	 * must know where to go. */
	if ((w->size > 1 && w->boot_fd < 0) || getenv("EPGATE_BOOT_ADDR"))
		if ((rc = eg__env_boot_addr(w, err, len)) < 0)
			return rc;
	job = getenv("EPGATE_JOB_ID");
	return eg__set_job_id(w, "EPGATE_JOB_ID", job ? job : "local", err,
			      len);
}

/* Where the others find rank 0 under Slurm: EPGATE_ROOT_ADDR (host or
 * host:port: a name that does not resolve on every node, or another
 * interface) when given, else the step's first node (the step's list,
 * since a step on part of the allocation starts task 0 on its own first
 * node). The port: EPGATE_ROOT_ADDR's, else EPGATE_BOOT_PORT, else 0
 * (the caller derives one from the job id). */
static int eg__slurm_root(eg_world_t *w, char *err, size_t len)
{
	const char *list, *listvar = "SLURM_STEP_NODELIST";
	const char *root = getenv("EPGATE_ROOT_ADDR");
	const char *ps = getenv("EPGATE_BOOT_PORT");
	unsigned long long port = 0, rport;

	if (ps && eg__parse_u(ps, 1, 65535, &port) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_PORT=\"%.80s\": want a port in "
				  "[1, 65535]",
				  ps);
	if (root) {
		if (eg__parse_addr(root, 1, w->boot_host, sizeof(w->boot_host),
				   &rport) < 0)
			return eg_err_set(err, len, EG_EINVAL,
					  "EPGATE_ROOT_ADDR=\"%.200s\": want "
					  "host, host:port, [v6addr] or "
					  "[v6addr]:port, a port in [1, 65535]",
					  root);
		if (rport && port && rport != port)
			return eg_err_set(err, len, EG_EINVAL,
					  "EPGATE_ROOT_ADDR=%s and "
					  "EPGATE_BOOT_PORT=%s name different "
					  "ports",
					  root, ps);
		w->boot_port = (uint16_t)(rport ? rport : port);
		snprintf(w->boot_src, sizeof(w->boot_src), "EPGATE_ROOT_ADDR");
		/* rank 0's address as the others use it: listen there */
		memcpy(w->boot_listen, w->boot_host, sizeof(w->boot_listen));
		return EG_OK;
	}
	if (!(list = getenv(listvar)))
		list = getenv(listvar = "SLURM_JOB_NODELIST");
	if (!list)
		return eg_err_set(err, len, EG_EINVAL,
				  "SLURM_JOB_NODELIST is not set");
	if (eg_hostlist_first(list, w->boot_host, sizeof(w->boot_host)) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "%s=\"%.200s\": not a Slurm hostlist",
				  listvar, list);
	w->boot_port = (uint16_t)port;
	snprintf(w->boot_src, sizeof(w->boot_src), "first node of %s", listvar);
	return EG_OK;
}

/* EPGATE_BOOT_LISTEN: where rank 0 listens under Slurm, an address
 * ("*" or "" = every interface); it wins over EPGATE_ROOT_ADDR's host. */
static int eg__env_listen(eg_world_t *w, char *err, size_t len)
{
	const char *s = getenv("EPGATE_BOOT_LISTEN");
	unsigned long long port;

	if (!s)
		return EG_OK;
	if (!*s || !strcmp(s, "*")) {
		w->boot_listen[0] = '\0';
		return EG_OK;
	}
	if (eg__parse_addr(s, 1, w->boot_listen, sizeof(w->boot_listen),
			   &port) < 0 ||
	    port)
		return eg_err_set(err, len, EG_EINVAL,
				  "EPGATE_BOOT_LISTEN=\"%.200s\": want an "
				  "address without a port (host, v6addr, "
				  "[v6addr]) or * for every interface",
				  s);
	return EG_OK;
}

/* The rendezvous port of a Slurm step that names none: from the secret,
 * the job and the step (every rank knows them, a stranger cannot guess
 * it), in [20000, 32000): below Linux's ephemeral ports (32768-60999),
 * which outgoing connections take. Without a secret (one rank): from the
 * job. */
static uint16_t eg__slurm_port(const eg_world_t *w)
{
	const char *step = getenv("SLURM_STEP_ID");
	unsigned char mac[EG_MAC_LEN];
	char msg[160];
	int n;

	if (!w->secret[0])
		return (uint16_t)(20000 +
				  strtoull(w->job_id, NULL, 10) % 12000);
	n = snprintf(msg, sizeof(msg), "epgate-port|%s|%s", w->job_id,
		     step ? step : "");
	eg_hmac_sha256(w->secret, msg, (size_t)n, mac);
	return (uint16_t)(20000 + ((unsigned)mac[0] << 8 | mac[1]) % 12000);
}

/* Slurm: ranks are tasks of the step; nodes come from block distribution
 * (task r on node r / (ntasks / nnodes)), checked against SLURM_NODEID
 * and SLURM_LOCALID so a cyclic layout is an error, not a silent lie. */
static int eg__from_slurm(eg_world_t *w, char *err, size_t len)
{
	uint32_t nnodes, real_rpn = 0, v;
	unsigned long long job = 0;
	const char *s;
	int rc;

	if ((rc = eg__env_u32("SLURM_NTASKS", 1, 1u << 20, &w->size, err,
			      len)) < 0 ||
	    (rc = eg__env_u32("SLURM_PROCID", 0, w->size - 1, &w->rank, err,
			      len)) < 0 ||
	    (rc = eg__env_u32("SLURM_NNODES", 1, w->size, &nnodes, err, len)) <
		0)
		return rc;
	if (w->size % nnodes == 0)
		real_rpn = w->size / nnodes;
	if (getenv("EPGATE_RANKS_PER_NODE")) {
		if ((rc = eg__env_u32("EPGATE_RANKS_PER_NODE", 1, w->size,
				      &w->ranks_per_node, err, len)) < 0)
			return rc;
	} else if (!real_rpn) {
		return eg_err_set(
		    err, len, EG_EINVAL,
		    "SLURM_NTASKS=%u is not a multiple of "
		    "SLURM_NNODES=%u (give every node the same "
		    "number of tasks, or set EPGATE_RANKS_PER_NODE)",
		    w->size, nnodes);
	} else {
		w->ranks_per_node = real_rpn;
	}
	if (real_rpn && getenv("SLURM_NODEID")) {
		if ((rc = eg__env_u32("SLURM_NODEID", 0, nnodes - 1, &v, err,
				      len)) < 0)
			return rc;
		if (v != w->rank / real_rpn)
			return eg_err_set(
			    err, len, EG_EINVAL,
			    "SLURM_NODEID=%u: task %u of %u on %u "
			    "nodes should be on node %u (use "
			    "block distribution: srun -m block)",
			    v, w->rank, w->size, nnodes, w->rank / real_rpn);
	}
	if (real_rpn && getenv("SLURM_LOCALID")) {
		if ((rc = eg__env_u32("SLURM_LOCALID", 0, real_rpn - 1, &v, err,
				      len)) < 0)
			return rc;
		if (v != w->rank % real_rpn)
			return eg_err_set(err, len, EG_EINVAL,
					  "SLURM_LOCALID=%u: task %u should be "
					  "local task %u (use block "
					  "distribution: srun -m block)",
					  v, w->rank, w->rank % real_rpn);
	}
	if ((rc = eg__slurm_root(w, err, len)) < 0)
		return rc;
	if (!(s = getenv("SLURM_JOB_ID")))
		return eg_err_set(err, len, EG_EINVAL,
				  "SLURM_JOB_ID is not set");
	if (eg__parse_u(s, 0, ~0ull, &job) < 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "SLURM_JOB_ID=\"%.80s\": not a job number",
				  s);
	if ((rc = eg__set_job_id(w, "SLURM_JOB_ID", s, err, len)) < 0)
		return rc;
	if ((rc = eg__env_listen(w, err, len)) < 0)
		return rc;
	w->from_slurm = 1;
	return EG_OK;
}

int eg_world_from_env(eg_world_t *w, char *err, size_t errlen)
{
	int rc;

	memset(w, 0, sizeof(*w));
	w->boot_fd = -1;
	w->size = 1;
	w->ranks_per_node = 1;
	if (err && errlen)
		err[0] = '\0';
	if ((rc = eg__env_timeout(w, err, errlen)) < 0)
		return rc;
	if (getenv("EPGATE_RANK") || getenv("EPGATE_SIZE")) {
		if (!getenv("EPGATE_RANK"))
			return eg_err_set(
			    err, errlen, EG_EINVAL,
			    "EPGATE_RANK is not set (EPGATE_SIZE=%s "
			    "is)",
			    getenv("EPGATE_SIZE"));
		rc = eg__from_launcher(w, err, errlen);
	} else if (getenv("SLURM_PROCID")) {
		rc = eg__from_slurm(w, err, errlen);
	} else {
		snprintf(w->job_id, sizeof(w->job_id), "local");
		rc = EG_OK;
	}
	if (rc < 0)
		return rc;
	if ((rc = eg__env_secret(w, err, errlen)) < 0)
		return rc;
	if (w->from_slurm && !w->boot_port)
		w->boot_port = eg__slurm_port(w);
	w->node = w->rank / w->ranks_per_node;
	w->nodes = (w->size + w->ranks_per_node - 1) / w->ranks_per_node;
	w->local_rank = w->rank % w->ranks_per_node;
	w->local_size = w->size - w->node * w->ranks_per_node;
	if (w->local_size > w->ranks_per_node)
		w->local_size = w->ranks_per_node;
	return EG_OK;
}

/* One bracket group "[01-04,07]": copies its first number, keeping the
 * zero padding. *p points at '['; on success past ']'. */
static int eg__first_in_brackets(const char **p, char *out, size_t *o,
				 size_t len)
{
	const char *s = *p + 1;
	size_t n = strspn(s, "0123456789");
	if (n == 0)
		return EG_EPARSE;
	if (*o + n >= len)
		return EG_ERANGE;
	memcpy(out + *o, s, n);
	*o += n;
	/* The rest must be ranges and lists of numbers up to ']'. */
	const char *e = s + strspn(s, "0123456789-,");
	if (*e != ']' || e == s)
		return EG_EPARSE;
	*p = e + 1;
	return EG_OK;
}

int eg_hostlist_first(const char *list, char *out, size_t len)
{
	const char *p = list;
	size_t o = 0;
	int rc;

	if (!list || !out || len == 0)
		return EG_EINVAL;
	/* The first item ends at a comma outside brackets. */
	while (*p && *p != ',') {
		if (*p == '[') {
			if ((rc = eg__first_in_brackets(&p, out, &o, len)) < 0)
				return rc;
			continue;
		}
		if (*p == ']' || *p == ' ' || *p == '\t' || *p == '\n')
			return EG_EPARSE;
		if (o + 1 >= len)
			return EG_ERANGE;
		out[o++] = *p++;
	}
	if (o == 0)
		return EG_EPARSE;
	out[o] = '\0';
	return EG_OK;
}
