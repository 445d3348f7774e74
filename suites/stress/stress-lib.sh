# Helpers of the stress scripts (sourced after suites/lib.sh:
# suites/stress/stress.sh, cycle.sh, runs.sh): the template and its planted
# faults, the small shape, one `epgate stress` case into
# $EG_TMP/s.{tap,xml,json,out} and the first lines of what it printed.
# POSIX sh.
# shellcheck shell=sh disable=SC2034 # tpl, f, shape, rc: read by the scripts
: "${EG_BUILDDIR:=.}"
tpl=$EG_BUILDDIR/plugins/template/libeg-template.so
f=$EG_BUILDDIR/plugins/faults

# need_template FAULT: a skip (1..0) unless the template and the fault
# plugin $f/libeg-fault-FAULT.so are built
need_template() {
	if [ ! -f "$tpl" ] || [ ! -f "$f/libeg-fault-$1.so" ]; then
		echo "1..0 # SKIP the template plugins are not built"
		exit 0
	fi
}
shape="--world=1 --experts=8 --topk=2 --hidden=64 --tokens=8"

# stress ENGINE ARGS...: one case into $EG_TMP/s.{tap,xml,json,out}; its
# exit status in $rc and returned
stress() {
	eng=$1
	shift
	"$EG_EPGATE" stress --engine "$eng" --tap="$EG_TMP/s.tap" \
		--junit="$EG_TMP/s.xml" --json="$EG_TMP/s.json" "$@" \
		>"$EG_TMP/s.out" 2>&1
	rc=$?
	return "$rc"
}
show() { sed 's/^/# /' "$EG_TMP/s.out" | head -n 20; }
