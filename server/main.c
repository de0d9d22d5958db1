/* main.c - the gpath command: `gpath serve` runs the HTTP service (server/serve.c); every other
 * subcommand is a one-shot query (server/cli.c). */
#include "cli.h"
#include "serve.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "serve") == 0) return gp_serve_main(argc - 1, argv + 1);
    return gp_cli_main(argc, argv);
}
