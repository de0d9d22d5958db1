#!/usr/bin/python3
"""osrm_test.py - the OSRM v1 API, isochrones, the overview and the map page's routes against the
real daemon (run by tests/test_osrm.sh). Requests are built as OSRM's documentation writes them
and sent with plain urllib, as any OSRM client would; every answer is validated against
openapi.yaml (tests/http_test.py's validator). Golden checks: OSRM's field names and types,
polylines that round-trip against the GeoJSON geometry, steps that add up to their leg and legs to
the route, route and table answers equal to gpath's own /v1 answers on the same graph, OSRM's error
codes (bad coordinates, no segment, unroutable points, over-limit tables, bad options).
Prints PASS/FAIL lines and "N passed, N failed, N skipped" last.
"""
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402  (Daemon, validate, write_dimacs)

DATA = os.environ.get("GPATH_DATA", os.path.join(H.ROOT, "..", "shared", "data"))
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Skip(Exception):
    pass


class Ctx:
    d = d2 = None
    monaco = False


def get(d, path, check=True, method="GET", body=None):
    """A plain OSRM client: urllib, no gpath helper. Returns (status, parsed JSON or text)."""
    url = f"http://127.0.0.1:{d.port}{path}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, ctype, text = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, text = e.code, e.headers.get("Content-Type", ""), e.read()
    body = json.loads(text) if "json" in ctype else text.decode(errors="replace")
    if check:
        H.validate(method, urllib.parse.urlsplit(url).path, status, body, ctype)
    return status, body


def osrm_error(res, code):
    st, b = res
    assert st == 400, f"expected 400 {code}, got {st} {b}"
    assert b["code"] == code and b["message"], f"expected {code}, got {b}"


def decode_polyline(s, precision):
    """Google's polyline algorithm, written from its description (independent of gpath's C)."""
    out, i, lat, lon, f = [], 0, 0, 0, 10 ** precision
    while i < len(s):
        vals = []
        for _ in range(2):
            shift = res = 0
            while True:
                b = ord(s[i]) - 63
                i += 1
                res |= (b & 0x1F) << shift
                shift += 5
                if b < 0x20:
                    break
            vals.append(~(res >> 1) if res & 1 else res >> 1)
        lat += vals[0]
        lon += vals[1]
        out.append((lon / f, lat / f))
    return out


def encode_polyline(pts, precision):
    f, out, plat, plon = 10 ** precision, [], 0, 0
    for lon, lat in pts:
        a, o = round(lat * f), round(lon * f)
        for v in (a - plat, o - plon):
            v = ~(v << 1) if v < 0 else v << 1
            while v >= 0x20:
                out.append(chr((0x20 | (v & 0x1F)) + 63))
                v >>= 5
            out.append(chr(v + 63))
        plat, plon = a, o
    return "".join(out)


def coords(pts):
    return ";".join(f"{lon:.6f},{lat:.6f}" for lon, lat in pts)


PTS = [(8.49, 47.29), (8.53, 47.31), (8.51, 47.33), (8.47, 47.32), (8.52, 47.28)]


# ---- route ----
@test
def t_route_shape(ctx):
    st, b = get(ctx.d, f"/route/v1/g/{coords(PTS[:3])}?steps=true&annotations=true&overview=full")
    assert st == 200 and b["code"] == "Ok", b
    r = b["routes"][0]
    # weights of travel times are seconds, named as OSRM's default profile names them
    assert isinstance(r["geometry"], str) and r["weight_name"] == "duration"
    assert r["weight"] == r["duration"]
    assert len(r["legs"]) == 2 and len(b["waypoints"]) == 3
    for w in b["waypoints"]:
        assert isinstance(w["hint"], str) and w["hint"] and isinstance(w["name"], str)
        assert len(w["location"]) == 2 and w["distance"] >= 0
    for leg in r["legs"]:
        st_ = leg["steps"]
        assert st_[0]["maneuver"]["type"] == "depart" and st_[-1]["maneuver"]["type"] == "arrive"
        assert st_[-1]["distance"] == 0 and st_[-1]["duration"] == 0
        for s in st_[1:-1]:
            assert s["maneuver"]["type"] in ("turn", "new name", "continue", "end of road",
                                             "fork"), s["maneuver"]
            assert s["maneuver"]["modifier"], s["maneuver"]
        for s in st_:
            m = s["maneuver"]
            assert isinstance(m["bearing_after"], int) and 0 <= m["bearing_after"] < 360
            assert isinstance(m["bearing_before"], int)
            assert s["mode"] == "driving" and isinstance(s["name"], str)
            it = s["intersections"][0]
            assert len(it["bearings"]) == len(it["entry"]) and it["location"] == m["location"]
            # a step's geometry starts at its maneuver
            g = decode_polyline(s["geometry"], 5)
            assert abs(g[0][0] - m["location"][0]) < 2e-5 and abs(g[0][1] - m["location"][1]) < 2e-5
        # steps add up to the leg (each rounded to 0.1)
        tol = 0.06 * len(st_) + 0.06
        assert abs(sum(s["distance"] for s in st_) - leg["distance"]) <= tol, leg["distance"]
        assert abs(sum(s["duration"] for s in st_) - leg["duration"]) <= tol, leg["duration"]
        a = leg["annotation"]
        assert len(a["duration"]) == len(a["distance"]) == len(a["speed"]) == len(a["nodes"]) - 1
        assert abs(sum(a["duration"]) - leg["duration"]) <= 0.06 * len(a["duration"]) + 0.06
        assert abs(sum(a["distance"]) - leg["distance"]) <= 0.06 * len(a["distance"]) + 0.06
    assert abs(sum(l["duration"] for l in r["legs"]) - r["duration"]) <= 0.11
    assert abs(sum(l["distance"] for l in r["legs"]) - r["distance"]) <= 0.11
    # the route's geometry joins its steps' geometries
    full = decode_polyline(r["geometry"], 5)
    steps_pts = [p for leg in r["legs"] for s in leg["steps"] for p in decode_polyline(s["geometry"], 5)]
    assert full[0] == steps_pts[0] and full[-1] == steps_pts[-1]
    assert set(full) == set(steps_pts), "steps cover exactly the route's geometry"


