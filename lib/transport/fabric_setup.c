/* libfabric transport: create (routes, endpoint sets, the name exchange)
 * and destroy (lib/transport/fabric_state.h). */
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
#include "epgate/sized.h"
#include "epgate/transport.h"
#include "lib/transport/fabric_int.h"
#include "lib/transport/fabric_state.h"

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

void eg__fabric_destroy(void *state)
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
			eg__fabric_close_ep(&c->set[s]);
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

	if (st->chunk_ask) {
		if (st->chunk_ask < lim)
			lim = st->chunk_ask;
	} else if (env && *env) {
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
			rc = eg__fabric_open_ep(st, &c->set[s], want[s], e2,
						sizeof(e2));
			/* the automatic choice's efa absent: fall back, and
			 * say so (only the evidence would show it) */
			if (rc == EG_ENOSYS && s == EG__INTER &&
			    ch.fallback[0]) {
				eg__fabric_close_ep(&c->set[s]);
				eg__fallback_warn(&st->w, k, want[s],
						  ch.fallback, e2);
				want[s] = ch.fallback;
				rc = eg__fabric_open_ep(st, &c->set[s], want[s],
							e2, sizeof(e2));
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
			    !eg__fabric_is_loop4(nm->name, len)) {
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

int eg__fabric_create(const eg_world_t *w, eg_boot_t *b,
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
	st->chunk_ask = EG_HAS(o, eg_xport_opts_t, chunk) ? o->chunk : 0;
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
		if (pthread_create(&st->comm[k].thread, NULL, eg__fabric_thread,
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
	eg__fabric_destroy(st);
	return rc;
}

/* "2, 3, 5" from the ranks flagged in a per-rank array. */
