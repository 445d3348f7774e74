#!/bin/sh
# NCCL EP through epgate on one H200 (W = 1), beside NCCL EP's own
# ep_bench, in one call of about five minutes on a fresh machine:
#
#   sh suites/gpu/nccl-ep-device.sh BUNDLE EPGATE_DIR
#
# BUNDLE      the NCCL EP bundle (ncclep-sm90.tar.xz, or its unpacked
#             folder): lib/ (libnccl 2.30.7, libnccl_ep), include/, bin/
#             (ep_bench)
# EPGATE_DIR  an epgate build (epgate, plugins/nccl-ep/libeg-nccl-ep.so),
#             or a carried folder or .tar.xz (bin/epgate, lib/ with the
#             plugin and the shared libraries the machine lacks)
#
# Run from the repository root (fixtures, the profile). Logs go to $OUT
# (else a folder it names); the tables are printed last. Steps:
#  1. unpack, environment (NCCL EP's lib first: one libnccl; the JIT's
#     variables), the GPU, the plugin loads and declares its limits;
#  2. LL cases in process (epgate check, suites/gpu/nccl-ep-lib.sh):
#     exact and random data, masks, skew, 0/1/odd tokens, limits' edges,
#     and shapes beyond NCCL EP's limits skipped with the reason;
#  3. LL at ep_bench's shape (128 tokens, H 7168, top-8 of 256): epgate
#     bench engine of the plugin (calls timed by events; NCCL EP's
#     receive budget set as ep_bench sets it) and of epgate's nccl a2a,
#     then ep_bench -a ll with the same flags;
#  4. the W=1 profile (suites/gpu/h200x1-ncclep.profile) when the profile
#     parser takes plugin arms, else why not;
#  5. HT cases in process (its kernels JIT-compiled at first use);
#  6. HT at 4096 tokens: bench engine (plugin, a2a), ep_bench -a ht;
#  7. the step table and the comparison: epgate's GB/s by ep_bench's byte
#     definition over ep_bench's own.
# Exit: 0 every step passed, 1 one failed, 77 no GPU, 99 bad arguments.
if [ $# -ne 2 ]; then
	echo "usage: sh suites/gpu/nccl-ep-device.sh BUNDLE(.tar.xz|dir) EPGATE_DIR(|.tar.xz)" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/nccl-ep-device.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
# what is unpacked stays out of the logs (they travel back)
WORK=${TMPDIR:-/tmp}/nccl-ep-work.$$
trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
SUM=$LOG/steps.txt
: >"$SUM"
# step NAME STATUS NOTE: one line of the step table, shown as it happens
step() {
	printf "%-26s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" |
		tee -a "$SUM"
	[ "$2" = FAIL ] && eg_fails=$((eg_fails + 1))
	return 0
}

echo "== nccl-ep-device: logs in $LOG"
if ! nep_setup "$1" "$2" "$WORK" >"$LOG/setup.txt" 2>&1; then
	echo "nccl-ep-device: $(cat "$LOG/setup.txt")" >&2
	exit 99
fi
{
	echo "NCCL EP: $NEP_ROOT"
	echo "epgate:  $EG_EPGATE"
	echo "plugin:  $NEP_SO"
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	nvidia-smi -L 2>&1
	ldd "$NEP_SO" 2>&1
} >"$LOG/env.txt"
ngpu=$(nep_gpus)
if [ "$ngpu" -lt 1 ]; then
	step "1 setup" SKIP "no GPU (nvidia-smi lists none)"
	exit 77
fi
if ldd "$NEP_SO" | grep -q 'not found'; then
	step "1 setup" FAIL "the plugin's libraries: $(ldd "$NEP_SO" | grep 'not found' | tr -s ' \t' ' ' | tr '\n' ';')"
else
	step "1 setup" ok "$ngpu GPU(s); NCCL EP $(basename "$NEP_ROOT")"
fi
nep_declares "$NEP_SO" "$ngpu" >"$LOG/declares.tap" 2>&1
if grep -q '^not ok' "$LOG/declares.tap"; then
	step "1 declared limits" FAIL "$(grep -m1 '^not ok' "$LOG/declares.tap" | cut -c1-120)"
else
	step "1 declared limits" ok "$(grep -c '^ok' "$LOG/declares.tap") checks (loads, refuses a bad option, skips beyond its limits)"
fi

# 2. LL cases
nep_workloads "$LOG"
nep_check ll-w1 "plugin:$NEP_SO,mode=ll" "$LOG/ll-w1.ini" >"$LOG/ll-w1.result" 2>&1
if grep -q '^ok' "$LOG/ll-w1.result"; then
	step "2 LL cases" ok "$(head -n 1 "$LOG/ll-w1.result" | sed 's/^ok [0-9]* - //')"
else
	step "2 LL cases" FAIL "$(head -n 1 "$LOG/ll-w1.result" | sed 's/^not ok [0-9]* - //') (see ll-w1.result, ll-w1.tap)"
fi

# 3. LL at ep_bench's shape
nep_bench "$LOG/bench-ll.out" 1 1 \
	"plugin:$NEP_SO,mode=ll,recv=$(nep_epb_recv ll 1 128)" 128
rc=$?
step "3 bench LL (plugin)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-ll.out")"); sel_bytes $(nep_metric "$LOG/bench-ll.out" sel_bytes), dispatch $(nep_metric "$LOG/bench-ll.out" phase_plugin_dispatch_us) us, combine $(nep_metric "$LOG/bench-ll.out" phase_plugin_combine_us) us (events, mean)"
nep_bench "$LOG/bench-ll-a2a.out" 1 1 a2a 128
rc=$?
step "3 bench LL shape (a2a)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-ll-a2a.out")"); dispatch $(nep_metric "$LOG/bench-ll-a2a.out" dispatch_us) us, combine $(nep_metric "$LOG/bench-ll-a2a.out" combine_us) us (median)"
nep_ep_bench "$LOG/ep_bench-ll.out" 1 -a ll -t 128 -d 7168 -k 8 -e 256 -w 10 -i 50
rc=$?
step "3 ep_bench LL" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/ep_bench-ll.out")"); dispatch $(nep_epb "$LOG/ep_bench-ll.out" ll d_us) us $(nep_epb "$LOG/ep_bench-ll.out" ll d_gbps) GB/s, combine $(nep_epb "$LOG/ep_bench-ll.out" ll c_us) us $(nep_epb "$LOG/ep_bench-ll.out" ll c_gbps) GB/s"

