/* Signal dispositions: epgate owns them. Libraries may install handlers
 * in their constructors, before main: libfabric's PSM provider
 * (libinfinipath) catches SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL and
 * SIGABRT unless IPATH_NO_BACKTRACE is set, writes a .btr backtrace file
 * and calls exit() on whichever thread got the signal; two such signals
 * on two threads run glibc's exit handlers twice at once (a crash or a
 * hang in a destructor), and a stopped rank ends as "exit 1", a failing
 * test. See docs/world.md, "Signals". */
#ifndef EPGATE_SIGNALS_H
#define EPGATE_SIGNALS_H

/* The signals libraries are known to take over. */
extern const int eg_signals_owned[];
extern const unsigned eg_signals_n_owned;

/* Sets IPATH_NO_BACKTRACE=1 (libraries loaded later and child processes
 * install nothing) and resets every signal of eg_signals_owned whose
 * handler is not the default to SIG_DFL, so that a stop signal ends the
 * process by that signal and a crash stays a crash. Call first thing in
 * main, before any thread starts; again after loading code that may
 * install handlers (the fabric transport does, before its threads).
 * Returns how many dispositions it reset. */
int eg_signals_own(void);

#endif
