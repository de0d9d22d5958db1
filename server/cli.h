/* cli.h - one-shot subcommands: gpath route|sssp|table|apsp|info|gen (server/cli.c). */
#ifndef GP_CLI_H
#define GP_CLI_H
/* The release version printed by `gpath --version`. */
#ifndef GPATH_VERSION
#define GPATH_VERSION "0.1.0"
#endif
/* argv[0] is the program, argv[1] the subcommand. Returns the process exit code. */
int gp_cli_main(int argc, char **argv);
#endif
