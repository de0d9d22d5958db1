#!/usr/bin/python3
"""osrm_quality.py - route quality of gpath against OSRM v6 on the same OSM file (issue 35).

Runs the real OSRM (osrm-extract / -contract / -routed from the tarball in ../shared/peers/osrm,
profiles car.lua, bicycle.lua, foot.lua) and `gpath serve` on the same extracts (Monaco,
Liechtenstein), draws random route pairs between road points (random coordinates inside the map's
box snapped by OSRM's /nearest, fixed seed), asks both /route/v1/...?overview=full&steps=true and
measures, per map and profile:
  - |duration difference| (median, p90) and the signed median, relative to OSRM's duration;
  - |distance difference| (median), relative to OSRM's;
  - the same path: 95% of each line (sampled every 5 m) within 20 m of the other line;
  - maneuvers: OSRM's roundabout-family maneuvers (roundabout, rotary, roundabout turn,
    exit roundabout, exit rotary) met by a gpath roundabout-family step within 40 m; OSRM's other
    maneuvers (depart / arrive aside) met by a gpath step within 30 m turning the same direction
    (left / right / neither; the same type and modifier reported beside it). Counted on the
    routes whose path is the same (else a different path decides).
Prints a table, then one PASS / FAIL line per target (each its own check, thresholds from the
command line) and "N passed, N failed, N skipped" last; --json writes the numbers.
Stdlib only. Used by tests/test_osrm_quality.sh; bench scripts may import measure() / compare().
"""
import argparse
import json
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MAPS = {  # name: (file under DATA/osm, box lon0, lat0, lon1, lat1)
    "monaco": ("monaco.osm.pbf", (7.409, 43.725, 7.439, 43.751)),
    "liechtenstein": ("liechtenstein-latest.osm.pbf", (9.48, 47.05, 9.63, 47.26)),
}
PROFILES = {  # gpath profile: (OSRM profile file, OSRM service alias)
    "car": ("car.lua", "driving"),
    "bicycle": ("bicycle.lua", "cycling"),
    "foot": ("foot.lua", "walking"),
}
ROUNDABOUT = {"roundabout", "rotary", "roundabout turn", "exit roundabout", "exit rotary"}
R_EARTH = 6371008.8


# ---- geometry ----
def xy(lon, lat, lat0):
    """Local metres (equirectangular around lat0)."""
    k = math.pi / 180 * R_EARTH
    return lon * k * math.cos(lat0 * math.pi / 180), lat * k


def haversine(a, b):
    p1, p2 = math.radians(a[1]), math.radians(b[1])
    dp, dl = p2 - p1, math.radians(b[0] - a[0])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R_EARTH * math.asin(min(1.0, math.sqrt(h)))


def seg_dist(p, a, b):
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    L = dx * dx + dy * dy
    t = 0.0 if L == 0 else max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / L))
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


