#!/bin/sh
# Quick start, step 1: install the Debian/Ubuntu packages epgate needs,
# build it, and run the main job (`epgate run`, profile local).
#   sh setup.sh            packages + build + epgate run
#   sh setup.sh --deps     packages only
#   sh setup.sh --build    packages + build
#   sh setup.sh --report-tools  what two report tests need and skip
#                          without: chromium, chromium-driver,
#                          python3-selenium, python3-yaml (the browser
#                          test) and npm's tap-parser (the TAP 14 check);
#                          CI (.ci/run) runs it, where a skip fails
# Exit status: epgate run's (0 pass, 1 a check failed, 77 nothing ran);
# 99 when the packages or the build fail (each says why). Another apt
# or dpkg holding the package lock is waited for, up to
# EPGATE_APT_WAIT seconds (default 600), saying so every minute.
set -u
cd "$(dirname "$0")" || exit 99

PACKAGES="build-essential autoconf automake pkg-config git perl
check libsubunit-dev libjansson-dev libxml2-dev libxml2-utils libyaml-dev
libinih-dev librandom123-dev libfabric-dev libgsl-dev valgrind gnuplot-nox
python3-dev python3-numpy python3-torch"

say() { echo "setup: $*" >&2; }

# apt ARGS...: apt-get, retried while another apt or dpkg holds its lock
# (apt-get exits 100 saying "Could not get lock"), for EPGATE_APT_WAIT
# seconds at most; any other failure at once.
apt() {
	wait_s=${EPGATE_APT_WAIT:-600}
	start=$(date +%s)
	said=-60
	while :; do
		$SUDO apt-get "$@" 2>"$tmp/apt.err"
		rc=$?
		cat "$tmp/apt.err" >&2
		[ "$rc" -eq 0 ] && return 0
		grep -q 'Could not get lock\|Unable to lock\|is held by process' "$tmp/apt.err" || return "$rc"
		waited=$(($(date +%s) - start))
		if [ "$waited" -ge "$wait_s" ]; then
			say "the package lock was still held after ${waited} s (EPGATE_APT_WAIT=$wait_s): another apt or dpkg is running; try again when it is done"
			return "$rc"
		fi
		if [ $((waited - said)) -ge 60 ]; then
			say "another apt or dpkg holds the package lock; waiting (up to ${wait_s} s)"
			said=$waited
		fi
		sleep "${EPGATE_APT_RETRY_S:-5}"
	done
}

install_deps() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	apt update -qq || {
		say "apt-get update failed (exit $?)"
		return 1
	}
	# shellcheck disable=SC2086
	apt install -y -qq \
		--no-install-recommends $missing || {
		say "apt-get install failed (exit $?):$missing"
		return 1
	}
}

# The report's consumers, not the product's: headless Chromium through
# Selenium for suites/report/browser.sh, npm's tap-parser for
# suites/report/tap.sh (node and npm from Debian unless already here).
REPORT_PACKAGES="chromium chromium-driver python3-selenium python3-yaml"
report_tools() {
	PACKAGES=$REPORT_PACKAGES
	command -v node >/dev/null && command -v npm >/dev/null ||
		PACKAGES="$PACKAGES nodejs npm"
	install_deps || return 1
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	# tap-parser 18 wants node 20 or later; 17 runs on Debian 12's node
	# 18 (--force: a Debian node-tap-parser, v11 and not on npm's path,
	# owns /usr/bin/tap-parser)
	tp=tap-parser@18
	[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] ||
		tp=tap-parser@17
	NODE_PATH=$(npm root -g) node -e 'require("tap-parser")' 2>/dev/null &&
		return 0
	say "installing $tp (npm install -g)"
	$SUDO npm install -g --force --no-audit --no-fund "$tp" || {
		say "npm install -g $tp failed (exit $?)"
		return 1
	}
}

build() {
	{ [ -x configure ] || ./autogen.sh; } &&
		{ [ -f Makefile ] || ./configure; } &&
		make -j"$(nproc)" || {
		say "the build failed; the lines above say where"
		return 1
	}
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/epgate-setup.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
case "${1:-}" in
--deps) install_deps || exit 99 ;;
--build) { install_deps && build; } || exit 99 ;;
--report-tools) report_tools || exit 99 ;;
"")
	{ install_deps && build; } || exit 99
	./epgate run
	;;
*)
	echo "usage: sh setup.sh [--deps|--build|--report-tools]" >&2
	exit 99
	;;
esac
