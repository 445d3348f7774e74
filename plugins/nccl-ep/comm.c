/* What this process's NCCL and epgate's communicator allow NCCL EP to
 * do, asked before NCCL EP is: NCCL EP exits the process when the
 * communicator lacks what it needs (HT across NVLink domains without
 * GIN), and a libnccl other than the one it was built with fails in ways
 * that name nothing. nccl_device/core.h declares inline functions that it
 * defines only for CUDA C++: built with -fgnu89-inline, C compilers take
 * those declarations without a warning. */
#include <stdio.h>
#include <string.h>

#include "nep.h"

#include <nccl_device/core.h>

/* "2.30.7" from an NCCL version code (major*10000 + minor*100 + patch). */
static void eg__ver(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

static int eg__version(char *why, size_t len)
{
	char want[16], have[16];
	int v = 0;

	if (ncclGetVersion(&v) == ncclSuccess && v == NCCL_VERSION_CODE)
		return EG_PLUGIN_OK;
	eg__ver(NCCL_VERSION_CODE, want, sizeof(want));
	eg__ver(v, have, sizeof(have));
	snprintf(why, len,
		 "NCCL EP was built with NCCL %s, but this process runs NCCL "
		 "%s: put the lib/ of the NCCL that came with NCCL EP first "
		 "in LD_LIBRARY_PATH (epgate's communicator and NCCL EP must "
		 "use one libnccl)",
		 want, have);
	return EG_PLUGIN_EFAIL;
}

/* The device API, and GIN where the ranks span NVLink domains. */
static int eg__props(eg_nep_t *n, eg_nep_shape_t *s, char *why, size_t len)
{
	ncclCommProperties_t pr;
	int ht = n->o.mode == EG_NEP_HT;
	ncclResult_t r;

	memset(&pr, 0, sizeof(pr));
	pr.size = sizeof(pr);
	pr.magic = NCCL_API_MAGIC;
	pr.version = NCCL_VERSION_CODE;
	if ((r = ncclCommQueryProperties(n->comm, &pr)) != ncclSuccess) {
		snprintf(why, len, "ncclCommQueryProperties: %s",
			 ncclGetErrorString(r));
		return EG_PLUGIN_EFAIL;
	}
	s->lsa = (uint32_t)ncclTeamLsa(n->comm).nRanks;
	if (!pr.deviceApiSupport) {
		snprintf(why, len,
			 "NCCL's device API is not available on this "
			 "communicator, and NCCL EP needs it (CUDA P2P "
			 "between the ranks of an NVLink domain, "
			 "NCCL_WIN_ENABLE, cuMem; GIN across domains)");
		return EG_PLUGIN_ENOTSUP;
	}
	if (pr.nLsaTeams > 1 &&
	    (ht ? pr.railedGinType : pr.ginType) == NCCL_GIN_TYPE_NONE) {
		snprintf(why, len,
			 "the %u ranks span %d NVLink domains and NCCL has no "
			 "%sGIN here (GPU-initiated networking needs an RDMA "
			 "network): NCCL EP %s cannot cross them",
			 s->world, pr.nLsaTeams, ht ? "railed " : "",
			 ht ? "HT" : "LL");
		return EG_PLUGIN_ENOTSUP;
	}
	if (ht && pr.nLsaTeams > 1 &&
	    ncclTeamRail(n->comm).nRanks != pr.nLsaTeams) {
		snprintf(why, len,
			 "HT needs one rank per NVLink domain in each rail: "
			 "%d domains, rails of %d",
			 pr.nLsaTeams, ncclTeamRail(n->comm).nRanks);
		return EG_PLUGIN_ENOTSUP;
	}
	return EG_PLUGIN_OK;
}

int eg_nep_comm_check(eg_nep_t *n, eg_nep_shape_t *s, char *why, size_t len)
{
	int sms = 0, rc;
	cudaError_t e;

	if ((rc = eg__version(why, len)) != EG_PLUGIN_OK ||
	    (rc = eg__props(n, s, why, len)) != EG_PLUGIN_OK)
		return rc;
	e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
				   n->env.cuda_device);
	if (e != cudaSuccess) {
		snprintf(why, len, "the device's SMs: %s",
			 cudaGetErrorString(e));
		return EG_PLUGIN_EFAIL;
	}
	s->device_sms = (uint32_t)sms;
	return n->o.mode == EG_NEP_HT ? eg_nep_jit_ready(why, len)
				      : EG_PLUGIN_OK;
}
