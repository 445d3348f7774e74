#!/bin/sh
# Named arms (docs/profiles.md, "Named arms"): the shipped profiles with
# the libraries' arms (DeepEP, NCCL EP) parse and list; an arm whose
# plugin or adapter is absent here has its points skipped with the
# reason while the others are measured (not the whole profile failed);
# the profile's python: key (a venv) is the bridge's interpreter in every
# rank, the environment's EPGATE_PYTHON winning over it; the gates judge
# the arm that ran, fall back where it did not and say so (fallback:),
# and know the profile's arms (arms:).  Each checker is fed a wrong
# answer too.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
: "${EG_PYTHON:=python3}"

E=$EG_EPGATE

# has FILE TEXT: the fixed string TEXT is in FILE
has() { grep -qF -- "$2" "$1"; }

# ---- the shipped profiles list their arms --------------------------------
while IFS='|' read -r prof want; do
	"$E" bench list "$prof" >"$EG_TMP/list.out" 2>"$EG_TMP/list.err"
	rc=$?
	miss=""
	# the lines wanted, ';'-separated
	ifs=$IFS
	IFS=';'
	for w in $want; do
		has "$EG_TMP/list.out" "$w" || miss="$miss [$w]"
	done
	IFS=$ifs
	if [ "$rc" -eq 0 ] && [ -z "$miss" ]; then
		eg_ok "bench list $prof: exit 0, lists $want"
	else
		eg_not_ok "bench list $prof: exit $rc, missing:$miss"
		sed 's/^/# /' "$EG_TMP/list.err" | head -n 5
	fi
done <<'EOF'
p5en-ep16|  arm   deepep-v2 = plugin:python,module=deepep,mode=elastic: ;  arm   ncclep-ll-qps = plugin:nccl-ep,mode=ll,qps={num_comms}: ;  point ep8-nvlink/deepep-normal/world=8,nodes=1,concurrency=32 ;  point ep16-multicomm/deepep-v2-qps/num_comms=8 ;  point ep16-experts/ncclep-ht/experts=256 
p5en-ep32|  arm   deepep-v2-qps = plugin:python,module=deepep,mode=elastic,qps={num_comms}: ;  point ep32-multicomm/ncclep-ll-qps/num_comms=8 ;  point ep-world/deepep-v2/concurrency=128 
h200x1|  arm   deepep-ll = plugin:python,module=deepep,mode=ll: ;  point w1/a2a/concurrency=1024 ;  point w1-ht/deepep-v2/concurrency=1024 ;  point w1-ll/ncclep-ll/concurrency=128 
EOF
# every arm of a shipped profile loads here or says why not, never both
"$E" bench list p5en-ep16 >"$EG_TMP/list.out" 2>/dev/null
n=$(grep -c '^  arm ' "$EG_TMP/list.out")
said=$(grep -cE '^  arm .*: (loads here|not runnable here, its points skip: .+)$' "$EG_TMP/list.out")
if [ "$n" -eq 7 ] && [ "$said" -eq 7 ]; then
	eg_ok "p5en-ep16: each of its 7 named arms loads here or says why not"
else
	eg_not_ok "p5en-ep16: $n named arm(s), $said with a verdict, want 7"
	grep '^  arm ' "$EG_TMP/list.out" | sed 's/^/# /'
fi

# ---- a profile of this host: an absent plugin, a venv, the bridge -----------
bridge=0
[ -f "$EG_BUILDDIR/plugins/python/libeg-python.so" ] && bridge=1
venv=$EG_TMP/venv
if [ "$bridge" -eq 1 ] && "$EG_PYTHON" -c 'import numpy' 2>/dev/null &&
	"$EG_PYTHON" -m venv --without-pip --system-site-packages "$venv" 2>/dev/null; then
	site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	# an adapter only the venv has: numpy_ep, saying which interpreter
	# ran it (its library name, the evidence lib_name)
	cat >"$site/eg_venv_probe.py" <<'EOF'
import sys

import numpy_ep
from numpy_ep import combine, create, destroy, dispatch


def query(options):
    caps = numpy_ep.query(options)
    caps["lib_name"] = "venv " + sys.prefix
    return caps
EOF
else
	venv=""
