#!/bin/sh
# setup.sh's package step with a fake apt-get, dpkg-query and sudo on
# PATH (nothing is installed): another apt holding the package lock is
# waited for, boundedly, saying so; every failure of the step exits 99
# with a line that says which.
. "${EG_SRCDIR:-.}/suites/lib.sh"

F=$EG_TMP/bin
mkdir -p "$F"
# dpkg-query: every package missing (so setup installs)
printf '#!/bin/sh\nexit 1\n' >"$F/dpkg-query"
printf '#!/bin/sh\nexec "$@"\n' >"$F/sudo"
# apt-get: fails with apt's lock message LOCKED times (a counter file),
# then succeeds; FAIL=1: fails with another error
cat >"$F/apt-get" <<EOF2
#!/bin/sh
echo "\$*" >>"$EG_TMP/calls"
n=\$(cat "$EG_TMP/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$EG_TMP/count"
if [ "\${FAIL:-0}" = 1 ]; then
	echo "E: Unable to locate package libnope-dev" >&2
	exit 100
fi
if [ "\$n" -lt "\${LOCKED:-0}" ]; then
	echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
	exit 100
fi
exit 0
EOF2
chmod +x "$F"/*

setup() {
	rm -f "$EG_TMP/count" "$EG_TMP/calls"
	PATH="$F:$PATH" EPGATE_APT_RETRY_S=1 sh "$EG_SRCDIR/setup.sh" --deps \
		>"$EG_TMP/out" 2>&1
}

LOCKED=2 EPGATE_APT_WAIT=60 setup
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'holds the package lock; waiting' "$EG_TMP/out" &&
	[ "$(cat "$EG_TMP/count")" -eq 4 ] && grep -q '^install ' "$EG_TMP/calls"; then
	eg_ok "a held dpkg lock is waited for: exit 0 after $(cat "$EG_TMP/count") apt-get calls"
else
	eg_not_ok "a held dpkg lock is waited for (exit $rc, $(cat "$EG_TMP/count" 2>/dev/null) calls)"
	sed 's/^/# /' "$EG_TMP/out"
fi
LOCKED=1000 EPGATE_APT_WAIT=1 setup
rc=$?
if [ "$rc" -eq 99 ] && grep -q 'still held after .* s (EPGATE_APT_WAIT=1)' "$EG_TMP/out" &&
	grep -q 'apt-get update failed' "$EG_TMP/out"; then
	eg_ok "a lock held past EPGATE_APT_WAIT: exit 99, '$(grep -m1 'still held' "$EG_TMP/out" | cut -c1-80)...'"
else
	eg_not_ok "a lock held past EPGATE_APT_WAIT: exit $rc, want 99"
	sed 's/^/# /' "$EG_TMP/out"
fi
FAIL=1 setup
rc=$?
if [ "$rc" -eq 99 ] && [ "$(cat "$EG_TMP/count")" -eq 1 ] &&
	grep -q 'Unable to locate package' "$EG_TMP/out" &&
	grep -q 'apt-get update failed' "$EG_TMP/out"; then
	eg_ok "another apt failure: exit 99 at once, apt's own line shown"
else
	eg_not_ok "another apt failure: exit $rc, want 99"
	sed 's/^/# /' "$EG_TMP/out"
fi
# --report-tools: the browser test's packages through the same apt step,
# then npm's tap-parser (a fake node 18 without it: @17); planted: apt
# failing is exit 99 before npm
printf '#!/bin/sh\ncase "$*" in -p*) echo 18 ;; *) exit 1 ;; esac\n' >"$F/node"
printf '#!/bin/sh\necho "npm $*" >>"%s"\n[ "$1" = root ] && echo /nowhere\nexit 0\n' "$EG_TMP/calls" >"$F/npm"
chmod +x "$F/node" "$F/npm"
tools() {
	rm -f "$EG_TMP/count" "$EG_TMP/calls"
	PATH="$F:$PATH" EPGATE_APT_RETRY_S=1 sh "$EG_SRCDIR/setup.sh" --report-tools \
		>"$EG_TMP/out" 2>&1
}
tools
rc=$?
if [ "$rc" -eq 0 ] &&
	grep -q '^install .*chromium chromium-driver python3-selenium python3-yaml' "$EG_TMP/calls" &&
	grep -q '^npm install -g .*tap-parser@17$' "$EG_TMP/calls"; then
	eg_ok "setup.sh --report-tools: chromium, chromium-driver, python3-selenium, python3-yaml, then npm's tap-parser@17 (node 18)"
else
	eg_not_ok "setup.sh --report-tools: exit $rc"
	sed 's/^/# /' "$EG_TMP/calls" "$EG_TMP/out" 2>/dev/null
fi
FAIL=1 tools
rc=$?
if [ "$rc" -eq 99 ] && ! grep -q '^npm install' "$EG_TMP/calls" &&
	grep -q 'apt-get update failed' "$EG_TMP/out"; then
	eg_ok "setup.sh --report-tools with apt failing: exit 99, npm not run"
else
	eg_not_ok "setup.sh --report-tools with apt failing: exit $rc"
fi
sh "$EG_SRCDIR/setup.sh" --frobnicate >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q '^usage: sh setup.sh' "$EG_TMP/out"; then
	eg_ok "setup.sh --frobnicate: 99 and the usage"
else
	eg_not_ok "setup.sh --frobnicate: exit $rc"
fi
eg_done
