#!/usr/bin/env python3
"""metric_first.py BIN SPEC [ARGS...] - per-request metrics (engine/metric.h, issue 30): the first
request with a new exclude= combination against cached ones and plain routes, on a generated road
network (gen:N has motorways) served by `BIN serve --graph r=SPEC ARGS`.

Four distinct keys on /v1 route (motorway; motorway,toll; motorway,ferry; motorway,toll,ferry:
each closes the motorways, each its own metric) give four first requests; then 200 routes between
random nodes without a key and 200 with a cached key; then, 3 s later (the metrics' perfect
customization runs in the background meanwhile), 200 more of each in turn. Times are the server's (the request log's
duration_ms) and the metric_ready log line's build_ms / attach_ms (attach = turn graph reweight +
CCH customization, on the GPU where CUDA serves). Prints a Markdown table, then (with
--log-level debug among ARGS) the engine's per-phase lines of each metric's attach. Goal (issue 30): a
first request <= 100 ms on the 1M map, cached ones at the speed of plain routes.
Example (H100): python3 bench/metric_first.py build/gpath gen:1000000:1
"""
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, spec, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    tmp = tempfile.mkdtemp(prefix="gpath-metric-")
    portfile, logpath = os.path.join(tmp, "port"), os.path.join(tmp, "log")
    log = open(logpath, "w")
    p = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1", "--port", "0", "--port-file",
                          portfile, "--graph", "r=" + spec, "--cache-path", ""] + extra,
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        t0 = time.time()
        while not os.path.exists(portfile) or get(
                f"http://127.0.0.1:{open(portfile).read().strip()}/ready") != 200:
            if p.poll() is not None or time.time() - t0 > 600:
                sys.exit("gpath serve did not become ready:\n" + open(logpath).read()[-2000:])
            time.sleep(0.2)
        url = f"http://127.0.0.1:{open(portfile).read().strip()}/v1/graphs/r/route"
        rng = random.Random(1)
        n = int(re.search(r"\"nodes\":(\d+)", urllib.request.urlopen(
            url.replace("/route", "")).read().decode()).group(1))
        keys = ["motorway", "motorway,toll", "motorway,ferry", "motorway,toll,ferry"]
        for k in keys:
            get(f"{url}?from={rng.randrange(n)}&to={rng.randrange(n)}&exclude={k}")
        for k in [""] * 200 + ["motorway"] * 200:
            get(f"{url}?from={rng.randrange(n)}&to={rng.randrange(n)}" +
                (f"&exclude={k}" if k else ""))
        # once the metrics' perfect customization (in the background: docs/cch.md) is done, 200
        # pairs more, a plain route and a cached key in turn
        time.sleep(3)
        for i in range(400):
            get(f"{url}?from={rng.randrange(n)}&to={rng.randrange(n)}" +
                ("&exclude=motorway" if i % 2 else ""))
        time.sleep(0.5)
        text = open(logpath).read()
        reqs = re.findall(r"path=/v1/graphs/r/route status=\d+ bytes=\d+ duration_ms=([0-9.]+)"
                          r"(?: code=\w+)? query=([^ ]*)", text)
        ready = re.findall(r"event=metric_ready .*build_ms=([0-9.]+) attach_ms=([0-9.]+)", text)
        first = [float(d) for d, _ in reqs[:4]]
        plain = [float(d) for d, q in reqs[4:404] if "exclude" not in q]
        cached = [float(d) for d, q in reqs[4:404] if "exclude" in q]
        plain2 = [float(d) for d, q in reqs[404:] if "exclude" not in q]
        cached2 = [float(d) for d, q in reqs[404:] if "exclude" in q]
        print(f"| {spec} | first request ms (4 keys) | metric build ms | attach ms | cached p50 ms "
              f"| plain p50 ms | 3 s later: cached / plain p50 ms |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        print(f"| {spec} | {', '.join(f'{x:.1f}' for x in first)} | "
              f"{', '.join(b for b, _ in ready)} | {', '.join(a for _, a in ready)} | "
              f"{statistics.median(cached):.3f} | {statistics.median(plain):.3f} | "
              f"{statistics.median(cached2):.3f} / {statistics.median(plain2):.3f} |")
        # where each attach went (--log-level debug: the engine's phases of each metric version)
        for line in re.findall(r"[^\n]*event=(?:cch_ready|cch_phases|metric_[a-z]+)[^\n]*", text):
            print("    " + line)
    finally:
        p.terminate()
        p.wait()


if __name__ == "__main__":
    main()
