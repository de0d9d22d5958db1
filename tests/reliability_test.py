#!/usr/bin/python3
"""reliability_test.py - issue 29's defects against the real `gpath serve` over loopback
(tests/test_reliability.sh): shutdown_grace_s enforced on queries still computing, framing
headers checked on every request of a keep-alive connection, and the other hostile inputs of the
audit that need a running daemon. Each test reproduces the audit's case and asserts the fixed
behaviour. Reuses tests/http_test.py's Daemon and schema validation.

Usage: reliability_test.py [NAME...] (test names without the t_ prefix; all by default).
Prints "N passed, N failed, N skipped" last.
"""
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_protocol_test as hp  # noqa: E402  (read_all, split_answer)
import http_test as ht  # noqa: E402  (Daemon, validate, expect_error, run_tests)

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def split_answers(resp):
    """The (status, headers, body) of each HTTP/1.1 answer in resp, in order (bodies framed by
    Content-Length, as gpath sends them to these requests)."""
    out = []
    while b"\r\n\r\n" in resp:
        status, hdrs, rest = hp.split_answer(resp)
        if hdrs.get("transfer-encoding", "").lower() == "chunked":  # a streamed answer
            body = b""
            while True:
                size, _, rest = rest.partition(b"\r\n")
                n = int(size.split(b";")[0], 16)
                body += rest[:n]
                rest = rest[n + 2:]
                if n == 0:
                    break
            out.append((status, hdrs, body))
            resp = rest
            continue
        n = int(hdrs.get("content-length", "0"))
        out.append((status, hdrs, rest[:n]))
        resp = rest[n:]
    return out


@test
def t_shutdown_cancels_queries(ctx):
    """SIGTERM with shutdown_grace_s = 1 while an all-pairs query computes with no time limit
    (request_timeout_ms = 0; ~7 s on one engine thread): after the grace the query is cancelled
    through the deadlines, answers 504 saying the server is shutting down, and the process exits 0
    within a few seconds of the grace instead of when the query would have ended."""
    d = ht.Daemon(ctx.tmp, "grace", ["--graph", "g=gen:6000", "--backend", "cpu",
                                     "--engine-threads", "1", "--request-timeout-ms", "0",
                                     "--max-apsp-nodes", "6000", "--shutdown-grace-s", "1",
                                     "--cache-path", ""])
    try:
        d.wait_ready()
        s = socket.create_connection(("127.0.0.1", d.port), timeout=60)
        s.sendall(b"POST /v1/graphs/g/apsp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: 2\r\n\r\n{}")
        time.sleep(0.5)  # the query is computing
        t0 = time.time()
        d.proc.send_signal(signal.SIGTERM)
        resp = hp.read_all(s)
        s.close()
        rc = d.proc.wait(timeout=60)
        took = time.time() - t0
        assert rc == 0, (rc, d.tail())
        assert took < 4.0, f"exited {took:.1f} s after SIGTERM (grace 1 s): {resp[:60]!r}"
        answers = split_answers(resp)
        assert len(answers) == 1, resp[:300]
        st, _, body = answers[0]
        assert st == 504, (st, body[:200])
        b = json.loads(body)
        assert b["code"] == "Timeout" and "shutting down" in b["message"], b
        ht.validate("POST", "/v1/graphs/g/apsp", st, b, "application/json")
        assert "event=cancelled in_flight=1" in d.tail(), d.tail()
        print(f"    exited {took:.2f} s after SIGTERM with a 1 s grace")
    finally:
        d.stop()


@test
def t_shutdown_during_load(ctx):
    """SIGTERM while a start-up graph's hierarchy is being built (the CCH order has begun: no
    cancel point until it is done; on a loaded machine that took minutes): the process exits
    within a second or two of the grace with status 0, the load abandoned (its result would be
    thrown away), instead of finishing the build first."""
    d = ht.Daemon(ctx.tmp, "loadstop", ["--graph", "g=gen:400000", "--backend", "cpu",
                                        "--cch", "on", "--engine-threads", "1",
                                        "--shutdown-grace-s", "1", "--cache-path", "",
                                        "--log-level", "debug"])
    try:
        t0 = time.time()
        while "cch_order_nd" not in d.full_log():
            assert d.proc.poll() is None, d.tail()
            assert time.time() - t0 < 120, "the hierarchy's order never started: " + d.tail()
            time.sleep(0.02)
        t0 = time.time()
        d.proc.send_signal(signal.SIGTERM)
        rc = d.proc.wait(timeout=600)
        took = time.time() - t0
        log = d.full_log()
        assert rc == 0, (rc, d.tail())
        assert "event=graph_loaded" not in log, "the build was waited for: " + d.tail()
        assert "event=shutdown_load_abandoned" in log, d.tail()
        assert took < 4.0, f"exited {took:.1f} s after SIGTERM (grace 1 s)"
        print(f"    exited {took:.2f} s after SIGTERM during the hierarchy's order")
    finally:
        d.stop()


