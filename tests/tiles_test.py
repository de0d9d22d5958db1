#!/usr/bin/python3
"""tiles_test.py - vector tiles through `gpath serve` (run by tests/test_tiles.sh): OSRM's
/tile/v1/{profile}/tile(x,y,z).mvt (server/osrm/tile.c) and gpath's basemap
/v1/graphs/{graph}/tiles/{z}/{x}/{y}.mvt, tiles.json and style.json (server/v1/tiles.c).

Every tile is decoded with @mapbox/vector-tile + pbf (tests/mvt_decode.mjs, the packages pinned in
web/package.json and installed by `make web`): every layer decodes at version 2 and extent 4096,
every coordinate lies within the tile plus its buffer, every property has the type it should.
Literal expectations on tests/data/osm/tiles.osm (two named roads crossing, two places; see its
comment): exactly those road names, classes, ref and oneway, the seven turns at the crossing, the
places with their population, the far road only in its own tile, an empty tile elsewhere; the same
from a .gpath snapshot (the places section). Bad input (zoom, x / y, malformed tile names) answers
400 naming the problem; gzip, ETag / If-None-Match and the cache are checked; a speed update
(POST /v1/graphs/t/speeds) shows as datasource "traffic" on that one segment in a new tile. With the OSRM tarball
($GPATH_OSRM, default ../shared/peers/osrm) and Monaco ($GPATH_DATA/osm) present, a Monaco tile
at z14 and one at z15 are compared with the real OSRM's: the same layer names, property keys and
value types, the same road names, speeds and osmnodes feature counts within 3%, turns within 10%.
Prints PASS/FAIL/SKIP lines and "N passed, N failed, N skipped" last.
"""
import gzip
import http.client
import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = None  # tests/http_test.py (Daemon, run_tests, start_osrm), imported by main()
OSM = os.path.join(ROOT, "tests", "data", "osm", "tiles.osm")
PEER = os.environ.get("GPATH_OSRM", os.path.join(ROOT, "..", "shared", "peers", "osrm"))
DATA = os.environ.get("GPATH_DATA", os.path.join(ROOT, "..", "shared", "data"))
BUILD = os.environ.get("BUILD", "build")
TILE = (15, 17021, 11787)  # z, x, y holding Rue Alpha, Rue Beta and both places
FAR = (15, 17023, 11787)  # Far Lane only
EMPTY = (15, 17030, 11787)
TESTS = []
NM = None  # node_modules holding the decoder


def test(fn):
    TESTS.append(fn)
    return fn


