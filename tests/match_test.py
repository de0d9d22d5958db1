#!/usr/bin/python3
"""match_test.py - map matching against the real daemon (run by tests/test_match.sh): OSRM's
/match/v1 (GET and POST) and the batch POST /v1/graphs/{graph}/match.

Literal expectations on tests/data/osm/match.osm (a trace along one street, a parallel service
road that must not be chosen, a U-turn in a dead end, a time gap that splits, a point far off the
road that is dropped, bad input); batch answers equal to single ones; noisy traces generated from
known routes on Liechtenstein whose matched line must cover the true route; and, when the OSRM
release is in ../shared/peers/osrm, the same traces matched by the real OSRM (bench/osrm_quality.py
starts it): gpath's quality (share of the true route within 20 m of the matched line) at least
OSRM's. Prints PASS/FAIL/SKIP lines and "N passed, N failed, N skipped" last.
"""
import json
import math
import os
import random
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
import http_test as H  # noqa: E402
import osrm_quality as Q  # noqa: E402  (Osrm: the real OSRM from the tarball; covered, xy)

DATA = os.environ.get("GPATH_DATA", os.path.join(H.ROOT, "..", "shared", "data"))
LIE = os.path.join(DATA, "osm", "liechtenstein-latest.osm.pbf")
TARBALL = os.path.join(H.ROOT, "..", "shared", "peers", "osrm", "osrm-v6.0.0-debian12-bin.tar.xz")
TESTS = []


class Ctx:
    """The daemons (d: the hand-made map and Liechtenstein; d2: a low point limit) and the noisy
    Liechtenstein traces shared by the tests."""
    d = d2 = None
    lie = False
    traces = None


def test(fn):
    TESTS.append(fn)
    return fn


def coords(pts):
    return ";".join(f"{x:.6f},{y:.6f}" for x, y in pts)


def match(ctx, pts, query="", graph="m", status=200):
    st, _, b = ctx.d.call("GET", f"/match/v1/{graph}/{coords(pts)}" + (f"?{query}" if query else ""))
    assert st == status, (st, b)
    return b


def names(b):
    return [None if t is None else t["name"] for t in b["tracepoints"]]


# along Main Street (45.000 N), points 2 m north of it
STREET = [(7.0005, 45.00002), (7.0012, 45.00002), (7.0019, 45.00002), (7.0033, 45.00002),
          (7.0040, 45.00002), (7.0047, 45.00002)]


@test
def t_street(ctx):
    b = match(ctx, STREET, "overview=full&geometries=geojson&steps=true&annotations=true")
    assert b["code"] == "Ok" and len(b["matchings"]) == 1, b
    m = b["matchings"][0]
    # 7.0005 -> 7.0047 on 45.000 N: 0.0042 degrees of longitude, about 330.2 m
    assert abs(m["distance"] - 330.2) < 0.5, m["distance"]
    assert 0.9 <= m["confidence"] <= 1, m["confidence"]
    assert len(m["legs"]) == 5 and all(leg["steps"] for leg in m["legs"])
    assert abs(sum(leg["distance"] for leg in m["legs"]) - m["distance"]) < 0.5
    assert all(abs(y - 45.0) < 1e-9 for _, y in m["geometry"]["coordinates"])
    assert names(b) == ["Main Street"] * 6
    for i, t in enumerate(b["tracepoints"]):
        assert t["matchings_index"] == 0 and t["waypoint_index"] == i, t
        assert abs(t["distance"] - 2.2) < 0.1 and t["location"][1] == 45.0, t


@test
def t_service_road_not_chosen(ctx):
    # Service Lane runs 13 m north of Main Street; the middle points lie half-way between both
    pts = [(7.0005, 45.00003), (7.0015, 45.00006), (7.0025, 45.00006), (7.0035, 45.00006),
           (7.0045, 45.00002)]
    b = match(ctx, pts)
    assert len(b["matchings"]) == 1 and names(b) == ["Main Street"] * 5, b
    assert abs(b["matchings"][0]["distance"] - 314.5) < 0.5, b["matchings"][0]
    assert [t["location"] for t in b["tracepoints"]] == [[x, 45.0] for x, _ in pts]


