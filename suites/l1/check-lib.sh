# Helpers of the plugin `check` scripts (sourced after suites/lib.sh:
# suites/l1/plugin-check.sh, plugin-hang.sh): the template, its planted
# faults, and one `epgate check` run's reports by name.
: "${EG_BUILDDIR:=.}"
so=$EG_BUILDDIR/plugins/template/libeg-template.so
f=$EG_BUILDDIR/plugins/faults
xsd=$EG_SRCDIR/reports/schema/junit.xsd
chk() { # NAME ENGINE [ARGS...]: $EG_TMP/NAME.{tap,xml,out}, $rc
	n=$1
	e=$2
	shift 2
	"$EG_EPGATE" check --engine "$e" --reports "$EG_TMP/runs" \
		--tap "$EG_TMP/$n.tap" --junit "$EG_TMP/$n.xml" "$@" \
		>"$EG_TMP/$n.out" 2>&1
	rc=$?
}
valid() { "$XMLLINT" --noout --schema "$xsd" "$EG_TMP/$1.xml" 2>/dev/null; }
show() { sed 's/^/# /' "$EG_TMP/$1.out" | tail -n "${2:-15}"; }
point() { grep -A 30 "^not ok [0-9]* - $2:" "$EG_TMP/$1.tap" | sed '/^  \.\.\./q'; }
last() { tail -n 1 "$EG_TMP/$1.out"; }
