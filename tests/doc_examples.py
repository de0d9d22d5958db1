#!/usr/bin/env python3
"""doc_examples.py - runs every shell example of README.md and docs/*.md against the real binary
and server, so an example that stops working fails the suite.

Usage: doc_examples.py [--list] [FILE...]   (default: README.md docs/*.md)

What is run: every ```sh block. A block runs in a scratch directory that links the repository's
top-level entries (build/, config/, deploy/, ...) and every file and folder of the data sets
($GPATH_DATA/*/*), so `build/gpath ...`, `gpath ...` (build/ is on PATH), `USA-road-d.NY.gr.gz` and
`1239/weights.intra` resolve as the text says, and a `data/` laid out as `make data` lays it out
(`data/osm/monaco.osm.pbf`); what an example writes stays in the scratch dir.

How an example is judged, per logical line (backslash continuations joined; a block with
for/while/if runs as one command):
  - a command must exit 0, unless its comment says `exits N`;
  - every curl call inside it must get a 2xx status, unless the line's comment (or the comment
    line just above it) says `answers NNN` (or `-> NNN`);
  - `gpath serve ...` (not --help / --print-*) is a server: it must still be running after 3 s
    (then it is stopped), or, with `--port-file F`, answer /ready.
Markers, an HTML comment on the line before the fence:
  <!-- doctest: server ARGS -->   start `gpath serve --port 0 ARGS` (default graph when ARGS is
                                  empty) and send every `localhost:8080` of the block to it; a
                                  block that names localhost:8080 gets the default server anyway
  <!-- doctest: env K=V ... -->    environment for the block (and its server)
  <!-- doctest: needs gpu|pg|docker|kubectl|data|network ... -->  run only where available, else
                                  skipped with the reason
  <!-- doctest: runs-suite -->     the block runs the suite itself (make test): not run again
  <!-- doctest: output -->        the block is `$ command` lines followed by their output: each
                                  command is run and its JSON output must equal the text
Links and paths: each file is also one check that its relative links ([text](path#anchor)) lead to
a file of the repository and, for a Markdown file, to one of its headings (GitHub's anchors), and
that every repository path it names (`engine/snap.h`, `bench/lab_*.cu`: a path under a top-level
folder, outside code blocks) exists, so that moving a file or renaming a heading without its
documentation fails here. Placeholders in capitals (`bench/results/DATE-MACHINE-SUBJECT.md`) are
not paths; a program named without its extension (`bench/roadlike`) is its source file.
The last line is "N passed, N failed, N skipped" (one example = one block, one link check a file).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(ROOT, BUILD, "gpath")


def data_dir():
    """As tests/run-tests.sh: GPATH_DATA, else data/ once `make data` filled it, else ../shared/data."""
    if os.environ.get("GPATH_DATA"):
        return os.environ["GPATH_DATA"]
    own = os.path.join(ROOT, "data")
    if os.path.isdir(own) and any(os.path.isfile(os.path.join(own, g, "SOURCE.md"))
                                  for g in os.listdir(own)):
        return own
    return os.path.join(os.path.dirname(ROOT), "shared", "data")


DATA = data_dir()

FENCE = re.compile(r"^```(\w*)\s*$")
MARK = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")


def blocks(path):
    """Yields (line_number, lang, text, markers) for each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            lang, start = m.group(1), i + 1
            markers = []
            k = i - 1
            while k >= 0 and MARK.match(lines[k]):
                markers.insert(0, MARK.match(lines[k]).group(1))
                k -= 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield start, lang, "\n".join(lines[start:j]), markers
            i = j + 1
        else:
            i += 1


def parse_markers(markers):
    opts = {"server": None, "env": {}, "needs": [], "output": False}
    for mk in markers:
        word, _, rest = mk.partition(" ")
        if word == "server":
            opts["server"] = rest.strip()
        elif word == "env":
            for kv in rest.split():
                k, _, v = kv.partition("=")
                opts["env"][k] = v
        elif word == "needs":
            opts["needs"] += rest.replace(",", " ").split()
        elif word == "runs-suite":
            opts["needs"].append("runs-suite")
        elif word == "output":
            opts["output"] = True
        else:
            raise SystemExit(f"unknown doctest marker: {mk}")
    return opts


def have(need):
    if need == "gpu":
        if os.environ.get("GPATH_REQUIRE_GPU") == "1":
            return None
        try:
            ok = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        return None if ok else "no NVIDIA GPU here"
    if need == "pg":
        return None if os.environ.get("GPATH_DOCTEST_PG") else \
            ("needs the example's PostgreSQL database: tests/test_docs.sh starts one when the "
             "PostgreSQL server binaries are installed (GPATH_DOCTEST_PG=1, GPATH_DOCTEST_PG_PORT)")
    if need in ("docker", "kubectl"):
        return probe_cluster(need)
    if need == "data":
        return None if os.path.isdir(DATA) else f"data sets absent ({DATA}): run `make data`"
    if need == "runs-suite":
        return "this block is the test suite itself, which runs these examples"
    if need == "network":
        return "needs the internet (not reachable from tests)"
    raise SystemExit(f"unknown need: {need}")