@test
def t_route_geometries(ctx):
    base = f"/route/v1/g/{coords(PTS[:2])}?overview=full"
    _, p5 = get(ctx.d, base)
    _, p6 = get(ctx.d, base + "&geometries=polyline6")
    _, gj = get(ctx.d, base + "&geometries=geojson")
    line = gj["routes"][0]["geometry"]
    assert line["type"] == "LineString"
    c = line["coordinates"]
    a = decode_polyline(p5["routes"][0]["geometry"], 5)
    b = decode_polyline(p6["routes"][0]["geometry"], 6)
    assert len(a) == len(b) == len(c) >= 2
    for (x5, y5), (x6, y6), (x, y) in zip(a, b, c):
        assert abs(x5 - x) <= 5.1e-6 and abs(y5 - y) <= 5.1e-6
        assert abs(x6 - x) <= 5.1e-7 and abs(y6 - y) <= 5.1e-7
    # our independent encoder gives gpath's string back (round trip through both)
    assert encode_polyline(b, 6) == p6["routes"][0]["geometry"]
    # simplified overview: fewer or equal points, same ends; false: no geometry
    _, simp = get(ctx.d, base.replace("full", "simplified") + "&geometries=geojson")
    s = simp["routes"][0]["geometry"]["coordinates"]
    assert len(s) <= len(c) and s[0] == c[0] and s[-1] == c[-1]
    _, none = get(ctx.d, base.replace("full", "false"))
    assert "geometry" not in none["routes"][0]
    # polyline(...) coordinates give the same route as lon,lat;lon,lat
    enc = urllib.parse.quote(encode_polyline([(round(x, 5), round(y, 5)) for x, y in PTS[:2]], 5), safe="")
    _, viap = get(ctx.d, f"/route/v1/g/polyline({enc})?overview=full")
    assert viap["routes"][0]["duration"] == p5["routes"][0]["duration"]
    _, j = get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}.json?overview=full")
    assert j["routes"][0]["geometry"] == p5["routes"][0]["geometry"]


@test
def t_route_equals_v1(ctx):
    # gpath's own /v1 route between the same coordinates (same snapping: engine/snap.h)
    for a, b in zip(PTS, PTS[1:]):
        _, o = get(ctx.d, f"/route/v1/g/{coords([a, b])}?overview=full&geometries=geojson")
        # (radius: /v1 snaps within 1000 m by default, the OSRM services without a limit)
        st, _, v = ctx.d.call("GET", f"/v1/graphs/g/route?from={a[0]},{a[1]}&to={b[0]},{b[1]}"
                              "&radius=20000")
        assert st == 200, v
        r = o["routes"][0]
        assert abs(r["duration"] - v["duration_s"]) < 0.051, (r["duration"], v["duration_s"])
        assert abs(r["weight"] - v["duration_s"]) < 0.051 and v["weight_unit"] == "deciseconds"
        assert abs(r["distance"] - v["length_m"]) < 0.051 * len(r["legs"][0]["steps"] or [1]) + 0.1
        assert [w["location"] for w in o["waypoints"]] == [w["location"] for w in v["waypoints"]]
        # the same path: /v1's node coordinates are vertices of the OSRM geometry
        go = {tuple(round(x, 5) for x in p) for p in r["geometry"]["coordinates"]}
        gv = [tuple(round(x, 5) for x in p) for p in v["geometry"]["coordinates"]]
        assert sum(p in go for p in gv) >= 0.9 * len(gv)


@test
def t_route_options(ctx):
    c = coords(PTS[:2])
    _, b = get(ctx.d, f"/route/v1/g/{c}?alternatives=true&generate_hints=false&skip_waypoints=false")
    assert len(b["routes"]) >= 1 and "hint" not in b["waypoints"][0]
    # alternatives: real routes between the same two points, slower than the best (stretch <= 1.25,
    # OSRM's epsilon) and not the same road
    _, alt = get(ctx.d, f"/route/v1/g/{c}?alternatives=3&overview=full&geometries=geojson")
    routes = alt["routes"]
    assert 2 <= len(routes) <= 4, f"{len(routes)} routes"
    best = routes[0]
    for r in routes[1:]:
        assert best["duration"] <= r["duration"] <= 1.25 * best["duration"] + 0.1
        assert r["legs"][0]["summary"] is not None and len(r["legs"]) == 1
        p0 = {tuple(x) for x in best["geometry"]["coordinates"]}
        p1 = [tuple(x) for x in r["geometry"]["coordinates"]]
        assert sum(x in p0 for x in p1) < 0.9 * len(p1), "an alternative is not the best route again"
        assert list(p1[0]) == best["geometry"]["coordinates"][0] and list(p1[-1]) == best["geometry"]["coordinates"][-1]
    _, b = get(ctx.d, f"/route/v1/g/{c}?skip_waypoints=true")
    assert "waypoints" not in b
    _, b = get(ctx.d, f"/route/v1/g/{c}?alternatives=2&continue_straight=default&hints=;&snapping=any")
    assert b["code"] == "Ok"
    _, b = get(ctx.d, f"/route/v1/g/{c}?radiuses=500;unlimited&bearings=0,180;&approaches=curb;unrestricted")
    assert b["code"] == "Ok"
    _, b = get(ctx.d, f"/route/v1/g/{coords(PTS[:3])}?waypoints=0;2&steps=true")
    # one leg; the via coordinate is still a waypoint of the answer (as osrm-routed's)
    assert len(b["routes"][0]["legs"]) == 1 and len(b["waypoints"]) == 3
    _, three = get(ctx.d, f"/route/v1/g/{coords(PTS[:3])}")
    assert abs(b["routes"][0]["duration"] - three["routes"][0]["duration"]) < 0.11
    # LRM's request form (hints=;, overview=false, alternatives=true, steps=true); `driving`
    # resolves to the only graph of a server that serves one
    _, b = get(ctx.d2, f"/route/v1/driving/{c}?overview=false&alternatives=true&steps=true&hints=;")
    assert b["code"] == "Ok" and b["routes"][0]["legs"][0]["steps"]