@test
def t_uturn(ctx):
    # up Cul Street (a dead end leaving 7.002 E north) nearly to its end and back
    pts = [(7.0015, 45.00002), (7.00203, 45.0005), (7.00205, 45.0015), (7.00198, 45.0019),
           (7.00196, 45.001), (7.00199, 45.0003), (7.0028, 45.00002)]
    b = match(ctx, pts, "overview=full&geometries=geojson")
    assert len(b["matchings"]) == 1, b
    assert names(b) == ["Main Street"] + ["Cul Street"] * 5 + ["Main Street"], names(b)
    m = b["matchings"][0]
    # 39.3 m to 7.002 + 211.3 m up to 45.0019 + 177.9 m back + 33.4 m + 62.9 m
    assert abs(m["distance"] - 524.8) < 1, m["distance"]
    top = max(y for _, y in m["geometry"]["coordinates"])
    assert abs(top - 45.0019) < 1e-6, top


@test
def t_time_gap_splits(ctx):
    ts = "timestamps=0;10;20;1000;1010;1020"
    b = match(ctx, STREET, ts)
    assert len(b["matchings"]) == 2, b
    assert [t["matchings_index"] for t in b["tracepoints"]] == [0, 0, 0, 1, 1, 1]
    assert [t["waypoint_index"] for t in b["tracepoints"]] == [0, 1, 2, 0, 1, 2]
    b = match(ctx, STREET, ts + "&gaps=ignore")
    assert len(b["matchings"]) == 1 and abs(b["matchings"][0]["distance"] - 330.2) < 0.5, b


@test
def t_far_point_dropped(ctx):
    pts = STREET[:2] + [(7.0019, 45.006)] + STREET[3:5]  # 667 m north of every road
    b = match(ctx, pts)
    assert len(b["matchings"]) == 1, b
    assert b["tracepoints"][2] is None and names(b) == ["Main Street"] * 2 + [None] + \
        ["Main Street"] * 2, b
    assert [t["waypoint_index"] for t in b["tracepoints"] if t] == [0, 1, 2, 3]
    assert len(b["matchings"][0]["legs"]) == 3


@test
def t_tidy_and_waypoints(ctx):
    pts = [STREET[0], (7.00052, 45.00002)] + STREET[1:]  # the second point 1.6 m from the first
    b = match(ctx, pts, "tidy=true")
    assert b["tracepoints"][1] is None and len(b["matchings"][0]["legs"]) == 5, b
    b = match(ctx, STREET, "waypoints=0;3;5")
    m = b["matchings"][0]
    assert len(m["legs"]) == 2 and abs(m["distance"] - 330.2) < 0.5, m
    assert [t.get("waypoint_index") for t in b["tracepoints"]] == [0, None, None, 1, None, 2]


@test
def t_post_equals_get(ctx):
    get = match(ctx, STREET, "timestamps=0;10;20;30;40;50&radiuses=5;5;5;5;5;5&overview=full")
    st, _, post = ctx.d.call("POST", "/match/v1/m", {
        "coordinates": [list(p) for p in STREET], "timestamps": [0, 10, 20, 30, 40, 50],
        "radiuses": [5] * 6, "overview": "full"})
    assert st == 200 and post == get, (post, get)


