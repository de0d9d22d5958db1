#!/usr/bin/python3
"""match_bench.py - map matching (issue 33): gpath's /match/v1 and batch POST /v1/graphs/{g}/match
against OSRM v6 (CH, car.lua, osrm-routed) on the same OSM file and the same generated traces.

Traces: routes between random road points (gpath's /route/v1, fixed seed), sampled every S seconds
at the route's mean speed, each point moved by Gaussian noise of N metres; both servers get the
same coordinates, timestamps and radiuses (= N, the GPS accuracy OSRM's radiuses mean).
Measures, printed as Markdown (appended to --out):
  - quality per noise x sampling: share of the true route within 20 m of the matched lines
    (recall) and of the matched lines within 20 m of the true route (precision), means;
  - single-trace latency: p50 / p90 of one request at a time (overview=false) for traces of
    exactly 100 and 1,000 points along long routes;
  - batch throughput: GPS points per second for --batch traces (noise 10 m, 5 s) through gpath's
    NDJSON batch (chunks sent by concurrent clients) and through OSRM's /match/v1 (one GET per
    trace, --clients keep-alive connections; --osrm-batch traces), per map; on a CUDA server the
    Liechtenstein batch runs again on a second server that keeps batches on the CPU
    (gpu_match_min_traces 1e7), and the two answers to the first request are compared.
Stdlib only; reuses bench/osrm_quality.py (the OSRM release, geometry helpers).
Run by bench/gpu-match.sh.

  match_bench.py batch URL GRAPH OUT [--batch N] [--label NAME]
      the batch rows alone against a server that is already up (bench/gpu-traffic.sh with
      BENCH_MATCH=1: one import of a large map for both benchmarks): 200 routes of 2-10 km on
      GRAPH, N traces (10,000) as above; the table appended to OUT.
"""
import argparse
import concurrent.futures as cf
import http.client
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import osrm_quality as Q  # noqa: E402

_tl = threading.local()


def call(base, method, path, body=None, ctype="application/json", timeout=600):
    """One request over this thread's keep-alive connection to base: (status, bytes)."""
    conns = getattr(_tl, "conns", None)
    if conns is None:
        conns = _tl.conns = {}
    for attempt in (0, 1):
        c = conns.get(base)
        if c is None:
            u = urllib.parse.urlparse(base)
            c = conns[base] = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers={"Content-Type": ctype} if body else {})
            r = c.getresponse()
            data = r.read()
            if r.getheader("connection", "").lower() == "close":
                c.close()
                del conns[base]
            return r.status, data
        except (OSError, http.client.HTTPException):
            c.close()
            del conns[base]
            if attempt:
                raise
    raise AssertionError("unreachable")


def get_json(base, path):
    st, data = call(base, "GET", path)
    try:
        return st, json.loads(data)
    except ValueError:
        return st, {"code": f"HTTP {st}"}


def coords(pts):
    return ";".join(f"{x:.6f},{y:.6f}" for x, y in pts)


def routes(gp, graph, box, n, rng, lo, hi):
    """n routes (gpath /route/v1 between random points in box, the second within hi metres of
    the first each way) of lo..hi metres."""
    out, tries = [], 0
    dy = hi / 111195.0
    while len(out) < n and tries < 50 * n:
        tries += 1
        a = (rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3]))
        dx = dy / math.cos(math.radians(a[1]))
        b = (rng.uniform(max(box[0], a[0] - dx), min(box[2], a[0] + dx)),
             rng.uniform(max(box[1], a[1] - dy), min(box[3], a[1] + dy)))
        st, r = get_json(gp, f"/route/v1/{graph}/{coords([a, b])}?overview=full&"
                         "geometries=geojson&radiuses=300;300")
        if st != 200 or not lo < r["routes"][0]["distance"] < hi:
            continue
        rt = r["routes"][0]
        out.append({"line": rt["geometry"]["coordinates"],
                    "speed": rt["distance"] / max(rt["duration"], 1.0)})
    return out


def along(xy, d):
    """Points every d metres along a line (local metres), its start first."""
    out, carry = [xy[0]], 0.0
    for a, b in zip(xy, xy[1:]):
        L = math.hypot(b[0] - a[0], b[1] - a[1])
        s = d - carry
        while s <= L:
            t = s / L
            out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
            s += d
        carry = L - (s - d)
    return out