@test
def t_route_errors(ctx):
    osrm_error(get(ctx.d, "/route/v1/g/8.5,47.3;8.51,95"), "InvalidValue")
    osrm_error(get(ctx.d, "/route/v1/g/8.5,47.3;nonsense"), "InvalidUrl")
    osrm_error(get(ctx.d, "/route/v1/g/polyline(%7F%7F)"), "InvalidUrl")
    osrm_error(get(ctx.d, "/route/v1/g/8.5,47.3"), "InvalidQuery")
    osrm_error(get(ctx.d, "/route/v1/nosuchprofile/8.5,47.3;8.51,47.31"), "InvalidQuery")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?steps=maybe"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?geometries=wkt"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?overview=some"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?radiuses=5"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?bearings=400,10;"), "InvalidOptions")
    # exclude: an unknown class, or a combination (one class at a time, as car.lua's sets)
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?exclude=highway"), "InvalidValue")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?exclude=toll,motorway"), "InvalidValue")
    osrm_error(get(ctx.d, f"/route/v1/g/{coords(PTS[:2])}?vehicle_height=x"), "InvalidValue")
    # a point 50 km from every road, with a 100 m radius: NoSegment
    osrm_error(get(ctx.d, "/route/v1/g/8.5,47.3;9.2,47.3?radiuses=unlimited;100"), "NoSegment")
    # two components: no route between them
    osrm_error(get(ctx.d, "/route/v1/split/8.6,47.3;8.65,47.3"), "NoRoute")


@test
def t_big_component(ctx):
    # a 35 x 35 two-way grid (1225 nodes) and a 3-node stub inside one of its cells, nearest to q
    q = (8.7 + 0.0105, 47.3 + 0.0105)
    _, r = get(ctx.d, f"/route/v1/stub/{coords([q, (8.7, 47.3)])}")
    w = r["waypoints"][0]
    assert w["distance"] > 20, f"snapped onto the big component ({w['distance']} m away), not the stub"
    # within 1 m only the stub qualifies: it is used, and there is no route from it (as OSRM)
    osrm_error(get(ctx.d, f"/route/v1/stub/{coords([q, (8.7, 47.3)])}?radiuses=1;unlimited"), "NoRoute")
    # snapping=any: the nearest segment whatever its component (OSRM's meaning)
    osrm_error(get(ctx.d, f"/route/v1/stub/{coords([q, (8.7, 47.3)])}?snapping=any"), "NoRoute")


@test
def t_approaches_bearings(ctx):
    # just north of the two-way east-west street at lat 47.31, between two crossings
    p, far = (8.7 + 0.0105, 47.3 + 0.010 + 0.00008), (8.73, 47.32)
    def start_bearing(q):
        _, r = get(ctx.d, f"/route/v1/stub/{coords([p, far])}?steps=true&{q}")
        return r["routes"][0]["legs"][0]["steps"][0]["maneuver"]["bearing_after"]
    # right-hand traffic: curb = the point on the right = leave westwards; opposite = eastwards
    assert abs(start_bearing("approaches=curb;") - 270) <= 20
    assert abs(start_bearing("approaches=opposite;") - 90) <= 20
    # bearings: leave eastwards (within 30 degrees of 90), or westwards
    assert abs(start_bearing("bearings=90,30;") - 90) <= 20
    assert abs(start_bearing("bearings=270,30;") - 270) <= 20
    # bearings choose among the roads within the radius (as OSRM): northwards, the north-south
    # street 38 m east of p; none within 20 m runs north
    _, r = get(ctx.d, f"/route/v1/stub/{coords([p, far])}?bearings=0,20;&steps=true")
    assert r["waypoints"][0]["location"] == [8.711, 47.31008], r["waypoints"][0]
    assert r["routes"][0]["legs"][0]["steps"][0]["maneuver"]["bearing_after"] == 0
    osrm_error(get(ctx.d, f"/route/v1/stub/{coords([p, far])}?bearings=0,20;&radiuses=20;"),
               "NoSegment")


