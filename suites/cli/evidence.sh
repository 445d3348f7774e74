#!/bin/sh
# The evidence with every result (docs/results-v1.md, "Evidence"): a
# campaign's points carry the libraries as the ranks loaded them (each
# version what the library itself answers, asked here through ctypes
# when python3 is there), the host, and for a plugin arm the library
# under test as it declares it; the knobs are in the context; an
# evidence gate rules on those fields (a planted mismatch fails); every
# run folder's summary.json keeps the evidence (bench profile, gate,
# check with a planted aborting library: its CRASH case counted and
# listed, check --l2, run), every JUnit file's properties and
# report.html's header show it.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
cd "$EG_TMP" || exit 99
tpl=$EG_BUILDDIR/plugins/template/libeg-template.so
host=$(hostname)

cat >p.profile <<EOF
profile: evidence
transport: fabric
launcher: local
timeout: 30
repetitions: {warmup: 1, iters: 3}
base: {world: 2, nodes: 1, num_comms: 1, concurrency: 8, hidden: 32,
       experts: 8, topk: 2, dtype: bf16, routing: uniform}
sweeps:
  - name: ev
    arms: [a2a, "plugin:$tpl"]
    axes: {concurrency: [8]}
EOF
NVSHMEM_PLANTED_KNOB=1 FI_PLANTED_KNOB=2 EPGATE_SECRET=not-a-knob \
	"$EG_EPGATE" bench profile p.profile --no-gates --results r.json \
	--reports "$EG_TMP/runs" >out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ -f r.json ]; then
	eg_ok "bench profile with a plugin arm: measured"
else
	eg_not_ok "bench profile: exit $rc"
	tail -n 8 out | sed 's/^/# /'
fi

# every point: the libraries as loaded, the host; the plugin arm its library
if python3 - "$host" r.json <<'EOF' >py.out 2>&1; then
import json, sys, ctypes, ctypes.util
host, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
c = r["context"]
assert c["revision"] == 2, c
assert c["env"]["NVSHMEM_PLANTED_KNOB"] == "1" and c["env"]["FI_PLANTED_KNOB"] == "2"
assert "EPGATE_SECRET" not in c["env"]
def loaded(name, call):
    try:
        return call(ctypes.CDLL(name))
    except OSError:
        return None
def nccl(lib):
    v = ctypes.c_int()
    lib.ncclGetVersion(ctypes.byref(v))
    v = v.value
    return "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100)
def fabric(lib):
    lib.fi_version.restype = ctypes.c_uint32
    v = lib.fi_version()
    return "%d.%d" % (v >> 16, v & 0xffff)
for p in r["points"]:
    e = p["evidence"]
    for k in ("host", "nccl", "libfabric", "nvshmem", "cuda", "cuda_driver", "driver"):
        assert k in e, (p["id"], k)
    assert e["host"] == host, e
    assert e["nvshmem"] == "not loaded", e
    if e["nccl"] != "not loaded":
        want = loaded("libnccl.so.2", nccl)
        assert want is None or e["nccl"] == want, (e["nccl"], want)
    want = loaded("libfabric.so.1", fabric)
    assert want is None or e["libfabric"] == want, (e["libfabric"], want)
    if p["arm"].startswith("plugin:"):
        assert e["lib_name"] == "epgate-template" and e["lib_version"] == "1.0", e
        assert e["lib_build"], e
    else:
        assert "lib_name" not in e, e
print("ok", [p["evidence"]["nccl"] for p in r["points"]][0])
EOF
	eg_ok "every point: the libraries as loaded, host; the plugin arm its library ($(tail -n 1 py.out))"
else
	eg_not_ok "the points' evidence"
	sed 's/^/# /' py.out | tail -n 8
fi

# an evidence gate on the library's version; a planted mismatch fails
for want in 1.0 9.9; do
	cat >lib.gate <<EOF
profile: evidence
gates:
  - name: library-version
    sentence: "The library under test is version $want."
    rule: evidence
    arms: ["plugin:$tpl"]
    field: lib_version
    expect: ["$want"]
EOF
	"$EG_EPGATE" gate --gates lib.gate --reports "$EG_TMP/g" r.json >g.out 2>&1
	eval "rc_$(echo $want | tr . _)=$?"
