/* What libfabric offers on this host (lib/transport/fabric_probe.c): RDM
 * endpoints with tagged messages, as the fabric transport opens them,
 * after FI_PROVIDER's filter. */
#ifndef EPGATE_FABRIC_PROBE_H
#define EPGATE_FABRIC_PROBE_H

#include <stddef.h>

/* The distinct provider names, ", "-joined, into out; returns how many
 * (0 without libfabric or with none). */
int eg_fabric_offered(char *out, size_t len);

/* EG_OK when prov (a libfabric name: "efa", "tcp;ofi_rxm") opens here;
 * EG_ENOSYS when it is absent (err: what libfabric offers instead);
 * EG_EFABRIC on another libfabric error. */
int eg_fabric_probe(const char *prov, char *err, size_t errlen);

#endif
