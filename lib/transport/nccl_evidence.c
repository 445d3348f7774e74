/* Transport evidence from NCCL's INFO log: which transport each pair of
 * ranks was connected with, the network plugin (and the libfabric
 * provider it selected), and the graph search's intra-node path type.
 * NCCL has no API for these; its log is the record (and what users are
 * told to read), so the parser keeps to the few line shapes NCCL has
 * printed since 2.12. And the one class vocabulary every campaign's
 * evidence is judged in. Pure C: tested without a GPU. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/nccl.h"

/* The paths by eg_nccl_path_t, as options and messages spell them. */
static const char *const eg__path_names[] = {
    [EG_NCCL_PATH_AUTO] = "auto",
    [EG_NCCL_PATH_NVLINK] = "nvlink",
    [EG_NCCL_PATH_XNODE] = "xnode",
};
#define EG__N_PATHS (sizeof(eg__path_names) / sizeof(eg__path_names[0]))

int eg_nccl_path_parse(const char *s, eg_nccl_path_t *p)
{
	if (!s)
		s = eg__path_names[EG_NCCL_PATH_AUTO]; /* none given */
	for (size_t i = 0; i < EG__N_PATHS; i++)
		if (!strcmp(s, eg__path_names[i])) {
			*p = (eg_nccl_path_t)i;
			return EG_OK;
		}
	return EG_EINVAL;
}

const char *eg_nccl_path_name(eg_nccl_path_t p)
{
	return (size_t)p < EG__N_PATHS ? eg__path_names[p]
				       : eg__path_names[EG_NCCL_PATH_AUTO];
}

/* s's first occurrence of key, ignoring case; NULL when none. */
static const char *eg__find_ci(const char *s, const char *key)
{
	size_t n = strlen(key);

	for (; s && *s; s++) {
		size_t i = 0;

		while (i < n && s[i] &&
		       tolower((unsigned char)s[i]) ==
			   tolower((unsigned char)key[i]))
			i++;
		if (i == n)
			return s;
	}
	return NULL;
}

/* One word after key (up to a space or comma). */
static void eg__word_after(const char *line, const char *key, char *out,
			   size_t len)
{
	const char *p = strstr(line, key);
	size_t n = 0;

	if (!p || !len)
		return;
	p += strlen(key);
	while (p[n] && p[n] != ' ' && p[n] != ',' && p[n] != '\n' &&
	       p[n] != '\r' && n + 1 < len)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

/* "P2P/CUMEM/read" -> "P2P/CUMEM"; "P2P/direct pointer/read" ->
 * "P2P/direct_pointer". */
static void eg__via(const char *p, char *out, size_t len)
{
	size_t n = 0;
	int slashes = 0;

	while (*p && *p != '\n' && *p != '\r' && n + 1 < len) {
		if (*p == '/' && ++slashes == 2)
			break;
		out[n++] = *p == ' ' ? '_' : *p;
		p++;
	}
	while (n && out[n - 1] == '_')
		n--;
	out[n] = 0;
}

static void eg__add_pair(eg_nccl_evidence_t *e, int32_t from, int32_t to,
			 const char *via)
{
	e->lines++;
	for (uint32_t i = 0; i < e->npairs; i++)
		if (e->pair[i].from == from && e->pair[i].to == to &&
		    !strcmp(e->pair[i].via, via))
			return;
	if (e->npairs >= EG_NCCL_PAIRS_MAX)
		return;
	e->pair[e->npairs].from = from;
	e->pair[e->npairs].to = to;
	snprintf(e->pair[e->npairs].via, sizeof(e->pair[0].via), "%s", via);
	e->npairs++;
}

/* "... Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0" */
static void eg__channel_line(eg_nccl_evidence_t *e, const char *line)
{
	const char *c = strstr(line, "Channel ");
	const char *colon, *arrow, *via;
	char *end;
	long from, to;
	char v[32];

	if (!c || !(colon = strstr(c, " : ")) ||
	    !(arrow = strstr(colon, "->")) || !(via = strstr(arrow, " via ")))
		return;
	from = strtol(colon + 3, &end, 10);
	if (end == colon + 3 || *end != '[')
		return;
	to = strtol(arrow + 2, &end, 10);
	if (end == arrow + 2 || *end != '[')
		return;
	eg__via(via + 5, v, sizeof(v));
	if (v[0])
		eg__add_pair(e, (int32_t)from, (int32_t)to, v);
}

int eg_nccl_evidence_read(FILE *f, eg_nccl_evidence_t *e)
{
	char line[1024];

	if (!f || !e)
		return EG_EINVAL;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "NCCL INFO"))
			continue;
		if (strstr(line, " via ") && strstr(line, "Channel "))
			eg__channel_line(e, line);
		else if (strstr(line, "Using network ") && !e->net[0])
			eg__word_after(line, "Using network ", e->net,
				       sizeof(e->net));
		else if (strstr(line, "Pattern ") && strstr(line, " type ") &&
			 !e->graph[0])
			eg__word_after(line, " type ", e->graph,
				       sizeof(e->graph));
		else if (eg__find_ci(line, "Selected Provider is ") &&
			 !e->provider[0]) /* aws-ofi-nccl */
			eg__word_after(eg__find_ci(line, "Selected Provider "
							 "is "),
				       "is ", e->provider, sizeof(e->provider));
	}
	return EG_OK;
}

