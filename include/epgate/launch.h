/* The local launcher: N ranks of one command on this host, with the
 * environment eg_world_from_env reads, their output prefixed by rank, and
 * a job that ends as a whole (first failure or deadline: stop them all). */
#ifndef EPGATE_LAUNCH_H
#define EPGATE_LAUNCH_H

/* `epgate launch`'s deadline when --timeout is not given: every
 * documented local line ends in well under a minute, and a hang that
 * nothing inside the ranks bounds must end before its user gives up. */
#define EG_LAUNCH_DEADLINE_S 600.0
/* what the deadline's line adds when it was the default */
#define EG_LAUNCH_HINT                                                         \
	" (launch's default: --timeout S sets it, --timeout 0 none)"

typedef struct eg_launch_opts {
	unsigned n;		 /* ranks, >= 1 */
	unsigned ranks_per_node; /* virtual nodes; 0 = n (one node) */
	double timeout_s;	 /* the whole job; <= 0 = none */
	double grace_s;		 /* SIGTERM to SIGKILL; <= 0 = 2 s */
	const char *job_id;	 /* NULL = "launch-<pid>" */
	int timeout_default;	 /* timeout_s is launch's default: said so
				    when it expires */
	double settle_s;	 /* a failing exit waits this for a death by
				    signal (the likelier cause) before the
				    stop; 0 = EG_LAUNCH_SETTLE_S, < 0 = none */
} eg_launch_opts_t;

/* A rank killed by a signal closes its sockets before it can be waited
 * for, so a peer can see the loss, exit 1 and be noticed first. */
#define EG_LAUNCH_SETTLE_S 0.25

/* Runs argv (argv[0] found on PATH) as ranks 0..n-1 and waits for all.
 * Each rank gets EPGATE_RANK, EPGATE_SIZE, EPGATE_RANKS_PER_NODE,
 * EPGATE_BOOT_ADDR (127.0.0.1:port of a socket the launcher listens on,
 * handed to rank 0 as EPGATE_BOOT_FD), a fresh EPGATE_SECRET,
 * EPGATE_JOB_ID and EPGATE_TIMEOUT (kept from the environment; else 60 s,
 * or 3/4 of timeout_s when that is shorter). Every line a rank prints goes
 * to the same stream of the launcher prefixed "[rank] "; the launcher's
 * own lines start with "[launch] " (stderr).
 *
 * The first rank to fail (exit status other than 0 and 77, or a signal),
 * the deadline, or SIGINT/SIGTERM/SIGHUP to the launcher stops the job
 * (a failing exit status after settle_s, unless a rank's death by signal
 * comes first and is named as the cause instead):
 * SIGTERM to every remaining rank, SIGKILL after grace_s; every process
 * in the ranks' process group is gone when this returns.
 *
 * Returns the worst exit status in automake's order (99 > 1 > 77 > 0;
 * other failing codes rank with 1). A rank killed by a signal before the
 * stop counts as 99; the deadline gives at least 1 (ranks that did not
 * end in time: a hang of the program under test, as a rank's own
 * deadline is); a signal to the launcher gives 99; bad options or a
 * failure to start give 99 with a message on stderr. */
int eg_launch(const eg_launch_opts_t *o, char **argv);

#endif
