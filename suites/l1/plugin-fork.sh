#!/bin/sh
# A plugin instance in a forked child (lib/engines/plugin_fork.c):
# - FORK_THREADS never returns from dispatch when the process it was
#   forked from has a second thread (a lock held by that thread at the
#   fork stays locked in the child: stress's watchdog thread did this to
#   the race fault under ASan). check and stress fork from one thread, so
#   it passes both; with a watchdog thread in stress it hung every case.
# - CLOSE_HANG closes every descriptor above stderr, the socket to epgate
#   among them, and never returns: the call's deadline still ends it with
#   a hang verdict, in check and in stress (before, check waited for the
#   child's exit forever). `timeout` only turns such a hang into a
#   failure of this script; nothing here measures a time.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/check-lib.sh"
if [ ! -f "$f/libeg-fault-fork-threads.so" ]; then
	echo "1..0 # SKIP the template's planted faults are not built"
	exit 0
fi
shape="--world=1 --experts=8 --topk=2 --hidden=64 --tokens=8"
bound=300 # far beyond any deadline below: only a hang reaches it

for cmd in check stress; do
	EPGATE_TIMEOUT=5 timeout $bound "$EG_EPGATE" $cmd \
		--engine "plugin:$f/libeg-fault-fork-threads.so" $shape \
		--reports "$EG_TMP/runs" >"$EG_TMP/ft.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		eg_ok "fork-threads: $cmd forks its plugin children from a process of one thread: $(tail -n 1 "$EG_TMP/ft.out")"
	else
		eg_not_ok "fork-threads: $cmd: exit $rc"
		sed 's/^/# /' "$EG_TMP/ft.out" | head -n 12
	fi
done

said="dispatch: did not return within the deadline of 2.0 s (EPGATE_TIMEOUT), its end of the socket closed; its process was killed"
for cmd in check stress; do
	EPGATE_TIMEOUT=2 timeout $bound "$EG_EPGATE" $cmd \
		--engine "plugin:$f/libeg-fault-close-hang.so" $shape \
		--reports "$EG_TMP/runs" >"$EG_TMP/ch.out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "$said" "$EG_TMP/ch.out"; then
		eg_ok "close-hang: $cmd ends the call at its deadline, a hang: $said"
	else
		eg_not_ok "close-hang: $cmd: exit $rc (124: it did not end)"
		sed 's/^/# /' "$EG_TMP/ch.out" | head -n 12
	fi
done
eg_done
