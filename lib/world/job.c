/* Jobs of this program (include/epgate/job.h): fork, exec `<self>
 * launch ... -- <self> ARGS`, pump its output, wait. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/job.h"
#include "lib/base/data_path.h"
#include "lib/world/job_int.h"

/* The launcher's argv; free() it (the numbers live in num). */
static const char **eg__argv(const eg_job_t *j, const char *self,
			     char num[4][32])
{
	size_t n = 0, a = 0;
	const char **argv;

	while (j->args[n])
		n++;
	argv = calloc(n + 11, sizeof(*argv));
	if (!argv)
		return NULL;
	snprintf(num[0], 32, "%u", j->ranks);
	snprintf(num[1], 32, "%u", j->ranks_per_node);
	snprintf(num[2], 32, "%g", j->timeout_s);
	argv[a++] = self;
	argv[a++] = "launch";
	argv[a++] = "-n";
	argv[a++] = num[0];
	argv[a++] = "--ranks-per-node";
	argv[a++] = num[1];
	argv[a++] = "--timeout";
	argv[a++] = num[2];
	argv[a++] = "--";
	argv[a++] = self;
	for (size_t i = 0; i < n; i++)
		argv[a++] = j->args[i];
	return argv;
}

/* The child: output to out (a pipe), else to the log file, else where
 * this process's goes; the environment; the launcher. */
static void eg__child(const eg_job_t *j, const char *const *argv, int out,
		      pid_t parent)
{
	/* a driver stopped or killed takes its job along: the launcher
	 * stops its ranks on SIGTERM */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127); /* the driver died before prctl */
	if (out < 0 && j->log)
		out = open(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out >= 0) {
		dup2(out, 1);
		dup2(out, 2);
		if (out > 2)
			close(out);
	}
	for (size_t i = 0; i < j->n_env; i++)
		setenv(j->env[i].key, j->env[i].value, !j->env[i].keep);
	if (eg_job_under_slurm()) { /* srun's step (job_srun.c) */
		eg_job_srun_env(j);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Copies the job's output, line by line, to the log and the callback
 * until every writer (the launcher and its ranks) is gone. */
static void eg__pump(const eg_job_t *j, int fd)
{
	FILE *in = fdopen(fd, "r"), *lf = j->log ? fopen(j->log, "w") : NULL;
	char *line = NULL;
	size_t cap = 0;

	if (!in) {
		close(fd);
	} else {
		while (getline(&line, &cap, in) > 0) {
			if (lf) {
				fputs(line, lf);
				fflush(lf);
			}
			if (j->on_line)
				j->on_line(line, j->arg);
		}
		fclose(in);
	}
	free(line);
	if (lf)
		fclose(lf);
}

static int eg__wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return EG_EXIT_HARD;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EG_EXIT_HARD;
}

int eg_job_run(const eg_job_t *j, char *err, size_t errlen)
{
	const char *self = eg_self_exe(), **argv;
	/* a pipe only for a callback: a log alone is written by the job
	 * itself, so nothing here waits on ranks that outlive it */
	int fds[2] = {-1, -1}, piped = j->on_line != NULL;
	char num[4][32];
	pid_t pid, parent;

	if (!self) {
		snprintf(err, errlen, "cannot find its own executable");
		return EG_ESYS;
	}
	argv = eg_job_under_slurm() ? eg_job_srun_argv(j, self, num)
				    : eg__argv(j, self, num);
	if (!argv)
		return EG_ENOMEM;
	if (piped && pipe(fds) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		free(argv);
		return EG_ESYS;
	}
	if (piped)
		fcntl(fds[0], F_SETFD, FD_CLOEXEC); /* not for the ranks */
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid == 0)
		eg__child(j, argv, fds[1], parent);
	if (pid < 0)
		snprintf(err, errlen, "fork: %s", strerror(errno));
	free(argv);
	if (piped)
		close(fds[1]);
	if (pid < 0) {
		if (piped)
			close(fds[0]);
		return EG_ESYS;
	}
	if (piped)
		eg__pump(j, fds[0]);
	return eg__wait(pid);
}
