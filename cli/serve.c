/* serve.c - `gpath serve` in the command list: the service itself is server/serve.c, which parses
 * its own argv through the configuration layers (server/config.c); this file writes its --help
 * from the configuration's flags (gp_config_flag_at) in the option-row format of every gpath
 * subcommand (cli/args.h). */
#include "cli/serve.h"

#include "server/config.h"
#include "server/serve.h"

#include <stdio.h>

static void serve_usage(FILE *f) {
    fprintf(f, "usage: gpath serve [OPTIONS]\n"
               "Runs the HTTP service until SIGTERM/SIGINT. Settings: defaults < config file\n"
               "(--config or GPATH_CONFIG) < environment GPATH_<KEY> < flags; every key of the\n"
               "config file is a flag --key-with-dashes and a variable GPATH_<KEY>.\n\noptions:\n");
    char buf[GP_CONFIG_FLAG_BUF];
    gp_config_flag c;
    for (size_t i = 0; gp_config_flag_at(i, &c, buf, sizeof buf); i++) {
        gp_cli_opt o = {c.name, c.short_name, c.arg,
                        c.help, c.example,    c.repeat ? GP_OPT_REPEAT : 0};
        gp_cli_help_row(f, &o);
    }
    static const gp_cli_opt help = {"help", 'h', NULL, "this help", NULL, 0};
    gp_cli_help_row(f, &help);
    fprintf(f, "\nexamples:\n"
               "  gpath serve -p 9090 -g road=dimacs:USA-road-d.NY.gr.gz\n"
               "  GPATH_ADMIN_TOKEN=secret gpath serve --config gpath.conf --print-config\n");
}

static int run_serve(int argc, char **argv) { return gp_serve_main(argc, argv, serve_usage); }

const gp_cli_cmd gp_cli_serve = {
    "serve", "run the HTTP service (options: every config key)", NULL, 0, NULL, NULL, run_serve};
