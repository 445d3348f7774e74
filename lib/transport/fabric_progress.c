/* libfabric transport: the progress threads, one per comm, that post,
 * poll and drain a call's ops (lib/transport/fabric_state.h). */
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

/* ---- progress threads ---- */

static void eg__comm_err(eg__comm_t *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void eg__comm_err(eg__comm_t *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->rc)
		return; /* keep the first */
	c->rc = rc;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
}

static ssize_t eg__post_op(eg__comm_t *c, eg__op_t *op)
{
	eg__ep_t *e = &c->set[op->set];

	if (!op->is_send)
		/* the source is in the tag: no FI_DIRECTED_RECV needed */
		return fi_trecv(e->ep, op->rbuf, op->len, NULL, FI_ADDR_UNSPEC,
				op->tag, 0, op);
	if (e->data_mask)
		return fi_tsenddata(e->ep, op->sbuf, op->len, NULL,
				    op->total & e->data_mask, c->addr[op->peer],
				    op->tag, op);
	return fi_tsend(e->ep, op->sbuf, op->len, NULL, c->addr[op->peer],
			op->tag, op);
}

/* Posts op if its endpoint's queue has room; -FI_EAGAIN if not. */
static ssize_t eg__post(eg__comm_t *c, eg__op_t *op)
{
	eg__ep_t *e = &c->set[op->set];
	ssize_t rc;

	if (e->inflight[op->is_send] >= e->depth[op->is_send])
		return -FI_EAGAIN;
	rc = eg__post_op(c, op);
	if (!rc)
		e->inflight[op->is_send]++;
	return rc;
}

static void eg__retire(eg__comm_t *c, eg__op_t *op, size_t *ndone)
{
	op->done = 1;
	c->set[op->set].inflight[op->is_send]--;
	(*ndone)++;
}

static void eg__complete(eg__comm_t *c, const struct fi_cq_tagged_entry *en,
			 size_t *ndone)
{
	eg__op_t *op = en->op_context;
	uint64_t mask = c->set[op->set].data_mask;

	eg__retire(c, op, ndone);
	if (op->is_send)
		return;
	if ((en->flags & FI_REMOTE_CQ_DATA) && en->data != (op->total & mask))
		eg__comm_err(c, EG_EMISMATCH,
			     "rank %u sends %llu bytes to rank %u but "
			     "recv_bytes[%u] is %llu",
			     op->peer, (unsigned long long)en->data,
			     c->st->rank, op->peer,
			     (unsigned long long)op->total);
	else if (en->len != op->len)
		eg__comm_err(c, EG_EMISMATCH,
			     "message %u from rank %u is %zu bytes, expected "
			     "%zu",
			     op->chunk, op->peer, en->len, op->len);
}

static void eg__cq_error(eg__comm_t *c, struct fid_cq *cq, size_t *ndone)
{
	struct fi_cq_err_entry ee;
	char pbuf[256], sent[64] = "", over[48] = "";
	const char *pstr = NULL;
	eg__op_t *op;
	int err;

	memset(&ee, 0, sizeof(ee));
	if (fi_cq_readerr(cq, &ee, 0) <= 0)
		return;
	op = ee.op_context;
	if (!op)
		return;
	if (!op->done)
		eg__retire(c, op, ndone);
	err = ee.err < 0 ? -ee.err : ee.err; /* providers differ in sign */
	if (err == FI_ECANCELED)
		return;
	if (ee.prov_errno)
		pstr = fi_cq_strerror(cq, ee.prov_errno, ee.err_data, pbuf,
				      sizeof(pbuf));
	if (err == FI_ETRUNC) {
		/* not every provider fills data in error entries */
		if ((ee.flags & FI_REMOTE_CQ_DATA) && ee.data > op->total)
			snprintf(sent, sizeof(sent), "rank %u sends %llu; ",
				 op->peer, (unsigned long long)ee.data);
		if (ee.olen)
			snprintf(over, sizeof(over), " (by %zu bytes)",
				 ee.olen);
		eg__comm_err(c, EG_EMISMATCH,
			     "truncation: message %u from rank %u is longer "
			     "than the %zu-byte receive posted for it%s: "
			     "%srecv_bytes[%u] = %llu is too small (%s%s%s)",
			     op->chunk, op->peer, op->len, over, sent, op->peer,
			     (unsigned long long)op->total,
			     fi_strerror(FI_ETRUNC), pstr ? "; provider: " : "",
			     pstr ? pstr : "");
		return;
	}
	eg__comm_err(c, EG_EFABRIC,
		     "%s rank %u (message %u, %zu bytes) failed: %s%s%s",
		     op->is_send ? "send to" : "receive from", op->peer,
		     op->chunk, op->len, fi_strerror(err),
		     pstr ? "; provider: " : "", pstr ? pstr : "");
}

