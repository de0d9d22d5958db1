/* cli.h - the gpath command line (cli/cli.c): the list of subcommands, and the helpers the
 * subcommands' files share (cli/netops.c, ...). Options and help come from each command's
 * declarative table (cli/args.h). */
#ifndef GP_CLI_H
#define GP_CLI_H

#include "engine/engine.h"
#include "cli/args.h"
#include "server/version.h" /* GPATH_VERSION, printed by `gpath --version` */

#include <cjson/cJSON.h>

/* argv[0] is the program, argv[1] the subcommand. Returns the process exit code. */
int gp_cli_main(int argc, char **argv);

/* Loads --graph (with --scale, --undirected; lo may carry more load options, or be NULL) and, when
 * e is not NULL, creates the engine of --backend / --threads with the graph attached. Returns 0,
 * or an exit status after printing the problem (with *g and *e NULL). */
int gp_cli_setup(const gp_cli_args *a, const gp_load_opts *lo, gp_graph **g, gp_engine **e);
/* Prints "gpath: <err>" and returns the exit status for it (2 bad input, 1 failure). */
int gp_cli_fail_err(const gp_err *e);
/* An error HTTP answers with its error document (hcode: GP_HC_*, server/http/http.h): the same
 * document on stdout, "gpath: msg" on stderr; returns the exit status: 3 for NoRoute, 1 for a
 * server-side failure (5xx), else 2 (bad input). */
int gp_cli_answer_error(int hcode, const char *msg);
/* Prints j compactly on stdout and frees it; returns 0 (1 when j is NULL: out of memory). */
int gp_cli_print_json(cJSON *j);

#endif
