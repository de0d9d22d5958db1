/* test_cli_args.c - the option-table machinery of the gpath command line (cli/args.h):
 * typo suggestions by edit distance (transpositions, abbreviations, nothing for far-off words),
 * parsing of every option form (--x V, --x=V, -x V, -xV, flags, repeatable options), required
 * options, values refused where none is taken, and the typed getters' bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/args.h"
#include "server/api/suggest.h"

static const gp_cli_opt opts[] = {
    {"graph", 'g', "SPEC", "graph", "gen:100", GP_OPT_REQUIRED},
    {"from", 'f', "ID", "source", "1", 0},
    {"next-hops", 'N', NULL, "next hops", NULL, 0},
    {"fail-link", 'L', "U,V", "a link", "1,2", GP_OPT_REPEAT},
    {"threads", 'j', "N", "threads", "4", 0},
};
static const gp_cli_cmd cmd = {"t", "test", opts, GP_CLI_NOPTS(opts), NULL, NULL, NULL};

/* Parses "t" + args; returns the status, *a set on success. */
static int parse(gp_cli_args **a, int n, char **args) {
    char *argv[16] = {"gpath", "t"};
    for (int i = 0; i < n; i++) argv[2 + i] = args[i];
    return gp_cli_parse(&cmd, n + 2, argv, a);
}

static void test_suggest(void **state) {
    (void)state;
    const char *names[] = {"graph", "from", "to", "next-hops", "max-distance", "sources", "source"};
    size_t n = sizeof names / sizeof names[0];
    assert_string_equal(gp_suggest("grpah", names, n), "graph"); /* transposition */
    assert_string_equal(gp_suggest("frm", names, n), "from");
    assert_string_equal(gp_suggest("next", names, n), "next-hops"); /* abbreviation */
    assert_string_equal(gp_suggest("max-distnce", names, n), "max-distance");
    assert_string_equal(gp_suggest("sourc", names, n), "source");
    assert_null(gp_suggest("zzzzzz", names, n));
    assert_null(gp_suggest("x", names, n)); /* one letter is no evidence */
}

static void test_forms(void **state) {
    (void)state;
    gp_cli_args *a = NULL;
    assert_int_equal(
        parse(&a, 7, (char *[]){"-g", "gen:5", "--from=7", "-N", "-L1,2", "--fail-link", "3,4"}),
        0);
    assert_non_null(a);
    assert_string_equal(gp_cli_str(a, "graph"), "gen:5");
    assert_string_equal(gp_cli_str(a, "from"), "7");
    assert_true(gp_cli_flag(a, "next-hops"));
    const char *v[4];
    assert_int_equal((int)gp_cli_all(a, "fail-link", v, 4), 2);
    assert_string_equal(v[0], "1,2");
    assert_string_equal(v[1], "3,4");
    assert_null(gp_cli_str(a, "threads"));
    uint64_t t;
    assert_int_equal(gp_cli_u64(a, "threads", 9, 0, 10, &t), 0);
    assert_int_equal((int)t, 9); /* absent: the default */
    gp_cli_args_free(a);
    /* a value that starts with a dash is still a value */
    assert_int_equal(parse(&a, 4, (char *[]){"--graph", "g", "-f", "-5"}), 0);
    assert_string_equal(gp_cli_str(a, "from"), "-5");
    gp_cli_args_free(a);
    assert_int_equal(parse(&a, 4, (char *[]){"-g", "g", "-j", "11"}), 0);
    assert_int_equal(gp_cli_u64(a, "threads", 0, 0, 10, &t), GP_CLI_EXIT_USAGE); /* over max */
    gp_cli_args_free(a);
}

static void test_errors(void **state) {
    (void)state;
    gp_cli_args *a = (gp_cli_args *)&a;
    assert_int_equal(parse(&a, 2, (char *[]){"--grpah", "x"}), GP_CLI_EXIT_USAGE);
    assert_null(a);
    assert_int_equal(parse(&a, 1, (char *[]){"--from"}), GP_CLI_EXIT_USAGE);  /* no value */
    assert_int_equal(parse(&a, 2, (char *[]){"-f", "1"}), GP_CLI_EXIT_USAGE); /* --graph required */
    assert_int_equal(parse(&a, 3, (char *[]){"-g", "x", "--next-hops=1"}), GP_CLI_EXIT_USAGE);
    assert_int_equal(parse(&a, 3, (char *[]){"-g", "x", "stray"}), GP_CLI_EXIT_USAGE);
    assert_int_equal(parse(&a, 3, (char *[]){"-g", "x", "-Z"}), GP_CLI_EXIT_USAGE);
    assert_int_equal(parse(&a, 2, (char *[]){"-g", ""}), GP_CLI_EXIT_USAGE); /* empty value */
    assert_null(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
