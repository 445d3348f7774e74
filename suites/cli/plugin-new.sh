#!/bin/sh
# `epgate plugin new` and `epgate plugin info` (docs/plugins.md, "A new
# plugin"): the skeleton is written, holds none of the template's
# planted-fault hooks, builds warning-free with the build line it prints,
# and passes the check line it prints (the L1 matrix and the plugin
# battery); the same skeleton with a planted wrong combine fails that
# line, and so does a library bug only the battery's shapes reach;
# `info` says what a plugin declares and refuses what the loader
# refuses, with the loader's reason.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
: "${CC:=cc}"
cd "$EG_TMP" || exit 99

"$EG_EPGATE" plugin new foo >out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ -f foo/foo.c ] && [ -f foo/Makefile ]; then
	eg_ok "plugin new foo: foo/foo.c and foo/Makefile"
else
	eg_not_ok "plugin new foo: exit $rc"
	sed 's/^/# /' out
fi
build=$(sed -n 's/^build: //p' out)
check=$(sed -n 's/^check: //p' out)
if grep -q 'FAULT_\|faults\.h\|TPL_\|EG_FAULT' foo/foo.c; then
	eg_not_ok "the skeleton holds a planted-fault hook"
	grep -n 'FAULT_\|faults\.h\|TPL_' foo/foo.c | sed 's/^/# /'
else
	eg_ok "the skeleton holds no planted-fault hook"
fi
if sh -c "$build -std=c11 -Wall -Wextra -Werror" >bout 2>&1 &&
	[ -f foo/libeg-foo.so ]; then
	eg_ok "builds warning-free: $build"
else
	eg_not_ok "build: $build"
	sed 's/^/# /' bout | head -n 20
fi
sh -c "$check" >cout 2>&1
rc=$?
if [ "$rc" -eq 0 ] && tail -n 1 cout | grep -q '^PASS'; then
	eg_ok "the printed check passes: $(tail -n 1 cout)"
else
	eg_not_ok "the printed check: exit $rc, want 0"
	tail -n 8 cout | sed 's/^/# /'
fi
# the check line runs the plugin battery too: a library bug only its
# shapes reach (the last chunk of combine's output left unwritten) fails
# the line as printed, with the skeleton's library swapped for it
sh -c "$(echo "$check" | sed "s|plugin:[^ ]*|plugin:$EG_BUILDDIR/plugins/faults/libeg-fault-last-chunk.so|")" >cout 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^FAIL p1-h1001: combine' cout; then
	eg_ok "the check line runs the plugin battery: a planted last-chunk bug fails it (p1-h1001, exit 1)"
else
	eg_not_ok "the check line with the planted last-chunk bug: exit $rc, want 1 with p1-h1001"
	tail -n 8 cout | sed 's/^/# /'
fi
sh -c "$check,layout=expert,keys=content --world=1" >cout 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	eg_ok "its other layout and key mode pass too (--world=1)"
else
	eg_not_ok "layout=expert,keys=content: exit $rc"
fi
if command -v make >/dev/null 2>&1; then
	make -s -C foo clean >/dev/null 2>&1
	if make -s -C foo >mout 2>&1 && [ -f foo/libeg-foo.so ] &&
		make -n -C foo check 2>&1 | grep -q 'check --engine plugin:./libeg-foo.so' &&
		make -n -C foo check-l2 2>&1 | grep -q 'check --l2 --engine plugin:/.*/foo/libeg-foo.so'; then
		eg_ok "its Makefile builds it; its check target is the check line, check-l2 the L2 one (absolute path)"
	else
		eg_not_ok "make -C foo && make -C foo check"
		tail -n 8 mout | sed 's/^/# /'
	fi
else
	eg_ok "its Makefile # SKIP no make here"
fi

# planted: a combine that subtracts must fail the same check line (its
# cases of world 1: the full matrix ran above)
sed 's/\[(size_t)tok\[n\] \* H + h\] +=/[(size_t)tok[n] * H + h] -=/' \
	foo/foo.c >foo/bad.c
if cmp -s foo/foo.c foo/bad.c; then
	eg_not_ok "planted: the combine's sum was not found in foo/foo.c"
else
	sh -c "$(echo "$build" | sed 's|foo/foo\.c|foo/bad.c|')" >bout 2>&1
	sh -c "$check --world=1" >cout 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q 'combine' cout; then
		eg_ok "planted wrong combine: the check line fails (exit 1)"
	else
		eg_not_ok "planted wrong combine: exit $rc, want 1"
		tail -n 8 cout | sed 's/^/# /'
	fi
fi

"$EG_EPGATE" plugin new foo >out 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q 'foo/foo.c exists' out; then
	eg_ok "plugin new over an existing one: refused ($(head -c 80 out))"
else
	eg_not_ok "plugin new over an existing one: exit $rc, want 99"
fi
"$EG_EPGATE" plugin new Foo.x >out 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q 'NAME "Foo.x": want' out; then
	eg_ok "a bad NAME: refused, naming it"
else
	eg_not_ok "a bad NAME: exit $rc, want 99"
fi
mkdir -p sub
"$EG_EPGATE" plugin new bar --dir sub >out 2>&1
if [ -f sub/bar/bar.c ] && grep -q 'plugin:./sub/bar/libeg-bar.so' out; then
	eg_ok "--dir: sub/bar/bar.c, its check line names it"
else
	eg_not_ok "--dir sub"
	sed 's/^/# /' out
fi

# info: what the template declares, as text and JSON
tpl=$EG_BUILDDIR/plugins/template/libeg-template.so
"$EG_EPGATE" plugin info "plugin:$tpl,layout=expert" >out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^abi: *version 2 ' out &&
	grep -q '^layout: *expert_major' out &&
	grep -q '^order: *fixed' out && grep -q '^  layout=flat|rank|expert' out &&
	grep -q '^library: *epgate-template 1.0' out; then
	eg_ok "plugin info: ABI, layout, order, options, library"
else
	eg_not_ok "plugin info: exit $rc"
	sed 's/^/# /' out
fi
"$EG_EPGATE" plugin info "$PWD/foo/libeg-foo.so" --json >out 2>&1
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1]));
assert j["abi_version"] == 2 and j["library"]["lib_name"] == "foo"
assert j["order"] == "canonical" and "canonical_order" in j["flags"]
assert j["limits"]["max_world"] is None' out 2>err; then
	eg_ok "plugin info --json: the skeleton's declaration"
else
	eg_not_ok "plugin info --json"
	sed 's/^/# /' out err | head -n 20
fi
for bad in "./nothere.so:cannot load" \
	"$EG_BUILDDIR/plugins/faults/libeg-abi-newer.so:built for epgate plugin ABI version 3" \
	"$tpl,layout=diagonal:option layout=diagonal"; do
	spec=${bad%%:*}
	why=${bad#*:}
	"$EG_EPGATE" plugin info "$spec" >out 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -q "$why" out; then
		eg_ok "plugin info $(basename "$spec"): exit 99, \"$why\""
	else
		eg_not_ok "plugin info $spec: exit $rc, want 99 and \"$why\""
		sed 's/^/# /' out
	fi
done
eg_done
