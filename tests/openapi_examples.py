#!/usr/bin/python3
"""openapi_examples.py - keeps the examples of openapi.yaml real: starts `gpath serve` with a
generated road graph (`road`, gen:1000:7) and the hand-drawn router topology of
tests/netops_http.py (`net`, GraphML: a square with a diagonal and an isolated router) and
tests/data/osm/traffic.osm (`traffic`, the live traffic endpoints' map: text/csv bodies), performs
the request each example documents, and checks that the example has the shape of the live answer
(the same object keys at every level, the same JSON types: numbers, strings, booleans, arrays,
objects, where null stands in for any type as nullable values do; text answers: every Prometheus metric named in the example is still exported,
other text occurs line by line in the answer; binary answers such as images: status and media
type only, they carry no example). Long captures keep the first 3 elements of every array.

Where the examples live: each operation's success response (every 2xx) has, under its media type,
`examples: {live: {summary: "METHOD /path?query", value: ...}}`; the summary is the request that
produced the value, with the graphs named `road` and `net` as above (admin calls get the bearer
token). An operation with a request body has `examples: {live: {value: ...}}` under its
requestBody's media type: that body is sent. So a newcomer can replay every example with curl.

Usage: openapi_examples.py            check every example against the live server
       openapi_examples.py --write    capture the live answers and write them into openapi.yaml
                                      (new operations: add an `examples: {live: {summary: ...}}`
                                      line under the success response first, with any `value`)
Operations run in the order of STATEFUL below (jobs, link changes and admin calls change the
server), the others first in document order. Prints "N passed, N failed, N skipped" last (one per
example). Needs python3-yaml; GPATH_BIN (default $BUILD/gpath).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from netops_http import SQUARE  # noqa: E402  (the router topology fixture)

BIN = os.path.abspath(os.environ.get("GPATH_BIN") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "gpath"))
SPEC = os.path.join(ROOT, "openapi.yaml")
TOKEN = "example-admin-token"
METHODS = ("get", "put", "post", "delete", "patch")
# operations that change the server's state, in the order they run after every other operation
STATEFUL = ["submitJob", "getJob", "submitMatrixJob", "getMatrixJob", "getMatrixJobResult",
            "deleteMatrixJob", "putDemands", "getDemands", "linkLoads", "submitFailureAnalysis",
            "getFailureAnalysis", "deleteFailureAnalysis", "submitRepairJob", "getRepairJob", "getRepairJobResult",
            "deleteRepairJob", "patchCapacities", "deleteDemands", "patchLinks", "postSegmentSpeeds", "postTurnPenalties",
            "deleteTurnPenalties", "deleteSegmentSpeeds", "cacheStats", "cachePurge", "putGraph",
            "reloadGraph", "deleteGraph"]
# PUT answers 201 for a new graph, then 200 for the same name again
STATUS_ORDER = {"201": 0, "200": 1}

passed = failed = skipped = 0


def report(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}{': ' + detail if detail else ''}")


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def shape_diff(ex, live, where="$"):
    """Differences in shape between an example and a live answer (index-aligned for arrays: the
    example is an earlier capture of the same request; a longer example array is compared with
    the live array's last element)."""
    if kind(ex) != kind(live):
        if ex is None or live is None:  # a nullable value (unreachable, no predecessor, ...)
            return []
        return [f"{where}: example is {kind(ex)}, live answer is {kind(live)}"]
    out = []
    if isinstance(ex, dict):
        for k in sorted(set(ex) - set(live)):
            out.append(f"{where}.{k}: in the example, not in the live answer")
        for k in sorted(set(live) - set(ex)):
            out.append(f"{where}.{k}: in the live answer, not in the example")
        for k in sorted(set(ex) & set(live)):
            out += shape_diff(ex[k], live[k], f"{where}.{k}")
    elif isinstance(ex, list) and ex and live:
        for i, e in enumerate(ex):
            out += shape_diff(e, live[min(i, len(live) - 1)], f"{where}[{i}]")
    return out


def metric_names(text):
    return {re.split(r"[{ ]", ln, 1)[0] for ln in text.splitlines() if ln and not ln.startswith("#")}


def text_diff(ex, live, mt):
    """Prometheus text: every metric the example names is exported; other text (YAML, HTML,
    scripts): every line of the example occurs in the live answer."""
    if mt.startswith("text/plain"):
        missing = metric_names(ex) - metric_names(live)
        return [f"metrics {sorted(missing)} in the example are not exported"] if missing else []
    return [f"line {ln[:80]!r} of the example is not in the live answer"
            for ln in ex.splitlines() if ln.strip() and ln not in live][:3]


def media_matches(mt, ctype):
    """A documented media type (maybe type/* or */*) against a Content-Type header."""
    want, got = mt.split(";")[0].strip().lower(), ctype.split(";")[0].strip().lower()
    if want == "*/*":
        return bool(got)
    if want.endswith("/*"):
        return got.startswith(want[:-1])
    return got == want


def is_binary(mt):
    """Media types whose answers are not text (images): no example value is kept for them."""
    return mt.split("/")[0] in ("image", "audio", "video") or \
        mt in ("application/octet-stream", "application/x-npy", "application/x-protobuf",
               "application/vnd.mapbox-vector-tile")


def trimmed(v, limit=3000):
    """A capture small enough to read in the document: when its JSON is longer than `limit`
    characters, every array keeps its first 3 elements (the shape stays the live answer's)."""
    if len(json.dumps(v)) <= limit:
        return v

    def cut(x):
        if isinstance(x, list):
            return [cut(e) for e in x[:3]]
        if isinstance(x, dict):
            return {k: cut(e) for k, e in x.items()}
        return x
    return cut(v)


def request(port, method, path, body=None, token=False, headers=()):
    text = isinstance(body, str)  # a text/csv body (traffic files) goes as it is
    data = (body.encode() if text else json.dumps(body).encode()) if body is not None else None
    r = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    for k, v in headers:
        r.add_header(k, v)
    if data is not None:
        r.add_header("Content-Type", "text/csv" if text else "application/json")
    if token:
        r.add_header("Authorization", "Bearer " + TOKEN)
    try:
        with urllib.request.urlopen(r, timeout=60) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode(errors="replace")


def examples(doc):
    """[(operationId, status, media type, summary, request body or None, example value)] in run
    order; operations without a live example come back with summary None."""
    found = []
    for p, item in doc["paths"].items():
        for m in METHODS:
            op = item.get(m)
            if not op:
                continue
            body = None
            for media in ((op.get("requestBody") or {}).get("content") or {}).values():
                live = (media.get("examples") or {}).get("live")
                if live:
                    body = live.get("value")
            any_2xx = False
            secured = bool(op.get("security", doc.get("security")))
            for code, resp in sorted((op.get("responses") or {}).items(),
                                     key=lambda cr: STATUS_ORDER.get(str(cr[0]), 0)):
                if not str(code).startswith("2") or "$ref" in resp:
                    continue
                any_2xx = True
                for mt, media in (resp.get("content") or {}).items():
                    live = (media.get("examples") or {}).get("live") or {}
                    found.append((op.get("operationId"), str(code), mt, live.get("summary"), body,
                                  live.get("value"), f"{m.upper()} {p}", secured))
            if not any_2xx:
                found.append((op.get("operationId"), None, None, None, body, None, f"{m.upper()} {p}",
                              secured))

    def order(e):
        oid = e[0]
        return (1, STATEFUL.index(oid)) if oid in STATEFUL else (0, 0)
    return sorted(found, key=order)  # stable: document order within the first group


def start_server(tmp):
    gml = os.path.join(tmp, "net.graphml")
    with open(gml, "w", encoding="utf-8") as f:
        f.write(SQUARE)
    portf = os.path.join(tmp, "port")
    log = open(os.path.join(tmp, "serve.log"), "w")
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--port-file", portf, "--listen", "127.0.0.1",
                          "--backend", "cpu", "--cache-path", "cache.sqlite",
                          "--admin-token", TOKEN, "--log-level", "warn",
                          "--graph", "road=gen:1000:7", "--graph", "net=graphml:net.graphml",
                          "--graph", "traffic=" + os.path.join(ROOT, "tests", "data", "osm",
                                                               "traffic.osm")],
                         stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    deadline = time.time() + 60
    while time.time() < deadline:
        if p.poll() is not None:
            break
        if os.path.exists(portf) and open(portf).read().strip():
            port = int(open(portf).read())
            try:
                if request(port, "GET", "/ready")[0] == 200:
                    return p, port
            except OSError:
                pass
        time.sleep(0.05)
    p.kill()
    raise SystemExit("gpath serve did not become ready:\n" + open(log.name).read()[-2000:])


