/* Which libfabric providers a job uses, from what the caller asks
 * (--provider, a profile) and what FI_PROVIDER lets libfabric offer.
 * Pure string logic (lib/transport/fabric_choice.c), so every build can
 * test it; the fabric transport and `epgate preflight` apply it, and
 * lib/transport/fabric_probe.c asks libfabric what is really there. */
#ifndef EPGATE_FABRIC_CHOICE_H
#define EPGATE_FABRIC_CHOICE_H

#include <stddef.h>

#define EG_PROV_MAX 32

typedef struct eg_fabric_choice {
	/* libfabric names ("shm", "tcp;ofi_rxm", "efa"); one provider for
	 * every pair when fixed */
	char intra[EG_PROV_MAX], inter[EG_PROV_MAX];
	int fixed;
	/* the automatic choice across real nodes only: tried when inter is
	 * absent, with a warning on stderr; "" when inter was demanded */
	char fallback[EG_PROV_MAX];
	/* what demanded the choice, for messages: "--provider tcp",
	 * "FI_PROVIDER=efa", or "" for the automatic choice */
	char why[EG_PROV_MAX + 24];
} eg_fabric_choice_t;

/* User-facing names to libfabric's ("tcp" -> "tcp;ofi_rxm", "udp" ->
 * "udp;ofi_rxd", "verbs" -> "verbs;ofi_rxm"; others unchanged). */
const char *eg_fabric_prov_map(const char *p);

/* Chooses for a job. fi_provider: getenv("FI_PROVIDER") (NULL if
 * unset); asked: the caller's provider, NULL or "auto" for the automatic
 * choice; real_nodes: ranks sit on different hosts (Slurm), so shm cannot
 * carry cross-node pairs and efa is worth trying.
 *  - asked P: P for every pair; an error when FI_PROVIDER lists
 *    providers and not P (libfabric would hide it).
 *  - FI_PROVIDER lists providers (a demand): within a node shm if listed,
 *    else the first listed; across nodes the first listed that is not
 *    shm (shm if only shm is). No fallback.
 *  - neither: shm within a node; across nodes efa with tcp as fallback
 *    on real nodes, tcp on virtual ones. An exclusion list ("^shm")
 *    removes what it names from these.
 * Returns EG_OK or EG_EINVAL with err naming the variable and value. */
int eg_fabric_choose(const char *fi_provider, const char *asked, int real_nodes,
		     eg_fabric_choice_t *c, char *err, size_t errlen);

#endif
