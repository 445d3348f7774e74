# Helpers of the Python bridge's scripts (sourced after suites/lib.sh:
# suites/l1/python.sh, suites/l1/torch.sh, suites/l2/python.sh,
# suites/l2/torch.sh, suites/gpu/multi-dry.sh). Sourcing it ends the script with a skip (1..0)
# where the bridge is not built. POSIX sh.
# shellcheck shell=sh disable=SC2034 # rand, rc: read by the scripts
: "${EG_BUILDDIR:=.}"
: "${EG_PYTHON:=python3}"

if [ ! -f "$EG_BUILDDIR/plugins/python/libeg-python.so" ]; then
	echo "1..0 # SKIP the Python bridge is not built (configure found no Python headers: apt-get install python3-dev)"
	exit 0
fi

# py_need_torch: a skip (1..0) where the bridge's interpreter cannot
# import torch.distributed (and numpy)
py_need_torch() {
	if ! "$EG_PYTHON" -c 'import numpy, torch.distributed' 2>/dev/null; then
		echo "1..0 # SKIP torch is not importable by $EG_PYTHON (apt-get install python3-torch, or sh setup.sh --deps)"
		exit 0
	fi
}

# ---- L1: one `epgate check` in process, world 1 ------------------------
# the randomly drawn shape where summation order shows in the bits
rand="--world=1 --experts=16 --topk=4 --tokens=32 --hidden=128 --data=random --dtype=fp32"
check() { # label spec [epgate check options...]: exit status in $rc
	label=$1 spec=$2
	shift 2
	rm -f "$EG_TMP/$label.tap"
	"$EG_EPGATE" check --engine "plugin:python,$spec" "$@" \
		--tap="$EG_TMP/$label.tap" --junit="$EG_TMP/$label.xml" \
		>"$EG_TMP/$label.out" 2>&1
	rc=$?
}
show() { # what failed: the TAP's first failure, the command's last lines
	sed -n '/^not ok/,$p' "$EG_TMP/$1.tap" 2>/dev/null | head -n 30 | sed 's/^/# /'
	tail -n 8 "$EG_TMP/$1.out" | sed 's/^/# /'
}

# ---- L2: one rank per process under `epgate launch` --------------------
# py_need_l2rank: a skip (1..0) where epgate has no l2-rank command
py_need_l2rank() {
	if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
		echo "1..0 # SKIP epgate built without l2-rank"
		exit 0
	fi
}
# a process of this test's still running (its command line names $EG_TMP)
leftovers() { pgrep -f "$EG_TMP" >/dev/null 2>&1; }
# count NAME PATTERN: the lines of $EG_TMP/NAME.jsonl that match (0 without it)
count() { grep -c "$2" "$EG_TMP/$1.jsonl" 2>/dev/null || echo 0; }
