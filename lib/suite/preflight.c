/* The node preflight: what the ranks will open, asked of libfabric and
 * CUDA before any rank starts, so a missing provider or GPU is one clear
 * line per node instead of every rank's transport error. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/fabric_choice.h"
#include "epgate/fabric_probe.h"
#include "epgate/gen.h"
#include "lib/suite/preflight.h"

/* One provider of the choice: 0 present, 77 absent. */
static int eg__probe(const char *host, const char *role, const char *prov,
		     const eg_fabric_choice_t *ch)
{
	char err[512], err2[512];
	int rc = eg_fabric_probe(prov, err, sizeof(err));

	if (rc == EG_OK) {
		printf("preflight: %s: %s provider %s: present\n", host, role,
		       prov);
		return EG_EXIT_PASS;
	}
	if (rc == EG_ENOSYS && ch->fallback[0] &&
	    eg_fabric_probe(ch->fallback, err2, sizeof(err2)) == EG_OK) {
		printf("preflight: %s: warning: %s provider %s is absent; the "
		       "automatic choice falls back to %s\n",
		       host, role, prov, ch->fallback);
		return EG_EXIT_PASS;
	}
	printf("preflight: %s: %s provider %s%s%s%s: absent: %s\n", host, role,
	       prov, ch->why[0] ? " (asked by " : "", ch->why,
	       ch->why[0] ? ")" : "", err);
	return EG_EXIT_SKIP;
}

static int eg__provider(const char *host, const char *asked)
{
	eg_fabric_choice_t ch;
	char err[256], offered[256];
	int rc;

	if (eg_fabric_choose(getenv("FI_PROVIDER"), asked, 1, &ch, err,
			     sizeof(err)) < 0) {
		printf("preflight: %s: %s\n", host, err);
		return EG_EXIT_HARD;
	}
	eg_fabric_offered(offered, sizeof(offered));
	printf("preflight: %s: libfabric offers %s\n", host,
	       offered[0] ? offered : "no provider");
	rc = eg__probe(host, "cross-node", ch.inter, &ch);
	if (rc == EG_EXIT_PASS && !ch.fixed)
		rc = eg__probe(host, "within-node", ch.intra, &ch);
	return rc;
}

static int eg__gpu(const char *host)
{
	if (eg_cuda_available()) {
		printf("preflight: %s: CUDA device: present\n", host);
		return EG_EXIT_PASS;
	}
#ifdef HAVE_CUDA
	printf("preflight: %s: CUDA device: absent (a CUDA build on a node "
	       "without GPU, or none visible: CUDA_VISIBLE_DEVICES=%s)\n",
	       host,
	       getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES")
					      : "(unset)");
#else
	printf("preflight: %s: CUDA device: absent (epgate is built without "
	       "CUDA)\n",
	       host);
#endif
	return EG_EXIT_SKIP;
}

int eg_preflight(const eg_preflight_opts_t *o)
{
	char host[256] = "?";
	int rc = EG_EXIT_PASS, r;

	gethostname(host, sizeof(host) - 1);
	/* under srun, the node Slurm knows (emulated nodes share a host) */
	if (getenv("SLURMD_NODENAME"))
		snprintf(host, sizeof(host), "%s", getenv("SLURMD_NODENAME"));
	if (o->provider && (r = eg__provider(host, o->provider)) > rc)
		rc = r;
	if (o->gpu && (r = eg__gpu(host)) > rc)
		rc = r;
	fflush(stdout);
	return rc;
}
