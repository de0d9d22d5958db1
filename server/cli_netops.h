/* cli_netops.h - the network-operations subcommands of the gpath command (server/cli_netops.c):
 *   gpath routing-tables --graph SPEC [--router ID] [--cost-rule hops|bandwidth|...]
 *                        [--ref-bandwidth BPS] [--scale S] [--ecmp-max N] [--backend B]
 *   gpath what-if --graph SPEC [--fail-link U,V]... [--fail-router R]... [--set-cost U,V,C]...
 *                 [--each-link] [same load options]
 */
#ifndef GP_CLI_NETOPS_H
#define GP_CLI_NETOPS_H
/* 1 when cmd (argv[1]) is one of these subcommands. */
int gp_cli_netops_is(const char *cmd);
/* argv[0] is the program, argv[1] the subcommand; returns the exit code (2: usage, 1: failure). */
int gp_cli_netops_main(int argc, char **argv);
#endif