def live_answer(port, summary, body, token, mt=None):
    """The answer to a summary "METHOD /path[ | Header: value]...": media types other than JSON
    are asked for with Accept (a table as .npy)."""
    req, *hdrs = summary.split(" | ")
    method, _, path = req.partition(" ")
    headers = [tuple(h.split(": ", 1)) for h in hdrs]
    if mt and "json" not in mt and "*" not in mt:
        headers.append(("Accept", mt))
    if method == "POST" and path.endswith("/repair-jobs"):
        # the repeat's example is the one answered from the cache once the first job is done
        # (while it runs, the repeat names it): wait for it, so the answer does not race it
        for _ in range(600):
            st0, _, t0 = request(port, "GET", "/v1/repair-jobs/1", None, token, [])
            if st0 != 200 or json.loads(t0).get("state") not in ("queued", "running"):
                break
            time.sleep(0.05)
    st, ctype, text = request(port, method, path, body, token, headers)
    # a job's final state, not a snapshot of its progress
    for _ in range(600):
        if not (st == 200 and method == "GET" and
                re.match(r"^/v1/((matrix-|repair-)?jobs|failure-analysis)/\d+$", path) and
                json.loads(text).get("state") in ("queued", "running")):
            break
        time.sleep(0.05)
        st, ctype, text = request(port, method, path, body, token, headers)
    return st, ctype, text