@test
def t_bad_input(ctx):
    base = f"/match/v1/m/{coords(STREET[:3])}"
    cases = [
        ("?timestamps=0;10", 400, "InvalidOptions", ["timestamps", "3 coordinates"]),
        ("?timestamps=0;20;10", 400, "InvalidValue", ["timestamps must not decrease"]),
        ("?radiuses=5;5", 400, "InvalidOptions", ["radiuses"]),
        ("?radiuses=5;5000;5", 400, "TooBig", ["match_max_radius_m"]),
        ("?radiuses=5;-1;5", 400, "InvalidValue", ["radiuses[1]"]),
        ("?gaps=sometimes", 400, "InvalidOptions", ["gaps"]),
        ("?tidy=yes", 400, "InvalidOptions", ["tidy"]),
        ("?bearings=10,20", 400, "InvalidOptions", ["bearings"]),
        ("?waypoints=1;2", 400, "InvalidValue", ["waypoints"]),
        ("?alternatives=true", 400, "InvalidQuery", ["alternatives"]),
    ]
    for q, st, code, words in cases:
        H.expect_error(ctx.d.call("GET", base + q), st, code, words)
    H.expect_error(ctx.d.call("GET", f"/match/v1/m/{coords(STREET[:1])}"), 400, "InvalidQuery",
                   ["at least 2"])
    far = [(x + 0.1, y) for x, y in STREET[:3]]
    H.expect_error(ctx.d.call("GET", f"/match/v1/m/{coords(far)}"), 400, "NoMatch", ["radius"])
    many = [(7.0005 + 0.0000001 * i, 45.00002) for i in range(11)]
    H.expect_error(ctx.d2.call("GET", f"/match/v1/m/{coords(many)}"), 400, "TooBig",
                   ["osrm_max_match_size"])


def batch(ctx, traces, graph="m", nd=False, query="", **opts):
    if nd:
        raw = "".join(json.dumps(t) + "\n" for t in traces).encode()
        st, hd, b = ctx.d.call("POST", f"/v1/graphs/{graph}/match" + query, raw=raw,
                               headers={"Content-Type": "application/x-ndjson"}, check=False)
        assert st == 200 and hd["content-type"].startswith("application/x-ndjson"), (st, b)
        return [json.loads(line) for line in b.splitlines()]
    st, _, b = ctx.d.call("POST", f"/v1/graphs/{graph}/match" + query, dict(traces=traces, **opts))
    assert st == 200 and b["code"] == "Ok", (st, b)
    return b["results"]


def single(ctx, t, graph, query):
    q = "generate_hints=false&" + query
    if "timestamps" in t:
        q += "&timestamps=" + ";".join(str(x) for x in t["timestamps"])
    if "radiuses" in t:
        q += "&radiuses=" + ";".join(str(x) for x in t["radiuses"])
    st, _, b = ctx.d.call("GET", f"/match/v1/{graph}/{coords(t['coordinates'])}?{q}")
    return b


@test
def t_batch_equals_single(ctx):
    traces = [{"coordinates": STREET},
              {"coordinates": STREET, "timestamps": [0, 10, 20, 1000, 1010, 1020]},
              {"coordinates": STREET[:1]},  # one point: its own error, the others answered
              {"coordinates": [(x + 0.1, y) for x, y in STREET]},
              {"coordinates": STREET, "radiuses": [4, 4, 4, 4, 4, 4]}]
    traces = [dict(t, coordinates=[list(p) for p in t["coordinates"]]) for t in traces]
    res = batch(ctx, traces, overview="full", geometries="geojson")
    assert [r["code"] for r in res] == ["Ok", "Ok", "InvalidQuery", "NoMatch", "Ok"], res
    for t, r in zip(traces, res):
        assert r == single(ctx, t, "m", "overview=full&geometries=geojson"), (t, r)
    nd = batch(ctx, traces, nd=True, query="?overview=full&geometries=geojson")
    assert nd == res
    if ctx.traces:  # noisy Liechtenstein traces
        ts = [dict(coordinates=[list(p) for p in t["pts"]], timestamps=t["ts"]) for t in
              ctx.traces[:10]]
        res = batch(ctx, ts, graph="li")
        for t, r in zip(ts, res):
            one = single(ctx, t, "li", "")
            if r != one:
                print(json.dumps(r)[:3000])
                print(json.dumps(one)[:3000])
            assert r == one, t


