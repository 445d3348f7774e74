/* libfabric transport: RDM endpoints, tagged messages, K comms each driven
 * by its own progress thread. Design notes: docs/transport.md. Built with
 * libfabric only (Makefile.am). */
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

/* Largest message we post: keeps one op's footprint bounded whatever the
 * provider allows. EPGATE_FABRIC_CHUNK (bytes) lowers it, for tests and
 * for the message-rate benchmark. */
#define EG_FABRIC_CHUNK_CAP ((size_t)1 << 20)
#define EG__NAME_MAX	    256 /* endpoint name bytes in the exchange */
#define EG__CQ_BATCH	    16
#define EG__DRAIN_S	    1.0 /* after an error: time to reap posted ops */
#define EG__DEFAULT_TMO	    60.0
#define EG__SPIN_POLLS	    256	  /* idle polls before napping */
#define EG__NAP_NS	    20000 /* one nap, in ns */

/* after the deadline and the drain, this long for a thread still inside
 * the provider: then the process cannot go on safely */
#define EG__STUCK_S 5.0
#define EG__JOIN_S  5.0	 /* destroy waits this long for each thread */
#define EG__LATE_S  0.05 /* late mode: held sends go after this idle */

enum { EG__INTRA, EG__INTER, EG__SETS };

typedef struct eg__op {
	struct fi_context2 ctx; /* provider scratch (FI_CONTEXT2 mode) */
	const void *sbuf;	/* send: source */
	void *rbuf;		/* recv: destination */
	size_t len;
	uint64_t total; /* bytes of the whole peer buffer (cq data) */
	uint64_t tag;
	uint32_t peer, chunk;
	uint8_t is_send, set, done, stuck;
} eg__op_t;

typedef struct eg__ep {
	struct fi_info *info; /* NULL: set not opened */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	uint64_t data_mask; /* remote CQ data bits, 0 if unsupported */
	size_t depth[2];    /* queue depth: [0] receives, [1] sends */
	size_t inflight[2]; /* posted, not yet completed */
} eg__ep_t;

struct eg__fab;

typedef struct eg__comm {
	struct eg__fab *st;
	unsigned idx;
	eg__ep_t set[EG__SETS];
	fi_addr_t *addr; /* per rank, in the AV of its set */
	pthread_t thread;
	int started;
	/* this call's work: nrecv recvs then the sends */
	eg__op_t *ops;
	size_t nops, nrecv, cap;
	/* late mode: sends held from the last call (late, with their
	 * buffers), from this one (late_next), and the buffers of those
	 * riding in this call's ops (late_busy) */
	eg__op_t *late, *late_next;
	size_t nlate, nlate_next, cap_late, cap_late_next;
	void **late_busy;
	size_t nlate_busy;
	int flush_rc; /* a flush of held sends failed: the next call does */
	uint64_t gen_seen;
	int rc;
	int leaked; /* ops the provider kept: endpoints closed */
	char err[256];
	uint64_t ops_posted;
	double busy_s;
} eg__comm_t;

typedef struct eg__fab {
	eg_world_t w; /* a copy: the caller's may go away */
	uint32_t rank, size, K;
	uint8_t *route; /* per rank: EG__INTRA or EG__INTER */
	size_t chunk;	/* agreed by all ranks */
	double timeout_s;
	int loopback;
	char prov[EG__SETS][32];
	eg__comm_t comm[EG_COMMS_MAX];
	pthread_mutex_t mu;
	pthread_cond_t go, fin;
	int sync_ok;
	uint64_t gen; /* bumped per call, wakes the threads */
	unsigned ndone;
	int quit;
	atomic_int abort;
	uint32_t seq; /* alltoallv calls so far */
	int broken;
	unsigned modes;	     /* EPGATE_FABRIC_TEST */
	uint64_t skew_state; /* skew mode's generator */
	uint64_t bytes_sent, bytes_sent_xnode;
	char err[512];
} eg__fab_t;