# ---- table ----
@test
def t_table(ctx):
    c = coords(PTS)
    _, b = get(ctx.d, f"/table/v1/g/{c}?annotations=duration,distance")
    n = len(PTS)
    assert len(b["durations"]) == n and all(len(r) == n for r in b["durations"])
    assert len(b["sources"]) == len(b["destinations"]) == n
    for i in range(n):
        assert b["durations"][i][i] == 0 and b["distances"][i][i] == 0
    # each cell equals the route between the two coordinates
    for i, j in ((0, 1), (3, 2), (4, 0)):
        _, r = get(ctx.d, f"/route/v1/g/{coords([PTS[i], PTS[j]])}?overview=false")
        assert abs(r["routes"][0]["duration"] - b["durations"][i][j]) < 0.051
        assert abs(r["routes"][0]["distance"] - b["distances"][i][j]) < max(1.0, 0.002 * r["routes"][0]["distance"]), \
            (r["routes"][0]["distance"], b["distances"][i][j])
    _, s = get(ctx.d, f"/table/v1/g/{c}?sources=0;2&destinations=1;3;4")
    assert [[s["durations"][a][k] for k in range(3)] for a in range(2)] == \
        [[b["durations"][i][j] for j in (1, 3, 4)] for i in (0, 2)]
    assert "distances" not in s and len(s["sources"]) == 2 and len(s["destinations"]) == 3
    _, sc = get(ctx.d, f"/table/v1/g/{c}?scale_factor=2")
    assert abs(sc["durations"][0][1] - 2 * b["durations"][0][1]) < 0.11
    # POST with a JSON body answers the same
    _, p = get(ctx.d, "/table/v1/g", method="POST",
               body={"coordinates": [list(x) for x in PTS], "sources": [0, 2], "destinations": [1, 3, 4]})
    assert p["durations"] == s["durations"]
    _, p2 = get(ctx.d, "/table/v1/g", method="POST",
                body={"coordinates": [list(x) for x in PTS], "radiuses": [None, 5000, None, None, None],
                      "bearings": [None] * 5, "annotations": "duration"})
    assert p2["durations"] == b["durations"], "null items take the defaults"


@test
def t_table_equals_v1(ctx):
    _, o = get(ctx.d, f"/table/v1/g/{coords(PTS)}")
    st, _, v = ctx.d.call("POST", "/v1/graphs/g/table",
                          {"sources": [list(p) for p in PTS], "radius": 20000})
    assert st == 200, v
    for i in range(len(PTS)):
        for j in range(len(PTS)):
            assert abs(o["durations"][i][j] - v["weights"][i][j] / 10) < 0.051, (i, j)


@test
def t_table_errors(ctx):
    _, b = get(ctx.d, "/table/v1/split/8.6,47.3;8.65,47.3")
    assert b["durations"][0][1] is None and b["durations"][1][0] is None and b["durations"][0][0] == 0
    _, f = get(ctx.d, "/table/v1/split/8.6,47.3;8.65,47.3?fallback_speed=10&annotations=duration,distance")
    assert f["durations"][0][1] is not None and [0, 1] in f["fallback_speed_cells"]
    assert abs(f["durations"][0][1] - f["distances"][0][1] / 10) < 0.2
    osrm_error(get(ctx.d2, "/table/v1/driving/" + coords(PTS)), "TooBig")  # osrm_max_table_size = 2
    osrm_error(get(ctx.d2, "/table/v1/driving/" + coords(PTS) + "?sources=0;1&destinations=2;3;4"),
               "TooBig")
    _, ok = get(ctx.d2, "/table/v1/driving/" + coords(PTS) + "?sources=0&destinations=2;3;4")
    assert len(ok["durations"][0]) == 3
    osrm_error(get(ctx.d, f"/table/v1/g/{coords(PTS)}?sources=0;9"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/table/v1/g/{coords(PTS)}?annotations=speed"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/table/v1/g/{coords(PTS)}?fallback_speed=-1"), "InvalidOptions")
    osrm_error(get(ctx.d, "/table/v1/g", method="POST", body={"coords": []}), "InvalidQuery")


def list_error(res, code, *words):
    """A 400 `code` whose message has each of words (the option's name, the counts)."""
    osrm_error(res, code)
    msg = res[1]["message"]
    assert all(w in msg for w in words), f"expected {words} in {msg!r}"
    assert "'0' is not an index" not in msg, msg


