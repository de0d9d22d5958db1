#!/usr/bin/python3
"""exclude_test.py - exclude= classes and per-request vehicle limits (engine/metric.h) over HTTP,
on the OSRM services and /v1, against the real daemon serving tests/data/osm/exclude.osm with the
car and the truck profile (run by tests/test_exclude.sh). Literal expectations: each section of
the map is a direct way A -> B of 1572.5 m and a 2723.6 m primary detour (65 km/h: 150.8 s; truck
60 km/h: 163.4 s); the direct way is a motorway (90 km/h: 62.9 s; truck 80 km/h: 70.8 s), a toll
road, a one-minute ferry, a 3.5 m low bridge, a 7.5 t bridge, an hgv=no road or a 12'6" (3.81 m)
underpass with a 2.2 m wide detour (primary: 87.1 s). Every answer is validated against
openapi.yaml. Prints PASS/FAIL lines and "N passed, N failed, N skipped" last.
"""
import os
import shutil
import sys
import tempfile
import traceback
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402

MAP = os.path.join(H.ROOT, "tests", "data", "osm", "exclude.osm")
SECTION = {"motorway": 7.0, "toll": 7.1, "ferry": 7.2, "bridge": 7.3, "weight": 7.4, "hgv": 7.5,
           "underpass": 7.6}
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def osrm(ctx, service, sec, opts="", profile="car"):
    """An OSRM request from A to B of a section; (status, body)."""
    lon = SECTION[sec]
    q = "overview=false&" + opts if service == "route" else opts
    st, _, b = ctx.d.call("GET", f"/{service}/v1/{profile}/{lon},45.0;{lon + 0.02:.2f},45.0?{q}")
    return st, b


def route(ctx, sec, opts="", profile="car"):
    st, b = osrm(ctx, "route", sec, opts, profile)
    assert st == 200, (sec, opts, b)
    r = b["routes"][0]
    return r["duration"], r["distance"]


def error(ctx, sec, opts, code, words, service="route", profile="car"):
    st, b = osrm(ctx, service, sec, opts, profile)
    assert st == 400 and b["code"] == code, (opts, st, b)
    for w in words:
        assert w in b["message"], (opts, b["message"], w)


@test
def t_exclude_classes(ctx):
    assert route(ctx, "motorway") == (62.9, 1572.5)
    assert route(ctx, "motorway", "exclude=motorway") == (150.8, 2723.6)
    assert route(ctx, "toll") == (87.1, 1572.5)
    assert route(ctx, "toll", "exclude=toll") == (150.8, 2723.6)
    assert route(ctx, "motorway", "exclude=toll") == (62.9, 1572.5)  # no toll on the motorway
    assert route(ctx, "ferry") == (60, 1572.5)
    assert route(ctx, "ferry", "exclude=ferry") == (150.8, 2723.6)
    assert route(ctx, "motorway") == (62.9, 1572.5)  # the graph itself is unchanged


@test
def t_exclude_invalid(ctx):
    # car.lua's excludable sets are single classes: OSRM answers InvalidValue for a combination
    error(ctx, "motorway", "exclude=motorway,toll", "InvalidValue", ["combination is not supported"])
    error(ctx, "motorway", "exclude=highway", "InvalidValue", ["'highway'", "toll, motorway, ferry"])
    error(ctx, "motorway", "exclude=motorway", "InvalidValue", ["defines no exclusion classes"],
          profile="grid")
    assert route(ctx, "motorway") == (62.9, 1572.5)


@test
def t_vehicle_limits(ctx):
    assert route(ctx, "bridge") == (87.1, 1572.5)
    assert route(ctx, "bridge", "vehicle_height=4") == (150.8, 2723.6)
    assert route(ctx, "bridge", "vehicle_height=3") == (87.1, 1572.5)
    assert route(ctx, "bridge", "vehicle_height=3.5") == (87.1, 1572.5)  # exactly as high: passes
    assert route(ctx, "weight", "vehicle_weight=8") == (150.8, 2723.6)
    assert route(ctx, "weight", "vehicle_weight=7.5") == (87.1, 1572.5)
    assert route(ctx, "hgv", "vehicle_weight=3.6") == (150.8, 2723.6)  # hgv=no: over 3.5 t
    assert route(ctx, "hgv", "vehicle_weight=3.5") == (87.1, 1572.5)
    assert route(ctx, "underpass", "vehicle_height=3.8") == (87.1, 1572.5)  # 12'6" = 3.81 m
    assert route(ctx, "underpass", "vehicle_height=3.9") == (150.8, 2723.6)
    assert route(ctx, "underpass", "vehicle_width=2.5") == (87.1, 1572.5)


