/* The fabric transport's pure parts (lib/transport/fabric_tag.c): tags,
 * the comm a message travels on, and the test modes of
 * EPGATE_FABRIC_TEST (docs/transport.md, "Test modes"). Internal; the
 * unit test suites/l0/test_fabric_tag.c holds them. */
#ifndef EG_TRANSPORT_FABRIC_INT_H
#define EG_TRANSPORT_FABRIC_INT_H

#include <stddef.h>
#include <stdint.h>

/* Tag: seq (20 bits) | source rank (16) | chunk (24); the top 4 bits
 * stay clear for providers that reserve them. */
#define EG_FABRIC_SEQ_BITS   20
#define EG_FABRIC_SRC_BITS   16
#define EG_FABRIC_CHUNK_BITS 24

/* EPGATE_FABRIC_TEST modes, a comma-separated list. */
#define EG_FABRIC_TEST_LATE  0x1u /* a later call's message first */
#define EG_FABRIC_TEST_SKEW  0x2u /* random delays between calls */
#define EG_FABRIC_TEST_NOSEQ 0x4u /* planted: tags without the call */

/* The tag of chunk `chunk` from rank src in call seq (the call counter,
 * any value: only its low EG_FABRIC_SEQ_BITS travel). modes: the test
 * modes (EG_FABRIC_TEST_NOSEQ leaves the call out: a planted bug). */
uint64_t eg_fabric_tag(uint32_t seq, uint32_t src, uint32_t chunk,
		       unsigned modes);

/* The comm chunk c between src and dst in call seq travels on:
 * (src + dst + seq + c) mod K, both ends alike. Under
 * EG_FABRIC_TEST_LATE the call is left out, so that consecutive calls
 * of a pair share an endpoint and a held message meets the next call's. */
unsigned eg_fabric_comm(uint32_t src, uint32_t dst, uint32_t seq, uint32_t c,
			unsigned K, unsigned modes);

/* Parses EPGATE_FABRIC_TEST ("late,skew", "noseq", ""; NULL = none)
 * into *modes; EG_EINVAL with a message naming the word otherwise. */
int eg_fabric_test_parse(const char *s, unsigned *modes, char *err,
			 size_t errlen);

/* Skew: a pseudo-random delay in [0, 2 ms) from *state (seed it with the
 * rank), slept now. */
void eg_fabric_skew(uint64_t *state);

#endif
