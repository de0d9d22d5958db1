/* test_params.c - the strict value parsers of the /v1 parameter layer (server/api/params.c), which
 * other endpoints (the OSRM API) reuse: integers and numbers without blanks or junk, lon,lat with
 * ranges, node-or-coordinate places from text and JSON, JSON integers range-checked before any
 * conversion (1e300, 2^63), router references, and objects with unknown members.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/params.h"

static void test_integers_and_numbers(void **st) {
    (void)st;
    int64_t i;
    double d;
    assert_int_equal(gp_parse_i64("42", &i), 0);
    assert_int_equal(i, 42);
    assert_int_equal(gp_parse_i64("-9223372036854775808", &i), 0);
    assert_true(i == INT64_MIN);
    const char *bad_i[] = {"", " 1", "1 ", "1x", "0x10", "9223372036854775808", "+", "1.0", "1e3"};
    for (size_t k = 0; k < sizeof bad_i / sizeof bad_i[0]; k++)
        assert_int_equal(gp_parse_i64(bad_i[k], &i), -1);
    assert_int_equal(gp_parse_num("7.4246", &d), 0);
    assert_true(d == 7.4246);
    assert_int_equal(gp_parse_num("-1e-3", &d), 0);
    assert_true(d == -1e-3);
    assert_int_equal(gp_parse_num(".5", &d), 0);
    const char *bad_d[] = {"", " 1", "1 ", "nan", "inf", "1e400", "0x1p3", "1.2.3", "1e", "--1"};
    for (size_t k = 0; k < sizeof bad_d / sizeof bad_d[0]; k++)
        assert_int_equal(gp_parse_num(bad_d[k], &d), -1);
}

static void test_places(void **st) {
    (void)st;
    gp_err err;
    gp_place p;
    assert_int_equal(gp_parse_place("12", &p, "from", &err), GP_OK);
    assert_false(p.is_coord);
    assert_int_equal(p.id, 12);
    assert_int_equal(gp_parse_place("7.4246,43.7384", &p, "from", &err), GP_OK);
    assert_true(p.is_coord && p.lon == 7.4246 && p.lat == 43.7384);
    /* latitude out of range names the order */
    assert_int_not_equal(gp_parse_place("7.4,143.7", &p, "to", &err), GP_OK);
    assert_non_null(strstr(err.msg, "longitude comes first"));
    assert_non_null(strstr(err.msg, "'to'"));
    const char *bad[] = {"7.4, 43.7", "7.4,", ",43.7", "7.4,43.7,1", "a,b", " 12", "12 ", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        assert_int_not_equal(gp_parse_place(bad[k], &p, "from", &err), GP_OK);
    double lon, lat;
    assert_int_equal(gp_parse_lonlat("-180,-90", &lon, &lat, "x", &err), GP_OK);
    assert_true(lon == -180 && lat == -90);
    assert_int_not_equal(gp_parse_lonlat("180.5,0", &lon, &lat, "x", &err), GP_OK);
}

