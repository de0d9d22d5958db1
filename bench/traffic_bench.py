#!/usr/bin/env python3
"""traffic_bench.py - live traffic under load for bench/gpu-traffic.sh (issue 30 item 6).

  traffic_bench.py segments URL GRAPH BBOX FRACTION OUT
      draws random routes (GET /route/v1/driving/A;B?annotations=nodes) in BBOX until it holds
      FRACTION of the graph's directed arcs as distinct OSM node pairs (consecutive nodes of
      a route's annotation: directed segments as OSRM's --segment-speed-file names them) and
      writes them to OUT, one "from,to" a line. Prints RESULT segments=... routes=...
  traffic_bench.py updates URL GRAPH BBOX PID SEGMENTS SECONDS TOKEN SPEEDFILE
      once a second for SECONDS: a speed file of every segment at a new random speed (10-100
      km/h, seeded by the second) POSTed to /v1/graphs/GRAPH/speeds (ttl_s=5, so a few files
      are in force at once and the older ones expire), then GET /route/v1 between random
      places until an answer carries the POST's new version; the time from sending the POST to
      that answer, and the POST's own answer time. The server's RSS (VmRSS of PID) before the
      first update, its peak over the updates, and at the end (after the last file expired). Writes the last speed
      file to SPEEDFILE (for OSRM's customize / contract in the same run).
      Prints RESULT updates=... p50_ms=... p99_ms=... post_p50_ms=... failed=... rss_start=...
      rss_end=... in_order_ms=... (each update's time, in the order they were POSTed)

  traffic_bench.py phases LOG
      the phases of each new version as the server's debug log says them (event=traffic_version:
      parse, merge, build, attach, publish; event=traffic_phases: arcs, turns; event=cch_phases:
      prepare, GPU state / upload, device, fetch, witnesses): a markdown table of each numeric
      field's p50 / p90 / max over the run, then the lines of the first version, the slowest
      (by total_ms) and the last, as written.

The load itself (wrk at 64 connections on /route/v1) runs beside it, started by the shell script;
its failed requests are counted there.
"""
import http.client
import json
import re
import random
import statistics
import sys
import time
import urllib.parse


def conn(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)


def req(c, method, path, body=None, headers=None):
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    return r.status, data


def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def point(rng, bb):
    return f"{bb[0] + rng.random() * (bb[2] - bb[0]):.6f},{bb[1] + rng.random() * (bb[3] - bb[1]):.6f}"


def segments(url, graph, bbox, fraction, out):
    bb = [float(x) for x in bbox.split(",")]
    c = conn(url)
    st, data = req(c, "GET", f"/v1/graphs/{graph}")
    want = max(1, int(json.loads(data)["edges"] * float(fraction)))
    rng = random.Random(7)
    seen, order, routes, tries = set(), [], 0, 0
    while len(order) < want and tries < 20 * want:
        tries += 1
        st, data = req(c, "GET", f"/route/v1/driving/{point(rng, bb)};{point(rng, bb)}"
                       "?overview=false&annotations=nodes")
        if st != 200:
            continue
        routes += 1
        for leg in json.loads(data)["routes"][0]["legs"]:
            nodes = leg["annotation"]["nodes"]
            for a, b in zip(nodes, nodes[1:]):
                if (a, b) not in seen and a != b:
                    seen.add((a, b))
                    order.append((a, b))
    with open(out, "w") as f:
        for a, b in order[:want]:
            f.write(f"{a},{b}\n")
    print(f"RESULT segments={min(want, len(order))} wanted={want} routes={routes}")


def version_of(data):
    try:
        return json.loads(data).get("data_version")
    except ValueError:
        return None


