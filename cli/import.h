/* import.h - `gpath import`: build a graph once (an OSM extract, or any spec) and write it as a
 * .gpath snapshot that every command and `serve` map instead of rebuilding (cli/import.c). */
#ifndef GP_CLI_IMPORT_H
#define GP_CLI_IMPORT_H

#include "cli/args.h"

extern const gp_cli_cmd gp_cli_import;

#endif
