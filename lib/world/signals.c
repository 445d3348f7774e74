/* epgate owns its signal dispositions (include/epgate/signals.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <signal.h>
#include <stdlib.h>

#include "epgate/signals.h"

const int eg_signals_owned[] = {SIGINT, SIGTERM, SIGHUP,  SIGQUIT, SIGSEGV,
				SIGBUS, SIGILL,	 SIGABRT, SIGFPE};
const unsigned eg_signals_n_owned =
    sizeof(eg_signals_owned) / sizeof(eg_signals_owned[0]);

int eg_signals_own(void)
{
	int reset = 0;

	/* PSM reads it in its constructor: every later load and every
	 * child process leaves the dispositions alone */
	setenv("IPATH_NO_BACKTRACE", "1", 1);
	for (unsigned i = 0; i < eg_signals_n_owned; i++) {
		struct sigaction sa, old;

		if (sigaction(eg_signals_owned[i], NULL, &old) < 0)
			continue;
		/* ignored stays ignored (nohup); a handler goes */
		if (!(old.sa_flags & SA_SIGINFO) &&
		    (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN))
			continue;
		sa = (struct sigaction){.sa_handler = SIG_DFL};
		sigemptyset(&sa.sa_mask);
		if (sigaction(eg_signals_owned[i], &sa, NULL) == 0)
			reset++;
	}
	return reset;
}
