#!/usr/bin/python3
"""regions_test.py - several regions in one server (run by tests/test_regions.sh): Monaco and
Liechtenstein served side by side, both car, against the real daemon. An OSRM profile alias picks
the graph whose road area holds every coordinate of the request, for route, table, nearest, trip
and match: a Monaco pair answers what a Monaco-only server answers, Liechtenstein likewise;
coordinates in both regions answer 400 InvalidQuery naming both; a coordinate in neither (Zurich,
or the sea between the two) answers NoSegment. /v1 keeps graph names.
Prints PASS/FAIL/SKIP lines and "N passed, N failed, N skipped" last.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402

DATA = os.environ.get("GPATH_DATA", os.path.join(H.ROOT, "..", "shared", "data"))
MONACO = os.path.join(DATA, "osm", "monaco.osm.pbf")
LIE = os.path.join(DATA, "osm", "liechtenstein-latest.osm.pbf")
TESTS = []

MC = [(7.4197, 43.7311), (7.4246, 43.7384), (7.4268, 43.7395)]   # Monte Carlo, Fontvieille
LI = [(9.5209, 47.1410), (9.5096, 47.1650), (9.5370, 47.0900)]   # Vaduz, Schaan, Triesen
ZURICH = (8.5400, 47.3700)
SEA = (7.4600, 43.7000)  # the Mediterranean, 3 km off Monaco's coast


def test(fn):
    TESTS.append(fn)
    return fn


class Ctx:
    both = mon = lie = None


def coords(pts):
    return ";".join(f"{x},{y}" for x, y in pts)


def get(d, path):
    st, _, body = d.call("GET", path)
    return st, body


def same_route(a, b):
    """The parts of a route answer that depend on the graph (hints and data_version too)."""
    assert a["code"] == b["code"] == "Ok", (a, b)
    assert a["data_version"] == b["data_version"]
    ra, rb = a["routes"][0], b["routes"][0]
    for k in ("distance", "duration", "weight", "geometry"):
        assert ra[k] == rb[k], (k, ra[k], rb[k])
    assert [w["location"] for w in a["waypoints"]] == [w["location"] for w in b["waypoints"]]


@test
def t_route_each_region(ctx):
    """A Monaco pair answers Monaco's route (as a Monaco-only server), Liechtenstein likewise."""
    for alias, d_alone, pts in (("driving", ctx.mon, MC), ("car", ctx.lie, LI)):
        path = f"/route/v1/{alias}/" + coords(pts[:2]) + "?overview=full"
        st, both = get(ctx.both, path)
        st2, alone = get(d_alone, path)
        assert st == st2 == 200, (st, both, st2, alone)
        same_route(both, alone)
        assert 500 < both["routes"][0]["distance"] < 5000, both["routes"][0]["distance"]


@test
def t_every_service(ctx):
    """table, nearest, trip and match pick the region too (the answers equal the lone server's)."""
    for d_alone, pts in ((ctx.mon, MC), (ctx.lie, LI)):
        for path in ("/table/v1/driving/" + coords(pts),
                     "/nearest/v1/driving/" + coords(pts[:1]) + "?number=3",
                     "/trip/v1/driving/" + coords(pts) + "?overview=false",
                     "/match/v1/driving/" + coords(pts[:2]) + "?overview=false&radiuses=60;60"):
            st, a = get(ctx.both, path)
            st2, b = get(d_alone, path)
            assert st == st2, (path, st, a, st2, b)
            assert a == b, (path, a, b)
            if "/match/" not in path:
                assert st == 200, (path, a)


@test
def t_mixed_regions(ctx):
    for svc in ("route", "table", "trip"):
        st, b = get(ctx.both, f"/{svc}/v1/driving/" + coords([MC[0], LI[0]]))
        assert st == 400 and b["code"] == "InvalidQuery", (svc, st, b)
        m = b["message"]
        assert "different regions" in m and "'monaco'" in m and "'liechtenstein'" in m, m
        assert m.index("'monaco'") < m.index("'liechtenstein'"), m  # in coordinate order


@test
def t_in_neither(ctx):
    for pt in (ZURICH, SEA):
        for svc in ("route", "nearest"):
            pts = [MC[0], pt] if svc == "route" else [pt]
            st, b = get(ctx.both, f"/{svc}/v1/driving/" + coords(pts))
            assert st == 400 and b["code"] == "NoSegment", (svc, pt, st, b)
            i = len(pts) - 1
            assert f"coordinate {i}: " in b["message"] and "'monaco'" in b["message"], b


@test
def t_graph_name_and_v1(ctx):
    """A graph name in {profile} keeps meaning that graph whatever the coordinates (snapping
    unbounded, as OSRM's with one dataset); /v1 names graphs as before."""
    st, b = get(ctx.both, "/route/v1/liechtenstein/" + coords(MC[:2]))
    assert st == 200 and all(w["location"][0] > 9 for w in b["waypoints"]), (st, b)
    st, b = get(ctx.both, "/route/v1/monaco/" + coords(MC[:2]))
    assert st == 200, b
    st, _, g = ctx.both.call("GET", "/v1/graphs")
    assert st == 200 and {x["name"] for x in g["graphs"]} >= {"monaco", "liechtenstein"}, g


def main():
    passed = failed = skipped = 0
    usable = all(os.path.exists(p) and subprocess.run(
        [H.BIN, "info", "--graph", "osm:" + p], capture_output=True).returncode == 0
        for p in (MONACO, LIE))
    if not usable:
        print(f"SKIP regions: {MONACO} and {LIE} are needed (make data copies them)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    ctx = Ctx()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            common = ["--cache-path", ""]
            ctx.both = H.Daemon(tmp, "both", ["--graph", "monaco=osm:" + MONACO,
                                              "--graph", "liechtenstein=osm:" + LIE] + common)
            ctx.mon = H.Daemon(tmp, "mon", ["--graph", "monaco=osm:" + MONACO] + common)
            ctx.lie = H.Daemon(tmp, "lie", ["--graph", "liechtenstein=osm:" + LIE] + common)
            for d in (ctx.both, ctx.mon, ctx.lie):
                d.wait_ready(timeout=120)
            passed, failed, skipped = H.run_tests(TESTS, ctx)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"FAIL setup: {e}")
        finally:
            for d in (ctx.both, ctx.mon, ctx.lie):
                if d:
                    if failed:
                        print(f"--- log (tail)\n{d.tail()}")
                    d.stop()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