/* Reads every opened CQ once; returns completions seen. */
static size_t eg__poll(eg__comm_t *c, size_t *ndone)
{
	struct fi_cq_tagged_entry en[EG__CQ_BATCH];
	size_t seen = 0;

	for (int s = 0; s < EG__SETS; s++) {
		struct fid_cq *cq = c->set[s].cq;
		ssize_t n;

		if (!cq)
			continue;
		n = fi_cq_read(cq, en, EG__CQ_BATCH);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				eg__complete(c, &en[i], ndone);
			seen += (size_t)n;
		} else if (n == -FI_EAVAIL) {
			eg__cq_error(c, cq, ndone);
			seen++;
		} else if (n != -FI_EAGAIN) {
			eg__comm_err(c, EG_EFABRIC, "fi_cq_read: %s",
				     fi_strerror((int)-n));
		}
	}
	return seen;
}

/* One list of ops on a comm: nrecv receives, then the sends, the last
 * nheld of which (late mode) are posted only after all the others. */
typedef struct {
	eg__op_t *ops;
	size_t nops, nrecv, nheld;
} eg__list_t;

/* After an error or the deadline: cancel what is posted and reap it, so
 * that no op still points into the caller's buffers when we return. What
 * the provider still holds after EG__DRAIN_S (a send to a peer that
 * never receives cannot be cancelled) goes with the endpoints, closed
 * here by the thread that owns them: the transport is then unusable. */
static void eg__drain(eg__comm_t *c, const eg__list_t *l, size_t nposted_r,
		      size_t nposted_s, size_t *ndone)
{
	size_t posted = 0;
	double end;

	for (size_t i = 0; i < l->nops; i++) {
		eg__op_t *op = &l->ops[i];
		int is_posted =
		    op->is_send ? (i - l->nrecv) < nposted_s : i < nposted_r;

		if (!is_posted) {
			op->stuck = 1;
			continue;
		}
		posted++;
		if (op->done)
			continue;
		op->stuck = 1;
		if (!op->is_send)
			fi_cancel(&c->set[op->set].ep->fid, op);
	}
	end = eg__fabric_mono() + EG__DRAIN_S;
	while (*ndone < posted && eg__fabric_mono() < end)
		if (!eg__poll(c, ndone))
			sched_yield();
	if (*ndone < posted) {
		c->leaked = (int)(posted - *ndone);
		for (int s = EG__SETS - 1; s >= 0; s--)
			eg__fabric_close_ep(&c->set[s]);
	}
}

/* Nothing moved: yield, and past EG__SPIN_POLLS idle polls in a row nap,
 * so that K threads per rank do not starve the ranks' other threads when
 * cores are fewer than threads. */
static void eg__idle(unsigned idle)
{
	struct timespec nap = {0, EG__NAP_NS};

	if (idle < EG__SPIN_POLLS)
		sched_yield();
	else
		nanosleep(&nap, NULL);
}

/* Posts what the provider takes from [*at, n) of l's ops; 1 if any. */
static int eg__post_some(eg__comm_t *c, const eg__list_t *l, size_t first,
			 size_t n, size_t *at)
{
	int moved = 0;
	ssize_t rc = 0;

	while (*at < n && (rc = eg__post(c, &l->ops[first + *at])) == 0) {
		(*at)++;
		c->ops_posted++;
		moved = 1;
	}
	if (rc && rc != -FI_EAGAIN)
		eg__comm_err(c, EG_EFABRIC, "posting %s rank %u: %s",
			     first ? "send to" : "receive from",
			     l->ops[first + *at].peer, fi_strerror((int)-rc));
	return moved;
}

/* Runs l to completion, or to an error, the call's abort (a call) or
 * the deadline (a flush of held sends, abort == NULL). */
