#!/usr/bin/python3
"""osrm_exclude.py - exclude= against the real OSRM (issue 30): OSRM v6's car.lua declares
motorway, toll and ferry excludable, so its CH data answers exclude=motorway; gpath answers it
with a metric of its own (engine/metric.h). For each case of CASES, 100 random pairs of road
points (OSRM's /nearest), both routed with the exclusion: the median |duration difference| must
be <= 3% (as the plain routes of tests/test_osrm_quality.sh) and every pair OSRM routes gpath
routes too; where the case says so, some of OSRM's routes must change under the exclusion (else
the comparison says nothing). Reuses bench/osrm_quality.py's OSRM and gpath runners. Run by
tests/test_osrm_exclude.sh; skips without the OSRM tarball or the extracts.
"""
import os
import random
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import osrm_quality as Q  # noqa: E402


def duration(url, alias, a, b, opts):
    st, r = Q.http_json(f"{url}/route/v1/{alias}/{a[0]:.6f},{a[1]:.6f};{b[0]:.6f},{b[1]:.6f}"
                        f"?overview=false{opts}")
    return r["routes"][0]["duration"] if st == 200 and r.get("code") == "Ok" else None


# (map, box, exclude class, routes must change): Liechtenstein as the issue asks (its extract has
# no motorway, so exclusion changes nothing there and equality is the plain one); Monaco with a box
# reaching the A8 motorway north of the city, where routes do change (OSRM's routes there do not
# change under exclude=toll: the toll section is only reached by points snapped off it).
CASES = [("liechtenstein", Q.MAPS["liechtenstein"][1], "motorway", False),
         ("monaco", (7.36, 43.725, 7.45, 43.76), "motorway", True),
         ("monaco", (7.36, 43.725, 7.45, 43.76), "toll", False)]


def run_case(osrm, binary, data, workdir, log, name, box, cls, must_change):
    """One map and class: the checks' (ok, what) pairs."""
    pbf = os.path.join(data, "osm", Q.MAPS[name][0])
    url = osrm.serve(osrm.prepare(pbf, "car", workdir))
    with tempfile.TemporaryDirectory() as tmp:
        gp = Q.Gpath(binary, pbf, ["car"], tmp, log)
        try:
            rng = random.Random(30)
            pts = Q.road_points(url, "driving", box, 200, rng)
            diffs, changed, missing, routed = [], 0, 0, 0
            for i in range(0, len(pts) - 1, 2):
                a, b = pts[i], pts[i + 1]
                o = duration(url, "driving", a, b, "&exclude=" + cls)
                o0 = duration(url, "driving", a, b, "")
                if o is None or o < 5:
                    continue
                routed += 1
                g = duration(gp.url, "car", a, b, "&exclude=" + cls)
                if g is None:
                    missing += 1
                    print(f"missing in gpath: {a} -> {b} (OSRM {o} s)")
                    continue
                diffs.append(abs(g - o) / o * 100)
                changed += o0 is not None and abs(o - o0) > 0.5
        finally:
            gp.stop()
    osrm.stop()
    med = statistics.median(diffs) if diffs else float("nan")
    print(f"{name} car exclude={cls}: {routed} pairs, {missing} missing in gpath, {changed} "
          f"changed by the exclusion in OSRM, median |duration diff| {med:.2f}%")
    checks = [(med <= 3.0, f"{name} exclude={cls}: median |duration diff| <= 3%"),
              (missing == 0, f"{name} exclude={cls}: every pair OSRM routes, gpath routes")]
    if must_change:
        checks.append((changed > 0, f"{name} exclude={cls}: some routes change"))
    return checks


def main():
    binary, workdir, data = sys.argv[1], sys.argv[2], sys.argv[3]
    tarball = os.path.join(HERE, "..", "..", "shared", "peers", "osrm",
                           "osrm-v6.0.0-debian12-bin.tar.xz")
    for f in [tarball] + [os.path.join(data, "osm", Q.MAPS[c[0]][0]) for c in CASES]:
        if not os.path.exists(f):
            print(f"SKIP: {f} absent")
            print("0 passed, 0 failed, 1 skipped")
            return 0
    os.makedirs(workdir, exist_ok=True)
    log = open(os.path.join(workdir, "osrm-exclude.log"), "w")
    osrm = Q.Osrm(tarball, workdir, 2, log)
    checks = []
    try:
        for c in CASES:
            checks += run_case(osrm, binary, data, workdir, log, *c)
    finally:
        osrm.stop()
    fails = 0
    for ok, what in checks:
        print(("PASS " if ok else "FAIL ") + what)
        fails += not ok
    print(f"{len(checks) - fails} passed, {fails} failed, 0 skipped")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