@test
def t_vehicle_no_route(ctx):
    error(ctx, "underpass", "vehicle_height=3.9&vehicle_width=2.5", "NoRoute", ["vehicle_height=3.9"])
    error(ctx, "underpass", "vehicle_height=abc", "InvalidValue", ["vehicle_height=abc"])
    error(ctx, "underpass", "vehicle_weight=0", "InvalidValue", ["vehicle_weight=0"])
    error(ctx, "underpass", "vehicle_axleload=500", "InvalidValue", ["vehicle_axleload"])
    assert route(ctx, "underpass") == (87.1, 1572.5)


@test
def t_table_trip(ctx):
    st, b = osrm(ctx, "table", "motorway", "exclude=motorway")
    assert st == 200 and b["durations"] == [[0, 150.8], [150.8, 0]], b
    st, b = osrm(ctx, "table", "bridge", "vehicle_height=4&annotations=duration,distance")
    assert st == 200 and b["durations"] == [[0, 150.8], [150.8, 0]], b
    assert b["distances"] == [[0, 2723.6], [2723.6, 0]], b
    st, b = osrm(ctx, "trip", "motorway", "exclude=motorway&overview=false")
    assert st == 200 and b["trips"][0]["duration"] == 301.6, b


@test
def t_truck_profile(ctx):
    assert route(ctx, "motorway", profile="truck") == (70.8, 1572.5)  # 80 km/h
    assert route(ctx, "hgv", profile="truck") == (163.4, 2723.6)  # hgv=no: not for trucks
    assert route(ctx, "bridge", "vehicle_height=4", profile="truck") == (163.4, 2723.6)
    assert route(ctx, "motorway", "exclude=motorway", profile="truck") == (163.4, 2723.6)


@test
def t_v1(ctx):
    def v1(method, path, body=None):
        return ctx.d.call(method, path, body)
    q = urllib.parse.urlencode({"from": "7.0,45.0", "to": "7.02,45.0", "exclude": "motorway,toll"})
    st, _, b = v1("GET", "/v1/graphs/car/route?" + q)
    assert st == 200 and b["weight"] == 1508 and b["length_m"] == 2723.63, b
    version = b["version"]
    st, _, b = v1("GET", "/v1/graphs/car/route?from=7.0,45.0&to=7.02,45.0")
    assert st == 200 and b["weight"] == 629, b
    assert b["version"] == version  # the graph's data version, with or without exclude
    st, _, b = v1("POST", "/v1/graphs/car/table?vehicle_height=4",
                  {"sources": ["7.3,45.0"], "targets": ["7.32,45.0"]})
    assert st == 200 and b["weights"] == [[1508]], b
    st, _, b = v1("POST", "/v1/graphs/car/table", {"sources": [401], "targets": [402],
                                                   "vehicle_height": 4})
    assert st == 200 and b["weights"] == [[1508]], b
    st, _, b = v1("GET", "/v1/graphs/car/route?from=7.6,45.0&to=7.62,45.0&vehicle_height=3.9"
                  "&vehicle_width=2.5")
    assert st == 400 and b["code"] == "NoRoute" and "vehicle_height=3.9" in b["message"], b
    st, _, b = v1("GET", "/v1/graphs/car/route?from=7.0,45.0&to=7.02,45.0&exclude=ferrx")
    assert st == 400 and "'ferrx' is no exclusion class" in b["message"], b
    st, _, b = v1("GET", "/v1/graphs/car/route?from=7.0,45.0&to=7.02,45.0&vehicle_weight=-1")
    assert st == 400 and "vehicle_weight" in b["message"], b


def main():
    passed = failed = skipped = 0
    tmp = tempfile.mkdtemp(prefix="gpath-exclude-")
    ctx = type("C", (), {})()
    ctx.d = None
    try:
        ctx.d = H.Daemon(tmp, "main", ["--graph", "car=osm:" + MAP + "?profile=car",
                                       "--graph", "truck=osm:" + MAP + "?profile=truck",
                                       "--graph", "grid=grid:100:1", "--cache-path", "",
                                       "--metric-cache-size", "2"])
        ctx.d.wait_ready()
        for t in TESTS:
            name = t.__name__[2:]
            try:
                t(ctx)
                passed += 1
                print(f"PASS {name}")
            except Exception:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAIL {name}:\n{traceback.format_exc()}")
    except Exception:  # noqa: BLE001
        failed += 1
        print(f"FAIL setup:\n{traceback.format_exc()}")
    finally:
        if ctx.d:
            log = ctx.d.tail(4000)
            rc = ctx.d.stop()
            if rc != 0:
                failed += 1
                print(f"FAIL daemon exit code {rc}:\n{log}")
            elif failed:
                print("--- main.log (tail)\n" + log)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
