/* libfabric on GPU memory: does any provider here offer FI_HMEM? The
 * providers this suite runs locally (shm, tcp) are usually built without
 * it, so the GPU path over libfabric is reported as a skip with the
 * reason, never silently left out. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/nccl.h"

#ifdef HAVE_LIBFABRIC

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

/* Offering FI_HMEM is a capability bit; registering a cudaMalloc buffer
 * with FI_HMEM_CUDA is the proof. */
static int eg__try_register(struct fi_info *info, char *why, size_t len)
{
	struct fid_fabric *fab = NULL;
	struct fid_domain *dom = NULL;
	struct fid_mr *mr = NULL;
	struct fi_mr_attr attr;
	struct iovec iov;
	void *buf = NULL;
	int dev = 0, rc;

	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaMalloc(&buf, 1 << 20) != cudaSuccess) {
		cudaGetLastError();
		snprintf(why, len,
			 "%s offers FI_HMEM, but no CUDA device to "
			 "register",
			 info->fabric_attr->prov_name);
		return EG_ENOSYS;
	}
	rc = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!rc)
		rc = fi_domain(fab, info, &dom, NULL);
	if (!rc) {
		memset(&attr, 0, sizeof(attr));
		iov.iov_base = buf;
		iov.iov_len = 1 << 20;
		attr.mr_iov = &iov;
		attr.iov_count = 1;
		attr.access = FI_SEND | FI_RECV;
		attr.iface = FI_HMEM_CUDA;
		attr.device.cuda = dev;
		rc = fi_mr_regattr(dom, &attr, 0, &mr);
	}
	if (rc)
		snprintf(why, len,
			 "%s offers FI_HMEM but cannot register CUDA memory "
			 "(%s)",
			 info->fabric_attr->prov_name, fi_strerror(-rc));
	else
		snprintf(why, len, "%s registers CUDA memory (FI_HMEM_CUDA)",
			 info->fabric_attr->prov_name);
	if (mr)
		fi_close(&mr->fid);
	if (dom)
		fi_close(&dom->fid);
	if (fab)
		fi_close(&fab->fid);
	cudaFree(buf);
	return rc ? EG_ENOSYS : EG_OK;
}
#endif

int eg_fabric_hmem_probe(char *why, size_t len)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL, *i;
	size_t pos = 0;
	int rc;

	if (!hints) {
		snprintf(why, len, "fi_allocinfo failed");
		return EG_ENOMEM;
	}
	hints->caps = FI_TAGGED | FI_MSG | FI_HMEM;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_HMEM | FI_MR_LOCAL |
				      FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (rc || !info) {
		snprintf(why, len,
			 "no libfabric provider here offers FI_HMEM "
			 "(fi_getinfo: %s); the fabric transport runs on "
			 "host memory only",
			 fi_strerror(-rc));
		return EG_ENOSYS;
	}
#ifdef HAVE_CUDA
	(void)i, (void)pos;
	rc = eg__try_register(info, why, len);
	fi_freeinfo(info);
	return rc;
#else
	pos = (size_t)snprintf(why, len,
			       "built without CUDA; FI_HMEM offered by:");
	for (i = info; i && pos < len; i = i->next) {
		const char *p = i->fabric_attr && i->fabric_attr->prov_name
				    ? i->fabric_attr->prov_name
				    : "?";
		if (!strstr(why, p))
			pos += (size_t)snprintf(why + pos, len - pos, " %s", p);
	}
	fi_freeinfo(info);
	return EG_ENOSYS;
#endif
}

#else

int eg_fabric_hmem_probe(char *why, size_t len)
{
	snprintf(why, len, "built without libfabric");
	return EG_ENOSYS;
}

#endif