@test
def t_option_lists(ctx):
    """Option lists are read whole, however long their text: a zero-padded index is that index
    (OSRM reads indexes as numbers), a list longer than the coordinates is a 400 that names the
    option and the counts, and a POST body's list is never dropped for its length (it was copied
    into a buffer sized from the coordinate count: cut in GET values, treated as absent in POST)."""
    c3, pts3 = coords(PTS[:3]), [list(x) for x in PTS[:3]]
    _, one = get(ctx.d, f"/table/v1/g/{c3}?sources=1")
    assert len(one["durations"]) == 1
    st, pad = get(ctx.d, f"/table/v1/g/{c3}?sources=" + "0" * 100 + "1")
    assert st == 200 and pad["durations"] == one["durations"], ("source 1's row", st, pad)
    st, pad = get(ctx.d, f"/table/v1/g/{c3}?sources=2&destinations=" + "0" * 200 + "1;2")
    assert st == 200 and len(pad["durations"][0]) == 2, (st, pad)
    st, pad = get(ctx.d, "/table/v1/g", method="POST",
                  body={"coordinates": pts3, "sources": ["0" * 100 + "1"]})
    assert st == 200 and pad["durations"] == one["durations"], ("source 1's row", st, pad)
    # more entries than coordinates (OSRM: at most one per coordinate), GET and POST
    list_error(get(ctx.d, f"/table/v1/g/{c3}?sources=" + ";".join(["0"] * 1000)),
               "InvalidOptions", "sources", "1000", "3 coordinates")
    list_error(get(ctx.d, "/table/v1/g", method="POST", body={"coordinates": pts3, "sources": [0] * 5001}),
               "InvalidOptions", "sources", "5001", "3 coordinates")
    list_error(get(ctx.d, "/table/v1/g", method="POST",
                   body={"coordinates": pts3, "destinations": [1] * 40}),
               "InvalidOptions", "destinations", "40")
    list_error(get(ctx.d, f"/route/v1/g/{c3}?waypoints=" + ";".join(["0"] * 50)),
               "InvalidOptions", "waypoints", "50")
    list_error(get(ctx.d, "/table/v1/g", method="POST", body={"coordinates": pts3, "radiuses": [100] * 300}),
               "InvalidOptions", "radiuses", "300", "3 coordinates")
    list_error(get(ctx.d, "/table/v1/g", method="POST",
                   body={"coordinates": pts3, "bearings": [[90, 10]] * 200}),
               "InvalidOptions", "bearings", "200")
    # a long radius text is still that radius: 100 m from a point 50 km from every road
    far = [[8.5, 47.3], [9.2, 47.3]]
    osrm_error(get(ctx.d, "/table/v1/g", method="POST",
                   body={"coordinates": far, "radiuses": [None, "0" * 400 + "100"]}), "NoSegment")
    osrm_error(get(ctx.d, "/table/v1/g/8.5,47.3;9.2,47.3?radiuses=;" + "0" * 400 + "100"), "NoSegment")
    # a list item that is not an index, and an option value that has no text form
    osrm_error(get(ctx.d, f"/table/v1/g/{c3}?sources=0;%2B1"), "InvalidOptions")
    osrm_error(get(ctx.d, f"/table/v1/g/{c3}?sources=0;;1"), "InvalidOptions")
    # hints: none or one per coordinate, as OSRM
    list_error(get(ctx.d, f"/table/v1/g/{c3}?hints=a;b"), "InvalidOptions", "hints", "2")
    list_error(get(ctx.d, "/table/v1/g", method="POST", body={"coordinates": pts3, "sources": {"a": 1}}),
               "InvalidQuery", "sources")
    # annotations are read whole too: an unknown item after a long valid prefix
    osrm_error(get(ctx.d, f"/table/v1/g/{c3}?annotations=" + "duration," * 20 + "speed"),
               "InvalidOptions")
    osrm_error(get(ctx.d, f"/route/v1/g/{c3}?annotations=" + "duration," * 30 + "bogus"),
               "InvalidOptions")


# ---- nearest ----
@test
def t_nearest(ctx):
    _, b = get(ctx.d, "/nearest/v1/g/8.5012,47.3021?number=3")
    w = b["waypoints"]
    assert len(w) == 3
    assert all(len(x["nodes"]) == 2 and all(isinstance(n, int) for n in x["nodes"]) for x in w)
    assert w[0]["distance"] <= w[1]["distance"] <= w[2]["distance"]
    assert len({tuple(sorted(x["nodes"])) for x in w}) == 3, "three distinct segments"
    _, one = get(ctx.d, "/nearest/v1/g/8.5012,47.3021")
    _, r = get(ctx.d, "/route/v1/g/8.5012,47.3021;8.51,47.31")
    assert one["waypoints"][0]["location"] == r["waypoints"][0]["location"], "same snapping as route"
    osrm_error(get(ctx.d, "/nearest/v1/g/8.5,47.3;8.6,47.3"), "InvalidQuery")
    osrm_error(get(ctx.d2, "/nearest/v1/driving/8.5,47.3?number=500"), "TooBig")


# ---- trip ----
@test
def t_trip(ctx):
    c = coords(PTS)
    _, t = get(ctx.d, f"/trip/v1/g/{c}?steps=true")
    n = len(PTS)
    trip = t["trips"][0]
    assert len(trip["legs"]) == n, "a round trip has one leg per stop"
    idx = sorted(w["waypoint_index"] for w in t["waypoints"])
    assert idx == list(range(n)) and all(w["trips_index"] == 0 for w in t["waypoints"])
    _, tab = get(ctx.d, f"/table/v1/g/{c}")
    order = [None] * n
    for i, w in enumerate(t["waypoints"]):
        order[w["waypoint_index"]] = i
    assert order[0] == 0, "a round trip starts at the first coordinate"
    tour = sum(tab["durations"][order[k]][order[(k + 1) % n]] for k in range(n))
    assert abs(tour - trip["duration"]) < 0.06 * n + 0.06, (tour, trip["duration"])
    # no worse than the best of every tour that visits stops in input order or its reverse
    ident = sum(tab["durations"][k][(k + 1) % n] for k in range(n))
    assert trip["duration"] <= ident + 0.06 * n
    # against the exact optimum (every tour of 8 stops from the first): 2-opt + Or-opt gets there
    pts8 = PTS + [(8.50, 47.325), (8.535, 47.29), (8.48, 47.30)]
    _, t8 = get(ctx.d, f"/trip/v1/g/{coords(pts8)}?overview=false")
    _, tab8 = get(ctx.d, f"/table/v1/g/{coords(pts8)}")
    d8 = tab8["durations"]
    opt = min(d8[0][p[0]] + sum(d8[p[i]][p[i + 1]] for i in range(6)) + d8[p[6]][0]
              for p in itertools.permutations(range(1, 8)))
    assert t8["trips"][0]["duration"] <= opt * 1.02 + 0.5, (t8["trips"][0]["duration"], opt)
    _, o = get(ctx.d, f"/trip/v1/g/{c}?roundtrip=false&source=first&destination=last")
    assert len(o["trips"][0]["legs"]) == n - 1
    assert o["waypoints"][0]["waypoint_index"] == 0 and o["waypoints"][-1]["waypoint_index"] == n - 1
    osrm_error(get(ctx.d, f"/trip/v1/g/{c}?roundtrip=false"), "NotImplemented")
    # islands: a round trip per group of mutually reachable coordinates (as OSRM)
    _, isl = get(ctx.d, "/trip/v1/split/8.6,47.3;8.65,47.3;8.601,47.3")
    assert len(isl["trips"]) == 2, isl
    ti = [w["trips_index"] for w in isl["waypoints"]]
    assert ti[0] == ti[2] != ti[1], ti
    assert [len(t["legs"]) for t in isl["trips"]] == [2, 1]
    assert isl["trips"][1]["distance"] == 0, "a lone stop: one empty leg"
    osrm_error(get(ctx.d, "/trip/v1/split/8.6,47.3;8.65,47.3;8.601,47.3?roundtrip=false&source=first"),
               "NoTrips")


