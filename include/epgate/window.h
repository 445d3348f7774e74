/* The timing boundaries of a step's calls (docs/metrics.md,
 * "Boundaries"): which one the gated times are, the device window's hold
 * and its validity per sample, and the kernel time of a call (CUPTI). */
#ifndef EPGATE_WINDOW_H
#define EPGATE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

typedef enum eg_boundary {
	EG_BOUNDARY_CALL = 0,	/* marks around the call on an idle stream */
	EG_BOUNDARY_WINDOW = 1, /* the same marks behind a hold */
	EG_BOUNDARY_KERNEL = 2, /* the union of the call's kernels (CUPTI) */
	/* a CUDA graph of the call, captured after a verified call and
	 * launched behind a hold (capture-safe plugins only) */
	EG_BOUNDARY_REPLAY = 3
} eg_boundary_t;

/* The replay boundary verifies this many replays, each on new data,
 * before it times any (lib/step/step.c, lib/engines/plugin_step.c). */
#define EG_REPLAY_CHECKS 2

/* "call", "window", "kernel", "replay" */
const char *eg_boundary_name(eg_boundary_t b);
/* EG_EINVAL for anything else */
int eg_boundary_parse(const char *s, eg_boundary_t *b);
/* EPGATE_BOUNDARY, else dflt; a bad value: EG_EINVAL, err names it */
int eg_boundary_env(eg_boundary_t dflt, eg_boundary_t *b, char *err,
		    size_t errlen);

/* The device window's hold, adapted per sample: a call whose start mark
 * the stream had passed when it returned began its device work after
 * the hold ended (the host's work was longer than the hold), so the
 * sample is short and the next hold twice as long, up to max_us. A call
 * still short at max_us waits for its stream inside (a host sync): it is
 * then counted as synced and the hold stays. */
typedef struct eg_window {
	double hold_us;	  /* the next hold */
	double max_us;	  /* the longest */
	uint32_t samples; /* calls since the last reset */
	uint32_t short_n; /* of which short */
	int synced;	  /* short even with the longest hold */
} eg_window_t;

/* EPGATE_HOLD_US (default 50) and EPGATE_HOLD_MAX_US (default 5000),
 * each 0 to 1e6; a bad value: EG_EINVAL, err names it */
int eg_window_init(eg_window_t *w, char *err, size_t errlen);
/* After a call: passed = its start mark was passed when it returned.
 * Returns 1 when the sample is short. */
int eg_window_after(eg_window_t *w, int passed);
void eg_window_reset(eg_window_t *w);

/* What a point's evidence says of its timing (per rank; the driver
 * joins the ranks). Fixed size: it travels in the rank reports. */
typedef struct eg_timing_sum {
	int32_t boundary; /* eg_boundary_t of the gated times */
	int32_t window;	  /* a window was held */
	uint32_t samples, short_n;
	int32_t synced;
	double hold_us;	       /* the last hold */
	int32_t own_marks;     /* the plugin marked its library's call */
	int32_t kernel;	       /* kernel times were recorded */
	uint32_t kern_dropped; /* CUPTI records lost */
	char kernels[1024];    /* "name n=N mean_us; ..." by total time */
	/* the replay boundary: replays verified (on new data) before any
	 * was timed */
	uint32_t replays_verified;
	/* the kernel boundary: calls whose time is the union of only the
	 * kernels queued inside the plugin's marks (eg_kern_mark) */
	uint32_t kern_spanned;
} eg_timing_sum_t;

/* Kernel time through CUPTI's activity API (lib/step/kern.c; libcupti
 * is loaded at run time: EPGATE_CUPTI_LIB, else the usual names). */
typedef struct eg_kern eg_kern_t;
/* EG_ENOSYS with err saying why where CUPTI or CUDA is missing. spans:
 * also trace the CUDA API calls (CUPTI's runtime, driver and external
 * correlation records), so that a call whose plugin marks its library's
 * own call (eg_kern_mark) is timed by the kernels queued inside the
 * marks only; off beside another boundary, whose host times the tracing
 * would lengthen. */
int eg_kern_open(eg_kern_t **k, int spans, char *err, size_t errlen);
void eg_kern_close(eg_kern_t *k);
/* before a call: the records so far are dropped (work queued before) */
int eg_kern_begin(eg_kern_t *k);
/* after the call's work is done: the union of its kernels' intervals,
 * seconds, epgate's own hold left out */
int eg_kern_end(eg_kern_t *k, double *s);
/* the table of kernel names since the last reset, by total time */
void eg_kern_table(const eg_kern_t *k, char *buf, size_t len,
		   uint32_t *dropped);
/* calls since the last reset timed by the kernels inside marks only */
uint32_t eg_kern_spanned(const eg_kern_t *k);
void eg_kern_reset(eg_kern_t *k);
/* The library's own call begins (end 0) or has returned (1) on the
 * calling thread, inside a call being timed: the kernels the CUDA API
 * calls in between queue are the call's kernel time (the adapter's own
 * work around it left out). A no-op without a collector with spans. */
void eg_kern_mark(int end);

/* One kernel on the device and the CUDA API call that queued it. */
typedef struct eg_kern_iv {
	uint64_t start, end; /* ns */
	uint32_t corr;	     /* CUPTI's correlation id */
} eg_kern_iv_t;
/* The length of the union of iv's intervals (ns; iv is sorted by
 * start): of those whose corr is in ids (sorted ascending, nids), or of
 * all of them where ids is NULL. */
uint64_t eg_kern_union(eg_kern_iv_t *iv, size_t n, const uint32_t *ids,
		       size_t nids);

#endif
