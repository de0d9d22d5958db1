#!/usr/bin/python3
"""traffic_test.py - live traffic (docs/traffic.md) against the real `gpath serve`, on the hand-made
tests/data/osm/traffic.osm: a primary road Main 1 - 2 - 3 - 6 along 45.000 N and a Detour 1 - 4 - 5 - 3
north of it (2, 4, 5 are shape points). Expectations are literal: Main 1 -> 6 is 1179.4 m, 65.3 s at
car.lua's 65 km/h; the segment 1 -> 2 (393.1 m) at 5 km/h costs 283.0 s, which moves the route onto
the Detour (1846.5 m, 102.3 s); a turn penalty of 600 s on 5 -> 3 -> 6 moves it back onto the slow
Main (283.0 + 43.6 = 326.6 s).

Prints PASS/FAIL lines and "N passed, N failed, N skipped" last.
"""
import json
import os
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402  (Daemon, validate)

OSM = os.path.join(H.ROOT, "tests", "data", "osm", "traffic.osm")
ROUTE = "/route/v1/driving/7.0,45.0;7.015,45.0?overview=false"
TABLE = "/table/v1/driving/7.0,45.0;7.015,45.0;7.010,45.003?annotations=duration"
TESTS = []
BASE = (65.3, 1179.4)     # Main
DETOUR = (102.3, 1846.5)  # Main's first segment at 5 km/h: the Detour
SLOW_MAIN = (326.6, 1179.4)  # and a 600 s penalty on 5 -> 3 -> 6: Main again


def test(fn):
    TESTS.append(fn)
    return fn


class Skip(Exception):
    pass


class Ctx:
    d = None


def route(d):
    st, _, b = d.call("GET", ROUTE)
    assert st == 200, b
    r = b["routes"][0]
    return (r["duration"], r["distance"]), b["data_version"]


def post(d, kind, text, query="", token=H.TOKEN):
    return d.call("POST", f"/v1/graphs/t/{kind}{query}", raw=text.encode(),
                  headers={"Content-Type": "text/csv"}, token=token)


def delete(d, kind):
    st, _, b = d.call("DELETE", f"/v1/graphs/t/{kind}", token=H.TOKEN)
    assert st == 200, b
    return b


def reset(d):
    delete(d, "speeds")
    delete(d, "turn-penalties")
    got, _ = route(d)
    assert got == BASE, got


def graph_version(d):
    st, _, b = d.call("GET", "/v1/graphs/t")
    assert st == 200, b
    return b


@test
def base_route_and_data_version(c):
    got, ver = route(c.d)
    assert got == BASE, got
    info = graph_version(c.d)
    assert ver == info["version"] == info["data_version"], (ver, info)
    assert "traffic" not in info, info["traffic"]
    # /v1 answers carry it too
    st, _, b = c.d.call("GET", "/v1/graphs/t/route?from=7.0,45.0&to=7.015,45.0")
    assert st == 200 and b["data_version"] == ver, b


@test
def speed_file_moves_route_to_detour(c):
    _, v0 = route(c.d)
    st, _, b = post(c.d, "speeds", "1,2,5\n")
    assert st == 200, b
    assert b["entries"] == 1 and b["unknown"] == 0 and b["arcs_changed"] == 1, b
    assert b["previous_version"] == v0 and b["data_version"] != v0, b
    got, ver = route(c.d)
    assert got == DETOUR, got
    assert ver == b["data_version"], (ver, b)
    info = graph_version(c.d)
    sp = info["traffic"]["speeds"]
    assert len(sp) == 1 and sp[0]["source"] == "POST" and sp[0]["entries"] == 1, sp
    assert sp[0]["expires_at"] is None and sp[0]["age_s"] >= 0, sp
    assert info["traffic"]["turn_penalties"] == [], info
    # the other direction (2 -> 1) is another segment: unchanged
    st, _, b = c.d.call("GET", "/route/v1/driving/7.015,45.0;7.0,45.0?overview=false")
    assert st == 200 and b["routes"][0]["duration"] == BASE[0], b
    reset(c.d)


@test
def closed_segment_and_unknown_segments(c):
    # 2 -> 3 closed (speed 0); 1 -> 3 and 7 -> 8 are no segments of the map (1 and 3 are not
    # consecutive nodes of a way): counted, not fatal
    st, _, b = post(c.d, "speeds", "2,3,0\n1,3,50\n7,8,30,12.5\n")
    assert st == 200, b
    assert b["entries"] == 3 and b["unknown"] == 2 and b["arcs_closed"] == 1, b
    got, _ = route(c.d)
    assert got == DETOUR, got
    reset(c.d)