def updates(url, graph, bbox, pid, segfile, seconds, token, speedfile):
    bb = [float(x) for x in bbox.split(",")]
    segs = [line.strip() for line in open(segfile) if line.strip()]
    post_c, probe_c = conn(url), conn(url)
    rng = random.Random(11)
    lat, post_ms, failed, seen_versions = [], [], 0, 0
    hdr = {"Content-Type": "text/csv"}
    if token:
        hdr["Authorization"] = "Bearer " + token
    rss_start = rss(pid)
    rss_peak = rss_start
    rss_at = []  # after each update: the 10th and the last tell growth per update
    start = time.time()
    body = b""
    for i in range(int(seconds)):
        srng = random.Random(1000 + i)
        body = "".join(f"{s},{srng.randint(10, 100)}\n" for s in segs).encode()
        t0 = time.time()
        try:
            st, data = req(post_c, "POST", f"/v1/graphs/{graph}/speeds?ttl_s=5", body, hdr)
        except (OSError, http.client.HTTPException):
            post_c = conn(url)
            failed += 1
            continue
        t1 = time.time()
        if st != 200:
            failed += 1
            sys.stderr.write(f"POST {st}: {data[:300]!r}\n")
            continue
        new = json.loads(data).get("version")
        post_ms.append((t1 - t0) * 1e3)
        while True:
            try:
                st, data = req(probe_c, "GET", f"/route/v1/driving/{point(rng, bb)};{point(rng, bb)}"
                               "?overview=false")
            except (OSError, http.client.HTTPException):
                probe_c = conn(url)
                continue
            if st == 200 and version_of(data) == new:
                lat.append((time.time() - t0) * 1e3)
                seen_versions += 1
                break
            if time.time() - t0 > 30:
                failed += 1
                break
        rss_at.append(rss(pid))
        rss_peak = max(rss_peak, rss_at[-1])
        nxt = start + i + 1
        if nxt > time.time():
            time.sleep(nxt - time.time())
    with open(speedfile, "wb") as f:
        f.write(body)
    # every POSTed file expired (ttl_s=5) and the version without them applied: the lowest of
    # five readings a second apart (a reading during the expiry's own apply holds two versions)
    time.sleep(8)
    ends = []
    for _ in range(5):
        req(probe_c, "GET", f"/route/v1/driving/{point(rng, bb)};{point(rng, bb)}?overview=false")
        ends.append(rss(pid))
        time.sleep(1)
    rss_end = min(ends)
    order = list(lat)  # in POST order: a start-up effect shows as the first ones
    lat.sort()
    # memory held per update: the least-squares slope of RSS over the updates after the 10th
    # (the first ones set up what every version reuses: spares, pools, page-locked buffers)
    def lsq(ys):
        if len(ys) < 2:
            return 0.0
        mx, my = (len(ys) - 1) / 2, statistics.mean(ys)
        return (sum((i - mx) * (y - my) for i, y in enumerate(ys))
                / sum((i - mx) ** 2 for i in range(len(ys))))
    slope = lsq(rss_at[9:])
    # and over the second half alone: growth that slows down (allocator arenas settling) against
    # growth that goes on (a leak) on a long run
    slope2 = lsq(rss_at[len(rss_at) // 2:])
    rss_10 = rss_at[min(9, len(rss_at) - 1)] if rss_at else rss_start

    def pct(p):
        return lat[min(len(lat) - 1, int(round(p / 100 * (len(lat) - 1))))] if lat else float("nan")
    print(f"RESULT updates={len(lat)} p50_ms={pct(50):.1f} p99_ms={pct(99):.1f} "
          f"max_ms={lat[-1] if lat else float('nan'):.1f} "
          f"post_p50_ms={statistics.median(post_ms) if post_ms else float('nan'):.1f} "
          f"failed={failed} rss_start={rss_start} rss_peak={rss_peak} rss_end={rss_end} "
          f"rss_10={rss_10} rss_last={rss_at[-1] if rss_at else rss_start} "
          f"rss_slope={slope:.0f} rss_slope2={slope2:.0f} "
          f"lines={len(segs)} "
          f"in_order_ms={','.join(f'{x:.0f}' for x in order)}")


PHASE_EVENTS = ("traffic_version", "traffic_phases", "cch_phases")


def phases(log):
    rows = {}
    last = {}
    groups, cur = [], []  # each version's lines: its cch / traffic phases, then traffic_version
    with open(log, errors="replace") as f:
        for line in f:
            ev = next((e for e in PHASE_EVENTS if f"event={e} " in line), None)
            if not ev:
                continue
            last[ev] = line[line.index("event="):].strip()
            cur.append(last[ev])
            if ev == "traffic_version":
                groups.append(cur)
                cur = []
            for tok in line.split():
                k, _, v = tok.partition("=")
                if not k.endswith("_ms"):
                    continue
                try:
                    rows.setdefault((ev, k), []).append(float(v))
                except ValueError:
                    pass
    if not rows:
        print("no phase lines in the log (the server ran above --log-level debug)")
        return
    print("| event | phase | p50 ms | p90 ms | max ms | versions |")
    print("|---|---|---:|---:|---:|---:|")
    for ev in PHASE_EVENTS:
        for (e, k), xs in rows.items():
            if e != ev:
                continue
            xs = sorted(xs)
            q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
            print(f"| {e} | {k[:-3]} | {q(0.5):.1f} | {q(0.9):.1f} | {xs[-1]:.1f} | {len(xs)} |")
    print()

    def total(g):
        m = re.search(r"total_ms=([0-9.]+)", g[-1])
        return float(m.group(1)) if m else 0.0
    # the first version, the slowest and the last, each with its own lines
    picks = []
    if groups:
        for what, g in (("first", groups[0]), ("slowest", max(groups, key=total)),
                        ("last", groups[-1])):
            if not any(g is x for _, x in picks):
                picks.append((what, g))
    for what, g in picks:
        print(f"  the {what} version ({groups.index(g) + 1} of {len(groups)}):")
        for line in g:
            print(f"    {line}")
    if not groups:
        for ev in PHASE_EVENTS:
            if ev in last:
                print(f"    {last[ev]}")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "phases":
        phases(sys.argv[2])
        return
    if len(sys.argv) < 2 or sys.argv[1] not in ("segments", "updates"):
        sys.exit(__doc__)
    if sys.argv[1] == "segments":
        segments(*sys.argv[2:7])
    else:
        updates(*sys.argv[2:10])


if __name__ == "__main__":
    main()
