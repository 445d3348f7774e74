/* libfabric transport: errors, the clock and the endpoints (open, close)
 * (lib/transport/fabric_state.h). */
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

void eg__fabric_seterr(eg__fab_t *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
}

double eg__fabric_mono(void)
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

int eg__fabric_is_loop4(const void *addr, size_t len)
{
	const struct sockaddr_in *s = addr;

	if (!addr || len < sizeof(*s) || s->sin_family != AF_INET)
		return 0;
	return (ntohl(s->sin_addr.s_addr) >> 24) == 127;
}

/* The first fi_info that fits prov (RDM, tagged, host buffers) into
 * *info, and, when the job must stay on this host, one bound to
 * 127.0.0.0/8. */
static int eg__fabric_pick_info(const eg__fab_t *st, const char *prov,
				struct fi_info **info, char *err, size_t errlen)
{
	struct fi_info *hints, *list = NULL, *fi;
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
		    eg__fabric_is_loop4(fi->src_addr, fi->src_addrlen))
			break;
	if (!fi) {
		snprintf(err, errlen,
			 "%s: no interface on 127.0.0.0/8 (all ranks run on "
			 "this host; traffic must stay on loopback)",
			 prov);
		fi_freeinfo(list);
		return EG_EFABRIC;
	}
	*info = fi_dupinfo(fi);
	fi_freeinfo(list);
	return *info ? EG_OK : EG_ENOMEM;
}

/* e's fabric, domain, completion queue, address vector and enabled
 * endpoint, for e->info; a libfabric error code. */
static int eg__fabric_open_objs(const eg__fab_t *st, eg__ep_t *e)
{
	struct fi_info *fi = e->info;
	struct fi_cq_attr cqa;
	struct fi_av_attr ava;
	int rc;

	rc = fi_fabric(fi->fabric_attr, &e->fabric, NULL);
	if (rc)
		return rc;
	rc = fi_domain(e->fabric, fi, &e->domain, NULL);
	if (rc)
		return rc;
	memset(&cqa, 0, sizeof(cqa));
	cqa.format = FI_CQ_FORMAT_TAGGED;
	cqa.wait_obj = FI_WAIT_NONE;
	cqa.size = fi->tx_attr->size + fi->rx_attr->size;
	rc = fi_cq_open(e->domain, &cqa, &e->cq, NULL);
	if (rc)
		return rc;
	memset(&ava, 0, sizeof(ava));
	ava.type = FI_AV_TABLE;
	ava.count = st->size;
	rc = fi_av_open(e->domain, &ava, &e->av, NULL);
	if (rc)
		return rc;
	rc = fi_endpoint(e->domain, fi, &e->ep, NULL);
	if (rc)
		return rc;
	rc = fi_ep_bind(e->ep, &e->av->fid, 0);
	if (!rc)
		rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_enable(e->ep);
	return rc;
}

/* One set's endpoint for one comm: the first fi_info that fits, and, when
 * the job must stay on this host, one bound to 127.0.0.0/8. */
int eg__fabric_open_ep(eg__fab_t *st, eg__ep_t *e, const char *prov, char *err,
		       size_t errlen)
{
	struct fi_info *fi;
	int rc;

	rc = eg__fabric_pick_info(st, prov, &e->info, err, errlen);
	if (rc < 0)
		return rc;
	fi = e->info;
	rc = eg__fabric_open_objs(st, e);
	if (rc) {
		snprintf(err, errlen,
			 "%s: opening fabric/domain/cq/av/endpoint: %s", prov,
			 fi_strerror(-rc));
		return EG_EFABRIC;
	}
	/* some providers answer a full queue with -FI_ENOMEM, not
	 * -FI_EAGAIN: never post past the depth they advertise */
	e->depth[0] = fi->rx_attr->size ? fi->rx_attr->size : SIZE_MAX;
	e->depth[1] = fi->tx_attr->size ? fi->tx_attr->size : SIZE_MAX;
	if (fi->domain_attr->cq_data_size >= 8)
		e->data_mask = UINT64_MAX;
	else if (fi->domain_attr->cq_data_size >= 4)
		e->data_mask = UINT32_MAX;
	return EG_OK;
}

void eg__fabric_close_ep(eg__ep_t *e)
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
