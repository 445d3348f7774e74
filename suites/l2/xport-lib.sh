# The xport scripts' shared start (sourced after suites/lib.sh): the
# probe, a skip without libfabric, launch W RPN ARGS... and show.
: "${EG_BUILDDIR:=.}"
: "${EG_XPORT_PROBE:=$EG_BUILDDIR/suites/l2/xport_probe}"
probe=$EG_XPORT_PROBE
# A world of one needs no fabric: 77 here means no libfabric in the build.
"$probe" --reps 1 >"$EG_TMP/solo" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	echo "1..0 # SKIP built without libfabric"
	exit 0
fi
if [ "$rc" -ne 0 ]; then
	eg_not_ok "xport_probe alone (world of one): exit $rc"
	sed 's/^/# /' "$EG_TMP/solo"
fi

# launch W RPN ARGS...: the probe on W ranks; output in $EG_TMP/out
launch() {
	w=$1 rpn=$2
	shift 2
	"$EG_EPGATE" launch -n "$w" --ranks-per-node "$rpn" -- \
		"$probe" "$@" >"$EG_TMP/out" 2>&1
}

show() { sed 's/^/# /' "$EG_TMP/out" | tail -n 20; }

