#!/bin/sh
# The shape of the house (README.md, "What is in the tree", issue 28): the
# product lives in src/ (the command), lib/ and kernels/, the suites hold
# only tests, no binary is tracked, no product function is over 80
# lines; lib/'s folders stand on floors and every arrow between folders
# (read off the build's objects) goes down one; no folder holds over a
# tenth of the product; no folder includes another's *_int.h; every
# non-static eg__ name carries its module; every path
# README.md and docs/ name exists (suites/cli/commands.sh checks that
# `epgate help` lists every command). Each check is also fed a planted
# violation, so none of them can pass vacuously.
. "${EG_SRCDIR:-.}/suites/lib.sh"
cd "$EG_SRCDIR" || exit 99
# the source tree must be a git work tree's top: a release tarball
# unpacked inside another clone (make distcheck in CI's) is not one
top=$(command -v git >/dev/null && git rev-parse --show-toplevel 2>/dev/null)
[ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ] || {
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
long_funcs() { funclen "$@" | awk '$1 > 80'; }

product=$(git ls-files 'src/*.c' 'lib/*.c' 'kernels/*.c' 'kernels/*.cu' 'plugins/*.c')
long=$(long_funcs $product)
if [ -z "$long" ]; then
	eg_ok "no product function over 80 lines ($(echo "$product" | wc -w) files)"
else
	eg_not_ok "product functions over 80 lines"
	echo "$long" | sed 's/^/# /'
fi
# planted: an 81-line function is found
printf 'int f(void)\n{\n' >"$EG_TMP/long.c"
i=0
while [ $i -lt 79 ]; do echo "	(void)0;" >>"$EG_TMP/long.c"; i=$((i + 1)); done
echo "}" >>"$EG_TMP/long.c"
if long_funcs "$EG_TMP/long.c" | grep -q '^81 .* f$'; then
	eg_ok "a planted 81-line function is reported"
else
	eg_not_ok "a planted 81-line function is reported"
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
# ---- the floors ----------------------------------------------------------
# Which folder may call which (README.md, "What is in the tree"). The
# arrows are read off the build's own objects -- a symbol one folder's
# objects use and another folder's define -- so a call counts whichever
# header declared it. Every arrow goes down at least one floor; the one
# exception is kernels/ and lib/core/, twins by design (the device
# kernels and their host twins sit on one floor and call each other).
cat >"$EG_TMP/floors" <<'EOF2'
lib/base 0
lib/core 1
kernels 1
lib/report 1
lib/stats 1
lib/world 1
lib/transport 2
lib/engines 3
lib/results 3
lib/gate 4
lib/step 4
lib/bench 5
lib/suite 5
lib/page 6
lib/stress 6
lib/campaign 7
src 8
EOF2
# arrows: "FROM TO" per pair of folders, from the objects under the build
arrows() {
	(cd "${EG_BUILDDIR:-.}" && objs=$(find lib src kernels -name '*.o') &&
		nm -A -g --defined-only $objs | awk '{ print "D", $1, $NF }' &&
		nm -A -u $objs | awk '{ print "U", $1, $NF }') |
		awk '{ d = $2; sub(/\/[^\/]*:.*$/, "", d) }
		$1 == "D" { def[$3] = d; next }
		{ use[d " " $3] = 1 }
		END { for (k in use) { split(k, a, " ")
			if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }' |
		sort -u
}
# judge FLOORS < arrows: each arrow that does not go down, and why
judge() {
	awk 'NR == FNR { floor[$1] = $2; next }
	($1 == "kernels" && $2 == "lib/core") || ($1 == "lib/core" && $2 == "kernels") { next }
	!($1 in floor) || !($2 in floor) { print $1 " -> " $2 ": a folder with no floor"; next }
	floor[$1] <= floor[$2] { print $1 " (" floor[$1] ") -> " $2 " (" floor[$2] "): not down" }' "$1" -
}
arrows >"$EG_TMP/arrows"
n=$(wc -l <"$EG_TMP/arrows")
bad=$(judge "$EG_TMP/floors" <"$EG_TMP/arrows")
if [ "$n" -ge 40 ] && [ -z "$bad" ]; then
	eg_ok "every one of $n arrows between folders goes down a floor (kernels and lib/core: twins)"
else
	eg_not_ok "the floors: $n arrows"
	echo "$bad" | sed 's/^/# /'
fi
printf 'lib/page lib/gate\nlib/report lib/page\nlib/gate lib/step\nlib/newroom lib/base\nkernels lib/core\n' |
	judge "$EG_TMP/floors" >"$EG_TMP/planted"
if [ "$(wc -l <"$EG_TMP/planted")" -eq 3 ] && grep -q '^lib/report (1) -> lib/page (6): not down' "$EG_TMP/planted" &&
	grep -q '^lib/gate (4) -> lib/step (4): not down' "$EG_TMP/planted" &&
	grep -q '^lib/newroom -> lib/base: a folder with no floor' "$EG_TMP/planted"; then
	eg_ok "planted: an arrow up, one along a floor and a folder with no floor are reported"
else
	eg_not_ok "planted arrows"
	sed 's/^/# /' "$EG_TMP/planted"
fi

# No folder holds more than a tenth of the product's lines.
share() { # FILE...: "PERCENT FOLDER" for the biggest folder
	wc -l "$@" | awk '$2 != "total" { d = $2; sub(/\/[^\/]*$/, "", d); n[d] += $1; t += $1 }
		END { for (d in n) if (n[d] > m) { m = n[d]; big = d }
			printf "%.1f %s\n", 100 * m / t, big }'
}
top=$(share $(git ls-files 'src/*.[ch]' 'lib/*.[ch]' 'kernels/*' 'plugins/*.[ch]' 'include/*.h'))
if awk -v p="${top%% *}" 'BEGIN { exit !(p <= 10) }'; then
	eg_ok "no folder over 10% of the product's lines (the biggest: ${top#* }, ${top%% *}%)"
else
	eg_not_ok "a folder over 10% of the product's lines: ${top#* }, ${top%% *}%"
fi
mkdir -p "$EG_TMP/big/a" "$EG_TMP/big/b"
seq 1 11 >"$EG_TMP/big/a/x.c" && seq 1 89 >"$EG_TMP/big/b/y.c"
top=$(share "$EG_TMP/big/a/x.c" "$EG_TMP/big/b/y.c")
if [ "$top" = "89.0 $EG_TMP/big/b" ]; then
	eg_ok "planted: a folder of 89 of 100 lines is the biggest, at 89%"
else
	eg_not_ok "planted shares: $top"
fi

# Neighbours use accessors, never another folder's internal header
# (*_int.h); the tests may (white-box). The one exception: the NCCL
# engines share the NCCL transport's internals (lib/engines/nccl_eng.h,
# built only with CUDA and NCCL).
int_use() {
	grep -n '#include "lib/[a-z]*/[a-z_]*_int\.h"' "$@" /dev/null |
		awk -F: '{ split($3, a, "\""); split(a[2], b, "/"); split($1, c, "/")
			if (c[1] "/" c[2] != b[1] "/" b[2] &&
			    !($1 == "lib/engines/nccl_eng.h" && a[2] == "lib/transport/nccl_int.h"))
				print $1 ": " a[2] }'
}
bad=$(int_use $(git ls-files 'src/*.[ch]' 'lib/*.[ch]' 'kernels/*' 'plugins/*.[ch]' 'include/*.h'))
if [ -z "$bad" ]; then eg_ok "no product file includes another folder's *_int.h"; else
	eg_not_ok "another folder's internals: $bad"; fi
mkdir -p "$EG_TMP/lib/page"
echo '#include "lib/world/job_int.h"' >"$EG_TMP/lib/page/x.c"
if (cd "$EG_TMP" && int_use lib/page/x.c | grep -q 'lib/page/x.c: lib/world/job_int.h'); then
	eg_ok "planted: lib/page including lib/world/job_int.h is reported"
else eg_not_ok "planted: an internal header of another folder"; fi

# ---- docs ----------------------------------------------------------------
# Every path README.md and docs/ name exists: a tracked file or folder,
# a glob that matches one, or what the build makes (there, or named in
# Makefile.am: the CUDA-only targets); NAME, PROFILE, <...> are
# placeholders.
doc_paths() {
	grep -ohE '(^|[^A-Za-z0-9_./$-])(src|lib|kernels|suites|fixtures|gates|slurm|plugins|include|docs|profiles|\.ci)/[A-Za-z0-9_.*/<>-]*[A-Za-z0-9_*>/]' "$@" |
		sed 's/^[^a-z.]//' | sort -u
}
missing() { # PATH...: the ones that do not exist
	git ls-files >"$EG_TMP/tracked"
	for p in "$@"; do
		case "$p" in *NAME* | *PROFILE* | *'<'*) continue ;; esac
		q=${p%/}
		case "$q" in
		*'*'*)
			found=0
			while read -r t; do case "$t" in $q) found=1 && break ;; esac; done <"$EG_TMP/tracked"
			[ "$found" -eq 1 ] && continue
			;;
		*)
			grep -qxF "$q" "$EG_TMP/tracked" && continue
			grep -q "^$q/" "$EG_TMP/tracked" && continue
			[ -e "${EG_BUILDDIR:-.}/$q" ] && continue
			grep -qF "$q" Makefile.am && continue
			;;
		esac
		echo "$p"
	done
}
docs=$(doc_paths README.md docs/*.md)
bad=$(missing $docs)
if [ -z "$bad" ]; then
	eg_ok "every path named in README.md and docs/ exists ($(echo "$docs" | wc -l) paths)"
else
	eg_not_ok "paths named in README.md or docs/ that do not exist: $(echo $bad)"
fi
printf 'Code: `lib/ep.c`, `lib/core/ep.c`, `lib/stress/*.c`, `lib/suite/stress*.c`.\n' >"$EG_TMP/doc.md"
bad=$(missing $(doc_paths "$EG_TMP/doc.md"))
if [ "$(echo $bad)" = "lib/ep.c lib/suite/stress*.c" ]; then
	eg_ok "planted: a doc naming lib/ep.c and lib/suite/stress*.c is reported"
else
	eg_not_ok "planted doc paths: $(echo $bad)"
fi
# Every EPGATE_* variable the product's C code reads is in
# docs/environment.md.
undocumented() { # FILE...: the EPGATE_* names read there and not listed
	grep -ohE 'getenv\("EPGATE_[A-Z0-9_]+"\)' "$@" /dev/null | sed 's/getenv("//; s/")//' |
		sort -u | while read -r v; do
		grep -q "\`$v\`" docs/environment.md || echo "$v"
	done
}
bad=$(undocumented $(git ls-files 'src/*.[ch]' 'lib/*.[ch]' 'kernels/*' 'plugins/*.[ch]'))
if [ -z "$bad" ]; then
	eg_ok "every EPGATE_* variable the product reads is in docs/environment.md"
else eg_not_ok "variables read and not in docs/environment.md: $(echo $bad)"; fi
printf 'const char *s = getenv("EPGATE_NOT_LISTED"), *t = getenv("EPGATE_TIMEOUT");\n' >"$EG_TMP/env.c"
if [ "$(undocumented "$EG_TMP/env.c")" = EPGATE_NOT_LISTED ]; then
	eg_ok "planted: a read of an unlisted EPGATE_NOT_LISTED is reported"
else eg_not_ok "planted: an unlisted variable"; fi
# An internal name that is not static carries its module (like libuv's
# uv__tcp_bind): eg__FOLDER_ or eg__WORD_, WORD its file's first word
# (lib/page/chart.c: eg__chart_*), so a reader knows where it lives.
unowned() { # "SYMBOL OBJECT" lines: the ones that carry no module
	awk '{ n = split($2, p, "/"); folder = p[n - 1]; stem = p[n]
		sub(/\.o$/, "", stem); split(stem, w, "_")
		if (index($1, "eg__" folder "_") != 1 && index($1, "eg__" w[1] "_") != 1 &&
		    $1 != "eg__" w[1]) print $1 " (" $2 ")" }'
}
(cd "${EG_BUILDDIR:-.}" && nm -A -g --defined-only $(find lib src kernels -name '*.o') |
	awk '$NF ~ /^eg__/ { sub(/:.*/, "", $1); print $NF, $1 }') >"$EG_TMP/internal"