def keepalive_exchange(port, requests, timeout=10):
    """Sends the requests back to back on one connection, half-closes, and returns the answers
    (status, headers, body) in order."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(b"".join(requests))
        s.shutdown(socket.SHUT_WR)
        return split_answers(hp.read_all(s))
    finally:
        s.close()


@test
def t_framing_on_keepalive(ctx):
    """Ambiguous framing on the second request of a keep-alive connection (the front end checks
    only the first head): conflicting Content-Length headers, Content-Length beside chunked, a
    Transfer-Encoding other than chunked. Each is answered 400 InvalidQuery naming the header and
    the connection closes: the request hidden in its body is never served (it was before)."""
    d = ctx.shared()
    first = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    hidden = b"GET /v1/graphs/g/route?from=1&to=2 HTTP/1.1\r\nHost: x\r\n\r\n"
    cases = [
        (b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(hidden), hidden,
         "conflicting Content-Length"),
        (b"Content-Length: %d\r\nContent-Length: 0\r\n" % len(hidden), hidden,
         "conflicting Content-Length"),
        (b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % (len(hidden) + 5),
         b"0\r\n\r\n" + hidden, "both Content-Length and Transfer-Encoding"),
        (b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", b"0\r\n\r\n" + hidden,
         "both Content-Length and Transfer-Encoding"),
        (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
         b"0\r\n\r\n" + hidden, "Transfer-Encoding"),
    ]
    for headers, body, words in cases:
        smuggler = (b"POST /v1/graphs/g/table HTTP/1.1\r\nHost: x\r\nContent-Type: "
                    b"application/json\r\n" + headers + b"\r\n" + body)
        answers = keepalive_exchange(d.port, [first, smuggler])
        got = [(st, b[:120]) for st, _, b in answers]
        assert len(answers) == 2, (headers, got)
        assert answers[0][0] == 200, (headers, got)
        st, hdrs, b = answers[1]
        assert st == 400, (headers, got)
        e = json.loads(b)
        assert e["code"] == "InvalidQuery" and words in e["message"], (headers, e)
        assert hdrs.get("connection", "").lower() == "close", (headers, hdrs)
    # the same request with one Content-Length is served on a keep-alive connection
    ok = (b"POST /v1/graphs/g/table HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 16\r\n\r\n{\"sources\": [1]}")
    answers = keepalive_exchange(d.port, [first, ok, first])
    assert [a[0] for a in answers] == [200, 200, 200], [(a[0], a[2][:100]) for a in answers]


def call(d, method, path, body=None, token=None):
    """One request, its answer validated against openapi.yaml for /v1 paths."""
    return d.call(method, path, body, token=token, check=path.startswith("/v1/"))


@test
def t_messages_name_the_problem(ctx):
    """The audit's misleading answers: 17 isochrone points (one past isochrone_max_points) are
    413 TooBig, not 400; a PATCH cost no weight can hold names the largest cost the graph stores
    (it said "use a smaller --scale (at most 0)"); OSRM scale_factor=1e308 is 400 instead of
    turning reachable cells into null."""
    d = ctx.shared()
    pts = ";".join("8.5%d,47.3" % i for i in range(17))
    ht.expect_error(call(d, "GET", "/v1/graphs/g/isochrone?contours=300&points=" + pts), 413,
                    "TooBig", ["isochrone_max_points = 16"])
    st, _, b = call(d, "GET", "/v1/graphs/g/isochrone?contours=300&points=" + pts[:pts.index(";")])
    assert st == 200, b
    ht.expect_error(call(d, "PATCH", "/v1/graphs/g/links",
                         {"links": [{"link": [1, 2], "cost": 5e9}]}, token=ht.TOKEN), 400,
                    "InvalidQuery", ["links[0].cost", "largest cost this graph stores"])
    assert "scale" not in call(d, "PATCH", "/v1/graphs/g/links", {"links": [{"link": [1, 2], "cost": 1e300}]},
                               token=ht.TOKEN)[2]["message"].split("(")[0]
    st, _, b = call(d, "GET", "/table/v1/driving/8.5,47.3;8.51,47.31?scale_factor=1e308")
    assert st == 400 and b["code"] == "InvalidOptions" and "scale_factor" in b["message"], b
    st, _, b = call(d, "GET", "/table/v1/driving/8.5,47.3;8.51,47.31?scale_factor=2")
    assert st == 200 and all(x is not None for row in b["durations"] for x in row), b


@test
def t_lenient_input_refused(ctx):
    """A link named twice in one PATCH (either way round) is 400 naming both entries (the last won
    and both were counted); nested coordinate arrays in POST /table/v1 are 400 (they were read as
    flat pairs)."""
    d = ctx.shared()
    for second in ([1, 2], [2, 1]):
        ht.expect_error(call(d, "PATCH", "/v1/graphs/g/links",
                             {"links": [{"link": [1, 2], "cost": 7}, {"link": second, "cost": 9}]},
                             token=ht.TOKEN), 400, "InvalidQuery",
                        ["links[0] and links[1]", "one change per link"])
    for coords in ([[8.5, [47.3]], [8.51, 47.31]], [[[8.5, 47.3]], [8.51, 47.31]],
                   [[8.5, 47.3, 1], [8.51, 47.31]]):
        st, _, b = call(d, "POST", "/table/v1/driving", {"coordinates": coords})
        assert st == 400 and b["code"] == "InvalidQuery" and "coordinates" in b["message"], (coords, b)
    st, _, b = call(d, "POST", "/table/v1/driving", {"coordinates": [[8.5, 47.3], [8.51, 47.31]]})
    assert st == 200, b
    st, _, b = call(d, "PATCH", "/v1/graphs/g/links", {"links": [{"link": [1, 2], "cost": 7}]},
                    token=ht.TOKEN)
    assert st == 200 and b["links_changed"] == 1, b


@test
def t_reserve_keeps_health(ctx):
    """Trickling clients spread over addresses, each under max_connections_per_ip, hold every
    regular slot (max_connections = 20): /health and a short query still answer at once from the
    reserve (connection_reserve, default 32), and a reserve connection that trickles too is closed
    after 1 s. Before, every new connection was refused until the tricklers' read deadline."""
    d = ht.Daemon(ctx.tmp, "reserve", ["--graph", "g=gen:500", "--max-connections", "20",
                                       "--max-connections-per-ip", "8", "--threads", "2",
                                       "--cache-path", ""])
    socks = []
    try:
        d.wait_ready()
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10,
                                         source_address=("127.0.0.%d" % (2 + i % 5), 0))
            s.sendall(b"GET /health HTTP/1.1\r\nHo")
            socks.append(s)
        time.sleep(0.3)
        t0 = time.time()
        st, _, b = d.call("GET", "/health", check=False)
        assert st == 200, (st, b)
        st, _, b = d.call("GET", "/v1/graphs/g/route?from=1&to=2")
        assert st == 200, (st, b)
        took = time.time() - t0
        assert took < 2.0, took
        late = socket.create_connection(("127.0.0.1", d.port), timeout=10,
                                        source_address=("127.0.0.9", 0))
        late.sendall(b"GET /health HTTP/1.1\r\nHo")
        t1 = time.time()
        got = hp.read_all(late)
        late.close()
        waited = time.time() - t1
        assert got == b"" and 0.8 < waited < 3.0, (got[:100], waited)
        assert "event=reserve_timeout" in d.tail(), d.tail()
        print(f"    /health and a route in {took * 1e3:.0f} ms with 20 of 20 slots trickled; a "
              f"trickling reserve connection closed after {waited:.1f} s")
    finally:
        for s in socks:
            s.close()
        d.stop()


