/* cli.h - one-shot subcommands: gpath route|sssp|table|apsp|info|gen (server/cli.c). */
#ifndef GP_CLI_H
#define GP_CLI_H
#include "version.h" /* GPATH_VERSION, printed by `gpath --version` */
/* argv[0] is the program, argv[1] the subcommand. Returns the process exit code. */
int gp_cli_main(int argc, char **argv);
#endif
