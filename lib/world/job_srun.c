/* Jobs inside a Slurm allocation: `epgate run` (or `bench profile`)
 * started by sbatch or salloc runs each job's ranks as one srun step
 * instead of forking them here, so they land on the allocation's nodes
 * and Slurm accounts for them (docs/slurm.md). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/world/job_int.h"

int eg_job_under_slurm(void)
{
	const char *l = getenv("EPGATE_LAUNCHER");

	if (l && !strcmp(l, "local"))
		return 0;
	return getenv("SLURM_JOB_ID") && !getenv("SLURM_STEP_ID");
}

static unsigned eg__alloc_nodes(void)
{
	const char *s = getenv("SLURM_JOB_NUM_NODES");

	if (!s)
		s = getenv("SLURM_NNODES");
	return s && atoi(s) > 0 ? (unsigned)atoi(s) : 1;
}

const char **eg_job_srun_argv(const eg_job_t *j, const char *self,
			      char num[4][32])
{
	uint32_t rpn = j->ranks_per_node ? j->ranks_per_node : j->ranks;
	uint32_t vnodes = (j->ranks + rpn - 1) / rpn, nodes = 1;
	size_t n = 0, a = 0;
	const char **argv;

	/* virtual nodes on real ones when the allocation has them and the
	 * ranks split evenly; else all on one node, the virtual nodes
	 * kept by EPGATE_RANKS_PER_NODE */
	if (vnodes <= eg__alloc_nodes() && j->ranks % rpn == 0)
		nodes = vnodes;
	while (j->args[n])
		n++;
	if (!(argv = calloc(n + 16, sizeof(*argv))))
		return NULL;
	snprintf(num[0], 32, "%u", nodes);
	snprintf(num[1], 32, "%u", j->ranks);
	snprintf(num[2], 32, "--ntasks-per-node=%u", j->ranks / nodes);
	argv[a++] = "srun";
	argv[a++] = "-N";
	argv[a++] = num[0];
	argv[a++] = "-n";
	argv[a++] = num[1];
	if (j->ranks % nodes == 0)
		argv[a++] = num[2];
	argv[a++] = "-m";
	argv[a++] = "block";
	argv[a++] = "--kill-on-bad-exit=1";
	/* the batch step holds a CPU; the ranks share the allocation's */
	argv[a++] = "--overcommit";
	argv[a++] = "--overlap";
	argv[a++] = self;
	for (size_t i = 0; i < n; i++)
		argv[a++] = j->args[i];
	return argv;
}

void eg_job_srun_env(const eg_job_t *j)
{
	static unsigned step; /* this process's steps, for their ports */
	const char *job = getenv("SLURM_JOB_ID");
	unsigned char r[16];
	char v[64];
	int fd;

	snprintf(v, sizeof(v), "%u",
		 j->ranks_per_node ? j->ranks_per_node : j->ranks);
	setenv("EPGATE_RANKS_PER_NODE", v, 1);
	/* never the port of a step before it (or another job's), and below
	 * Linux's ephemeral ports (32768-60999 by default), where any
	 * process's outgoing connections on the node take theirs */
	snprintf(v, sizeof(v), "%u",
		 20000u + ((unsigned)(job ? atol(job) : 0) * 997u +
			   (unsigned)getpid() * 64u + step++) %
			      12000u);
	setenv("EPGATE_BOOT_PORT", v, 1);
	if (!getenv("EPGATE_SECRET") &&
	    getrandom(r, sizeof(r), 0) == (ssize_t)sizeof(r)) {
		for (int i = 0; i < 16; i++)
			snprintf(v + 2 * i, 3, "%02x", r[i]);
		setenv("EPGATE_SECRET", v, 1);
	}
	if ((fd = open("/dev/null", O_RDONLY)) >= 0) {
		dup2(fd, 0);
		if (fd > 0)
			close(fd);
	}
}
