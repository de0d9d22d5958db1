/* test_pg_spec.c - PostgreSQL graph specs (storage/pg.c) without a server: gpath's parameters
 * (table, edges_sql, directed, scale, srid) are taken out of the URI and decoded, libpq's are kept
 * in order, passwords never appear in the text shown to people, bad specs are refused with a message,
 * and an unreachable server fails the load with libpq's message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "storage/pg.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_split_and_decode(void **state) {
    (void)state;
    gp_pg_spec s;
    gp_err err;
    assert_int_equal(
        gp_pg_spec_parse("postgresql://u@h:5432/db?sslmode=disable&edges_sql=SELECT%20id"
                         "%2Csource%2C%20target%2C%20cost%20FROM%20%22Ways%22%20WHERE%20"
                         "cost%2B1%20%3E%200&connect_timeout=3&directed=false&scale=100",
                         &s, &err),
        GP_OK);
    assert_string_equal(s.conninfo, "postgresql://u@h:5432/db?sslmode=disable&connect_timeout=3");
    assert_string_equal(s.edges_sql,
                        "SELECT id,source, target, cost FROM \"Ways\" WHERE cost+1 > 0");
    assert_null(s.table);
    assert_int_equal(s.directed, 0);
    assert_true(s.scale == 100.0);
    gp_pg_spec_free(&s);

    assert_int_equal(gp_pg_spec_parse("postgres://h/db?table=public.edges", &s, &err), GP_OK);
    assert_string_equal(s.conninfo, "postgres://h/db");
    assert_string_equal(s.table, "public.edges");
    assert_int_equal(s.directed, -1);
    assert_int_equal(s.srid, 0);
    gp_pg_spec_free(&s);

    /* srid= is gpath's: removed from the URI */
    assert_int_equal(
        gp_pg_spec_parse("postgresql://h/db?srid=32632&table=t&sslmode=require", &s, &err), GP_OK);
    assert_string_equal(s.conninfo, "postgresql://h/db?sslmode=require");
    assert_int_equal(s.srid, 32632);
    assert_int_equal(s.planar, 0);
    gp_pg_spec_free(&s);

    /* srid=0: planar x/y in the table's units, with table= and with edges_sql= */
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=t&srid=0", &s, &err), GP_OK);
    assert_int_equal(s.planar, 1);
    assert_int_equal(s.srid, 0);
    gp_pg_spec_free(&s);
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?edges_sql=SELECT%201&srid=0", &s, &err),
                     GP_OK);
    assert_int_equal(s.planar, 1);
    gp_pg_spec_free(&s);

    /* no gpath parameter: the URI is passed through whole */
    assert_int_equal(gp_pg_spec_parse("postgresql:///db?host=/run/pg", &s, &err), GP_OK);
    assert_string_equal(s.conninfo, "postgresql:///db?host=/run/pg");
    assert_null(s.table);
    assert_null(s.edges_sql);
    gp_pg_spec_free(&s);
    gp_pg_spec_free(NULL);
}

static void test_password_redacted(void **state) {
    (void)state;
    gp_pg_spec s;
    gp_err err;
    assert_int_equal(
        gp_pg_spec_parse("postgresql://alice:s3cret@db:5432/gis?password=other&table=t", &s, &err),
        GP_OK);
    assert_null(strstr(s.shown, "s3cret"));
    assert_null(strstr(s.shown, "other"));
    assert_non_null(strstr(s.shown, "alice:***@db:5432/gis"));
    assert_non_null(strstr(s.shown, "password=***"));
    assert_non_null(strstr(s.conninfo, "s3cret")); /* libpq still gets it */
    gp_pg_spec_free(&s);
}

static void test_bad_specs(void **state) {
    (void)state;
    gp_pg_spec s;
    gp_err err;
    assert_int_equal(gp_pg_spec_parse("mysql://h/db", &s, &err), GP_EINVAL);
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=a&edges_sql=b", &s, &err),
                     GP_EINVAL);
    assert_non_null(strstr(err.msg, "not both"));
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?edges_sql=SELECT%2", &s, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "escape"));
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=a%00b", &s, &err), GP_EINVAL);
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=", &s, &err), GP_EINVAL);
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?directed=maybe", &s, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "directed"));
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?scale=-1", &s, &err), GP_EINVAL);
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=t&srid=abc", &s, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "srid must be an EPSG code"));
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?table=t&srid=-1", &s, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "0 for planar"));
    /* edges_sql= transforms in its own SQL */
    assert_int_equal(gp_pg_spec_parse("postgresql://h/db?edges_sql=SELECT%201&srid=3857", &s, &err),
                     GP_EINVAL);
    assert_non_null(strstr(err.msg, "ST_Transform"));
}

