/* test_http_config.c - `gpath serve` configuration layers (server/config.c): defaults < INI file <
 * GPATH_* environment < flags, the graph-list replacement rule, and the error messages for bad
 * keys, values, flags and files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char conf_path[64];

static void write_conf(const char *text) {
    snprintf(conf_path, sizeof conf_path, "/tmp/gpath-conf-XXXXXX");
    int fd = mkstemp(conf_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void clear_env(void) {
    static const char *vars[] = {"GPATH_CONFIG", "GPATH_PORT",        "GPATH_THREADS",
                                 "GPATH_GRAPHS", "GPATH_ADMIN_TOKEN", "GPATH_MAX_TABLE_CELLS",
                                 "GPATH_LISTEN", "GPATH_BACKEND",     "GPATH_LOG_LEVEL"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static int load(gp_config *cfg, gp_err *err, int argc, char **argv) {
    int action = -1;
    int rc = gp_config_load(cfg, argc, argv, &action, err);
    if (rc == GP_OK) assert_int_equal(action, 0);
    return rc;
}

static void test_defaults(void **state) {
    (void)state;
    clear_env();
    gp_config *cfg = malloc(sizeof *cfg);
    gp_err err;
    char *argv[] = {"serve"};
    assert_int_equal(load(cfg, &err, 1, argv), GP_OK);
    assert_int_equal(cfg->port, 8080);
    assert_string_equal(cfg->listen, "0.0.0.0");
    assert_string_equal(cfg->backend, "auto");
    assert_string_equal(cfg->admin_token, "");
    assert_int_equal(cfg->ecmp_max, 64);
    assert_int_equal(cfg->ngraphs, 1);
    assert_string_equal(cfg->graphs[0].name, "default");
    assert_string_equal(cfg->graphs[0].spec, "gen:100000");
    free(cfg);
}

static void test_precedence(void **state) {
    (void)state;
    clear_env();
    write_conf("; comment\n[server]\nport = 1111\nthreads = 3\nmax_table_cells = 77\n"
               "admin_token = from-file\n[graphs]\na = gen:100\nb = gen:200\n");
    gp_config *cfg = malloc(sizeof *cfg);
    gp_err err;
    char *argv[] = {"serve", "--config", conf_path, "--port", "3333"};
    setenv("GPATH_PORT", "2222", 1);
    setenv("GPATH_THREADS", "5", 1);
    assert_int_equal(load(cfg, &err, 5, argv), GP_OK);
    assert_int_equal(cfg->port, 3333);          /* flag > env > file */
    assert_int_equal(cfg->threads, 5);          /* env > file */
    assert_int_equal(cfg->max_table_cells, 77); /* file > default */
    assert_string_equal(cfg->admin_token, "from-file");
    assert_int_equal(cfg->ngraphs, 2); /* the file's list */
    assert_string_equal(cfg->graphs[1].name, "b");
    /* env GPATH_GRAPHS replaces the file's list; --graph flags replace env's */
    setenv("GPATH_GRAPHS", "x=gen:300 y=gen:400 z=gen:500", 1);
    assert_int_equal(load(cfg, &err, 5, argv), GP_OK);
    assert_int_equal(cfg->ngraphs, 3);
    assert_string_equal(cfg->graphs[2].spec, "gen:500");
    char cfgflag[96];
    snprintf(cfgflag, sizeof cfgflag, "--config=%s", conf_path);
    char *argv2[] = {"serve", cfgflag, "--graph", "only=gen:600", "--graph=two=gen:700"};
    assert_int_equal(load(cfg, &err, 5, argv2), GP_OK);
    assert_int_equal(cfg->ngraphs, 2);
    assert_string_equal(cfg->graphs[0].name, "only");
    assert_string_equal(cfg->graphs[1].spec, "gen:700");
    assert_int_equal(cfg->port, 2222); /* env, no port flag this time */
    clear_env();
    unlink(conf_path);
    free(cfg);
}

static void test_every_key_is_a_flag(void **state) {
    (void)state;
    clear_env();
    gp_config *cfg = malloc(sizeof *cfg);
    gp_err err;
    char *argv[] = {"serve", "--max-apsp-nodes",     "99", "--admin-token", "t0k",   "--log-level",
                    "debug", "--cuda-queue-wait-ms", "5",  "--port-file",   "/tmp/p"};
    assert_int_equal(load(cfg, &err, 11, argv), GP_OK);
    assert_int_equal(cfg->max_apsp_nodes, 99);
    assert_string_equal(cfg->admin_token, "t0k");
    assert_string_equal(cfg->log_level, "debug");
    assert_int_equal(cfg->cuda_queue_wait_ms, 5);
    assert_string_equal(cfg->port_file, "/tmp/p");
    free(cfg);
}