# ---- isochrones ----
def ring_area(r):
    return sum(r[i][0] * r[i + 1][1] - r[i + 1][0] * r[i][1] for i in range(len(r) - 1)) / 2


def inside(r, x, y):
    c = False
    for i in range(len(r) - 1):
        (x1, y1), (x2, y2) = r[i], r[i + 1]
        if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
            c = not c
    return c


def in_multipolygon(mp, x, y):
    return any(inside(p[0], x, y) and not any(inside(h, x, y) for h in p[1:]) for p in mp)


@test
def t_isochrone(ctx):
    st, _, fc = ctx.d.call("GET", "/v1/graphs/g/isochrone?lon=8.5&lat=47.3&contours=300,120")
    assert st == 200 and fc["type"] == "FeatureCollection"
    f = fc["features"]
    assert [x["properties"]["contour"] for x in f] == [300, 120], "largest contour first"
    areas = []
    for feat in f:
        mp = feat["geometry"]["coordinates"]
        assert feat["geometry"]["type"] == "MultiPolygon" and mp
        a = 0
        for poly in mp:
            assert ring_area(poly[0]) > 0, "outer rings counter-clockwise"
            for ring in poly:
                assert ring[0] == ring[-1] and len(ring) >= 4, "closed rings"
                assert len({tuple(p) for p in ring[:-1]}) == len(ring) - 1, "no vertex twice"
            for h in poly[1:]:
                assert ring_area(h) < 0, "holes clockwise"
            a += ring_area(poly[0]) + sum(ring_area(h) for h in poly[1:])
        areas.append(a)
    assert areas[0] > areas[1] > 0
    # every node gpath's own sssp reaches within 120 s lies inside the 120 s polygons
    _, _, nb = ctx.d.call("GET", "/v1/graphs/g/nearest?lon=8.5&lat=47.3")
    src = nb["nodes"][0]["id"]
    _, _, tree = ctx.d.call("GET", f"/v1/graphs/g/sssp?source={src}&max_distance=1100")
    _, _, allg = ctx.d.call("GET", "/v1/graphs/g")
    pts = []
    for nid in tree["nodes"][:400]:
        _, _, nn = ctx.d.call("GET", f"/v1/graphs/g/route?from={nid}&to={nid}")
        pts.append(nn["geometry"]["coordinates"][0])
    mp120 = f[1]["geometry"]["coordinates"]
    hit = sum(in_multipolygon(mp120, x, y) for x, y in pts)
    assert hit >= 0.97 * len(pts), f"{hit} of {len(pts)} reached nodes inside the 120 s isochrone"
    assert allg["nodes"] > len(tree["nodes"])
    # far nodes are outside: the 120 s area is smaller than the graph's square
    _, _, two = ctx.d.call("GET", "/v1/graphs/g/isochrone?points=8.5,47.3;8.53,47.32&contours=60,90")
    assert [(x["properties"]["point_index"], x["properties"]["contour"]) for x in two["features"]] == \
        [(0, 90), (0, 60), (1, 90), (1, 60)]
    _, _, dist = ctx.d.call("GET", "/v1/graphs/g/isochrone?lon=8.5&lat=47.3&contours=1000&contours_type=distance")
    assert dist["features"][0]["properties"]["contours_type"] == "distance"
    H.expect_error(ctx.d.call("GET", "/v1/graphs/g/isochrone?lon=8.5&lat=47.3"), 400, "InvalidQuery")
    H.expect_error(ctx.d.call("GET", "/v1/graphs/g/isochrone?lon=8.5&lat=47.3&contours=-5"), 400,
                   "InvalidQuery")
    H.expect_error(ctx.d.call("GET", "/v1/graphs/g/isochrone?lon=8.5&lat=47.3&contours=" +
                              ",".join(str(i) for i in range(1, 13))), 413, "TooBig")


