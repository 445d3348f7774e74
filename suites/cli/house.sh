#!/bin/sh
# The shape of the house (README.md, "What is in the tree"): the product lives in
# src/ (the command), lib/ and kernels/, the suites hold only tests, no
# binary is tracked and no product function is over 100 lines
# (suites/cli/commands.sh checks that `epgate help` lists every command).  Each check is also
# fed a planted violation, so none of them can pass vacuously.
. "${EG_SRCDIR:-.}/suites/lib.sh"
cd "$EG_SRCDIR" || exit 99
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || {
	echo "1..0 # SKIP not a git tree (a release tarball)"
	exit 0
}

# Function bodies: a "{" in column 0 to the next "}" in column 0 (the
# tree is clang-formatted, CI checks it); prints "lines file:line name".
funclen() {
	awk 'FNR == 1 { sig = ""; start = 0 }
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0; sigline = FNR }
	/^\{/ { start = FNR; name = sig; sub(/\(.*/, "", name)
		n = split(name, a, /[ *]+/); name = a[n] }
	/^\}/ && start { print FNR - start + 1, FILENAME ":" sigline, name
		start = 0 }' "$@"
}
long_funcs() { funclen "$@" | awk '$1 > 100'; }

product=$(git ls-files 'src/*.c' 'lib/*.c' 'kernels/*.c' 'kernels/*.cu' 'plugins/*.c')
long=$(long_funcs $product)
if [ -z "$long" ]; then
	eg_ok "no product function over 100 lines ($(echo "$product" | wc -w) files)"
else
	eg_not_ok "product functions over 100 lines"
	echo "$long" | sed 's/^/# /'
fi
# planted: a 101-line function is found
printf 'int f(void)\n{\n' >"$EG_TMP/long.c"
i=0
while [ $i -lt 99 ]; do echo "	(void)0;" >>"$EG_TMP/long.c"; i=$((i + 1)); done
echo "}" >>"$EG_TMP/long.c"
if long_funcs "$EG_TMP/long.c" | grep -q '^101 .* f$'; then
	eg_ok "a planted 101-line function is reported"
else
	eg_not_ok "a planted 101-line function is reported"
fi

# suites/ holds tests only: test programs (test_*.c), the L2 probe
# ranks (*_probe.c), their shared header, and scripts.
is_test() {
	case "$1" in
	suites/*/test_*.c | suites/*/*_probe.c | suites/l0/eg_test.h) return 0 ;;
	suites/*.c | suites/*.h | suites/*/*.c | suites/*/*.h | suites/*/*/*.[ch]) return 1 ;;
	esac
	return 0
}
bad=""
for f in $(git ls-files suites); do is_test "$f" || bad="$bad $f"; done
if [ -z "$bad" ]; then eg_ok "no product source under suites/"; else
	eg_not_ok "product source under suites/:$bad"; fi
if is_test suites/epgate/main.c; then
	eg_not_ok "a planted suites/epgate/main.c is reported"
else eg_ok "a planted suites/epgate/main.c is reported"; fi

# No tracked binaries: git's own test (a NUL byte in the first 8000
# bytes: "i/-text" in `git ls-files --eol`), one command for the tree.
binaries() { git -C "$1" ls-files --eol | awk '$1 == "i/-text" { print $NF }'; }
bins=$(binaries . | tr '\n' ' ')
if [ -z "$bins" ]; then eg_ok "no tracked binary file"; else eg_not_ok "tracked binaries: $bins"; fi
mkdir -p "$EG_TMP/repo" && git -C "$EG_TMP/repo" init -q &&
	printf 'ELF\000\001' >"$EG_TMP/repo/bin" && echo text >"$EG_TMP/repo/text" &&
	git -C "$EG_TMP/repo" add bin text
if [ "$(binaries "$EG_TMP/repo")" = bin ]; then
	eg_ok "a planted binary is reported"
else eg_not_ok "a planted binary is reported"; fi
eg_done