done
if [ "$rc_1_0" -eq 0 ] && [ "$rc_9_9" -eq 1 ] &&
	grep -q 'lib_version 1.0 at .*want 9.9' g.out; then
	eg_ok "field: lib_version: 1.0 passes, a planted 9.9 fails naming 1.0"
else
	eg_not_ok "field: lib_version: exit $rc_1_0 and $rc_9_9, want 0 and 1"
	sed 's/^/# /' g.out | head -n 6
fi
j=$(ls "$EG_TMP"/g/*/gate.junit.xml | tail -n 1)
if grep -q '<property name="lib_version" value="1.0"/>' "$j" &&
	grep -q "<property name=\"host\" value=\"$host\"/>" "$j"; then
	eg_ok "the gate's JUnit: the results' evidence as properties"
else
	eg_not_ok "the gate's JUnit: no evidence properties"
fi

# every run folder's summary.json carries the evidence: bench profile's
# (the results', the plugin arm's library among them) and gate's (the
# results it judged)
sj_evidence() { # SUMMARY KEY=VALUE...: summary.json's evidence has each
	python3 -c 'import json, sys
e = json.load(open(sys.argv[1])).get("evidence") or {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    assert v in (e.get(k) or "").split(" | "), (k, e.get(k))' "$@" 2>&1
}
b=$(ls "$EG_TMP"/runs/*/summary.json | tail -n 1)
gs=$(ls "$EG_TMP"/g/*/summary.json | tail -n 1)
if [ -n "$b" ] && [ -z "$(sj_evidence "$b" host="$host" lib_name=epgate-template transport_class=shm)" ] &&
	[ -n "$gs" ] && [ -z "$(sj_evidence "$gs" lib_version=1.0 host="$host")" ] &&
	[ -n "$(sj_evidence "$gs" lib_version=9.9)" ]; then
	eg_ok "bench profile's and gate's summary.json: the evidence (host, the plugin arm's library, the transport; a planted lib_version 9.9 is not there)"
else
	eg_not_ok "summary.json evidence: bench '$(sj_evidence "$b" host="$host" lib_name=epgate-template transport_class=shm)', gate '$(sj_evidence "$gs" lib_version=1.0 host="$host")'"
fi

# epgate check's run folder: summary.json with its stage, the CRASH cases
# counted as such and listed with their repro lines, the evidence (the
# library under test); its page shows the evidence under the verdict.
# Planted: a library that aborts on odd token counts (one case of two).
cat >crash.ini <<'INI'
world = 1
hidden = 64
experts = 8
topk = 2
[c1-even]
tokens = 16
[c1-odd]
tokens = 17
INI
"$EG_EPGATE" check --engine "plugin:$EG_BUILDDIR/plugins/faults/libeg-fault-abort.so" \
	--workload crash.ini --reports "$EG_TMP/ck" >ck.out 2>&1
rc=$?
d=$(ls -d "$EG_TMP"/ck/*/ 2>/dev/null | tail -n 1)
if [ "$rc" -eq 1 ] && python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["command"] == "check" and j["exit"] == 1 and j["verdict"] == "FAIL", j
s = j["stages"]
assert [x["name"] for x in s] == ["l1"], s
s = s[0]
assert (s["passed"], s["failed"], s["errors"], s["crashed"]) == (1, 0, 1, 1), s
assert j["totals"]["crashed"] == 1, j["totals"]
f = s["failures"]
assert len(f) == 1 and f[0]["kind"] == "crash" and f[0]["case"] == "c1-odd", f
assert "SIGABRT" in f[0]["message"] and "--name=c1-odd" in f[0]["repro"], f
assert "check.junit.xml" in s["files"], s["files"]
e = j["evidence"]
assert e["lib_name"] == "epgate-template" and e["host"] == sys.argv[2], e' "$d/summary.json" "$host" 2>py.err; then
	eg_ok "check of an aborting plugin (exit $rc): summary.json has stage l1 with 1 crashed, the CRASH case with its repro, the library's evidence"