# ---- a real extract: Monaco (OSM), when this build loads it ----
@test
def t_monaco(ctx):
    if not ctx.monaco:
        raise Skip("Monaco not loadable (no OSM loader in this build, or no $GPATH_DATA/osm)")
    a, b = (7.4200, 43.7310), (7.4280, 43.7400)
    # `driving` resolves to the graph whose profile is car (several graphs are served)
    _, r = get(ctx.d, f"/route/v1/driving/{coords([a, b])}?steps=true&annotations=nodes")
    route = r["routes"][0]
    leg = route["legs"][0]
    names = [s["name"] for s in leg["steps"] if s["name"]]
    types = {s["maneuver"]["type"] for s in leg["steps"]}
    assert types <= {"depart", "arrive", "turn", "new name", "continue", "end of road", "fork",
                     "merge", "on ramp", "off ramp", "roundabout", "rotary", "roundabout turn",
                     "exit roundabout", "exit rotary"}, types
    assert leg["steps"][-1]["maneuver"].get("modifier") in (None, "left", "right")
    assert len(set(names)) >= 2, f"street names in the steps: {names}"
    assert leg["summary"] and all(x in names for x in leg["summary"].split(", "))
    crow = H.haversine(*a, *b)
    assert crow <= route["distance"] <= 5 * crow, (crow, route["distance"])
    assert all(isinstance(n, int) and n > 0 for n in leg["annotation"]["nodes"]), "OSM node ids"
    # one annotation per segment of the line: every point of the full geometry has its OSM node
    _, f = get(ctx.d, f"/route/v1/driving/{coords([a, b])}?annotations=true&overview=full"
                      "&geometries=geojson")
    fa, line = f["routes"][0]["legs"][0]["annotation"], f["routes"][0]["geometry"]["coordinates"]
    assert len(fa["nodes"]) == len(line) == len(fa["duration"]) + 1 > 50, (len(fa["nodes"]), len(line))
    assert round(sum(fa["duration"]), 1) == f["routes"][0]["duration"]
    _, r2 = get(ctx.d, f"/route/v1/monaco/{coords([a, b])}?steps=true&annotations=nodes")
    assert r2["routes"][0]["duration"] == route["duration"]
    osrm_error(get(ctx.d, f"/route/v1/cycling/{coords([a, b])}"), "InvalidQuery")
    # equal to gpath's own /v1 table between the same coordinates
    pts = [a, b, (7.4128, 43.7270), (7.4350, 43.7450)]
    _, t = get(ctx.d, f"/table/v1/monaco/{coords(pts)}")
    st, _, v = ctx.d.call("POST", "/v1/graphs/monaco/table", {"sources": [list(p) for p in pts]})
    assert st == 200, v
    for i in range(len(pts)):
        for j in range(len(pts)):
            d = v["weights"][i][j]
            assert (t["durations"][i][j] is None) == (d is None)
            if d is not None:
                assert abs(t["durations"][i][j] - d / 10) < 0.051, (i, j, t["durations"][i][j], d)
    # durations alone (deciseconds written as digits, server/osrm/osrm.c tenths_row) are the
    # durations of the general writer (with distances), to the byte; whole seconds print as
    # integers; fallback cells and their list are the same too
    grid = [(7.410 + 0.0031 * k, 43.726 + 0.0017 * (k % 7)) for k in range(12)] + [(7.3, 43.9)]
    _, d1 = get(ctx.d, f"/table/v1/monaco/{coords(grid)}?radiuses=" + ";".join(["unlimited"] * len(grid)))
    _, d2 = get(ctx.d, f"/table/v1/monaco/{coords(grid)}?annotations=duration,distance&radiuses="
                + ";".join(["unlimited"] * len(grid)))
    assert json.dumps(d1["durations"]) == json.dumps(d2["durations"])
    cells = [x for row in d1["durations"] for x in row]
    assert any(isinstance(x, int) for x in cells) and any(isinstance(x, float) for x in cells), cells
    _, f1 = get(ctx.d, f"/table/v1/monaco/{coords(pts)}?fallback_speed=5")
    _, f2 = get(ctx.d, f"/table/v1/monaco/{coords(pts)}?fallback_speed=5&annotations=duration,distance")
    assert f1["durations"] == f2["durations"]
    assert f1.get("fallback_speed_cells") == f2.get("fallback_speed_cells")
    _, n = get(ctx.d, f"/nearest/v1/driving/{coords([a])}?number=2")
    assert n["waypoints"][0]["name"], n["waypoints"][0]
    _, tr = get(ctx.d, f"/trip/v1/driving/{coords(pts)}")
    assert len(tr["trips"][0]["legs"]) == len(pts)


# ---- overview and map page ----
@test
def t_overview(ctx):
    st, fc = get(ctx.d, "/v1/graphs/g/overview.geojson", check=False)
    assert st == 200 and fc["type"] == "FeatureCollection" and not fc["merged"]
    lines = [l for f in fc["features"] for l in f["geometry"]["coordinates"]]
    assert len(lines) == fc["roads"] > 0
    st, m = get(ctx.d, "/v1/graphs/g/overview.geojson?max_edges=200", check=False)
    assert m["merged"] and 0 < len(m["features"][0]["geometry"]["coordinates"]) <= 200
    assert m["roads"] == fc["roads"]
    # a limit no grid keeps to (the map page asks max_edges=1 for the bbox alone): 200, no lines
    st, one = get(ctx.d, "/v1/graphs/g/overview.geojson?max_edges=1", check=False)
    assert st == 200 and one["merged"] and one["bbox"] == fc["bbox"], (st, one)
    assert all(len(f["geometry"]["coordinates"]) <= 1 for f in one["features"]), one


@test
def t_map_page(ctx):
    st, page = get(ctx.d, "/", check=False)
    if st == 501 and "make web" in str(page):
        raise Skip("the map page is not bundled (make web)")
    assert st == 200 and "web/app.js" in page and "/openapi.yaml" in page and "/docs" in page
    assert "/lrm" in page, "the map page links the LRM page"
    st, js = get(ctx.d, "/web/maplibre-gl.mjs", check=False)
    assert st == 200 and "maplibre" in js.lower()
    st, js = get(ctx.d, "/web/osrm-text.js", check=False)
    assert st == 200 and "osrmTextInstructions" in js
    st, page = get(ctx.d, "/lrm", check=False)
    assert st == 200 and "web/vendor.js" in page and "web/lrm.js" in page
    st, js = get(ctx.d, "/web/vendor.js", check=False)
    assert st == 200 and "L.Routing" in js
    st, _ = get(ctx.d, "/web/images/marker-icon.png", check=False)
    assert st == 200
    st, b = get(ctx.d, "/web/..secret")
    assert st == 404
    st, b = get(ctx.d, "/web/openapi.yaml")
    assert st == 404, "the map's asset path serves only map assets"
    for path in ("/", "/lrm", "/web/app.js"):
        st, b = get(ctx.d2, path)  # map_page = off
        assert st == 404 and b["code"] == "NotFound", path


