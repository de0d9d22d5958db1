#!/usr/bin/env python3
"""matrix_bench.py - one table measurement for bench/gpu-matrix.sh: a matrix of N x N random
places asked of a server, timed to the first and the last byte, read in 1 MiB pieces and dropped
(the client holds nothing), with the server's peak RSS (VmHWM of PID) before and after.

  matrix_bench.py npy|json|osrm|job URL N PID SEED [nodes=K | bbox=W,S,E,N]

npy / json: POST URL (/v1/graphs/{g}/table) with node ids 1..K (nodes=K) or coordinates in the
bbox; osrm: POST URL (/table/v1/{profile}) with coordinates (gpath; Accept: application/x-npy) or,
with URL ending in '/GET', OSRM's GET /table/v1 (URL length permitting); job: POST URL
(/v1/graphs/{g}/matrix-jobs), then polls and downloads the result. Prints one line:
RESULT kind=... n=... first_s=... last_s=... bytes=... cells_per_s=... hwm_before=... hwm_after=...
crc=... (CRC-32 of the answer's first 256 MiB, to compare answers between runs: bench/gpu-matrix-multi.sh)
"""
import http.client
import json
import random
import sys
import time
import urllib.parse
import zlib


def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return -1
    return -1


CRC_BYTES = 256 << 20
last_crc = 0


def request(url, method="GET", body=None, headers=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=3600)
    t0 = time.time()
    path = u.path + ("?" + u.query if u.query else "")
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    first = r.read(1)
    t1 = time.time()
    n = len(first)
    crc = zlib.crc32(first)
    keep = first if r.status >= 300 or "json" in r.getheader("Content-Type", "") else b""
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        if n < CRC_BYTES:
            crc = zlib.crc32(b[:CRC_BYTES - n], crc)
        n += len(b)
        if keep and len(keep) < 4096:
            keep += b[:4096]
    t2 = time.time()
    global last_crc
    last_crc = crc
    return r.status, t1 - t0, t2 - t0, n, keep, dict(r.getheaders())


def main():
    kind, url, n, pid, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
        int(sys.argv[5])
    opt = dict(a.split("=", 1) for a in sys.argv[6:])
    rnd = random.Random(seed)
    if "nodes" in opt:
        places = [rnd.randint(1, int(opt["nodes"])) for _ in range(n)]
    else:
        w, s, e, no = map(float, opt["bbox"].split(","))
        dx, dy = (e - w) * 0.1, (no - s) * 0.1
        places = [[round(rnd.uniform(w + dx, e - dx), 6), round(rnd.uniform(s + dy, no - dy), 6)]
                  for _ in range(n)]
    before = hwm(pid)
    hdr = {"Content-Type": "application/json"}
    if kind in ("npy", "json"):
        if kind == "npy":
            hdr["Accept"] = "application/x-npy"
        st, first, last, size, keep, _ = request(url, "POST", json.dumps({"sources": places, "radius": 20000}), hdr)
    elif kind == "osrm" and url.endswith("/GET"):
        coords = ";".join(f"{x},{y}" for x, y in places)
        st, first, last, size, keep, _ = request(url[:-4] + "/" + coords)
    elif kind == "osrm":
        hdr["Accept"] = "application/x-npy"
        st, first, last, size, keep, _ = request(url, "POST", json.dumps({"coordinates": places}),
                                                 hdr)
    else:  # job
        t0 = time.time()
        st, _, _, _, keep, h = request(url, "POST", json.dumps({"sources": places, "radius": 20000}), hdr)
        if st != 202:
            print(f"RESULT kind={kind} n={n} status={st} error={keep[:200]!r}")
            return 1
        base = url.split("/v1/")[0]
        loc = json.loads(keep)["status"]
        while True:
            _, _, _, _, keep, _ = request(base + loc)
            j = json.loads(keep)
            if j["state"] not in ("queued", "running"):
                break
            time.sleep(0.02)
        done = time.time() - t0
        if j["state"] != "done":
            print(f"RESULT kind={kind} n={n} status={j['state']} error={j.get('error')!r}")
            return 1
        st, _, dl, size, keep, _ = request(base + j["result"])
        first, last = done, done + dl
    after = hwm(pid)
    if st != 200:
        print(f"RESULT kind={kind} n={n} status={st} error={keep[:300]!r}")
        return 1
    print(f"RESULT kind={kind} n={n} status={st} first_s={first:.3f} last_s={last:.3f} "
          f"bytes={size} cells_per_s={n * n / last:.0f} hwm_before={before} hwm_after={after} "
          f"crc={last_crc:08x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
