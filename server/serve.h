/* serve.h - `gpath serve`: the HTTP service (server/serve.c). */
#ifndef GP_SERVE_H
#define GP_SERVE_H
/* argv[0] is "serve". Runs until SIGTERM/SIGINT; returns the process exit code. */
int gp_serve_main(int argc, char **argv);
/* The serve entry of the gpath command list (cli/cli.c). */
struct gp_cli_cmd;
extern const struct gp_cli_cmd gp_cli_serve;
#endif
