/* args.h - the gpath command line's one declarative option table format (cli/args.c).
 *
 * A subcommand is one gp_cli_cmd: a name, a summary, a table of gp_cli_opt rows (long name, short
 * letter, value placeholder, description, example value, required/repeatable), example command
 * lines and one run function. From the table alone come parsing (--name VALUE, --name=VALUE,
 * -x VALUE, -xVALUE), `gpath SUB --help` (every option with its description and an example), the
 * checks for required options and missing values, and "unknown option --grpah; did you mean
 * --graph?" (edit distance) with exit status 2.
 *
 * Adding a subcommand: write its table and its function in your own file, declare the gp_cli_cmd
 * in your own header, and add one line to the command list in cli/cli.c. Rows every graph
 * command shares are the GP_CLI_OPT_* macros below.
 *
 * Exit statuses (GP_CLI_EXIT_*): 0 success, 1 failure while answering, 2 bad usage or input
 * (unknown option or node, missing parameter, unreadable graph), 3 no route (the NoRoute error
 * document is printed, as HTTP sends it).
 */
#ifndef GP_CLI_ARGS_H
#define GP_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GP_CLI_EXIT_OK = 0, GP_CLI_EXIT_FAIL = 1, GP_CLI_EXIT_USAGE = 2, GP_CLI_EXIT_NO_ROUTE = 3 };

enum {
    GP_OPT_REQUIRED = 1, /* the command cannot run without it: "missing parameter --x" */
    GP_OPT_REPEAT = 2    /* may be given several times; gp_cli_all returns every value */
};

typedef struct gp_cli_opt {
    const char *name;    /* long name, without the dashes: "graph" */
    char short_name;     /* 'g' for -g, or 0 */
    const char *arg;     /* value placeholder ("SPEC"); NULL: a flag that takes no value */
    const char *help;    /* one-line description */
    const char *example; /* an example value ("gen:10000:7"); flags: NULL */
    int flags;           /* GP_OPT_* */
} gp_cli_opt;

typedef struct gp_cli_args gp_cli_args;

typedef struct gp_cli_cmd {
    const char *name;
    const char *summary;    /* one line, shown by `gpath --help` */
    const gp_cli_opt *opts; /* the table; --help is implied */
    size_t nopts;
    const char *const *examples; /* NULL-terminated example command lines */
    int (*run)(const gp_cli_args *a);
    /* Set for a command that parses its own argv (serve: the configuration layers): run_argv gets
     * argv[1..] (argv[0] = the subcommand) and the table is used for --help and suggestions. */
    int (*run_argv)(int argc, char **argv);
} gp_cli_cmd;

#define GP_CLI_NOPTS(table) (sizeof(table) / sizeof((table)[0]))

/* Rows shared by the graph commands. */
/* clang-format off */
#define GP_CLI_OPT_GRAPH                                                                           \
    {"graph", 'g', "SPEC",                                                                         \
     "graph to load: dimacs:PATH, csv:PATH, gen:N[:SEED], graphml:PATH, osm:PATH, gpath:PATH, "    \
     "postgresql://..., or a PATH whose extension picks the format",                              \
     "gen:10000:7", GP_OPT_REQUIRED}
#define GP_CLI_OPT_SCALE                                                                           \
    {"scale", 0, "S", "fixed-point scale for fractional costs (default: 1 for integers, else 1000)", \
     "1000", 0}
#define GP_CLI_OPT_UNDIRECTED                                                                      \
    {"undirected", 'u', NULL, "treat every edge as two arcs", NULL, 0}
#define GP_CLI_OPT_BACKEND                                                                         \
    {"backend", 'b', "B", "auto (CUDA when a GPU is usable, else CPU), cuda or cpu", "cpu", 0}
#define GP_CLI_OPT_TURN_COSTS                                                                      \
    {"turn-costs", 0, "on|off",                                                                    \
     "turn costs on OSM road graphs (default on; serve's config key turn_costs)", "off", 0}
#define GP_CLI_OPT_THREADS                                                                         \
    {"threads", 'j', "N", "CPU threads for tables and APSP (default: all cores)", "4", 0}
#define GP_CLI_OPT_PROFILE                                                                         \
    {"profile", 'p', "P",                                                                          \
     "OpenStreetMap routing profile: car (default), bicycle or foot; a snapshot keeps its own",   \
     "foot", 0}
#define GP_CLI_OPT_QUIET                                                                           \
    {"quiet", 'q', NULL,                                                                           \
     "no progress on stderr (default: a bar on a terminal, else a line every 2 s of long work)",  \
     NULL, 0}
/* clang-format on */

/* Parses argv[2..] (argv[1] is the subcommand) against c's table. Returns 0 with *out set (free
 * with gp_cli_args_free), or an exit status (2 after printing the problem; 0 after printing --help)
 * with *out = NULL. */
int gp_cli_parse(const gp_cli_cmd *c, int argc, char **argv, gp_cli_args **out);
void gp_cli_args_free(gp_cli_args *a);
/* The last value given for option name, or NULL. */
const char *gp_cli_str(const gp_cli_args *a, const char *name);
/* 1 when flag name was given. */
int gp_cli_flag(const gp_cli_args *a, const char *name);
/* Every value of a repeatable option in order; returns the count (up to cap stored in out). */
size_t gp_cli_all(const gp_cli_args *a, const char *name, const char **out, size_t cap);
/* The command being run. */
const gp_cli_cmd *gp_cli_command(const gp_cli_args *a);

/* Typed values: 0 with *out set (def when absent), or GP_CLI_EXIT_USAGE after printing
 * "gpath: --name: 'x' is not ... (e.g. --name EXAMPLE)". */
int gp_cli_u64(const gp_cli_args *a, const char *name, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out);
int gp_cli_double(const gp_cli_args *a, const char *name, double def, double min, double max,
                  double *out);

/* Prints "gpath: MESSAGE" on stderr; returns GP_CLI_EXIT_USAGE. */
int gp_cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* `gpath SUB --help` of c. */
void gp_cli_help(const gp_cli_cmd *c, FILE *f);
/* Writes one option row of the help (also used by `gpath serve --help`). */
void gp_cli_help_row(FILE *f, const gp_cli_opt *o);

/* Prints "gpath: unknown option --WORD; did you mean --X? (see gpath CMD --help)" on stderr, the
 * suggestion drawn from c's option names (gp_suggest, server/api/suggest.h); returns GP_CLI_EXIT_USAGE. */
int gp_cli_unknown_option(const gp_cli_cmd *c, const char *word);

#ifdef __cplusplus
}
#endif
#endif