def write_examples(captured):
    """Replaces (or fills) the `value:` of every live example in openapi.yaml with its capture
    (captured: {(summary, status): value}): JSON on one line (valid YAML), text as a block."""
    lines = open(SPEC, encoding="utf-8").read().split("\n")
    out, i, code = [], 0, None
    while i < len(lines):
        ln = lines[i]
        out.append(ln)
        c = re.match(r'^\s*"([1-5]\d\d)":', ln)
        if c:
            code = c.group(1)
        m = re.match(r"^(\s*)summary: ((?:GET|POST|PUT|PATCH|DELETE) /.*)$", ln)
        if m and lines[i - 1].strip() == "live:" and (m.group(2), code) in captured:
            indent, value = m.group(1), captured[(m.group(2), code)]
            j = i + 1
            if j < len(lines) and lines[j].startswith(indent + "value:"):
                j += 1
                while j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > len(indent):
                    j += 1
            if isinstance(value, str) and value.startswith("# HELP "):  # metrics: buckets only +Inf
                value = "\n".join(t for t in value.split("\n")
                                  if "_bucket{" not in t or 'le="+Inf"' in t)
            elif isinstance(value, str):  # a document: its first lines, up to 100 characters
                value = "\n".join(t[:100].rstrip() for t in value.split("\n")[:6] if t.strip())
            if isinstance(value, str):
                out.append(indent + "value: |")
                out += [indent + "  " + t for t in value.rstrip("\n").split("\n")]
            else:
                out.append(indent + "value: " + json.dumps(trimmed(value), separators=(", ", ": ")))
            i = j
            continue
        i += 1
    open(SPEC, "w", encoding="utf-8").write("\n".join(out))


def main():
    global skipped
    write = "--write" in sys.argv[1:]
    if not os.access(BIN, os.X_OK):
        print(f"{BIN} not built")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    doc = yaml.safe_load(open(SPEC, encoding="utf-8"))
    todo = examples(doc)
    tmp = tempfile.mkdtemp(prefix="gpath-examples-")
    proc, port = start_server(tmp)
    captured = {}
    try:
        for oid, code, mt, summary, body, value, where, token in todo:
            what = f"{oid} ({where}) {code or ''} {mt or ''}".strip()
            if code is None:
                report(False, what, "no 2xx response with content documented")
                continue
            if not summary:
                report(False, what, "no `examples: {live: {summary: \"METHOD /path\", value}}`")
                continue
            st, ctype, text = live_answer(port, summary, body, token, mt)
            if st == 501 and code != "501":
                skipped += 1
                print(f"skip {what}: not in this build ({text[:200]})")
                continue
            if str(st) != code:
                report(False, what, f"`{summary}` answered {st}, not {code}: {text[:300]}")
                continue
            if not media_matches(mt, ctype):
                report(False, what, f"`{summary}` answered {ctype}, documented {mt}")
                continue
            if is_binary(mt):
                report(True, what + " (binary: status and type only)")
                continue
            got = json.loads(text) if "json" in (ctype if "*" in mt else mt) else text
            if write:
                captured[(summary, code)] = got
                report(True, what + " captured")
                continue
            if value is None:
                report(False, what, "the example has no value (run with --write)")
                continue
            diffs = text_diff(value, got, mt) if isinstance(got, str) else shape_diff(value, got)
            report(not diffs, what, "; ".join(diffs[:5]) + ("; ..." if len(diffs) > 5 else ""))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    if write:
        write_examples(captured)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
