#!/usr/bin/python3
"""osrm_guidance.py - how well gpath's OSRM route steps meet the real OSRM's on the same OSM file.

Random routes between points of a bounding box are asked of both servers (steps=true, full
GeoJSON overview). Only routes whose paths agree are compared (95% of each line's points within
20 m of the other line), since a maneuver on another path cannot match. For every OSRM step but
depart / arrive:
  - a roundabout-family step (roundabout, rotary, roundabout turn, exit roundabout, exit rotary)
    is met when gpath has a roundabout-family step within 40 m;
  - any other step is met when gpath has a step (not depart / arrive) within 30 m turning the same
    way (left, right, or neither, from the modifier).
Also counted: the same type and modifier at the same place, gpath steps OSRM has not (within
30 m), and intersections per route. Prints one JSON object.

  bench/osrm_guidance.py --osrm http://127.0.0.1:5000 --gpath http://127.0.0.1:8080 \\
      --graph li --bbox 9.47,47.05,9.63,47.27 --routes 200 --seed 1
"""
import argparse
import json
import math
import random
import sys
import urllib.request

RING = {"roundabout", "rotary", "roundabout turn", "exit roundabout", "exit rotary"}


def dist_m(a, b):
    r = math.pi / 180
    x = (b[0] - a[0]) * r * math.cos((a[1] + b[1]) / 2 * r)
    y = (b[1] - a[1]) * r
    return 6371000.0 * math.hypot(x, y)


def seg_dist(p, a, b):
    """Metres from p to segment a-b (local flat approximation)."""
    r = math.pi / 180
    k = math.cos(p[1] * r) * 6371000 * r
    ax, ay = (a[0] - p[0]) * k, (a[1] - p[1]) * 6371000 * r
    bx, by = (b[0] - p[0]) * k, (b[1] - p[1]) * 6371000 * r
    dx, dy = bx - ax, by - ay
    L = dx * dx + dy * dy
    t = 0 if L == 0 else max(0, min(1, -(ax * dx + ay * dy) / L))
    return math.hypot(ax + t * dx, ay + t * dy)


def near_line(p, line):
    return min(seg_dist(p, line[i], line[i + 1]) for i in range(len(line) - 1))


def agree(a, b):
    def frac(x, y):
        return sum(near_line(p, y) <= 20 for p in x) / len(x)
    return len(a) > 1 and len(b) > 1 and frac(a, b) >= 0.95 and frac(b, a) >= 0.95


def side(m):
    mod = m.get("modifier", "")
    return "left" if "left" in mod else "right" if "right" in mod else "none"


def route(base, prof, a, b):
    url = (f"{base}/route/v1/{prof}/{a[0]:.6f},{a[1]:.6f};{b[0]:.6f},{b[1]:.6f}"
           "?steps=true&overview=full&geometries=geojson")
    with urllib.request.urlopen(url, timeout=60) as r:
        d = json.load(r)
    return d["routes"][0] if d.get("code") == "Ok" and d.get("routes") else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--osrm", required=True)
    ap.add_argument("--gpath", required=True)
    ap.add_argument("--graph", default="driving")
    ap.add_argument("--bbox", required=True, help="minlon,minlat,maxlon,maxlat")
    ap.add_argument("--routes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=0, help="print this many unmet OSRM steps")
    ap.add_argument("--dump", help="write gpath's routes (a JSON array) to this file")
    o = ap.parse_args()
    x0, y0, x1, y1 = map(float, o.bbox.split(","))
    rnd = random.Random(o.seed)
    c = dict(routes=0, same_path=0, ring=0, ring_met=0, other=0, other_met=0, exact=0,
             gpath_steps=0, gpath_extra=0, osrm_intersections=0, gpath_intersections=0)
    by_type = {}
    shown = 0
    dumped = []
    errors = tries = 0
    while c["routes"] < o.routes:
        tries += 1
        if tries > 50 * o.routes:  # a server that stopped answering must not loop forever
            sys.exit(f"osrm_guidance: {c['routes']} routes of {o.routes} after {tries - 1} "
                     f"pairs ({errors} failed requests)")
        a = (rnd.uniform(x0, x1), rnd.uniform(y0, y1))
        b = (rnd.uniform(x0, x1), rnd.uniform(y0, y1))
        try:
            ro, rg = route(o.osrm, "driving", a, b), route(o.gpath, o.graph, a, b)
        except Exception as e:
            errors += 1
            if errors > 5:
                sys.exit(f"osrm_guidance: {errors} failed requests, the last: {e}")
            continue
        if not ro or not rg or ro["distance"] < 500:
            continue
        c["routes"] += 1
        dumped.append(rg)
        if not agree(ro["geometry"]["coordinates"], rg["geometry"]["coordinates"]):
            continue
        c["same_path"] += 1
        os_ = [s for leg in ro["legs"] for s in leg["steps"]]
        gs = [s for leg in rg["legs"] for s in leg["steps"]]
        c["osrm_intersections"] += sum(len(s["intersections"]) for s in os_)
        c["gpath_intersections"] += sum(len(s["intersections"]) for s in gs)
        gmid = [s for s in gs if s["maneuver"]["type"] not in ("depart", "arrive")]
        omid = [s for s in os_ if s["maneuver"]["type"] not in ("depart", "arrive")]
        for s in omid:
            m = s["maneuver"]
            t = m["type"]
            e = by_type.setdefault(t, [0, 0])
            e[0] += 1
            if t in RING:
                c["ring"] += 1
                ok = any(g["maneuver"]["type"] in RING and
                         dist_m(g["maneuver"]["location"], m["location"]) <= 40 for g in gmid)
                c["ring_met"] += ok
            else:
                c["other"] += 1
                ok = any(dist_m(g["maneuver"]["location"], m["location"]) <= 30 and
                         side(g["maneuver"]) == side(m) for g in gmid)
                c["other_met"] += ok
            e[1] += ok
            c["exact"] += any(dist_m(g["maneuver"]["location"], m["location"]) <= 30 and
                              g["maneuver"]["type"] == t and
                              g["maneuver"].get("modifier") == m.get("modifier") for g in gmid)
            if not ok and shown < o.show:
                shown += 1
                near = [(g["maneuver"]["type"], g["maneuver"].get("modifier"),
                         round(dist_m(g["maneuver"]["location"], m["location"])))
                        for g in gmid if dist_m(g["maneuver"]["location"], m["location"]) < 80]
                print(f"unmet {t} {m.get('modifier')} at {m['location']} ({s['name']}); "
                      f"gpath near: {near}", file=sys.stderr)
        c["gpath_steps"] += len(gmid)
        c["gpath_extra"] += sum(not any(dist_m(g["maneuver"]["location"], s["maneuver"]["location"])
                                        <= 30 for s in omid) for g in gmid)
    c["ring_rate"] = round(c["ring_met"] / c["ring"], 3) if c["ring"] else None
    c["other_rate"] = round(c["other_met"] / c["other"], 3) if c["other"] else None
    c["exact_rate"] = round(c["exact"] / (c["ring"] + c["other"]), 3) if c["ring"] + c["other"] else None
    c["by_type"] = {k: {"osrm": v[0], "met": v[1]} for k, v in sorted(by_type.items())}
    if o.dump:
        with open(o.dump, "w") as f:
            json.dump(dumped, f)
    print(json.dumps(c, indent=1))


if __name__ == "__main__":
    main()
