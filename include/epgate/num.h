/* Numbers from text (command-line options, environment variables,
 * workload keys, YAML scalars): the whole string or nothing, with a
 * range, and one message shape naming the option or key and the value:
 *
 *   WHAT: empty value
 *   WHAT: "VALUE" is not a non-negative integer   (or: an integer, a
 *         number, a byte count (an integer with K, M or G))
 *   WHAT: VALUE is out of range [LO, HI]           ("(" or ")" for an
 *         open end)
 *
 * Each returns EG_OK, EG_EINVAL (not a number of that kind) or EG_ERANGE
 * (outside the range, overflow included) with the message in err; *out
 * is set only on success.  No blanks; values longer than 40 characters
 * are shortened in messages. */
#ifndef EPGATE_NUM_H
#define EPGATE_NUM_H

#include <stddef.h>
#include <stdint.h>

enum {
	EG_NUM_HEX = 1 << 0,	 /* unsigned: "0x..." as well as decimal */
	EG_NUM_SIGNED = 1 << 1,	 /* double: a leading + or - */
	EG_NUM_LO_OPEN = 1 << 2, /* double: lo itself is out of range */
	EG_NUM_HI_OPEN = 1 << 3, /* double: hi itself is out of range */
	EG_NUM_TEXT = 1 << 4,	 /* the value is text (quoted in YAML): not
				    a number, whatever it says */
};

/* Digits only (no sign), decimal, or hex with EG_NUM_HEX. */
int eg_parse_u64(const char *what, const char *s, uint64_t lo, uint64_t hi,
		 unsigned flags, uint64_t *out, char *err, size_t errlen);
/* The same for an unsigned int, decimal. */
int eg_parse_uint(const char *what, const char *s, unsigned lo, unsigned hi,
		  unsigned *out, char *err, size_t errlen);
/* An optional + or -, then digits. */
int eg_parse_i64(const char *what, const char *s, int64_t lo, int64_t hi,
		 int64_t *out, char *err, size_t errlen);
/* A finite decimal number: digits with an optional fraction and
 * exponent ("5", ".5", "2.5e-3"); a leading sign only with
 * EG_NUM_SIGNED; never inf, nan or hex. */
int eg_parse_double(const char *what, const char *s, double lo, double hi,
		    unsigned flags, double *out, char *err, size_t errlen);
/* Bytes: digits with an optional binary suffix K, M or G (either case):
 * "4096", "64K", "1M", "2g" (flags: EG_NUM_TEXT only). */
int eg_parse_bytes(const char *what, const char *s, uint64_t lo, uint64_t hi,
		   unsigned flags, uint64_t *out, char *err, size_t errlen);

/* v for people, into buf: "-" for NaN; whole digits when it is whole or
 * at least 1000 ("11930", "42"); else 4 significant digits ("0.7071",
 * "12.35"; an exponent only from 1e15 up). Returns buf. */
const char *eg_fmt_num(double v, char *buf, size_t len);

#endif
