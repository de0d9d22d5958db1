#!/usr/bin/python3
"""planning_http.py - drives a real `gpath serve` over loopback (tests/test_planning_http.sh): the
network-planning endpoints on a hand-made GraphML square whose link speeds become capacities:
demands by name and id, JSON and CSV, the demand version; ECMP loads split 50/50 (literal), the
unrouted demand to an isolated router; a capacity PATCH; a failure-analysis job (202, polling,
progress, the ranked scenarios with worst_utilization / worst_link literal, bottlenecks, CSV), the
same question answered again; the changed and disconnected pair lists (list_pairs, literal); and the bad-input cases (400 naming the row, nothing changed).
Prints one line per failed check and "N passed, N failed, N skipped" last.
"""
import json
import os
import random
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netops_http import check  # noqa: E402  (one line per failed check, counted there)
import netops_http  # noqa: E402

TOKEN = "op-token"

# Routers 1..5: square 1-2-3-4-1 (cost 1 each), router 5 isolated. Capacities (LinkSpeedRaw):
# 10 on every link but 3-4 (8): 1 -> 3 splits over 2 and 4; failing 1-2 puts all of it on 4 -> 3.
SQUARE = """<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d0" />
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d1" />
  <graph edgedefault="undirected">
    <node id="1"><data key="d0">r1</data></node>
    <node id="2"><data key="d0">r2</data></node>
    <node id="3"><data key="d0">r3</data></node>
    <node id="4"><data key="d0">r4</data></node>
    <node id="5"><data key="d0">r5</data></node>
    <edge source="1" target="2"><data key="d1">10</data></edge>
    <edge source="2" target="3"><data key="d1">10</data></edge>
    <edge source="3" target="4"><data key="d1">8</data></edge>
    <edge source="4" target="1"><data key="d1">10</data></edge>
  </graph>
</graphml>
"""


