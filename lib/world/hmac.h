/* SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104) for the bootstrap's
 * challenge-response (lib/world/boot_join.c) and the rendezvous port a
 * Slurm job derives from its secret (lib/world/world.c). Internal. */
#ifndef EG_WORLD_HMAC_H
#define EG_WORLD_HMAC_H

#include <stddef.h>

#define EG_MAC_LEN 32

/* HMAC-SHA256 of msg under the key string key (its bytes, no NUL). */
void eg_hmac_sha256(const char *key, const void *msg, size_t len,
		    unsigned char out[EG_MAC_LEN]);
/* 1 if the n bytes are equal; the time does not depend on where they
 * differ. */
int eg_ct_equal(const unsigned char *a, const unsigned char *b, size_t n);

#endif