static void eg__seterr(eg__fab_t *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void eg__seterr(eg__fab_t *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
}

static double eg__mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int eg__is_ip_prov(const char *p)
{
	return !strncmp(p, "tcp", 3) || !strncmp(p, "sockets", 7) ||
	       !strncmp(p, "udp", 3);
}

static int eg__is_loop4(const void *addr, size_t len)
{
	const struct sockaddr_in *s = addr;

	if (!addr || len < sizeof(*s) || s->sin_family != AF_INET)
		return 0;
	return (ntohl(s->sin_addr.s_addr) >> 24) == 127;
}

/* One set's endpoint for one comm: the first fi_info that fits, and, when
 * the job must stay on this host, one bound to 127.0.0.0/8. */
static int eg__open_ep(eg__fab_t *st, eg__ep_t *e, const char *prov, char *err,
		       size_t errlen)
{
	struct fi_info *hints, *list = NULL, *fi;
	struct fi_cq_attr cqa;
	struct fi_av_attr ava;
	int rc, ip = eg__is_ip_prov(prov);

	hints = fi_allocinfo();
	if (!hints)
		return EG_ENOMEM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	/* host buffers, no registration: everything but FI_MR_LOCAL */
	hints->domain_attr->mr_mode =
	    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->fabric_attr->prov_name = strdup(prov);
	if (st->loopback && ip)
		hints->addr_format = FI_SOCKADDR_IN;
	rc = fi_getinfo(FI_VERSION(1, 14), NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (rc == -FI_ENODATA &&
	    eg_fabric_probe(prov, err, errlen) == EG_ENOSYS)
		return EG_ENOSYS; /* err says what the host has instead */
	if (rc) {
		snprintf(err, errlen, "fi_getinfo(%s, RDM, tagged): %s", prov,
			 fi_strerror(-rc));
		return EG_EFABRIC;
	}
	for (fi = list; fi; fi = fi->next)
		if (!(st->loopback && ip) ||
		    eg__is_loop4(fi->src_addr, fi->src_addrlen))
			break;
	if (!fi) {
		snprintf(err, errlen,
			 "%s: no interface on 127.0.0.0/8 (all ranks run on "
			 "this host; traffic must stay on loopback)",
			 prov);
		fi_freeinfo(list);
		return EG_EFABRIC;
	}
	e->info = fi_dupinfo(fi);
	fi_freeinfo(list);
	if (!e->info)
		return EG_ENOMEM;
	fi = e->info;
	rc = fi_fabric(fi->fabric_attr, &e->fabric, NULL);
	if (rc)
		goto fail_fi;
	rc = fi_domain(e->fabric, fi, &e->domain, NULL);
	if (rc)
		goto fail_fi;
	memset(&cqa, 0, sizeof(cqa));
	cqa.format = FI_CQ_FORMAT_TAGGED;
	cqa.wait_obj = FI_WAIT_NONE;
	cqa.size = fi->tx_attr->size + fi->rx_attr->size;
	rc = fi_cq_open(e->domain, &cqa, &e->cq, NULL);
	if (rc)
		goto fail_fi;
	memset(&ava, 0, sizeof(ava));
	ava.type = FI_AV_TABLE;
	ava.count = st->size;
	rc = fi_av_open(e->domain, &ava, &e->av, NULL);
	if (rc)
		goto fail_fi;
	rc = fi_endpoint(e->domain, fi, &e->ep, NULL);
	if (rc)
		goto fail_fi;
	rc = fi_ep_bind(e->ep, &e->av->fid, 0);
	if (!rc)
		rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_enable(e->ep);
	if (rc)
		goto fail_fi;
	/* some providers answer a full queue with -FI_ENOMEM, not
	 * -FI_EAGAIN: never post past the depth they advertise */
	e->depth[0] = fi->rx_attr->size ? fi->rx_attr->size : SIZE_MAX;
	e->depth[1] = fi->tx_attr->size ? fi->tx_attr->size : SIZE_MAX;
	if (fi->domain_attr->cq_data_size >= 8)
		e->data_mask = UINT64_MAX;
	else if (fi->domain_attr->cq_data_size >= 4)
		e->data_mask = UINT32_MAX;
	return EG_OK;
fail_fi:
	snprintf(err, errlen, "%s: opening fabric/domain/cq/av/endpoint: %s",
		 prov, fi_strerror(-rc));
	return EG_EFABRIC;
}

static void eg__close_ep(eg__ep_t *e)
{
	if (e->ep)
		fi_close(&e->ep->fid);
	if (e->av)
		fi_close(&e->av->fid);
	if (e->cq)
		fi_close(&e->cq->fid);
	if (e->domain)
		fi_close(&e->domain->fid);
	if (e->fabric)
		fi_close(&e->fabric->fid);
	if (e->info)
		fi_freeinfo(e->info);
	memset(e, 0, sizeof(*e));
}

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
	end = eg__mono() + EG__DRAIN_S;
	while (*ndone < posted && eg__mono() < end)
		if (!eg__poll(c, ndone))
			sched_yield();
	if (*ndone < posted) {
		c->leaked = (int)(posted - *ndone);
		for (int s = EG__SETS - 1; s >= 0; s--)
			eg__close_ep(&c->set[s]);
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
	double t0 = eg__mono();

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
		    (!abort && eg__mono() > deadline)) {
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
	c->busy_s += eg__mono() - t0;
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
	eg__run(c, &l, NULL, eg__mono() + limit_s);
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
		double t = eg__mono() + EG__LATE_S;

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

static void *eg__thread(void *arg)
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

/* ---- ops table ---- */

/* Joins c's thread within EG__JOIN_S; <0 if it does not end. */
static int eg__join(eg__comm_t *c)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)EG__JOIN_S;
	return pthread_timedjoin_np(c->thread, NULL, &dl) ? -1 : 0;
}

static void eg__free_late(eg__comm_t *c)
{
	for (size_t i = 0; i < c->nlate; i++)
		free((void *)c->late[i].sbuf);
	for (size_t i = 0; i < c->nlate_next; i++)
		free((void *)c->late_next[i].sbuf);
	for (size_t i = 0; i < c->nlate_busy; i++)
		free(c->late_busy[i]);
	free(c->late);
	free(c->late_next);
	free(c->late_busy);
}

static void eg__destroy(void *state)
{
	eg__fab_t *st = state;

	if (!st)
		return;
	if (st->sync_ok) {
		pthread_mutex_lock(&st->mu);
		st->quit = 1;
		pthread_cond_broadcast(&st->go);
		pthread_mutex_unlock(&st->mu);
	}
	for (unsigned k = 0; k < EG_COMMS_MAX; k++)
		if (st->comm[k].started && eg__join(&st->comm[k]) < 0) {
			/* it may still use the endpoints and the state: leave
			 * them be (a leak, not a use after free) */
			fprintf(stderr,
				"fabric: rank %u: progress thread %u did not "
				"end within %.0f s; its transport is left "
				"allocated\n",
				st->rank, k, EG__JOIN_S);
			return;
		}
	for (unsigned k = 0; k < EG_COMMS_MAX; k++) {
		eg__comm_t *c = &st->comm[k];

		for (int s = EG__SETS - 1; s >= 0; s--)
			eg__close_ep(&c->set[s]);
		eg__free_late(c);
		free(c->addr);
		free(c->ops);
	}
	if (st->sync_ok) {
		pthread_cond_destroy(&st->fin);
		pthread_cond_destroy(&st->go);
		pthread_mutex_destroy(&st->mu);
	}
	free(st->route);
	free(st);
}

/* Exchange blob of one rank: its chunk limit, then per comm and set the
 * endpoint name (length 0: set not opened). */
typedef struct eg__name {
	uint32_t len;
	uint8_t name[EG__NAME_MAX];
} eg__name_t;

static size_t eg__blob_len(uint32_t K)
{
	return sizeof(uint64_t) + (size_t)K * EG__SETS * sizeof(eg__name_t);
}

static eg__name_t *eg__blob_name(uint8_t *blob, uint32_t K, uint32_t r,
				 unsigned k, int s)
{
	uint8_t *b = blob + (size_t)r * eg__blob_len(K) + sizeof(uint64_t);

	return (eg__name_t *)(b + ((size_t)k * EG__SETS + (size_t)s) *
				      sizeof(eg__name_t));
}

static int eg__sync_init(eg__fab_t *st)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca))
		return EG_ESYS;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->go, &ca); /* late mode times its waits */
	pthread_cond_init(&st->fin, &ca);
	pthread_condattr_destroy(&ca);
	st->sync_ok = 1;
	return EG_OK;
}

