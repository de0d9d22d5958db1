/* main.c - the gpath command: every subcommand, `gpath serve` (the HTTP service) included, is
 * dispatched from the command list in server/cli.c. */
#include "server/cli.h"

int main(int argc, char **argv) { return gp_cli_main(argc, argv); }
