/* The GPU commands (src/cmd_rank.c, lib/suite/bench_nccl.c), for main.c
 * and cmd_bench.c. Both return automake exit codes (0, 1, 77, 99); without
 * CUDA and NCCL they say so and return 77. */
#ifndef EPGATE_CMD_GPU_H
#define EPGATE_CMD_GPU_H

/* epgate l2-gpu-rank: one rank of a GPU L2 job (l2-rank --memory
 * cuda). */
int eg_cmd_l2_gpu_rank(int argc, char **argv);

/* epgate bench --raw alltoall|allgather|reducescatter: NCCL alone, sizes
 * swept like nccl-tests; argv as given to `epgate bench` (its --raw
 * COLL and --transport options are skipped here). */
int eg_bench_nccl_raw(const char *coll, int argc, char **argv);

#endif
