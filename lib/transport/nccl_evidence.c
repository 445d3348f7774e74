/* Transport evidence from NCCL's INFO log: which transport each pair of
 * ranks was connected with, the network plugin, and the graph search's
 * intra-node path type. NCCL has no API for these; its log is the record
 * (and what users are told to read), so the parser keeps to the few line
 * shapes NCCL has printed since 2.12. Pure C: tested without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/nccl.h"

int eg_nccl_path_parse(const char *s, eg_nccl_path_t *p)
{
	if (!s || !strcmp(s, "auto"))
		*p = EG_NCCL_PATH_AUTO;
	else if (!strcmp(s, "nvlink"))
		*p = EG_NCCL_PATH_NVLINK;
	else if (!strcmp(s, "xnode"))
		*p = EG_NCCL_PATH_XNODE;
	else
		return EG_EINVAL;
	return EG_OK;
}

const char *eg_nccl_path_name(eg_nccl_path_t p)
{
	switch (p) {
	case EG_NCCL_PATH_NVLINK:
		return "nvlink";
	case EG_NCCL_PATH_XNODE:
		return "xnode";
	case EG_NCCL_PATH_AUTO:
		break;
	}
	return "auto";
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
		snprintf(buf + pos, len - pos, " (%s)", e->graph);
}
