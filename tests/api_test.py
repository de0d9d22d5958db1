#!/usr/bin/python3
"""api_test.py - the /v1 API's semantics against the real `gpath serve` over loopback
(tests/test_api.sh): places given as node ids or lon,lat coordinates snapped to road segments
(route, table, sssp, nearest; partial segment costs both ways, one-way roads, NoSegment with the
distance and the swapped-coordinates hint, radius=), waypoints, weight units, durations and
lengths; the parameter layer refusing what it does not know (unknown names with hints, repeats,
junk around values, bytes after a JSON body, out-of-range JSON numbers, bad job ids); NoRoute as
400; operators' names (GET routers / links, names in tables and what-if, names accepted for
routers, errors naming the field sent) and the CLI's router names. Every answer is validated
against openapi.yaml (tests/http_test.py's validator). Each check would fail on the code before
this API layer.

Prints "N passed, N failed, N skipped" last.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402  (Daemon, validate, write_dimacs, haversine)
from netops_http import SQUARE  # noqa: E402
OPERATOR_TOKEN = "op-token"  # PATCH links needs operator_token (server/http/daemon.c, wt-http)
ADMIN_TOKEN = "admin-token"  # PUT /admin/graphs

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


OPERATOR_TOKEN = "op-token"  # PATCH links changes what gpath answers: it needs operator_token


def err(res, status, code, words=()):
    H.expect_error(res, status, code, words)


def near(a, b, tol):
    return abs(a - b) <= tol


# ---- the road graph: 1 (8.50, 47.30) <-> 2 (8.52, 47.30), 1->2 costs 1000 and 2->1 2000; a
# one-way 2 -> 3 (8.54, 47.30) costing 300; node 4 far away without roads.
ROAD_COORDS = {1: (8.50, 47.30), 2: (8.52, 47.30), 3: (8.54, 47.30), 4: (9.50, 48.30)}
ROAD_ARCS = [(1, 2, 1000), (2, 1, 2000), (2, 3, 300)]
A = "8.505,47.3005"   # beside 1-2 at a quarter, 55.6 m north
B = "8.515,47.2995"   # beside 1-2 at three quarters, south
C = "8.53,47.30005"   # beside the one-way 2 -> 3 at half


@test
def t_route_by_coordinate(d):
    st, _, b = d.call("GET", f"/v1/graphs/road/route?from={A}&to={B}")
    assert st == 200, b
    # along 1 -> 2 from a quarter to three quarters: half of 1000; no node passed
    assert near(b["weight"], 500, 1) and b["distance"] == b["length_m"], b  # distance: metres
    assert b["path"] == [] and b["weight_unit"] == "cost", b
    wa, wb = b["waypoints"]
    assert near(wa["location"][0], 8.505, 1e-6) and near(wa["location"][1], 47.30, 1e-6), wa
    # (the great circle from 1 to 2 runs a few cm north of latitude 47.30)
    assert near(wa["distance_m"], H.haversine(8.505, 47.3005, 8.505, 47.30), 0.1), wa
    assert wa["node"] == 1 and wb["node"] == 2, b
    # 6 decimals / 2 decimals
    assert round(wa["location"][0], 6) == wa["location"][0] and round(wa["distance_m"], 2) == wa["distance_m"]
    road = H.haversine(8.50, 47.30, 8.52, 47.30)
    assert near(b["length_m"], road / 2, 0.5), (b["length_m"], road)
    g = b["geometry"]["coordinates"]
    assert g[0] == wa["location"] and g[-1] == wb["location"] and len(g) == 2, g
    # backwards: the road's other direction costs 2000 over its length
    st, _, b = d.call("GET", f"/v1/graphs/road/route?from={B}&to={A}")
    assert st == 200 and near(b["weight"], 1000, 1), b
    # across node 2 onto the one-way road: 3/4 of 1000 + 1/2 of 300
    st, _, b = d.call("GET", f"/v1/graphs/road/route?from={A}&to={C}")
    assert st == 200 and near(b["weight"], 900, 1) and b["path"] == [2], b
    assert b["geometry"]["coordinates"][1] == [8.52, 47.3], b
    # against the one-way road there is no way back: 400 NoRoute (was 404) naming both places
    err(d.call("GET", f"/v1/graphs/road/route?from={C}&to={A}"), 400, "NoRoute", ["8.530000"])
    # node ids keep working, with the same fields added
    st, _, b = d.call("GET", "/v1/graphs/road/route?from=1&to=3")
    assert st == 200 and b["weight"] == 1300 and b["path"] == [1, 2, 3], b
    assert b["waypoints"][0] == {"location": [8.5, 47.3], "node": 1, "distance_m": 0}, b
    # a node id to a coordinate
    st, _, b = d.call("GET", f"/v1/graphs/road/route?from=1&to={A}")
    assert st == 200 and near(b["weight"], 250, 1) and b["path"] == [1], b


@test
def t_no_segment(d):
    # 5.5 km from the road: NoSegment names the distance; a radius of 10 km reaches it
    err(d.call("GET", "/v1/graphs/road/route?from=8.505,47.35&to=1"), 400, "NoSegment",
        ["from", "1000", "5559."])
    st, _, b = d.call("GET", "/v1/graphs/road/route?from=8.505,47.35&to=1&radius=10000")
    assert st == 200 and b["waypoints"][0]["distance_m"] > 5000, b
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=8.505,47.3005&radius=20"), 400,
        "NoSegment", ["to", "55.5"])
    # latitude first: the hint names the swap
    err(d.call("GET", "/v1/graphs/road/route?from=47.3005,8.505&to=1"), 400, "NoSegment",
        ["swapped", "longitude,latitude"])
    err(d.call("GET", "/v1/graphs/road/route?from=200,1&to=1"), 400, "InvalidQuery",
        ["from", "longitude"])
    err(d.call("GET", "/v1/graphs/nc/route?from=8.5,47.3&to=1"), 400, "NoCoordinates",
        ["from"])


@test
def t_table_and_sssp_by_coordinate(d):
    places = [[8.505, 47.3005], B, 1, C]
    st, _, t = d.call("POST", "/v1/graphs/road/table", {"sources": places})
    assert st == 200 and t["weight_unit"] == "cost", t
    assert t["sources"] == [1, 2, 1, 2] and len(t["waypoints"]["sources"]) == 4, t
    text = [A, B, "1", C]
    for i, s in enumerate(text):
        for j, u in enumerate(text):
            st, _, r = d.call("GET", f"/v1/graphs/road/route?from={s}&to={u}")
            want = r["weight"] if st == 200 else None
            assert t["weights"][i][j] == want, (i, j, t["weights"][i][j], want)
    # the query string carries the radius for a body-borne table too
    err(d.call("POST", "/v1/graphs/road/table?radius=10", {"sources": [A]}), 400, "NoSegment",
        ["sources[0]"])
    # sssp from a coordinate: 1 at a quarter of 2000 back, 2 at 3/4 of 1000, 3 beyond it
    st, _, s = d.call("GET", f"/v1/graphs/road/sssp?source={A}")
    assert st == 200, s
    got = dict(zip(s["nodes"], s["weights"]))
    assert near(got[1], 500, 1) and near(got[2], 750, 1) and near(got[3], 1050, 1), got
    assert 4 not in got and s["waypoints"][0]["node"] == 1, s
    # nearest: the nodes and the point on the road where a route would start
    st, _, n = d.call("GET", "/v1/graphs/road/nearest?lon=8.505&lat=47.3005")
    assert st == 200 and n["nodes"][0]["id"] == 1, n
    assert near(n["waypoint"]["location"][0], 8.505, 1e-6) and n["waypoint"]["node"] == 1, n
    st, _, n = d.call("GET", "/v1/graphs/road/nearest?lon=8.505&lat=47.35")
    assert st == 200 and n["waypoint"] is None, n


@test
def t_units(d):
    st, _, g = d.call("GET", "/v1/graphs/g")
    assert st == 200 and g["weight_unit"] == "deciseconds" and g["unit_s"] == 0.1, g
    st, _, g = d.call("GET", "/v1/graphs/sq")
    assert st == 200 and g["weight_unit"] == "hops" and "unit_s" not in g, g
    st, _, g = d.call("GET", "/v1/graphs/road")
    assert st == 200 and g["weight_unit"] == "cost", g
    # on the generated graph: seconds from deciseconds; the geometry runs point to point
    st, _, r = d.call("GET", "/v1/graphs/g/route?from=8.4705,47.2801&to=8.4752,47.2805")
    assert st == 200, r
    assert r["weight_unit"] == "deciseconds" and near(r["duration_s"], r["weight"] / 10, 0.01), r
    assert r["length_m"] > 0 and r["geometry"]["coordinates"][0] == r["waypoints"][0]["location"]
    assert r["geometry"]["coordinates"][-1] == r["waypoints"][1]["location"], r
    # no lengths on a graph without coordinates
    st, _, r = d.call("GET", "/v1/graphs/nc/route?from=1&to=3")
    assert st == 200 and "length_m" not in r and "duration_s" not in r, r


@test
def t_unknown_names(d):
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=2&alternatives=true"), 400, "InvalidQuery",
        ["alternatives", "/route/v1/{graph}/", "alternatives=true"])
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=2&steps=true"), 400, "InvalidQuery",
        ["steps", "path", "/route/v1/{graph}/", "steps=true"])
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=2&profile=car"), 400, "InvalidQuery",
        ["profile"])
    err(d.call("GET", "/v1/graphs/road/route?from=1&lat=47.3&lon=8.5"), 400, "InvalidQuery",
        ["lat", "lon,lat"])
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=2&algp=astar"), 400, "InvalidQuery",
        ["algp", "algo"])
    err(d.call("POST", "/v1/graphs/road/table", {"sources": [1], "destinations": [2]}), 400,
        "InvalidQuery", ["destinations", "targets"])
    err(d.call("GET", "/v1/graphs/road?verbose=1"), 400, "InvalidQuery", ["verbose"])
    err(d.call("GET", "/v1/graphs/road/sssp?source=1&foo=2"), 400, "InvalidQuery", ["foo"])
    err(d.call("POST", "/v1/graphs/sq/what-if", {"fail_link": [[1, 3]]}), 400, "InvalidQuery",
        ["fail_link", "fail_links"])
    err(d.call("GET", "/v1/graphs/sq/routers?x=1"), 400, "InvalidQuery", ["x"])


@test
def t_hostile_input(d):
    # repeated parameters no longer silently take the first
    err(d.call("GET", "/v1/graphs/road/route?from=1&to=2&from=3"), 400, "InvalidQuery",
        ["from", "more than once"])
    # a name given both in the query string and in the body
    err(d.call("POST", "/v1/graphs/road/apsp?next_hops=true", {"next_hops": True}), 400,
        "InvalidQuery", ["next_hops"])
    err(d.call("POST", "/v1/graphs/road/table", raw=b'{"sources": [1], "sources": [2]}',
               headers={"Content-Type": "application/json"}), 400, "InvalidQuery",
        ["sources", "twice"])
    # blanks and junk around values
    err(d.call("GET", "/v1/graphs/road/route?from=%201&to=2"), 400, "InvalidQuery", ["from"])
    err(d.call("GET", "/v1/graphs/road/route?from=1x&to=2"), 400, "InvalidQuery", ["from"])
    err(d.call("GET", "/v1/graphs/road/sssp?source=1&max_distance=5%20"), 400, "InvalidQuery",
        ["max_distance"])
    err(d.call("GET", "/v1/graphs/road/route?from=&to=2"), 400, "InvalidQuery", ["from"])
    # bytes after the JSON body
    err(d.call("POST", "/v1/graphs/road/table", raw=b'{"sources": [1]} {"x": 1}',
               headers={"Content-Type": "application/json"}), 400, "InvalidJson", ["after"])
    err(d.call("POST", "/v1/graphs/road/table", raw=b'{"sources": [1]}]',
               headers={"Content-Type": "application/json"}), 400, "InvalidJson", ["after"])
    st, _, b = d.call("POST", "/v1/graphs/road/table", raw=b'{"sources": [1]}\n  ',
                      headers={"Content-Type": "application/json"})
    assert st == 200, b
    # JSON numbers far outside int64 where integers are expected: range-checked, named
    err(d.call("POST", "/v1/graphs/sq/what-if", {"fail_routers": [1e300]}), 400, "InvalidQuery",
        ["fail_routers[0]", "integer in"])
    err(d.call("PATCH", "/v1/graphs/sq/links", {"links": [{"link": [-1e300, 1], "cost": 1}]},
               token=OPERATOR_TOKEN),
        400, "InvalidQuery", ["links[0].link[0]", "integer in"])
    err(d.call("POST", "/v1/graphs/sq/what-if", {"set_costs": [{"link": [1, 2], "cost": 1e300}]}),
        400, "InvalidQuery", ["set_costs[0].cost"])
    err(d.call("POST", "/v1/graphs/road/table", {"sources": [9.3e18]}), 400, "InvalidQuery",
        ["sources[0]"])
    # a body where none is read
    err(d.call("POST", "/v1/graphs/sq/jobs", {"routers": [1]}), 400, "InvalidJson", ["no request body"])
    # job ids: -1 and 0 are malformed (400), not unknown jobs (404)
    err(d.call("GET", "/v1/jobs/-1"), 400, "InvalidQuery", ["-1"])
    err(d.call("GET", "/v1/jobs/0"), 400, "InvalidQuery")
    err(d.call("GET", "/v1/jobs/+1"), 400, "InvalidQuery")
    err(d.call("GET", "/v1/jobs/424242"), 404, "NotFound")
    st, _, b = d.call("GET", "/health")
    assert st == 200, b


# Every /v1 body field: a value of the wrong JSON type is InvalidJson and a well-typed value that is
# refused is InvalidQuery, both naming the field (docs/api.md "Errors": which code a kind of fault
# gets is stable). (method, path, body, code, words); PATCH needs the operator token, PUT the admin.
BODY_FIELD_CASES = [
    ("POST", "/v1/graphs/road/table", {"sources": "1"}, "InvalidJson", ["sources"]),
    ("POST", "/v1/graphs/road/table", {"sources": [1], "targets": {"a": 1}}, "InvalidJson",
     ["targets"]),
    ("POST", "/v1/graphs/road/table", {"sources": [True]}, "InvalidJson", ["sources[0]"]),
    ("POST", "/v1/graphs/road/table", {"sources": [1], "radius": "5"}, "InvalidJson", ["radius"]),
    ("POST", "/v1/graphs/road/table", {"sources": [1], "radius": -5}, "InvalidQuery", ["radius"]),
    ("POST", "/v1/graphs/road/table", {"sources": [0]}, "UnknownNode", ["sources[0]"]),
    ("POST", "/v1/graphs/road/table", {"sources": [[8.5, 47.3, 1]]}, "InvalidJson",
     ["sources[0]"]),
    ("POST", "/v1/graphs/road/table", {"sources": [[[8.5, 47.3]]]}, "InvalidQuery",
     ["sources[0]"]),
    ("POST", "/v1/graphs/road/apsp", {"next_hops": "yes"}, "InvalidJson", ["next_hops"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": {"link": [1, 2]}}, "InvalidJson", ["links"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": [[1, 2]]}, "InvalidJson", ["links[0]"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": [{"link": "1-2", "cost": 1}]}, "InvalidJson",
     ["links[0].link"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 2], "cost": "1"}]}, "InvalidJson",
     ["links[0].cost"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 2], "cost": -1}]}, "InvalidQuery",
     ["links[0].cost"]),
    ("POST", "/v1/graphs/sq/what-if", {"fail_links": [1, 2]}, "InvalidJson", ["fail_links[0]"]),
    ("POST", "/v1/graphs/sq/what-if", {"fail_routers": "1"}, "InvalidJson", ["fail_routers"]),
    ("POST", "/v1/graphs/sq/what-if", {"fail_routers": [9999]}, "UnknownNode",
     ["fail_routers[0]"]),
    ("POST", "/v1/graphs/sq/what-if", {"set_costs": [{"link": [1, 2], "cost": True}]},
     "InvalidJson", ["set_costs[0].cost"]),
    ("POST", "/v1/graphs/sq/what-if", {"set_costs": [{"link": [1, 2], "cost": -3}]},
     "InvalidQuery", ["set_costs[0].cost"]),
    ("PUT", "/admin/graphs/b9", {"spec": 5}, "InvalidJson", ["spec"]),
    ("PUT", "/admin/graphs/b9", {"path": ["x"]}, "InvalidJson", ["path"]),
    ("PUT", "/admin/graphs/b9", {"path": "x.gr", "format": 1}, "InvalidJson", ["format"]),
    ("PUT", "/admin/graphs/b9", {"path": "x.gr", "scale": "2"}, "InvalidJson", ["scale"]),
    ("PUT", "/admin/graphs/b9", {"path": "x.gr", "undirected": "true"}, "InvalidJson",
     ["undirected"]),
    ("PUT", "/admin/graphs/b9", {"path": "x.gr", "scale": -2}, "InvalidQuery", ["scale"]),
    ("PUT", "/admin/graphs/b9", {"path": "x.gr", "bogus": 1}, "InvalidQuery", ["bogus"]),
    ("PUT", "/admin/graphs/b9", {"path": ""}, "InvalidQuery", ["path"]),
    ("PUT", "/admin/graphs/b9", {"format": "dimacs"}, "InvalidJson", ["spec"]),
    ("POST", "/v1/graphs/road/table", {"targets": [1]}, "InvalidJson", ["sources"]),
    ("PATCH", "/v1/graphs/sq/links", {}, "InvalidJson", ["links"]),
    ("PATCH", "/v1/graphs/sq/links", {"links": [{"cost": 1}]}, "InvalidJson", ["link"]),
    ("POST", "/v1/graphs/road/table", {"sources": [["8.5", 47.3]]}, "InvalidJson",
     ["sources[0]"]),
]


@test
def t_body_field_codes(d):
    bad = []
    for method, path, body, code, words in BODY_FIELD_CASES:
        token = OPERATOR_TOKEN if method == "PATCH" else ADMIN_TOKEN if method == "PUT" else None
        st, _, b = d.call(method, path, body, token=token)
        got = b.get("code") if isinstance(b, dict) else b
        msg = b.get("message", "") if isinstance(b, dict) else ""
        if st != 400 or got != code or not all(w in msg for w in words):
            bad.append(f"{method} {path} {json.dumps(body)}: {st} {got} {msg!r}, "
                       f"expected 400 {code} naming {words}")
    assert not bad, "\n".join(bad)


def route_of(table, dest):
    return next(r for r in table["routes"] if r["destination"] == dest)


@test
def t_operator_names(d):
    st, _, rs = d.call("GET", "/v1/graphs/sq/routers")
    assert st == 200 and rs["count"] == 5, rs
    by = {r["id"]: r for r in rs["routers"]}
    assert by[1]["name"] == "r1" and by[1]["links"] == 3 and by[1]["state"] == "up", by[1]
    assert by[5]["state"] == "isolated" and by[5]["links"] == 0, by[5]
    st, _, ls = d.call("GET", "/v1/graphs/sq/links")
    assert st == 200 and ls["count"] == 5 and ls["weight_unit"] == "hops", ls
    diag = next(x for x in ls["links"] if x["link"] == [1, 3])
    assert diag == {"link": [1, 3], "names": ["r1", "r3"], "cost": 1, "reverse_cost": 1,
                    "state": "up"}, diag
    # routers by name wherever ids are accepted
    st, _, t2 = d.call("GET", "/v1/graphs/sq/routing-table?router=r2")
    assert st == 200 and t2["router"] == 2 and t2["weight_unit"] == "hops", t2
    r = route_of(t2, 4)
    assert r["destination_name"] == "r4" and r["next_hops"] == [1, 3], r
    assert r["next_hop_names"] == ["r1", "r3"], r
    err(d.call("GET", "/v1/graphs/sq/routing-table?router=r9"), 400, "UnknownNode", ["r9"])
    st, _, w = d.call("POST", "/v1/graphs/sq/what-if", {"fail_links": [["r1", "r3"]]})
    st2, _, w2 = d.call("POST", "/v1/graphs/sq/what-if", {"fail_links": [[1, 3]]})
    assert st == 200 and st2 == 200 and w["changes"] == w2["changes"] and w["count"] == 2, w
    c = next(x for x in w["changes"] if x["router"] == 1 and x["destination"] == 3)
    assert c["router_name"] == "r1" and c["destination_name"] == "r3", c
    assert c["after"]["next_hop_names"] == ["r2", "r4"], c
    st, _, w = d.call("POST", "/v1/graphs/sq/what-if",
                      {"fail_routers": ["r2"], "set_costs": [{"link": ["r3", 4], "cost": 5}]})
    assert st == 200 and w["count"] > 0, w
    # errors name the field sent: set_costs[0], not the merged change list's links[1]
    e = d.call("POST", "/v1/graphs/sq/what-if",
               {"fail_links": [[1, 3]], "set_costs": [{"link": ["r2", "r4"], "cost": 1}]})
    err(e, 404, "NotFound", ["set_costs[0].link", "r2", "r4"])
    assert "links[1]" not in e[2]["message"], e
    err(d.call("POST", "/v1/graphs/sq/what-if",
               {"set_costs": [{"link": [1, 2], "cost": 1, "weight": 2}]}), 400, "InvalidQuery",
        ["set_costs[0].weight"])
    # a link taken down by PATCH stays listed, as down
    st, _, p = d.call("PATCH", "/v1/graphs/sq/links", {"links": [{"link": ["r4", "r3"], "down": True}]},
                      token=OPERATOR_TOKEN)
    assert st == 200, p
    st, _, ls = d.call("GET", "/v1/graphs/sq/links")
    down = [x for x in ls["links"] if x["state"] == "down"]
    assert down == [{"link": [4, 3], "names": ["r4", "r3"], "cost": 1, "reverse_cost": 1,
                     "state": "down"}], ls
    st, _, g = d.call("GET", "/v1/graphs/sq")
    assert g["weight_unit"] == "hops", g  # the changed version keeps the cost rule
    # these listings are for router topologies
    err(d.call("GET", "/v1/graphs/g/links"), 413, "TooBig", ["max_apsp_nodes"])


@test
def t_cli_router_names(d):
    gml = os.path.join(d.tmp, "sq.graphml")
    by_id = subprocess.run([H.BIN, "what-if", "--graph", gml, "--fail-link", "1,3", "--backend",
                            "cpu"], capture_output=True, text=True)
    by_name = subprocess.run([H.BIN, "what-if", "--graph", gml, "--fail-link", "r1,r3",
                              "--backend", "cpu"], capture_output=True, text=True)
    assert by_id.returncode == 0 and by_name.returncode == 0, (by_id.stderr, by_name.stderr)
    assert json.loads(by_id.stdout)["changes"] == json.loads(by_name.stdout)["changes"]
    assert len(json.loads(by_name.stdout)["changes"]) == 2, by_name.stdout
    out = subprocess.run([H.BIN, "routing-tables", "--graph", gml, "--router", "r2", "--backend",
                          "cpu"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["router"] == 2, out.stderr
    out = subprocess.run([H.BIN, "what-if", "--graph", gml, "--fail-router", "nope", "--backend",
                          "cpu"], capture_output=True, text=True)
    assert out.returncode == 2 and "nope" in out.stderr, (out.returncode, out.stderr)
    out = subprocess.run([H.BIN, "what-if", "--graph", gml, "--set-cost", "r3,4,5",
                          "--fail-router", "r2", "--backend", "cpu"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["changes"], out.stderr


@test
def t_osm_monaco(d):
    """Real roads where this build imports OSM and the data is present (else skipped): table
    equals pairwise routes between random coordinates, geometry from waypoint to waypoint along
    the roads' shape points, road names in waypoints, seconds from deciseconds."""
    data = os.environ.get("GPATH_DATA") or os.path.join(os.path.dirname(H.ROOT), "shared", "data")
    pbf = os.path.join(data, "osm", "monaco.osm.pbf")
    if not os.path.exists(pbf):
        raise H.Skip(f"no {pbf}")
    m = H.Daemon(d.tmp, "osm", ["--backend", "cpu", "--cache-path", "", "--graph", "mc=osm:" + pbf])
    try:
        try:
            m.wait_ready()
        except RuntimeError as e:
            raise H.Skip(f"this build does not import OSM: {e}")
        import random
        rnd = random.Random(7)
        pts = [[round(7.410 + rnd.random() * 0.025, 6), round(43.727 + rnd.random() * 0.015, 6)]
               for _ in range(6)]
        st, _, t = m.call("POST", "/v1/graphs/mc/table", {"sources": pts})
        assert st == 200 and t["weight_unit"] == "deciseconds", t
        named = 0
        for i, a in enumerate(pts):
            for j, b in enumerate(pts):
                st, _, r = m.call("GET", f"/v1/graphs/mc/route?from={a[0]},{a[1]}&to={b[0]},{b[1]}")
                want = r["weight"] if st == 200 else None
                assert t["weights"][i][j] == want, (i, j, t["weights"][i][j], r)
                if st != 200:
                    continue
                g = r["geometry"]["coordinates"]
                assert g[0] == r["waypoints"][0]["location"] and g[-1] == r["waypoints"][1]["location"]
                assert near(r["duration_s"], r["weight"] / 10, 0.01), r
                assert i == j or r["length_m"] > 0, r
                named += "name" in r["waypoints"][0]
        assert named > 0, "no waypoint carries a road name"
    finally:
        m.stop()