static int eg__same_node(const eg_world_t *w, int32_t a, int32_t b)
{
	return eg_world_node_of(w, (uint32_t)a) ==
	       eg_world_node_of(w, (uint32_t)b);
}

int eg_nccl_evidence_check(const eg_nccl_evidence_t *e, eg_nccl_path_t want,
			   const eg_world_t *w, char *why, size_t len)
{
	uint32_t judged = 0;

	snprintf(why, len, "NCCL took the path asked for (%s)",
		 eg_nccl_path_name(want));
	if (want == EG_NCCL_PATH_AUTO)
		return EG_OK;
	for (uint32_t i = 0; i < e->npairs; i++) {
		const eg_nccl_pair_t *p = &e->pair[i];
		int same;

		if (p->from < 0 || p->to < 0 || (uint32_t)p->from >= w->size ||
		    (uint32_t)p->to >= w->size || p->from == p->to)
			continue;
		same = eg__same_node(w, p->from, p->to);
		if (want == EG_NCCL_PATH_NVLINK) {
			judged++;
			if (!same || strncmp(p->via, "P2P", 3)) {
				snprintf(why, len,
					 "asked for nvlink, but ranks %d -> %d "
					 "%sused %s",
					 p->from, p->to,
					 same ? "" : "(different nodes) ",
					 p->via);
				return EG_EMISMATCH;
			}
		} else if (!same) {
			judged++;
			if (strncmp(p->via, "NET", 3)) {
				snprintf(why, len,
					 "asked for xnode (NCCL's network), "
					 "but ranks %d -> %d of different "
					 "nodes used %s",
					 p->from, p->to, p->via);
				return EG_EMISMATCH;
			}
		}
	}
	if (!judged) {
		snprintf(why, len,
			 "no %s connection in NCCL's log%s%s: nothing to "
			 "judge %s by",
			 want == EG_NCCL_PATH_XNODE ? "cross-node" : "peer",
			 e->log[0] ? " " : "", e->log, eg_nccl_path_name(want));
		return EG_ENOENT;
	}
	if (want == EG_NCCL_PATH_NVLINK && e->graph[0] &&
	    !strstr(e->graph, "NVL")) {
		snprintf(why, len,
			 "asked for nvlink, but NCCL's graph search found "
			 "%s between the GPUs",
			 e->graph);
		return EG_EMISMATCH;
	}
	return EG_OK;
}

void eg_nccl_evidence_summary(const eg_nccl_evidence_t *e, char *buf,
			      size_t len)
{
	size_t pos = 0;
	int p2p = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (uint32_t i = 0; i < e->npairs; i++) {
		int seen = 0;

		for (uint32_t j = 0; j < i; j++)
			seen |= !strcmp(e->pair[j].via, e->pair[i].via);
		if (seen)
			continue;
		p2p |= !strncmp(e->pair[i].via, "P2P", 3);
		int n = snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "",
				 e->pair[i].via);
		if (n < 0 || (size_t)n >= len - pos)
			return;
		pos += (size_t)n;
	}
	if (!pos)
		snprintf(buf, len, "none");
	else if (p2p && e->graph[0])
		pos +=
		    (size_t)snprintf(buf + pos, len - pos, " (%s)", e->graph);
	if (e->provider[0] && pos && pos < len)
		snprintf(buf + pos, len - pos, " provider %s", e->provider);
}

/* ---- the class vocabulary ----------------------------------------------- */

