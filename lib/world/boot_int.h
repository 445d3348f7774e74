/* The bootstrap's internals, shared by its files: lib/world/boot.c (the
 * collectives and the API), boot_join.c (rank 0's door and the peers'
 * handshake), boot_wire.c (frames, proofs, errors). Contract:
 * include/epgate/boot.h; protocol: docs/world.md, "The bootstrap". */
#ifndef EG_WORLD_BOOT_INT_H
#define EG_WORLD_BOOT_INT_H

#include <stdint.h>

#include "epgate/boot.h"

#define EG_BOOT_MAGIC	0x45504742u /* "EPGB" */
#define EG_BOOT_VERSION 2
#define EG_BOOT_HDR	32
#define EG_BOOT_NONCE	16
#define EG_BOOT_MAC	32
#define EG_BOOT_JOBLEN	64
#define EG_BOOT_HELLO	(4 + EG_BOOT_JOBLEN + EG_BOOT_NONCE + EG_BOOT_MAC)
#define EG_BOOT_TEXT	255 /* longest abort text on the wire */
/* Ranks other than 0 wait this much longer, so that when a rank stalls,
 * rank 0 (which knows who is missing) reports first and stops the rest. */
#define EG_BOOT_GRACE 1.0

enum {
	EG_BOOT_OP_HELLO0 = 1, /* rank 0 -> peer: nonce */
	EG_BOOT_OP_HELLO,      /* peer -> rank 0: who, proof */
	EG_BOOT_OP_WELCOME,    /* rank 0 -> peer: rank 0's proof */
	EG_BOOT_OP_REFUSE,     /* rank 0 -> peer: why not (a code), proof */
	EG_BOOT_OP_ABORT,      /* either way: the job failed, text follows */
	EG_BOOT_OP_ALLGATHER,
	EG_BOOT_OP_BCAST,
	EG_BOOT_OP_BARRIER,
};

struct eg_boot {
	uint32_t rank, size;
	double timeout_s;
	char job_id[EG_BOOT_JOBLEN];
	char secret[EG_SECRET_MAX];
	char addr[EG_HOST_MAX + 8]; /* rank 0's host:port, for messages */
	int *fd;		    /* rank 0: fd[r] per peer; else fd[0] */
	uint32_t seq;		    /* collective calls so far */
	int failed;		    /* sticky: the first error */
	char err[512], first[512];
};

typedef struct {
	uint16_t op, aux; /* aux: version, root, or -error */
	uint32_t seq, rank;
	uint64_t arg; /* the collective's length as the caller gave it */
	uint64_t len; /* payload bytes that follow */
} eg_boot_frame_t;

/* ---- boot_wire.c ---- */

/* The proof one side gives (HMAC-SHA256 under the secret): binds the
 * role (8 bytes), job, rank, size and both nonces, so it cannot be
 * replayed to another connection or role. */
void eg_boot_proof(const char *secret, const char *role, const char *job_id,
		   uint32_t rank, uint32_t size, const unsigned char *n0,
		   const unsigned char *n1, unsigned char out[EG_BOOT_MAC]);
int eg_boot_random(void *buf, size_t n);
void eg_boot_put(unsigned char *p, uint64_t v, int n);
uint64_t eg_boot_get(const unsigned char *p, int n);
void eg_boot_encode(unsigned char h[EG_BOOT_HDR], const eg_boot_frame_t *f);
/* EG_EPARSE on a bad magic number. */
int eg_boot_decode(const unsigned char h[EG_BOOT_HDR], eg_boot_frame_t *f);
const char *eg_boot_op_name(unsigned op);
int eg_boot_set_err(eg_boot_t *b, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends ", r" to a list of ranks; ends it with "..." when full. */
void eg_boot_add_rank(char *list, size_t len, uint32_t r);
/* "host:port" of the socket's peer (peer) or its own end. */
void eg_boot_sock_addr(int fd, int peer, char *out, size_t len);
int eg_boot_nonblock(int fd);
/* Milliseconds to the deadline for poll(), 0 when past. */
int eg_boot_ms_left(double deadline);
/* One best-effort, non-blocking frame with n payload bytes. */
void eg_boot_send_frame(int fd, uint16_t op, int code, uint32_t seq,
			uint32_t rank, const void *payload, size_t n);
/* The same with a text (cut at EG_BOOT_TEXT). */
void eg_boot_send_text(int fd, uint16_t op, int code, uint32_t seq,
		       uint32_t rank, const char *text);
/* The job failed here: every connected rank is told why; sticky. */
int eg_boot_fail(eg_boot_t *b, int rc);

/* ---- boot_join.c ---- */

/* Rank 0: accepts the job's size - 1 ranks by the deadline. */
int eg_boot_open_root(eg_boot_t *b, const eg_world_t *w, double timeout,
		      double deadline);
/* Every other rank: connects to rank 0 and joins by the deadline. */
int eg_boot_open_peer(eg_boot_t *b, const eg_world_t *w, double timeout,
		      double deadline);

#endif