def req(port, method, path, body=None, token=TOKEN, ctype="application/json", raw=False):
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method)
    if token:
        r.add_header("Authorization", "Bearer " + token)
    if data is not None:
        r.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            b = resp.read()
            return resp.status, b.decode() if raw else json.loads(b or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def link(res, a, b):
    return next((l for l in res["links"] if l["from"] == a and l["to"] == b), None)


def main():
    tmp = tempfile.mkdtemp()
    p, port = netops_http.serve(tmp, SQUARE, "", TOKEN)
    try:
        if port is None:
            return

        st, e = req(port, "POST", "/v1/graphs/sq/load")
        check("load without demands 400", st == 400 and "no demands" in e["message"], e)
        st, e = req(port, "PUT", "/v1/graphs/sq/demands", {"demands": []}, token=None)
        check("PUT demands needs the operator token", st == 401, e)
        demands = {"demands": [{"source": "r1", "destination": "r3", "volume": 10},
                               {"source": 2, "destination": 4, "volume": 6},
                               {"source": 1, "destination": 5, "volume": 2}]}
        st, d = req(port, "PUT", "/v1/graphs/sq/demands", demands)
        check("PUT demands 200", st == 200 and d["demands"] == 3 and d["total_volume"] == 18, d)
        dver = d.get("demand_version")
        check("demand version", isinstance(dver, str) and len(dver) == 16, d)
        # bad rows: 400 naming the row, nothing changed
        for body, want in (({"demands": [{"source": 1, "destination": 3, "volume": 1},
                                         {"source": "nowhere", "destination": 3, "volume": 1}]},
                            "demands[1].source: unknown router 'nowhere'"),
                           ({"demands": [{"source": 1, "destination": 3, "volume": -1}]},
                            "demands[0].volume must be a number >= 0"),
                           ("source,destination,volume\n1,3,4\n7,3,1\n", "line 3: unknown router '7'")):
            st, e = req(port, "PUT", "/v1/graphs/sq/demands", body,
                        ctype="text/csv" if isinstance(body, str) else "application/json")
            check("bad demands 400: " + want, st == 400 and want in e.get("message", ""), e)
        st, g = req(port, "GET", "/v1/graphs/sq/demands")
        check("nothing changed", g["demand_version"] == dver and len(g["demands"]) == 3, g)
        check("GET demands names", g["demands"][0].get("source_name") in ("r1", "r2"), g)

        st, L = req(port, "POST", "/v1/graphs/sq/load")
        check("load 200", st == 200 and L["demand_version"] == dver, L)
        # 1 -> 3 (10): 5 over 1-2-3 and 5 over 1-4-3; 2 -> 4 (6): 3 over 2-1-4, 3 over 2-3-4
        want = {(1, 2): 5, (1, 4): 8, (2, 3): 8, (4, 3): 5, (2, 1): 3, (3, 4): 3}
        got = {(l["from"], l["to"]): l["load"] for l in L["links"]}
        check("ECMP loads 50/50", got == want, got)
        l14 = link(L, 1, 4)
        check("link names, capacity, utilization", l14 and l14["from_name"] == "r1" and
              l14["to_name"] == "r4" and l14["capacity"] == 10 and abs(l14["utilization"] - 0.8) < 1e-12, l14)
        check("most loaded first", [(l["from"], l["to"]) for l in L["links"][:2]] in ([(1, 4), (2, 3)], [(2, 3), (1, 4)]), L["links"][:2])
        check("unrouted 1 -> 5", L["unrouted"] == [{"source": 1, "source_name": "r1", "destination": 5,
                                                     "destination_name": "r5", "volume": 2}] and L["unrouted_volume"] == 2, L["unrouted"])

        # CSV demands replace the JSON ones
        st, d2 = req(port, "PUT", "/v1/graphs/sq/demands", "source,destination,volume\nr1,r3,10\n2,4,6\n",
                     ctype="text/csv")
        check("CSV demands", st == 200 and d2["demands"] == 2 and d2["demand_version"] != dver, d2)
        st, csv = req(port, "GET", "/v1/graphs/sq/demands?format=csv", raw=True)
        check("GET demands CSV", st == 200 and csv.splitlines()[0] == "source,destination,volume" and len(csv.splitlines()) == 3, csv)

        # failure analysis: every link and router
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {"links": True, "routers": True})
        check("failure-analysis 202", st == 202 and j["scenarios"] == 4 + 5 and j["cached"] is False, j)
        res = None
        for _ in range(400):
            st, s = req(port, "GET", "/v1/failure-analysis/%d" % j["job"])
            check("progress in [0, 1]", 0 <= s["progress"] <= 1, s)
            if s["state"] in ("done", "failed"):
                res = s
                break
            time.sleep(0.05)
        check("job done", res and res["state"] == "done" and res["progress"] == 1, res)
        r = res["result"]
        top = r["scenarios"][0]
        # failing 1-4 sends 1 -> 3 (10) over 1-2-3 and 2 -> 4 (6) over 2-3-4: 2 -> 3 carries 16 / 10
        # (failing 2-3 gives 1.6 on 1 -> 4 too: ties keep the scenario order, links first)
        check("worst scenario", top["kind"] == "link" and top["failed_links"] == [[1, 4]] and
              abs(top["worst_utilization"] - 1.6) < 1e-12, top)
        wl = top["worst_link"]
        check("worst link 2 -> 3 (names)", (wl["from"], wl["to"], wl["from_name"], wl["to_name"], wl["load"]) ==
              (2, 3, "r2", "r3", 16), wl)
        s12 = next(s for s in r["scenarios"] if s["failed_links"] == [[1, 2]])
        # failing 1-2: 1 -> 3 over 1-4-3, 4 -> 3 at 10 / 8
        check("1-2 down overloads 4 -> 3", abs(s12["worst_utilization"] - 1.25) < 1e-12 and
              (s12["worst_link"]["from"], s12["worst_link"]["to"]) == (4, 3), s12)
        check("ranked", all(a["worst_utilization"] >= b["worst_utilization"]
                            for a, b in zip(r["scenarios"], r["scenarios"][1:])
                            if a["worst_utilization"] is not None and b["worst_utilization"] is not None), r["scenarios"])
        s12 = next(s for s in r["scenarios"] if s["failed_links"] == [[1, 2]])
        check("changed pairs 1-2 down", s12["changed_pairs"] == 6 + 2 * 0 and s12["disconnected_pairs"] == 0, s12)
        s5 = next(s for s in r["scenarios"] if s["failed_routers"] == [5])
        check("isolated router: nothing changes", s5["changed_pairs"] == 0 and s5["unrouted_volume"] == 0, s5)
        s4 = next(s for s in r["scenarios"] if s["failed_routers"] == [4])
        check("router 4 down: 2 -> 4 unrouted", s4["unrouted_volume"] == 6 and s4["failed_router_names"] == ["r4"], s4)
        check("bottlenecks", r["bottlenecks"] and r["bottlenecks"][0]["scenarios"] >= 2, r["bottlenecks"])
        st, csv = req(port, "GET", "/v1/failure-analysis/%d?format=csv" % j["job"], raw=True)
        lines = csv.splitlines()
        check("CSV result", st == 200 and lines[0].startswith("rank,kind,failed_links") and len(lines) == 10 and
              lines[1].startswith("1,link,"), lines[:3])
        st, j2 = req(port, "POST", "/v1/graphs/sq/failure-analysis", {"links": True, "routers": True})
        check("same question answered again", st == 200 and j2["job"] == j["job"], j2)

        # the changed pairs themselves (list_pairs): 1-2 down, by destination then router; router 4
        # down: its 6 disconnected pairs
        st, jl = req(port, "POST", "/v1/graphs/sq/failure-analysis",
                     {"scenarios": [{"links": [["r1", "r2"]]}, {"routers": [4]}], "list_pairs": True})
        check("list_pairs 202", st == 202, jl)
        rl = None
        for _ in range(400):
            st, rl = req(port, "GET", "/v1/failure-analysis/%d" % jl["job"])
            if rl["state"] in ("done", "failed"):
                break
            time.sleep(0.05)
        sl = next(s for s in rl["result"]["scenarios"] if s["failed_links"] == [[1, 2]])
        check("changed pair list 1-2 down",
              sl["changed_pair_list"] == [[2, 1], [3, 1], [1, 2], [4, 2], [1, 3], [2, 4]] and
              sl["changed_pair_list_names"][0] == ["r2", "r1"] and sl["disconnected_pair_list"] == [] and
              sl["pairs_truncated"] is False, sl)
        s4 = next(s for s in rl["result"]["scenarios"] if s["failed_routers"] == [4])
        check("disconnected pair list router 4 down",
              s4["disconnected_pair_list"] == [[4, 1], [4, 2], [4, 3], [1, 4], [2, 4], [3, 4]] and
              s4["disconnected_pair_list_names"][3] == ["r1", "r4"] and
              len(s4["changed_pair_list"]) == s4["changed_pairs"], s4)
        check("no lists unasked", "changed_pair_list" not in s12, s12)

        # an explicit scenario list, an SRLG, link pairs; bad input
        st, j3 = req(port, "POST", "/v1/graphs/sq/failure-analysis",
                     {"scenarios": [{"links": [["r1", "r2"]], "routers": ["r3"]}], "srlgs": [[[1, 2], [3, 4]]],
                      "link_pairs": True, "strategy": "full"})
        check("explicit + srlg + pairs", st == 202 and j3["scenarios"] == 1 + 1 + 6, j3)
        for body, want in (({"srlgs": [[[1, 3]]]}, "srlgs[0][0]: routers 1 and 3 are not joined"),
                           ({"scenarios": [{"routers": [9]}]}, "scenarios[0].routers[0]: unknown router 9"),
                           ({"strategy": "fast"}, "strategy must be auto, incremental, full or gpu"),
                           ({"linkz": True}, "unknown member 'linkz'"),
                           ({"list_pairs": 1}, "list_pairs must be true or false")):
            st, e = req(port, "POST", "/v1/graphs/sq/failure-analysis", body)
            check("bad analysis 400: " + want, st == 400 and want in e.get("message", ""), e)

        # the gpu strategy on a server running on the CPU (--backend cpu): 501, no job
        st, e = req(port, "POST", "/v1/graphs/sq/failure-analysis", {"links": True, "strategy": "gpu"})
        check("strategy gpu on the CPU 501", st == 501 and "strategy gpu" in e.get("message", ""), e)

        # capacities: PATCH, bad capacity
        st, c = req(port, "PATCH", "/v1/graphs/sq/capacities", {"links": [{"link": [3, 4], "capacity": 20}]})
        check("PATCH capacities", st == 200 and c["capacity_overrides"] == 1, c)
        st, L2 = req(port, "POST", "/v1/graphs/sq/load")
        check("capacity used", abs(link(L2, 4, 3)["utilization"] - 5 / 20) < 1e-12, link(L2, 4, 3))
        st, e = req(port, "PATCH", "/v1/graphs/sq/capacities", {"links": [{"link": [1, 2], "capacity": 0}]})
        check("zero capacity 400", st == 400 and "links[0].capacity must be a number > 0" in e["message"], e)
        st, e = req(port, "PATCH", "/v1/graphs/sq/capacities", {"links": [{"link": [1, 3], "capacity": 5}]})
        check("capacity of no link 400", st == 400 and "not joined" in e["message"], e)
        st, d3 = req(port, "DELETE", "/v1/graphs/sq/demands")
        check("DELETE demands", st == 200 and d3["deleted"] == 2 and d3["demands"] == 0, d3)
        st, e = req(port, "GET", "/v1/failure-analysis/999")
        check("unknown job 404", st == 404, e)
    finally:
        p.terminate()
        p.wait(timeout=30)


