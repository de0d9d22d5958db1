#!/usr/bin/python3
"""netops_ref.py - independent reference for gpath's routing tables (tests/test_netops_ref.sh).

For every Topology Zoo GraphML, SNDlib native and Rocketfuel .intra file under $GPATH_DATA, parses
the raw file here (ElementTree / plain text, not gpath's loaders), applies the same documented cost
rule (hop count; OSPF reference bandwidth cost = min(65535, max(1, floor(100e9 / bw))) with unknown
speeds at the lower median of the known costs; Rocketfuel's own weights), and computes with
networkx, per destination j, the shortest-path predecessor sets on the reversed graph
(dijkstra_predecessor_and_distance): the predecessors of i there are exactly i's equal-cost next
hops towards j. The result must equal `gpath routing-tables` for every router and destination
(distance and full next-hop set, capped at 64 lowest ids like gpath's default ecmp_max).
What-if: for a mid-sized network, `gpath what-if --each-link` fails each link in turn; the changed
(router, destination) pairs and their before/after entries must equal the reference diff.
Link loads: on Topology Zoo and Rocketfuel graphs with a random demand matrix (seeded), `gpath
link-loads` must give every directed link the load of the OSPF equal split computed here (per
destination, routers in decreasing distance push their traffic equally over the networkx next hops).
Repair paths: `gpath repair` (LFA per RFC 5286, TI-LFA per RFC 9855) on Geant2012 and Rocketfuel
AS3967 for every router, on Kdl and AS1239 for a sample of routers: every repair row (LFA and its
flags, post-convergence path, P and Q node, segment list, for link and node protection) and every
router's coverage equal RepairRef's, which reads P/Q spaces off networkx's predecessor DAGs.
Prints one line per failure and ends with "N passed, N failed, N skipped".
"""
import glob
import gzip
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor

import networkx as nx

GPATH = os.environ.get("GPATH_BIN", "build/gpath")
DATA = os.environ.get("GPATH_DATA", "")
REF_BW = 100e9
ECMP_MAX = 64
NS = "{http://graphml.graphdrawing.org/xmlns}"


def bw_cost(bw):
    return min(65535, max(1, math.floor(REF_BW / bw)))


