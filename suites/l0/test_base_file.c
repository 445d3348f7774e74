/* lib/base/file.c and clock.c: whole-file reads with a size limit and
 * atomic replacement; the monotonic clock and the UTC stamp.  Each
 * refusal is shown on a planted bad input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eg_test.h"
#include "epgate/clock.h"
#include "epgate/file.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/eg-test-base-file-%ld",
		 (long)getpid());
	mkdir(dir, 0700);
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *path_of(const char *name)
{
	static char buf[4][320];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 320, "%s/%s", dir, name);
	return p;
}

static void put(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
}

START_TEST(read_whole)
{
	const char *p = path_of("a.txt");
	char err[512], *text = NULL;
	size_t len = 0;

	put(p, "one\ntwo\0three", 13);
	ck_assert_int_eq(eg_file_read(p, 13, &text, &len, err, sizeof(err)),
			 EG_OK);
	ck_assert_uint_eq(len, 13);
	ck_assert_int_eq(memcmp(text, "one\ntwo\0three", 14), 0);
	free(text);
	/* empty file: an empty string, not NULL */
	put(p, "", 0);
	ck_assert_int_eq(eg_file_read(p, 0, &text, NULL, err, sizeof(err)),
			 EG_OK);
	ck_assert_str_eq(text, "");
	free(text);
	/* larger than one read buffer */
	static char big[100000];

	memset(big, 'x', sizeof(big));
	put(p, big, sizeof(big));
	ck_assert_int_eq(
	    eg_file_read(p, sizeof(big), &text, &len, err, sizeof(err)), EG_OK);
	ck_assert_uint_eq(len, sizeof(big));
	ck_assert_uint_eq(strlen(text), sizeof(big));
	free(text);
}
END_TEST

START_TEST(read_refuses)
{
	const char *p = path_of("b.txt"), *missing = path_of("missing.txt");
	char err[512], want[600], *text = (char *)1;
	size_t len = 7;

	/* planted: one byte over the limit */
	put(p, "12345", 5);
	ck_assert_int_eq(eg_file_read(p, 4, &text, &len, err, sizeof(err)),
			 EG_ERANGE);
	snprintf(want, sizeof(want), "%s: 5 bytes, over the limit of 4", p);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(text);
	ck_assert_uint_eq(len, 0);
	/* not a regular file: the limit holds while reading */
	ck_assert_int_eq(
	    eg_file_read("/dev/zero", 100, &text, &len, err, sizeof(err)),
	    EG_ERANGE);
	ck_assert_str_eq(err, "/dev/zero: more than 100 bytes, over the limit");
	ck_assert_ptr_null(text);
	/* missing */
	ck_assert_int_eq(
	    eg_file_read(missing, 10, &text, &len, err, sizeof(err)),
	    EG_ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: %s", missing,
		 strerror(ENOENT));
	ck_assert_str_eq(err, want);
	/* a folder cannot be read */
	ck_assert_int_eq(eg_file_read(dir, 10, &text, &len, err, sizeof(err)),
			 EG_EIO);
	ck_assert_ptr_nonnull(strstr(err, dir));
}
END_TEST

static int fill_ok(FILE *f, void *arg)
{
	return fputs(arg, f) < 0 ? EG_EIO : 0;
}

static int fill_fail(FILE *f, void *arg)
{
	(void)arg;
	fputs("half", f);
	return EG_EIO;
}

START_TEST(write_atomic)
{
	const char *p = path_of("w.json"), *tmp = path_of("w.json.tmp");
	char err[512], want[600], *text;

	ck_assert_int_eq(
	    eg_file_write_atomic(p, fill_ok, "first\n", err, sizeof(err)),
	    EG_OK);
	ck_assert_int_eq(eg_file_read(p, 100, &text, NULL, err, sizeof(err)),
			 EG_OK);
	ck_assert_str_eq(text, "first\n");
	free(text);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(
	    eg_file_write_atomic_buf(p, "second", 6, err, sizeof(err)), EG_OK);
	ck_assert_int_eq(eg_file_read(p, 100, &text, NULL, err, sizeof(err)),
			 EG_OK);
	ck_assert_str_eq(text, "second");
	free(text);
	/* planted: a writer that fails half way leaves the file as it was
	 * and no temporary behind */
	ck_assert_int_eq(
	    eg_file_write_atomic(p, fill_fail, NULL, err, sizeof(err)), EG_EIO);
	snprintf(want, sizeof(want), "%s: write failed: ", p);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(eg_file_read(p, 100, &text, NULL, err, sizeof(err)),
			 EG_OK);
	ck_assert_str_eq(text, "second");
	free(text);
	/* planted: a folder that does not exist */
	const char *nowhere = path_of("no/such/dir/x.json");

	ck_assert_int_eq(
	    eg_file_write_atomic_buf(nowhere, "x", 1, err, sizeof(err)),
	    EG_EIO);
	snprintf(want, sizeof(want), "%s.tmp: cannot create: %s", nowhere,
		 strerror(ENOENT));
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(clock)
{
	double a = eg_now(), b = eg_now();
	char stamp[32], small[8] = "junk";

	ck_assert(a > 0);
	ck_assert(b >= a);
	eg_utc_stamp(stamp, sizeof(stamp));
	ck_assert_uint_eq(strlen(stamp), 20);
	ck_assert(stamp[4] == '-' && stamp[7] == '-' && stamp[10] == 'T' &&
		  stamp[13] == ':' && stamp[16] == ':' && stamp[19] == 'Z');
	/* planted: a buffer too small gets an empty string, not a part */
	eg_utc_stamp(small, sizeof(small));
	ck_assert_str_eq(small, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base_file");
	TCase *t = tcase_create("file");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, read_whole);
	tcase_add_test(t, read_refuses);
	tcase_add_test(t, write_atomic);
	tcase_add_test(t, clock);
	suite_add_tcase(s, t);
	return eg_test_main(s);
}
