/* The error table: every code has a distinct message and name. */
#include <string.h>

#include "eg_test.h"

START_TEST(test_messages)
{
	static const int codes[] = {
#define X(name, val, msg) EG_##name,
	    EG_ERRNO_MAP(X)
#undef X
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_lt(codes[i], 0);
		ck_assert_str_ne(eg_strerror(codes[i]), "unknown error");
		ck_assert_str_ne(eg_err_name(codes[i]), "EG_UNKNOWN");
		for (size_t j = 0; j < i; j++) {
			ck_assert_int_ne(codes[i], codes[j]);
			ck_assert_str_ne(eg_strerror(codes[i]),
					 eg_strerror(codes[j]));
		}
	}
	ck_assert_str_eq(eg_err_name(EG_EINVAL), "EG_EINVAL");
	ck_assert_str_eq(eg_strerror(EG_OK), "success");
	ck_assert_str_eq(eg_strerror(-12345), "unknown error");
	ck_assert_str_eq(eg_err_name(-12345), "EG_UNKNOWN");
}
END_TEST

/* eg_err_set: the message and the code in one step; a NULL buffer or a
 * short one is safe. */
START_TEST(test_err_set)
{
	char err[16] = "old";

	ck_assert_int_eq(
	    eg_err_set(err, sizeof(err), EG_ERANGE, "%s: %d", "k", 7),
	    EG_ERANGE);
	ck_assert_str_eq(err, "k: 7");
	ck_assert_int_eq(eg_err_set(NULL, 64, EG_EINVAL, "x"), EG_EINVAL);
	ck_assert_int_eq(eg_err_set(err, 0, EG_EIO, "untouched"), EG_EIO);
	ck_assert_str_eq(err, "k: 7");
	/* planted: a message longer than the buffer is cut, still a string */
	eg_err_set(err, sizeof(err), EG_EIO, "%s", "0123456789abcdefghij");
	ck_assert_str_eq(err, "0123456789abcde");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_messages);
	tcase_add_test(tc, test_err_set);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
