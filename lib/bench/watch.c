/* The resource watch (include/epgate/watch.h): /proc for this process
 * and its descendants (a plugin's forked instances, a launcher's ranks),
 * NVML for the GPUs' memory when a driver is there (opened with dlopen:
 * nothing to link, nothing to build against). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/watch.h"

/* the stated bound's numbers, for both bounds below */
#define EG__BOUND                                                              \
	.rss_bytes = 16u << 20, .rss_frac = 0.01, .fds = 4,                    \
	.dev_bytes = 64u << 20

const eg_watch_bound_t eg_watch_default_bound = {EG__BOUND};

#if defined(__SANITIZE_ADDRESS__)
#define EG__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EG__ASAN 1
#endif
#endif

const eg_watch_bound_t *eg_watch_bound_here(void)
{
#ifdef EG__ASAN
	/* a 3-step bench point grew 18.5 MiB under ASan (suites/report/
	 * verdicts.sh), none in the plain build */
	static const eg_watch_bound_t asan = {
	    EG__BOUND, .rss_off = "an ASan build: LeakSanitizer judges leaks"};
	return &asan;
#else
	return &eg_watch_default_bound;
#endif
}

#define EG__PROCS_MAX 1024

/* The children of every thread of pid, appended to pids. */
static void eg__children(int pid, int *pids, uint32_t *n)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && *n < EG__PROCS_MAX) {
		char cp[320];
		FILE *f;
		int c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", pid,
			 e->d_name);
		if (!(f = fopen(cp, "r")))
			continue;
		while (*n < EG__PROCS_MAX && fscanf(f, "%d", &c) == 1)
			pids[(*n)++] = c;
		fclose(f);
	}
	closedir(d);
}

static uint64_t eg__rss(int pid)
{
	char path[64];
	unsigned long long size = 0, res = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint32_t eg__fds(int pid)
{
	char path[64];
	struct dirent *e;
	uint32_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - (pid == getpid()); /* our own opendir's descriptor */
}

/* ---- NVML, when the driver has it --------------------------------------- */

typedef struct eg__nvml_mem {
	unsigned long long total, free, used;
} eg__nvml_mem_t;

static struct {
	int tried, ok;
	int (*count)(unsigned *);
	int (*handle)(unsigned, void **);
	int (*mem)(void *, eg__nvml_mem_t *);
} eg__nv;

static int eg__nvml_open(void)
{
	void *dl;
	int (*init)(void);

	if (eg__nv.tried)
		return eg__nv.ok;
	eg__nv.tried = 1;
	if (!(dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
		return 0;
	*(void **)&init = dlsym(dl, "nvmlInit_v2");
	*(void **)&eg__nv.count = dlsym(dl, "nvmlDeviceGetCount_v2");
	*(void **)&eg__nv.handle = dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&eg__nv.mem = dlsym(dl, "nvmlDeviceGetMemoryInfo");
	eg__nv.ok =
	    init && eg__nv.count && eg__nv.handle && eg__nv.mem && init() == 0;
	return eg__nv.ok;
}

static void eg__dev(eg_watch_sample_t *s)
{
	unsigned n = 0;

	if (!eg__nvml_open() || eg__nv.count(&n) != 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		eg__nvml_mem_t m;
		void *h;

		if (eg__nv.handle(i, &h) != 0 || eg__nv.mem(h, &m) != 0)
			return;
		s->dev_bytes += m.used;
	}
	s->have_dev = 1;
}

int eg_watch_on(void)
{
	const char *e = getenv("EPGATE_WATCH");

	return !(e && !strcmp(e, "0"));
}

int eg_watch_sample(eg_watch_sample_t *s)
{
	int *pids = malloc(EG__PROCS_MAX * sizeof(int));
	uint32_t n = 1;

	memset(s, 0, sizeof(*s));
	if (!pids)
		return EG_ENOMEM;
	/* NVML used once before the descriptors are counted: its first
	 * use opens some (14 on the lent H100), which would count as growth
	 * between a first sample and any later one (they did, in every
	 * first stress case on the GPU: "descriptors +14") */
	if (!eg__nv.tried) {
		eg_watch_sample_t first;

		memset(&first, 0, sizeof(first));
		eg__dev(&first);
	}
	pids[0] = getpid();
	for (uint32_t i = 0; i < n; i++) /* breadth first: n grows */
		eg__children(pids[i], pids, &n);
	for (uint32_t i = 0; i < n; i++) {
		s->rss_bytes += eg__rss(pids[i]);
		s->fds += eg__fds(pids[i]);
	}
	s->procs = n;
	free(pids);
	eg__dev(s);
	return s->rss_bytes ? EG_OK : EG_ESYS;
}

static double eg__mib(double b)
{
	return b / (1024.0 * 1024.0);
}

/* A resource's growth from a to b is judged only when it went on from
 * mid to b by a quarter of the whole (mid NULL: always). */
static int eg__late(double all, double late)
{
	return late >= all / 4;
}

int eg_watch_judge_mid(const eg_watch_sample_t *a, const eg_watch_sample_t *mid,
		       const eg_watch_sample_t *b, const eg_watch_bound_t *k,
		       char *msg, size_t len)
{
	double rss = (double)b->rss_bytes - (double)a->rss_bytes;
	double rss_max = (double)k->rss_bytes + k->rss_frac * a->rss_bytes;
	long fds = (long)b->fds - (long)a->fds;
	double dev = (double)b->dev_bytes - (double)a->dev_bytes;
	int dev_on = a->have_dev && b->have_dev, bad;
	size_t o;

	if (mid && !mid->rss_bytes)
		mid = NULL; /* not sampled */
	bad = (!k->rss_off && rss > rss_max &&
	       (!mid || eg__late(rss, (double)b->rss_bytes -
					  (double)mid->rss_bytes))) ||
	      (fds > (long)k->fds &&
	       (!mid || eg__late((double)fds, (double)b->fds - mid->fds))) ||
	      (dev_on && dev > (double)k->dev_bytes &&
	       (!mid || !mid->have_dev ||
		eg__late(dev, (double)b->dev_bytes - (double)mid->dev_bytes)));
	if (k->rss_off)
		o = (size_t)snprintf(msg, len,
				     "resident memory %+.1f MiB (not judged: "
				     "%s), descriptors %+ld (bound %u)",
				     eg__mib(rss), k->rss_off, fds, k->fds);
	else
		o = (size_t)snprintf(msg, len,
				     "resident memory %+.1f MiB (bound %.1f "
				     "MiB), descriptors %+ld (bound %u)",
				     eg__mib(rss), eg__mib(rss_max), fds,
				     k->fds);
	if (o < len)
		snprintf(msg + o, len - o,
			 dev_on ? ", device memory %+.1f MiB "
				  "(bound %.1f MiB)"
				: ", device memory not watched "
				  "(no NVML)",
			 eg__mib(dev), eg__mib((double)k->dev_bytes));
	return bad;
}

int eg_watch_judge(const eg_watch_sample_t *a, const eg_watch_sample_t *b,
		   const eg_watch_bound_t *k, char *msg, size_t len)
{
	return eg_watch_judge_mid(a, NULL, b, k, msg, len);
}
