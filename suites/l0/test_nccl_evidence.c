/* NCCL transport evidence: the INFO-log parser and the asked-vs-got
 * check, on log excerpts in the shapes NCCL 2.2x prints. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/nccl.h"

static const char nvlink_log[] =
    "h:10:10 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
    "h:10:10 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 24, bw "
    "40.000000/40.000000, type NVL/PIX, sameChannels 1\n"
    "h:10:10 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "h:10:10 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "h:10:31 [0] NCCL INFO Channel 00/1 : 1[1] -> 0[0] [receive] via "
    "P2P/CUMEM/read\n"
    "h:10:10 [0] NCCL INFO Connected all rings\n";

static const char socket_log[] =
    "h:11:11 [1] NCCL INFO Using network Socket\n"
    "h:11:11 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [receive] via "
    "NET/Socket/0\n"
    "h:11:11 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via "
    "NET/Socket/0\n"
    "h:11:11 [1] NCCL WARN Channel 09/0 : 1[1] -> 0[0] via nothing\n";

static void read_log(const char *text, eg_nccl_evidence_t *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	ck_assert_ptr_nonnull(f);
	memset(e, 0, sizeof(*e));
	ck_assert_int_eq(eg_nccl_evidence_read(f, e), EG_OK);
	fclose(f);
}

static eg_world_t world(uint32_t size, uint32_t rpn)
{
	eg_world_t w;

	memset(&w, 0, sizeof(w));
	w.size = size;
	w.ranks_per_node = rpn;
	w.nodes = (size + rpn - 1) / rpn;
	return w;
}

START_TEST(test_parse_nvlink)
{
	eg_nccl_evidence_t e;
	char s[128];

	read_log(nvlink_log, &e);
	ck_assert_uint_eq(e.lines, 3);
	ck_assert_uint_eq(e.npairs, 2); /* 0->1 twice is one pair */
	ck_assert_int_eq(e.pair[0].from, 0);
	ck_assert_int_eq(e.pair[0].to, 1);
	ck_assert_str_eq(e.pair[0].via, "P2P/CUMEM");
	ck_assert_int_eq(e.pair[1].from, 1);
	ck_assert_str_eq(e.graph, "NVL/PIX");
	ck_assert_str_eq(e.net, "");
	eg_nccl_evidence_summary(&e, s, sizeof(s));
	ck_assert_str_eq(s, "P2P/CUMEM (NVL/PIX)");
}
END_TEST

START_TEST(test_parse_socket)
{
	eg_nccl_evidence_t e;
	char s[128];

	read_log(socket_log, &e);
	ck_assert_uint_eq(e.npairs, 2); /* the WARN line is not evidence */
	ck_assert_str_eq(e.net, "Socket");
	ck_assert_str_eq(e.pair[1].via, "NET/Socket");
	eg_nccl_evidence_summary(&e, s, sizeof(s));
	ck_assert_str_eq(s, "NET/Socket");
}
END_TEST

START_TEST(test_check_asked_vs_got)
{
	eg_nccl_evidence_t nv, so, none;
	eg_world_t one = world(2, 2), two = world(2, 1);
	char why[256];

	read_log(nvlink_log, &nv);
	read_log(socket_log, &so);
	memset(&none, 0, sizeof(none));
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&nv, EG_NCCL_PATH_NVLINK, &one, why, 256),
	    EG_OK);
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&so, EG_NCCL_PATH_XNODE, &two, why, 256),
	    EG_OK);
	/* a run that asked for one path and got another says so */
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&nv, EG_NCCL_PATH_XNODE, &two, why, 256),
	    EG_EMISMATCH);
	ck_assert_ptr_nonnull(strstr(why, "P2P/CUMEM"));
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&so, EG_NCCL_PATH_NVLINK, &one, why, 256),
	    EG_EMISMATCH);
	ck_assert_ptr_nonnull(strstr(why, "NET/Socket"));
	/* nvlink across real nodes cannot be */
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&nv, EG_NCCL_PATH_NVLINK, &two, why, 256),
	    EG_EMISMATCH);
	/* P2P through PCIe is not NVLink */
	snprintf(nv.graph, sizeof(nv.graph), "PIX");
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&nv, EG_NCCL_PATH_NVLINK, &one, why, 256),
	    EG_EMISMATCH);
	/* no log lines: unknown, never a pass */
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&none, EG_NCCL_PATH_XNODE, &two, why, 256),
	    EG_ENOENT);
	ck_assert_int_eq(
	    eg_nccl_evidence_check(&none, EG_NCCL_PATH_AUTO, &two, why, 256),
	    EG_OK);
}
END_TEST

/* aws-ofi-nccl on EFA: NVLink within the node, the OFI plugin across,
 * with the provider it selected. */