def probe(cmd):
    """(ok, first line of what it printed) of a probe command, never raising."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    lines = [ln.strip() for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
    return r.returncode == 0, (lines[-1] if lines else f"exit {r.returncode}")


def docker_base_images():
    """The images the Dockerfile builds FROM (not its own stages)."""
    stages, bases = set(), []
    try:
        text = open(os.path.join(ROOT, "Dockerfile"), encoding="utf-8").read()
    except OSError:
        return []
    for m in re.finditer(r"^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", text, re.M | re.I):
        if m.group(1) not in stages:
            bases.append(m.group(1))
        if m.group(2):
            stages.add(m.group(2))
    return bases


_cluster = {}


def probe_cluster(need):
    """None when docker / kubectl can do what the examples do here, else the reason. A docker
    client without a usable daemon (docker info fails) is skipped, and so is a daemon that cannot
    build the image offline (a base image of the Dockerfile is not present locally: pulling it
    needs a registry, which tests do not reach)."""
    if need in _cluster:
        return _cluster[need]
    why = None
    if not shutil.which(need):
        why = f"{need} not installed"
    elif need == "docker":
        ok, msg = probe(["docker", "info", "--format", "{{.ServerVersion}}"])
        if not ok:
            why = f"docker has no usable daemon (`docker info`: {msg})"
        else:
            missing = [b for b in docker_base_images()
                       if not probe(["docker", "image", "inspect", b])[0]]
            if missing:
                why = (f"the image cannot be built offline: base image(s) {', '.join(missing)} "
                       "not present locally")
    else:
        ok, msg = probe(["kubectl", "get", "--raw", "/readyz"])
        if not ok:
            why = f"kubectl reaches no ready cluster (`kubectl get --raw /readyz`: {msg})"
    _cluster[need] = why
    return why


def logical_lines(text):
    out, cur = [], ""
    for line in text.split("\n"):
        if cur:
            cur += "\n" + line
        else:
            cur = line
        if line.rstrip().endswith("\\"):
            continue
        if cur.strip():
            out.append(cur)
        cur = ""
    if cur.strip():
        out.append(cur)
    return out


def comment_of(line):
    """The trailing shell comment of a command line (outside quotes), or ''."""
    q = None
    for i, c in enumerate(line):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i + 1:]
    return ""


def expectations(comment):
    status = re.search(r"(?:answers|->)\s+(\d{3})", comment)
    code = re.search(r"exits\s+(\d+)", comment)
    return (status.group(1) if status else "2xx"), (int(code.group(1)) if code else 0)


PRELUDE = r'''
set -u
dt_curl_check() { # status want
  case "$2" in 2xx) [ "$1" -ge 200 ] && [ "$1" -lt 300 ] ;; *) [ "$1" = "$2" ] ;; esac
}
curl() {
  local f rc code; f=$(mktemp -p "$DT_TMP")
  command curl -w '%{stderr}@@%{http_code}\n' "$@" 2>"$f"; rc=$?
  code=$(grep -ao '@@[0-9]*' "$f" | tail -1 | cut -c3-)
  grep -av '^@@' "$f" >&2
  if [ $rc -ne 0 ] || ! dt_curl_check "${code:-0}" "$DT_EXPECT"; then
    echo "curl $*: HTTP ${code:-none}, curl exit $rc (expected $DT_EXPECT)" >>"$DT_FAIL"
  fi
  return $rc
}
dt_cmd_check() { # rc want text
  [ "$1" -eq "$2" ] || echo "exit $1 (expected $2): $3" >>"$DT_FAIL"
}
'''


# printed after an example's last command: a block that stops early (an unset variable under
# set -u, an `exit`) fails instead of passing with its remaining commands unrun
DONE = "@@doctest-block-done"


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def is_server(cmd):
    if re.match(r"^\s*make\s+run\b", cmd):
        return True
    return re.match(r"^\s*(build/)?gpath\s+serve\b", cmd) and not re.search(r"--help|--print-", cmd)


def script_for(text):
    lines = logical_lines(text)
    compound = any(re.search(r"(^|\s|;)(do|then|done|fi)(\s|;|$)", ln) for ln in lines)
    out = [PRELUDE]
    if compound:
        out.append("export DT_EXPECT=2xx")
        out.append("(\n" + text + "\n)")
        out.append(f"dt_cmd_check $? 0 {shell_quote('block')}")
        out.append(f"echo {DONE}")
        return "\n".join(out)
    prev_comment = ""
    for ln in lines:
        stripped = ln.strip()
        if stripped.startswith("#"):
            prev_comment = stripped
            continue
        cmt = comment_of(ln)
        status, rc = expectations(cmt + " " + prev_comment)
        prev_comment = ""
        out.append(f"export DT_EXPECT={status}")
        if is_server(ln):
            body = re.sub(r"\s#.*$", "", ln)
            out.append(f"( timeout 3 {body} ) >/dev/null 2>\"$DT_TMP/serve.err\"; dt_rc=$?")
            out.append(f"[ $dt_rc -eq 124 ] || {{ cat \"$DT_TMP/serve.err\" >&2; "
                       f"echo \"server exited $dt_rc before 3 s: \"{shell_quote(ln)} >>\"$DT_FAIL\"; }}")
            continue
        out.append(ln)
        out.append(f"dt_cmd_check $? {rc} {shell_quote(ln.strip())}")
    out.append(f"echo {DONE}")
    return "\n".join(out)


class Servers:
    """Servers started for blocks, one per distinct (args, env), reused and stopped at the end."""

    def __init__(self, scratch):
        self.scratch, self.running = scratch, {}

    def get(self, args, env):
        key = (args, tuple(sorted(env.items())))
        if key in self.running:
            return self.running[key][1]
        pf = tempfile.mktemp(dir=self.scratch, prefix="port")
        log = open(tempfile.mktemp(dir=self.scratch, prefix="serve-log"), "w")
        cmd = f"exec {shell_quote(BIN)} serve --port 0 --port-file {pf} {args}"
        p = subprocess.Popen(["bash", "-c", cmd], cwd=self.scratch, env=env, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"server `{args}` exited {p.returncode}; log {log.name}")
            if os.path.exists(pf) and open(pf).read().strip():
                port = int(open(pf).read().strip())
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as r:
                        if r.status == 200:
                            self.running[key] = (p, port)
                            return port
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"server `{args}` not ready in 120 s")

    def stop(self):
        for p, _ in self.running.values():
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)


def make_scratch():
    d = tempfile.mkdtemp(prefix="gpath-doctest-")
    for e in os.listdir(ROOT):
        if not e.startswith("."):
            os.symlink(os.path.join(ROOT, e), os.path.join(d, e))
    # `build/gpath` in an example means the build under test ($BUILD)
    if os.path.lexists(os.path.join(d, "build")):
        os.unlink(os.path.join(d, "build"))
    os.symlink(os.path.join(ROOT, BUILD), os.path.join(d, "build"))
    # `data/osm/monaco.osm.pbf` as `make data` lays it out, whichever copy the run uses
    if os.path.lexists(os.path.join(d, "data")):
        os.unlink(os.path.join(d, "data"))
    os.mkdir(os.path.join(d, "data"))
    for src in (DATA, os.path.join(ROOT, "data")):
        for e in sorted(os.listdir(src)) if os.path.isdir(src) else []:
            if not os.path.lexists(os.path.join(d, "data", e)):
                os.symlink(os.path.join(src, e), os.path.join(d, "data", e))
    if os.path.isdir(DATA):
        for ds in sorted(os.listdir(DATA)):
            dsp = os.path.join(DATA, ds)
            if not os.path.isdir(dsp):
                continue
            for root, dirs, files in os.walk(dsp):
                for name in dirs + files:
                    dst = os.path.join(d, name)
                    if not os.path.lexists(dst):
                        os.symlink(os.path.join(root, name), dst)
    return d


def run_output_block(text, env, scratch):
    """`$ cmd` followed by its output: the JSON printed must equal the text's."""
    fails = []
    cur_cmd, expect = None, []

    def finish():
        if cur_cmd is None:
            return
        r = subprocess.run(["bash", "-c", cur_cmd], cwd=scratch, env=env, capture_output=True,
                           text=True, timeout=300)
        want = "\n".join(expect).strip()
        try:
            same = json.loads(r.stdout) == json.loads(want)
        except ValueError:
            same = r.stdout.strip() == want
        if not same:
            fails.append(f"`{cur_cmd}` printed {r.stdout.strip()[:300]!r}, the text says {want[:300]!r}")

    for line in text.split("\n"):
        if line.startswith("$ "):
            finish()
            cur_cmd, expect = line[2:], []
        else:
            expect.append(line)
    finish()
    return fails


