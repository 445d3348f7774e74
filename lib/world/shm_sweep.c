/* The libfabric shm regions of processes that are gone
 * (include/epgate/world.h): swept by the launcher and the fabric
 * transport. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/world.h"

void eg_shm_sweep(long pid)
{
	char pre[32];
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	size_t n = (size_t)snprintf(pre, sizeof(pre), "%ld:", pid);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, pre, n)) {
			char path[300];
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	closedir(d);
}

/* The pid a libfabric shm region is named after ("<pid>:..."), or 0. */
static long eg__shm_pid(const char *name)
{
	long pid = 0;
	size_t i = 0;

	for (; name[i] >= '0' && name[i] <= '9' && i < 10; i++)
		pid = pid * 10 + (name[i] - '0');
	return i && name[i] == ':' ? pid : 0;
}

int eg_shm_sweep_dead(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long pid = eg__shm_pid(e->d_name);
		char path[300];
		struct stat sb;

		if (pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue; /* alive, or not ours to ask about */
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_uid == geteuid() && unlink(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}
