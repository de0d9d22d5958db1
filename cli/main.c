/* main.c - the gpath command: every subcommand, `gpath serve` (the HTTP service) included, is
 * dispatched from the command list in cli/cli.c. */
#include "cli/cli.h"

int main(int argc, char **argv) { return gp_cli_main(argc, argv); }