def restart():
    """Demands and capacity overrides survive a restart (kept next to the SQLite cache)."""
    tmp = tempfile.mkdtemp()
    cache = os.path.join(tmp, "cache.sqlite")
    kept = {}

    def first(port):
        st, d1 = req(port, "PUT", "/v1/graphs/sq/demands",
                     {"demands": [{"source": "r1", "destination": "r3", "volume": 10},
                                  {"source": 2, "destination": 4, "volume": 6.5}]})
        check("restart: PUT demands", st == 200 and d1["demands"] == 2, d1)
        st, c = req(port, "PATCH", "/v1/graphs/sq/capacities", {"links": [{"link": [3, 4], "capacity": 20}]})
        check("restart: PATCH capacities", st == 200, c)
        kept["before"] = req(port, "GET", "/v1/graphs/sq/demands")[1]

    def second(port):
        st, after = req(port, "GET", "/v1/graphs/sq/demands")
        before = kept.get("before")
        check("restart: demands and overrides kept", st == 200 and after == before and
              after["demand_version"] and len(after["demands"]) == 2, (before, after))
        st, L = req(port, "POST", "/v1/graphs/sq/load")
        check("restart: loads from the kept demands", st == 200 and
              abs(link(L, 4, 3)["utilization"] - 5 / 20) < 1e-12, L)
        st, d3 = req(port, "DELETE", "/v1/graphs/sq/demands")
        check("restart: DELETE", st == 200, d3)

    def third(port):
        st, e = req(port, "POST", "/v1/graphs/sq/load")
        check("restart after DELETE: no demands", st == 400 and "no demands" in e["message"], e)

    phases(tmp, ((first, cache), (second, cache), (third, cache)))  # the same cache path