def trace(rt, rng, noise, step_s=None, npts=None):
    """A noisy trace of a route: a point every step_s seconds, or exactly npts points."""
    lat0 = rt["line"][0][1]
    xy = [Q.xy(x, y, lat0) for x, y in rt["line"]]
    length = sum(math.hypot(b[0] - a[0], b[1] - a[1]) for a, b in zip(xy, xy[1:]))
    d = rt["speed"] * step_s if step_s else length / max(npts - 1, 1) * 0.9999
    pts = along(xy, d)[:npts] if npts else along(xy, d)
    k = math.pi / 180 * Q.R_EARTH
    kx = k * math.cos(lat0 * math.pi / 180)
    noisy = [(round((x + rng.gauss(0, noise)) / kx, 6), round((y + rng.gauss(0, noise)) / k, 6))
             for x, y in pts]
    dt = d / rt["speed"]
    return {"line": rt["line"], "pts": noisy, "ts": [int(round(i * dt)) for i in range(len(pts))],
            "r": noise}


def query(t, overview):
    rad = max(1, round(t["r"]))
    return (f"?overview={overview}&geometries=geojson&generate_hints=false&radiuses=" +
            ";".join([str(rad)] * len(t["pts"])) + "&timestamps=" + ";".join(map(str, t["ts"])))


def quality(t, b):
    """(recall, precision): the true route within 20 m of the matched lines and back."""
    if not isinstance(b, dict) or b.get("code") != "Ok":
        return 0.0, 0.0
    lat0 = t["line"][0][1]
    true = [Q.xy(x, y, lat0) for x, y in t["line"]]
    got = []
    for m in b["matchings"]:
        g = [Q.xy(x, y, lat0) for x, y in m["geometry"]["coordinates"]]
        if len(g) > 1:
            got.append(g)
    if not got:
        return 0.0, 0.0
    rec = Q.covered(true, [p for g in got for p in g], 20.0)
    n = sum(len(Q.sample(g, 5.0)) for g in got)
    prec = sum(Q.covered(g, true, 20.0) * len(Q.sample(g, 5.0)) for g in got) / n
    return rec, prec


def osrm_start(o, base, threads, log):
    port = Q.free_port()
    p = subprocess.Popen([os.path.join(o.dir, "bin", "osrm-routed"), "--algorithm", "ch", "-t",
                          str(threads), "-i", "127.0.0.1", "-p", str(port),
                          "--max-matching-size", "5000", "--max-matching-radius", "-1", base],
                         env=o.env, stdout=log, stderr=subprocess.STDOUT)
    o.procs.append(p)
    url = f"http://127.0.0.1:{port}"
    Q.wait_http(url + "/nearest/v1/driving/0,0", p, "osrm-routed")
    return url


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def gpath_start(args, graphs, tmp, log, extra=()):
    port = Q.free_port()
    cmd = [args.bin, "serve", "--listen", "127.0.0.1", "--port", str(port), "--cache-path", "",
           "--backend", args.backend, "--log-level", "warn", "--max-url-bytes", "65536",
           "--max-body-bytes", str(256 << 20), "--match-max-batch-points", "100000000",
           "--match-max-traces", "100000", *extra]
    for name, f in graphs:
        cmd += ["--graph", f"{name}=osm:{f}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPATH_")}
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
    url = f"http://127.0.0.1:{port}"
    while True:
        if p.poll() is not None:
            raise RuntimeError(f"gpath serve exited with {p.returncode}")
        try:
            if call(url, "GET", "/ready")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    return p, url, time.time() - t0


def bbox(gp, graph):
    st, b = get_json(gp, f"/v1/graphs/{graph}/overview.geojson?max_edges=100")
    x0, y0, x1, y1 = b["bbox"]
    dx, dy = (x1 - x0) * 0.1, (y1 - y0) * 0.1
    return (x0 + dx, y0 + dy, x1 - dx, y1 - dy)


def run_many(fn, items, workers):
    with cf.ThreadPoolExecutor(workers) as ex:
        return list(ex.map(fn, items))