bad=$(unowned <"$EG_TMP/internal")
if [ -s "$EG_TMP/internal" ] && [ -z "$bad" ]; then
	eg_ok "every one of $(wc -l <"$EG_TMP/internal") non-static eg__ names carries its module"
else eg_not_ok "non-static eg__ names without their module: $(echo $bad)"; fi
printf 'eg__num lib/page/html_util.o\neg__page_num lib/page/html_util.o\neg__chart_tic lib/page/chart.o\n' >"$EG_TMP/names"
if [ "$(unowned <"$EG_TMP/names")" = "eg__num (lib/page/html_util.o)" ]; then
	eg_ok "planted: eg__num in lib/page/html_util.o is reported"
else eg_not_ok "planted: a name without its module"; fi
# The size-versioned checks are one macro, EG_HAS (include/epgate/sized.h;
# EG_PLUGIN_HAS on the plugin side), never a hand-written offsetof test;
# the loader's EG_PLUG_HAS reads the table size it copied at load (psize).
by_hand() { grep -n 'size *[<>]=* *offsetof' "$@" /dev/null | grep -v 'include/epgate/sized.h\|include/epgate/plugin.h\|(pl)->psize'; }
bad=$(by_hand $(git ls-files 'src/*.[ch]' 'lib/*.[ch]' 'plugins/*.[ch]' 'include/*.h'))
if [ -z "$bad" ]; then eg_ok "every size-versioned check is EG_HAS or EG_PLUGIN_HAS"; else
	eg_not_ok "size checks by hand: $bad"; fi
printf '\tif (ops->size < offsetof(eg_engine_ops_t, error) + sizeof(ops->error))\n' >"$EG_TMP/hand.c"
if by_hand "$EG_TMP/hand.c" | grep -q offsetof; then
	eg_ok "planted: a size check by hand is reported"
else eg_not_ok "planted: a size check by hand"; fi
# No product file over 800 lines, split by the job each part does
# (kernels/ep.cu's device verifier is kernels/verify.cu).
long_files() { wc -l "$@" | awk '$2 != "total" && $1 > 800 { print $2 " (" $1 ")" }'; }
bad=$(long_files $(git ls-files 'src/*.[ch]' 'lib/*.[ch]' 'kernels/*' 'plugins/*.[ch]' 'include/*.h'))
if [ -z "$bad" ]; then eg_ok "no product file over 800 lines"; else
	eg_not_ok "product files over 800 lines: $bad"; fi
seq 1 801 >"$EG_TMP/big.c"
if [ "$(long_files "$EG_TMP/big.c")" = "$EG_TMP/big.c (801)" ]; then
	eg_ok "planted: an 801-line file is reported"
else eg_not_ok "planted: an 801-line file"; fi
eg_done