def phases(tmp, runs, graphs=None):
    """Runs each (phase, cache_path) against its own daemon in tmp, one after the other, on
    graph sq: the square, or graphs[i] (GraphML text) for run i."""
    for i, (phase, path) in enumerate(runs):
        p, port = netops_http.serve(tmp, graphs[i] if graphs else SQUARE, path, TOKEN)
        try:
            if port is not None:
                phase(port)
        except Exception:
            print("the daemon's stderr:\n" + netops_http.stderr_tail(p), file=sys.stderr)
            raise
        finally:
            p.terminate()
            p.wait(timeout=30)


def wait_job(port, job):
    for _ in range(400):
        st, s = req(port, "GET", "/v1/failure-analysis/%d" % job)
        if st != 200 or s["state"] in ("done", "failed"):
            return s
        time.sleep(0.05)
    return None


def without_cached(res):
    return {k: v for k, v in res.items() if k != "cached"}


def cached_results():
    """Failure-analysis results kept in the SQLite cache by graph version, demand version and the
    normalized request: a restarted daemon answers a repeat from the cache (a job done at once,
    "cached": true, the same result and CSV); new demands, a cost change or the cache off
    recompute."""
    tmp = tempfile.mkdtemp()
    cache = os.path.join(tmp, "cache.sqlite")
    demands = {"demands": [{"source": "r1", "destination": "r3", "volume": 10},
                           {"source": 2, "destination": 4, "volume": 6}]}
    kept = {}

    def first(port):
        st, d = req(port, "PUT", "/v1/graphs/sq/demands", demands)
        check("cache: PUT demands", st == 200, d)
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {"links": True, "routers": True})
        check("cache: first analysis computed (202, not cached)", st == 202 and j["cached"] is False, j)
        s = wait_job(port, j["job"])
        check("cache: first analysis done", s and s["state"] == "done" and s["result"]["cached"] is False, s)
        kept["result"] = s["result"] if s else None
        kept["csv"] = req(port, "GET", "/v1/failure-analysis/%d?format=csv" % j["job"], raw=True)[1]
        # the same question, members in another order and another strategy: the same job
        st, j2 = req(port, "POST", "/v1/graphs/sq/failure-analysis",
                     {"strategy": "full", "routers": True, "links": True})
        check("cache: repeat answered by the same job", st == 200 and j2["job"] == j["job"], j2)

    def second(port):
        # {} is the same question (every link and router by default), asked of a new daemon
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {})
        check("cache: after a restart, a job done at once (200, cached)", st == 200 and
              j["state"] == "done" and j["cached"] is True and j["scenarios"] == 9, j)
        st, s = req(port, "GET", "/v1/failure-analysis/%d" % j["job"])
        r = s.get("result") or {}
        check("cache: the same result", st == 200 and s["cached"] is True and r.get("cached") is True and
              kept["result"] and without_cached(r) == without_cached(kept["result"]), (r, kept["result"]))
        st, csv = req(port, "GET", "/v1/failure-analysis/%d?format=csv" % j["job"], raw=True)
        check("cache: the same CSV", st == 200 and csv == kept["csv"] and csv.count("\n") == 10, csv)
        # other scenarios: not the cached answer
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {"routers": False})
        check("cache: other scenarios computed", st == 202 and j["cached"] is False and j["scenarios"] == 4, j)
        wait_job(port, j["job"])
        # new demands: a new demand version, computed again
        st, d = req(port, "PUT", "/v1/graphs/sq/demands",
                    {"demands": [{"source": "r1", "destination": "r3", "volume": 12}]})
        check("cache: new demands", st == 200, d)
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {})
        check("cache: new demands recompute", st == 202 and j["cached"] is False and
              j["demand_version"] == d["demand_version"], j)
        s = wait_job(port, j["job"])
        top = s["result"]["scenarios"][0] if s and s.get("result") else {}
        check("cache: new demands' answer", abs(top.get("worst_utilization", 0) - 12 / 8) < 1e-12, top)
        st, d = req(port, "PUT", "/v1/graphs/sq/demands", demands)  # the first demands again
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {})
        check("cache: the first demands again: cached", st == 200 and j["cached"] is True, j)
        # a cost change: a new graph version, computed again
        st, pr = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 2], "cost": 3}]})
        check("cache: cost change", st == 200, pr)
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {})
        check("cache: a cost change recomputes", st == 202 and j["cached"] is False and
              j["version"] != kept["result"]["version"], j)
        wait_job(port, j["job"])

    def third(port):  # the cache off: computed again
        st, d = req(port, "PUT", "/v1/graphs/sq/demands", demands)
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", {})
        check("cache off: computed", st == 202 and j["cached"] is False, j)
        s = wait_job(port, j["job"])
        check("cache off: the same answer", s and kept["result"] and
              without_cached(s["result"])["scenarios"] == kept["result"]["scenarios"], s)

    phases(tmp, ((first, cache), (second, cache), (third, "")))


