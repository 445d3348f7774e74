/* Provider choice: the caller's ask against FI_PROVIDER, which libfabric
 * applies as a filter before any fi_getinfo. Asking libfabric for a
 * provider FI_PROVIDER hides gives "No data available", which names
 * neither; here the conflict is said in words before anything opens. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/fabric_choice.h"

#define EG__LIST_MAX 8

const char *eg_fabric_prov_map(const char *p)
{
	if (!strcmp(p, "tcp"))
		return "tcp;ofi_rxm";
	if (!strcmp(p, "udp"))
		return "udp;ofi_rxd";
	if (!strcmp(p, "verbs"))
		return "verbs;ofi_rxm";
	return p;
}

/* "tcp;ofi_rxm" and "tcp" are the same provider to FI_PROVIDER. */
static int eg__same_core(const char *a, const char *b)
{
	size_t la = strcspn(a, ";"), lb = strcspn(b, ";");

	return la == lb && !strncmp(a, b, la);
}

/* Splits FI_PROVIDER's comma list (spaces trimmed) into names. */
static size_t eg__split(const char *s, char names[][EG_PROV_MAX])
{
	size_t n = 0;

	while (*s && n < EG__LIST_MAX) {
		size_t l;

		s += strspn(s, " ,");
		l = strcspn(s, ",");
		while (l && s[l - 1] == ' ')
			l--;
		if (l && l < EG_PROV_MAX) {
			memcpy(names[n], s, l);
			names[n++][l] = '\0';
		}
		s += strcspn(s, ",");
	}
	return n;
}

static int eg__listed(char names[][EG_PROV_MAX], size_t n, const char *p)
{
	for (size_t i = 0; i < n; i++)
		if (eg__same_core(names[i], p))
			return 1;
	return 0;
}

static void eg__set(char *dst, const char *p)
{
	snprintf(dst, EG_PROV_MAX, "%s", eg_fabric_prov_map(p));
}

/* FI_PROVIDER names what libfabric may offer: take it as the ask. */
static void eg__from_list(char names[][EG_PROV_MAX], size_t n,
			  eg_fabric_choice_t *c)
{
	size_t i;

	for (i = 0; i < n && eg__same_core(names[i], "shm"); i++)
		;
	eg__set(c->inter, i < n ? names[i] : "shm");
	eg__set(c->intra, eg__listed(names, n, "shm") ? "shm" : c->inter);
}

/* The automatic choice, less what an exclusion list removes. */
static void eg__auto(char names[][EG_PROV_MAX], size_t n, int real_nodes,
		     eg_fabric_choice_t *c)
{
	int no_efa = eg__listed(names, n, "efa");
	int no_tcp = eg__listed(names, n, "tcp");

	if (real_nodes && !no_efa) {
		eg__set(c->inter, "efa");
		if (!no_tcp)
			eg__set(c->fallback, "tcp");
	} else {
		/* tcp excluded too: leave it to libfabric to say */
		eg__set(c->inter, "tcp");
	}
	eg__set(c->intra, eg__listed(names, n, "shm") ? c->inter : "shm");
}

int eg_fabric_choose(const char *fi_provider, const char *asked, int real_nodes,
		     eg_fabric_choice_t *c, char *err, size_t errlen)
{
	char names[EG__LIST_MAX][EG_PROV_MAX];
	int exclude = fi_provider && fi_provider[0] == '^';
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	if (asked && (!*asked || !strcmp(asked, "auto")))
		asked = NULL;
	if (fi_provider) {
		n = eg__split(fi_provider + exclude, names);
		if (!n) {
			snprintf(err, errlen,
				 "FI_PROVIDER=\"%.60s\" names no provider, so "
				 "libfabric offers none (unset it, or name "
				 "one: FI_PROVIDER=efa)",
				 fi_provider);
			return EG_EINVAL;
		}
	}
	if (asked) {
		if (fi_provider && eg__listed(names, n, asked) == exclude) {
			snprintf(err, errlen,
				 "provider \"%s\" asked for, but "
				 "FI_PROVIDER=%.60s hides it from libfabric "
				 "(unset FI_PROVIDER or make it name %s)",
				 asked, fi_provider, asked);
			return EG_EINVAL;
		}
		eg__set(c->intra, asked);
		eg__set(c->inter, asked);
		snprintf(c->why, sizeof(c->why), "--provider %s", asked);
	} else if (fi_provider && !exclude) {
		eg__from_list(names, n, c);
		snprintf(c->why, sizeof(c->why), "FI_PROVIDER=%s", fi_provider);
	} else {
		eg__auto(names, n, real_nodes, c);
	}
	c->fixed = !strcmp(c->intra, c->inter);
	return EG_OK;
}