class LineIndex:
    """Segments of a line in a grid of cell metres: distance from a point, up to a radius."""

    def __init__(self, pts, cell):
        self.pts, self.cell, self.grid = pts, cell, {}
        for i in range(len(pts) - 1):
            (x0, y0), (x1, y1) = pts[i], pts[i + 1]
            for cx in range(int(min(x0, x1) // cell), int(max(x0, x1) // cell) + 1):
                for cy in range(int(min(y0, y1) // cell), int(max(y0, y1) // cell) + 1):
                    self.grid.setdefault((cx, cy), []).append(i)
        if len(pts) == 1:
            self.grid.setdefault((int(pts[0][0] // cell), int(pts[0][1] // cell)), []).append(-1)

    def near(self, p, radius):
        cx, cy = int(p[0] // self.cell), int(p[1] // self.cell)
        best = math.inf
        for gx in (cx - 1, cx, cx + 1):
            for gy in (cy - 1, cy, cy + 1):
                for i in self.grid.get((gx, gy), ()):
                    d = (math.hypot(p[0] - self.pts[0][0], p[1] - self.pts[0][1]) if i < 0
                         else seg_dist(p, self.pts[i], self.pts[i + 1]))
                    best = min(best, d)
        return best <= radius


def sample(pts, step):
    """Points every `step` metres along a line (its vertices included)."""
    out = [pts[0]]
    for a, b in zip(pts, pts[1:]):
        L = math.hypot(b[0] - a[0], b[1] - a[1])
        k = int(L // step)
        for j in range(1, k + 1):
            t = j * step / L
            out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
        out.append(b)
    return out


def covered(line_a, line_b, radius):
    """Fraction of line_a (sampled every 5 m) within radius metres of line_b."""
    idx = LineIndex(line_b, radius)
    s = sample(line_a, 5.0)
    return sum(idx.near(p, radius) for p in s) / len(s)


def same_path(ga, gb, radius=20.0, share=0.95):
    """95% of each line within 20 m of the other (coordinates [lon, lat])."""
    lat0 = ga[0][1]
    a = [xy(x, y, lat0) for x, y in ga]
    b = [xy(x, y, lat0) for x, y in gb]
    return covered(a, b, radius) >= share and covered(b, a, radius) >= share


# ---- maneuvers ----
def maneuvers(route):
    out = []
    for leg in route["legs"]:
        for s in leg.get("steps", []):
            m = s["maneuver"]
            out.append((m["type"], m.get("modifier"), tuple(m["location"])))
    return out


def side(mod):
    """The direction of a modifier: left, right or none (straight, or no modifier)."""
    mod = mod or ""
    return "left" if "left" in mod else "right" if "right" in mod else "none"


def maneuver_match(osrm_route, gp_route, missed=None):
    """(roundabout met, roundabout total, others met, others total, others met with the same
    type and modifier). An other maneuver is met by a gpath step (not depart / arrive) within
    30 m that turns the same direction (left, right, neither: the issue's "same direction");
    the last count asks the same type and modifier too (stricter, reported beside it). With a
    list `missed`, each other maneuver not met is appended to it: (type, modifier, location,
    the gpath steps within 30 m as (type, modifier, metres))."""
    om, gm = maneuvers(osrm_route), maneuvers(gp_route)
    gmid = [(t, m, l) for t, m, l in gm if t not in ("depart", "arrive")]
    rb = rbn = ot = otn = strict = 0
    for typ, mod, loc in om:
        if typ in ("depart", "arrive"):
            continue
        if typ in ROUNDABOUT:
            rbn += 1
            rb += any(t in ROUNDABOUT and haversine(loc, l) <= 40 for t, _, l in gm)
        else:
            otn += 1
            met = any(side(m) == side(mod) and haversine(loc, l) <= 30 for t, m, l in gmid)
            ot += met
            if not met and missed is not None:
                near = [(t, m, round(haversine(loc, l))) for t, m, l in gmid
                        if haversine(loc, l) <= 30]
                missed.append((typ, mod, loc, near))
            strict += any(t == typ and m == mod and haversine(loc, l) <= 30 for t, m, l in gm)
    return rb, rbn, ot, otn, strict


# ---- processes ----
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def http_json(url, timeout=60):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"message": body.decode(errors="replace")}


def wait_http(url, proc, what, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=5).read()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {timeout} s")


class Osrm:
    """The OSRM release unpacked once under workdir, one extract per (map, profile)."""

    def __init__(self, tarball, workdir, threads, log):
        self.dir = os.path.join(workdir, "osrm-bin")
        self.threads, self.log = threads, log
        stamp = os.path.join(self.dir, ".unpacked")
        want = f"{os.path.abspath(tarball)} {os.path.getmtime(tarball)}"
        if not os.path.exists(stamp) or open(stamp).read() != want:
            shutil.rmtree(self.dir, ignore_errors=True)
            os.makedirs(self.dir)
            with tarfile.open(tarball) as t:
                t.extractall(self.dir)
            with open(stamp, "w") as f:
                f.write(want)
        self.env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(self.dir, "lib"))
        self.procs = []

    def run(self, args):
        t0 = time.time()
        r = subprocess.run(args, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        if r.returncode:
            raise RuntimeError(f"{os.path.basename(args[0])} failed ({r.returncode})")
        return time.time() - t0

    def no_turns_profile(self, profile):
        """A profile beside OSRM's own that keeps its way and node rules and its routability
        penalty (max_turn_weight into restricted ways) but adds no turn duration: what OSRM
        answers without turn costs, to measure the way semantics alone."""
        src = PROFILES[profile][0]
        name = src.replace(".lua", "-noturns.lua")
        with open(os.path.join(self.dir, "profiles", name), "w") as f:
            f.write(f"""-- {name}: {src} without turn durations (written by bench/osrm_quality.py)
local base = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "{src}")
local turn = base.process_turn
base.process_turn = function(profile, t)
  turn(profile, t)
  local keep = t.weight == constants.max_turn_weight
  t.duration = 0
  if not keep then t.weight = 0 end
end
return base
""")
        return name

    def prepare(self, pbf, profile, workdir, no_turns=False):
        """osrm-extract + osrm-contract (cached by the file's size and mtime); the .osrm path."""
        tag = profile + ("-noturns" if no_turns else "")
        d = os.path.join(workdir, f"{os.path.basename(pbf).split('.')[0]}-{tag}")
        base = os.path.join(d, "map.osrm")
        stamp = os.path.join(d, ".done")
        want = f"{os.path.getsize(pbf)} {os.path.getmtime(pbf)}"
        if os.path.exists(stamp) and open(stamp).read() == want:
            return base
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        os.symlink(os.path.abspath(pbf), os.path.join(d, "map.osm.pbf"))
        b = os.path.join(self.dir, "bin")
        lua = os.path.join(self.dir, "profiles", self.no_turns_profile(profile) if no_turns
                           else PROFILES[profile][0])
        self.run([os.path.join(b, "osrm-extract"), "-p", lua, "-t", str(self.threads),
                  os.path.join(d, "map.osm.pbf")])
        self.run([os.path.join(b, "osrm-contract"), "-t", str(self.threads), base])
        with open(stamp, "w") as f:
            f.write(want)
        return base

    def serve(self, base):
        port = free_port()
        p = subprocess.Popen([os.path.join(self.dir, "bin", "osrm-routed"), "--algorithm", "ch",
                              "-t", str(self.threads), "-i", "127.0.0.1", "-p", str(port), base],
                             env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/nearest/v1/driving/0,0", p, "osrm-routed")
        return url

    def stop(self):
        for p in self.procs:
            p.terminate()
            p.wait()
        self.procs = []


class Gpath:
    def __init__(self, binary, pbf, profiles, tmp, log, extra=()):
        port = free_port()
        args = [binary, "serve", "--listen", "127.0.0.1", "--port", str(port), "--cache-path", ""]
        args += list(extra)  # e.g. --operator-token for tests/traffic_osrm.py
        for prof in profiles:
            args += ["--graph", f"{prof}=osm:{pbf}?profile={prof}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPATH_")}
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
        self.url = f"http://127.0.0.1:{port}"
        t0 = time.time()
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gpath serve exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/ready", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() - t0 > 300:
                raise RuntimeError("gpath serve not ready within 300 s")
            time.sleep(0.2)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


# ---- measuring ----
def road_points(osrm_url, alias, box, n, rng, max_snap=100.0):
    """n random points of the box snapped by OSRM's /nearest to a road within max_snap metres."""
    pts, tries = [], 0
    while len(pts) < n and tries < 50 * n:
        tries += 1
        p = (rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3]))
        st, r = http_json(f"{osrm_url}/nearest/v1/{alias}/{p[0]:.6f},{p[1]:.6f}")
        if st == 200 and r.get("waypoints") and r["waypoints"][0]["distance"] <= max_snap:
            pts.append(tuple(r["waypoints"][0]["location"]))
    return pts


def route(url, service, a, b):
    q = (f"{url}/route/v1/{service}/{a[0]:.6f},{a[1]:.6f};{b[0]:.6f},{b[1]:.6f}"
         "?overview=full&steps=true&geometries=geojson")
    st, r = http_json(q)
    if st != 200 or r.get("code") != "Ok" or not r.get("routes"):
        return None
    return r["routes"][0]


def pct(xs, q):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(math.ceil(q * len(s))) - 1))]


def compare(osrm_url, gp_url, profile, box, pairs, seed):
    """The comparison of one map and profile: a dict of the measures (percentages); "missed"
    lists OSRM's other maneuvers gpath did not meet (with the route's ends)."""
    alias = PROFILES[profile][1]
    rng = random.Random(seed)
    pts = road_points(osrm_url, alias, box, 2 * pairs, rng)
    dur, sdur, dist, same = [], [], [], 0
    rb = rbn = ot = otn = strict = 0
    routed = both = 0
    worst, missed = [], []
    for i in range(0, len(pts) - 1, 2):
        a, b = pts[i], pts[i + 1]
        o = route(osrm_url, alias, a, b)
        if o is None or o["distance"] < 50:
            continue
        routed += 1
        g = route(gp_url, profile, a, b)
        if g is None:
            continue
        both += 1
        d = (g["duration"] - o["duration"]) / o["duration"] * 100
        dur.append(abs(d))
        sdur.append(d)
        dist.append(abs(g["distance"] - o["distance"]) / o["distance"] * 100)
        sp = same_path(o["geometry"]["coordinates"], g["geometry"]["coordinates"])
        same += sp
        worst.append((abs(d), a, b, round(o["duration"], 1), round(g["duration"], 1), sp))
        if sp:
            miss = []
            m = maneuver_match(o, g, miss)
            missed += [{"type": t, "modifier": md, "location": list(loc), "gpath_near": near,
                        "from": a, "to": b} for t, md, loc, near in miss]
            rb, rbn, ot, otn, strict = rb + m[0], rbn + m[1], ot + m[2], otn + m[3], strict + m[4]
    worst.sort(reverse=True)
    return {
        "pairs": routed, "both": both,
        "missing": routed - both,
        "duration_median": statistics.median(dur) if dur else None,
        "duration_p90": pct(dur, 0.9),
        "duration_signed_median": statistics.median(sdur) if sdur else None,
        "distance_median": statistics.median(dist) if dist else None,
        "same_path": 100.0 * same / both if both else None,
        "roundabout_match": 100.0 * rb / rbn if rbn else None, "roundabouts": rbn,
        "maneuver_match": 100.0 * ot / otn if otn else None, "maneuvers": otn,
        "maneuver_strict": 100.0 * strict / otn if otn else None,
        "worst": [{"diff_pct": round(w[0], 1), "from": w[1], "to": w[2], "osrm_s": w[3],
                   "gpath_s": w[4], "same_path": bool(w[5])} for w in worst[:5]],
        "missed": missed,
    }


def measure(args, log):
    """Runs every (map, profile) asked; returns {map: {profile: measures}} and skips."""
    results, skips = {}, []
    tarball = args.osrm_tarball
    if not os.path.exists(tarball):
        return results, [f"no OSRM tarball at {tarball}"]
    if not os.path.exists(args.gpath):
        return results, [f"no gpath binary at {args.gpath} (make all)"]
    os.makedirs(args.workdir, exist_ok=True)
    osrm = Osrm(tarball, args.workdir, args.threads, log)
    for m in args.maps:
        pbf = os.path.join(args.data, "osm", MAPS[m][0])
        if not os.path.exists(pbf):
            skips.append(f"{m}: no {pbf} (make data)")
            continue
        gp = None
        tmp = tempfile.mkdtemp(prefix="gpath-osrmq-")
        try:
            gp = Gpath(args.gpath, pbf, args.profiles, tmp, log)
            for prof in args.profiles:
                t0 = time.time()
                base = osrm.prepare(pbf, prof, args.workdir, args.no_turn_costs)
                url = osrm.serve(base)
                r = compare(url, gp.url, prof, MAPS[m][1], args.pairs, args.seed)
                r["seconds"] = round(time.time() - t0, 1)
                results.setdefault(m, {})[prof] = r
                osrm.stop()
        finally:
            osrm.stop()
            if gp:
                gp.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    return results, skips


def missed_table(missed):
    """The missed maneuvers counted by OSRM type and modifier, and by what gpath had within 30 m
    (nothing, or the nearest step's type and modifier), most frequent first."""
    by, near = {}, {}
    for x in missed:
        k = f"{x['type']}/{x['modifier']}"
        by[k] = by.get(k, 0) + 1
        n = min(x["gpath_near"], key=lambda s: s[2]) if x["gpath_near"] else None
        k2 = f"{k} <- " + (f"{n[0]}/{n[1]}" if n else "nothing")
        near[k2] = near.get(k2, 0) + 1
    top = lambda d: ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))
    at = {}  # the junctions missed most often (many routes pass one junction)
    for x in missed:
        n = min(x["gpath_near"], key=lambda s: s[2]) if x["gpath_near"] else None
        k = (f"{x['location'][0]:.6f},{x['location'][1]:.6f} {x['type']}/{x['modifier']} <- "
             + (f"{n[0]}/{n[1]} at {n[2]} m" if n else "nothing"))
        at[k] = at.get(k, 0) + 1
    where = "".join(f"\n    {v} at {k}" for k, v in sorted(at.items(), key=lambda kv: -kv[1])[:10])
    return f"{len(missed)}: {top(by)}\n  against gpath's: {top(near)}\n  most often at:{where}"


def fmt(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}"


def table(results):
    head = ("map", "profile", "pairs", "dur |d| med %", "p90 %", "signed med %", "dist |d| med %",
            "same path %", "rb met %", "(n)", "maneuver met %", "(n)", "same type+mod %")
    rows = [head]
    for m, byp in results.items():
        for p, r in byp.items():
            rows.append((m, p, f"{r['both']}/{r['pairs']}", fmt(r["duration_median"]),
                         fmt(r["duration_p90"]), fmt(r["duration_signed_median"]),
                         fmt(r["distance_median"], 2), fmt(r["same_path"]),
                         fmt(r["roundabout_match"]), str(r["roundabouts"]),
                         fmt(r["maneuver_match"]), str(r["maneuvers"]),
                         fmt(r["maneuver_strict"])))
    w = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)) for r in rows)


