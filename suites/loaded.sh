#!/bin/sh
# suites/loaded.sh CMD...: CMD with EG_BUSY_LOOPS (default 2) busy loops
# beside it, ended with it (make check-loaded). Exit status: CMD's.
n=${EG_BUSY_LOOPS:-2}
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done' EXIT
trap 'exit 99' INT TERM HUP
i=0
while [ "$i" -lt "$n" ]; do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done
echo "loaded.sh: $n busy loops beside: $*"
"$@"
rc=$?
echo "loaded.sh: exit $rc with $n busy loops beside it"
exit "$rc"
