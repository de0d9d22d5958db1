#!/usr/bin/python3
"""osrm_contract_test.py - OSRM's contract details on small hand-made OSM maps, against the real
daemon (run by tests/test_osrm_contract.sh): annotations per segment of the line (every OSM node,
durations that add up to the leg), `waypoints=` keeping the via waypoints, unknown options answered
400 InvalidQuery per service, `weight` / `weight_name` as OSRM's profiles name them, router
topologies refused, snapping where every component is small, and alternatives without U-turns.
The maps are written here as OSM XML; every expectation is a literal answer on them.
continue_straight on tests/data/osm/straight.osm is also compared with the real OSRM (car.lua,
from $GPATH_OSRM, default ../shared/peers/osrm; skipped with a message when the tarball is absent).
Prints PASS/FAIL lines and "N passed, N failed, N skipped" last.
"""
import json
import os
import shutil
import sys
import tempfile
import traceback
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402  (Daemon, validate)

TESTS = []
PEER = os.environ.get("GPATH_OSRM", os.path.join(H.ROOT, "..", "shared", "peers", "osrm"))
STRAIGHT = os.path.join(H.ROOT, "tests", "data", "osm", "straight.osm")


class Skip(Exception):
    pass


def test(fn):
    TESTS.append(fn)
    return fn


class Ctx:
    d = None
    tmp = None


def get(d, path):
    url = f"http://127.0.0.1:{d.port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            status, ctype, text = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, text = e.code, e.headers.get("Content-Type", ""), e.read()
    body = json.loads(text)
    H.validate("GET", urllib.parse.urlsplit(url).path, status, body, ctype)
    return status, body


def osrm_error(res, code, *words):
    st, b = res
    assert st == 400 and b["code"] == code, f"expected 400 {code}, got {st} {b}"
    for w in words:
        assert w in b["message"], (w, b["message"])