def get(d, path, headers=None):
    """(status, headers (lower-case names), raw body bytes) on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return r.status, hdrs, body


def decode(body, tmp):
    """The tile as mvt_decode.mjs prints it."""
    path = os.path.join(tmp, "tile.mvt")
    with open(path, "wb") as f:
        f.write(body)
    out = subprocess.run(["node", os.path.join(ROOT, "tests", "mvt_decode.mjs"), path, NM],
                         check=True, capture_output=True, timeout=60)
    return json.loads(out.stdout)


def layer_names(body):
    """Names of every layer written, empty ones too (the decoder lists only layers with
    features): Tile.layers (field 3) -> Layer.name (field 1), read from the protobuf."""
    def varint(b, i):
        v = s = 0
        while True:
            c = b[i]
            i += 1
            v |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return v, i

    names, i = [], 0
    while i < len(body):
        key, i = varint(body, i)
        n, i = varint(body, i)
        if key == (3 << 3 | 2):
            lay, j = body[i:i + n], 0
            while j < len(lay):
                k2, j = varint(lay, j)
                if k2 & 7 == 0:
                    _, j = varint(lay, j)
                    continue
                m, j = varint(lay, j)
                if k2 == (1 << 3 | 2):
                    names.append(lay[j:j + m].decode())
                j += m
        i += n
    return names


TYPES = {  # property -> JavaScript type after decoding, per layer
    "speeds": {"speed": "number", "is_small": "boolean", "datasource": "string",
               "weight": "number", "duration": "number", "name": "string", "rate": "number",
               "is_startpoint": "boolean"},
    "turns": {"bearing_in": "number", "turn_angle": "number", "cost": "number",
              "weight": "number", "type": "string", "modifier": "string"},
    "osmnodes": {},
    "roads": {"class": "string", "name": "string", "ref": "string", "oneway": "boolean"},
    "places": {"class": "string", "name": "string", "population": "number"},
}


def check_tile(t, buffer):
    """Every layer at version 2 / extent 4096, coordinates within the buffer, property types."""
    for name, lay in t["layers"].items():
        assert lay["version"] == 2 and lay["extent"] == 4096, (name, lay["version"])
        for f in lay["features"]:
            for key, ty in f["types"].items():
                assert TYPES[name].get(key) == ty, f"{name}.{key} is {ty}"
            assert f["geometry"], f"{name}: a feature without geometry"
            for part in f["geometry"]:
                for x, y in part:
                    assert -buffer <= x <= 4096 + buffer and -buffer <= y <= 4096 + buffer, (
                        name, x, y)
            if f["type"] == 2:
                assert all(len(p) >= 2 for p in f["geometry"]), f"{name}: a one-point line"


def osrm_tile(d, z, x, y, profile="car", headers=None):
    return get(d, f"/tile/v1/{profile}/tile({x},{y},{z}).mvt", headers)


def base_tile(d, z, x, y, graph="t", headers=None):
    return get(d, f"/v1/graphs/{graph}/tiles/{z}/{x}/{y}.mvt", headers)


def lonlat(z, x, y, px, py):
    n = 2 ** z
    lon = (x + px / 4096) / n * 360 - 180
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * (y + py / 4096) / n))))
    return lon, lat


@test
def t_basemap_literal(ctx):
    for d in ctx["daemons"]:  # the .osm and its .gpath snapshot
        st, h, body = base_tile(d, *TILE)
        assert st == 200 and h["content-type"] == "application/vnd.mapbox-vector-tile", (st, h)
        t = decode(body, ctx["tmp"])
        check_tile(t, 64)
        assert set(t["layers"]) == {"roads", "places"}, t["layers"].keys()
        roads = {f["properties"]["name"]: f["properties"] for f in t["layers"]["roads"]["features"]}
        assert set(roads) == {"Rue Alpha", "Rue Beta"}, roads.keys()
        alpha, beta = roads["Rue Alpha"], roads["Rue Beta"]
        assert alpha == {"class": "primary", "name": "Rue Alpha", "ref": "D 6", "oneway": False}
        assert beta == {"class": "residential", "name": "Rue Beta", "oneway": True}, beta
        # a two-way road is drawn once per arc pair: two pieces (1-3, 3-2) for Alpha, two for Beta
        feats = t["layers"]["roads"]["features"]
        assert len(feats) == 4, [f["properties"]["name"] for f in feats]
        places = {f["properties"]["name"]: f for f in t["layers"]["places"]["features"]}
        assert set(places) == {"Testville", "Quartier Nord"}, places.keys()
        assert places["Testville"]["properties"] == {"class": "village", "name": "Testville",
                                                      "population": 1234}
        assert places["Quartier Nord"]["properties"] == {"class": "suburb",
                                                          "name": "Quartier Nord"}
        (px, py), = places["Testville"]["geometry"][0]
        lon, lat = lonlat(*TILE, px, py)
        assert abs(lon - 7.003) < 1e-4 and abs(lat - 45.0015) < 1e-4, (lon, lat)
        # the far road only in its own tile; nothing at all elsewhere (an empty body)
        st, _, body = base_tile(d, *FAR)
        far = decode(body, ctx["tmp"])
        assert [f["properties"]["name"] for f in far["layers"]["roads"]["features"]] == [
            "Far Lane"]
        for z, x, y in (EMPTY, (3, 0, 0)):
            st, _, body = base_tile(d, z, x, y)
            assert st == 200 and body == b"", (z, x, y, st, len(body))
        # residential streets are dropped at low zooms, the primary road stays
        z = 10
        x, y = TILE[1] >> 5, TILE[2] >> 5
        t = decode(base_tile(d, z, x, y)[2], ctx["tmp"])
        names = {f["properties"]["name"] for f in t["layers"]["roads"]["features"]}
        assert names == {"Rue Alpha"}, names
        assert {f["properties"]["name"] for f in t["layers"]["places"]["features"]} == {
            "Testville"}


@test
def t_osrm_literal(ctx):
    d = ctx["daemons"][0]
    st, h, body = osrm_tile(d, *TILE)
    assert st == 200 and h["content-type"] == "application/x-protobuf", (st, h)
    assert layer_names(body) == ["speeds", "turns", "osmnodes", "internal-nodes"], layer_names(
        body)
    t = decode(body, ctx["tmp"])
    check_tile(t, 128)
    sp = t["layers"]["speeds"]["features"]
    # one feature per segment and direction: Alpha 2 segments x 2 directions, Beta 2 x 1
    names = sorted(f["properties"]["name"] for f in sp)
    assert names == ["Rue Alpha"] * 4 + ["Rue Beta"] * 2, names
    for f in sp:
        p = f["properties"]
        assert p["datasource"] == "lua profile" and p["is_startpoint"] is True, p
        assert 0 < p["duration"] and 1 <= p["speed"] <= 127, p
    # the crossing: 3 ways in (Alpha both ways, Beta north), each turning onto the 3 ways out
    # but back: 7 turns, all at node 3
    turns = t["layers"]["turns"]["features"]
    assert len(turns) == 7, [f["properties"] for f in turns]
    for f in turns:
        (px, py), = f["geometry"][0]
        lon, lat = lonlat(*TILE, px, py)
        assert abs(lon - 7.002) < 1e-4 and abs(lat - 45.001) < 1e-4, (lon, lat)
    straight = [f["properties"] for f in turns if abs(f["properties"]["turn_angle"]) <= 1]
    assert len(straight) == 3 and all(p["modifier"] == "straight" for p in straight), straight
    lefts = [f["properties"] for f in turns if f["properties"]["modifier"] == "left"]
    assert len(lefts) == 2 and all(-91 <= p["turn_angle"] <= -89 for p in lefts), lefts
    ids = sorted(f["id"] for f in t["layers"]["osmnodes"]["features"])
    assert ids == [1, 2, 3, 4, 5], ids
    # below zoom 15 there is no turns layer (as OSRM)
    body = osrm_tile(d, 14, TILE[1] >> 1, TILE[2] >> 1)[2]
    assert "turns" not in layer_names(body) and "speeds" in layer_names(body)
    # outside the graph: an empty body, as OSRM
    st, _, body = osrm_tile(d, *EMPTY)
    assert st == 200 and body == b"", (st, body[:40])


@test
def t_bad_input(ctx):
    d = ctx["daemons"][0]
    for path, status, code, word in (
            ("/tile/v1/car/tile(1,1,11).mvt", 400, "InvalidOptions", "zoom 12..19"),
            ("/tile/v1/car/tile(1,1,20).mvt", 400, "InvalidOptions", "zoom 12..19"),
            ("/tile/v1/car/tile(4096,1,12).mvt", 400, "InvalidOptions", "below 2^zoom"),
            ("/tile/v1/car/tile(1,1).mvt", 400, "InvalidUrl", "tile(x,y,z).mvt"),
            ("/tile/v1/car/tile(1,-1,12).mvt", 400, "InvalidUrl", "tile(x,y,z).mvt"),
            ("/tile/v1/car/tile(1,1,12).png", 400, "InvalidUrl", "tile(x,y,z).mvt"),
            ("/v1/graphs/t/tiles/23/0/0.mvt", 400, "InvalidQuery", "z is 0..22"),
            ("/v1/graphs/t/tiles/2/4/0.mvt", 400, "InvalidQuery", "below 2^z"),
            ("/v1/graphs/t/tiles/2/1/x.mvt", 400, "InvalidQuery", "whole numbers"),
            ("/v1/graphs/t/tiles/2/1/1.png", 400, "InvalidQuery", "whole numbers"),
            ("/v1/graphs/nope/tiles/2/1/1.mvt", 404, "UnknownGraph", "nope")):
        st, h, body = get(d, path)
        assert st == status, (path, st, body)
        b = json.loads(body)
        assert b["code"] == code and word in b["message"], (path, b)
        if path.startswith("/v1/"):
            H.validate("GET", path, st, b, h.get("content-type", ""))


@test
def t_gzip_etag_cache(ctx):
    d = ctx["daemons"][0]
    for fetch in (lambda h: base_tile(d, *TILE, headers=h), lambda h: osrm_tile(d, *TILE, headers=h)):
        st, h, plain = fetch({})
        assert st == 200 and "content-encoding" not in h and h["vary"] == "Accept-Encoding", h
        st, hz, z = fetch({"Accept-Encoding": "gzip"})
        assert hz["content-encoding"] == "gzip" and gzip.decompress(z) == plain, hz
        assert len(z) < len(plain)
        assert hz["x-gpath-cache"] == "hit", hz  # the second request for the same tile
        assert h["etag"] != hz["etag"] and h["etag"][1:17] == hz["etag"][1:17], (h, hz)
        st, h2, body = fetch({"If-None-Match": h["etag"]})
        assert st == 304 and body == b"", (st, h2)
        st, _, _ = fetch({"If-None-Match": '"0000000000000000"'})
        assert st == 200


@test
def t_tilejson_style(ctx):
    d = ctx["daemons"][0]
    st, h, b = d.call("GET", "/v1/graphs/t/tiles.json", headers={"Host": "maps.example:8080"})
    assert st == 200, b
    assert b["tiles"] == ["http://maps.example:8080/v1/graphs/t/tiles/{z}/{x}/{y}.mvt"], b
    w, s, e, n = b["bounds"]
    assert (w, s, e, n) == (7.0, 45.0, 7.032, 45.002), b["bounds"]
    assert b["minzoom"] == 0 and b["maxzoom"] >= 14
    assert [l["id"] for l in b["vector_layers"]] == ["roads", "places"]
    st, h, s = d.call("GET", "/v1/graphs/t/style.json")
    assert st == 200 and s["version"] == 8, s
    assert "glyphs" not in s  # MapLibre >= 5.11 draws labels with local fonts
    src = s["sources"]["gpath"]
    assert src["type"] == "vector" and src["tiles"][0].endswith("/v1/graphs/t/tiles/{z}/{x}/{y}.mvt")
    used = {l.get("source-layer") for l in s["layers"]} - {None}
    assert used == {"roads", "places"}, used
    texts = [l["layout"]["text-field"] for l in s["layers"] if l["type"] == "symbol"]
    assert ["get", "name"] in texts and ["get", "ref"] in texts, texts
    classes = set()
    for l in s["layers"]:
        f = l.get("filter")
        if f and f[0] == "in":
            classes |= set(f[2][1])
    assert {"motorway", "primary", "residential", "footway", "ferry"} <= classes, classes


@test
def t_traffic(ctx):
    """A speed update (docs/traffic.md) shows in the speeds layer as OSRM shows its traffic
    files: datasource "traffic" and the new speed on that segment and direction only; the tile is
    a new one (new graph version: a cache miss and another ETag)."""
    d = ctx["daemons"][0]
    h0 = osrm_tile(d, *TILE)[1]
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    conn.request("POST", "/v1/graphs/t/speeds", body=b"1,3,5\n",
                 headers={"Authorization": "Bearer tok", "Content-Type": "text/csv"})
    r = conn.getresponse()
    assert r.status == 200, (r.status, r.read())
    r.read()
    conn.close()
    try:
        st, h, body = osrm_tile(d, *TILE)
        assert st == 200 and h["x-gpath-cache"] == "miss" and h["etag"] != h0["etag"], (h0, h)
        t = decode(body, ctx["tmp"])
        slow = [f for f in t["layers"]["speeds"]["features"]
                if f["properties"]["datasource"] == "traffic"]
        assert len(slow) == 1, [f["properties"] for f in slow]
        p = slow[0]["properties"]
        assert p["name"] == "Rue Alpha" and p["speed"] == 5, p
        (x0, y0), (x1, y1) = slow[0]["geometry"][0]
        assert x1 > x0, "the slowed direction is 1 -> 3, eastwards"
    finally:
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        conn.request("DELETE", "/v1/graphs/t/speeds", headers={"Authorization": "Bearer tok"})
        conn.getresponse().read()
        conn.close()


@test
def t_osrm_monaco(ctx):
    tar = os.path.join(PEER, "osrm-v6.0.0-debian12-bin.tar.xz")
    pbf = os.path.join(DATA, "osm", "monaco.osm.pbf")
    if not (os.path.exists(tar) and os.path.exists(pbf)):
        raise H.Skip(f"no OSRM tarball ({tar}) or no Monaco ({pbf}); `make data` gets the extract")
    od = os.path.join(ctx["tmp"], "peer")
    p, port = H.start_osrm(od, tar, pbf, "7.4200,43.7310")
    d = H.Daemon(ctx["tmp"], "monaco", ["--graph", f"monaco=osm:{pbf}"])
    try:
        d.wait_ready(120)

        class Peer:
            pass
        peer = Peer()
        peer.port = port
        for z, x, y in ((14, 8529, 5974), (15, 17059, 11948)):
            ours, theirs = osrm_tile(d, z, x, y)[2], osrm_tile(peer, z, x, y)[2]
            assert layer_names(ours) == layer_names(theirs), (layer_names(ours),
                                                             layer_names(theirs))
            a, b = decode(ours, ctx["tmp"]), decode(theirs, ctx["tmp"])
            check_tile(a, 128)
            check_tile(b, 128)
            assert set(a["layers"]) == set(b["layers"]) - {"internal-nodes"}, (a["layers"].keys())
            for name, la in a["layers"].items():
                lb = b["layers"][name]
                assert la["keys"] == lb["keys"], (name, la["keys"], lb["keys"])
                ta = {k: v for f in la["features"] for k, v in f["types"].items()}
                tb = {k: v for f in lb["features"] for k, v in f["types"].items()}
                assert ta == tb, (name, ta, tb)
                na, nb = len(la["features"]), len(lb["features"])
                tol = 0.10 if name == "turns" else 0.03
                assert abs(na - nb) <= tol * nb, (z, name, na, nb)
                print(f"  z{z} {name}: gpath {na} features, OSRM {nb}")
            names = lambda t: {f["properties"]["name"] for f in t["layers"]["speeds"]["features"]}
            assert names(a) == names(b), names(a) ^ names(b)
    finally:
        d.stop()
        p.kill()
        p.wait()


def skip_all(why):
    print(f"SKIP: {why}")
    print("0 passed, 0 failed, 1 skipped")
    return 0


def main():
    global NM, H
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:  # http_test validates answers against openapi.yaml
        H = importlib.import_module("http_test")
    except ImportError:
        return skip_all("/usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps "
                        "installs them)")
    if not shutil.which("node"):
        return skip_all("node is not installed")
    try:
        with open(os.path.join(ROOT, BUILD, "web", "npm-cache.path")) as f:
            NM = f.read().strip()
    except OSError:
        NM = None
    if not NM or not os.path.isdir(os.path.join(NM, "@mapbox", "vector-tile")):
        return skip_all("@mapbox/vector-tile is not installed (make web installs "
                        "web/package.json's devDependencies)")
    tmp = tempfile.mkdtemp(prefix="gpath-tiles-")
    daemons = []
    try:
        snap = os.path.join(tmp, "tiles.gpath")
        subprocess.run([H.BIN, "import", OSM, "--profile", "car", "-o", snap], check=True,
                       capture_output=True, timeout=120)
        for name, spec in (("osm", f"t=osm:{OSM}"), ("snap", f"t={snap}")):
            dm = H.Daemon(tmp, name, ["--graph", spec, "--operator-token", "tok"])
            daemons.append(dm)
            dm.wait_ready()
        ctx = {"tmp": tmp, "daemons": daemons}
        passed, failed, skipped = H.run_tests(TESTS, ctx, only=sys.argv[1:], skip_exc=H.Skip)
    finally:
        for dm in daemons:
            dm.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
