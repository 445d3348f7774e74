/* epgate launch: N local ranks of a command (lib/world/launch.c). */
#ifndef EPGATE_CMD_LAUNCH_H
#define EPGATE_CMD_LAUNCH_H

int eg_cmd_launch(int argc, char **argv);

#endif