static void eg__run(eg__comm_t *c, const eg__list_t *l, atomic_int *abort,
		    double deadline)
{
	size_t nsend = l->nops - l->nrecv - l->nheld, pr = 0, ps = 0, ph = 0;
	size_t ndone = 0;
	unsigned idle = 0;
	double t0 = eg__fabric_mono();

	c->rc = 0;
	c->err[0] = 0;
	if (c->flush_rc || c->leaked) {
		/* the endpoints are gone, or a held send failed: the call
		 * fails as the transport already has */
		eg__comm_err(c, c->flush_rc ? c->flush_rc : EG_EFABRIC, "%s",
			     c->leaked ? "endpoints closed after an earlier "
					 "error"
				       : "a held send of the last call failed");
		return;
	}
	while (ndone < l->nops) {
		int moved;

		if ((abort && atomic_load(abort)) || c->rc ||
		    (!abort && eg__fabric_mono() > deadline)) {
			eg__drain(c, l, pr, ps + ph, &ndone);
			if (!c->rc)
				c->rc = EG_ETIMEDOUT;
			break;
		}
		/* receives first, as many as the provider takes; sends
		 * follow even when the receive queue is full, or ranks
		 * would wait on each other's queue space */
		moved = eg__post_some(c, l, 0, l->nrecv, &pr);
		if (c->rc)
			continue;
		moved |= eg__post_some(c, l, l->nrecv, nsend, &ps);
		if (c->rc)
			continue;
		/* held sends: after this call's own are posted (not
		 * completed: a send may complete only once its receiver,
		 * who waits on the held one, has posted the receive) */
		if (ph < l->nheld && ps == nsend)
			moved |= eg__post_some(c, l, l->nrecv + nsend, l->nheld,
					       &ph);
		if (c->rc)
			continue;
		/* -FI_EAGAIN or not: reading the CQ is what progresses */
		if (eg__poll(c, &ndone) || moved)
			idle = 0;
		else
			eg__idle(++idle);
	}
	c->busy_s += eg__fabric_mono() - t0;
}

/* Late mode: the sends held from the last call go now, the job having
 * no next call yet (its peers may wait on them). Called with st->mu
 * held; drops it while sending. */
static void eg__flush_late(eg__comm_t *c, double limit_s)
{
	eg__fab_t *st = c->st;
	eg__list_t l = {.ops = c->late, .nops = c->nlate, .nheld = c->nlate};

	c->late = NULL;
	c->nlate = c->cap_late = 0;
	pthread_mutex_unlock(&st->mu);
	eg__run(c, &l, NULL, eg__fabric_mono() + limit_s);
	if (c->rc)
		c->flush_rc = c->rc;
	/* done, or cancelled with the endpoints closed: free either way */
	for (size_t i = 0; i < l.nops; i++)
		free((void *)l.ops[i].sbuf);
	free(l.ops);
	pthread_mutex_lock(&st->mu);
}

/* Waits for the next call (or quit). Late mode: held sends that no call
 * took within EG__LATE_S are flushed. Called and returns with st->mu. */
static void eg__await_call(eg__comm_t *c)
{
	eg__fab_t *st = c->st;

	while (!st->quit && c->gen_seen == st->gen) {
		struct timespec dl;
		double t = eg__fabric_mono() + EG__LATE_S;

		if (!c->nlate) {
			pthread_cond_wait(&st->go, &st->mu);
			continue;
		}
		dl.tv_sec = (time_t)t;
		dl.tv_nsec = (long)((t - (double)dl.tv_sec) * 1e9);
		if (pthread_cond_timedwait(&st->go, &st->mu, &dl) ==
			ETIMEDOUT &&
		    !st->quit && c->gen_seen == st->gen && c->nlate)
			eg__flush_late(c, st->timeout_s);
	}
}

void *eg__fabric_thread(void *arg)
{
	eg__comm_t *c = arg;
	eg__fab_t *st = c->st;

	pthread_mutex_lock(&st->mu);
	for (;;) {
		eg__await_call(c);
		if (st->quit) {
			/* a peer's last call may wait on a held send */
			if (c->nlate && !st->broken)
				eg__flush_late(c, 2.0);
			break;
		}
		c->gen_seen = st->gen;
		pthread_mutex_unlock(&st->mu);
		eg__list_t l = {.ops = c->ops,
				.nops = c->nops,
				.nrecv = c->nrecv,
				.nheld = c->nlate_busy};
		eg__run(c, &l, &st->abort, 0);
		pthread_mutex_lock(&st->mu);
		st->ndone++;
		if (c->rc)
			atomic_store(&st->abort, 1); /* stop the others */
		pthread_cond_signal(&st->fin);
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}