def main():
    if not os.access(H.BIN, os.X_OK):
        print(f"SKIP: no gpath binary at {H.BIN} (set GPATH_BIN)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    tmp = tempfile.mkdtemp(prefix="gpath-api-")
    H.write_dimacs(os.path.join(tmp, "road.gr"), 4, ROAD_ARCS, ROAD_COORDS)
    H.write_dimacs(os.path.join(tmp, "nc.gr"), 4, ROAD_ARCS)
    with open(os.path.join(tmp, "sq.graphml"), "w") as f:
        f.write(SQUARE)
    passed = failed = skipped = 0
    d = None
    try:
        d = H.Daemon(tmp, "api", ["--operator-token", OPERATOR_TOKEN, "--admin-token", ADMIN_TOKEN,
                                  "--backend", "cpu", "--cache-path", "", "--max-apsp-nodes", "100",
                                  "--graph", "road=dimacs:" + os.path.join(tmp, "road.gr"),
                                  "--graph", "nc=dimacs:" + os.path.join(tmp, "nc.gr"),
                                  "--graph", "sq=graphml:" + os.path.join(tmp, "sq.graphml"),
                                  "--graph", "g=gen:2000"],
                     {"GPATH_OPERATOR_TOKEN": OPERATOR_TOKEN})
        d.wait_ready()
        d.tmp = tmp
        for t in TESTS:
            name = t.__name__[2:]
            t1 = time.time()
            try:
                t(d)
                passed += 1
                print(f"PASS {name} ({time.time() - t1:.2f}s)")
            except H.Skip as e:
                skipped += 1
                print(f"SKIP {name}: {e}")
            except Exception:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAIL {name}:\n{traceback.format_exc()}")
    except Exception:  # noqa: BLE001
        failed += 1
        print(f"FAIL setup:\n{traceback.format_exc()}")
    finally:
        if d:
            tail = d.tail()
            rc = d.stop()
            if rc != 0:
                failed += 1
                print(f"FAIL daemon exit code {rc}:\n{tail}")
            elif failed:
                print(f"--- daemon log (tail)\n{tail}")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
