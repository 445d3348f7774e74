/* Provider choice (lib/transport/fabric_choice.c): the caller's ask
 * against FI_PROVIDER. Each row is one environment a user may have; a
 * conflict is an error that names FI_PROVIDER, never a libfabric "No data
 * available". Also the probe's answer for a provider this host lacks. */
#include <stdio.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/fabric_choice.h"
#include "epgate/fabric_probe.h"

static const struct {
	const char *fi, *asked;
	int real;
	const char *intra, *inter, *fallback; /* NULL: an error */
	const char *why_or_err;
} rows[] = {
    /* the automatic choice: virtual nodes, then real ones */
    {NULL, NULL, 0, "shm", "tcp;ofi_rxm", "", ""},
    {NULL, "auto", 0, "shm", "tcp;ofi_rxm", "", ""},
    {NULL, NULL, 1, "shm", "efa", "tcp;ofi_rxm", ""},
    /* an explicit provider carries every pair */
    {NULL, "tcp", 1, "tcp;ofi_rxm", "tcp;ofi_rxm", "", "--provider tcp"},
    {NULL, "shm", 0, "shm", "shm", "", "--provider shm"},
    /* FI_PROVIDER=efa: what every libfabric user sets on EFA */
    {"efa", NULL, 1, "efa", "efa", "", "FI_PROVIDER=efa"},
    {"efa,shm", NULL, 1, "shm", "efa", "", "FI_PROVIDER=efa,shm"},
    {"shm, tcp", NULL, 0, "shm", "tcp;ofi_rxm", "", "FI_PROVIDER=shm, tcp"},
    {"tcp;ofi_rxm", NULL, 1, "tcp;ofi_rxm", "tcp;ofi_rxm", "", "FI_PROVIDER"},
    {"shm", NULL, 0, "shm", "shm", "", "FI_PROVIDER=shm"},
    {"efa", "efa", 1, "efa", "efa", "", "--provider efa"},
    {"tcp", "tcp", 1, "tcp;ofi_rxm", "tcp;ofi_rxm", "", "--provider tcp"},
    /* exclusions trim the automatic choice */
    {"^shm", NULL, 0, "tcp;ofi_rxm", "tcp;ofi_rxm", "", ""},
    {"^efa", NULL, 1, "shm", "tcp;ofi_rxm", "", ""},
    {"^tcp", NULL, 1, "shm", "efa", "", ""},
    /* conflicts, said in words */
    {"efa", "tcp", 1, NULL, NULL, NULL,
     "provider \"tcp\" asked for, but FI_PROVIDER=efa hides it"},
    {"^tcp", "tcp", 0, NULL, NULL, NULL,
     "provider \"tcp\" asked for, but FI_PROVIDER=^tcp hides it"},
    {"", NULL, 0, NULL, NULL, NULL, "FI_PROVIDER=\"\" names no provider"},
    {" , ", "tcp", 0, NULL, NULL, NULL,
     "FI_PROVIDER=\" , \" names no provider"},
};

START_TEST(test_choose)
{
	eg_fabric_choice_t c;
	char err[256] = "";
	int rc = eg_fabric_choose(rows[_i].fi, rows[_i].asked, rows[_i].real,
				  &c, err, sizeof(err));

	if (!rows[_i].intra) {
		ck_assert_msg(rc == EG_EINVAL, "row %d accepted", _i);
		ck_assert_msg(strstr(err, rows[_i].why_or_err),
			      "row %d: \"%s\" lacks \"%s\"", _i, err,
			      rows[_i].why_or_err);
		return;
	}
	ck_assert_msg(rc == EG_OK, "row %d: %s", _i, err);
	ck_assert_str_eq(c.intra, rows[_i].intra);
	ck_assert_str_eq(c.inter, rows[_i].inter);
	ck_assert_str_eq(c.fallback, rows[_i].fallback);
	ck_assert_int_eq(c.fixed, !strcmp(rows[_i].intra, rows[_i].inter));
	ck_assert_msg(strstr(c.why, rows[_i].why_or_err), "row %d: why \"%s\"",
		      _i, c.why);
	/* only the automatic choice may fall back */
	if (c.why[0])
		ck_assert_str_eq(c.fallback, "");
}
END_TEST

START_TEST(test_map)
{
	ck_assert_str_eq(eg_fabric_prov_map("tcp"), "tcp;ofi_rxm");
	ck_assert_str_eq(eg_fabric_prov_map("udp"), "udp;ofi_rxd");
	ck_assert_str_eq(eg_fabric_prov_map("verbs"), "verbs;ofi_rxm");
	ck_assert_str_eq(eg_fabric_prov_map("efa"), "efa");
}
END_TEST

/* A provider no host has: absent (EG_ENOSYS), and the message lists what
 * libfabric offers instead. */
START_TEST(test_probe_absent)
{
	char err[512] = "", offered[256];
	int rc = eg_fabric_probe("eg-no-such-provider", err, sizeof(err));

	ck_assert_int_eq(rc, EG_ENOSYS);
	ck_assert_msg(strstr(err, "eg-no-such-provider"), "%s", err);
	if (eg_fabric_offered(offered, sizeof(offered)) > 0) {
		ck_assert_msg(strstr(err, offered), "\"%s\" lacks \"%s\"", err,
			      offered);
		/* each name once; one that is there probes present */
		const char *shm = strstr(offered, "shm");
		if (shm) {
			ck_assert_ptr_null(strstr(shm + 1, "shm"));
			ck_assert_int_eq(
			    eg_fabric_probe("shm", err, sizeof(err)), EG_OK);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fabric_choice");
	TCase *tc = tcase_create("choice");
	tcase_add_loop_test(tc, test_choose, 0,
			    (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, test_map);
	tcase_add_test(tc, test_probe_absent);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