static size_t eg__chunk_limit(const eg__fab_t *st)
{
	size_t lim = EG_FABRIC_CHUNK_CAP;
	const char *env = getenv("EPGATE_FABRIC_CHUNK");

	if (env && *env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);

		if (!*end && v > 0 && v < lim)
			lim = (size_t)v;
	}
	for (unsigned k = 0; k < st->K; k++)
		for (int s = 0; s < EG__SETS; s++) {
			const struct fi_info *fi = st->comm[k].set[s].info;

			if (fi && fi->ep_attr->max_msg_size < lim)
				lim = fi->ep_attr->max_msg_size;
		}
	return lim;
}

/* The providers (FI_PROVIDER and the caller's ask, lib/transport/
 * fabric_choice.c) and each peer's set: one provider for every pair when
 * the choice is fixed (set INTRA), else one within a (virtual) node and
 * one across. need[s]: set s carries some pair. */
static int eg__route(eg__fab_t *st, const eg_xport_opts_t *o,
		     eg_fabric_choice_t *ch, int need[EG__SETS], char *err,
		     size_t errlen)
{
	const eg_world_t *w = &st->w;
	char e2[256];
	int rc = eg_fabric_choose(getenv("FI_PROVIDER"), o->provider,
				  w->from_slurm, ch, e2, sizeof(e2));

	if (rc < 0) {
		snprintf(err, errlen, "fabric: %s", e2);
		return rc;
	}
	for (uint32_t p = 0; p < w->size; p++) {
		int xn = eg_world_node_of(w, p) != eg_world_node_of(w, w->rank);

		st->route[p] = (!ch->fixed && xn) ? EG__INTER : EG__INTRA;
		if (p != w->rank)
			need[st->route[p]] = 1;
	}
	if (ch->fixed)
		need[EG__INTRA] = 1; /* open it even alone, to check it */
	return EG_OK;
}