static void test_unreachable(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    /* port 1 on loopback: nothing listens there, the connection is refused at once */
    gp_graph *g = gp_load_postgres("postgresql://u:pw@127.0.0.1:1/db?table=edges&connect_timeout=2",
                                   NULL, &err);
    assert_null(g);
    assert_int_equal(err.code, GP_EUNAVAILABLE); /* an outage (503), not bad content */
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    assert_null(strstr(err.msg, ":pw@"));
    assert_non_null(strstr(err.msg, "refused"));
}

/* A spec's connect_timeout=0 (libpq: wait forever) does not lift gpath's bound: against a server
 * that accepts and never answers, the load fails in about 10 s (before: it never ended, holding a
 * load slot for load_timeout_s; the thread itself forever). A deadline 3 s away bounds it to 3. */
static void test_connect_timeout_zero_bounded(void **state) {
    (void)state;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 8), 0);
    socklen_t al = sizeof a;
    getsockname(ls, (struct sockaddr *)&a, &al);
    char spec[160];
    snprintf(spec, sizeof spec, "postgresql://u@127.0.0.1:%d/db?table=e&connect_timeout=0",
             ntohs(a.sin_port));
    gp_load_opts o = {0};
    o.deadline = gp_now() + 3;
    gp_err err;
    double t0 = gp_now();
    assert_null(gp_load_postgres(spec, &o, &err));
    double dt = gp_now() - t0;
    assert_int_equal(err.code, GP_EUNAVAILABLE);
    if (dt > 6) fail_msg("connect_timeout=0 held the load %.1f s (deadline 3 s)", dt);
    close(ls);
}

/* load_pg_hosts: every host (and hostaddr) with its port must be listed; refused before any
 * connection; the configured hosts' list is built from the specs. */
static void test_host_allow_list(void **state) {
    (void)state;
    gp_err err;
    const char *allow = "db.internal, 127.0.0.1:5433";
    assert_int_equal(gp_pg_check_hosts("postgresql://u:pw@db.internal:6000/x?table=t", allow, &err),
                     GP_OK);
    assert_int_equal(gp_pg_check_hosts("postgresql://u@127.0.0.1:5433/x", allow, &err), GP_OK);
    assert_int_equal(gp_pg_check_hosts("postgresql://u@127.0.0.1:5432/x", allow, &err),
                     GP_EFORBIDDEN);
    assert_non_null(strstr(err.msg, "127.0.0.1:5432 is not in load_pg_hosts"));
    assert_int_equal(gp_pg_check_hosts("postgresql://u:pw@10.0.0.9/x", allow, &err), GP_EFORBIDDEN);
    assert_null(strstr(err.msg, "pw@"));
    /* a second host, a hostaddr, the local default, service= */
    assert_int_equal(gp_pg_check_hosts("postgresql://db.internal,evil:5432/x", allow, &err),
                     GP_EFORBIDDEN);
    assert_non_null(strstr(err.msg, "evil"));
    assert_int_equal(gp_pg_check_hosts("postgresql://db.internal/x?hostaddr=10.1.1.1", allow, &err),
                     GP_EFORBIDDEN);
    assert_int_equal(gp_pg_check_hosts("postgresql:///x", allow, &err), GP_EFORBIDDEN);
    assert_non_null(strstr(err.msg, "localhost"));
    assert_int_equal(gp_pg_check_hosts("postgresql:///x", "localhost", &err), GP_OK);
    assert_int_equal(gp_pg_check_hosts("postgresql://db.internal/x?service=other", allow, &err),
                     GP_EFORBIDDEN);
    assert_int_equal(gp_pg_check_hosts("postgresql://db.internal/x", "", &err), GP_EFORBIDDEN);
    char list[256] = "";
    assert_int_equal(gp_pg_spec_hosts("postgresql://a:pw@h1:5432,h2/x?table=t", list, sizeof list),
                     GP_OK);
    assert_int_equal(gp_pg_spec_hosts("postgresql://h2/y", list, sizeof list), GP_OK);
    assert_string_equal(list, "h1,h2");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_decode),
        cmocka_unit_test(test_password_redacted),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_host_allow_list),
        cmocka_unit_test(test_connect_timeout_zero_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