def measure_quality(args, gp, osrm, rts, out):
    out.append("## Quality (Liechtenstein)\n")
    out.append(f"{len(rts)} routes of 2-10 km, the same per setting; radiuses = the noise; "
               "recall = share of the true route within 20 m of the matched lines, precision = "
               "share of the matched lines within 20 m of the true route (means over traces; a "
               "trace answered with an error counts 0).\n")
    out.append("| noise m | sampling s | points (mean) | gpath recall | OSRM recall | "
               "gpath precision | OSRM precision | gpath >= OSRM |")
    out.append("|---|---|---|---|---|---|---|---|")
    for noise in args.noise:
        for step in args.steps:
            rng = random.Random(args.seed * 1000 + noise * 100 + step)
            ts = [trace(rt, rng, noise, step_s=step) for rt in rts]
            ts = [t for t in ts if len(t["pts"]) >= 3]

            def one(base, prof):
                return lambda t: quality(t, get_json(base, f"/match/v1/{prof}/{coords(t['pts'])}"
                                                     + query(t, "full"))[1])
            g = run_many(one(gp, "li"), ts, args.clients)
            o = run_many(one(osrm, "driving"), ts, args.clients) if osrm else None
            gr, gpr = statistics.mean(x[0] for x in g), statistics.mean(x[1] for x in g)
            orr = statistics.mean(x[0] for x in o) if o else float("nan")
            opr = statistics.mean(x[1] for x in o) if o else float("nan")
            ok = "yes" if o and gr >= orr else ("no" if o else "")
            lost = [round(a[0] - b[0], 3) for a, b in zip(g, o or g) if a[0] < b[0] - 0.05]
            print(f"quality noise {noise} step {step}: {len(ts)} traces gpath {gr:.4f}/{gpr:.4f} "
                  f"osrm {orr:.4f}/{opr:.4f}; gpath loses >5% on {len(lost)}", flush=True)
            npts = statistics.mean(len(t["pts"]) for t in ts)
            out.append(f"| {noise} | {step} | {npts:.0f} | {gr:.4f} | {orr:.4f} | {gpr:.4f} | "
                       f"{opr:.4f} | {ok} |")
    out.append("")


def measure_latency(args, gp, osrm, long_rts, out):
    out.append("## Single-trace latency (Liechtenstein)\n")
    out.append(f"One request at a time (keep-alive, overview=false), {len(long_rts)} traces per "
               "size along routes of 8-30 km, 5 m noise, radiuses 5, timestamps at the route's "
               "mean speed; 3 warm-up requests first.\n")
    out.append("| points | gpath p50 ms | gpath p90 ms | OSRM p50 ms | OSRM p90 ms | "
               "p50 ratio OSRM/gpath | gpath Ok | OSRM Ok |")
    out.append("|---|---|---|---|---|---|---|---|")
    for n in (100, 1000):
        rng = random.Random(args.seed + n)
        ts = [trace(rt, rng, 5.0, npts=n) for rt in long_rts]
        res = {}
        for name, base, prof in (("gpath", gp, "li"), ("osrm", osrm, "driving")):
            if not base:
                continue
            paths = [f"/match/v1/{prof}/{coords(t['pts'])}" + query(t, "false") for t in ts]
            for p in paths[:3]:
                call(base, "GET", p)
            ms, ok = [], 0
            for p in paths:
                t0 = time.perf_counter()
                st, b = call(base, "GET", p)
                ms.append((time.perf_counter() - t0) * 1000)
                ok += st == 200
            res[name] = (pct(ms, 0.5), pct(ms, 0.9), ok)
        g = res["gpath"]
        o = res.get("osrm", (float("nan"),) * 2 + (0,))
        print(f"latency {n} points: gpath p50 {g[0]:.2f} ms, OSRM p50 {o[0]:.2f} ms", flush=True)
        ratio = f"{o[0] / g[0]:.2f}" if osrm else ""
        out.append(f"| {n} | {g[0]:.2f} | {g[1]:.2f} | {o[0]:.2f} | {o[1]:.2f} | {ratio} | "
                   f"{g[2]}/{len(ts)} | {o[2]}/{len(ts)} |")
    out.append("")


def batch_traces(rts, n, seed):
    rng = random.Random(seed)
    return [trace(rts[i % len(rts)], rng, 10.0, step_s=5.0) for i in range(n)]