def checks(results, args):
    """One (key MAP/PROFILE/TARGET, name, ok or None when not measurable, message) per target
    and measured map / profile."""
    out = []
    for m, byp in results.items():
        for p, r in byp.items():
            lim = args.max_duration_median if p == "car" else args.max_duration_median_other
            v = r["duration_median"]
            out.append((f"{m}/{p}/duration", f"{m} {p}: median |duration difference| <= {lim}%",
                        None if v is None else v <= lim, f"measured {fmt(v, 2)}%"))
            out.append((f"{m}/{p}/routed", f"{m} {p}: gpath routes every pair OSRM routes",
                        r["missing"] == 0, f"{r['missing']} of {r['pairs']} without a route"))
            if p != "car":
                continue
            v = r["same_path"]
            out.append((f"{m}/{p}/same_path", f"{m} {p}: same path >= {args.min_same_path}%",
                        None if v is None else v >= args.min_same_path, f"measured {fmt(v)}%"))
            v = r["roundabout_match"]
            out.append((f"{m}/{p}/roundabout",
                        f"{m} {p}: OSRM roundabout maneuvers met >= {args.min_roundabout}%",
                        None if v is None else v >= args.min_roundabout,
                        f"measured {fmt(v)}% of {r['roundabouts']}"))
            v = r["maneuver_match"]
            out.append((f"{m}/{p}/maneuver",
                        f"{m} {p}: OSRM other maneuvers met >= {args.min_maneuver}%",
                        None if v is None else v >= args.min_maneuver,
                        f"measured {fmt(v)}% of {r['maneuvers']}; the same type and modifier "
                        f"{fmt(r['maneuver_strict'])}%"))
    return out


