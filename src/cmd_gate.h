/* epgate gate: performance gates over results files (docs/gates.md). */
#ifndef EPGATE_CMD_GATE_H
#define EPGATE_CMD_GATE_H

/* Returns an automake exit code: 0 every gate passed (skips and, without
 * --strict, inconclusive ones allowed), 1 a gate failed (or, with
 * --strict, was inconclusive), 77 every gate skipped for lack of data,
 * 99 bad input or a hard error. */
int eg_cmd_gate(int argc, char **argv);

#endif