/* Once per job, from rank 0: cross-node traffic leaves the fast
 * provider for the automatic fallback. */
static void eg__fallback_warn(const eg_world_t *w, unsigned k, const char *from,
			      const char *to, const char *why)
{
	if (w->rank != 0 || k != 0)
		return;
	fprintf(stderr,
		"epgate: warning: %s; cross-node traffic falls back to %s "
		"(set FI_PROVIDER=%s to demand it, or FI_PROVIDER=tcp to "
		"choose tcp)\n",
		why, to, from);
	fflush(stderr);
}

/* Every comm's endpoints: the sets its peers' routes need, with the
 * automatic fallback where the first choice is absent. */
static int eg__open_sets(eg__fab_t *st, const eg_xport_opts_t *o, char *err,
			 size_t errlen)
{
	eg_fabric_choice_t ch;
	const char *want[EG__SETS];
	int need[EG__SETS] = {0, 0}, rc;

	if ((rc = eg__route(st, o, &ch, need, err, errlen)) < 0)
		return rc;
	want[EG__INTRA] = ch.intra;
	want[EG__INTER] = ch.inter;
	for (unsigned k = 0; k < st->K; k++) {
		eg__comm_t *c = &st->comm[k];

		c->st = st;
		c->idx = k;
		c->addr = calloc(st->size, sizeof(*c->addr));
		if (!c->addr) {
			snprintf(err, errlen, "fabric: %s",
				 eg_strerror(EG_ENOMEM));
			return EG_ENOMEM;
		}
		for (int s = 0; s < EG__SETS; s++) {
			char e2[400];

			if (!need[s])
				continue;
			rc = eg__open_ep(st, &c->set[s], want[s], e2,
					 sizeof(e2));
			/* the automatic choice's efa absent: fall back, and
			 * say so (only the evidence would show it) */
			if (rc == EG_ENOSYS && s == EG__INTER &&
			    ch.fallback[0]) {
				eg__close_ep(&c->set[s]);
				eg__fallback_warn(&st->w, k, want[s],
						  ch.fallback, e2);
				want[s] = ch.fallback;
				rc = eg__open_ep(st, &c->set[s], want[s], e2,
						 sizeof(e2));
			}
			if (rc) {
				/* FI_PROVIDER's own failure names it already */
				int say =
				    ch.why[0] && strncmp(ch.why, "FI_", 3);
				snprintf(err, errlen,
					 "fabric: comm %u: %s%s%s%s", k, e2,
					 say ? " (asked by " : "",
					 say ? ch.why : "", say ? ")" : "");
				return rc;
			}
		}
	}
	for (int s = 0; s < EG__SETS; s++)
		if (st->comm[0].set[s].info)
			snprintf(
			    st->prov[s], sizeof(st->prov[s]), "%s",
			    st->comm[0].set[s].info->fabric_attr->prov_name);
	return EG_OK;
}