def repair_jobs():
    """Repair paths as a job: 202 + Location, progress, the result the synchronous answer's
    (JSON but compute_ms, CSV to the byte); kept in the SQLite cache like failure analyses (a
    repeat, and a repeat after a restart: a job done at once, "cached": true, the same bytes)."""
    tmp = tempfile.mkdtemp()
    cache = os.path.join(tmp, "cache.sqlite")
    kept = {}

    def run(port, body):
        st, j = req(port, "POST", "/v1/graphs/sq/repair-jobs", body)
        if st not in (200, 202):
            return st, j, None
        for _ in range(400):
            st2, s = req(port, "GET", j["status"])
            check("repair job: progress in [0, 1]", st2 == 200 and 0 <= s["progress"] <= 1, s)
            if s["state"] in ("done", "failed", "cancelled"):
                break
            time.sleep(0.05)
        return st, j, req(port, "GET", j["status"] + "/result", raw=True)

    def no_ms(text):
        d = json.loads(text)
        d.pop("compute_ms", None)
        return d

    def off(port):  # the cache off: the job computes what the synchronous call does
        for fmt in ("json", "csv"):
            st, sync = req(port, "POST", "/v1/graphs/sq/repair-paths", {"format": fmt}, raw=True)
            st, j, res = run(port, {"format": fmt})
            check("repair job %s: 202, not cached" % fmt, st == 202 and j["cached"] is False and
                  j["state"] in ("queued", "running", "done"), j)
            same = res and res[0] == 200 and (res[1] == sync if fmt == "csv" else no_ms(res[1]) == no_ms(sync))
            check("repair job %s: the synchronous answer" % fmt, same, (res, sync))
        st, e = req(port, "POST", "/v1/graphs/sq/repair-jobs", {"routers": ["nowhere"]})
        check("repair job: unknown router 400", st == 400 and "routers[0]" in e.get("message", ""), e)
        st, e = req(port, "GET", "/v1/repair-jobs/999")
        check("repair job: unknown job 404", st == 404, e)

    def first(port):
        st, j, res = run(port, {"format": "csv", "node_protection": False})
        check("repair job cached: first computed", st == 202 and res and res[0] == 200, (j, res))
        kept["csv"] = res[1] if res else None
        st, j2, res2 = run(port, {"node_protection": False, "format": "csv"})
        check("repair job cached: repeat done at once", st == 200 and j2["state"] == "done" and
              j2["cached"] is True and j2["job"] != j["job"] and res2[1] == kept["csv"], (j2, res2))
        st, d = req(port, "DELETE", "/v1/repair-jobs/%d" % j["job"])
        check("repair job: DELETE of a done job", st == 200 and d["state"] == "deleted", d)
        st, e = req(port, "GET", "/v1/repair-jobs/%d" % j["job"])
        check("repair job: deleted is gone", st == 404, e)

    def second(port):
        st, j, res = run(port, {"format": "csv", "node_protection": False})
        check("repair job cached after a restart", st == 200 and j["cached"] is True and
              res and res[1] == kept["csv"], (j, res))
        st, sync = req(port, "POST", "/v1/graphs/sq/repair-paths", {"format": "csv", "node_protection": False},
                       raw=True)
        check("repair-paths: the cached answer", st == 200 and sync == kept["csv"], sync)
        st, pr = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 2], "cost": 3}]})
        st, j, res = run(port, {"format": "csv", "node_protection": False})
        check("repair job: a cost change recomputes", st == 202 and j["cached"] is False and
              res and res[1] != kept["csv"], (j, res))

    phases(tmp, ((off, ""), (first, cache), (second, cache)))