fi
P=$EG_TMP/arms.profile
cat >"$P" <<EOF
profile: arms
transport: fabric
launcher: local
timeout: 30
repetitions: {warmup: 1, iters: 3, launches: 1}
${venv:+python: $venv}
arms:
  gone: "plugin:eg-absent-arm,k={num_comms}"
  probe: "plugin:python,module=eg_venv_probe"
  deepep-v2: "plugin:python,module=deepep,mode=elastic"
base: {world: 2, nodes: 1, concurrency: 8, hidden: 256, experts: 4, topk: 2, dtype: bf16}
sweeps:
  - name: s
    arms: [a2a, gone, probe, deepep-v2]
    axes: {concurrency: 8}
  - name: t
    arms: [dense]
    axes: {concurrency: 8}
EOF

# bench list says the absent one now, with the loader's reason
if "$E" bench list "$P" >"$EG_TMP/l.out" 2>&1 && has "$EG_TMP/l.out" '  arm   gone = plugin:eg-absent-arm,k={num_comms}: not runnable here, its points skip: plugin eg-absent-arm: none of'; then
	eg_ok "bench list: the absent plugin's arm is said not runnable, with the files tried"
else
	eg_not_ok "bench list: no verdict on arm gone"
	sed 's/^/# /' "$EG_TMP/l.out" | head -n 8
fi

if [ -z "$venv" ]; then
	eg_ok "arms run on this host # SKIP no Python bridge, numpy or venv module ($EG_PYTHON)"
	eg_done
fi