@test
def t_batch_ndjson_forms(ctx):
    """NDJSON lines spelt otherwise (whitespace, key order, trailing zeros, exponents; nulls and
    "unlimited", a count that does not fit) answer as the same traces in a JSON body: the plain
    lines' own reader and cJSON's agree."""
    ts = [0, 10, 20, 30, 40, 50]
    traces = [{"coordinates": [list(p) for p in STREET], "timestamps": ts},
              {"coordinates": [list(p) for p in STREET],
               "radiuses": [None, 4, 4, 4, 4, "unlimited"]},
              {"coordinates": [list(p) for p in STREET], "timestamps": ts[:5]}]
    want = batch(ctx, traces, overview="full", geometries="geojson")
    assert [r["code"] for r in want] == ["Ok", "Ok", "InvalidOptions"], want
    pts = " , ".join(f"[ {x}0E0 ,\t{y}0 ]" for x, y in STREET)
    lines = ["  {\"timestamps\" : [0, 1e1, 20.0, 30, 40, 50] , \"coordinates\": [%s] } " % pts,
             json.dumps(traces[1]), json.dumps(traces[2])]
    st, _, b = ctx.d.call("POST", "/v1/graphs/m/match?overview=full&geometries=geojson",
                          raw="\n".join(lines).encode(),
                          headers={"Content-Type": "application/x-ndjson"}, check=False)
    assert st == 200, (st, b)
    assert [json.loads(line) for line in b.splitlines()] == want


@test
def t_batch_errors(ctx):
    st, _, b = ctx.d.call("POST", "/v1/graphs/m/match", {"trace": []})
    assert st == 400 and "unknown field 'trace'" in b["message"], b
    st, _, b = ctx.d.call("POST", "/v1/graphs/m/match", {"traces": {}})
    assert st == 400 and "traces" in b["message"], b
    st, _, b = ctx.d.call("POST", "/v1/graphs/m/match", raw=b"{\"coordinates\": [}\n",
                          headers={"Content-Type": "application/x-ndjson"})
    assert st == 400 and "line 1" in b["message"], b
    res = batch(ctx, [{"coordinates": [[7.0005, 45.00002], [7.0012, 45.00002]],
                       "timestamps": [5, 1]}])
    assert res[0]["code"] == "InvalidValue" and "timestamps" in res[0]["message"], res


# ---- noisy traces on Liechtenstein ----
def gen_traces(ctx, n, seed, noise_m=5.0, step_s=5.0):
    """Routes between random road points (gpath's /route/v1), sampled every step_s seconds along
    their geometry at the route's mean speed, each point moved by Gaussian noise_m metres."""
    rng = random.Random(seed)
    box = (9.50, 47.06, 9.60, 47.24)
    out = []
    while len(out) < n:
        a = (rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3]))
        b = (rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3]))
        st, _, r = ctx.d.call("GET", f"/route/v1/li/{coords([a, b])}?overview=full&"
                              "geometries=geojson&radiuses=200;200", check=False)
        if st != 200 or not (1000 < r["routes"][0]["distance"] < 8000):
            continue
        line = r["routes"][0]["geometry"]["coordinates"]
        speed = r["routes"][0]["distance"] / max(r["routes"][0]["duration"], 1)
        lat0 = line[0][1]
        xy = [Q.xy(x, y, lat0) for x, y in line]
        pts = Q.sample(xy, speed * step_s)
        k = math.pi / 180 * Q.R_EARTH
        kx = k * math.cos(lat0 * math.pi / 180)
        noisy = [(round((x + rng.gauss(0, noise_m)) / kx, 6),
                  round((y + rng.gauss(0, noise_m)) / k, 6)) for x, y in pts]  # as sent by GET
        # sample() adds the line's vertices too: keep the points step_s apart only
        keep = [noisy[0]]
        last = pts[0]
        for p, q in zip(pts[1:], noisy[1:]):
            if math.hypot(p[0] - last[0], p[1] - last[1]) >= speed * step_s * 0.999:
                keep.append(q)
                last = p
        if not 5 <= len(keep) <= 100:  # OSRM's default limit: 100 points
            continue
        out.append({"line": line, "pts": keep, "ts": [int(i * step_s) for i in range(len(keep))]})
    return out


