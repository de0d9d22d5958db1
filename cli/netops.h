/* netops.h - the network-operations subcommands of the gpath command (cli/netops.c):
 *   gpath routing-tables --graph SPEC [--router ID] [--cost-rule RULE] [--ref-bandwidth BPS] ...
 *   gpath what-if --graph SPEC [--fail-link U,V]... [--fail-router R]... [--set-cost U,V,C]...
 *   gpath link-loads --graph SPEC --demands FILE [--ecmp-max N] ...
 *   gpath repair --graph SPEC [--router R]... [--format json|csv] [--summary] [--link-only]
 * Their options, help and examples are the tables in cli/netops.c (cli/args.h).
 */
#ifndef GP_CLI_NETOPS_H
#define GP_CLI_NETOPS_H

#include "cli/args.h"

extern const gp_cli_cmd gp_cli_routing_tables;
extern const gp_cli_cmd gp_cli_what_if;
extern const gp_cli_cmd gp_cli_link_loads;
extern const gp_cli_cmd gp_cli_repair;

#endif
