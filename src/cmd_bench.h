/* epgate bench: measurements. --raw times the transport alone (message
 * rate and bandwidth per endpoint), so that what the engines add on top
 * of the fabric is a measured number. */
#ifndef EPGATE_CMD_BENCH_H
#define EPGATE_CMD_BENCH_H

/* Run once per rank under `epgate launch`; rank 0 prints the table.
 * Returns an automake exit code (0, 1, 77, 99). */
int eg_cmd_bench(int argc, char **argv);

#endif
