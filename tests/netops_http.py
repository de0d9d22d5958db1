#!/usr/bin/python3
"""netops_http.py - drives a real `gpath serve` over loopback (tests/test_netops_http.sh): the
routing-table endpoints on a hand-drawn GraphML network (SQUARE: a square with a diagonal and an
isolated router) with literal ECMP sets, what-if, PATCH links (new version swapped in), jobs (202 +
polling, result stored in the SQLite cache), and the error answers; then the bandwidth cost rule
through the CLI. Prints one line per failed check and "N passed, N failed, N skipped" last.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BIN = os.environ.get("GPATH_BIN", "build/gpath")
OPERATOR_TOKEN = "op-token"  # PATCH links changes what gpath answers: it needs operator_token

# Routers 1..5: square 1-2-3-4-1 and diagonal 1-3; with the bandwidth rule the square links are
# 10G (cost 10) and the diagonal 5G (cost 20), so 1->3 has three equal-cost next hops {2, 3, 4};
# router 5 has no link (unreachable).
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
    <edge source="1" target="2"><data key="d1">10000000000</data></edge>
    <edge source="2" target="3"><data key="d1">10000000000</data></edge>
    <edge source="3" target="4"><data key="d1">10000000000</data></edge>
    <edge source="4" target="1"><data key="d1">10000000000</data></edge>
    <edge source="1" target="3"><data key="d1">5000000000</data></edge>
  </graph>
</graphml>
"""

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, detail))


def req(port, method, path, body=None, token=OPERATOR_TOKEN):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method)
    if method == "PATCH" and token:
        r.add_header("Authorization", "Bearer " + token)
    if data is not None:
        r.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read() or b"null")


def stderr_tail(p, n=2000):
    """The last n characters the daemon p (started by serve) wrote to stderr."""
    with open(p.err_path, "rb") as f:
        return f.read().decode(errors="replace")[-n:]


def serve(tmp, graphml, cache_path, token):
    """Starts `gpath serve --backend cpu` on graph sq (graphml written to tmp/square.graphml) and
    waits until sq has loaded. Returns (process, port); port None when it did not start (a failed
    check records why)."""
    gml = os.path.join(tmp, "square.graphml")
    with open(gml, "w") as f:
        f.write(graphml)
    portf = os.path.join(tmp, "port")
    if os.path.exists(portf):  # a restart in the same directory
        os.unlink(portf)
    env = dict(os.environ, GPATH_LOG_LEVEL="warn")
    # the daemon's stderr goes to a file, never an unread pipe: a sanitizer's report is kept whole
    # and a full pipe cannot block the server; stderr_tail(p) reads it
    err = open(os.path.join(tmp, "serve.err"), "ab")
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--port-file", portf, "--listen", "127.0.0.1",
                          "--backend", "cpu", "--cache-path", cache_path, "--graph", "sq=graphml:" + gml,
                          "--log-level", "warn", "--operator-token", token],
                         stdout=subprocess.DEVNULL, stderr=err, env=env)
    err.close()
    p.err_path = err.name
    port = None
    for _ in range(200):
        if os.path.exists(portf) and open(portf).read().strip():
            port = int(open(portf).read())
            break
        time.sleep(0.05)
    if port is None:
        check("server started", False, stderr_tail(p) if p.poll() is not None else "")
        return p, None
    for _ in range(200):  # graphs load in the background
        if req(port, "GET", "/v1/graphs/sq")[0] == 200:
            break
        time.sleep(0.05)
    return p, port


def ids(d):
    """d without the *_name / *_names members (names are checked in tests/api_test.py)."""
    if isinstance(d, dict):
        return {k: ids(v) for k, v in d.items() if not k.endswith("_name") and not k.endswith("_names")}
    return d


def route(table, dest):
    return ids(next(r for r in table["routes"] if r["destination"] == dest))