/* This rank's endpoint names into its blob (after the chunk limit). */
static int eg__publish(eg__fab_t *st, uint8_t *mine, char *err, size_t errlen)
{
	for (unsigned k = 0; k < st->K; k++)
		for (int s = 0; s < EG__SETS; s++) {
			eg__ep_t *e = &st->comm[k].set[s];
			eg__name_t *nm =
			    (eg__name_t *)(mine + sizeof(uint64_t) +
					   ((size_t)k * EG__SETS + (size_t)s) *
					       sizeof(*nm));
			size_t len = EG__NAME_MAX;

			if (!e->ep)
				continue;
			int rc = fi_getname(&e->ep->fid, nm->name, &len);
			if (rc) {
				snprintf(err, errlen,
					 "fabric: fi_getname (%s): %s",
					 st->prov[s], fi_strerror(-rc));
				return EG_EFABRIC;
			}
			if (st->loopback &&
			    e->info->addr_format == FI_SOCKADDR_IN &&
			    !eg__is_loop4(nm->name, len)) {
				snprintf(err, errlen,
					 "fabric: %s endpoint is not on "
					 "127.0.0.0/8",
					 st->prov[s]);
				return EG_EFABRIC;
			}
			nm->len = (uint32_t)len;
		}
	return EG_OK;
}

/* Every peer's name of the set its route uses, into that set's AV. */
static int eg__insert_peers(eg__fab_t *st, uint8_t *blob, char *err,
			    size_t errlen)
{
	int rc;

	for (unsigned k = 0; k < st->K; k++) {
		eg__comm_t *c = &st->comm[k];

		for (uint32_t p = 0; p < st->size; p++) {
			int s = st->route[p];
			eg__name_t *nm = eg__blob_name(blob, st->K, p, k, s);

			if (p == st->rank)
				continue;
			if (!nm->len) {
				snprintf(err, errlen,
					 "fabric: rank %u published no %s "
					 "endpoint for comm %u",
					 p, st->prov[s], k);
				return EG_EFABRIC;
			}
			rc = fi_av_insert(c->set[s].av, nm->name, 1,
					  &c->addr[p], 0, NULL);
			if (rc != 1) {
				snprintf(err, errlen,
					 "fabric: inserting rank %u's %s "
					 "address: %s",
					 p, st->prov[s],
					 fi_strerror(rc < 0 ? -rc : FI_EINVAL));
				return EG_EFABRIC;
			}
		}
	}
	return EG_OK;
}

/* One allgather for every endpoint name and the chunk limits, with the
 * bootstrap's own deadline (a short per-call deadline must not fail a
 * start that is slow under load); then the peers into the AVs. */
static int eg__exchange(eg__fab_t *st, eg_boot_t *b, char *err, size_t errlen)
{
	size_t bl = eg__blob_len(st->K);
	uint8_t *blob = calloc((size_t)st->size + 1, bl);
	uint64_t lim, all_lim = UINT64_MAX;
	int rc;

	if (!blob) {
		snprintf(err, errlen, "fabric: %s", eg_strerror(EG_ENOMEM));
		return EG_ENOMEM;
	}
	uint8_t *mine = blob + (size_t)st->size * bl;
	lim = eg__chunk_limit(st);
	memcpy(mine, &lim, sizeof(lim));
	if ((rc = eg__publish(st, mine, err, errlen)) < 0)
		goto out;
	rc = eg_boot_allgather(b, mine, bl, blob, st->w.timeout_s);
	if (rc) {
		snprintf(err, errlen, "fabric: exchanging endpoint names: %s",
			 eg_boot_error(b));
		goto out;
	}
	for (uint32_t r = 0; r < st->size; r++) {
		memcpy(&lim, blob + (size_t)r * bl, sizeof(lim));
		if (lim < all_lim)
			all_lim = lim;
	}
	st->chunk = (size_t)all_lim;
	rc = eg__insert_peers(st, blob, err, errlen);
out:
	free(blob);
	return rc;
}

