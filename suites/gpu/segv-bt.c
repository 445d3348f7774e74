/* LD_PRELOAD shim for a crash's native frames where the GPU machine has
 * no gdb (2026-12-07): on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT it
 * prints the crashing thread's frames (glibc's backtrace), each with its
 * module and the offset into it (for addr2line -e MODULE OFFSET), then
 * lets the signal take its course. Python's faulthandler, installed
 * after it, prints Python's frames first and then calls this one.
 *
 *   cc -shared -fPIC -O1 -o segv-bt.so segv-bt.c -ldl
 *   LD_PRELOAD=./segv-bt.so python3 script.py
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void segv_bt(int sig)
{
	void *pc[64];
	char line[512];
	int n = backtrace(pc, 64);

	snprintf(line, sizeof(line), "segv-bt: signal %d, %d native frames\n",
		 sig, n);
	(void)!write(2, line, strlen(line));
	for (int i = 0; i < n; i++) {
		Dl_info di;
		int len;

		if (dladdr(pc[i], &di) && di.dli_fname)
			len = snprintf(
			    line, sizeof(line),
			    "segv-bt: #%d %s+0x%lx (%s+0x%lx)\n", i,
			    di.dli_fname,
			    (unsigned long)((uintptr_t)pc[i] -
					    (uintptr_t)di.dli_fbase),
			    di.dli_sname ? di.dli_sname : "?",
			    di.dli_saddr
				? (unsigned long)((uintptr_t)pc[i] -
						  (uintptr_t)di.dli_saddr)
				: 0ul);
		else
			len = snprintf(line, sizeof(line), "segv-bt: #%d %p\n",
				       i, pc[i]);
		if (len > 0)
			(void)!write(2, line, (size_t)len);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void segv_bt_init(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa;
	void *warm[1];

	backtrace(warm, 1); /* loads libgcc_s now, not inside the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = segv_bt;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