static void test_json_values(void **st) {
    (void)st;
    gp_err err;
    gp_place p;
    int64_t i;
    cJSON *j = cJSON_Parse("[3, [7.42, 43.73], \"7.42,43.73\", \"5\", 1e300, 9223372036854775808.0,"
                           " -9223372036854775808.0, 2.5, true, [1], \"r1\", \"\"]");
    assert_non_null(j);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 0), &p, "s", &err), GP_OK);
    assert_int_equal(p.id, 3);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 1), &p, "s", &err), GP_OK);
    assert_true(p.is_coord && p.lon == 7.42 && p.lat == 43.73);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 2), &p, "s", &err), GP_OK);
    assert_true(p.is_coord && p.lon == 7.42);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 3), &p, "s", &err), GP_OK);
    assert_int_equal(p.id, 5);
    /* integers: range-checked before the conversion, the message names the field */
    assert_int_equal(gp_json_i64(cJSON_GetArrayItem(j, 4), INT64_MIN, INT64_MAX, &i, "f[4]", &err),
                     GP_EINVAL);
    assert_non_null(strstr(err.msg, "f[4]"));
    assert_int_equal(gp_json_i64(cJSON_GetArrayItem(j, 5), INT64_MIN, INT64_MAX, &i, "f", &err),
                     GP_EINVAL);
    assert_int_equal(gp_json_i64(cJSON_GetArrayItem(j, 6), INT64_MIN, INT64_MAX, &i, "f", &err),
                     GP_OK);
    assert_true(i == INT64_MIN);
    assert_int_equal(gp_json_i64(cJSON_GetArrayItem(j, 7), INT64_MIN, INT64_MAX, &i, "f", &err),
                     GP_EINVAL);
    assert_int_equal(gp_json_i64(cJSON_GetArrayItem(j, 0), 4, 10, &i, "f", &err), GP_EINVAL);
    /* wrong JSON types are parse errors (InvalidJson), wrong values invalid (InvalidQuery) */
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 8), &p, "s", &err), GP_EPARSE);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 9), &p, "s", &err), GP_EPARSE);
    assert_int_equal(gp_json_place(cJSON_GetArrayItem(j, 4), &p, "s", &err), GP_EINVAL);
    /* routers: ids or names */
    assert_int_equal(gp_json_router(cJSON_GetArrayItem(j, 10), &p, "r", &err), GP_OK);
    assert_string_equal(p.name, "r1");
    assert_int_equal(gp_json_router(cJSON_GetArrayItem(j, 0), &p, "r", &err), GP_OK);
    assert_null(p.name);
    assert_int_equal(p.id, 3);
    assert_int_not_equal(gp_json_router(cJSON_GetArrayItem(j, 11), &p, "r", &err), GP_OK);
    double d;
    assert_int_equal(gp_json_num(cJSON_GetArrayItem(j, 7), 0, 3, &d, "c", &err), GP_OK);
    assert_int_equal(gp_json_num(cJSON_GetArrayItem(j, 4), 0, 1e9, &d, "c", &err), GP_EINVAL);
    cJSON_Delete(j);
    /* objects with members nobody asked for */
    cJSON *o = cJSON_Parse("{\"link\": [1, 2], \"cost\": 1, \"weight\": 2}");
    assert_int_equal(gp_json_only(o, "set_costs[0]", &err, "link", "cost", NULL), 0);
    assert_non_null(strstr(err.msg, "set_costs[0].weight"));
    assert_int_equal(gp_json_only(o, "x", &err, "link", "cost", "weight", NULL), 1);
    cJSON_Delete(o);
}

static void test_router_lookup(void **st) {
    (void)st;
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_node(b, 10, 0, 0, 0, "Berlin", &err), 0);
    assert_int_equal(gp_builder_add_node(b, 20, 0, 0, 0, "10", &err),
                     0); /* a name that is a number */
    assert_int_equal(gp_builder_add_arc(b, 10, 20, 1, &err), 0);
    gp_graph *g = gp_builder_finish(b, "t", "test", 1, &err);
    assert_non_null(g);
    assert_int_equal(gp_router_lookup(g, "Berlin"), gp_graph_index(g, 10));
    assert_int_equal(gp_router_lookup(g, "20"), gp_graph_index(g, 20));
    assert_int_equal(gp_router_lookup(g, "10"), gp_graph_index(g, 20)); /* names first */
    assert_int_equal(gp_router_lookup(g, "Paris"), GP_NONE);
    assert_int_equal(gp_router_lookup(g, "30"), GP_NONE);
    /* the CLI's link arguments */
    gp_link_change c;
    int code;
    assert_int_equal(gp_link_text(g, "t", "Berlin,20", 0, "l", &c, &code, &err), GP_OK);
    assert_true(c.u == 10 && c.v == 20 && c.down);
    assert_int_equal(gp_link_text(g, "t", "20,Berlin,2.5", 1, "l", &c, &code, &err), GP_OK);
    assert_true(c.u == 20 && c.v == 10 && !c.down && c.cost == 2.5);
    /* HTTP's codes and messages: an unknown router named as the link's entry */
    assert_int_not_equal(gp_link_text(g, "t", "Berlin,Paris", 0, "fail_links[0]", &c, &code, &err),
                         GP_OK);
    assert_int_equal(code, GP_HC_UNKNOWN_NODE);
    assert_string_equal(err.msg,
                        "fail_links[0][1]: no router named or numbered 'Paris' in graph 't'");
    const char *bad[] = {"Berlin,20,-1", "Berlin,20", "Berlin"};
    for (int k = 0; k < 3; k++) {
        assert_int_not_equal(gp_link_text(g, "t", bad[k], k < 2, "l", &c, &code, &err), GP_OK);
        assert_int_equal(code, GP_HC_INVALID_QUERY);
    }
    /* routers that exist but are not joined: NotFound */
    gp_builder *b2 = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_node(b2, 1, 0, 0, 0, NULL, &err), 0);
    assert_int_equal(gp_builder_add_node(b2, 2, 0, 0, 0, NULL, &err), 0);
    assert_int_equal(gp_builder_add_node(b2, 3, 0, 0, 0, NULL, &err), 0);
    assert_int_equal(gp_builder_add_arc(b2, 1, 2, 1, &err), 0);
    gp_graph *g2 = gp_builder_finish(b2, "t2", "test", 1, &err);
    assert_non_null(g2);
    assert_int_equal(gp_link_text(g2, "t2", "2,1", 0, "l", &c, &code, &err), GP_OK);
    assert_int_not_equal(gp_link_text(g2, "t2", "1,3", 0, "l", &c, &code, &err), GP_OK);
    assert_int_equal(code, GP_HC_NOT_FOUND);
    assert_string_equal(err.msg, "l: no link between 1 and 3");
    gp_graph_unref(g2);
    gp_graph_unref(g);
}