static void expect_fail(int argc, char **argv, const char *words) {
    gp_config *cfg = malloc(sizeof *cfg);
    gp_err err;
    gp_err_clear(&err);
    int action = 0;
    assert_int_equal(gp_config_load(cfg, argc, argv, &action, &err), GP_EINVAL);
    if (!strstr(err.msg, words)) fail_msg("message '%s' lacks '%s'", err.msg, words);
    free(cfg);
}

static void test_errors(void **state) {
    (void)state;
    clear_env();
    expect_fail(3, (char *[]){"serve", "--port", "x"}, "port must be an integer");
    expect_fail(3, (char *[]){"serve", "--port", "65536"}, "[0, 65535]");
    expect_fail(3, (char *[]){"serve", "--threads", "-1"}, "threads");
    expect_fail(3, (char *[]){"serve", "--nope", "1"}, "unknown flag --nope");
    expect_fail(2, (char *[]){"serve", "--port"}, "needs a value");
    expect_fail(2, (char *[]){"serve", "stray"}, "unexpected argument 'stray'");
    expect_fail(3, (char *[]){"serve", "--backend", "tpu"}, "backend must be auto, cuda or cpu");
    expect_fail(3, (char *[]){"serve", "--log-level", "loud"}, "log_level");
    expect_fail(3, (char *[]){"serve", "--graph", "=gen:100"}, "NAME=SPEC");
    expect_fail(3, (char *[]){"serve", "--graph", "bad name=gen:100"}, "graph name 'bad name'");
    expect_fail(3, (char *[]){"serve", "--graph", "a="}, "needs a spec");
    expect_fail(3, (char *[]){"serve", "--config", "/nonexistent/gpath.conf"}, "cannot open");
    write_conf("[server]\nprot = 1\n");
    expect_fail(3, (char *[]){"serve", "--config", conf_path}, "unknown key 'prot'");
    write_conf("[weird]\nport = 1\n");
    expect_fail(3, (char *[]){"serve", "--config", conf_path}, "unknown section [weird]");
    write_conf("port = 1\nthis line has no equals sign\n");
    expect_fail(3, (char *[]){"serve", "--config", conf_path}, "line 2");
    write_conf("max_body_bytes = 10\n");
    expect_fail(3, (char *[]){"serve", "--config", conf_path}, "max_body_bytes must be in");
    unlink(conf_path);
    setenv("GPATH_PORT", "eighty", 1);
    expect_fail(1, (char *[]){"serve"}, "GPATH_PORT: port must be an integer");
    clear_env();
}

static void test_actions(void **state) {
    (void)state;
    clear_env();
    gp_config *cfg = malloc(sizeof *cfg);
    gp_err err;
    int action = 0;
    assert_int_equal(gp_config_load(cfg, 2, (char *[]){"serve", "--print-routes"}, &action, &err),
                     GP_OK);
    assert_int_equal(action, 2);
    assert_int_equal(gp_config_load(cfg, 2, (char *[]){"serve", "--print-config"}, &action, &err),
                     GP_OK);
    assert_int_equal(action, 3);
    assert_int_equal(gp_config_load(cfg, 2, (char *[]){"serve", "--help"}, &action, &err), GP_OK);
    assert_int_equal(action, 1);
    free(cfg);
}

/* The documented example is itself a valid config that reproduces the defaults. */
static void test_example_roundtrip(void **state) {
    (void)state;
    clear_env();
    snprintf(conf_path, sizeof conf_path, "/tmp/gpath-conf-XXXXXX");
    int fd = mkstemp(conf_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    gp_config_write_example(f);
    fclose(f);
    gp_config *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    gp_err err;
    assert_int_equal(load(a, &err, 1, (char *[]){"serve"}), GP_OK);
    if (load(b, &err, 3, (char *[]){"serve", "--config", conf_path}) != GP_OK)
        fail_msg("example config rejected: %s", err.msg);
    assert_memory_equal(a, b, offsetof(gp_config, ngraphs));
    assert_int_equal(b->ngraphs, 1);
    assert_string_equal(b->graphs[0].spec, "gen:100000");
    unlink(conf_path);
    free(a);
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_every_key_is_a_flag),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_actions),
        cmocka_unit_test(test_example_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