def mesh_graphml(n, extra, seed):
    """A ring of n routers r1..rn plus `extra` seeded random chords (costs 1-9), as GraphML."""
    rnd = random.Random(seed)
    edges = {(i, i % n + 1) for i in range(1, n + 1)}
    while len(edges) < n + extra:
        a, b = rnd.sample(range(1, n + 1), 2)
        if (a, b) not in edges and (b, a) not in edges:
            edges.add((a, b))
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
           '  <key attr.name="label" attr.type="string" for="node" id="d0" />',
           '  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d1" />',
           '  <key attr.name="weight" attr.type="double" for="edge" id="d2" />',
           '  <graph edgedefault="undirected">']
    out += ['    <node id="%d"><data key="d0">r%d</data></node>' % (i, i) for i in range(1, n + 1)]
    out += ['    <edge source="%d" target="%d"><data key="d1">100</data><data key="d2">%d</data>'
            '</edge>' % (a, b, rnd.randint(1, 9)) for a, b in sorted(edges)]
    out += ["  </graph>", "</graphml>", ""]
    return "\n".join(out)


def wait_end(port, path, bound_s):
    """Polls path until the job has ended (done, failed, cancelled); (state, seconds) or None."""
    t0 = time.time()
    while time.time() - t0 < bound_s:
        st, s = req(port, "GET", path)
        if st == 200 and s["state"] in ("done", "failed", "cancelled"):
            return s["state"], time.time() - t0
        time.sleep(0.02)
    return None, time.time() - t0


def wait_running(port, path):
    for _ in range(1000):
        st, s = req(port, "GET", path)
        if st != 200 or s["state"] != "queued":
            return s.get("state") if st == 200 else None
        time.sleep(0.01)
    return None


