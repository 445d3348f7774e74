/* The batch job's commands (docs/slurm.md): epgate preflight, run on
 * every node before the steps, and epgate job-report, after them. */
#ifndef EPGATE_CMD_JOB_H
#define EPGATE_CMD_JOB_H

int eg_cmd_job_report(int argc, char **argv);
int eg_cmd_preflight(int argc, char **argv);

#endif