else
	eg_not_ok "check of an aborting plugin: exit $rc, summary.json: $(ls "$d" 2>/dev/null | tr '\n' ' ')"
	sed 's/^/# /' py.err | tail -n 4
fi
"$EG_EPGATE" report "${d%/}" >rep.out 2>&1
if grep -q '<table class="evidence" id="evidence">' "$d/report.html" &&
	grep -q '<tr data-key="lib_name"><th>lib_name</th><td>epgate-template</td>' "$d/report.html" &&
	grep -q "<tr data-key=\"host\"><th>host</th><td>$host</td>" "$d/report.html"; then
	eg_ok "the check folder's page: the evidence under its verdict (lib_name, host)"
else
	eg_not_ok "the check folder's page: no evidence header"
fi
# L2 (check --l2): its run folder's summary.json, stage l2
"$EG_EPGATE" check --l2 --filter w2-base --iters 1 --reports "$EG_TMP/ck2" >ck2.out 2>&1
rc=$?
d=$(ls -d "$EG_TMP"/ck2/*/ 2>/dev/null | tail -n 1)
if [ "$rc" -eq 0 ] && python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["command"] == "check" and j["exit"] == 0 and j["verdict"] == "PASS", j
s = j["stages"]
assert [x["name"] for x in s] == ["l2"] and s[0]["passed"] >= 1 and s[0]["crashed"] == 0, s
assert "check-l2.junit.xml" in s[0]["files"], s[0]["files"]
assert j["evidence"]["host"] == sys.argv[2], j["evidence"]' "$d/summary.json" "$host" 2>py.err; then
	eg_ok "check --l2 (exit $rc): summary.json has stage l2 and the evidence"
else
	eg_not_ok "check --l2: exit $rc, summary.json: $(ls "$d" 2>/dev/null | tr '\n' ' ')"
	sed 's/^/# /' py.err | tail -n 4
fi

# epgate run: summary.json, every JUnit file, report.html's header
EPGATE_DATADIR=$EG_SRCDIR/fixtures/run-mini EPGATE_TIMEOUT=30 \
	"$EG_EPGATE" run --reports "$EG_TMP/run" >run.out 2>&1
rc=$?
d=$(ls -d "$EG_TMP"/run/*/ | tail -n 1)
if python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["evidence"]
for k in ("host", "libfabric", "nccl", "cuda", "transport", "transport_class", "provider", "build"):
    assert e.get(k), k
assert e["transport_class"] == "shm" and e["host"] == sys.argv[2], e
assert e["env"]["EPGATE_DATADIR"]' "$d/summary.json" "$host" 2>py.err; then
	eg_ok "epgate run (exit $rc): summary.json's evidence"
else
	eg_not_ok "epgate run (exit $rc): summary.json's evidence"
	sed 's/^/# /' py.err | tail -n 4
fi
bad=""
for x in "$d"/*.junit.xml; do
	grep -q "<property name=\"host\" value=\"$host\"/>" "$x" || bad="$bad $(basename "$x")"
	if command -v "$XMLLINT" >/dev/null 2>&1; then
		"$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$x" \
			>/dev/null 2>&1 || bad="$bad $(basename "$x")(schema)"
	fi
done
if [ -z "$bad" ]; then
	eg_ok "every JUnit file of the run: evidence properties, valid"
else
	eg_not_ok "JUnit files without evidence or invalid:$bad"
fi
if grep -q '<table class="evidence" id="evidence">' "$d/report.html" &&
	grep -q "<tr data-key=\"host\"><th>host</th><td>$host</td>" "$d/report.html" &&
	grep -q '<tr data-key="transport_class"><th>transport_class</th><td>shm</td>' "$d/report.html"; then
	eg_ok "report.html's header: the evidence"
else
	eg_not_ok "report.html's header: no evidence"
fi

# check of a plugin: its library in the JUnit properties
"$EG_EPGATE" check --engine "plugin:$tpl" --world=1 --tap=c.tap --junit=c.xml >out 2>&1
if grep -q '<property name="lib_name" value="epgate-template"/>' c.xml; then
	eg_ok "check --engine plugin: lib_name in the JUnit properties"
else
	eg_not_ok "check --engine plugin: no lib_name property"
fi
eg_done
