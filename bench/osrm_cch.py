#!/usr/bin/env python3
"""osrm_cch.py - the HTTP clients of bench/gpu-osrm-cch.sh (standard library only: the GPU machine
has Python but none of our packages, and maybe no curl).

  osrm_cch.py ok URL
      exit 0 when GET URL answers 200 (a readiness probe)
  osrm_cch.py bbox URL
      the road bbox of a gpath graph (GET URL = .../overview.geojson), shrunk by 10% on each side,
      as minlon,minlat,maxlon,maxlat
  osrm_cch.py coords BBOX N SETS SEED
      SETS lines of N random lon,lat in BBOX joined by ';' (the same sets for every server)
  osrm_cch.py table BASE COORDS_FILE BUDGET_S
      GET BASE/table/v1/driving/<line> for each line of COORDS_FILE (a new connection each, no
      gzip), the first line as a warm-up that is not counted, then the others until BUDGET_S
      seconds have gone (at least one counted); prints one JSON object: median_s, min_s, max_s,
      n (counted), bytes (median answer size), nulls (null cells of all answers), errors
  osrm_cch.py costchange GPATH_URL GRAPH TOKEN BBOX SINGLE_REPS BATCH_REPS BATCH_FRACTION SEED
      time from a PATCH /v1/graphs/GRAPH/links to the first answers that use the new costs: each
      repetition takes the current shortest path s->t (GET .../route, node ids), lowers the cost of
      one of its links (its current cost, read as the route u->v of two consecutive path nodes,
      halved), so the s->t distance must drop, and PATCHes that link alone (single) or with
      BATCH_FRACTION of the graph's arcs (links of a shortest-path tree, off the path, new costs
      x0.5..2: batch). Then it polls GET .../route?from=s&to=t (node ids) and GET
      /route/v1/driving/S;T (coordinates of s and t, snapped) until each answers the lower cost.
      Prints one JSON object per repetition.
"""
import json
import random
import statistics
import sys
import time
import urllib.error
import urllib.request


def fetch(url, method="GET", body=None, headers=None, timeout=600):
    rq = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    with urllib.request.urlopen(rq, timeout=timeout) as r:
        return r.status, r.read()


def get_json(url):
    return json.loads(fetch(url)[1])


def cmd_ok(url):
    try:
        return 0 if fetch(url, timeout=5)[0] == 200 else 1
    except (OSError, urllib.error.URLError, ValueError):
        return 1


def cmd_bbox(url):
    b = get_json(url)["bbox"]
    dx, dy = (b[2] - b[0]) * 0.1, (b[3] - b[1]) * 0.1
    print("%.6f,%.6f,%.6f,%.6f" % (b[0] + dx, b[1] + dy, b[2] - dx, b[3] - dy))
    return 0


def cmd_coords(bbox, n, sets, seed):
    x0, y0, x1, y1 = (float(v) for v in bbox.split(","))
    rnd = random.Random(int(seed))
    for _ in range(int(sets)):
        print(";".join("%.6f,%.6f" % (x0 + rnd.random() * (x1 - x0), y0 + rnd.random() * (y1 - y0))
                       for _ in range(int(n))))
    return 0


def cmd_table(base, coords_file, budget_s):
    with open(coords_file) as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    times, sizes, nulls, errors = [], [], 0, []
    start = None
    for i, line in enumerate(lines):
        t0 = time.perf_counter()
        try:
            status, body = fetch(base + "/table/v1/driving/" + line)
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        except OSError as e:
            errors.append(str(e)[:120])
            continue
        dt = time.perf_counter() - t0
        try:
            doc = json.loads(body)
        except ValueError:
            doc = {}
        k = line.count(";") + 1
        rows = doc.get("durations") or []
        if status != 200 or doc.get("code") != "Ok" or len(rows) != k or any(len(r) != k for r in rows):
            errors.append("HTTP %d %s" % (status, body[:120].decode("utf-8", "replace")))
            continue
        if i == 0:  # warm-up
            start = time.perf_counter()
            continue
        nulls += sum(v is None for r in rows for v in r)
        times.append(dt)
        sizes.append(len(body))
        if time.perf_counter() - start >= float(budget_s):
            break
    out = {"n": len(times), "nulls": nulls, "errors": len(errors)}
    if errors:
        out["first_error"] = errors[0]
    if times:
        out.update(median_s=statistics.median(times), min_s=min(times), max_s=max(times),
                   bytes=int(statistics.median(sizes)))
    print(json.dumps(out))
    return 0 if times else 1


