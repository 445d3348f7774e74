#!/bin/sh
# Packs an epgate build for the GPU machine (docs/gpu.md, "Build here,
# run there"): the command, the GPU test programs, the L2 probes, every
# plugin built, and the shared libraries that machine lacks (Check,
# jansson, inih, GSL, libyaml, libxml2 and ICU are not installed there;
# libfabric and NCCL are). The tarball unpacks to a folder shaped like
# the build tree (epgate, suites/..., plugins/...) plus lib/, so the
# device scripts take it as EG_BUILDDIR with LD_LIBRARY_PATH=DIR/lib.
#
#   sh suites/gpu/bundle.sh BUILD_DIR OUT.tar.xz
#
# Exit: 0 written, 99 bad arguments or a file missing.
set -eu
[ $# -eq 2 ] || { echo "usage: sh suites/gpu/bundle.sh BUILD_DIR OUT.tar.xz" >&2; exit 99; }
B=$(cd "$1" && pwd) || exit 99
# the output's path before leaving the caller's folder
mkdir -p "$(dirname "$2")" || exit 99
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -x "$B/epgate" ] || { echo "bundle: no epgate in $B" >&2; exit 99; }
T=$(mktemp -d "${TMPDIR:-/tmp}/eg-bundle.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/b/lib"
cd "$B"
# the build's own files, paths kept
for f in epgate suites/gpu/test_gen_cuda suites/gpu/test_ep_cuda \
	suites/l2/xport_probe suites/l2/boot_probe \
	$(find plugins -name '*.so' 2>/dev/null); do
	[ -e "$f" ] || continue
	mkdir -p "$T/b/$(dirname "$f")"
	cp -p "$f" "$T/b/$f"
done
# shared libraries by soname, as ldd resolves them here
for l in libjansson.so.4 libxml2.so.2 libicuuc.so.72 libicudata.so.72 \
	libyaml-0.so.2 libinih.so.1 libgsl.so.27 libgslcblas.so.0 \
	libcheck.so.0 libsubunit.so.0; do
	p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] && cp -L "$p" "$T/b/lib/$l"
done
tar -C "$T/b" -cJf "$out" .
echo "bundle: $out ($(du -h "$out" | cut -f1)): $(cd "$T/b" && find . -type f | wc -l) files"