def pending(key, patterns):
    """1 when MAP/PROFILE/TARGET matches one of the --pending patterns ('*' for any part)."""
    parts = key.split("/")
    for pat in patterns:
        q = pat.split("/")
        if len(q) == 3 and all(a in ("*", b) for a, b in zip(q, parts)):
            return True
    return False


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpath", default=os.path.join(ROOT, os.environ.get("BUILD", "build"),
                                                    "gpath"))
    ap.add_argument("--osrm-tarball", default=os.path.join(
        ROOT, "..", "shared", "peers", "osrm", "osrm-v6.0.0-debian12-bin.tar.xz"))
    ap.add_argument("--data", default=os.environ.get("GPATH_DATA", os.path.join(ROOT, "data")))
    ap.add_argument("--workdir", default=os.path.join(ROOT, os.environ.get("BUILD", "build"),
                                                      "osrm-quality"),
                    help="OSRM binaries and extracts, kept between runs")
    ap.add_argument("--maps", default="monaco,liechtenstein")
    ap.add_argument("--profiles", default="car,bicycle,foot")
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-duration-median", type=float, default=3.0, help="car, percent")
    ap.add_argument("--max-duration-median-other", type=float, default=5.0,
                    help="bicycle and foot, percent")
    ap.add_argument("--min-same-path", type=float, default=90.0)
    ap.add_argument("--min-roundabout", type=float, default=90.0)
    ap.add_argument("--min-maneuver", type=float, default=85.0)
    ap.add_argument("--no-turn-costs", action="store_true",
                    help="OSRM's profiles without turn durations (the way rules alone)")
    ap.add_argument("--pending", default="",
                    help="comma-separated MAP/PROFILE/TARGET checks ('*' matches any part; "
                    "targets: duration, routed, same_path, roundabout, maneuver) reported as "
                    "PENDING (skipped) instead of failing while the work they need is not merged")
    ap.add_argument("--json", help="write the measures here")
    ap.add_argument("--missed", action="store_true",
                    help="print OSRM's other maneuvers gpath missed, by type and modifier (the "
                    "list of each is in --json's \"missed\")")
    ap.add_argument("--report-only", action="store_true",
                    help="print the table and the checks, exit 0 whatever they say")
    a = ap.parse_args(argv)
    a.maps = [m for m in a.maps.split(",") if m]
    a.profiles = [p for p in a.profiles.split(",") if p]
    a.pending = [p for p in a.pending.split(",") if p]
    for m in a.maps:
        if m not in MAPS:
            ap.error(f"unknown map {m} (expected {'|'.join(MAPS)})")
    for p in a.profiles:
        if p not in PROFILES:
            ap.error(f"unknown profile {p} (expected {'|'.join(PROFILES)})")
    return a