def measure_batch(args, gp, graph, osrm, rts, label, out, server="gpath batch"):
    """The batch rows; returns the answer to the first NDJSON request (for comparisons)."""
    ts = batch_traces(rts, args.batch, args.seed + 7)
    ts = [t for t in ts if len(t["pts"]) >= 2]
    pts = sum(len(t["pts"]) for t in ts)
    chunk = max(1, math.ceil(len(ts) / args.chunks))
    bodies = []
    for i in range(0, len(ts), chunk):
        bodies.append("".join(json.dumps({"coordinates": t["pts"], "timestamps": t["ts"],
                                          "radiuses": [t["r"]] * len(t["pts"])},
                                         separators=(",", ":")) + "\n"
                              for t in ts[i:i + chunk]).encode())

    def post(body):
        st, data = call(gp, "POST", f"/v1/graphs/{graph}/match?overview=false", body,
                        "application/x-ndjson")
        if st != 200:
            raise RuntimeError(f"batch answered {st}: {data[:300]!r}")
        return data
    # warm-up, untimed: one request of the first body's traces, enough of them to take the
    # server's GPU path (gpu_match_min_traces, 64 by default), which makes the graph's device
    # copy on its first batch (about 1 s on road-like 24M); its time is printed apart
    w0 = time.perf_counter()
    post(bodies[0])
    warm = time.perf_counter() - w0
    nw = bodies[0].count(b"\n")
    print(f"batch {label}: warm-up request ({nw} traces, the graph's "
          f"device copy on a GPU server) {warm:.2f} s", flush=True)
    t0 = time.perf_counter()
    answers = run_many(post, bodies, min(args.chunks, args.clients))
    dt = time.perf_counter() - t0
    ok = sum(json.loads(line).get("code") == "Ok" for a in answers for line in a.splitlines())
    rows = [(f"{server} ({len(bodies)} NDJSON requests of {chunk} traces, "
             f"{min(args.chunks, args.clients)} at once)", len(ts), pts, dt, ok)]
    print(f"batch {label}: gpath {len(ts)} traces {pts} points in {dt:.2f} s = "
          f"{pts / dt:,.0f} points/s ({ok} Ok)", flush=True)
    if osrm:
        sub = ts[:args.osrm_batch]
        paths = [f"/match/v1/driving/{coords(t['pts'])}" + query(t, "false") for t in sub]
        spts = sum(len(t["pts"]) for t in sub)
        t0 = time.perf_counter()
        st = run_many(lambda p: call(osrm, "GET", p)[0], paths, args.clients)
        dt = time.perf_counter() - t0
        rows.append((f"OSRM /match/v1 (one GET per trace, {args.clients} connections)", len(sub),
                     spts, dt, sum(s == 200 for s in st)))
        print(f"batch {label}: OSRM {len(sub)} traces {spts} points in {dt:.2f} s = "
              f"{spts / dt:,.0f} points/s", flush=True)
    base = rows[1][2] / rows[1][3] if len(rows) > 1 else None
    for name, n, p, dt, ok in rows:
        ratio = f"{p / dt / base:.2f}x" if base else ""
        out.append(f"| {label} | {name} | {n} | {p} | {dt:.2f} | {p / dt:,.0f} | {ok} | {ratio} |")
    return answers[0]


def batch_main(argv):
    ap = argparse.ArgumentParser(prog="match_bench.py batch")
    ap.add_argument("url")
    ap.add_argument("graph")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--clients", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--label", help="the map's name in the table (GRAPH)")
    args = ap.parse_args(argv)
    args.osrm_batch = 0
    st, h = get_json(args.url, "/health")
    rng = random.Random(args.seed)
    rts = routes(args.url, args.graph, bbox(args.url, args.graph), 200, rng, 2000, 10000)
    if len(rts) < 20:
        raise RuntimeError(f"only {len(rts)} routes of 2-10 km found")
    out = ["", f"Map matching batch on the same server ({h.get('backend')} backend; "
           f"{args.batch} traces along {len(rts)} routes of 2-10 km, 10 m noise, radiuses 10, a "
           "point every 5 s, overview=false; wall time from the first request to the last "
           "answer, after one untimed request of the first request's traces):", "",
           "| map | server | traces | points | seconds | points/s | Ok | ratio to OSRM |",
           "|---|---|---|---|---|---|---|---|"]
    measure_batch(args, args.url, args.graph, None, rts, args.label or args.graph, out)
    with open(args.out, "a") as f:
        f.write("\n".join(out) + "\n")
    return 0