def cancel_jobs():
    """DELETE stops a running failure analysis (100,000 sampled link pairs on a 150-router mesh)
    and a running repair job (TI-LFA for every router of a 2,000-router mesh; about 9 s to the end
    on two cores, 550 s for the analysis) within seconds: both
    end "cancelled" with no result; a queued failure analysis never runs; the server keeps
    answering, and the same question asked again runs to the end."""
    tmp = tempfile.mkdtemp()
    rnd = random.Random(7)

    def fa(port):
        rows = [{"source": "r%d" % a, "destination": "r%d" % b, "volume": rnd.randint(1, 9)}
                for a, b in (rnd.sample(range(1, 151), 2) for _ in range(400))]
        st, d = req(port, "PUT", "/v1/graphs/sq/demands", {"demands": rows})
        check("cancel: PUT demands", st == 200, d)
        ask = {"links": False, "routers": False, "link_pairs_sample": 100000, "seed": 3, "strategy": "incremental"}
        st, j = req(port, "POST", "/v1/graphs/sq/failure-analysis", ask)
        check("cancel: a long failure analysis submitted", st == 202 and j["scenarios"] == 100000, j)
        st, q = req(port, "POST", "/v1/graphs/sq/failure-analysis", dict(ask, seed=4))
        check("cancel: a second one queued behind it", st == 202 and q["state"] == "queued", q)
        path = "/v1/failure-analysis/%d" % j["job"]
        state = wait_running(port, path)
        st, d = req(port, "DELETE", path)
        check("cancel: DELETE of the running analysis", state == "running" and st == 200 and
              d["state"] == "cancelling", (state, d))
        st, dq = req(port, "DELETE", "/v1/failure-analysis/%d" % q["job"])
        check("cancel: DELETE of the queued one", st == 200 and dq["state"] == "cancelling", dq)
        end, took = wait_end(port, path, 60)
        check("cancel: the running analysis ends cancelled within seconds", end == "cancelled" and
              took < 20, (end, took))
        st, s = req(port, "GET", path)
        check("cancel: no result", st == 200 and "result" not in s and
              req(port, "GET", path + "?format=csv")[0] == 404, s)
        endq, _ = wait_end(port, "/v1/failure-analysis/%d" % q["job"], 60)
        check("cancel: the queued one never ran", endq == "cancelled", endq)
        st, l = req(port, "POST", "/v1/graphs/sq/load")
        check("cancel: the server keeps answering", st == 200 and l["links"], st)
        # the same question again: a new job (a cancelled one is not an answer), not cached
        st, j2 = req(port, "POST", "/v1/graphs/sq/failure-analysis",
                     {"links": True, "strategy": "incremental"})
        check("cancel: a new analysis runs", st == 202 and j2["job"] != j["job"], j2)
        end2, _ = wait_end(port, "/v1/failure-analysis/%d" % j2["job"], 120)
        check("cancel: ... to the end", end2 == "done", end2)
        st, d = req(port, "DELETE", "/v1/failure-analysis/%d" % j2["job"])
        check("cancel: DELETE of a done analysis forgets it", st == 200 and d["state"] == "deleted" and
              req(port, "GET", "/v1/failure-analysis/%d" % j2["job"])[0] == 404, d)
        st, e = req(port, "DELETE", "/v1/failure-analysis/x1")
        check("cancel: a bad job number is 400", st == 400, e)

    def repair(port):
        st, j = req(port, "POST", "/v1/graphs/sq/repair-jobs", {"summary": True})
        check("cancel: a long repair job submitted", st == 202, j)
        path = "/v1/repair-jobs/%d" % j["job"]
        state = wait_running(port, path)
        st, d = req(port, "DELETE", path)
        check("cancel: DELETE of the running repair job", state == "running" and st == 200 and
              d["state"] == "cancelling", (state, d))
        end, took = wait_end(port, path, 60)
        check("cancel: the repair job ends cancelled within seconds", end == "cancelled" and
              took < 20, (end, took))
        st, e = req(port, "GET", path + "/result")
        check("cancel: the repair job has no result", st == 404, e)

    phases(tmp, ((fa, ""), (repair, "")),
           (mesh_graphml(150, 450, 1), mesh_graphml(2000, 10000, 2)))


main()
restart()
cached_results()
repair_jobs()
cancel_jobs()
print("%d passed, %d failed, 0 skipped" % (netops_http.passed, netops_http.failed))