# 4. the profile
prof=$EG_SRCDIR/suites/gpu/h200x1-ncclep.profile
if "$EG_EPGATE" bench list "$prof" >"$LOG/profile-list.out" 2>&1; then
	"$EG_EPGATE" bench profile "$prof" --no-gates --reports "$LOG/runs" \
		>"$LOG/profile.out" 2>&1
	rc=$?
	step "4 profile h200x1-ncclep" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
		"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/profile.out")"); results under runs/ (profile.out)"
else
	step "4 profile h200x1-ncclep" SKIP \
		"the profile parser refuses plugin arms here: $(tail -n 1 "$LOG/profile-list.out" | cut -c1-110); step 3 and 6 measure the same points"
fi

# 5. HT cases (JIT-compiled at first use: long deadlines)
EPGATE_TIMEOUT=900
export EPGATE_TIMEOUT
nep_check ht-w1 "plugin:$NEP_SO,mode=ht" "$LOG/ht-w1.ini" >"$LOG/ht-w1.result" 2>&1
if grep -q '^ok' "$LOG/ht-w1.result"; then
	step "5 HT cases" ok "$(head -n 1 "$LOG/ht-w1.result" | sed 's/^ok [0-9]* - //')"
else
	step "5 HT cases" FAIL "$(head -n 1 "$LOG/ht-w1.result" | sed 's/^not ok [0-9]* - //') (see ht-w1.result, ht-w1.tap)"