def main():
    tmp = tempfile.mkdtemp()
    # served with the default hop-count rule; the bandwidth rule is checked through the CLI below
    p, port = serve(tmp, SQUARE, os.path.join(tmp, "cache.sqlite"), OPERATOR_TOKEN)
    try:
        if port is None:
            return

        st, _, t1 = req(port, "GET", "/v1/graphs/sq/routing-table?router=1")
        check("routing-table 200", st == 200, str(t1))
        check("routing-table router", t1.get("router") == 1 and t1.get("name") == "r1", str(t1)[:200])
        check("ECMP 1->3 (hops: direct diagonal)", route(t1, 3) == {"destination": 3, "weight": 1, "next_hops": [3]}, str(route(t1, 3)))
        check("ECMP 1->2", route(t1, 2)["next_hops"] == [2] and route(t1, 2)["weight"] == 1)
        check("self", route(t1, 1) == {"destination": 1, "weight": 0, "next_hops": []})
        check("unreachable", route(t1, 5) == {"destination": 5, "weight": None, "next_hops": []})
        st, _, t2 = req(port, "GET", "/v1/graphs/sq/routing-table?router=2")
        check("ECMP 2->4 two ways", route(t2, 4) == {"destination": 4, "weight": 2, "next_hops": [1, 3]}, str(route(t2, 4)))
        st, _, tn = req(port, "GET", "/v1/graphs/sq/routing-table?router_name=r2")
        check("router_name", st == 200 and tn.get("router") == 2 and tn["routes"] == t2["routes"])
        version = t1.get("version")

        st, hdr, all_ = req(port, "GET", "/v1/graphs/sq/routing-tables")
        check("routing-tables 200", st == 200)
        check("routing-tables chunked", hdr.get("Transfer-Encoding", "").lower() == "chunked", str(hdr))
        check("routing-tables all routers", all_["routers"] == 5 and [t["router"] for t in all_["tables"]] == [1, 2, 3, 4, 5])
        check("routing-tables == per router", all_["tables"][0]["routes"] == t1["routes"] and all_["tables"][1]["routes"] == t2["routes"])

        st, _, e = req(port, "GET", "/v1/graphs/sq/routing-table?router=9")
        check("unknown router 400", st == 400 and e["code"] == "UnknownNode", str(e))
        st, _, e = req(port, "GET", "/v1/graphs/sq/routing-table")
        check("missing router 400", st == 400 and e["code"] == "InvalidQuery", str(e))
        st, _, e = req(port, "GET", "/v1/graphs/sq/routing-table?router_name=nope")
        check("unknown router_name 400", st == 400 and e["code"] == "UnknownNode", str(e))
        st, _, e = req(port, "GET", "/v1/graphs/nope/routing-table?router=1")
        check("unknown graph 404", st == 404 and e["code"] == "UnknownGraph", str(e))

        # repair paths (hops): router 1 reaches 2 directly; 3 is its LFA (d(3,2) = 1 < d(3,1) +
        # d(1,2) = 2) and, without the link 1-2, the post-convergence path 1,3,2 needs no segment
        st, _, rp = req(port, "POST", "/v1/graphs/sq/repair-paths", {"routers": [1]})
        check("repair-paths 200", st == 200, str(rp)[:300])
        rows = {(r["router"], r["destination"], r["primary_next_hop"]): r for r in rp.get("repairs", [])}
        check("repair-paths rows of router 1 only", sorted(rows) == [(1, 2, 2), (1, 3, 3), (1, 4, 4)], str(sorted(rows)))
        r12 = ids(rows.get((1, 2, 2), {}))
        check("repair 1->2: LFA 3", r12.get("lfa") == 3 and r12.get("lfa_node_protecting") is False and r12.get("node_repair") is None, str(r12))
        check("repair 1->2: TI-LFA via 3, no segment", r12.get("link_repair") == {"cost": 2, "next_hop": 3, "p_node": 3, "q_node": 3, "segments": []}, str(r12))
        cov1 = ids(rp["per_router"][0])
        check("repair coverage router 1", cov1["router"] == 1 and cov1["destinations"] == 3 and cov1["lfa_link"] == 3 and cov1["tilfa_link"] == 3 and cov1["node_destinations"] == 0 and cov1["lfa_node_share"] is None, str(cov1))
        st, _, rp2 = req(port, "POST", "/v1/graphs/sq/repair-paths", {"routers": ["r2"], "paths": True})
        ecmp = {r["primary_next_hop"]: ids(r) for r in rp2.get("repairs", []) if r["destination"] == 4}
        check("repair 2->4 ECMP: each next hop the other's LFA", sorted(ecmp) == [1, 3] and ecmp[1]["lfa"] == 3 and ecmp[3]["lfa"] == 1 and ecmp[1]["link_repair"]["path"] == [2, 3, 4], str(ecmp))
        st, _, rs = req(port, "POST", "/v1/graphs/sq/repair-paths", {"summary": True})
        check("repair summary: no rows, network coverage", st == 200 and rs["repairs"] == [] and rs["coverage"]["destinations"] == 12, str(rs)[:300])
        rq = urllib.request.Request("http://127.0.0.1:%d/v1/graphs/sq/repair-paths" % port, method="POST",
                                    data=json.dumps({"routers": [1], "format": "csv"}).encode(),
                                    headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(rq, timeout=30) as resp:
            csv_lines = resp.read().decode().splitlines()
            check("repair csv", resp.headers.get("Content-Type", "").startswith("text/csv") and csv_lines[0].startswith("router,router_name,destination,") and len(csv_lines) == 4 and csv_lines[1].startswith("1,r1,2,r2,2,r2,link,1,3,r3,2,3,r3,3,r3,3,r3,"), str(csv_lines[:2]))
        for body, code in (({"routers": [9]}, "UnknownNode"), ({"routers": 5}, "InvalidJson"),
                           ({"format": "xml"}, "InvalidQuery"), ({"summary": "yes"}, None),
                           ({"bogus": 1}, None)):
            st, _, e = req(port, "POST", "/v1/graphs/sq/repair-paths", body)
            check("repair-paths bad %s 400" % json.dumps(body), st == 400 and (code is None or e["code"] == code), str(e))

        # what-if: fail the diagonal -> 1->3 and 3->1 now go two ways at weight 2
        st, _, w = req(port, "POST", "/v1/graphs/sq/what-if", {"fail_links": [[1, 3]]})
        check("what-if 200", st == 200, str(w))
        ch = {(c["router"], c["destination"]): ids(c) for c in w.get("changes", [])}
        check("what-if pairs", set(ch) == {(1, 3), (3, 1)}, str(sorted(ch)))
        check("what-if 1->3", ch.get((1, 3), {}).get("after") == {"weight": 2, "next_hops": [2, 4]} and
              ch[(1, 3)]["before"] == {"weight": 1, "next_hops": [3]}, str(ch.get((1, 3))))
        check("what-if count", w.get("count") == len(w.get("changes", [])))
        st, _, w2 = req(port, "POST", "/v1/graphs/sq/what-if", {"fail_routers": [2], "set_costs": [{"link": [3, 4], "cost": 5}]})
        ch2 = {(c["router"], c["destination"]): ids(c) for c in w2.get("changes", [])}
        check("what-if router down", ch2.get((2, 1), {}).get("after") == {"weight": None, "next_hops": []}, str(ch2.get((2, 1))))
        check("what-if set cost", ch2.get((4, 3), {}).get("after") == {"weight": 2, "next_hops": [1]}, str(ch2.get((4, 3))))
        st, _, g = req(port, "GET", "/v1/graphs/sq")
        check("what-if leaves the graph", g.get("version") == version)
        st, _, e = req(port, "POST", "/v1/graphs/sq/what-if", {"fail_links": [[2, 4]]})
        check("what-if no such link 404", st == 404 and e["code"] == "NotFound", str(e))
        st, _, e = req(port, "POST", "/v1/graphs/sq/what-if", {"fail_links": [[1]]})
        check("what-if bad link 400", st == 400 and e["code"] == "InvalidJson", str(e))
        st, _, e = req(port, "POST", "/v1/graphs/sq/what-if", {"fail_routers": [77]})
        check("what-if unknown router 400", st == 400 and e["code"] == "UnknownNode", str(e))

        # PATCH needs the operator token: without one 401, a wrong one 403, and no change
        st, _, e = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 3], "cost": 3}]}, token=None)
        check("PATCH without token 401", st == 401 and e["code"] == "Unauthorized", str(e))
        st, _, e = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 3], "cost": 3}]}, token="nope")
        check("PATCH wrong token 403", st == 403 and e["code"] == "Forbidden", str(e))
        st, _, g = req(port, "GET", "/v1/graphs/sq")
        check("refused PATCH leaves the graph", g.get("version") == version, str(g))
        # PATCH: diagonal cost 3 and 3-4 down -> new version served
        st, _, pr = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 3], "cost": 3}, {"link": [4, 3], "down": True}]})
        check("patch 200", st == 200, str(pr))
        check("patch versions", pr.get("previous_version") == version and pr.get("version") not in (None, version), str(pr))
        st, _, g = req(port, "GET", "/v1/graphs/sq")
        check("patched version served", g.get("version") == pr.get("version"), str(g))
        st, _, t1b = req(port, "GET", "/v1/graphs/sq/routing-table?router=1")
        check("patched tables", t1b.get("version") == pr.get("version") and route(t1b, 3) == {"destination": 3, "weight": 2, "next_hops": [2]}, str(route(t1b, 3)))
        st, _, t4 = req(port, "GET", "/v1/graphs/sq/routing-table?router=4")
        check("patched link down", route(t4, 3) == {"destination": 3, "weight": 3, "next_hops": [1]}, str(route(t4, 3)))
        st, _, e = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [2, 4], "cost": 1}]})
        check("patch no such link 404", st == 404 and e["code"] == "NotFound", str(e))
        st, _, e = req(port, "PATCH", "/v1/graphs/sq/links", {"links": [{"link": [1, 2], "cost": -1}]})
        check("patch negative cost 400", st == 400 and e["code"] == "InvalidQuery" and "links[0].cost" in e["message"], str(e))
        st, _, e = req(port, "PATCH", "/v1/graphs/sq/links", {"nolinks": []})
        check("patch bad body 400", st == 400 and e["code"] == "InvalidQuery" and "nolinks" in e["message"], str(e))

        # jobs
        st, hdr, j = req(port, "POST", "/v1/graphs/sq/jobs")
        check("job 202", st == 202 and isinstance(j.get("job"), int), str(j))
        check("job Location", hdr.get("Location") == "/v1/jobs/%d" % j.get("job", -1), str(hdr))
        js = {}
        for _ in range(400):
            st, _, js = req(port, "GET", "/v1/jobs/%d" % j["job"])
            if js.get("state") in ("done", "failed"):
                break
            time.sleep(0.02)
        check("job done", js.get("state") == "done" and js.get("progress") == 1, str(js))
        check("job result stored", js.get("result", {}).get("stored") == "sqlite", str(js))
        check("job version", js.get("version") == pr.get("version"), str(js))
        st, _, e = req(port, "GET", "/v1/jobs/424242")
        check("unknown job 404", st == 404 and e["code"] == "NotFound", str(e))
        st, _, e = req(port, "GET", "/v1/jobs/abc")
        check("bad job id 400", st == 400 and e["code"] == "InvalidQuery", str(e))
    finally:
        p.terminate()
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = -9
        check("clean shutdown", rc == 0, "exit %s: %s" % (rc, stderr_tail(p)))
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)

    # the bandwidth cost rule through the CLI: diagonal 5G costs 20, two square hops 10 + 10
    tmp2 = tempfile.mkdtemp()
    gml = os.path.join(tmp2, "square.graphml")
    with open(gml, "w") as f:
        f.write(SQUARE)
    out = subprocess.run([BIN, "routing-tables", "--graph", gml, "--cost-rule", "bandwidth", "--router", "1", "--backend", "cpu"],
                         capture_output=True, text=True)
    os.unlink(gml)
    os.rmdir(tmp2)
    check("cli bandwidth rc", out.returncode == 0, out.stderr)
    if out.returncode == 0:
        t = json.loads(out.stdout)
        check("cli bandwidth ECMP 1->3", route(t, 3) == {"destination": 3, "weight": 20, "next_hops": [2, 3, 4]}, str(route(t, 3)))


if __name__ == "__main__":
    main()
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    sys.exit(1 if failed else 0)