def rule_costs(links, rule):
    """links: list of [u, v, bw]; returns costs per link under rule hops|bandwidth."""
    if rule == "hops":
        return [1] * len(links)
    known = sorted(bw_cost(bw) for _, _, bw in links if bw > 0)
    fill = known[(len(known) - 1) // 2] if known else 1
    return [bw_cost(bw) if bw > 0 else fill for _, _, bw in links]


def read_graphml(path, rule):
    root = ET.parse(path).getroot()
    keys = {k.get("id"): k.get("attr.name") for k in root.iter(NS + "key")}
    graph = root.find(NS + "graph")
    nodes = [int(n.get("id")) for n in graph.findall(NS + "node")]
    units = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    links = []
    for e in graph.findall(NS + "edge"):
        d = {keys.get(x.get("key")): (x.text or "") for x in e.findall(NS + "data")}
        bw = -1.0
        try:
            raw = float(d["LinkSpeedRaw"]) if "LinkSpeedRaw" in d else -1.0
        except ValueError:
            raw = -1.0
        if raw > 0:
            bw = raw
        elif "LinkSpeed" in d:
            try:
                sp = float(d["LinkSpeed"])
                u = d.get("LinkSpeedUnits", "M").strip().upper() or "M"
                if sp > 0 and u in units:
                    bw = sp * units[u]
            except ValueError:
                pass
        links.append([int(e.get("source")), int(e.get("target")), bw])
    costs = rule_costs(links, rule)
    arcs = []
    for (u, v, _), c in zip(links, costs):
        arcs += [(u, v, c), (v, u, c)]
    return nodes, arcs


def read_sndlib(path, rule):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        lines = [l.split("#")[0].replace("(", " ( ").replace(")", " ) ").split() for l in f]
    sec, unit, names, links = None, 1e6, [], []
    umap = {"BITSPERSEC": 1, "KBITPERSEC": 1e3, "MBITPERSEC": 1e6, "GBITPERSEC": 1e9}
    for t in lines:
        if not t or t[0].startswith("?"):
            continue
        if sec is None:
            sec = t[0]
            continue
        if t == [")"]:
            sec = None
            continue
        if sec == "META" and t[0] == "unit":
            unit = umap[t[2]]
        elif sec == "NODES":
            names.append(t[0])
        elif sec == "LINKS":
            pre = float(t[5])
            mods = [float(x) for x in t[10:-1]][0::2]
            cap = pre if pre > 0 else max(mods, default=0)
            links.append([names.index(t[2]), names.index(t[3]), cap * unit if cap > 0 else -1])
    costs = rule_costs(links, rule)
    arcs = []
    for (u, v, _), c in zip(links, costs):
        arcs += [(u, v, c), (v, u, c)]
    return list(range(len(names))), arcs


def read_rocketfuel(path, rule):
    rows = [l.split() for l in open(path) if l.strip()]
    names = sorted({r[0] for r in rows} | {r[1] for r in rows})
    idx = {n: i for i, n in enumerate(names)}
    arcs = [(idx[a], idx[b], float(m) if rule == "weights" else 1) for a, b, m in rows]
    return list(range(len(names))), arcs


def digraph(nodes, arcs):
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for u, v, c in arcs:
        if u == v:
            continue  # a self-loop is never a next hop and never shortens a path
        if not g.has_edge(u, v) or g[u][v]["weight"] > c:
            g.add_edge(u, v, weight=c)
    return g


def tables(g):
    """{(i, j): (dist or None, tuple(next hops))} for every ordered pair."""
    out = {}
    rev = g.reverse(copy=False)
    for j in g.nodes:
        pred, dist = nx.dijkstra_predecessor_and_distance(rev, j, weight="weight")
        for i in g.nodes:
            if i not in dist:
                out[(i, j)] = (None, ())
            else:
                hops = () if i == j else tuple(sorted(pred[i])[:ECMP_MAX])
                out[(i, j)] = (dist[i], hops)
    return out


def run_gpath(args):
    p = subprocess.run([GPATH] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("gpath %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def entry(e):
    return (e["weight"], tuple(e["next_hops"]))


def check_tables(job):
    kind, path, rule = job
    name = "%s %s [%s]" % (kind, os.path.relpath(path, DATA), rule)
    try:
        reader = {"graphml": read_graphml, "sndlib": read_sndlib, "rocketfuel": read_rocketfuel}[kind]
        ref = tables(digraph(*reader(path, rule)))
        args = ["routing-tables", "--graph", "%s:%s" % (kind, path), "--backend", "cpu"]
        if rule != "weights":
            args += ["--cost-rule", rule]
        doc = json.loads(run_gpath(args))
        got = {}
        for t in doc["tables"]:
            for r in t["routes"]:
                got[(t["router"], r["destination"])] = entry(r)
        if set(got) != set(ref):
            return name, "router/destination pairs differ (%d vs %d)" % (len(got), len(ref))
        for k, v in ref.items():
            if got[k] != v:
                return name, "router %s -> %s: gpath %s, networkx %s" % (k[0], k[1], got[k], v)
        return name, None
    except Exception as ex:  # a crash is a failure of this check, reported with its reason
        return name, "error: %s" % ex


def check_what_if(kind, path, rule):
    """One result per link: fail it (both ways) and compare the changed pairs."""
    reader = {"graphml": read_graphml, "sndlib": read_sndlib, "rocketfuel": read_rocketfuel}[kind]
    nodes, arcs = reader(path, rule)
    base = digraph(nodes, arcs)
    before = tables(base)
    args = ["what-if", "--graph", "%s:%s" % (kind, path), "--backend", "cpu", "--each-link"]
    if rule != "weights":
        args += ["--cost-rule", rule]
    out = run_gpath(args)
    results, seen = [], set()
    for line in out.splitlines():
        doc = json.loads(line)
        u, v = doc["link"]
        name = "what-if %s [%s] fail %s-%s" % (os.path.basename(path), rule, u, v)
        seen.add(frozenset((u, v)))
        g = base.copy()
        for a, b in ((u, v), (v, u)):
            if g.has_edge(a, b):
                g.remove_edge(a, b)
        after = tables(g)
        ref = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        got = {(c["router"], c["destination"]): (entry(c["before"]), entry(c["after"]))
               for c in doc["changes"]}
        if got != ref:
            diff = sorted(set(got) ^ set(ref))[:3] or [k for k in ref if ref[k] != got.get(k)][:3]
            results.append((name, "changes differ: %d vs %d pairs, e.g. %s" % (len(got), len(ref), diff)))
        else:
            results.append((name, None))
    links = {frozenset((u, v)) for u, v, _ in arcs if u != v}
    if seen != links:
        results.append(("what-if %s links" % os.path.basename(path),
                        "gpath failed %d links, the file has %d" % (len(seen), len(links))))
    return results


def check_loads(kind, path, rule, seed):
    """Random demands (a third of the ordered pairs, integer volumes); compares every link's load."""
    import random
    import tempfile
    reader = {"graphml": read_graphml, "sndlib": read_sndlib, "rocketfuel": read_rocketfuel}[kind]
    nodes, arcs = reader(path, rule)
    g = digraph(nodes, arcs)
    rnd = random.Random(seed)
    dem = {}
    for i in nodes:
        for j in nodes:
            if i != j and rnd.random() < 0.3:
                dem[(i, j)] = rnd.randint(1, 100)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("source,destination,volume\n")
        for (i, j), v in dem.items():
            f.write("%d,%d,%d\n" % (i, j, v))
    args = ["link-loads", "--graph", "%s:%s" % (kind, path), "--backend", "cpu", "--demands", f.name, "-q"]
    if rule != "weights":
        args += ["--cost-rule", rule]
    try:
        doc = json.loads(run_gpath(args))
    finally:
        os.unlink(f.name)
    by_dst = {}
    for (i, j), v in dem.items():
        by_dst.setdefault(j, []).append((i, v))
    load, lost = {}, 0.0
    rev = g.reverse(copy=False)
    for j, rows in by_dst.items():
        pred, dist = nx.dijkstra_predecessor_and_distance(rev, j, weight="weight")
        flow = {}
        for i, v in rows:
            if i in dist:
                flow[i] = flow.get(i, 0.0) + v
            else:
                lost += v
        for i in sorted((x for x in dist if x != j), key=lambda x: -dist[x]):
            f = flow.get(i, 0.0)
            hops = sorted(pred[i])[:ECMP_MAX]
            if not f or not hops:
                continue
            for k in hops:
                load[(i, k)] = load.get((i, k), 0.0) + f / len(hops)
                flow[k] = flow.get(k, 0.0) + f / len(hops)
    got = {(l["from"], l["to"]): l["load"] for l in doc["links"]}
    name = "loads %s [%s]" % (os.path.relpath(path, DATA), rule)
    tol = 1e-9 * sum(dem.values())
    ref = {k: v for k, v in load.items() if v > tol}
    if set(got) != set(ref):
        return name, "loaded links differ: %s" % sorted(set(got) ^ set(ref))[:4]
    bad = [k for k in ref if abs(ref[k] - got[k]) > tol]
    if bad:
        return name, "link %s: gpath %s, networkx %s" % (bad[0], got[bad[0]], ref[bad[0]])
    if abs(doc["unrouted_volume"] - lost) > tol:
        return name, "unrouted %s vs %s" % (doc["unrouted_volume"], lost)
    return name, None


# ---- repair paths (gpath repair, engine/repair.h): LFA (RFC 5286) and TI-LFA (RFC 9855) ----
# Independent of gpath's formulas: "every shortest path x->y avoids X" is read off networkx's
# shortest-path predecessor DAG from x (no shortest path uses an arc of X / passes node X), not
# from distance sums; the post-convergence path is a Dijkstra on the graph without X with the
# lexicographic (cost, hops) key, read backwards from D through the lowest-id predecessor.

def int_weights(g, scale):
    h = nx.DiGraph()
    h.add_nodes_from(g.nodes)
    for u, v, d in g.edges(data=True):
        h.add_edge(u, v, weight=int(round(d["weight"] * scale)))
    return h


class RepairRef:
    def __init__(self, g):
        self.g = g
        self.n = g.number_of_nodes()
        self.pred, self.dist, self.memo = {}, {}, {}
        for x in g.nodes:
            self.pred[x], self.dist[x] = nx.dijkstra_predecessor_and_distance(g, x, weight="weight")

    def on_paths(self, x, y):
        """Nodes on some shortest x->y path (the DAG's backward closure from y)."""
        k = (x, y)
        if k not in self.memo:
            seen, stack = {y}, [y]
            while stack:
                for a in self.pred[x][stack.pop()]:
                    if a not in seen:
                        seen.add(a)
                        stack.append(a)
            self.memo[k] = seen
        return self.memo[k]

    def avoids(self, x, y, X):
        if y not in self.dist[x]:
            return False
        c = self.on_paths(x, y)
        if X[0] == "node":
            return X[1] not in c
        s, e = X[1], X[2]
        return not ((e in c and s in self.pred[x][e]) or (s in c and e in self.pred[x][s]))

    def post_path(self, S, D, X):
        g = self.g
        h = nx.DiGraph()
        m = self.n + 1
        for u, v, d in g.edges(data=True):
            if X[0] == "node" and X[1] in (u, v):
                continue
            if X[0] == "link" and {u, v} == {X[1], X[2]}:
                continue
            h.add_edge(u, v, weight=d["weight"] * m + 1)
        h.add_node(S)
        dk = nx.single_source_dijkstra_path_length(h, S, weight="weight")
        if D not in dk:
            return None, None
        path, v = [D], D
        while v != S:
            v = min(u for u in h.predecessors(v)
                    if u in dk and dk[u] + h[u][v]["weight"] == dk[v])
            path.append(v)
        return dk[D] // m, path[::-1]

    def tilfa(self, S, D, X):
        cost, v = self.post_path(S, D, X)
        if v is None:
            return None
        k = len(v)
        q = 1
        while q < k - 1 and not self.avoids(v[q], D, X):
            q += 1
        segs, cur, p = [], 1, v[1]
        while cur < q:
            j = q
            while j > cur and not self.avoids(v[cur], v[j], X):
                j -= 1
            if j > cur:
                segs.append(("node", v[j]))
                cur = j
            else:
                segs.append(("adj", v[cur], v[cur + 1]))
                cur += 1
        if segs and segs[0][0] == "node":
            p = segs[0][1]
        return {"cost": cost, "next_hop": v[1], "p": p, "q": v[q], "segments": segs, "path": v}

    def router(self, S, node=True):
        """(repairs {(D, E): {...}}, coverage dict) of PLR S."""
        g, d = self.g, self.dist
        reps, agg = {}, {}
        nbrs = sorted(v for v in g.successors(S) if v != S)
        for E in nbrs:
            w = g[S][E]["weight"]
            for D in sorted(d[S]):
                if D == S or d[E].get(D) is None or w + d[E][D] != d[S][D]:
                    continue
                best = None
                for N in nbrs:
                    if N == E or D not in d[N]:
                        continue
                    if not d[N][D] < d[N].get(S, math.inf) + d[S][D]:
                        continue
                    nodep = D != E and d[N][D] < d[N].get(E, math.inf) + d[E][D]
                    key = (0 if nodep else 1, g[S][N]["weight"] + d[N][D], N)
                    if best is None or key < best[0]:
                        best = (key, N, nodep, d[N][D] < d[S][D])
                link = self.tilfa(S, D, ("link", S, E))
                nrep = self.tilfa(S, D, ("node", E)) if node and D != E else None
                reps[(D, E)] = {"lfa": best[1] if best else None,
                                "lfa_node": bool(best and best[2]),
                                "lfa_down": bool(best and best[3]), "link": link, "node": nrep}
                a = agg.setdefault(D, {"lfa_link": True, "lfa_node": True, "ti_link": True,
                                       "ti_node": True, "nh_is_d": False})
                a["lfa_link"] &= best is not None
                a["lfa_node"] &= bool(best and best[2])
                a["ti_link"] &= link is not None
                if D == E:
                    a["nh_is_d"] = True
                elif node:
                    a["ti_node"] &= nrep is not None
        cov = {"destinations": 0, "lfa_link": 0, "tilfa_link": 0, "node_destinations": 0,
               "lfa_node": 0, "tilfa_node": 0}
        for D, a in agg.items():
            cov["destinations"] += 1
            cov["lfa_link"] += a["lfa_link"]
            cov["tilfa_link"] += a["ti_link"]
            if not a["nh_is_d"]:
                cov["node_destinations"] += 1
                cov["lfa_node"] += a["lfa_node"]
                cov["tilfa_node"] += a["ti_node"] and node
        # destinations reached without any primary next hop cannot exist: every reachable D != S
        # has one, so agg covers them all
        return reps, cov


def gpath_repairs(doc, scale):
    """{(router, D, E): {...}} and {router: coverage} from gpath's repair document."""
    def ti(x):
        if x is None or x["cost"] is None:
            return None
        segs = [("node", s["node"]) if "node" in s else ("adj",) + tuple(s["adjacency"])
                for s in x["segments"]]
        return {"cost": int(round(x["cost"] * scale)), "next_hop": x["next_hop"], "p": x["p_node"],
                "q": x["q_node"], "segments": segs, "path": x.get("path")}
    reps = {}
    for r in doc["repairs"]:
        reps[(r["router"], r["destination"], r["primary_next_hop"])] = {
            "lfa": r["lfa"], "lfa_node": r["lfa_node_protecting"], "lfa_down": r["lfa_downstream"],
            "link": ti(r["link_repair"]), "node": ti(r["node_repair"])}
    cov = {p["router"]: {k: p[k] for k in ("destinations", "lfa_link", "tilfa_link",
                                            "node_destinations", "lfa_node", "tilfa_node")}
           for p in doc["per_router"]}
    return reps, cov


def check_repair(kind, path, rule, plrs_wanted, scale):
    """Repairs of up to plrs_wanted routers (all when 0) and every router's coverage."""
    reader = {"graphml": read_graphml, "sndlib": read_sndlib, "rocketfuel": read_rocketfuel}[kind]
    g = int_weights(digraph(*reader(path, rule)), scale)
    ref = RepairRef(g)
    nodes = sorted(g.nodes)
    plrs = nodes if not plrs_wanted else nodes[::max(1, len(nodes) // plrs_wanted)][:plrs_wanted]
    args = ["repair", "--graph", "%s:%s" % (kind, path), "--backend", "cpu", "--paths", "--quiet"]
    if rule != "weights":
        args += ["--cost-rule", rule]
    for p in plrs:
        args += ["--router", str(p)]
    doc = json.loads(run_gpath(args))
    got, gcov = gpath_repairs(doc, scale)
    name = "repair %s [%s]" % (os.path.basename(path), rule)
    want = {}
    for S in plrs:
        reps, cov = ref.router(S)
        if gcov.get(S) != cov:
            return [(name, "router %s coverage: gpath %s, reference %s" % (S, gcov.get(S), cov))]
        for (D, E), v in reps.items():
            want[(S, D, E)] = v
    if set(got) != set(want):
        return [(name, "repair rows differ: %d vs %d, e.g. %s" % (
            len(got), len(want), sorted(set(got) ^ set(want))[:3]))]
    for k, v in want.items():
        if got[k] != v:
            return [(name, "router %s dest %s next hop %s: gpath %s, reference %s" % (
                k[0], k[1], k[2], got[k], v))]
    return [(name + ", %d routers, %d rows" % (len(plrs), len(want)), None)]


def guarded(what, path, fn, *args):
    """fn's results, or one failure naming the exception it raised."""
    try:
        return fn(*args)
    except Exception as ex:  # a crash is a failure of this check, reported with its reason
        return [("%s %s" % (what, os.path.basename(path)), "error: %s" % ex)]


def tally(res, verbose):
    """Prints the failures (and passes when verbose); returns (passed, failed)."""
    passed = failed = 0
    for name, problem in res:
        if problem:
            failed += 1
            print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1
            if verbose:
                print("ok %s" % name)
    return passed, failed


def main():
    passed = failed = skipped = 0
    if not DATA or not os.path.isdir(DATA):
        print("SKIP: GPATH_DATA (%r) is not a directory; no real topologies to check" % DATA)
        print("0 passed, 0 failed, 1 skipped")
        return 0
    jobs = []
    for sub, kind, pattern, rules in (
            ("topology-zoo", "graphml", "topology-zoo/graphml/*.graphml", ("hops", "bandwidth")),
            ("sndlib", "sndlib", "sndlib/native/*.txt*", ("hops", "bandwidth")),
            ("rocketfuel", "rocketfuel", "rocketfuel/weights-dist/*/*.intra", ("weights", "hops"))):
        files = sorted(glob.glob(os.path.join(DATA, pattern)))
        if not files:
            print("SKIP: no %s files under %s" % (sub, DATA))
            skipped += 1
        jobs += [(kind, f, r) for f in files for r in rules]
    workers = int(os.environ.get("NETOPS_REF_JOBS", "0")) or (os.cpu_count() or 2)
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for name, problem in ex.map(check_tables, jobs, chunksize=4):
            if problem:
                failed += 1
                print("FAIL %s: %s" % (name, problem))
            else:
                passed += 1
    print("routing tables: %d files x rules checked" % len(jobs))
    mid = [("graphml", os.path.join(DATA, "topology-zoo/graphml/Geant2012.graphml"), "hops"),
           ("rocketfuel", os.path.join(DATA, "rocketfuel/weights-dist/3967/weights.intra"), "weights")]
    for kind, path, rule in mid:
        if not os.path.exists(path):
            print("SKIP: %s absent" % path)
            skipped += 1
            continue
        res = guarded("what-if", path, check_what_if, kind, path, rule)
        p, f = tally(res, False)
        passed, failed = passed + p, failed + f
        print("what-if: %s, %d links failed in turn" % (os.path.basename(path), len(res)))
    for k, (kind, rel, rule) in enumerate((("graphml", "topology-zoo/graphml/Geant2012.graphml", "hops"),
                                           ("graphml", "topology-zoo/graphml/Geant2012.graphml", "bandwidth"),
                                           ("graphml", "topology-zoo/graphml/Cogentco.graphml", "hops"),
                                           ("graphml", "topology-zoo/graphml/Kdl.graphml", "hops"),
                                           ("rocketfuel", "rocketfuel/weights-dist/1239/weights.intra", "weights"),
                                           ("rocketfuel", "rocketfuel/weights-dist/3967/weights.intra", "hops"))):
        path = os.path.join(DATA, rel)
        if not os.path.exists(path):
            print("SKIP: %s absent" % path)
            skipped += 1
            continue
        try:
            name, problem = check_loads(kind, path, rule, 1000 + k)
        except Exception as ex:
            name, problem = "loads %s" % rel, "error: %s" % ex
        if problem:
            failed += 1
            print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1
    rep = [("graphml", os.path.join(DATA, "topology-zoo/graphml/Geant2012.graphml"), "hops", 0, 1),
           ("graphml", os.path.join(DATA, "topology-zoo/graphml/Kdl.graphml"), "hops", 6, 1),
           ("rocketfuel", os.path.join(DATA, "rocketfuel/weights-dist/3967/weights.intra"), "weights",
            0, 1000),
           ("rocketfuel", os.path.join(DATA, "rocketfuel/weights-dist/1239/weights.intra"), "weights",
            4, 1000)]
    for kind, path, rule, plrs, scale in rep:
        if not os.path.exists(path):
            print("SKIP: %s absent" % path)
            skipped += 1
            continue
        res = guarded("repair", path, check_repair, kind, path, rule, plrs, scale)
        p, f = tally(res, True)
        passed, failed = passed + p, failed + f
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
