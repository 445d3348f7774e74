/* Numbers from text (include/epgate/num.h).  Validation by character
 * first, then strto*: the C library alone would take blanks, signs,
 * "inf", "nan" and hex floats. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"

#define EG__SHOW 40 /* value characters a message shows */

static int eg__nerr(char *err, size_t errlen, int rc, const char *what,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int eg__nerr(char *err, size_t errlen, int rc, const char *what,
		    const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!err || !errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: %s", what ? what : "value", msg);
	return rc;
}

/* "WHAT: \"S\" is not KIND" (or "WHAT: empty value"). */
static int eg__not(char *err, size_t errlen, const char *what, const char *s,
		   const char *kind)
{
	if (!*s)
		return eg__nerr(err, errlen, EG_EINVAL, what, "empty value");
	return eg__nerr(err, errlen, EG_EINVAL, what, "\"%.*s%s\" is not %s",
			EG__SHOW, s, strlen(s) > EG__SHOW ? "..." : "", kind);
}

/* "WHAT: S is out of range " followed by the interval. */
static int eg__range(char *err, size_t errlen, const char *what, const char *s,
		     const char *interval)
{
	return eg__nerr(err, errlen, EG_ERANGE, what,
			"%.*s%s is out of range %s", EG__SHOW, s,
			strlen(s) > EG__SHOW ? "..." : "", interval);
}

static int eg__is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int eg__is_xdigit(char c)
{
	return eg__is_digit(c) || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* s is a run of digits (hex digits when hex), at least one. */
static int eg__digits(const char *s, int hex)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (hex ? !eg__is_xdigit(*s) : !eg__is_digit(*s))
			return 0;
	return 1;
}

static const char eg__u_kind[] = "a non-negative integer";

int eg_parse_u64(const char *what, const char *s, uint64_t lo, uint64_t hi,
		 unsigned flags, uint64_t *out, char *err, size_t errlen)
{
	const char *digits = s;
	char range[64];
	int hex = 0;
	uint64_t v;

	if ((flags & EG_NUM_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		digits = s + 2, hex = 1;
	if (!eg__digits(digits, hex) || (flags & EG_NUM_TEXT))
		return eg__not(err, errlen, what, s, eg__u_kind);
	errno = 0;
	v = strtoull(digits, NULL, hex ? 16 : 10);
	if (errno == ERANGE || v < lo || v > hi) {
		snprintf(range, sizeof(range), "[%" PRIu64 ", %" PRIu64 "]", lo,
			 hi);
		return eg__range(err, errlen, what, s, range);
	}
	*out = v;
	return EG_OK;
}

int eg_parse_uint(const char *what, const char *s, unsigned lo, unsigned hi,
		  unsigned *out, char *err, size_t errlen)
{
	uint64_t v;
	int rc = eg_parse_u64(what, s, lo, hi, 0, &v, err, errlen);

	if (!rc)
		*out = (unsigned)v;
	return rc;
}

int eg_parse_i64(const char *what, const char *s, int64_t lo, int64_t hi,
		 int64_t *out, char *err, size_t errlen)
{
	const char *digits = s + (*s == '-' || *s == '+');
	char range[64];
	long long v;

	if (!eg__digits(digits, 0))
		return eg__not(err, errlen, what, s, "an integer");
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < lo || v > hi) {
		snprintf(range, sizeof(range), "[%" PRId64 ", %" PRId64 "]", lo,
			 hi);
		return eg__range(err, errlen, what, s, range);
	}
	*out = (int64_t)v;
	return EG_OK;
}

/* [sign] digits [. digits] [e [sign] digits], with a digit somewhere in
 * the mantissa. */
static int eg__decimal(const char *s, int sign)
{
	int mant = 0;

	if (sign && (*s == '+' || *s == '-'))
		s++;
	for (; eg__is_digit(*s); s++)
		mant = 1;
	if (*s == '.')
		for (s++; eg__is_digit(*s); s++)
			mant = 1;
	if (!mant)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!eg__is_digit(*s))
			return 0;
		while (eg__is_digit(*s))
			s++;
	}
	return !*s;
}

int eg_parse_double(const char *what, const char *s, double lo, double hi,
		    unsigned flags, double *out, char *err, size_t errlen)
{
	int lo_open = !!(flags & EG_NUM_LO_OPEN);
	int hi_open = !!(flags & EG_NUM_HI_OPEN);
	char range[80];
	double v;

	if (!eg__decimal(s, !!(flags & EG_NUM_SIGNED)) || (flags & EG_NUM_TEXT))
		return eg__not(err, errlen, what, s, "a number");
	errno = 0;
	v = strtod(s, NULL);
	if (errno == ERANGE || !isfinite(v) || v < lo || v > hi ||
	    (lo_open && v == lo) || (hi_open && v == hi)) {
		snprintf(range, sizeof(range), "%c%g, %g%c",
			 lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
		return eg__range(err, errlen, what, s, range);
	}
	*out = v;
	return EG_OK;
}

/* n as "64K", "1M", "2G" when it is an exact multiple, else digits. */
static void eg__bytes_str(uint64_t n, char *buf, size_t len)
{
	static const char suf[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * (unsigned)i;

		if (n && !(n & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%" PRIu64 "%c", n >> shift, suf[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, n);
}

int eg_parse_bytes(const char *what, const char *s, uint64_t lo, uint64_t hi,
		   unsigned flags, uint64_t *out, char *err, size_t errlen)
{
	static const char kind[] = "a byte count (an integer with K, M or G)";
	size_t n = strlen(s);
	unsigned shift = 0;
	char num[32], a[32], b[32], range[80];
	uint64_t v;

	if (!n || n >= sizeof(num) || (flags & EG_NUM_TEXT))
		return eg__not(err, errlen, what, s, kind);
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift)
		num[--n] = '\0';
	if (!eg__digits(num, 0))
		return eg__not(err, errlen, what, s, kind);
	errno = 0;
	v = strtoull(num, NULL, 10);
	if (errno == ERANGE || v > (hi >> shift) || (v << shift) < lo) {
		eg__bytes_str(lo, a, sizeof(a));
		eg__bytes_str(hi, b, sizeof(b));
		snprintf(range, sizeof(range), "[%s, %s]", a, b);
		return eg__range(err, errlen, what, s, range);
	}
	*out = v << shift;
	return EG_OK;
}
