/* serve.h - `gpath serve` in the command list of cli/cli.c (cli/serve.c): its --help comes from
 * the configuration table (server/config.h), the service from server/serve.h. */
#ifndef GP_CLI_SERVE_H
#define GP_CLI_SERVE_H

#include "cli/args.h"

extern const gp_cli_cmd gp_cli_serve;

#endif
