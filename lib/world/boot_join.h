/* Joining the bootstrap, shared by rank 0's door (lib/world/boot_door.c)
 * and the other ranks (lib/world/boot_join.c): the limits, the refusal
 * codes and their words (docs/world.md, "Joining"). */
#ifndef EG_WORLD_BOOT_JOIN_H
#define EG_WORLD_BOOT_JOIN_H

#define EG__PENDING	64  /* connections in handshake at once */
#define EG__HANDSHAKE_S 3.0 /* a connection's time to say its hello */
#define EG__LOG_FIRST	8   /* refusals logged in full */
#define EG__LOG_EVERY	1.0 /* then one line per this many seconds */
/* A peer's first wait for rank 0's challenge on one connection; it
 * doubles on each attempt up to EG__ATTEMPT_MAX (rank 0 may still be
 * starting while the launcher's socket already queues the connection). */
#define EG__ATTEMPT_S	2.0
#define EG__ATTEMPT_MAX 16.0
/* A rendezvous name that the resolver says does not exist is retried
 * this long (a fresh node's DNS may be late), not to the deadline. */
#define EG__RESOLVE_S 5.0
#define EG__RETRY     1 /* eg__try: no luck this time */

/* Why rank 0 refuses: a code on the wire, a fixed text on both sides. */
enum {
	EG__WHY_VERSION = 1,
	EG__WHY_JOB,
	EG__WHY_SECRET,
	EG__WHY_FIT,	/* proven: rank or size does not fit */
	EG__WHY_JOINED, /* proven: the rank has already joined */
	EG__WHY_NOT_HELLO,
	EG__WHY_MAGIC,
	EG__WHY_CLOSED,
	EG__WHY_SLOW,
	EG__WHY_FULL,
	EG__WHY_CHALLENGE,
	EG__WHY_ALL_JOINED,
	EG__WHY_GAVE_UP,
	EG__WHY_N
};

/* A refusal code's words ("an unknown reason" for another). */
const char *eg__boot_why(unsigned code);
/* The role string of a refusal's proof: the code is bound into it. */
void eg__boot_refuse_role(unsigned code, char role[8]);

#endif