@test
def t_continue_straight(ctx):
    """continue_straight at a via waypoint (tests/data/osm/straight.osm, turn costs on): A;W;A on
    Main Street. false turns around at W (2 x 9.0 s); true goes on east round the loop and back
    (9.0 + 86.2 s); default is the profile's (car: true, as OSRM v6's car.lua); the route's legs
    and steps add up either way."""
    c = "7.0002,45;7.001,45;7.0002,45"
    want = {"false": [9.0, 9.0], "true": [9.0, 86.2], "default": [9.0, 86.2]}
    for v, legs in want.items():
        _, b = get(ctx.d, f"/route/v1/straight/{c}?continue_straight={v}&steps=true")
        assert b["code"] == "Ok", b
        r = b["routes"][0]
        got = [round(leg["duration"], 1) for leg in r["legs"]]
        assert got == legs, (v, got, legs)
        assert abs(r["duration"] - sum(legs)) < 0.11, (v, r["duration"])
        for leg in r["legs"]:
            assert abs(sum(st["duration"] for st in leg["steps"]) - leg["duration"]) < 0.11
    st, b = get(ctx.d, f"/route/v1/straight/{c}?continue_straight=sideways")
    assert st == 400 and b["code"] == "InvalidOptions" and "continue_straight" in b["message"]


@test
def t_route_without_line(ctx):
    """overview=false without steps, annotations or alternatives builds the legs without their
    points (route.c): the same legs, totals and waypoints as with the line, to the byte."""
    cases = [("g", coords(PTS[:2]), ""), ("g", coords(PTS[:4]), ""),
             ("g", coords(PTS[:3]), "&waypoints=0;2"),
             ("straight", "7.0002,45;7.001,45;7.0002,45", ""),
             ("straight", "7.0002,45;7.001,45;7.0002,45", "&continue_straight=false")]
    if ctx.monaco:
        cases.append(("monaco", "7.4197,43.7311;7.4291,43.7384;7.4246,43.7298", ""))
    for graph, c, extra in cases:
        _, lean = get(ctx.d, f"/route/v1/{graph}/{c}?overview=false{extra}")
        _, full = get(ctx.d, f"/route/v1/{graph}/{c}?overview=full{extra}")
        assert lean["code"] == "Ok" and "geometry" not in lean["routes"][0], lean
        del full["routes"][0]["geometry"]
        assert lean == full, (graph, c, extra, lean, full)
    # literal: A;W;A on Main Street, continue_straight's default (car: true), see t_continue_straight
    _, b = get(ctx.d, "/route/v1/straight/7.0002,45;7.001,45;7.0002,45?overview=false")
    assert [leg["duration"] for leg in b["routes"][0]["legs"]] == [9.0, 86.2], b


def main():
    tmp = tempfile.mkdtemp(prefix="gpath-osrm-")
    ctx = Ctx()
    passed = failed = skipped = 0
    try:
        # two components 0.05 degrees apart: unroutable pairs
        arcs, co = [], {}
        for k in range(2):
            for i in range(4):
                nid = k * 4 + i + 1
                co[nid] = (8.6 + 0.05 * k + 0.001 * i, 47.3)
                if i:
                    arcs += [(nid - 1, nid, 10), (nid, nid - 1, 10)]
        H.write_dimacs(os.path.join(tmp, "split.gr"), 8, arcs, co)
        side, arcs, co = 35, [], {}
        for y in range(side):
            for x in range(side):
                u = y * side + x + 1
                co[u] = (8.7 + 0.001 * x, 47.3 + 0.001 * y)
                for v in ([u + 1] if x + 1 < side else []) + ([u + side] if y + 1 < side else []):
                    arcs += [(u, v, 30), (v, u, 30)]
        stub = side * side
        for i in range(3):
            co[stub + 1 + i] = (8.7 + 0.0105 + 0.0001 * (i - 1), 47.3 + 0.0105)
        arcs += [(stub + 1, stub + 2, 5), (stub + 2, stub + 3, 5), (stub + 3, stub + 1, 5)]
        H.write_dimacs(os.path.join(tmp, "stub.gr"), stub + 3, arcs, co)
        straight = "osm:" + os.path.join(H.ROOT, "tests", "data", "osm", "straight.osm")
        graphs = ["--graph", "g=gen:10000:7", "--graph", "split=" + os.path.join(tmp, "split.gr"),
                  "--graph", "stub=" + os.path.join(tmp, "stub.gr"),
                  "--graph", "straight=" + straight]
        monaco = os.path.join(DATA, "osm", "monaco.osm.pbf")
        if os.path.exists(monaco) and subprocess.run(
                [H.BIN, "info", "--graph", "osm:" + monaco], capture_output=True).returncode == 0:
            graphs += ["--graph", "monaco=osm:" + monaco]
            ctx.monaco = True
        ctx.d = H.Daemon(tmp, "main", graphs + ["--cache-path", ""])
        ctx.d2 = H.Daemon(tmp, "second", ["--graph", "only=gen:2500:3", "--cache-path", "",
                                          "--osrm-max-table-size", "2", "--osrm-max-nearest-size", "5",
                                          "--map-page", "off"])
        ctx.d.wait_ready()
        ctx.d2.wait_ready()
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
        if failed and ctx.d:
            print("--- main.log (tail)\n" + ctx.d.tail())
        for dm in (ctx.d, ctx.d2):
            if dm:
                log = dm.tail(6000)
                rc = dm.stop()
                if rc != 0:  # a sanitizer build reports leaks and errors through the exit code
                    failed += 1
                    print(f"FAIL daemon exit code {rc}:\n{log}")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
