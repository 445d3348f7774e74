/* The resource watch (docs/stress.md, "Resources"): what a process and
 * every process under it hold -- resident memory, open file descriptors
 * and, where NVML is there, the GPUs' memory in use -- sampled before and
 * after a stretch of calls, and judged against a stated bound. `epgate
 * stress` watches each case (its plugin instances run in forked children,
 * which are counted), the bench driver each rank's timed steps. */
#ifndef EPGATE_WATCH_H
#define EPGATE_WATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct eg_watch_sample {
	uint64_t rss_bytes; /* resident memory of the processes */
	uint32_t fds;	    /* their open file descriptors */
	uint32_t procs;	    /* this process and its descendants */
	int have_dev;	    /* NVML answered */
	uint64_t dev_bytes; /* device memory in use on every GPU (NVML's
			       used: every process on them, not only ours) */
} eg_watch_sample_t;

/* The bound on growth over one stretch: resident memory may grow by
 * rss_bytes plus rss_frac of what it was, descriptors by fds, device
 * memory by dev_bytes. rss_off non-NULL: resident memory is shown, not
 * judged, and rss_off says why. */
typedef struct eg_watch_bound {
	uint64_t rss_bytes;
	double rss_frac;
	uint32_t fds;
	uint64_t dev_bytes;
	const char *rss_off;
} eg_watch_bound_t;

/* The stated bound: 16 MiB + 1% resident, 4 descriptors, 64 MiB of
 * device memory. */
extern const eg_watch_bound_t eg_watch_default_bound;
/* The bound the bench and stress judge by in this build: the stated one,
 * but in an ASan build resident memory is not judged (its allocator
 * holds freed memory in a quarantine and maps shadow for new addresses,
 * so the figure is not the library's; LeakSanitizer finds leaks there);
 * descriptors and device memory are. */
const eg_watch_bound_t *eg_watch_bound_here(void);

/* The watch is on unless EPGATE_WATCH=0 (an escape hatch where a
 * library is known to grow on purpose; say so with the results). */
int eg_watch_on(void);

/* This process and its descendants now (/proc; NVML by dlopen, absent
 * without a driver). EG_ESYS when /proc cannot be read. */
int eg_watch_sample(eg_watch_sample_t *s);

/* The growth from a to b, judged: 0 within the bound, 1 beyond it, and
 * msg gets one line either way ("resident memory +1.5 GiB (bound 16.3
 * MiB), descriptors +300 (bound 4)" or the growth within its bound). */
int eg_watch_judge(const eg_watch_sample_t *a, const eg_watch_sample_t *b,
		   const eg_watch_bound_t *bound, char *msg, size_t len);
/* The same, with a sample in the middle: a resource beyond its bound
 * counts only when it also grew from mid to b by a quarter of its whole
 * growth -- a leak grows step by step, a pool a library grows once (then
 * flat) is none. mid not sampled (rss 0): as eg_watch_judge. */
int eg_watch_judge_mid(const eg_watch_sample_t *a, const eg_watch_sample_t *mid,
		       const eg_watch_sample_t *b,
		       const eg_watch_bound_t *bound, char *msg, size_t len);

#endif
