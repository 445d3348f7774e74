/* The commands of `epgate` (src/main.c's table). Each parses its argv
 * (argv[0] is the command's full name, "epgate bench raw": see
 * eg_cmd_sub) into option structs and makes one
 * library call; each returns an automake exit code (0 pass, 1 fail, 77
 * skip, 99 bad input or a hard error). */
#ifndef EPGATE_SRC_CMD_H
#define EPGATE_SRC_CMD_H

/* The one signature of every command and subcommand. */
typedef int eg_cmd_fn(int argc, char **argv);

eg_cmd_fn eg_cmd_run, eg_cmd_check, eg_cmd_launch;
/* stress: failure rates over many calls (cmd_stress.c) */
eg_cmd_fn eg_cmd_stress;
/* report: the HTML report (cmd_report.c) */
eg_cmd_fn eg_cmd_report;
/* gate: 0 every gate passed (skips and, without --strict, inconclusive
 * ones allowed), 1 a gate failed (or, with --strict, was inconclusive),
 * 77 every gate skipped for lack of data, 99 bad input or a hard error */
eg_cmd_fn eg_cmd_gate;
/* plugin: subcommands new and info (cmd_plugin.c) */
eg_cmd_fn eg_cmd_plugin;
/* bench: subcommands profile, list, engine, raw, overhead, ab, calibrate
 * (cmd_bench.c) */
eg_cmd_fn eg_cmd_bench, eg_cmd_bench_profile, eg_cmd_bench_list,
    eg_cmd_bench_overhead, eg_cmd_bench_engine, eg_cmd_bench_raw,
    eg_cmd_bench_ab, eg_cmd_bench_calibrate;
/* bench overhead --engine NAME: bench engine's point, then its two
 * timing boundaries (cmd_bench_engine.c) */
eg_cmd_fn eg_cmd_bench_overhead_engine;
/* l2-rank, l2-gpu-rank: one rank of an L2 job, host or GPU memory
 * (cmd_rank.c; internal; without CUDA and NCCL l2-gpu-rank says so and
 * returns 77) */
eg_cmd_fn eg_cmd_l2_rank, eg_cmd_l2_gpu_rank;
/* bench-rank: one rank of a sweep job (internal) */
eg_cmd_fn eg_cmd_bench_rank;
/* The batch job's commands (docs/slurm.md): preflight, run on every node
 * before the steps, and job-report, after them (internal). */
eg_cmd_fn eg_cmd_preflight, eg_cmd_job_report;

/* Runs the command NAME of PARENT ("epgate", "epgate bench") with
 * argv[0] its full name, "PARENT NAME": the one place a command's name
 * comes from for its messages (src/opts.c). */
int eg_cmd_sub(const char *parent, const char *name, eg_cmd_fn *run, int argc,
	       char **argv);

#endif
