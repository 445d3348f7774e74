/* Tags, comms and test modes of the fabric transport
 * (lib/transport/fabric_int.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <string.h>
#include <time.h>

#include "epgate/error.h"
#include "lib/transport/fabric_int.h"

uint64_t eg_fabric_tag(uint32_t seq, uint32_t src, uint32_t chunk,
		       unsigned modes)
{
	uint64_t s = seq & ((1u << EG_FABRIC_SEQ_BITS) - 1);

	if (modes & EG_FABRIC_TEST_NOSEQ)
		s = 0; /* planted: messages of consecutive calls collide */
	return (s << (EG_FABRIC_SRC_BITS + EG_FABRIC_CHUNK_BITS)) |
	       ((uint64_t)(src & ((1u << EG_FABRIC_SRC_BITS) - 1))
		<< EG_FABRIC_CHUNK_BITS) |
	       (chunk & ((1u << EG_FABRIC_CHUNK_BITS) - 1));
}

unsigned eg_fabric_comm(uint32_t src, uint32_t dst, uint32_t seq, uint32_t c,
			unsigned K, unsigned modes)
{
	if (modes & EG_FABRIC_TEST_LATE)
		seq = 0;
	return (unsigned)(((uint64_t)src + dst + seq + c) % K);
}

int eg_fabric_test_parse(const char *s, unsigned *modes, char *err,
			 size_t errlen)
{
	static const struct {
		const char *name;
		unsigned bit;
	} words[] = {{"late", EG_FABRIC_TEST_LATE},
		     {"skew", EG_FABRIC_TEST_SKEW},
		     {"noseq", EG_FABRIC_TEST_NOSEQ}};

	*modes = 0;
	while (s && *s) {
		size_t n = strcspn(s, ","), i = 0;

		for (; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].name) == n &&
			    !strncmp(s, words[i].name, n))
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return eg_err_set(err, errlen, EG_EINVAL,
					  "EPGATE_FABRIC_TEST: \"%.*s\" is not "
					  "a mode (late, skew, noseq)",
					  (int)(n > 40 ? 40 : n), s);
		*modes |= words[i].bit;
		s += n + (s[n] == ',');
	}
	return EG_OK;
}

void eg_fabric_skew(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	struct timespec d = {0, (long)(x % 2000000u)};
	nanosleep(&d, NULL);
}