/* The places lists of the query string and the CLI, and resolution against a graph as HTTP and
 * the CLI share it (gp_place_snap / gp_places_snap: the error code and message of the answer). */
static void test_place_lists_and_snapping(void **st) {
    (void)st;
    gp_err err;
    gp_place *list = NULL;
    uint32_t n = 0;
    assert_int_equal(gp_parse_places("1;7.4246,43.7384;3", &list, &n, "sources", &err), GP_OK);
    assert_int_equal(n, 3);
    assert_true(!list[0].is_coord && list[0].id == 1 && list[1].is_coord && list[2].id == 3);
    free(list);
    assert_int_not_equal(gp_parse_places("1;;3", &list, &n, "sources", &err), GP_OK);
    assert_non_null(strstr(err.msg, "'sources[1]'"));
    assert_int_not_equal(gp_parse_places("1;7.4,x", &list, &n, "targets", &err), GP_OK);
    assert_non_null(strstr(err.msg, "'targets[1]'"));

    /* two nodes 1 km apart on a two-way road */
    gp_builder *b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_node(b, 1, 1, 8.0, 47.0, NULL, &err), 0);
    assert_int_equal(gp_builder_add_node(b, 2, 1, 8.0, 47.009, NULL, &err), 0);
    assert_int_equal(gp_builder_add_arc(b, 1, 2, 10, &err), 0);
    assert_int_equal(gp_builder_add_arc(b, 2, 1, 10, &err), 0);
    gp_graph *g = gp_builder_finish(b, "t", "test", 1, &err);
    assert_non_null(g);
    gp_snap s;
    char msg[1024];
    int code = -1;
    gp_place p = {.id = 2};
    assert_int_equal(gp_place_snap(g, "g", &p, "from", 1000, &s, &code, msg, sizeof msg), 0);
    assert_int_equal(s.node, gp_graph_index(g, 2));
    p.id = 9;
    assert_int_equal(gp_place_snap(g, "g", &p, "to", 1000, &s, &code, msg, sizeof msg), -1);
    assert_int_equal(code, GP_HC_UNKNOWN_NODE);
    assert_string_equal(msg, "to: node 9 is not in graph 'g'");
    p = (gp_place){.is_coord = 1, .lon = 8.0001, .lat = 47.0045};
    assert_int_equal(gp_place_snap(g, "g", &p, "from", 1000, &s, &code, msg, sizeof msg), 0);
    assert_true(s.arc != GP_NONE && s.dist_m < 10);
    assert_int_equal(gp_place_snap(g, "g", &p, "from", 1, &s, &code, msg, sizeof msg), -1);
    assert_int_equal(code, GP_HC_NO_SEGMENT);
    assert_non_null(strstr(msg, "from: "));
    gp_place two[2] = {{.id = 1}, {.id = 5}};
    assert_null(gp_places_snap(g, "g", two, 2, "sources", 1000, &code, msg, sizeof msg));
    assert_int_equal(code, GP_HC_UNKNOWN_NODE);
    assert_non_null(strstr(msg, "sources[1]: node 5"));
    two[1].id = 2;
    gp_snap *ss = gp_places_snap(g, "g", two, 2, "sources", 1000, &code, msg, sizeof msg);
    assert_non_null(ss);
    assert_int_equal(ss[1].node, gp_graph_index(g, 2));
    free(ss);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_and_numbers),
        cmocka_unit_test(test_places),
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_router_lookup),
        cmocka_unit_test(test_place_lists_and_snapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
