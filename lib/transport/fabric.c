/* libfabric transport: RDM endpoints, tagged messages, K comms each driven
 * by its own progress thread; this file: the calls (planning a call's ops,
 * late sends, the verdict) and the ops table. Design notes:
 * docs/transport.md. Built with libfabric only (Makefile.am). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include "epgate/error.h"
#include "epgate/fabric_choice.h"
#include "epgate/fabric_probe.h"
#include "epgate/signals.h"
#include "epgate/transport.h"
#include "lib/transport/fabric_int.h"
#include "lib/transport/fabric_state.h"

static void eg__rank_list(const uint8_t *flag, uint32_t n, char *out,
			  size_t len)
{
	size_t at = 0;

	out[0] = 0;
	for (uint32_t r = 0; r < n && at + 16 < len; r++)
		if (flag[r])
			at += (size_t)snprintf(out + at, len - at, "%s%u",
					       at ? ", " : "", r);
}

static void eg__outstanding(eg__fab_t *st, const char *why)
{
	uint8_t *rf = calloc(st->size, 1), *sf = calloc(st->size, 1);
	char rl[160] = "", sl[160] = "";

	if (rf && sf) {
		for (unsigned k = 0; k < st->K; k++)
			for (size_t i = 0; i < st->comm[k].nops; i++) {
				const eg__op_t *op = &st->comm[k].ops[i];

				if (op->stuck)
					(op->is_send ? sf : rf)[op->peer] = 1;
			}
		eg__rank_list(rf, st->size, rl, sizeof(rl));
		eg__rank_list(sf, st->size, sl, sizeof(sl));
	}
	eg__fabric_seterr(
	    st,
	    "alltoallv #%u on rank %u: %s; still waiting on messages "
	    "from ranks [%s]; sends to ranks [%s] not complete",
	    st->seq, st->rank, why, rl[0] ? rl : "none", sl[0] ? sl : "none");
	free(rf);
	free(sf);
}

static eg__op_t *eg__grow(eg__op_t **ops, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		eg__op_t *o = realloc(*ops, nc * sizeof(*o));

		if (!o)
			return NULL;
		*ops = o;
		*cap = nc;
	}
	eg__op_t *op = &(*ops)[(*n)++];
	memset(op, 0, sizeof(*op));
	return op;
}

static eg__op_t *eg__add_op(eg__comm_t *c)
{
	return eg__grow(&c->ops, &c->nops, &c->cap);
}

/* Late mode holds an odd call's single-message sends to higher ranks (a
 * copy), to go after the next call's: the receiver meets a later call's
 * message first. Only to higher ranks, so some rank always completes a
 * call and the job moves on; only in odd calls, so that the next call's
 * message is sent, not held in turn. */
static int eg__held(const eg__fab_t *st, uint32_t p, int is_send, size_t n)
{
	return (st->modes & EG_FABRIC_TEST_LATE) && is_send && n == 1 &&
	       p > st->rank && (st->seq & 1);
}

/* Chunk c between src and dst in call seq travels on comm
 * eg_fabric_comm(src, dst, seq, c): both sides compute it, consecutive
 * chunks go round-robin, and single-chunk peers rotate over the comms
 * from call to call. */
static int eg__plan(eg__fab_t *st, uint32_t p, int is_send, const void *sbuf,
		    void *rbuf, size_t bytes)
{
	size_t n = (bytes + st->chunk - 1) / st->chunk;
	uint32_t src = is_send ? st->rank : p, dst = is_send ? p : st->rank;
	int hold = eg__held(st, p, is_send, n);

	if (n >= ((size_t)1 << EG_FABRIC_CHUNK_BITS)) {
		eg__fabric_seterr(
		    st,
		    "alltoallv: %zu bytes %s rank %u need %zu messages "
		    "of %zu bytes (max %u)",
		    bytes, is_send ? "to" : "from", p, n, st->chunk,
		    1u << EG_FABRIC_CHUNK_BITS);
		return EG_ERANGE;
	}
	for (size_t i = 0; i < n; i++) {
		eg__comm_t *c = &st->comm[eg_fabric_comm(
		    src, dst, st->seq, (uint32_t)i, st->K, st->modes)];
		eg__op_t *op = hold ? eg__grow(&c->late_next, &c->nlate_next,
					       &c->cap_late_next)
				    : eg__add_op(c);
		size_t off = i * st->chunk;

		if (!op)
			return EG_ENOMEM;
		op->len = bytes - off < st->chunk ? bytes - off : st->chunk;
		if (hold) {
			void *copy = malloc(op->len);

			if (!copy) {
				c->nlate_next--;
				return EG_ENOMEM;
			}
			memcpy(copy, (const uint8_t *)sbuf + off, op->len);
			op->sbuf = copy;
		} else if (is_send) {
			op->sbuf = (const uint8_t *)sbuf + off;
		} else {
			op->rbuf = (uint8_t *)rbuf + off;
		}
		op->total = bytes;
		op->tag = eg_fabric_tag(st->seq, src, (uint32_t)i, st->modes);
		op->peer = p;
		op->chunk = (uint32_t)i;
		op->is_send = (uint8_t)is_send;
		op->set = st->route[p];
	}
	return EG_OK;
}

