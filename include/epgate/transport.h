/* Transports move bytes between ranks. The one primitive engines need is
 * an all-to-all-v of byte buffers; a transport splits it into messages
 * (chunked to its size limit) over num_comms independent endpoints, each
 * with its own progress thread. Ops table with a size field: grow by
 * appending. */
#ifndef EPGATE_TRANSPORT_H
#define EPGATE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/boot.h"
#include "epgate/world.h"

#define EG_COMMS_MAX 16

typedef struct eg_xport_opts {
	size_t size;	      /* sizeof(eg_xport_opts_t) */
	const char *provider; /* "shm", "tcp", ... or NULL: auto per pair */
	uint32_t num_comms;   /* K >= 1 */
	double timeout_s;     /* deadline per blocking call */
	/* appended: fabric: bytes per message when below the cap (the
	 * message-rate benchmark); 0: EPGATE_FABRIC_CHUNK's, else the cap */
	size_t chunk;
} eg_xport_opts_t;

typedef struct eg_xport_stats {
	uint32_t num_comms;
	uint64_t ops_posted[EG_COMMS_MAX]; /* sends + recvs per endpoint */
	uint64_t bytes_sent;		   /* to other ranks */
	uint64_t bytes_sent_xnode;	   /* to ranks on other nodes */
	double busy_s[EG_COMMS_MAX];	   /* progress thread time in calls */
	char provider_intra[32];	   /* provider used within a node */
	char provider_inter[32];	   /* provider used across nodes */
} eg_xport_stats_t;

typedef struct eg_xport_ops {
	size_t size;
	const char *name;
	int (*create)(const eg_world_t *w, eg_boot_t *b,
		      const eg_xport_opts_t *o, void **state, char *err,
		      size_t errlen);
	/* send[p] (send_bytes[p]) goes to rank p, recv[p] (recv_bytes[p],
	 * exact, known in advance) comes from rank p; p == self is a copy.
	 * Returns when all are complete, or an error naming the peer. */
	int (*alltoallv)(void *state, const void *const *send,
			 const size_t *send_bytes, void *const *recv,
			 const size_t *recv_bytes);
	int (*stats)(void *state, eg_xport_stats_t *s);
	const char *(*error)(void *state); /* last error, one line */
	void (*destroy)(void *state);
	/* Bytes sent to other ranks so far, and nothing else: cheap enough
	 * to read inside a timed interval (stats may read logs). Optional. */
	int (*sent)(void *state, uint64_t *bytes);
} eg_xport_ops_t;

/* libfabric RDM, tagged messages (lib/transport/fabric.c); only when
 * built with libfabric (HAVE_LIBFABRIC). */
extern const eg_xport_ops_t eg_xport_fabric;

#endif