def geojson(d, query=""):
    st, h, b = d.call("GET", "/v1/graphs/t/traffic.geojson" + query)
    assert st == 200, (st, b)
    return json.loads(b) if isinstance(b, str) else b


@test
def traffic_geojson_slowed_arcs(c):
    # no traffic: an empty collection for the graph's own version
    b = geojson(c.d)
    assert b["type"] == "FeatureCollection" and b["features"] == [], b
    assert b["data_version"] == graph_version(c.d)["version"] and b["expires_at"] is None, b
    # 1 -> 2 at 5 km/h: the arc 1 -> 3 of Main (shape point 2) is slowed: 786.27 m in
    # 283.0 + 21.8 s = 9.3 km/h against the profile's 65 km/h (car.lua's primary; 43.5 s once
    # rounded to deciseconds: 65.1 km/h)
    st, _, p = post(c.d, "speeds", "1,2,5\n", query="?ttl_s=600")
    assert st == 200, p
    b = geojson(c.d)
    assert b["data_version"] == p["data_version"] and b["slowed"] == 1 and b["closed"] == 0, b
    assert len(b["features"]) == 1, b
    f = b["features"][0]
    assert f["geometry"] == {"type": "LineString",
                             "coordinates": [[7.0, 45.0], [7.005, 45.0], [7.01, 45.0]]}, f
    pr = f["properties"]
    assert pr["from"] == 1 and pr["to"] == 3 and pr["closed"] is False, pr
    assert pr["speed_kmh"] == 9.3 and pr["profile_kmh"] == 65.1 and pr["ratio"] == 0.143, pr
    assert pr["length_m"] == 786.27 and pr["expires_at"] == b["expires_at"] is not None, pr
    # a bbox away from the road: nothing; one crossing it: the arc
    assert geojson(c.d, "?bbox=7.02,45.01,7.03,45.02")["features"] == []
    assert len(geojson(c.d, "?bbox=7.004,44.99,7.006,45.01")["features"]) == 1
    st, _, e = c.d.call("GET", "/v1/graphs/t/traffic.geojson?bbox=7,45,6")
    assert st == 400 and "bbox" in e["message"], e
    reset(c.d)
    # a closed segment: speed 0, ratio 0, closed
    post(c.d, "speeds", "2,3,0\n")
    b = geojson(c.d)
    assert b["closed"] == 1 and len(b["features"]) == 1 and b["expires_at"] is None, b
    pr = b["features"][0]["properties"]
    assert pr["closed"] is True and pr["speed_kmh"] == 0 and pr["ratio"] == 0, pr
    reset(c.d)
    assert geojson(c.d)["features"] == []


@test
def turn_penalty_file(c):
    post(c.d, "speeds", "1,2,5\n")
    _, v1 = route(c.d)
    st, _, b = post(c.d, "turn-penalties", "5,3,6,600\n")
    assert st == 200, b
    assert b["turns_changed"] == 1 and b["unknown"] == 0 and b["previous_version"] == v1, b
    got, ver = route(c.d)
    assert got == SLOW_MAIN, got
    assert ver == b["data_version"] != v1
    # the weight column and extra columns of OSRM's format are accepted; an unknown turn counted
    st, _, b = post(c.d, "turn-penalties", "1,3,6,5,,junk\n")
    assert st == 200 and b["unknown"] == 1, b
    # DELETE of the penalties: the Detour again, with the version it had
    b = delete(c.d, "turn-penalties")
    got, ver = route(c.d)
    assert got == DETOUR and ver == v1 == b["data_version"], (got, ver, v1)
    reset(c.d)


@test
def rejected_file_changes_nothing(c):
    post(c.d, "speeds", "1,2,5\n")
    before, v = route(c.d)
    for text, line in (("1,2,5\n3,x,7\n", 2), ("2,3,40\n\n4,5\n", 3), ("1,2,-3\n", 1),
                       ("1,2,5,fast\n", 1)):
        st, _, b = post(c.d, "speeds", text)
        assert st == 400 and b["code"] == "InvalidQuery", b
        assert f"line {line}:" in b["message"], b
    st, _, b = post(c.d, "turn-penalties", "5,3,6\n")
    assert st == 400 and "line 1:" in b["message"], b
    st, _, b = post(c.d, "speeds", "")
    assert st == 400, b
    st, _, b = post(c.d, "speeds", "1,2,5\n", query="?ttl_s=-1")
    assert st == 400 and "ttl_s" in b["message"], b
    st, _, b = post(c.d, "speeds", "1,2,5\n", token=None)
    assert st == 401, b
    after, v2 = route(c.d)
    assert after == before == DETOUR and v2 == v, (after, v2, v)
    assert len(graph_version(c.d)["traffic"]["speeds"]) == 1
    reset(c.d)