/* Late mode: the sends held from the last call ride at the end of this
 * one's (unless the thread flushed them meanwhile); their buffers are
 * freed when the call is over. */
static int eg__take_late(eg__fab_t *st)
{
	int rc = EG_OK;

	pthread_mutex_lock(&st->mu);
	for (unsigned k = 0; k < st->K && !rc; k++) {
		eg__comm_t *c = &st->comm[k];
		void **busy =
		    c->nlate ? realloc(c->late_busy, c->nlate * sizeof(void *))
			     : c->late_busy;

		if (c->nlate && !busy) {
			rc = EG_ENOMEM;
			break;
		}
		c->late_busy = busy;
		c->nlate_busy = 0;
		for (size_t i = 0; i < c->nlate; i++) {
			eg__op_t *op = eg__add_op(c);

			if (!op) {
				rc = EG_ENOMEM;
				break;
			}
			*op = c->late[i];
			c->late_busy[c->nlate_busy++] = (void *)op->sbuf;
		}
		if (!rc)
			c->nlate = 0;
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

/* After a call: the held buffers it sent are free, and this call's held
 * sends wait for the next. */
static void eg__late_done(eg__fab_t *st)
{
	pthread_mutex_lock(&st->mu);
	for (unsigned k = 0; k < st->K; k++) {
		eg__comm_t *c = &st->comm[k];
		eg__op_t *t = c->late;
		size_t cap = c->cap_late;

		for (size_t i = 0; i < c->nlate_busy; i++)
			free(c->late_busy[i]);
		c->nlate_busy = 0;
		c->late = c->late_next;
		c->nlate = c->nlate_next;
		c->cap_late = c->cap_late_next;
		c->late_next = t;
		c->nlate_next = 0;
		c->cap_late_next = cap;
	}
	/* threads already waiting for the next call start their timer */
	pthread_cond_broadcast(&st->go);
	pthread_mutex_unlock(&st->mu);
}

/* This call's op lists: every comm's receives, then its sends. */
static int eg__plan_call(eg__fab_t *st, const void *const *send,
			 const size_t *send_bytes, void *const *recv,
			 const size_t *recv_bytes)
{
	uint32_t me = st->rank;
	int rc = EG_OK;

	for (unsigned k = 0; k < st->K; k++)
		st->comm[k].nops = st->comm[k].nrecv = 0;
	for (uint32_t p = 0; p < st->size && !rc; p++)
		if (p != me && recv_bytes[p])
			rc = eg__plan(st, p, 0, NULL, recv[p], recv_bytes[p]);
	for (unsigned k = 0; k < st->K; k++)
		st->comm[k].nrecv = st->comm[k].nops;
	for (uint32_t p = 0; p < st->size && !rc; p++)
		if (p != me && send_bytes[p])
			rc = eg__plan(st, p, 1, send[p], NULL, send_bytes[p]);
	if (!rc && (st->modes & EG_FABRIC_TEST_LATE))
		rc = eg__take_late(st);
	if (rc == EG_ENOMEM)
		eg__fabric_seterr(st, "alltoallv: out of memory");
	return rc;
}

/* Wakes the threads and waits for all of them: to the deadline, then
 * the drain and a margin, then EG__STUCK_S for a thread still inside
 * the provider. A thread that does not come back even then holds
 * posted operations into the caller's buffers, which the caller would
 * free: the process cannot go on, and ends here, saying why. */
static void eg__await(eg__fab_t *st, const void *const *send,
		      const size_t *send_bytes, void *const *recv)
{
	double deadline = eg__fabric_mono() + st->timeout_s, t;
	int stage = 0;
	uint32_t me = st->rank;

	pthread_mutex_lock(&st->mu);
	atomic_store(&st->abort, 0);
	st->ndone = 0;
	st->gen++;
	pthread_cond_broadcast(&st->go);
	pthread_mutex_unlock(&st->mu);

	if (send_bytes[me] && recv[me] != send[me])
		memmove(recv[me], send[me], send_bytes[me]);

	pthread_mutex_lock(&st->mu);
	while (st->ndone < st->K) {
		struct timespec dl;

		t = stage == 0	 ? deadline
		    : stage == 1 ? deadline + EG__DRAIN_S + 2.0
				 : deadline + EG__DRAIN_S + 2.0 + EG__STUCK_S;
		dl.tv_sec = (time_t)t;
		dl.tv_nsec = (long)((t - (double)dl.tv_sec) * 1e9);
		if (pthread_cond_timedwait(&st->fin, &st->mu, &dl) != ETIMEDOUT)
			continue;
		if (stage++ == 0)
			atomic_store(&st->abort, 1);
		else if (stage == 3)
			break;
	}
	if (st->ndone < st->K) {
		fprintf(stderr,
			"fabric: alltoallv #%u on rank %u: deadline %.1f s "
			"expired and a progress thread is still inside the "
			"provider %.1f s later; its posted operations point "
			"into buffers the caller would free: exiting\n",
			st->seq, me, st->timeout_s,
			EG__DRAIN_S + 2.0 + EG__STUCK_S);
		fflush(stderr);
		_exit(EG_EXIT_HARD);
	}
	pthread_mutex_unlock(&st->mu);
}

/* The call's verdict from the threads'. */
static int eg__verdict(eg__fab_t *st, const size_t *send_bytes)
{
	uint32_t me = st->rank;
	int timed_out = 0, leaked = 0;

	for (unsigned k = 0; k < st->K; k++) {
		if (st->comm[k].leaked) {
			st->broken = 1;
			leaked += st->comm[k].leaked;
		}
		if (st->comm[k].rc == EG_ETIMEDOUT)
			timed_out = 1;
	}
	for (unsigned k = 0; k < st->K; k++)
		if (st->comm[k].rc && st->comm[k].rc != EG_ETIMEDOUT) {
			st->broken = 1;
			eg__fabric_seterr(
			    st, "alltoallv #%u on rank %u, comm %u: %s",
			    st->seq, me, k, st->comm[k].err);
			return st->comm[k].rc;
		}
	if (timed_out) {
		char why[160];

		st->broken = 1;
		snprintf(why, sizeof(why), "deadline %.1f s expired%s",
			 st->timeout_s,
			 leaked ? " (operations the provider kept: their "
				  "endpoints closed)"
				: "");
		eg__outstanding(st, why);
		return EG_ETIMEDOUT;
	}
	for (uint32_t p = 0; p < st->size; p++)
		if (p != me) {
			st->bytes_sent += send_bytes[p];
			if (eg_world_node_of(&st->w, p) !=
			    eg_world_node_of(&st->w, me))
				st->bytes_sent_xnode += send_bytes[p];
		}
	st->err[0] = 0;
	return EG_OK;
}

static int eg__alltoallv(void *state, const void *const *send,
			 const size_t *send_bytes, void *const *recv,
			 const size_t *recv_bytes)
{
	eg__fab_t *st = state;
	uint32_t me;
	int rc;

	if (!st)
		return EG_EINVAL;
	if (st->broken) {
		eg__fabric_seterr(st,
				  "transport unusable after an earlier error; "
				  "destroy it");
		return EG_EFABRIC;
	}
	me = st->rank;
	if (st->modes & EG_FABRIC_TEST_SKEW)
		eg_fabric_skew(&st->skew_state);
	st->seq++;
	if (send_bytes[me] != recv_bytes[me]) {
		eg__fabric_seterr(
		    st,
		    "alltoallv: rank %u sends itself %zu bytes but "
		    "expects %zu",
		    me, send_bytes[me], recv_bytes[me]);
		return EG_EINVAL;
	}
	if ((rc = eg__plan_call(st, send, send_bytes, recv, recv_bytes)))
		return rc;
	eg__await(st, send, send_bytes, recv);
	rc = eg__verdict(st, send_bytes);
	if (st->modes & EG_FABRIC_TEST_LATE)
		eg__late_done(st);
	return rc;
}

static int eg__sent(void *state, uint64_t *bytes)
{
	*bytes = ((eg__fab_t *)state)->bytes_sent;
	return EG_OK;
}

static int eg__stats(void *state, eg_xport_stats_t *s)
{
	eg__fab_t *st = state;
	int intra = 0, inter = 0;

	if (!st || !s)
		return EG_EINVAL;
	memset(s, 0, sizeof(*s));
	s->num_comms = st->K;
	for (unsigned k = 0; k < st->K; k++) {
		s->ops_posted[k] = st->comm[k].ops_posted;
		s->busy_s[k] = st->comm[k].busy_s;
	}
	s->bytes_sent = st->bytes_sent;
	s->bytes_sent_xnode = st->bytes_sent_xnode;
	for (uint32_t p = 0; p < st->size; p++) {
		if (p == st->rank)
			continue;
		if (eg_world_node_of(&st->w, p) ==
		    eg_world_node_of(&st->w, st->rank))
			intra = 1;
		else
			inter = 1;
	}
	/* the provider that carried each kind of pair, "" if none did */
	if (intra)
		snprintf(s->provider_intra, sizeof(s->provider_intra), "%s",
			 st->prov[EG__INTRA]);
	if (inter)
		snprintf(
		    s->provider_inter, sizeof(s->provider_inter), "%s",
		    st->prov[st->prov[EG__INTER][0] ? EG__INTER : EG__INTRA]);
	return EG_OK;
}

static const char *eg__error(void *state)
{
	eg__fab_t *st = state;

	return st ? st->err : "fabric: no transport";
}

const eg_xport_ops_t eg_xport_fabric = {
    .size = sizeof(eg_xport_ops_t),
    .name = "fabric",
    .create = eg__fabric_create,
    .alltoallv = eg__alltoallv,
    .stats = eg__stats,
    .error = eg__error,
    .destroy = eg__fabric_destroy,
    .sent = eg__sent,
};
