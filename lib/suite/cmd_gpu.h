/* The GPU rank command (lib/suite/l2_gpu.c), for src/main.c's table. It
 * returns an automake exit code (0, 1, 77, 99); without CUDA and NCCL it
 * says so and returns 77. */
#ifndef EPGATE_CMD_GPU_H
#define EPGATE_CMD_GPU_H

/* epgate l2-gpu-rank: one rank of a GPU L2 job. */
int eg_cmd_l2_gpu_rank(int argc, char **argv);

#endif
