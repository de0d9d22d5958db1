#!/usr/bin/python3
"""check_openapi.py - checks openapi.yaml: OpenAPI 3.1 structure, every component schema valid
JSON Schema 2020-12, every $ref resolvable, path parameters declared, and the paths/methods equal
to the server's route table (server/routes.c and friends, and `gpath serve --print-routes` when a
built binary is found) and the ErrorCode enum equal to the error table of server/errors.c.

Run with Debian's /usr/bin/python3 (python3-yaml, python3-jsonschema). Exit status 0 when clean.
Every operation must carry an example: under each 2xx response's media types and its request
body's (tests/openapi_examples.py checks them against the live server, and
tests/test_openapi_lint.sh validates them against their schemas with the pinned @redocly/cli).
"""
import glob
import os
import re
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}
errors = []


def err(msg):
    errors.append(msg)


def resolve(doc, ref):
    if not ref.startswith("#/"):
        raise KeyError(ref)
    node = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def walk_refs(doc, node, where):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                try:
                    resolve(doc, v)
                except (KeyError, TypeError):
                    err(f"{where}: unresolvable $ref {v}")
            else:
                walk_refs(doc, v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk_refs(doc, v, f"{where}/{i}")


def has_example(media):
    return "example" in media or bool(media.get("examples"))


def missing_examples(op, where):
    """Every operation shows what it answers (each 2xx response with content) and what it reads
    (its request body), as `example` or `examples` of each media type."""
    for mt, media in ((op.get("requestBody") or {}).get("content") or {}).items():
        if not has_example(media):
            err(f"{where}: request body {mt} has no example")
    ok_codes = [c for c in (op.get("responses") or {}) if str(c).startswith("2")]
    if not ok_codes:
        err(f"{where}: no 2xx response")
    for code in ok_codes:
        r = op["responses"][code]
        for mt, media in (r.get("content") or {}).items():
            if mt.split("/")[0] in ("image", "audio", "video") or \
                    (media.get("schema") or {}).get("format") == "binary":
                continue  # binary (images, .npy arrays): no example to show
            if not has_example(media):
                err(f"{where} {code}: {mt} has no example")


def source_routes():
    """(METHOD, pattern) pairs from the route table initialisers in server/**/*.c."""
    pat = re.compile(r'\{\s*"(GET|POST|PUT|PATCH|DELETE)"\s*,\s*"(/[^"]*)"\s*,')
    routes = set()
    for f in glob.glob(os.path.join(ROOT, "server", "**", "*.c"), recursive=True):
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                m = pat.search(line)
                if m:
                    routes.add((m.group(1), m.group(2)))
    return routes


def binary_routes():
    cands = [os.environ.get("GPATH_BIN", "")] + [
        os.path.join(ROOT, d, "gpath") for d in ("build-lint", "build", "build-http")]
    for b in cands:
        if b and os.access(b, os.X_OK):
            try:
                out = subprocess.run([b, "serve", "--print-routes"], capture_output=True,
                                     text=True, timeout=20, check=True).stdout
            except (subprocess.SubprocessError, OSError) as e:
                err(f"{b} serve --print-routes failed: {e}")
                return None, b
            return {tuple(l.split(" ", 1)) for l in out.splitlines() if l.strip()}, b
    return None, None


def error_table():
    with open(os.path.join(ROOT, "server", "errors.c"), encoding="utf-8") as fh:
        text = fh.read()
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r'\[GP_HC_\w+\]\s*=\s*\{"(\w+)",\s*(\d+)\}', text)}


def main():
    path = os.path.join(ROOT, "openapi.yaml")
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    if not str(doc.get("openapi", "")).startswith("3.1"):
        err("openapi: must be 3.1.x")
    info = doc.get("info") or {}
    for k in ("title", "version"):
        if not info.get(k):
            err(f"info.{k} missing")
    if not isinstance(doc.get("paths"), dict) or not doc["paths"]:
        err("paths missing")
        doc["paths"] = {}
    walk_refs(doc, doc, "#")

    schemas = (doc.get("components") or {}).get("schemas") or {}
    for name, schema in schemas.items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            err(f"components.schemas.{name}: not valid JSON Schema 2020-12: {e.message}")

    documented = set()
    op_ids = set()
    for p, item in doc["paths"].items():
        if not p.startswith("/"):
            err(f"path {p} must start with /")
        templ = set(re.findall(r"\{(\w+)\}", p))
        common = item.get("parameters", [])
        for m, op in item.items():
            if m not in METHODS:
                continue
            documented.add((m.upper(), p))
            where = f"{m.upper()} {p}"
            oid = op.get("operationId")
            if not oid:
                err(f"{where}: operationId missing")
            elif oid in op_ids:
                err(f"{where}: duplicate operationId {oid}")
            op_ids.add(oid)
            params = [resolve(doc, x["$ref"]) if "$ref" in x else x
                      for x in common + op.get("parameters", [])]
            declared = {x.get("name") for x in params if x.get("in") == "path"}
            if declared != templ:
                err(f"{where}: path parameters {sorted(declared)} != template {sorted(templ)}")
            for x in params:
                if x.get("in") == "path" and not x.get("required"):
                    err(f"{where}: path parameter {x.get('name')} must be required")
                if "schema" not in x:
                    err(f"{where}: parameter {x.get('name')} has no schema")
            resps = op.get("responses") or {}
            if not resps:
                err(f"{where}: no responses")
            for code, r in resps.items():
                if not re.fullmatch(r"[1-5][0-9][0-9]|default", str(code)):
                    err(f"{where}: bad status {code}")
                r = resolve(doc, r["$ref"]) if "$ref" in r else r
                if not r.get("description"):
                    err(f"{where} {code}: description missing")
            missing_examples(op, where)
            if "security" in op:
                for req in op["security"]:
                    for s in req:
                        if s not in (doc.get("components") or {}).get("securitySchemes", {}):
                            err(f"{where}: unknown security scheme {s}")

    src = source_routes()
    if not src:
        err("no route table found in server/**/*.c")
    for m, p in sorted(src - documented):
        err(f"route {m} {p} is served but not in openapi.yaml")
    for m, p in sorted(documented - src):
        err(f"openapi.yaml documents {m} {p} but the server has no such route")
    bin_routes, b = binary_routes()
    if bin_routes is not None and bin_routes != src:
        err(f"{b} serve --print-routes differs from the route table in the sources "
            f"(stale build?): {sorted(bin_routes ^ src)}")

    table = error_table()
    enum = set(schemas.get("ErrorCode", {}).get("enum", []))
    if set(table) != enum:
        err(f"ErrorCode enum {sorted(enum ^ set(table))} differs from server/errors.c's table")

    for e in errors:
        print(f"check_openapi: {e}")
    if errors:
        return 1
    print(f"check_openapi: ok ({len(documented)} operations, {len(schemas)} schemas, "
          f"{len(table)} error codes{', routes checked against ' + b if b else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