def cmd_costchange(gurl, graph, token, bbox, single_reps, batch_reps, frac, seed):
    base = "%s/v1/graphs/%s" % (gurl, graph)
    rnd = random.Random(int(seed))
    info = get_json(base)
    x0, y0, x1, y1 = (float(v) for v in bbox.split(","))
    near = get_json("%s/nearest?lon=%.6f&lat=%.6f" % (base, (x0 + x1) / 2, (y0 + y1) / 2))
    src = near["nodes"][0]["id"]
    sp = get_json("%s/sssp?source=%d" % (base, src))
    dist = dict(zip(sp["nodes"], sp["weights"]))
    tree = [(p, v, dist[v] - dist[p]) for v, p in zip(sp["nodes"], sp["predecessors"])
            if p is not None and dist.get(p) is not None and dist[v] > dist[p]]
    far = sorted((d, v) for v, d in dist.items() if d is not None)
    far = [v for _, v in far[len(far) // 2:]]  # targets in the farther half of the tree
    n_batch = max(1, int(round(info["edges"] * float(frac) / 2)))
    hdr = {"Content-Type": "application/json", "Authorization": "Bearer " + token}

    def osrm_weight(a, b):
        r = get_json("%s/route/v1/driving/%.6f,%.6f;%.6f,%.6f?overview=false" % (gurl, a[0], a[1], b[0], b[1]))
        return r["routes"][0]["weight"]

    reps = [("single", i) for i in range(int(single_reps))] + [("batch", i) for i in range(int(batch_reps))]
    for kind, _ in reps:
        t = rnd.choice(far)
        r = get_json("%s/route?from=%d&to=%d" % (base, src, t))
        path, d_old = r["path"], r["weight"]
        geo = (r.get("geometry") or {}).get("coordinates") or []
        a, b = (geo[0], geo[-1]) if geo else (None, None)  # the nodes' own coordinates
        w_old = osrm_weight(a, b) if a and b else None
        # a link of the current shortest path with a current cost >= 2 (a subpath of a shortest
        # path is shortest, so route u->v of consecutive nodes is the arc's cost)
        cands = list(zip(path, path[1:]))
        rnd.shuffle(cands)
        link = None
        for u, v in cands[:50]:
            c = get_json("%s/route?from=%d&to=%d" % (base, u, v))["weight"]
            if c >= 2:
                link = (u, v, c)
                break
        if link is None:
            print(json.dumps({"kind": kind, "error": "no link of cost >= 2 on the path"}))
            continue
        changes = [{"link": [link[0], link[1]], "cost": link[2] // 2}]
        if kind == "batch":
            on_path = set(frozenset(e) for e in zip(path, path[1:]))
            seen = set(on_path)
            for u, v, c in rnd.sample(tree, min(len(tree), n_batch * 2)):
                if len(changes) >= n_batch:
                    break
                key = frozenset((u, v))
                if key in seen:
                    continue
                seen.add(key)
                changes.append({"link": [u, v], "cost": max(1, int(c * rnd.uniform(0.5, 2.0)))})
        body = json.dumps({"links": changes}).encode()
        res = {"kind": kind, "links": len(changes), "body_bytes": len(body), "d_old": d_old}
        t0 = time.perf_counter()
        try:
            st, ans = fetch(base + "/links", "PATCH", body, hdr)
        except urllib.error.HTTPError as e:
            res["error"] = "PATCH HTTP %d %s" % (e.code, e.read()[:200].decode("utf-8", "replace"))
            print(json.dumps(res))
            continue
        res["patch_ms"] = (time.perf_counter() - t0) * 1e3
        res["version"] = json.loads(ans).get("version")
        polls = 0
        while time.perf_counter() - t0 < 60:
            polls += 1
            d_new = get_json("%s/route?from=%d&to=%d" % (base, src, t))["weight"]
            if d_new < d_old:
                res["node_route_ms"] = (time.perf_counter() - t0) * 1e3
                res["d_new"] = d_new
                break
        res["node_polls"] = polls
        if w_old is not None:
            while time.perf_counter() - t0 < 60:
                w_new = osrm_weight(a, b)
                if w_new < w_old - 1e-9:
                    res["osrm_route_ms"] = (time.perf_counter() - t0) * 1e3
                    break
        print(json.dumps(res), flush=True)
    return 0


def main(argv):
    cmds = {"ok": (cmd_ok, 1), "bbox": (cmd_bbox, 1), "coords": (cmd_coords, 4),
            "table": (cmd_table, 3), "costchange": (cmd_costchange, 8)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    return cmds[argv[1]][0](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
