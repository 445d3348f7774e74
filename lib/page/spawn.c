/* The helper programs the report runs (gnuplot, a headless browser). */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/page/page.h"

int eg__spawn_wait(const char *path, const char *const *argv, const char *out,
		   unsigned timeout_s, int *status)
{
	pid_t pid;

	fflush(NULL); /* the child must not write our buffers again */
	pid = fork();

	if (pid < 0)
		return EG_ESYS;
	if (pid == 0) {
		FILE *in = freopen("/dev/null", "r", stdin);
		FILE *o = freopen(out, "w", stdout);

		(void)in;
		if (!o || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		alarm(timeout_s);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return EG_ESYS;
	return EG_OK;
}