# run PROFILE TAG [ENV...]: a campaign into $EG_TMP/TAG (the sweeps in
# $SWEEP, else all), exit in $rc
SWEEP=""
run() {
	p=$1
	tag=$2
	shift 2
	mkdir -p "$EG_TMP/$tag"
	env "$@" "$E" bench profile "$p" --reports "$EG_TMP/$tag" --no-gates \
		--seed 1 ${SWEEP:+--sweep "$SWEEP"} >"$EG_TMP/$tag.out" 2>&1
	rc=$?
	res=""
	for f in "$EG_TMP/$tag"/*/bench-arms.json; do
		[ -f "$f" ] && res=$f
	done
}
# arm_of RESULTS ARM: "ARM LIB_NAME" of its point, or nothing
arm_of() {
	"$EG_PYTHON" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["points"]:
    if p["arm"] == sys.argv[2]:
        print(p["arm"], p["evidence"].get("lib_name", "-"))' "$1" "$2" 2>/dev/null
}

run "$P" venv -u EPGATE_PYTHON
if [ "$rc" -eq 0 ] && [ "$(arm_of "$res" a2a)" = "a2a -" ] &&
	[ "$(arm_of "$res" probe)" = "probe venv $venv" ] &&
	[ -z "$(arm_of "$res" gone)" ] && [ -z "$(arm_of "$res" deepep-v2)" ] &&
	[ "$(arm_of "$res" dense)" = "dense -" ] &&
	has "$EG_TMP/venv.out" 'epgate bench: s/gone/concurrency=8: skipped: setup failed on rank(s) 0 1: fabric: not runnable here: plugin eg-absent-arm: none of' &&
	grep -q '^epgate bench: s/deepep-v2/concurrency=8: skipped: .*not supported: ' "$EG_TMP/venv.out" &&
	has "$EG_TMP/venv.out" '3 of 5 point(s) measured' &&
	tail -n 1 "$EG_TMP/venv.out" | grep -q '^PASS: 3 passed, 0 failed, 2 skipped (exit 0)$'; then
	eg_ok "absent plugin and DeepEP skipped with their reasons, a2a, dense and the venv's adapter measured (its lib_name names the venv): exit 0"
else
	eg_not_ok "the campaign: exit $rc; a2a '$(arm_of "$res" a2a)', probe '$(arm_of "$res" probe)'"
	sed 's/^/# /' "$EG_TMP/venv.out" | tail -n 12
fi

# the environment's interpreter wins over python: -- the system Python has
# no such adapter, so that arm is now the skip (the key is what brought it)
# (and --sweep s: sweep t's dense is not measured)
SWEEP=s
run "$P" env EPGATE_PYTHON="$EG_PYTHON"
if [ "$rc" -eq 0 ] && [ -z "$(arm_of "$res" probe)" ] &&
	[ -z "$(arm_of "$res" dense)" ] &&
	[ "$(arm_of "$res" a2a)" = "a2a -" ] &&
	grep -q "^epgate bench: s/probe/concurrency=8: skipped: .*No module named 'eg_venv_probe'" "$EG_TMP/env.out"; then
	eg_ok "EPGATE_PYTHON=$EG_PYTHON over python:: the venv's adapter is not found, its points skip saying so (--sweep s: no point of t)"
else
	eg_not_ok "EPGATE_PYTHON over python:: exit $rc, probe '$(arm_of "$res" probe)'"
	sed 's/^/# /' "$EG_TMP/env.out" | tail -n 8
fi
# nothing runnable at all: the campaign skips (77), it does not fail
sed 's/arms: \[a2a, gone, probe, deepep-v2\]/arms: [gone]/' "$P" >"$EG_TMP/none.profile"
run "$EG_TMP/none.profile" none
SWEEP=""
if [ "$rc" -eq 77 ] && has "$EG_TMP/none.out" 'nothing could be measured here'; then
	eg_ok "only an absent arm: exit 77, nothing could be measured here"
else
	eg_not_ok "only an absent arm: exit $rc, want 77"
	sed 's/^/# /' "$EG_TMP/none.out" | tail -n 6
fi

# ---- gates: the arm that ran, a fallback that says so --------------------
run "$P" venv2 -u EPGATE_PYTHON
cat >"$EG_TMP/g.gate" <<EOF
profile: arms
arms: [gone, probe]
gates:
  - name: probe-is-venv
    sentence: "The probe arm ran the venv's adapter."
    rule: evidence
    arms: [probe]
    fallback: a2a
    field: lib_name
    expect: ["venv $venv"]
  - name: gone-falls-back
    sentence: "The absent arm's points ran on fabric (a2a where it did not run)."
    rule: evidence
    arms: [gone]
    fallback: a2a
    field: backend
    expect: [fabric]
  - name: gone-no-fallback
    sentence: "The absent arm, no fallback."
    rule: evidence
    arms: [gone]
    field: backend
    expect: [fabric]
EOF
"$E" gate --gates "$EG_TMP/g.gate" --tap "$EG_TMP/g.tap" --junit "$EG_TMP/g.xml" \
	"$res" >"$EG_TMP/g.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^ok 1 - probe-is-venv: ' "$EG_TMP/g.tap" &&
	! grep -A1 'probe-is-venv' "$EG_TMP/g.out" | grep -q 'did not run' &&
	grep -q '^ok 2 - gone-falls-back: ' "$EG_TMP/g.tap" &&
	has "$EG_TMP/g.out" '(gone did not run here: a2a judged in its place)' &&
	grep -q '^ok 3 - gone-no-fallback: .*# SKIP no data: no point of gone ' "$EG_TMP/g.tap"; then
	eg_ok "gates: the arm that ran judged as itself; the absent one's fallback says so; no fallback: a skip naming it"
else
	eg_not_ok "gates: exit $rc"
	sed 's/^/# /' "$EG_TMP/g.out" | head -n 12
fi
# planted: the venv's adapter is not what ran (a wrong expectation) -- the
# gate judges probe's own points, so it fails rather than pass on a2a's
sed "s|expect: \[\"venv $venv\"\]|expect: [\"venv /elsewhere\"]|" "$EG_TMP/g.gate" >"$EG_TMP/bad.gate"
"$E" gate --gates "$EG_TMP/bad.gate" --tap "$EG_TMP/bad.tap" --junit "$EG_TMP/bad.xml" \
	"$res" >"$EG_TMP/bad.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^not ok 1 - probe-is-venv: ' "$EG_TMP/bad.tap"; then
	eg_ok "planted: a wrong library expected of probe fails (exit 1)"
else
	eg_not_ok "planted wrong expectation: exit $rc, want 1"
	sed 's/^/# /' "$EG_TMP/bad.out" | head -n 6
fi
# planted: without arms: the absent arm is an unknown name (99, file:line)
grep -v '^arms:' "$EG_TMP/g.gate" >"$EG_TMP/noarms.gate"
"$E" gate --gates "$EG_TMP/noarms.gate" --tap "$EG_TMP/n.tap" --junit "$EG_TMP/n.xml" \
	"$res" >"$EG_TMP/n.out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && has "$EG_TMP/n.out" 'noarms.gate:13: gate "gone-falls-back": unknown arm "gone"'; then
	eg_ok "planted: a gate file without arms: refuses the absent arm's name (99, file:line)"
else
	eg_not_ok "no arms:: exit $rc, want 99 naming gone"
	sed 's/^/# /' "$EG_TMP/n.out" | head -n 4
fi
eg_done
