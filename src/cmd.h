/* The commands of `epgate` (src/main.c's table). Each parses its argv
 * (argv[0] is the command's name) into option structs and makes one
 * library call; each returns an automake exit code (0 pass, 1 fail, 77
 * skip, 99 bad input or a hard error). */
#ifndef EPGATE_SRC_CMD_H
#define EPGATE_SRC_CMD_H

int eg_cmd_run(int argc, char **argv);
int eg_cmd_check(int argc, char **argv);
int eg_cmd_launch(int argc, char **argv);
/* report: the HTML report (cmd_report.c) */
int eg_cmd_report(int argc, char **argv);
/* bench: subcommands profile, list, engine, raw, overhead (cmd_bench.c) */
int eg_cmd_bench(int argc, char **argv);
int eg_cmd_bench_profile(int argc, char **argv);
int eg_cmd_bench_list(int argc, char **argv);
int eg_cmd_bench_overhead(int argc, char **argv);
int eg_cmd_bench_engine(int argc, char **argv);
int eg_cmd_bench_raw(int argc, char **argv);
int eg_cmd_bench_ab(int argc, char **argv);
int eg_cmd_bench_calibrate(int argc, char **argv);
/* bench-rank: one rank of a sweep job (internal) */
int eg_cmd_bench_rank(int argc, char **argv);

#endif
