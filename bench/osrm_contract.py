#!/usr/bin/python3
"""osrm_alternatives.py - alternatives side by side: random routes with alternatives=3 against
gpath's /route/v1 and, when given, osrm-routed's, counting the alternatives found, those with a
U-turn (annotation nodes X, Y, X: an arc driven and then its reverse) and the largest duration
ratio of an alternative to its best route (docs/osrm.md, Alternatives).

    osrm_alternatives.py GPATH_URL PROFILE [OSRM_URL] [--n 200] [--seed 1]
        [--bbox 9.49,47.06,9.62,47.24]   (Liechtenstein's roads)
"""
import argparse
import json
import math
import random
import urllib.error
import urllib.request


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def uturns(route):
    n = 0
    for leg in route["legs"]:
        nodes = leg["annotation"]["nodes"]
        n += sum(1 for i in range(len(nodes) - 2) if nodes[i] == nodes[i + 2])
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpath")
    ap.add_argument("profile")
    ap.add_argument("osrm", nargs="?")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bbox", default="9.49,47.06,9.62,47.24")
    a = ap.parse_args()
    x0, y0, x1, y1 = map(float, a.bbox.split(","))
    rnd = random.Random(a.seed)
    pairs = [((rnd.uniform(x0, x1), rnd.uniform(y0, y1)), (rnd.uniform(x0, x1), rnd.uniform(y0, y1)))
             for _ in range(a.n)]
    peers = [("gpath", a.gpath, a.profile)] + ([("osrm", a.osrm, "driving")] if a.osrm else [])
    for name, base, prof in peers:
        s = dict(routes=0, alternatives=0, with_uturn=0, uturns=0, max_stretch=0.0)
        for p, q in pairs:
            r = get(f"{base}/route/v1/{prof}/{p[0]:.6f},{p[1]:.6f};{q[0]:.6f},{q[1]:.6f}"
                    "?alternatives=3&annotations=nodes&overview=false")
            if r.get("code") != "Ok":
                continue
            s["routes"] += 1
            best = r["routes"][0]["duration"]
            for alt in r["routes"][1:]:
                u = uturns(alt)
                s["alternatives"] += 1
                s["uturns"] += u
                s["with_uturn"] += u > 0
                if best > 0:
                    s["max_stretch"] = max(s["max_stretch"], round(alt["duration"] / best, 3))
        print(name, json.dumps(s))
    if not a.osrm:
        return
    same = both = agree = 0
    for i, (p, q) in enumerate(pairs):
        c = f"{p[0]:.6f},{p[1]:.6f};{q[0]:.6f},{q[1]:.6f}"
        g = get(f"{a.gpath}/route/v1/{a.profile}/{c}?annotations=nodes&overview=false")
        o = get(f"{a.osrm}/route/v1/driving/{c}?annotations=nodes&overview=false")
        if g.get("code") == "Ok" and o.get("code") == "Ok":
            both += 1
            same += g["routes"][0]["legs"][0]["annotation"]["nodes"] == \
                o["routes"][0]["legs"][0]["annotation"]["nodes"]
        b = f"bearings={(i * 90) % 360},30;&radiuses=200;&overview=false"
        g = get(f"{a.gpath}/route/v1/{a.profile}/{c}?{b}")
        o = get(f"{a.osrm}/route/v1/driving/{c}?{b}")
        if g.get("code") != "Ok" or o.get("code") != "Ok":
            agree += g.get("code") == o.get("code")
            continue
        gl, ol = g["waypoints"][0]["location"], o["waypoints"][0]["location"]
        agree += math.hypot((gl[0] - ol[0]) * 111320 * math.cos(math.radians(gl[1])),
                            (gl[1] - ol[1]) * 110540) < 5
    print("annotations", json.dumps({"routes": both, "identical_nodes": same}))
    print("bearings", json.dumps({"requests": len(pairs), "agree_with_osrm": agree}))


if __name__ == "__main__":
    main()