def osm_xml(nodes, ways):
    """nodes: {id: (lon, lat)}; ways: [(id, [node ids], {tag: value})]."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="hand">']
    for i, (lon, lat) in sorted(nodes.items()):
        out.append(f'  <node id="{i}" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    for wid, refs, tags in ways:
        nds = "".join(f'<nd ref="{r}"/>' for r in refs)
        tg = "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
        out.append(f'  <way id="{wid}">{nds}{tg}</way>')
    out.append("</osm>")
    return "\n".join(out) + "\n"


# contract.osm: way 1 "Alpha" runs 101 - 105 east along 47.0 N in steps of 0.001 degrees (nodes
# 102-104 become shape points of one arc); way 2 "Beta" 201 - 203 the same at 46.9 N, 11 km south
# (a second small component); way 3 "Gamma" 301 - 311 at 47.18 N, 20 km north, with side streets
# (the largest component, still under 1,000 nodes).
def contract_map():
    nodes, ways = {}, []
    for k in range(5):
        nodes[101 + k] = (9.0 + 0.001 * k, 47.0)
    for k in range(3):
        nodes[201 + k] = (9.0 + 0.001 * k, 46.9)
    for k in range(11):
        nodes[301 + k] = (9.0 + 0.001 * k, 47.18)
    ways.append((1, list(range(101, 106)), {"highway": "residential", "name": "Alpha"}))
    ways.append((2, list(range(201, 204)), {"highway": "residential", "name": "Beta"}))
    ways.append((3, list(range(301, 312)), {"highway": "residential", "name": "Gamma"}))
    for k in range(11):  # side streets: Gamma's component has 22 graph nodes, Alpha's 2
        nodes[401 + k] = (9.0 + 0.001 * k, 47.1805)
        ways.append((10 + k, [301 + k, 401 + k], {"highway": "residential"}))
    return osm_xml(nodes, ways)


# corridors.osm: from West (S0 - S) to East (T - T0) along 47.0 N, two corridors between S and T:
# the south one at 46.998 N and the north one at 47.0025 N (5% longer), each of one arc S -> T but
# for junction J at 9.1025 E on the north one, where a dead end leaves 100 m north: the old
# via-node sampling took its tip as the via node (a U-turn at the dead end); OSRM's criteria take
# the north corridor itself.
def corridor_map():
    nodes = {1: (9.100, 47.0), 2: (9.102, 47.0), 3: (9.122, 47.0), 4: (9.124, 47.0),
             10: (9.102, 47.0025), 11: (9.1025, 47.0025), 15: (9.122, 47.0025),
             20: (9.102, 46.998), 25: (9.122, 46.998), 41: (9.1025, 47.0034)}
    ways = [(1, [1, 2], {"highway": "tertiary", "name": "West"}),
            (2, [3, 4], {"highway": "tertiary", "name": "East"}),
            (3, [2, 10, 11, 15, 3], {"highway": "tertiary", "name": "North"}),
            (4, [2, 20, 25, 3], {"highway": "tertiary", "name": "South"}),
            (5, [11, 41], {"highway": "residential", "name": "Spur"})]
    return osm_xml(nodes, ways)


def route(d, graph, pts, q=""):
    c = ";".join(f"{x},{y}" for x, y in pts)
    return get(d, f"/route/v1/{graph}/{c}?{q}")


# ---- 1. annotations per segment ----
@test
def t_annotations_per_segment(ctx):
    # from between 101 and 102 to between 104 and 105: the line's points are the snapped start,
    # 102, 103, 104 and the snapped end: 4 segments, 5 nodes (the one behind the start, the one
    # ahead of the end, as OSRM's), though 102-104 are shape points of one arc
    st, b = route(ctx.d, "c", [(9.0005, 47.0001), (9.0035, 47.0001)],
                  "annotations=true&overview=full&geometries=geojson")
    assert st == 200, b
    leg = b["routes"][0]["legs"][0]
    a = leg["annotation"]
    assert a["nodes"] == [101, 102, 103, 104, 105], a["nodes"]
    assert len(b["routes"][0]["geometry"]["coordinates"]) == 5
    assert a["distance"] == [37.9, 75.9, 75.8, 37.9], a["distance"]
    # (32.7 s: the turn model charges the destination's arc whole less the part not driven, each
    # rounded to deciseconds once)
    assert a["duration"] == [5.5, 10.8, 10.9, 5.5], a["duration"]
    assert a["weight"] == a["duration"] and a["datasources"] == [0, 0, 0, 0]
    assert a["speed"] == [7, 7, 7, 7], a["speed"]  # 25 km/h residential (6.94 m/s; 227.5 m in 32.7 s)
    assert a["metadata"] == {"datasource_names": ["profile"]}
    # the per-segment values add up to the leg exactly (running sums rounded to tenths)
    assert round(sum(a["duration"]), 1) == leg["duration"] == 32.7, leg["duration"]
    assert round(sum(a["distance"]), 1) == leg["distance"] == 227.5, leg["distance"]
    # the other way round: the nodes in the order driven
    _, r = route(ctx.d, "c", [(9.0035, 47.0001), (9.0005, 47.0001)], "annotations=nodes")
    assert r["routes"][0]["legs"][0]["annotation"]["nodes"] == [105, 104, 103, 102, 101]
    # one item: only that array
    _, r = route(ctx.d, "c", [(9.0005, 47.0001), (9.0035, 47.0001)], "annotations=duration")
    assert set(r["routes"][0]["legs"][0]["annotation"]) == {"duration"}


# ---- 2. waypoints= keeps the via waypoints ----
@test
def t_waypoints_keep_via(ctx):
    pts = [(9.0005, 47.0001), (9.002, 47.0001), (9.0035, 47.0001)]
    _, b = route(ctx.d, "c", pts, "waypoints=0;2")
    r = b["routes"][0]
    assert len(r["legs"]) == 1 and len(b["waypoints"]) == 3, b
    assert [w["location"] for w in b["waypoints"]] == [[9.0005, 47.0], [9.002, 47.0],
                                                       [9.0035, 47.0]]
    assert r["distance"] == 227.5
    osrm_error(route(ctx.d, "c", pts, "waypoints=1;2"), "InvalidValue", "waypoints")


# ---- 4. unknown options: 400 InvalidQuery naming them, per service ----
@test
def t_unknown_options(ctx):
    c2 = "9.0005,47.0001;9.0035,47.0001"
    osrm_error(get(ctx.d, f"/route/v1/c/{c2}?overveiw=full"), "InvalidQuery", "'overveiw'",
               "route")
    osrm_error(get(ctx.d, f"/route/v1/c/{c2}?alternative=true&overveiw=full"), "InvalidQuery",
               "'alternative'", "'overveiw'")
    # an option of another service is unknown here too (as osrm-routed's grammar)
    osrm_error(get(ctx.d, f"/table/v1/c/{c2}?geometries=geojson"), "InvalidQuery",
               "'geometries'", "table")
    osrm_error(get(ctx.d, f"/nearest/v1/c/9.0005,47.0001?steps=true"), "InvalidQuery", "'steps'")
    osrm_error(get(ctx.d, f"/trip/v1/c/{c2}?sources=0"), "InvalidQuery", "'sources'", "trip")
    st, b = get(ctx.d, f"/table/v1/c/{c2}?sources=0&annotations=duration&skip_waypoints=true")
    assert st == 200, b
    st, b = get(ctx.d, f"/nearest/v1/c/9.0005,47.0001?number=1&generate_hints=false")
    assert st == 200, b


# ---- 5. weight and weight_name ----
@test
def t_weight(ctx):
    for graph, name in (("c", "routability"), ("cfoot", "duration"), ("cbike", "cyclability")):
        _, b = route(ctx.d, graph, [(9.0005, 47.0001), (9.0035, 47.0001)], "steps=true")
        r = b["routes"][0]
        assert r["weight_name"] == name, (graph, r["weight_name"])
        assert r["weight"] == r["duration"] == r["legs"][0]["weight"], (graph, r)
        assert all(s["weight"] == s["duration"] for s in r["legs"][0]["steps"])
    _, b = route(ctx.d, "c", [(9.0005, 47.0001), (9.0035, 47.0001)])
    assert b["routes"][0]["weight"] == 32.7  # seconds, not deciseconds


# ---- 6. router topologies ----
@test
def t_router_topology(ctx):
    for svc in ("route/v1/net/9.0,47.0;9.1,47.1", "table/v1/net/9.0,47.0;9.1,47.1",
                "nearest/v1/net/9.0,47.0", "trip/v1/net/9.0,47.0;9.1,47.1"):
        osrm_error(get(ctx.d, "/" + svc), "InvalidQuery", "graph 'net' has no travel times",
                   "hops", "graphml")


# ---- 7. snapping where every component is small ----
@test
def t_small_components(ctx):
    # no component reaches 1,000 nodes: the nearest road (not Gamma, the largest, 20 km off)
    _, b = route(ctx.d, "c", [(9.0005, 47.00002), (9.0015, 47.00002)])
    assert b["code"] == "Ok", b
    assert [w["location"] for w in b["waypoints"]] == [[9.0005, 47.0], [9.0015, 47.0]], b
    assert [w["name"] for w in b["waypoints"]] == ["Alpha", "Alpha"]
    assert b["routes"][0]["distance"] == 75.8
    # two small components: each keeps its nearest road, and there is no route between them
    osrm_error(route(ctx.d, "c", [(9.0005, 47.00002), (9.0005, 46.90002)]), "NoRoute")


# ---- 3. bearings among the roads within the radius ----
@test
def t_bearings_choose(ctx):
    # Alpha 2.2 m south runs east-west, and no road within 100 m runs north
    osrm_error(route(ctx.d, "c", [(9.0005, 47.00002), (9.0015, 47.00002)],
                     "bearings=0,20;&radiuses=100;"), "NoSegment", "bearing")
    # eastwards: Alpha (two-way) driven east, the direction that fits
    _, b = route(ctx.d, "c", [(9.0005, 47.00002), (9.0015, 47.00002)], "bearings=90,20;&steps=true")
    assert b["code"] == "Ok" and b["waypoints"][0]["location"] == [9.0005, 47.0]
    assert b["routes"][0]["legs"][0]["steps"][0]["maneuver"]["bearing_after"] == 90


@test
def t_nearest_bearings(ctx):
    # beside S, where West (east-west) meets the north and south corridors (north-south there):
    # bearings filter every answer of nearest, not only the first
    q = "/nearest/v1/alt/9.1021,47.0001?number=4"
    _, b = get(ctx.d, q)
    assert [w["name"] for w in b["waypoints"]][:3] == ["North", "West", "South"], b
    _, b = get(ctx.d, q + "&bearings=0,20")
    assert [w["name"] for w in b["waypoints"]] == ["North", "South", "Spur"], b


# ---- 8. alternatives ----
def uturns(r):
    n = 0
    for leg in r["legs"]:
        nodes = leg["annotation"]["nodes"]
        n += sum(nodes[i] == nodes[i + 2] for i in range(len(nodes) - 2))
    return n


@test
def t_alternatives(ctx):
    _, b = route(ctx.d, "alt", [(9.101, 47.00005), (9.123, 47.00005)],
                 "alternatives=3&annotations=nodes&overview=full&geometries=geojson")
    rs = b["routes"]
    # the south corridor, then the north one; no detour into a spur
    assert len(rs) == 2, [(r["distance"], r["duration"]) for r in rs]
    lats = [{round(p[1], 4) for p in r["geometry"]["coordinates"]} for r in rs]
    assert 46.998 in lats[0] and 47.0025 not in lats[0], lats[0]
    assert 47.0025 in lats[1] and 46.998 not in lats[1], lats[1]
    assert all(uturns(r) == 0 for r in rs)
    assert 41 not in rs[1]["legs"][0]["annotation"]["nodes"], "into the dead end"
    assert rs[0]["duration"] <= rs[1]["duration"] <= 1.25 * rs[0]["duration"]
    assert [r["distance"] for r in rs] == [2113.2, 2224.3], [r["distance"] for r in rs]


@test
def t_continue_straight_osrm(ctx):
    """A;W;A on Main Street of straight.osm, W on the road and at its end node: continue_straight
    true (on round the loop), false (turn around at W) and default (car: true) give each leg the
    same path as OSRM's (distance within 1%) and a duration within 5% (OSRM v6: 9.1 + 88.7 s
    against gpath's 9.0 + 86.2 s when true: OSRM charges the turns at the loop's junction, which
    gpath's loader folds into one neighbour); true and false differ."""
    tar = os.path.join(PEER, "osrm-v6.0.0-debian12-bin.tar.xz")
    if not os.path.exists(tar):
        raise Skip(f"no OSRM tarball ({tar})")
    p, port = H.start_osrm(ctx.tmp, tar, STRAIGHT, "7.001,45")
    try:
        for w in ("7.001,45", "7.002,45"):
            c = f"7.0002,45;{w};7.0002,45"
            seen = {}
            for v in ("true", "false", "default"):
                _, g = get(ctx.d, f"/route/v1/straight/{c}?continue_straight={v}")
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/route/v1/driving/{c}"
                                            f"?continue_straight={v}", timeout=30) as r:
                    o = json.load(r)
                assert g["code"] == "Ok" and o["code"] == "Ok", (g, o)
                gl, ol = g["routes"][0]["legs"], o["routes"][0]["legs"]
                for a, b in zip(gl, ol):
                    assert abs(a["distance"] - b["distance"]) <= 0.01 * b["distance"] + 1, (w, v, a, b)
                    assert abs(a["duration"] - b["duration"]) <= 0.05 * b["duration"] + 0.2, (w, v, a, b)
                seen[v] = g["routes"][0]["duration"]
            assert seen["true"] > 2 * seen["false"] and seen["default"] == seen["true"], (w, seen)
    finally:
        p.kill()
        p.wait()


