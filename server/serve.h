/* serve.h - `gpath serve`: the HTTP service (server/serve.c). Its entry in the command list and
 * its --help are cli/serve.c's. */
#ifndef GP_SERVE_H
#define GP_SERVE_H

#include <stdio.h>

/* argv[0] is "serve". Runs until SIGTERM/SIGINT; returns the process exit code. On --help calls
 * usage(stdout) (when not NULL) and returns 0. */
int gp_serve_main(int argc, char **argv, void (*usage)(FILE *f));
#endif
