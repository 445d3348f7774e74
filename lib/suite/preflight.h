/* Before a cross-node campaign: does this node have what the job needs,
 * the libfabric provider its ranks will open and a CUDA device
 * (lib/suite/preflight.c, `epgate preflight`, docs/slurm.md). */
#ifndef EPGATE_PREFLIGHT_H
#define EPGATE_PREFLIGHT_H

typedef struct eg_preflight_opts {
	/* NULL: no provider check; "auto" or a name: the choice the ranks
	 * of a job across real nodes make with this FI_PROVIDER */
	const char *provider;
	int gpu; /* a CUDA device is needed */
} eg_preflight_opts_t;

/* One line per check on stdout, "preflight: HOST: ..."; returns 0 when
 * everything is there (an automatic fallback is a warning), 77 when
 * something is missing (the caller decides whether that fails its job),
 * 99 when the asks contradict (FI_PROVIDER hides the provider asked). */
int eg_preflight(const eg_preflight_opts_t *o);

#endif