def main():
    tmp = tempfile.mkdtemp(prefix="gpath-osrm-contract-")
    ctx = Ctx()
    ctx.tmp = tmp
    passed = failed = skipped = 0
    try:
        with open(os.path.join(tmp, "contract.osm"), "w") as f:
            f.write(contract_map())
        with open(os.path.join(tmp, "corridors.osm"), "w") as f:
            f.write(corridor_map())
        with open(os.path.join(tmp, "net.graphml"), "w") as f:
            f.write('<?xml version="1.0" encoding="utf-8"?>\n'
                    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                    '  <graph edgedefault="undirected">\n'
                    '    <node id="1"/><node id="2"/><edge source="1" target="2"/>\n'
                    '  </graph>\n</graphml>\n')
        c = os.path.join(tmp, "contract.osm")
        graphs = ["--graph", "c=osm:" + c + "?profile=car",
                  "--graph", "cfoot=osm:" + c + "?profile=foot",
                  "--graph", "cbike=osm:" + c + "?profile=bicycle",
                  "--graph", "alt=osm:" + os.path.join(tmp, "corridors.osm") + "?profile=car",
                  "--graph", "net=graphml:" + os.path.join(tmp, "net.graphml"),
                  "--graph", "straight=osm:" + STRAIGHT]
        ctx.d = H.Daemon(tmp, "main", graphs + ["--cache-path", ""])
        ctx.d.wait_ready()
        for t in TESTS:
            name = t.__name__[2:]
            try:
                t(ctx)
                passed += 1
                print(f"PASS {name}")
            except Skip as e:
                skipped += 1
                print(f"SKIP {name}: {e}")
            except Exception:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAIL {name}:\n{traceback.format_exc()}")
    except Exception:  # noqa: BLE001
        failed += 1
        print(f"FAIL setup:\n{traceback.format_exc()}")
    finally:
        if ctx.d:
            log = ctx.d.tail(6000)
            rc = ctx.d.stop()
            if failed:
                print("--- main.log (tail)\n" + log)
            if rc != 0:
                failed += 1
                print(f"FAIL daemon exit code {rc}:\n{log}")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
