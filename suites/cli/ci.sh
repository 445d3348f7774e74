#!/bin/bash
# .ci/run's checks of the tree (.ci/lib.sh), each shown to catch its
# planted fault in a small git tree of its own: a tracked file missing
# from the tarball is named, one that .ci/not-in-dist's list names is
# not; a file that a stage leaves in the tree is named, ignored by git or
# not, while the tests' logs and CI's own folder are not.
. "${EG_SRCDIR:-.}/suites/lib.sh"
lib=$EG_SRCDIR/.ci/lib.sh
if [ ! -f "$lib" ] || ! command -v git >/dev/null; then
	echo "1..0 # SKIP no .ci/lib.sh here (a release tarball) or no git"
	exit 0
fi
. "$lib"
R=$EG_TMP/repo
T=$EG_TMP/tar/pkg-1
mkdir -p "$R/sub" "$T/sub" || exit 99
cd "$R" || exit 99
echo a >a.c && echo b >sub/b.h && echo c >ci.sh &&
	printf '# comment\nci.sh   # CI only\n' >list &&
	printf '/reports/runs/\n*.o\n' >.gitignore &&
	git init -q && git add a.c sub/b.h ci.sh list .gitignore &&
	git -c user.name=t -c user.email=t@t commit -qm x || exit 99

# --- the tarball: every tracked file in it, or in the list
cp a.c list .gitignore "$T/" && tar -czf "$EG_TMP/t.tar.gz" -C "$EG_TMP/tar" pkg-1
got=$(not_in_tarball "$EG_TMP/t.tar.gz" list)
if [ "$got" = "sub/b.h" ]; then
	eg_ok "a tracked file missing from the tarball is named (sub/b.h), the listed one is not (ci.sh)"
else
	eg_not_ok "a tracked file missing from the tarball is named: got '$got'"
fi
cp sub/b.h "$T/sub/" && tar -czf "$EG_TMP/t.tar.gz" -C "$EG_TMP/tar" pkg-1
got=$(not_in_tarball "$EG_TMP/t.tar.gz" list)
if [ -z "$got" ]; then
	eg_ok "the complete tarball: nothing named"
else
	eg_not_ok "the complete tarball: nothing named: got '$got'"
fi

# --- leftovers: a stage's new files, logs and CI's folder apart
echo o >a.o
tree_files build-ci >"$EG_TMP/before"
mkdir -p build-ci suites && touch test-suite.log suites/x.trs suites/x.log build-ci/y
if out=$(leftovers build-ci "$EG_TMP/before"); then
	eg_ok "the tests' logs and CI's own folder are not leftovers"
else
	eg_not_ok "the tests' logs and CI's own folder are not leftovers: $out"
fi
mkdir -p reports/runs && touch reports/runs/out.json new.txt
out=$(leftovers build-ci "$EG_TMP/before")
rc=$?
if [ "$rc" -ne 0 ] && echo "$out" | grep -q '^  reports/runs/out.json$' &&
	echo "$out" | grep -q '^  new.txt$' && ! echo "$out" | grep -q 'a\.o\|\.log\|build-ci'; then
	eg_ok "files a stage left are named, ignored by git (reports/runs/out.json) or not (new.txt); what was there before is not"
else
	eg_not_ok "files a stage left are named: exit $rc: $out"
fi
eg_done
