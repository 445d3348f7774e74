// Parses a TAP file with npm's tap-parser in strict mode (what node's
// TAP 14 consumers use) and prints one JSON line: the counts, the plan
// and every parse error. Exit 0 when the file parsed without an error
// (failing test points are results, not errors), 1 otherwise, 77 when
// tap-parser is not installed (CI installs it: .ci/run).
//   node tap14.js FILE
"use strict";
const fs = require("fs");
let Parser;
try {
  const m = require("tap-parser");
  Parser = m.Parser || m;
} catch (e) {
  console.log(JSON.stringify({ skip: "tap-parser is not installed" }));
  process.exit(77);
}
const errors = [];
const p = new Parser({ strict: true }, (r) => {
  for (const f of r.failures || [])
    if (f.tapError) errors.push(f.tapError + ": " + JSON.stringify(f.data || f.name));
  console.log(JSON.stringify({
    ok: r.ok, count: r.count, pass: r.pass, fail: r.fail, todo: r.todo,
    skip: r.skip, plan: r.plan && [r.plan.start, r.plan.end], errors,
  }));
  process.exit(errors.length ? 1 : 0);
});
p.on("extra", (line) => errors.push("not TAP: " + JSON.stringify(line)));
p.end(fs.readFileSync(process.argv[2]));