def quality(tr, b):
    """Share of the true route within 20 m of the matched lines (all matchings)."""
    if b.get("code") != "Ok":
        return 0.0
    lat0 = tr["line"][0][1]
    true = [Q.xy(x, y, lat0) for x, y in tr["line"]]
    got = []
    for m in b["matchings"]:
        got += [Q.xy(x, y, lat0) for x, y in m["geometry"]["coordinates"]]
    return Q.covered(true, got, 20.0)


@test
def t_noisy_traces_cover_route(ctx):
    if not ctx.lie:
        raise H.Skip(f"no {LIE} (make data copies it)")
    qs = []
    for tr in ctx.traces:
        st, _, b = ctx.d.call("GET", f"/match/v1/li/{coords(tr['pts'])}?overview=full&"
                              "geometries=geojson&radiuses=" + ";".join(["10"] * len(tr["pts"])) +
                              "&timestamps=" + ";".join(map(str, tr["ts"])))
        assert st == 200, b
        qs.append(quality(tr, b))
    mean = sum(qs) / len(qs)
    print(f"  gpath quality on {len(qs)} traces (5 m noise, 5 s): mean {mean:.4f}, min {min(qs):.3f}")
    assert mean >= 0.95 and min(qs) >= 0.7, qs
    ctx.gp_quality = qs


@test
def t_quality_vs_osrm(ctx):
    if not ctx.lie or not getattr(ctx, "gp_quality", None):
        raise H.Skip("no Liechtenstein data")
    if not os.path.exists(TARBALL):
        raise H.Skip(f"no OSRM release at {TARBALL}")
    work = os.path.join(tempfile.gettempdir(), f"gpath-match-osrm-{os.getuid()}")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(work, "osrm.log"), "a")
    o = Q.Osrm(TARBALL, work, 2, log)
    try:
        url = o.serve(o.prepare(LIE, "car", work))
        qs, codes = [], {}
        for tr in ctx.traces:
            q = (f"{url}/match/v1/driving/{coords(tr['pts'])}?overview=full&geometries=geojson&"
                 "radiuses=" + ";".join(["10"] * len(tr["pts"])) + "&timestamps=" +
                 ";".join(map(str, tr["ts"])))
            st, b = Q.http_json(q)
            qs.append(quality(tr, b if st == 200 else {}))
            codes[b.get("code") if isinstance(b, dict) else st] = codes.get(
                b.get("code") if isinstance(b, dict) else st, 0) + 1
    finally:
        o.stop()
    gp, osrm = sum(ctx.gp_quality) / len(qs), sum(qs) / len(qs)
    print(f"  quality on {len(qs)} traces: gpath {gp:.4f}, OSRM {osrm:.4f} (OSRM answers {codes}, "
          f"per trace {[round(x, 2) for x in qs]})")
    assert gp >= osrm, (gp, osrm)


def main():
    ctx = Ctx()
    passed = failed = skipped = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            osm = os.path.join(HERE, "data", "osm", "match.osm")
            graphs = ["--graph", "m=osm:" + osm]
            if os.path.exists(LIE):
                graphs += ["--graph", "li=osm:" + LIE]
                ctx.lie = True
            ctx.d = H.Daemon(tmp, "main", graphs + ["--cache-path", ""])
            ctx.d2 = H.Daemon(tmp, "small", ["--graph", "m=osm:" + osm, "--cache-path", "",
                                             "--osrm-max-match-size", "10"])
            ctx.d.wait_ready(300)
            ctx.d2.wait_ready()
            if ctx.lie:
                ctx.traces = gen_traces(ctx, 30, seed=33)
            p, f, s = H.run_tests(TESTS, ctx, only=tuple(sys.argv[1:]))
            passed, failed, skipped = p, f, s
            if failed:
                print("--- main.log (tail)\n" + ctx.d.tail())
            for dm in (ctx.d, ctx.d2):
                if dm.stop() not in (0, None):
                    failed += 1
                    print("FAIL daemon exit status:\n" + dm.tail())
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(f"FAIL setup: {e!r}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