/* A libfabric provider's class: "efa", "tcp;ofi_rxm" -> tcp, ... */
static const char *eg__provider_class(const char *p, size_t n)
{
	static const struct {
		const char *prov, *cls;
	} map[] = {{"efa", "efa"},	  {"tcp", "tcp"},  {"shm", "shm"},
		   {"sockets", "socket"}, {"verbs", "ib"}, {"psm3", "ib"},
		   {"udp", "udp"},	  {"net", "tcp"},  {NULL, NULL}};
	size_t core = 0;

	while (core < n && p[core] != ';')
		core++;
	for (int i = 0; map[i].prov; i++)
		if (strlen(map[i].prov) == core &&
		    !strncmp(p, map[i].prov, core))
			return map[i].cls;
	return core ? "ofi" : "unknown";
}

/* One NCCL connection mechanism: "P2P/CUMEM", "SHM/direct",
 * "NET/Socket", "NET/IB", "NET/AWS_Libfabric"; graph: the intra-node
 * graph's type; provider: the plugin's libfabric provider or "". */
static const char *eg__via_class(const char *via, const char *graph,
				 const char *provider)
{
	if (!strncmp(via, "P2P", 3)) /* the graph says over what */
		return !graph[0]	      ? "p2p"
		       : strstr(graph, "NVL") ? "nvlink"
					      : "pcie";
	if (!strncmp(via, "SHM", 3))
		return "shm";
	if (strncmp(via, "NET", 3))
		return "unknown";
	if (eg__find_ci(via, "Socket"))
		return "socket";
	if (strstr(via, "IB"))
		return "ib";
	if (eg__find_ci(via, "OFI") || eg__find_ci(via, "Libfabric"))
		return provider[0]
			   ? eg__provider_class(provider, strlen(provider))
			   : "ofi";
	return "unknown";
}

/* "nccl VIA[,VIA...] [(GRAPH)] [provider P]": the class of the network
 * mechanism across nodes, of the other one within a node. */
static const char *eg__nccl_class(const char *s, int cross)
{
	char via[128], graph[32] = "", prov[32] = "";
	const char *g = strchr(s, '('), *p = strstr(s, " provider ");
	const char *pick = NULL;
	size_t n = strcspn(s, " ");

	snprintf(via, sizeof(via), "%.*s", (int)n, s);
	if (g)
		snprintf(graph, sizeof(graph), "%.*s", (int)strcspn(g + 1, ")"),
			 g + 1);
	if (p)
		snprintf(prov, sizeof(prov), "%s", p + 10);
	if (!strcmp(via, "none"))
		return "unknown";
	for (char *t = via; *t;) {
		size_t m = strcspn(t, ",");
		int net = !strncmp(t, "NET", 3), last = !t[m];

		t[m] = '\0';
		if (!pick || net == cross)
			pick = eg__via_class(t, graph, prov);
		if (net == cross || last)
			break;
		t += m + 1;
	}
	return pick ? pick : "unknown";
}

const char *eg_transport_class(const char *raw, int cross_node)
{
	static const char *const words[] = {"nvlink", "pcie", "shm", "socket",
					    "tcp",    "efa",  "ib",  NULL};
	char low[32];
	size_t i;

	if (!raw || !*raw)
		return "unknown";
	if (!strncmp(raw, "fabric ", 7)) {
		const char *sl = strchr(raw + 7, '/');

		if (!sl)
			return eg__provider_class(raw + 7, strlen(raw + 7));
		return cross_node ? eg__provider_class(sl + 1, strlen(sl + 1))
				  : eg__provider_class(raw + 7,
						       (size_t)(sl - raw - 7));
	}
	if (!strncmp(raw, "nccl ", 5))
		return eg__nccl_class(raw + 5, cross_node);
	if (!strcmp(raw, "null"))
		return "null";
	/* a recorded word: "NVLink", "EFA", "NET/OFI" */
	for (i = 0; raw[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)raw[i]);
	low[i] = '\0';
	for (int k = 0; words[k]; k++)
		if (!strcmp(low, words[k]))
			return words[k];
	return eg__via_class(raw, "", "");
}

size_t eg_transport_provider(const char *raw, int cross_node, char *buf,
			     size_t len)
{
	const char *p, *sl;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (raw && !strncmp(raw, "fabric ", 7) && (sl = strchr(raw + 7, '/')))
		snprintf(buf, len, "%.*s",
			 cross_node ? (int)strlen(sl + 1) : (int)(sl - raw - 7),
			 cross_node ? sl + 1 : raw + 7);
	else if (raw && !strncmp(raw, "nccl ", 5) &&
		 (p = strstr(raw, " provider ")))
		snprintf(buf, len, "%.*s", (int)strcspn(p + 10, " "), p + 10);
	return strlen(buf);
}
