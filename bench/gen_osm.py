#!/usr/bin/env python3
"""gen_osm.py N OUT.osm [SEED] - writes a synthetic OSM XML road network of about N nodes.

A city-like grid for the OSM import benchmark (bench/cpu-osm.sh): intersections every ~110 m near
8.5 E 47.3 N, each block side drawn through 0..8 shape points (about 4 on average, so, as in real
OSM data, most way nodes lie on one way only and collapse into shape points), streets split into
ways of 1..6 blocks with a name per street, classes from residential to primary, 10% one-ways,
some maxspeed tags, and a no_left_turn restriction at about 1% of the intersections.
Deterministic for (N, SEED). Convert to PBF with `osmium cat OUT.osm -o OUT.osm.pbf`.
"""
import math
import random
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n_target = int(sys.argv[1])
    out = sys.argv[2]
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    # one intersection + on average 2 sides x 4 shape points = ~9 nodes per grid cell
    side = max(2, int(math.sqrt(n_target / 9.0)))
    step = 0.001
    lon0, lat0 = 8.5, 47.3
    inter = {}  # (i, j) -> node id
    nodes = []  # (id, lon, lat)
    nid = 0

    def new_node(lon, lat):
        nonlocal nid
        nid += 1
        nodes.append((nid, lon, lat))
        return nid

    for i in range(side):
        for j in range(side):
            inter[(i, j)] = new_node(lon0 + i * step * 1.47, lat0 + j * step)
    # block sides: (a, b) -> list of shape node ids from a to b
    shapes = {}
    for i in range(side):
        for j in range(side):
            for di, dj in ((1, 0), (0, 1)):
                if i + di >= side or j + dj >= side:
                    continue
                a, b = inter[(i, j)], inter[(i + di, j + dj)]
                k = rnd.randint(0, 8)
                pts = []
                for s in range(1, k + 1):
                    t = s / (k + 1)
                    lon = lon0 + (i + di * t) * step * 1.47 + rnd.uniform(-2e-5, 2e-5)
                    lat = lat0 + (j + dj * t) * step + rnd.uniform(-2e-5, 2e-5)
                    pts.append(new_node(lon, lat))
                shapes[(a, b)] = pts

    classes = ["residential"] * 6 + ["tertiary"] * 2 + ["secondary", "primary", "service"]
    ways = []  # (id, refs, tags)
    wid = 0
    streets = []
    for j in range(side):  # east-west streets
        streets.append([inter[(i, j)] for i in range(side)])
    for i in range(side):  # north-south streets
        streets.append([inter[(i, j)] for j in range(side)])
    for sidx, st in enumerate(streets):
        cls = rnd.choice(classes)
        name = "Street %d" % sidx
        pos = 0
        while pos < len(st) - 1:
            blocks = rnd.randint(1, 6)
            end = min(len(st) - 1, pos + blocks)
            refs = [st[pos]]
            for q in range(pos, end):
                refs += shapes[(st[q], st[q + 1])] + [st[q + 1]]
            tags = [("highway", cls), ("name", name)]
            r = rnd.random()
            if r < 0.10:
                tags.append(("oneway", "yes"))
            elif r < 0.12:
                tags.append(("oneway", "-1"))
            if rnd.random() < 0.2:
                tags.append(("maxspeed", rnd.choice(["30", "50", "60"])))
            wid += 1
            ways.append((wid, refs, tags, st[pos:end + 1]))
            pos = end

    # no_left_turn at ~1% of intersections: from an east-west way into a north-south way
    by_node = {}
    for w in ways:
        for x in w[3]:
            by_node.setdefault(x, []).append(w[0])
    rels = []
    rid = 0
    for (i, j), x in inter.items():
        ws = by_node.get(x, [])
        if len(ws) >= 2 and rnd.random() < 0.01:
            rid += 1
            rels.append((rid, ws[0], x, ws[-1]))

    with open(out, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="gpath bench/gen_osm.py">\n')
        f.write("".join('  <node id="%d" lat="%.7f" lon="%.7f"/>\n' % (i, la, lo) for i, lo, la in nodes))
        for w, refs, tags, _ in ways:
            f.write('  <way id="%d">' % w)
            f.write("".join('<nd ref="%d"/>' % r for r in refs))
            f.write("".join('<tag k="%s" v="%s"/>' % kv for kv in tags))
            f.write("</way>\n")
        for r, fw, via, tw in rels:
            f.write('  <relation id="%d"><member type="way" ref="%d" role="from"/>'
                    '<member type="node" ref="%d" role="via"/><member type="way" ref="%d" role="to"/>'
                    '<tag k="type" v="restriction"/><tag k="restriction" v="no_left_turn"/></relation>\n'
                    % (r, fw, via, tw))
        f.write("</osm>\n")
    print("%s: %d nodes, %d ways, %d restrictions (grid %dx%d)" % (out, len(nodes), len(ways), len(rels), side, side))


if __name__ == "__main__":
    main()
