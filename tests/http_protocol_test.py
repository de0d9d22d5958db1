#!/usr/bin/python3
"""http_protocol_test.py - the HTTP protocol layer against the real `gpath serve` over loopback
(tests/test_http_protocol.sh): connections per client address, the read deadline against
trickling clients, the 413 a client still sending reads (urllib, 10 of 10), NUL bytes, invalid UTF-8 in
error bodies, request heads libmicrohttpd would refuse itself (oversize, malformed, bad
Content-Length: one JSON answer each, on new and keep-alive connections; the guard's limit),
IPv6, the method escaped in the log, CORS and
preflights (never on /admin), gzip (buffered and streamed), the operator token on PATCH links,
request ids and the access log, build_info and process_* metrics (promtool when installed),
GET /openapi.yaml and /docs.

Reuses tests/http_test.py's Daemon and schema validation. Prints "N passed, N failed, N skipped".
"""
import gzip
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as ht  # noqa: E402  (Daemon, validate, write_dimacs, expect_error, test graph)

ROOT = ht.ROOT
OP_TOKEN = "operator-secret"
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Skip(Exception):
    pass


def raw(port, data, source="127.0.0.1", timeout=10):
    """Sends data on a fresh connection, half-closes, returns everything the server sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    try:
        return read_all(s)
    finally:
        s.close()


def read_all(s):
    """Everything s receives up to EOF (or a reset)."""
    out = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                return out
            out += c
    except OSError:
        return out


def split_answer(resp):
    """(status, headers dict lower-case, body bytes) of one raw HTTP/1.1 answer."""
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.decode("latin-1").partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return status, hdrs, body


def status_lines(resp):
    return len(re.findall(rb"(?:^|\n)HTTP/1\.[01] \d\d\d ", resp))


def get(port, path, headers=None, method="GET", body=None, source=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(source, 0) if source else None)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return r.status, hdrs, data


# ---- limits ----
def closed(s):
    """1 when the server has closed the socket (EOF or reset), without blocking."""
    try:
        s.setblocking(False)
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def wait_until(cond, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def wait_log(d, needle, timeout=10):
    """The daemon writes the access line after the answer went out: poll for it."""
    wait_until(lambda: needle in d.full_log(), timeout)
    return d.full_log()


@test
def t_per_ip_limit(ctx):
    """80 idle connections from one address against max_connections_per_ip = 64 (the default):
    16 are refused, the 64 stay, and another address still gets /health."""
    d = ctx.d
    socks = [socket.create_connection(("127.0.0.1", d.port), timeout=5) for _ in range(80)]
    try:
        assert wait_until(lambda: sum(closed(s) for s in socks) >= 16), \
            f"{sum(closed(s) for s in socks)} of 80 connections refused (expected 16)"
        refused = sum(closed(s) for s in socks)
        assert refused == 16, f"{refused} of 80 connections closed (expected 16: 64 per address)"
        st, _, b = get(d.port, "/health", source="127.0.0.2")
        assert st == 200 and json.loads(b)["status"] == "ok", (st, b)
    finally:
        for s in socks:
            s.close()
    # the server notices the 80 closes asynchronously: until it has, a new connection from the
    # same address may still be refused (reset), so a refusal here means "not yet", not failure
    def health_again():
        try:
            return get(d.port, "/health")[0] == 200
        except OSError:
            return False
    assert wait_until(health_again, 20), "127.0.0.1 still refused 20 s after closing its sockets"


@test
def t_read_deadline(ctx):
    """Connections trickling a header byte every 0.3 s and never finishing are closed by the read
    deadline (request_read_timeout_s = 2) although the idle timeout (60 s) never fires; other
    clients are answered meanwhile."""
    d = ctx.limits
    socks, stop = [], threading.Event()
    for _ in range(8):
        s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)

    def trickle():
        while not stop.is_set():
            for s in socks:
                try:
                    s.send(b"X")
                except OSError:
                    pass
            time.sleep(0.3)
    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    try:
        st, _, _ = get(d.port, "/health", source="127.0.0.2")
        assert st == 200
        assert wait_until(lambda: all(closed(s) for s in socks), 20), \
            f"{sum(not closed(s) for s in socks)} trickling connections still open after 20 s"
        log = wait_log(d, "event=read_timeout client=127.0.0.1 limit_s=2 in_request=1")
        assert "event=read_timeout client=127.0.0.1 limit_s=2 in_request=1" in log, d.tail()
    finally:
        stop.set()
        th.join()
        for s in socks:
            s.close()


@test
def t_body_413_read_by_urllib(ctx):
    """A body over max_body_bytes sent by a client that does not wait for 100-continue: the JSON
    413 is read every time (10 of 10), not a broken pipe."""
    got = []
    for _ in range(10):
        req = urllib.request.Request(f"http://127.0.0.1:{ctx.d.port}/v1/graphs/t/table",
                                     data=b"{" + b" " * 1000000 + b"}", method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=30)
            got.append("200?")
        except urllib.error.HTTPError as e:
            body = json.loads(e.read())
            got.append((e.code, body["code"]))
            ht.validate("POST", "/v1/graphs/t/table", e.code, body, e.headers["Content-Type"])
        except OSError as e:
            got.append(repr(e))
    assert got == [(413, "TooBig")] * 10, got
    # Expect: 100-continue: answered before the body, which the client then never sends
    r = raw(ctx.d.port, b"POST /v1/graphs/t/table HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000"
            b"\r\nExpect: 100-continue\r\nContent-Type: application/json\r\n\r\n")
    st, _, body = split_answer(r)
    assert st == 413 and json.loads(body)["code"] == "TooBig" and b"100 Continue" not in r, r[:300]


@test
def t_nul_refused(ctx):
    for target in (b"/v1/graphs/t%00x/route?from=1&to=5", b"/v1/graphs/t/route?from=1%00junk&to=5",
                   b"/v1/graphs/t/route?from=1&to=5&x%00y=1"):
        r = raw(ctx.d.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        st, _, body = split_answer(r)
        b = json.loads(body)
        assert st == 400 and b["code"] == "InvalidQuery" and "NUL" in b["message"], (target, r)


@test
def t_error_bodies_utf8(ctx):
    """Invalid UTF-8 in a path and in a parameter: the error body is valid UTF-8 JSON."""
    for target in (b"/v1/graphs/t\xff\xfe/route?from=1&to=5", b"/v1/graphs/t/route?from=1\xc3&to=5",
                   b"/v1/graphs/t%ED%A0%80/route?from=1&to=5", b"/nowhere/\xf8\x88\x80\x80\x80"):
        r = raw(ctx.d.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        st, _, body = split_answer(r)
        b = json.loads(body.decode("utf-8", errors="strict"))
        assert st in (400, 404) and b["code"] and "\ufffd" in b["message"], (target, b)


def one_json_error(r, status, code, words):
    """r: everything the server sent for one refused request. Exactly one status line, the
    status, Connection: close, and a JSON error body whose code and message name the problem."""
    assert status_lines(r) == 1, r[:600]
    st, h, body = split_answer(r)
    assert st == status, (st, r[:400])
    assert h.get("content-type", "").startswith("application/json"), h
    assert h.get("connection", "").lower() == "close", h
    b = json.loads(body)
    assert b["code"] == code, (code, b)
    for w in words:
        assert w.lower() in b["message"].lower(), (w, b)
    return b


def read_answer(s):
    """Reads one answer with a Content-Length body off socket s; returns its bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(65536)
        assert c, f"connection closed mid-answer: {data!r}"
        data += c
    head, _, body = data.partition(b"\r\n\r\n")
    n = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
    while len(body) < n:
        c = s.recv(65536)
        assert c, "connection closed mid-body"
        body += c
    assert len(body) == n, "more bytes than the answer's Content-Length"
    return head + b"\r\n\r\n" + body