def main(argv):
    if argv[:1] == ["batch"]:
        return batch_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--osm", required=True, help="Liechtenstein .osm.pbf")
    ap.add_argument("--gen1m", help="the generated 1M-intersection map (.osm or .osm.pbf)")
    ap.add_argument("--tarball", help="OSRM release tarball (absent: gpath rows only)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--out", required=True, help="Markdown file to append to")
    ap.add_argument("--traces", type=int, default=40, help="routes per quality setting")
    ap.add_argument("--noise", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--steps", type=int, nargs="+", default=[1, 5, 15, 30])
    ap.add_argument("--latency", type=int, default=30, help="traces per latency size")
    ap.add_argument("--batch", type=int, default=10000, help="traces per batch")
    ap.add_argument("--osrm-batch", type=int, default=2000, help="of them sent to OSRM")
    ap.add_argument("--chunks", type=int, default=16, help="NDJSON requests per batch")
    ap.add_argument("--clients", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="OSRM threads")
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args(argv)
    for k in ("bin", "osm", "gen1m", "tarball", "work", "out"):
        if getattr(args, k):
            setattr(args, k, os.path.abspath(getattr(args, k)))
    os.makedirs(args.work, exist_ok=True)
    log = open(os.path.join(args.work, "match-bench.log"), "a")
    out, procs, o = [], [], None
    try:
        graphs = [("li", args.osm)] + ([("g1m", args.gen1m)] if args.gen1m else [])
        p, gp, load_s = gpath_start(args, graphs, args.work, log)
        procs.append(p)
        st, h = get_json(gp, "/health")
        out.append(f"- gpath: `gpath serve --backend {args.backend}` (answering: "
                   f"{h.get('backend')}), graphs {', '.join(n + '=' + os.path.basename(f) for n, f in graphs)}"
                   f" loaded and ready in {load_s:.0f} s\n")
        osrm = None
        if args.tarball and os.path.exists(args.tarball):
            o = Q.Osrm(args.tarball, args.work, args.threads, log)
            t0 = time.time()
            osrm = osrm_start(o, o.prepare(args.osm, "car", args.work), args.threads, log)
            out.append(f"- OSRM v6.0.0: osrm-extract -p car.lua + osrm-contract ({time.time() - t0:.0f} s"
                       f" or cached), osrm-routed --algorithm ch -t {args.threads} "
                       "--max-matching-size 5000 --max-matching-radius -1 (Liechtenstein only: "
                       "osrm-contract takes over 10 minutes on gen1m)\n")
        else:
            out.append("- OSRM: no release given, gpath rows only\n")
        box = bbox(gp, "li")
        rng = random.Random(args.seed)
        rts = routes(gp, "li", box, args.traces, rng, 2000, 10000)
        if len(rts) < args.traces:
            raise RuntimeError(f"only {len(rts)} routes of 2-10 km found")
        long_rts = routes(gp, "li", box, args.latency, rng, 8000, 30000)
        measure_quality(args, gp, osrm, rts, out)
        measure_latency(args, gp, osrm, long_rts, out)
        out.append("## Batch throughput\n")
        out.append(f"{args.batch} traces of routes of 2-10 km (Liechtenstein: the quality routes "
                   "reused, each trace its own noise), 10 m noise, radiuses 10, a point every "
                   "5 s, overview=false; wall time from the first request to the last answer "
                   "(the client's JSON encoding before; one untimed request of the first "
                   "request's traces before that). ratio = points/s over OSRM's on the "
                   "same map.\n")
        out.append("| map | server | traces | points | seconds | points/s | Ok | ratio to OSRM |")
        out.append("|---|---|---|---|---|---|---|---|")
        first = measure_batch(args, gp, "li", osrm, rts, "liechtenstein", out,
                              f"gpath batch, {h.get('backend')} path")
        if h.get("backend") == "cuda":  # the CPU path on the same machine: its own server
            p2, gp2, _ = gpath_start(args, graphs[:1], args.work, log,
                                     ("--gpu-match-min-traces", "10000000"))
            procs.append(p2)
            first_cpu = measure_batch(args, gp2, "li", None, rts, "liechtenstein", out,
                                      "gpath batch, CPU path (gpu_match_min_traces 1e7)")
            same, nfirst = first == first_cpu, first.count(b"\n")
            print(f"batch liechtenstein: GPU path answers == CPU path answers (first request, "
                  f"{nfirst} traces): {same}", flush=True)
            out.append(f"\nThe GPU path's answers to the first request "
                       f"({nfirst} traces) {'are' if same else 'are NOT'} byte for "
                       "byte the CPU path's.\n")
        if args.gen1m:
            g1 = routes(gp, "g1m", bbox(gp, "g1m"), 200, rng, 2000, 10000)
            name = os.path.basename(args.gen1m).split(".")[0]
            measure_batch(args, gp, "g1m", None, g1, name, out)
        out.append("")
    finally:
        with open(args.out, "a") as f:
            f.write("\n".join(out) + "\n")
        for p in procs:
            p.terminate()
            p.wait()
        if o:
            o.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
