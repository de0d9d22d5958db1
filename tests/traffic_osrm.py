#!/usr/bin/python3
"""traffic_osrm.py - live traffic equal to OSRM's (issue 30): on Liechtenstein (car), the same
segment speed file through the real OSRM v6 (osrm-contract --segment-speed-file, CH) and through
gpath (POST /v1/graphs/car/speeds), then the durations of random routes compared: median |duration
difference| <= 3% of OSRM's. The speed file is drawn from OSRM's own routes (annotations=nodes: the
OSM node pairs of their segments): every segment of every other route at 10 km/h, and one segment
of the rest closed (speed 0), so the routes that had them must change. A second check makes the
comparison able to fail: the traffic must move the routes (median change of OSRM's durations
>= 20%), and gpath must follow (the same check on gpath's own before/after).

Reuses bench/osrm_quality.py (Osrm, Gpath, road_points, helpers). Skips without the OSRM tarball
or the extract (make data). Prints PASS/FAIL/SKIP lines and "N passed, N failed, N skipped" last.
"""
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import urllib.request

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import osrm_quality as Q  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
GPATH = os.environ.get("GPATH_BIN") or os.path.join(ROOT, BUILD, "gpath")
DATA = os.environ.get("GPATH_DATA") or os.path.join(ROOT, "data")
TARBALL = os.path.join(ROOT, "..", "shared", "peers", "osrm", "osrm-v6.0.0-debian12-bin.tar.xz")
WORK = os.path.join(ROOT, BUILD, "osrm-quality")
PAIRS, SEED, MAX_MEDIAN = 80, 30, 3.0
TOKEN = "traffic-token"


def durations(url, pairs):
    out = []
    for a, b in pairs:
        r = Q.route(url, "driving", a, b)
        out.append(r["duration"] if r else None)
    return out


def speed_file(osrm_url, pairs):
    """Lines of the speed file from OSRM's routes between the pairs (node annotations)."""
    lines = {}
    for i, (a, b) in enumerate(pairs):
        st, r = Q.http_json(f"{osrm_url}/route/v1/driving/{a[0]:.6f},{a[1]:.6f};"
                            f"{b[0]:.6f},{b[1]:.6f}?overview=false&annotations=nodes")
        if st != 200 or not r.get("routes"):
            continue
        nodes = [n for leg in r["routes"][0]["legs"] for n in leg["annotation"]["nodes"]]
        segs = [(u, v) for u, v in zip(nodes, nodes[1:]) if u != v]
        if not segs:
            continue
        if i % 2 == 0:
            for u, v in segs:
                lines[(u, v)] = 10
        else:
            u, v = segs[len(segs) // 2]
            lines[(u, v)] = 0
    return "".join(f"{u},{v},{s}\n" for (u, v), s in lines.items())


def rel_diffs(xs, ys):
    return [abs(x - y) / y * 100 for x, y in zip(xs, ys) if x is not None and y and y > 0]


def main():
    results = []

    def check(name, ok, detail):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")

    pbf = os.path.join(DATA, "osm", "liechtenstein-latest.osm.pbf")
    for what, path in (("OSRM tarball", TARBALL), ("extract (make data)", pbf), ("gpath", GPATH)):
        if not os.path.exists(path):
            print(f"SKIP traffic_osrm: no {what} at {path}")
            print("0 passed, 0 failed, 1 skipped")
            return 0
    os.makedirs(WORK, exist_ok=True)
    log = open(os.path.join(WORK, "traffic_osrm.log"), "w")
    osrm = Q.Osrm(TARBALL, WORK, 2, log)
    tmp = tempfile.mkdtemp(prefix="gpath-traffic-osrm-")
    gp = None
    try:
        base = osrm.prepare(pbf, "car", WORK)
        url = osrm.serve(base)
        rng = random.Random(SEED)
        pts = Q.road_points(url, "driving", Q.MAPS["liechtenstein"][1], 2 * PAIRS, rng)
        pairs = list(zip(pts[0::2], pts[1::2]))
        o_before = durations(url, pairs)
        text = speed_file(url, pairs)
        osrm.stop()
        speeds = os.path.join(WORK, "traffic-speeds.csv")
        with open(speeds, "w") as f:
            f.write(text)
        # OSRM: the extract copied, contracted again with the speed file
        d = os.path.join(WORK, "liechtenstein-car-traffic")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(os.path.dirname(base), d, symlinks=True)
        tbase = os.path.join(d, "map.osrm")
        osrm.run([os.path.join(osrm.dir, "bin", "osrm-contract"), "-t", "2",
                  "--segment-speed-file", speeds, tbase])
        url = osrm.serve(tbase)
        o_after = durations(url, pairs)
        osrm.stop()
        # gpath: the same file POSTed
        gp = Q.Gpath(GPATH, pbf, ["car"], tmp, log, ["--operator-token", TOKEN, "--cch", "on"])
        g_before = durations(gp.url, pairs)
        req = urllib.request.Request(gp.url + "/v1/graphs/car/speeds", data=text.encode(),
                                     method="POST", headers={"Content-Type": "text/csv",
                                                             "Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(req, timeout=120) as r:
            applied = json.loads(r.read())
        g_after = durations(gp.url, pairs)
        n = text.count("\n")
        print(f"speed file: {n} segments, gpath: {applied['unknown']} unknown, "
              f"{applied['arcs_changed']} arcs changed ({applied['arcs_closed']} closed), "
              f"build {applied['build_ms']:.1f} ms, attach {applied['attach_ms']:.1f} ms")
        moved = statistics.median(rel_diffs(o_after, o_before))
        gmoved = statistics.median(rel_diffs(g_after, g_before))
        check("traffic_moves_routes", moved >= 20 and gmoved >= 20,
              f"median change of durations: OSRM {moved:.1f}%, gpath {gmoved:.1f}% (>= 20%)")
        check("unknown_segments", applied["unknown"] == 0,
              f"{applied['unknown']} of {n} segments unknown to gpath (0 expected)")
        both = [(g, o) for g, o in zip(g_after, o_after) if g is not None and o is not None]
        d_after = rel_diffs([g for g, _ in both], [o for _, o in both])
        med = statistics.median(d_after)
        base_med = statistics.median(rel_diffs(g_before, o_before))
        check("duration_median_after_traffic", med <= MAX_MEDIAN,
              f"median |duration difference| {med:.2f}% on {len(both)} routes (<= {MAX_MEDIAN}%; "
              f"before the traffic {base_med:.2f}%); no route: gpath "
              f"{sum(g is None for g in g_after)}, OSRM {sum(o is None for o in o_after)}")
    finally:
        osrm.stop()
        if gp:
            gp.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        log.close()
    ok = sum(results)
    print(f"{ok} passed, {len(results) - ok} failed, 0 skipped")
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
