/* The libfabric transport's state, shared by its files (lib/transport/
 * fabric.c: the calls; fabric_ep.c: endpoints; fabric_progress.c: the
 * progress threads; fabric_setup.c: create, exchange, destroy). Design
 * notes: docs/transport.md. */
#ifndef EG_TRANSPORT_FABRIC_STATE_H
#define EG_TRANSPORT_FABRIC_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "epgate/transport.h"

/* Largest message we post: keeps one op's footprint bounded whatever the
 * provider allows. eg_xport_opts_t.chunk (the message-rate benchmark),
 * else EPGATE_FABRIC_CHUNK (bytes, for tests), lowers it. */
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
	uint8_t *route;	  /* per rank: EG__INTRA or EG__INTER */
	size_t chunk;	  /* agreed by all ranks */
	size_t chunk_ask; /* eg_xport_opts_t.chunk; 0: none */
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

/* fabric_ep.c */
void eg__fabric_seterr(eg__fab_t *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
double eg__fabric_mono(void);
int eg__fabric_is_loop4(const void *addr, size_t len);
int eg__fabric_open_ep(eg__fab_t *st, eg__ep_t *e, const char *prov, char *err,
		       size_t errlen);
void eg__fabric_close_ep(eg__ep_t *e);
/* fabric_progress.c: one comm's progress thread */
void *eg__fabric_thread(void *arg);
/* fabric_setup.c: the ops table's create and destroy */
int eg__fabric_create(const eg_world_t *w, eg_boot_t *b,
		      const eg_xport_opts_t *o, void **state, char *err,
		      size_t errlen);
void eg__fabric_destroy(void *state);

#endif