def main(argv):
    args = parse_args(argv)
    logpath = os.path.join(tempfile.gettempdir(), f"gpath-osrm-quality-{os.getpid()}.log")
    with open(logpath, "w") as log:
        try:
            results, skips = measure(args, log)
        except RuntimeError as e:
            print(f"FAIL: {e} (log: {logpath})")
            print("0 passed, 1 failed, 0 skipped")
            return 1
    for s in skips:
        print(f"SKIP: {s}")
    if not results:
        print("0 passed, 0 failed, 1 skipped")
        return 0
    print(table(results))
    for m, byp in results.items():
        for p, r in byp.items():
            for w in r["worst"][:3]:
                print(f"  worst {m} {p}: {w}")
    if args.missed:
        for m, byp in results.items():
            for p, r in byp.items():
                print(f"missed {m} {p}: {missed_table(r['missed'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    npass = nfail = nskip = 0
    for key, name, ok, msg in checks(results, args):
        if ok is None:
            nskip += 1
            print(f"SKIP: {name} ({msg})")
        elif ok:
            npass += 1
            print(f"PASS: {name} ({msg})" + (" [pending target met: drop it from --pending]"
                                              if pending(key, args.pending) else ""))
        elif pending(key, args.pending):
            nskip += 1
            print(f"PENDING: {name} ({msg}; {key} awaits other work, see --pending)")
        else:
            nfail += 1
            print(f"FAIL: {name} ({msg})")
    nskip += len(skips)
    print(f"{npass} passed, {nfail} failed, {nskip} skipped")
    os.unlink(logpath)
    return 0 if args.report_only or nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