def slug(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    s = re.sub(r"[`*_]|\[([^]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", s).replace(" ", "-")


def prose(path):
    """The file's lines outside fenced code blocks, as (line number, text)."""
    out, fenced = [], False
    for no, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append((no, line))
    return out


def anchors(path):
    seen, out = {}, set()
    for _, line in prose(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            out.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return out


LINK = re.compile(r"\[(?:[^]\[]|\[[^]]*\])*\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"[A-Z]{3,}")


def check_links(path):
    """Broken relative links and repository paths that do not exist, as messages."""
    tops = sorted(e for e in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, e))
                  and not e.startswith(".") and e not in ("build", "data"))
    mention = re.compile(r"(?<![\w./-])((?:%s)/[\w.+-]+(?:/[\w.+-]+)*)([*{]?)" % "|".join(tops))
    here, fails = os.path.dirname(os.path.abspath(path)), []
    for no, line in prose(path):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file)) if file else os.path.abspath(path)
            if not os.path.exists(dest):
                fails.append(f"line {no}: link {target}: no file {os.path.relpath(dest, ROOT)}")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                fails.append(f"line {no}: link {target}: no heading #{anchor} in "
                             f"{os.path.relpath(dest, ROOT)}")
        for m in mention.finditer(re.sub(r"\]\([^)]*\)|https?://\S+", "", line)):
            name, glob_tail = m.group(1).rstrip("."), m.group(2)
            if PLACEHOLDER.search(name):
                continue
            full = os.path.join(ROOT, name)
            if glob_tail:
                ok = any(e.startswith(os.path.basename(name))
                         for e in os.listdir(os.path.dirname(full) or ROOT)) \
                    if os.path.isdir(os.path.dirname(full)) else False
            else:
                ok = any(os.path.exists(full + ext) for ext in ("", ".c", ".cu", ".cpp"))
            if not ok:
                fails.append(f"line {no}: {name}{glob_tail} does not exist")
    return fails