static const char efa_log[] =
    "h:12:12 [0] NCCL INFO NET/OFI Selected Provider is efa (found 16 "
    "nics)\n"
    "h:12:12 [0] NCCL INFO Using network AWS Libfabric\n"
    "h:12:12 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw "
    "40.000000/40.000000, type NVL/PIX, sameChannels 1\n"
    "h:12:12 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "h:12:12 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via "
    "NET/AWS Libfabric/0/GDRDMA\n";

START_TEST(test_efa_provider)
{
	eg_nccl_evidence_t e;
	char s[128], p[32];

	read_log(efa_log, &e);
	ck_assert_str_eq(e.provider, "efa");
	eg_nccl_evidence_summary(&e, s, sizeof(s));
	ck_assert_str_eq(s,
			 "P2P/CUMEM,NET/AWS_Libfabric (NVL/PIX) provider efa");
	/* the measured string in the shared vocabulary: the cross-node
	 * pairs are efa, those within a node nvlink */
	ck_assert_str_eq(eg_transport_class("nccl P2P/CUMEM,NET/AWS_Libfabric "
					    "(NVL/PIX) provider efa",
					    1),
			 "efa");
	ck_assert_str_eq(eg_transport_class("nccl P2P/CUMEM,NET/AWS_Libfabric "
					    "(NVL/PIX) provider efa",
					    0),
			 "nvlink");
	ck_assert_uint_eq(eg_transport_provider("nccl NET/AWS_Libfabric "
						"provider efa",
						1, p, sizeof(p)),
			  3);
	ck_assert_str_eq(p, "efa");
	ck_assert_uint_eq(eg_transport_provider("nccl NET/Socket", 1, p, 32),
			  0);
}
END_TEST

/* One class per path, whatever wrote the evidence: the recorded words of
 * a field report, NCCL's log summary, libfabric's providers. */
START_TEST(test_transport_class)
{
	static const struct {
		const char *raw;
		int cross;
		const char *cls;
	} t[] = {
	    {"NVLink", 0, "nvlink"},
	    {"nvlink", 1, "nvlink"},
	    {"EFA", 1, "efa"},
	    {"nccl P2P/CUMEM (NVL/PIX)", 0, "nvlink"},
	    {"nccl P2P/CUMEM (NVL)", 0, "nvlink"},
	    {"nccl P2P/direct_pointer (NVL/PIX)", 0, "nvlink"},
	    {"nccl P2P/CUMEM (PIX)", 0, "pcie"},
	    {"nccl SHM/direct", 0, "shm"},
	    {"nccl NET/Socket", 1, "socket"},
	    {"nccl NET/IB", 1, "ib"},
	    {"nccl P2P/CUMEM,NET/Socket (NVL)", 1, "socket"},
	    {"nccl P2P/CUMEM,NET/Socket (NVL)", 0, "nvlink"},
	    {"nccl NET/AWS_Libfabric", 1, "ofi"},
	    {"nccl NET/AWS_Libfabric provider tcp", 1, "tcp"},
	    {"nccl none", 0, "unknown"},
	    {"fabric shm/tcp;ofi_rxm", 1, "tcp"},
	    {"fabric shm/tcp;ofi_rxm", 0, "shm"},
	    {"fabric shm/efa", 1, "efa"},
	    {"fabric shm/sockets", 1, "socket"},
	    {"fabric verbs;ofi_rxm/verbs;ofi_rxm", 1, "ib"},
	    {"null", 0, "null"},
	    {"", 0, "unknown"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(
		    !strcmp(eg_transport_class(t[i].raw, t[i].cross), t[i].cls),
		    "%s (cross %d): %s, want %s", t[i].raw, t[i].cross,
		    eg_transport_class(t[i].raw, t[i].cross), t[i].cls);
	ck_assert_str_eq(eg_transport_class(NULL, 0), "unknown");
}
END_TEST

START_TEST(test_path_names)
{
	eg_nccl_path_t p;

	ck_assert_int_eq(eg_nccl_path_parse("xnode", &p), EG_OK);
	ck_assert_int_eq(p, EG_NCCL_PATH_XNODE);
	ck_assert_str_eq(eg_nccl_path_name(p), "xnode");
	ck_assert_int_eq(eg_nccl_path_parse("nvlink", &p), EG_OK);
	ck_assert_int_eq(p, EG_NCCL_PATH_NVLINK);
	ck_assert_int_lt(eg_nccl_path_parse("pcie", &p), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nccl_evidence");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_nvlink);
	tcase_add_test(tc, test_parse_socket);
	tcase_add_test(tc, test_check_asked_vs_got);
	tcase_add_test(tc, test_path_names);
	tcase_add_test(tc, test_efa_provider);
	tcase_add_test(tc, test_transport_class);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