@test
def expiry(c):
    _, v0 = route(c.d)
    st, _, b = post(c.d, "speeds", "1,2,5\n", query="?ttl_s=1")
    assert st == 200 and b["ttl_s"] == 1, b
    got, _ = route(c.d)
    assert got == DETOUR, got
    assert graph_version(c.d)["traffic"]["speeds"][0]["expires_at"] is not None
    t0 = time.time()
    while time.time() - t0 < 10:
        got, ver = route(c.d)
        if got == BASE:
            break
        time.sleep(0.2)
    assert got == BASE and ver == v0, (got, ver)
    assert "traffic" not in graph_version(c.d)


@test
def newer_files_replace_and_cover(c):
    def sets():
        return [(x["entries"], x["expires_at"] is None)
                for x in graph_version(c.d)["traffic"]["speeds"]]

    def wait_sets(want):
        t0 = time.time()
        while time.time() - t0 < 10 and sets() != want:
            time.sleep(0.2)
        assert sets() == want, (sets(), want)

    # a newer file with the same segments that expires no sooner replaces the older one at once
    st, _, a = post(c.d, "speeds", "1,2,5\n", query="?ttl_s=1")
    assert st == 200, a
    st, _, b = post(c.d, "speeds", "1,2,5\n")
    assert st == 200 and b["data_version"] == a["data_version"], (a, b)
    assert sets() == [(1, True)], sets()
    assert "event=traffic_replaced graph=t sets=1" in c.d.full_log()
    # one expiring under two newer ones that have its segments between them: no version is built
    delete(c.d, "speeds")
    st, _, o = post(c.d, "speeds", "1,2,5\n2,3,65\n", query="?ttl_s=1")
    assert st == 200 and o["data_version"] == b["data_version"], (o, b)
    st, _, n = post(c.d, "speeds", "1,2,5\n")
    assert st == 200 and n["data_version"] == o["data_version"], n
    st, _, n = post(c.d, "speeds", "2,3,65\n")
    assert st == 200 and n["data_version"] == o["data_version"], n
    assert sets() == [(2, False), (1, True), (1, True)], sets()
    applied = c.d.full_log().count("event=traffic_applied")
    wait_sets([(1, True), (1, True)])
    log = c.d.full_log()
    assert "event=traffic_expired graph=t sets=1 version=%s unchanged=1" % n["data_version"] in log
    assert log.count("event=traffic_applied") == applied, log[-2000:]
    got, ver = route(c.d)
    assert got == DETOUR and ver == n["data_version"], (got, ver, n)
    # a newer file expiring over an older one: the older one's speed is in force again
    st, _, f = post(c.d, "speeds", "1,2,65\n", query="?ttl_s=1")
    assert st == 200 and f["data_version"] != n["data_version"], f
    got, _ = route(c.d)
    assert got == BASE, got
    wait_sets([(1, True), (1, True)])
    got, ver = route(c.d)
    assert got == DETOUR and ver == n["data_version"], (got, ver, n)
    reset(c.d)


