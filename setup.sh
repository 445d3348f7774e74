#!/bin/sh
# Quick start, step 1: install the Debian/Ubuntu packages epgate needs,
# build it, and run the main job (`epgate run`, profile local).
#   sh setup.sh            packages + build + epgate run
#   sh setup.sh --deps     packages only
#   sh setup.sh --build    packages + build
set -eu
cd "$(dirname "$0")"

PACKAGES="build-essential autoconf automake pkg-config git perl
check libsubunit-dev libjansson-dev libxml2-dev libxml2-utils libyaml-dev
libinih-dev librandom123-dev libfabric-dev libgsl-dev valgrind gnuplot-nox"

install_deps() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "setup: installing$missing"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends $missing
}

build() {
	[ -x configure ] || ./autogen.sh
	[ -f Makefile ] || ./configure
	make -j"$(nproc)"
}

case "${1:-}" in
--deps) install_deps ;;
--build) install_deps && build ;;
"") install_deps && build && ./epgate run ;;
*) echo "usage: sh setup.sh [--deps|--build]" >&2; exit 99 ;;
esac