@test
def t_buffered_answers_bounded(ctx):
    """Clients that send a request and never read pin its whole answer (600 of them: 3.1 GB of
    RSS). With max_buffered_answer_bytes = 8 MB, a client that reads nothing holds one all-pairs
    answer (streamed: the 8 MB of distances its rows are rendered from, counted until it is read);
    a second such answer is then 503 Busy naming the limit (before: buffered too), and once the
    first client has read its answer the same request answers 200 again, whole (it is checked
    against the same answer read at once)."""
    d = ht.Daemon(ctx.tmp, "buffered", ["--graph", "g=gen:1000", "--max-apsp-nodes", "1000",
                                        "--max-buffered-answer-bytes", "8000000", "--threads", "4",
                                        "--cache-path", ""])
    try:
        d.wait_ready()
        req = (b"POST /v1/graphs/g/apsp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.settimeout(30)
        slow.connect(("127.0.0.1", d.port))
        slow.sendall(req)
        time.sleep(1.5)  # computed and queued; the client reads nothing
        st, _, b = d.call("POST", "/v1/graphs/g/apsp", {}, check=False)
        assert st == 503 and b["code"] == "Busy" and "max_buffered_answer_bytes" in b["message"], \
            (st, str(b)[:200])
        st, _, b = d.call("GET", "/v1/graphs/g/route?from=1&to=2")  # small answers still go
        assert st == 200, b
        got = split_answers(hp.read_all(slow))
        slow.close()
        assert got and got[0][0] == 200 and len(got[0][2]) > 4000000, [(a[0], len(a[2])) for a in got]
        time.sleep(0.2)
        st, _, b = d.call("POST", "/v1/graphs/g/apsp", {}, check=False)
        assert st == 200, (st, str(b)[:200])
        assert json.loads(got[0][2]) == b, "the slowly read answer differs from the one read at once"
        print(f"    one unread answer of {len(got[0][2]) / 1e6:.1f} MB held; the next refused with 503")
    finally:
        d.stop()


@test
def t_request_log_rate_limited(ctx):
    """The access log is rate-limited (log_requests_per_s): 200 requests in a burst with the limit
    at 5 write at most 5 lines a second; the next second's first line says how many were dropped.
    Before, every request wrote its line (a flood of cheap requests was a flood of log)."""
    d = ht.Daemon(ctx.tmp, "logrl", ["--graph", "g=gen:200", "--log-requests-per-s", "5",
                                     "--threads", "2", "--cache-path", ""])
    try:
        d.wait_ready()
        time.sleep(1.1)  # a fresh second for the burst
        t0 = time.time()
        answers = keepalive_exchange(d.port, [b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"] * 200,
                                     timeout=30)
        secs = time.time() - t0
        assert len(answers) == 200 and all(a[0] == 200 for a in answers), len(answers)
        time.sleep(1.1)
        d.call("GET", "/health", check=False)
        time.sleep(0.2)
        log = d.full_log()
        lines = [l for l in log.splitlines() if "event=request " in l and "path=/health" in l]
        dropped = sum(int(x.split("count=")[1].split()[0]) for x in log.splitlines()
                      if "event=request_log_suppressed" in x)
        assert len(lines) <= 5 * (int(secs) + 3), (len(lines), secs)
        assert dropped >= 200 - 5 * (int(secs) + 2), (dropped, len(lines), secs)
        print(f"    200 requests in {secs:.2f} s: {len(lines)} access lines, {dropped} counted as "
              f"dropped")
    finally:
        d.stop()


def main():
    only = set(sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="gpath-rel-")

    class Ctx:
        pass

    ctx = Ctx()
    ctx.tmp = tmp
    shared = []

    def shared_daemon():
        """One daemon (gen:2000 as g, admin and operator tokens) for the tests that need no
        settings of their own; started by the first of them."""
        if not shared:
            d = ht.Daemon(tmp, "shared", ["--graph", "g=gen:2000", "--threads", "4",
                                          "--cache-path", ""],
                          {"GPATH_ADMIN_TOKEN": ht.TOKEN, "GPATH_OPERATOR_TOKEN": ht.TOKEN})
            shared.append(d)
            d.wait_ready()
        return shared[0]

    ctx.shared = shared_daemon
    passed = failed = skipped = 0
    try:
        passed, failed, skipped = ht.run_tests(TESTS, ctx, only)
    finally:
        for d in shared:
            if d.stop() != 0:
                failed += 1
                print(f"FAIL shared daemon exit code:\n{d.tail()}")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
