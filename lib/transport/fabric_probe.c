/* What libfabric really offers on this host: the providers of RDM
 * endpoints with tagged messages (what the fabric transport opens), for
 * error messages and `epgate preflight`. Without libfabric: nothing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/fabric_probe.h"

#ifdef HAVE_LIBFABRIC

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

/* fi_getinfo for RDM + tagged, with prov_name when given. */
static int eg__getinfo(const char *prov, struct fi_info **list)
{
	struct fi_info *hints = fi_allocinfo();
	int rc;

	*list = NULL;
	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	if (prov && !(hints->fabric_attr->prov_name = strdup(prov))) {
		fi_freeinfo(hints);
		return -FI_ENOMEM;
	}
	rc = fi_getinfo(FI_VERSION(1, 14), NULL, NULL, 0, hints, list);
	fi_freeinfo(hints);
	return rc;
}

/* Is p among the first n names already listed in out (", "-joined)? */
static int eg__listed(const char *out, const char *p)
{
	size_t l = strlen(p);

	for (const char *s = out; *s;
	     s += strcspn(s, ",") + (s[strcspn(s, ",")] ? 2 : 0))
		if (!strncmp(s, p, l) && (s[l] == ',' || !s[l]))
			return 1;
	return 0;
}

int eg_fabric_offered(char *out, size_t len)
{
	struct fi_info *list, *fi;
	size_t o = 0;
	int n = 0;

	if (!len)
		return EG_EINVAL;
	out[0] = '\0';
	if (eg__getinfo(NULL, &list))
		return 0;
	for (fi = list; fi; fi = fi->next) {
		const char *p = fi->fabric_attr->prov_name;
		int w;

		if (eg__listed(out, p))
			continue;
		w = snprintf(out + o, len - o, "%s%s", n ? ", " : "", p);
		if (w < 0 || (size_t)w >= len - o) {
			out[o] = '\0';
			break;
		}
		o += (size_t)w;
		n++;
	}
	fi_freeinfo(list);
	return n;
}

int eg_fabric_probe(const char *prov, char *err, size_t errlen)
{
	struct fi_info *list;
	char offered[256];
	int rc = eg__getinfo(prov, &list);

	if (!rc) {
		fi_freeinfo(list);
		return EG_OK;
	}
	if (rc != -FI_ENODATA) {
		snprintf(err, errlen, "fi_getinfo(%s, RDM, tagged): %s", prov,
			 fi_strerror(-rc));
		return EG_EFABRIC;
	}
	eg_fabric_offered(offered, sizeof(offered));
	snprintf(err, errlen,
		 "provider %s is not on this host (libfabric %u.%u offers "
		 "%s%s%s)",
		 prov, FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
		 offered[0] ? offered : "none",
		 getenv("FI_PROVIDER") ? " with FI_PROVIDER=" : "",
		 getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "");
	return EG_ENOSYS;
}

#else

int eg_fabric_offered(char *out, size_t len)
{
	if (len)
		out[0] = '\0';
	return 0;
}

int eg_fabric_probe(const char *prov, char *err, size_t errlen)
{
	snprintf(err, errlen, "provider %s: epgate is built without libfabric",
		 prov);
	return EG_ENOSYS;
}

#endif