fi

# 6. HT at ep_bench's shape
nep_bench "$LOG/bench-ht.out" 1 1 \
	"plugin:$NEP_SO,mode=ht,recv=$(nep_epb_recv ht 1 4096)" 4096
rc=$?
step "6 bench HT (plugin)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-ht.out")"); recv_bytes $(nep_metric "$LOG/bench-ht.out" recv_bytes), dispatch $(nep_metric "$LOG/bench-ht.out" phase_plugin_dispatch_us) us, combine $(nep_metric "$LOG/bench-ht.out" phase_plugin_combine_us) us (events, mean)"
nep_bench "$LOG/bench-ht-a2a.out" 1 1 a2a 4096
rc=$?
step "6 bench HT shape (a2a)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-ht-a2a.out")"); dispatch $(nep_metric "$LOG/bench-ht-a2a.out" dispatch_us) us, combine $(nep_metric "$LOG/bench-ht-a2a.out" combine_us) us (median)"
nep_ep_bench "$LOG/ep_bench-ht.out" 1 -a ht -t 4096 -d 7168 -k 8 -e 256 -w 10 -i 50
rc=$?
step "6 ep_bench HT" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
	"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/ep_bench-ht.out")"); dispatch $(nep_epb "$LOG/ep_bench-ht.out" ht d_us) us $(nep_epb "$LOG/ep_bench-ht.out" ht d_gbps) GB/s, combine $(nep_epb "$LOG/ep_bench-ht.out" ht c_us) us $(nep_epb "$LOG/ep_bench-ht.out" ht c_gbps) GB/s"

# 7. the tables
{
	echo
	echo "== steps (W=1, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1); $(($(date +%s) - T0)) s)"
	cat "$SUM"
	echo
	echo "== NCCL EP through epgate vs its ep_bench, same shapes (H=7168, top-8, 256 experts; LL 128 tokens, HT 4096)"
	echo "bytes per rank and call, ep_bench's definitions on epgate's own routing: LL sel_bytes = valid (token, top-k slot)"
	echo "selections x H x 2 (no dedup per rank); HT recv_bytes = (tokens received + (token, remote node) pairs sent) x H x 2;"
	echo "dispatch and combine count the same bytes. GB/s = bytes / time / 1e3 (bytes/us). 'events': CUDA events around"
	echo "the plugin's call, mean over 50 timed calls after 10 warm-up (ep_bench's method; it also drops its first timed call);"
	echo "'epgate step': epgate's own step time (median, the wait for the stream included). ep_bench: its host-observed mean."
	nep_table_head
	nep_compare ll "$LOG/bench-ll.out" "$LOG/ep_bench-ll.out"
	nep_compare ht "$LOG/bench-ht.out" "$LOG/ep_bench-ht.out"
	echo
	echo "epgate's nccl a2a at the same shapes (median us): LL dispatch $(nep_metric "$LOG/bench-ll-a2a.out" dispatch_us), combine $(nep_metric "$LOG/bench-ll-a2a.out" combine_us); HT dispatch $(nep_metric "$LOG/bench-ht-a2a.out" dispatch_us), combine $(nep_metric "$LOG/bench-ht-a2a.out" combine_us)"
	echo "ep_bench byte counts: $(grep -m1 '^Byte counts' "$LOG/ep_bench-ll.out")"
	for f in ll-w1.result ht-w1.result declares.tap; do
		grep -q '^not ok' "$LOG/$f" 2>/dev/null || continue
		echo
		echo "== $f (the first lines)"
		head -n 30 "$LOG/$f" | cut -c1-200
	done
	echo "logs: $LOG"
} | tee "$LOG/summary.txt"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
