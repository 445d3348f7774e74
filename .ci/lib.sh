# CI's checks of the tree (sourced by .ci/run; suites/cli/ci.sh holds
# each with a planted fault). bash.

# not_in_tarball TARBALL LIST: the tracked files of this git tree that
# TARBALL lacks, less those LIST names (a path first on a line, # for
# comments). Empty: the tarball is complete.
not_in_tarball() {
	comm -23 <(git ls-files | sort) \
		<(tar -tzf "$1" | sed 's|^[^/]*/||' | sort) |
		grep -v -x -F -f <(sed -n 's/^\([^# ][^ ]*\).*/\1/p' "$2")
}

# tree_files SKIP: what this tree holds beyond git's files, the tests'
# logs (*.log, *.trs) and the folder SKIP apart, a path a line, sorted
tree_files() {
	git status --porcelain --ignored --untracked-files=all |
		sed 's/^...//' | grep -v -E '\.(log|trs)$' | grep -v "^$1/" | sort
}

# leftovers SKIP BEFORE: fails, naming them, on the files that
# tree_files SKIP has now and BEFORE (its earlier output) had not: a test
# that leaves a file in the build tree is caught by the stage that ran it
leftovers() {
	local new
	new=$(tree_files "$1" | comm -13 "$2" -)
	[ -z "$new" ] && return 0
	echo "CI: the tests left files in the build tree (a test writes under its own temporary folder, or the file goes in CLEANFILES and .gitignore):"
	echo "$new" | head -n 20 | sed 's/^/  /'
	return 1
}
