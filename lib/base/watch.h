/* A bound on calls into code that is not epgate's (a plugin's query,
 * create, dispatch, combine, destroy) where that code runs in this
 * process (an L2 rank, lib/suite/rank.c): such a call can be neither
 * interrupted nor given up on, so one that outlasts its bound is said
 * and the process ends with 1. A call that spins in its own transport
 * at 100% CPU is caught as well as one that blocks. Off until
 * eg_watch_start; the calls in between cost a clock read and a few
 * atomic stores. */
#ifndef EG_BASE_WATCH_H
#define EG_BASE_WATCH_H

/* Says, on the watch's thread, that call of who (e.g. "plugin
 * template", "dispatch") did not return within bound_s; the process
 * then exits with 1 (EG_EXIT_FAIL) without running exit handlers. */
typedef void (*eg_watch_say_fn)(const char *who, const char *call,
				double bound_s);

/* Starts the watch: every call may last bound_s (> 0) seconds. Once per
 * process; EG_OK, or EG_ESYS when its thread cannot start (calls are then
 * not bounded). */
int eg_watch_start(double bound_s, eg_watch_say_fn say);

/* A call begins (who and call outlive it) and ends. Not nested. */
void eg_watch_enter(const char *who, const char *call);
void eg_watch_leave(void);

#endif
