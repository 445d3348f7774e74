# Shared helpers for the script tests (sourced). Exit codes: automake's.
set -u
: "${EG_SRCDIR:=.}"
: "${EG_EPGATE:=./epgate}"
: "${XMLLINT:=xmllint}"
: "${PROVE:=prove}"
EG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/epgate-test.XXXXXX") || exit 99
trap 'rm -rf "$EG_TMP"' EXIT
eg_fails=0
eg_n=0
eg_ok() { eg_n=$((eg_n + 1)); echo "ok $eg_n - $*"; }
eg_not_ok() { eg_n=$((eg_n + 1)); eg_fails=$((eg_fails + 1)); echo "not ok $eg_n - $*"; }
eg_done() {
	echo "1..$eg_n"
	[ "$eg_fails" -eq 0 ] || exit 1
	exit 0
}
