/* Small helpers shared by the L0 Check programs. */
#ifndef EG_TEST_H
#define EG_TEST_H

#include <check.h>
#include <stdlib.h>

#include "epgate/epgate.h"

/* A validated workload from "key=value" pairs, NULL-terminated. */
static inline void eg_test_workload(eg_workload_t *w, const char *const *kv)
{
	char err[EG_ERRMSG_MAX], key[64];
	eg_workload_init(w);
	for (; *kv; kv++) {
		const char *eq = strchr(*kv, '=');
		ck_assert_ptr_nonnull(eq);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *kv), *kv);
		ck_assert_msg(eg_workload_set(w, key, eq + 1, err) == EG_OK,
			      "%s: %s", *kv, err);
	}
	ck_assert_msg(eg_workload_validate(w, err) == EG_OK, "%s", err);
}

/* Runs one suite; exit status for automake. */
static inline int eg_test_main(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