def post_cl(cl):
    return (b"POST /v1/graphs/t/table HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + cl + b"\r\n\r\n{}")


GET_HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
H = b"GET /health HTTP/1.1\r\nHost: x\r\n"

# Request heads libmicrohttpd 0.9.75 would answer itself (HTML; a bad Content-Length with its
# status line twice) or pass on unchecked: (what, bytes, status, code, words of the message).
BAD_HEADS = [
    ("target past max_url_bytes", b"GET /v1/graphs?" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
     414, "UriTooLong", ["max_url_bytes"]),
    ("request line past the library's buffer", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
     414, "UriTooLong", ["max_url_bytes"]),
    ("header past max_header_bytes", H + b"X-Big: " + b"b" * 20000 + b"\r\n\r\n", 431,
     "HeadersTooLarge", ["max_header_bytes"]),
    ("head past the library's buffer", H + b"X-Big: " + b"b" * 100000 + b"\r\n\r\n", 431,
     "HeadersTooLarge", ["max_header_bytes"]),
    ("3000 tiny headers", H + b"a:\r\n" * 3000 + b"\r\n", 431, "HeadersTooLarge",
     ["3001 headers", "connection buffer"]),
    ("4000 query parameters", b"GET /health?" + b"a&" * 4000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
     431, "HeadersTooLarge", ["4001 query parameters"]),
    ("1000 cookies", H + b"Cookie: " + b"a=1;" * 1000 + b"\r\n\r\n", 431, "HeadersTooLarge",
     ["cookies"]),
    ("negative Content-Length", post_cl(b"-1"), 400, "InvalidQuery", ["Content-Length", "-1"]),
    ("overflowing Content-Length", post_cl(b"99999999999999999999999"), 413, "TooBig",
     ["Content-Length", "max_body_bytes"]),
    ("Content-Length with letters", post_cl(b"12abc"), 400, "InvalidQuery", ["Content-Length"]),
    ("empty Content-Length", post_cl(b""), 400, "InvalidQuery", ["Content-Length"]),
    ("Content-Length with a trailing space", post_cl(b"2 "), 400, "InvalidQuery",
     ["Content-Length"]),
    ("conflicting Content-Length", post_cl(b"2\r\nContent-Length: 5"), 400, "InvalidQuery",
     ["conflicting Content-Length"]),
    ("Content-Length and Transfer-Encoding", post_cl(b"2\r\nTransfer-Encoding: chunked"), 400,
     "InvalidQuery", ["Transfer-Encoding"]),
    ("Transfer-Encoding other than chunked", H + b"Transfer-Encoding: gzip, chunked\r\n\r\n", 400,
     "InvalidQuery", ["Transfer-Encoding"]),
    ("header line without a colon", H + b"bad line\r\n\r\n", 400, "InvalidQuery", ["no colon"]),
    ("obsolete line folding", H + b"X-A: a\r\n b\r\n\r\n", 400, "InvalidQuery", ["folding"]),
    ("space before the colon", b"GET /health HTTP/1.1\r\nHost : x\r\n\r\n", 400, "InvalidQuery",
     ["header name"]),
    ("HTTP/2.0 request line", b"GET /health HTTP/2.0\r\nHost: x\r\n\r\n", 400, "InvalidQuery",
     ["HTTP version", "HTTP/2.0"]),
    ("HTTP version garbage", b"GET /health HTTP/x\r\nHost: x\r\n\r\n", 400, "InvalidQuery",
     ["HTTP version"]),
    ("request line without a version", b"GET /health\r\nHost: x\r\n\r\n", 400, "InvalidQuery",
     ["request line"]),
    ("request line without a space", b"GARBAGE\r\n\r\n", 400, "InvalidQuery", ["request line"]),
    ("NUL byte in a header", H + b"X-A: a\x00b\r\n\r\n", 400, "InvalidQuery", ["NUL"]),
    ("bare CR in a header", H + b"X-A: a\rb\r\n\r\n", 400, "InvalidQuery", ["CR"]),
    ("head cut short by the client", H, 400, "InvalidQuery", ["closed"]),
]


@test
def t_protocol_errors_json(ctx):
    """Every request head libmicrohttpd would refuse with its own HTML (or, for a bad
    Content-Length, with its status line twice) gets one JSON answer naming the problem, on a new
    connection (the front end) and, for Content-Length, on a later request of a keep-alive
    connection too (the guard); the server keeps serving. The method is logged escaped."""
    p = ctx.d.port
    for what, req, status, code, words in BAD_HEADS:
        try:
            one_json_error(raw(p, req), status, code, words)
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from None
        st, _, _ = get(p, "/health")
        assert st == 200, what
    log = wait_log(ctx.d, "code=InvalidQuery front=1")
    assert re.search(r"event=request method=POST path=/v1/graphs/t/table status=413 bytes=\d+ "
                     r"duration_ms=[0-9.]+ code=TooBig front=1 client=127\.0\.0\.1 "
                     r"request_id=[0-9a-f]{16}", log), log[-3000:]
    # not refused: an ordinary head as the first request, spaces libmicrohttpd accepts
    r = raw(p, b"\r\nGET /health HTTP/1.1\nHost:x\r\nX-Empty:\r\nConnection: close\r\n\r\n")
    assert split_answer(r)[0] == 200 and status_lines(r) == 1, r[:300]
    r = raw(p, b'FOO"BAR%x /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    st, _, body = split_answer(r)
    assert st == 405 and status_lines(r) == 1, r[:200]
    log = wait_log(ctx.d, "method=FOO%22BAR%25x")
    assert "method=FOO%22BAR%25x path=/health status=405" in log, log[-2000:]
    assert 'method=FOO"' not in log


@test
def t_keepalive_content_length(ctx):
    """A bad Content-Length on the second request of a keep-alive connection (parsed by
    libmicrohttpd alone) and on a pipelined second request: one JSON answer each, then close."""
    p = ctx.d.port
    for cl, status, code in ((b"-1", 400, "InvalidQuery"), (b"99999999999999999999999", 413,
                             "TooBig"), (b"12abc", 400, "InvalidQuery")):
        s = socket.create_connection(("127.0.0.1", p), timeout=10)
        try:
            s.sendall(GET_HEALTH)
            first = read_answer(s)
            assert split_answer(first)[0] == 200, first
            s.sendall(post_cl(cl))
            s.shutdown(socket.SHUT_WR)
            one_json_error(read_all(s), status, code, ["Content-Length"])
        finally:
            s.close()
        r = raw(p, GET_HEALTH + post_cl(cl))  # pipelined: both in one segment
        assert status_lines(r) == 2, r
        second = r[r.index(b"HTTP/1.1", 10):]
        assert split_answer(r[:len(r) - len(second)])[0] == 200, r
        one_json_error(second, status, code, ["Content-Length"])
    log = wait_log(ctx.d, "guard=1")
    assert re.search(r"status=413 bytes=\d+ duration_ms=[0-9.]+ code=TooBig guard=1 "
                     r"client=127\.0\.0\.1", log), log[-3000:]
    st, _, _ = get(p, "/health")
    assert st == 200


def bad_cl_beside_held_head(port, held):
    """Two keep-alive connections to one daemon thread, each past a first request; the second
    sends `held` (an unfinished later head the library holds), then the first a later request
    with Content-Length -1. Returns (a, b, everything a received); the caller closes a and b."""
    a = socket.create_connection(("127.0.0.1", port), timeout=10)
    b = socket.create_connection(("127.0.0.1", port), timeout=10)
    for s in (a, b):
        s.sendall(GET_HEALTH)
        assert split_answer(read_answer(s))[0] == 200
    b.sendall(held)
    time.sleep(0.5)
    a.sendall(post_cl(b"-1"))
    a.shutdown(socket.SHUT_WR)
    return a, b, read_all(a)


@test
def t_keepalive_guard_two_heads(ctx):
    """A second connection of the same daemon thread (--threads 1) in the middle of its own later
    request head when the first sends a bad Content-Length: the guard tells them apart by their
    headers (only the first holds a bad Content-Length), answers the first once in JSON and
    leaves the second alone, which is then answered normally."""
    a, b, r = bad_cl_beside_held_head(ctx.one.port, H)  # H: a head in progress
    try:
        one_json_error(r, 400, "InvalidQuery", ["Content-Length"])
        b.sendall(b"\r\n")
        rb = read_answer(b)
        st, _, body = split_answer(rb)
        assert st == 200 and json.loads(body)["status"] == "ok", rb[:300]
    finally:
        a.close()
        b.close()
    log = wait_log(ctx.one, "code=InvalidQuery guard=1")
    assert "code=InvalidQuery guard=1" in log, ctx.one.tail()


@test
def t_keepalive_guard_undecided(ctx):
    """The guard's limit: when the other connection's unfinished head already holds a bad
    Content-Length too, it cannot tell which one the library's error is about, so it stands back
    (the library answers, logged as event=httpd_double_answer) and never writes to the wrong
    connection; the other one, once its head ends, is answered once in JSON."""
    # the library keeps a header line back until the next one starts (line folding): X-Pad
    a, b, r = bad_cl_beside_held_head(
        ctx.one.port,
        b"POST /v1/graphs/t/table HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\nX-Pad: 1\r\n")
    try:
        assert r.startswith(b"HTTP/1.1 400 ") and b"application/json" not in r.split(
            b"\r\n\r\n")[0], r[:300]
        b.sendall(b"\r\n")
        b.shutdown(socket.SHUT_WR)
        one_json_error(read_all(b), 400, "InvalidQuery", ["Content-Length"])
    finally:
        a.close()
        b.close()
    log = wait_log(ctx.one, "event=httpd_double_answer")
    assert "event=httpd_double_answer" in log, ctx.one.tail()


@test
def t_one_request_connections(ctx):
    """Connections whose first request closes them (Connection: close, HTTP/1.0) go to the daemon
    with the small connection pool when the head fits it, to the big one otherwise: either way
    one whole answer, for heads at the small pool's edge and past it, with many fields, a body,
    a pipelined request after the close (never read). Keep-alive connections keep the big pool:
    a later head past max_header_bytes still gets the handler's JSON 431."""
    p = ctx.d.port
    base = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
    for pad in (10, 6000, 6900, 7000, 7200, 9000, 16000):
        r = raw(p, base + b"p" * pad + b"\r\n\r\n")
        st, h, body = split_answer(r)
        assert st == 200 and status_lines(r) == 1 and json.loads(body)["status"] == "ok", \
            (pad, r[:300])
        assert h.get("connection", "").lower() == "close", (pad, h)
    for n in (100, 180, 240):
        r = raw(p, b"GET /health HTTP/1.1\r\nConnection: close\r\n" +
                b"".join(b"X-%d: v\r\n" % i for i in range(n)) + b"\r\n")
        assert split_answer(r)[0] == 200 and status_lines(r) == 1, (n, r[:300])
    # within the limits, but only the big pool holds it (the small one: the library's HTML 431)
    r = raw(p, b"GET /health?" + b"a" * 7000 + b"&" + b"a&" * 120 + b" HTTP/1.1\r\n" + base[31:] +
            b"p" * 14000 + b"\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(120)) + b"\r\n")
    assert split_answer(r)[0] == 200 and status_lines(r) == 1, r[:300]
    r = raw(p, b"GET /health HTTP/1.0\r\n\r\n")
    assert split_answer(r)[0] == 200 and status_lines(r) == 1, r[:300]
    r = raw(p, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n" + GET_HEALTH)
    assert split_answer(r)[0] == 200 and status_lines(r) == 1, r[:300]
    body = json.dumps({"sources": [1], "targets": [5]}).encode()
    r = raw(p, b"POST /v1/graphs/t/table HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    st, _, out = split_answer(r)
    assert st == 200 and status_lines(r) == 1 and "weights" in json.loads(out), r[:300]
    # CORS echoes a listed Origin into the answer's header block
    r = raw(ctx.limits.port, base + b"p" * 6000 + b"\r\nOrigin: https://b.example\r\n\r\n")
    st, h, _ = split_answer(r)
    assert st == 200 and h.get("access-control-allow-origin") == "https://b.example", r[:400]
    s = socket.create_connection(("127.0.0.1", p), timeout=10)
    try:
        s.sendall(GET_HEALTH)
        assert split_answer(read_answer(s))[0] == 200
        s.sendall(H + b"X-Big: " + b"b" * 20000 + b"\r\n\r\n")
        one_json_error(read_answer(s), 431, "HeadersTooLarge", ["max_header_bytes"])
    finally:
        s.close()


@test
def t_ipv6(ctx):
    """--listen ::1: served over IPv6, a bad head refused there in JSON too."""
    if not socket.has_ipv6:
        raise Skip("no IPv6 in this Python")
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError as e:
        raise Skip(f"no IPv6 loopback here ({e})")
    d = ht.Daemon(ctx.tmp, "v6", ["--listen", "::1", "--graph", "t=dimacs:" +
                                  os.path.join(ctx.tmp, "a.gr"), "--cache-path", ""])
    try:
        def health():
            try:
                c = http.client.HTTPConnection("::1", d.port, timeout=10)
                c.request("GET", "/health")
                r = c.getresponse()
                ok = r.status == 200 and json.loads(r.read())["status"] == "ok"
                c.close()
                return ok
            except OSError:
                return False
        assert wait_until(health, 20), d.tail()
        s = socket.create_connection(("::1", d.port), timeout=10)
        s.sendall(post_cl(b"-1"))
        s.shutdown(socket.SHUT_WR)
        one_json_error(read_all(s), 400, "InvalidQuery", ["Content-Length"])
        s.close()
        log = wait_log(d, "code=InvalidQuery front=1 client=::1")
        assert "code=InvalidQuery front=1 client=::1" in log, log[-2000:]
    finally:
        assert d.stop() == 0, d.tail()


# ---- browsers ----
@test
def t_cors_any(ctx):
    p = ctx.d.port
    st, h, _ = get(p, "/v1/graphs/t/route?from=1&to=5", {"Origin": "https://x.example"})
    assert st == 200 and h.get("access-control-allow-origin") == "*", h
    assert "x-request-id" in h.get("access-control-expose-headers", "").lower(), h
    st, h, body = get(p, "/v1/graphs/t/route", {"Origin": "https://x.example",
                                                "Access-Control-Request-Method": "GET"}, "OPTIONS")
    assert st == 204 and body == b"", (st, body)
    assert h["access-control-allow-origin"] == "*" and "GET" in h["access-control-allow-methods"]
    assert "Content-Type" in h["access-control-allow-headers"] and h["access-control-max-age"]
    # never on /admin: no CORS headers on answers, preflight refused
    st, h, _ = get(p, "/admin/cache", {"Origin": "https://x.example"})
    assert not any(k.startswith("access-control") for k in h), h
    st, h, body = get(p, "/admin/cache", {"Origin": "https://x.example",
                                          "Access-Control-Request-Method": "GET"}, "OPTIONS")
    assert st == 403 and json.loads(body)["code"] == "Forbidden", (st, body)
    assert not any(k.startswith("access-control") for k in h), h
    st, _, body = get(p, "/nowhere", {"Origin": "https://x.example"}, "OPTIONS")
    assert st == 404, st


@test
def t_cors_list(ctx):
    p = ctx.limits.port  # cors_origins = https://a.example, https://b.example
    st, h, _ = get(p, "/health", {"Origin": "https://b.example"})
    assert h.get("access-control-allow-origin") == "https://b.example", h
    assert "Origin" in h.get("vary", ""), h
    st, h, _ = get(p, "/health", {"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in h and "Origin" in h.get("vary", ""), h
    st, h, body = get(p, "/health", {"Origin": "https://evil.example",
                                     "Access-Control-Request-Method": "GET"}, "OPTIONS")
    assert st == 403 and "cors_origins" in json.loads(body)["message"], body
    st, h, _ = get(p, "/health", {"Origin": "https://a.example",
                                  "Access-Control-Request-Method": "GET"}, "OPTIONS")
    assert st == 204 and h["access-control-allow-origin"] == "https://a.example", h


@test
def t_gzip(ctx):
    p = ctx.d.port
    path = "/v1/graphs/g/sssp?source=1"
    st, plain_h, plain = get(p, path)
    st2, h, z = get(p, path, {"Accept-Encoding": "gzip, deflate"})
    assert st == st2 == 200 and h.get("content-encoding") == "gzip", h
    assert "Accept-Encoding" in h.get("vary", "") and "Accept-Encoding" in plain_h.get("vary", "")
    assert len(z) < len(plain) and gzip.decompress(z) == plain
    st, h, _ = get(p, path, {"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in h, h
    st, h, small = get(p, "/ready", {"Accept-Encoding": "gzip"})  # under gzip_min_bytes
    assert "content-encoding" not in h and json.loads(small)["status"] == "ready", h
    # a streamed (chunked) answer is compressed on the fly
    path = "/v1/graphs/t/routing-tables"
    st, h, plain = get(p, path)
    st2, hz, z = get(p, path, {"Accept-Encoding": "gzip"})
    assert st == st2 == 200 and h.get("transfer-encoding") == "chunked", h
    assert hz.get("content-encoding") == "gzip" and gzip.decompress(z) == plain, hz


# ---- tokens ----
@test
def t_operator_token(ctx):
    body = json.dumps({"links": [{"link": [1, 2], "cost": 3}]}).encode()
    ct = {"Content-Type": "application/json"}
    # ctx.d has admin_token only; ctx.limits has neither token; ctx.op has operator_token only
    st, _, b = get(ctx.limits.port, "/v1/graphs/t/links", ct, "PATCH", body)
    b = json.loads(b)
    assert st == 403 and b["code"] == "OperatorDisabled" and "operator_token" in b["message"], b
    st, h, b = get(ctx.op.port, "/v1/graphs/t/links", ct, "PATCH", body)
    assert st == 401 and json.loads(b)["code"] == "Unauthorized" and "www-authenticate" in h
    st, _, b = get(ctx.op.port, "/v1/graphs/t/links", dict(ct, Authorization="Bearer nope"),
                   "PATCH", body)
    assert st == 403 and json.loads(b)["code"] == "Forbidden"
    st, _, b = get(ctx.op.port, "/v1/graphs/t/links", dict(ct, Authorization="Bearer " + OP_TOKEN),
                   "PATCH", body)
    assert st == 200, b
    ht.validate("PATCH", "/v1/graphs/t/links", st, json.loads(b), "application/json")
    st, _, b = get(ctx.d.port, "/v1/graphs/r/links", dict(ct, Authorization="Bearer " + ht.TOKEN),
                   "PATCH", body)
    assert st == 200, b  # the admin token is accepted too
    st, _, b = get(ctx.op.port, "/v1/graphs/t/route?from=1&to=5")
    assert st == 200  # queries stay open


# ---- request ids, logs, metrics ----
@test
def t_request_id_and_access_log(ctx):
    p = ctx.d.port
    st, h, _ = get(p, "/nowhere?from=1&to=5&token=hunter2&api_key=k1",
                   {"X-Request-Id": "req-42.a:b_c"})
    assert h.get("x-request-id") == "req-42.a:b_c", h
    for bad in ("has space", "x" * 65, "semi;colon"):
        st, h, _ = get(p, "/health", {"X-Request-Id": bad})
        assert re.fullmatch(r"[0-9a-f]{16}", h.get("x-request-id", "")), (bad, h)
    st, h1, _ = get(p, "/nowhere")
    st, h2, _ = get(p, "/nowhere")
    assert h1["x-request-id"] != h2["x-request-id"] and st == 404
    log = wait_log(ctx.d, "request_id=req-42.a:b_c")
    line = next((l for l in log.splitlines() if "request_id=req-42.a:b_c" in l), None)
    assert line, log[-2000:]
    assert re.search(r"event=request method=GET path=/nowhere status=404 bytes=\d+ "
                     r"duration_ms=[0-9.]+ code=NotFound "
                     r"query=from=1&to=5&token=REDACTED&api_key=REDACTED "
                     r"client=127\.0\.0\.1 request_id=req-42\.a:b_c$", line), line
    assert "hunter2" not in log and "k1 " not in log
    # a handler's own log line carries the id too (debug-level error line of the same request)
    st, h, _ = get(ctx.op.port, "/v1/graphs/t/route?from=1&to=999", {"X-Request-Id": "dbg-7"})
    wait_log(ctx.op, "event=request method=GET path=/v1/graphs/t/route status=400")
    tagged = [l for l in ctx.op.full_log().splitlines() if l.endswith("request_id=dbg-7")]
    assert len(tagged) >= 2 and any("event=error" in l for l in tagged), tagged


def parse_exposition(text):
    """Minimal check of the Prometheus text format: HELP/TYPE before samples, sample syntax,
    one TYPE per family. Returns {name: [(labels, value)]}."""
    types, out = {}, {}
    sample = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                        r',?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)')
    for l in text.splitlines():
        if l.startswith("# TYPE "):
            name = l.split()[2]
            assert name not in types, f"second TYPE for {name}"
            types[name] = l.split()[3]
        elif l.startswith("#") or not l:
            continue
        else:
            m = sample.fullmatch(l)
            assert m, f"bad sample line {l!r}"
            fam = re.sub(r"_(bucket|sum|count|total)$", "", m.group(1))
            assert m.group(1) in types or fam in types or fam + "_total" in types, l
            out.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
    return out


@test
def t_metrics_build_info_process(ctx):
    st, _, text = get(ctx.d.port, "/metrics")
    text = text.decode()
    m = parse_exposition(text)
    (labels, v), = m["gpath_build_info"]
    assert v == 1 and re.fullmatch(r'\{version="[^"]+",commit="[^"]+",backend="(cpu|cuda)",'
                                   r'gpu="[^"]+"\}', labels), labels
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                 "process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes"):
        assert name in m, name
    assert m["process_resident_memory_bytes"][0][1] > 1 << 20
    assert 3 <= m["process_open_fds"][0][1] <= m["process_max_fds"][0][1]
    start = m["process_start_time_seconds"][0][1]
    assert time.time() - 3600 < start <= time.time() + 5, start
    if not shutil.which("promtool"):
        ctx.notes.add("promtool not installed: metrics checked by the Python parser only")
        return
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


# ---- the contract and its reference ----
@test
def t_openapi_and_docs(ctx):
    p = ctx.d.port
    st, h, body = get(p, "/openapi.yaml")
    with open(os.path.join(ROOT, "openapi.yaml"), "rb") as f:
        assert st == 200 and body == f.read() and h["content-type"] == "application/yaml"
    st, h, body = get(p, "/docs")
    if st == 501:
        assert "make web" in json.loads(body)["message"], body
        ctx.notes.add("this build has no API reference assets (run `make web`): /docs gave 501")
        return
    assert st == 200 and h["content-type"].startswith("text/html"), (st, h)
    page = body.decode()
    assert "/openapi.yaml" in page, page
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page), "the page loads from another host"
    for src in re.findall(r'(?:src|href)="([^"]+)"', page):
        st, h, asset = get(p, src)
        assert st == 200 and len(asset) > 10000, (src, st)
    st, _, _ = get(p, "/docs/nope.js")
    assert st == 404


def main():
    bin_ = ht.BIN
    if not os.access(bin_, os.X_OK):
        print(f"SKIP: no gpath binary at {bin_} (set GPATH_BIN)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    tmp = tempfile.mkdtemp(prefix="gpath-proto-")
    for name in ("a", "r"):
        ht.write_dimacs(os.path.join(tmp, name + ".gr"), ht.N, ht.ARCS, ht.COORDS)
    graphs = ["--graph", "t=dimacs:" + os.path.join(tmp, "a.gr"),
              "--graph", "r=dimacs:" + os.path.join(tmp, "r.gr"), "--graph", "g=gen:2500"]

    class Ctx:
        pass
    ctx = Ctx()
    ctx.notes = set()
    ctx.tmp = tmp
    passed = failed = skipped = 0
    daemons = []
    try:
        # several accepting threads on one listening socket here and on "limits" (the
        # connection counts and deadlines are shared by them), one on the others
        ctx.d = ht.Daemon(tmp, "main", graphs + ["--max-body-bytes", "2048", "--threads", "4",
                                                 "--accept-threads", "3", "--cache-path", ""],
                          {"GPATH_ADMIN_TOKEN": ht.TOKEN})
        daemons.append(ctx.d)
        ctx.limits = ht.Daemon(tmp, "limits", graphs + [
            "--request-read-timeout-s", "2", "--connection-timeout-s", "60", "--threads", "2",
            "--accept-threads", "2",
            "--cors-origins", "https://a.example, https://b.example", "--cache-path", ""])
        daemons.append(ctx.limits)
        ctx.one = ht.Daemon(tmp, "one", graphs + ["--threads", "1", "--accept-threads", "1",
                                                  "--cache-path", ""])
        daemons.append(ctx.one)
        ctx.op = ht.Daemon(tmp, "op", graphs + ["--threads", "2", "--log-level", "debug",
                                                "--cache-path", ""],
                           {"GPATH_OPERATOR_TOKEN": OP_TOKEN})
        daemons.append(ctx.op)
        for d in daemons:
            d.wait_ready()
        for t in TESTS:
            name = t.__name__[2:]
            t1 = time.time()
            try:
                t(ctx)
                passed += 1
                print(f"PASS {name} ({time.time() - t1:.2f}s)")
            except Skip as e:
                skipped += 1
                print(f"SKIP {name}: {e}")
            except Exception:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAIL {name}:\n{traceback.format_exc()}")
    except Exception:  # noqa: BLE001
        failed += 1
        print(f"FAIL setup:\n{traceback.format_exc()}")
    finally:
        tails = [(d.logpath, d.tail()) for d in daemons] if failed else []
        for d in daemons:
            rc = d.stop()
            if rc != 0:
                failed += 1
                print(f"FAIL daemon exit code {rc}")
                tails = [(d.logpath, open(d.logpath).read()[-3000:]) for d in daemons]
        for path, tail in tails:
            print(f"--- {path} (tail)\n{tail}")
        shutil.rmtree(tmp, ignore_errors=True)
    for n in sorted(ctx.notes):
        print(f"NOTE {n}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