def thread_nices(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                out.append(int(f.read().rsplit(")", 1)[1].split()[16]))  # field 19: nice
        except (OSError, IndexError, ValueError):
            pass
    return out


@test
def requests_below_changes(c):
    # the request threads run at query_nice (5 by default); a POST's file is applied on the
    # traffic thread, at the server's priority, and answers as before
    for _ in range(8):
        route(c.d)
    nices = thread_nices(c.d.proc.pid)
    assert 5 in nices and 0 in nices, nices
    _, v0 = route(c.d)
    st, _, b = post(c.d, "speeds", "1,2,5\n")
    assert st == 200 and b["previous_version"] == v0, b
    got, ver = route(c.d)
    assert got == DETOUR and ver == b["data_version"], (got, ver, b)
    reset(c.d)


@test
def concurrent_updates_never_mix_versions(c):
    reset(c.d)
    # the durations each version must answer with
    _, v0 = route(c.d)
    expect = {v0: BASE[0]}
    stop = threading.Event()
    bad, seen = [], set()

    def reader():
        while not stop.is_set():
            st, _, b = c.d.call("GET", TABLE, check=False)
            if st != 200:
                bad.append(b)
                continue
            _, _, r = c.d.call("GET", ROUTE, check=False)
            seen.add(b["data_version"])
            cell = b["durations"][0][1]
            if b["data_version"] in expect and abs(cell - expect[b["data_version"]]) > 0.05:
                bad.append((b["data_version"], cell))
            if r["data_version"] in expect and r["routes"][0]["duration"] != expect[r["data_version"]]:
                bad.append((r["data_version"], r["routes"][0]["duration"]))

    st, _, b = post(c.d, "speeds", "1,2,5\n")
    expect[b["data_version"]] = DETOUR[0]
    reset(c.d)
    ths = [threading.Thread(target=reader) for _ in range(3)]
    for t in ths:
        t.start()
    for _ in range(15):
        post(c.d, "speeds", "1,2,5\n")
        delete(c.d, "speeds")
    stop.set()
    for t in ths:
        t.join()
    assert not bad, bad[:5]
    assert len(seen) >= 2, seen


@test
def file_reread_on_change(c):
    tmp = tempfile.mkdtemp(prefix="gpath-traffic-")
    path = os.path.join(tmp, "speeds.csv")
    tpath = os.path.join(tmp, "turns.csv")
    with open(path, "w") as f:
        f.write("1,2,5\n")
    d = H.Daemon(tmp, "files", ["--graph", "t=" + OSM, "--admin-token", H.TOKEN,
                                "--traffic-speed-files", "t=" + path,
                                "--traffic-turn-files", "t=" + tpath, "--traffic-poll-s", "1"])
    try:
        d.wait_ready()

        def wait_for(want, timeout=10):
            t0 = time.time()
            while time.time() - t0 < timeout:
                got, ver = route(d)
                if got == want:
                    return ver
                time.sleep(0.2)
            raise AssertionError(f"route {got}, want {want}")

        v1 = wait_for(DETOUR)
        info = graph_version(d)["traffic"]
        assert info["speeds"][0]["source"] == "file:" + path, info
        with open(tpath, "w") as f:
            f.write("5,3,6,600\n")
        wait_for(SLOW_MAIN)
        # a malformed rewrite keeps what was applied
        with open(tpath, "w") as f:
            f.write("5,3,6,600\nnonsense\n")
        time.sleep(2.5)
        got, _ = route(d)
        assert got == SLOW_MAIN, got
        assert "event=traffic_file_failed" in d.full_log() and "line 2:" in d.full_log()
        with open(tpath, "w") as f:
            f.write("5,3,6,0\n")
        v3 = wait_for(DETOUR)
        assert v3 != v1  # a penalty of 0 is not the profile's turn cost
        # a reload re-reads the map: the traffic is applied again on the new base
        st, _, b = d.call("POST", "/admin/graphs/t/reload", token=H.TOKEN, check=False)
        assert st == 200, b
        wait_for(DETOUR)
    finally:
        d.stop()


@test
def turn_penalties_need_turn_costs(c):
    tmp = tempfile.mkdtemp(prefix="gpath-traffic-")
    d = H.Daemon(tmp, "noturns", ["--graph", "t=" + OSM, "--operator-token", H.TOKEN,
                                  "--turn-costs", "off"])
    try:
        d.wait_ready()
        st, _, b = post(d, "turn-penalties", "5,3,6,600\n")
        assert st == 400 and "turn costs" in b["message"], b
        st, _, b = post(d, "speeds", "1,2,5\n")
        assert st == 200, b
        got, _ = route(d)
        assert got == DETOUR, got
    finally:
        d.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="gpath-traffic-")
    c = Ctx()
    passed = failed = skipped = 0
    c.d = H.Daemon(tmp, "main", ["--graph", "t=" + OSM, "--operator-token", H.TOKEN,
                                 "--admin-token", H.TOKEN, "--traffic-poll-s", "1"])
    try:
        c.d.wait_ready()
        only = sys.argv[1:]
        for fn in TESTS:
            if only and fn.__name__ not in only:
                continue
            try:
                fn(c)
                passed += 1
                print(f"PASS {fn.__name__}")
            except Skip as e:
                skipped += 1
                print(f"SKIP {fn.__name__}: {e}")
            except Exception:
                failed += 1
                print(f"FAIL {fn.__name__}")
                traceback.print_exc()
    finally:
        c.d.stop()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