def report(name, fails):
    """Prints one check's verdict (and why it failed); True when it passed."""
    if fails:
        print(f"FAIL {name}")
        for f in fails:
            print("   ", f)
        return False
    print(f"ok   {name}")
    return True


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    files = [a for a in args if a != "--list"]
    if not files:
        files = [os.path.join(ROOT, "README.md")]
        docs = os.path.join(ROOT, "docs")
        if os.path.isdir(docs):
            files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    if not os.access(BIN, os.X_OK):
        print(f"{BIN} not built")
        print("0 passed, 1 failed, 0 skipped")
        return 1
    scratch = make_scratch()
    bindir = os.path.join(scratch, ".bin")
    os.mkdir(bindir)
    os.symlink(BIN, os.path.join(bindir, "gpath"))
    servers = Servers(scratch)
    passed = failed = skipped = 0
    try:
        for path in files:
            rel = os.path.relpath(path, ROOT)
            if not listing:
                ok = report(f"{rel}: links and paths", check_links(path))
                passed, failed = passed + ok, failed + (not ok)
            for line, lang, text, markers in blocks(path):
                opts = parse_markers(markers)
                if lang not in ("sh", "bash", "shell") and not opts["output"]:
                    continue
                name = f"{rel}:{line}"
                if listing:
                    print(name, " ".join(markers))
                    continue
                why = next((w for w in (have(n) for n in opts["needs"]) if w), None)
                if why:
                    print(f"SKIP {name}: {why}")
                    skipped += 1
                    continue
                env = dict(os.environ)
                env["PATH"] = bindir + ":" + env["PATH"]
                env.update(opts["env"])
                try:
                    if opts["output"]:
                        fails = run_output_block(text, env, scratch)
                    else:
                        body = text
                        if opts["server"] is not None or "localhost:8080" in text:
                            port = servers.get(opts["server"] or "", env)
                            body = body.replace("localhost:8080", f"127.0.0.1:{port}")
                        if "pg" in opts["needs"] and os.environ.get("GPATH_DOCTEST_PG_PORT"):
                            # the database the examples name (host db or 127.0.0.1:5432) is the
                            # throwaway cluster tests/test_docs.sh started
                            pg = "127.0.0.1:" + os.environ["GPATH_DOCTEST_PG_PORT"]
                            body = body.replace("127.0.0.1:5432", pg).replace("@db/", f"@{pg}/")
                        tmp = tempfile.mkdtemp(dir=scratch)
                        env["DT_TMP"], env["DT_FAIL"] = tmp, os.path.join(tmp, "FAIL")
                        r = subprocess.run(["bash", "-c", script_for(body)], cwd=scratch, env=env,
                                           capture_output=True, text=True, timeout=600)
                        fails = open(env["DT_FAIL"]).read().splitlines() \
                            if os.path.exists(env["DT_FAIL"]) else []
                        if DONE not in r.stdout:
                            fails.append(f"the block stopped before its end (exit {r.returncode}): "
                                         + (r.stderr.strip().splitlines() or [""])[-1][:300])
                        if fails:
                            sys.stdout.write(r.stdout[-2000:] + r.stderr[-2000:])
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    fails = [str(e)]
                ok = report(name, fails)
                passed, failed = passed + ok, failed + (not ok)
    finally:
        servers.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    if not listing:
        print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