static int eg__create(const eg_world_t *w, eg_boot_t *b,
		      const eg_xport_opts_t *o, void **state, char *err,
		      size_t errlen)
{
	eg__fab_t *st = NULL;
	int rc;

	*state = NULL;
	/* libfabric's shm regions left by a SIGKILLed process whose pid we
	 * now have make opening our endpoint fail with EBUSY */
	eg_shm_sweep(getpid());
	eg_shm_sweep_dead();
	if (!w || !b || !o || o->size < sizeof(*o) || o->num_comms < 1 ||
	    o->num_comms > EG_COMMS_MAX || w->size < 1 ||
	    w->size > (1u << EG_FABRIC_SRC_BITS) || w->ranks_per_node < 1) {
		snprintf(err, errlen,
			 "fabric: bad options (num_comms 1..%d, world of "
			 "1..%u ranks)",
			 EG_COMMS_MAX, 1u << EG_FABRIC_SRC_BITS);
		return EG_EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return EG_ENOMEM;
	st->w = *w;
	st->rank = w->rank;
	st->size = w->size;
	st->K = o->num_comms;
	if ((rc = eg_fabric_test_parse(getenv("EPGATE_FABRIC_TEST"), &st->modes,
				       err, errlen)) < 0) {
		free(st);
		return rc;
	}
	st->skew_state = 0x9e3779b97f4a7c15ull * (w->rank + 1);
	st->timeout_s = o->timeout_s > 0   ? o->timeout_s
			: w->timeout_s > 0 ? w->timeout_s
					   : EG__DEFAULT_TMO;
	/* the local launcher keeps every rank on this host */
	st->loopback = !w->from_slurm;
	if (st->loopback) {
		setenv("FI_TCP_IFACE", "lo", 0);
		setenv("FI_SOCKETS_IFACE", "lo", 0);
	}
	rc = eg__sync_init(st);
	if (rc)
		goto fail;
	st->route = calloc(w->size, 1);
	if (!st->route) {
		rc = EG_ENOMEM;
		goto fail;
	}
	if ((rc = eg__open_sets(st, o, err, errlen)) < 0 ||
	    (rc = eg__exchange(st, b, err, errlen)) < 0)
		goto fail_quiet;
	/* providers loaded since main may have installed handlers: gone
	 * before the first progress thread exists */
	eg_signals_own();
	for (unsigned k = 0; k < st->K; k++) {
		if (pthread_create(&st->comm[k].thread, NULL, eg__thread,
				   &st->comm[k])) {
			rc = EG_ESYS;
			goto fail;
		}
		st->comm[k].started = 1;
	}
	*state = st;
	return EG_OK;
fail:
	snprintf(err, errlen, "fabric: %s", eg_strerror(rc));
fail_quiet:
	eg__destroy(st);
	return rc;
}

/* "2, 3, 5" from the ranks flagged in a per-rank array. */
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
	eg__seterr(st,
		   "alltoallv #%u on rank %u: %s; still waiting on messages "
		   "from ranks [%s]; sends to ranks [%s] not complete",
		   st->seq, st->rank, why, rl[0] ? rl : "none",
		   sl[0] ? sl : "none");
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
		eg__seterr(st,
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
		eg__seterr(st, "alltoallv: out of memory");
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
	double deadline = eg__mono() + st->timeout_s, t;
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
			eg__seterr(st, "alltoallv #%u on rank %u, comm %u: %s",
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
		eg__seterr(st, "transport unusable after an earlier error; "
			       "destroy it");
		return EG_EFABRIC;
	}
	me = st->rank;
	if (st->modes & EG_FABRIC_TEST_SKEW)
		eg_fabric_skew(&st->skew_state);
	st->seq++;
	if (send_bytes[me] != recv_bytes[me]) {
		eg__seterr(st,
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
    .create = eg__create,
    .alltoallv = eg__alltoallv,
    .stats = eg__stats,
    .error = eg__error,
    .destroy = eg__destroy,
    .sent = eg__sent,
};
