#!/usr/bin/python3
"""cors_browser.py - gpath used from a browser page of another origin, in real headless Chromium
(Debian's chromium, driven over the W3C WebDriver protocol by Debian's chromedriver; no npm).

It starts `gpath serve` (a generated road graph, an admin token) on 127.0.0.1, a second HTTP
server (python3 -m http.server) serving tests/web/ on another port of `localhost` - a different
origin - and opens tests/web/cors.html there. The page fetches a route between two coordinates
(GET) and a distance table (POST JSON) from gpath and draws them; this script checks the drawn
SVG line and HTML table against gpath's own answers to the same requests, and that the page could
NOT read /admin (CORS: the browser blocks it although the page sends the right token, which this
script shows works outside a browser). The screenshot goes to $BUILD/test-artifacts/cors-page.png.
Prints "ok ..." / "FAIL ..." lines and "N passed, N failed, N skipped" last; skips with a
message when chromium or chromedriver is missing.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.abspath(os.environ.get("GPATH_BIN") or os.path.join(ROOT, BUILD, "gpath"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TOKEN = "cors-test-admin-token"
FROM, TO = "8.479,47.2855", "8.4878,47.2863"  # two coordinates of gen:1000:7

passed = failed = 0
procs = []


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}{': ' + str(detail) if detail else ''}")


def finish(skip_reason=None):
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    if skip_reason:
        print(f"skip: {skip_reason}")
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(0)
    print(f"{passed} passed, {failed} failed, 0 skipped")
    sys.exit(1 if failed else 0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        r.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(r, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def wait_for(what, fn, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            v = fn()
            if v:
                return v
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready in {seconds} s")


class WebDriver:
    """The few W3C WebDriver commands this test needs."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=800,900"]}}}}
        st, v = http("POST", self.base + "/session", caps, timeout=120)
        if st != 200:
            raise RuntimeError(f"WebDriver session: HTTP {st} {v}")
        self.sid = v["value"]["sessionId"]

    def cmd(self, method, path, body=None):
        st, v = http(method, f"{self.base}/session/{self.sid}{path}", body, timeout=120)
        if st != 200:
            raise RuntimeError(f"WebDriver {path}: HTTP {st} {v}")
        return v["value"]

    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def quit(self):
        http("DELETE", f"{self.base}/session/{self.sid}")


def main():
    if not os.access(BIN, os.X_OK):
        finish(f"{BIN} not built")
    if not os.access(CHROMIUM, os.X_OK):
        finish(f"{CHROMIUM} not installed (apt-get install chromium)")
    driver_bin = shutil.which("chromedriver")
    if not driver_bin:
        finish("chromedriver not installed (apt-get install chromium-driver)")
    tmp = tempfile.mkdtemp(prefix="gpath-cors-")
    # gpath on 127.0.0.1
    portf = os.path.join(tmp, "port")
    procs.append(subprocess.Popen(
        [BIN, "serve", "--port", "0", "--port-file", portf, "--listen", "127.0.0.1", "--backend",
         "cpu", "--cache-path", "", "--admin-token", TOKEN, "--log-level", "warn",
         "--graph", "road=gen:1000:7"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    gport = wait_for("gpath", lambda: int(open(portf).read()) if open(portf).read().strip() else 0)
    api = f"http://127.0.0.1:{gport}"
    wait_for("gpath /ready", lambda: http("GET", api + "/ready")[0] == 200)
    # the page's own origin: another server, another port, another host name
    wport = free_port()
    procs.append(subprocess.Popen(
        [sys.executable, "-m", "http.server", str(wport), "--bind", "127.0.0.1",
         "--directory", os.path.join(ROOT, "tests", "web")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    page = f"http://localhost:{wport}/cors.html"
    wait_for("page server", lambda: urllib.request.urlopen(page, timeout=2).status == 200)
    dport = free_port()
    procs.append(subprocess.Popen([driver_bin, f"--port={dport}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL))
    wait_for("chromedriver", lambda: http("GET", f"http://127.0.0.1:{dport}/status")[0] == 200)

    # gpath's own answers, and the admin token working outside a browser
    st, route = http("GET", f"{api}/v1/graphs/road/route?from={FROM}&to={TO}")
    check(st == 200, "gpath answers the route directly", route)
    st, table = http("POST", f"{api}/v1/graphs/road/table",
                     {"sources": [[float(x) for x in FROM.split(",")], 500], "targets": [TO, 2]})
    check(st == 200, "gpath answers the table directly", table)
    st, _ = http("GET", api + "/admin/cache", headers={"Authorization": "Bearer " + TOKEN})
    check(st == 200, "the page's admin token is right (200 outside a browser)", st)

    wd = WebDriver(dport)
    try:
        wd.cmd("POST", "/url", {"url": f"{page}?api={api}&graph=road&token={TOKEN}"
                                       f"&from={FROM}&to={TO}"})
        wait_for("the page", lambda: wd.js("return document.body.dataset.state") == "done", 60)
        origin = wd.js("return location.origin")
        check(origin != api, f"the page's origin {origin} is not gpath's {api}")
        err = wd.js("return document.body.dataset.error || ''")
        check(not err, "the page read the route and the table (CORS allowed them)", err)
        pts = wd.js("return document.getElementById('route-line').getAttribute('points')") or ""
        npts = len(pts.split())
        check(npts == len(route["geometry"]["coordinates"]) and npts >= 2,
              f"the route line is drawn with one SVG point per coordinate ({npts})", pts[:200])
        shown = wd.js("return document.getElementById('route-text').dataset.weight")
        check(shown is not None and float(shown) == route["weight"],
              f"the page shows the route's weight {route['weight']}", shown)
        cells = wd.js("return [...document.querySelectorAll('#table tr')].slice(1).map("
                      "(tr) => [...tr.querySelectorAll('td.weight')].map((td) => td.textContent))")
        want = [["-" if d is None else str(d) for d in row] for row in table["weights"]]
        check(cells == want, f"the table drawn equals gpath's {want}", cells)
        admin = wd.js("return document.getElementById('admin').dataset.result")
        check(admin == "blocked", "/admin with the token is blocked for the page (CORS preflight refused)",
              wd.js("return document.getElementById('admin').textContent"))
        simple = wd.js("return document.getElementById('admin').dataset.simple")
        check(simple == "blocked", "/admin without a preflight is unreadable for the page (no CORS headers)",
              simple)
        shot = os.path.join(ROOT, BUILD, "test-artifacts", "cors-page.png")
        os.makedirs(os.path.dirname(shot), exist_ok=True)
        with open(shot, "wb") as f:
            f.write(base64.b64decode(wd.cmd("GET", "/screenshot")))
        check(os.path.getsize(shot) > 1000, f"screenshot {os.path.relpath(shot, ROOT)}")
    except RuntimeError as e:
        check(False, "browser session", e)
    finally:
        wd.quit()
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
