#!/usr/bin/python3
"""gen_osm_grid.py N SEED OUT.osm - a synthetic OSM extract (XML) of about N street intersections for
benchmarks: a perturbed square grid of streets around lon 8.5, lat 47.3 (about 75 m spacing),
every 10th street a named primary road (50 km/h), every 40th a trunk (80 km/h), the rest
residential, every 7th residential street one-way; each street is one way (OSM way) through its
intersections with a shape point between each two. Deterministic for (N, SEED). OSRM and gpath
read the same file (convert it with `osmium cat OUT.osm -o OUT.osm.pbf`)."""
import math
import random
import sys


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    side = max(2, int(math.isqrt(n)))
    rnd = random.Random(seed)
    step_lat = 75 / 111195.0
    step_lon = step_lat / math.cos(math.radians(47.3))
    lon0 = 8.5 - side * step_lon / 2
    lat0 = 47.3 - side * step_lat / 2
    with open(out, "w", encoding="utf-8") as f:
        w = f.write
        w('<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="gpath bench/gen_osm_grid.py">\n')
        # intersections: ids 1..side^2; shape points after them
        for y in range(side):
            for x in range(side):
                lon = lon0 + (x + rnd.uniform(-0.2, 0.2)) * step_lon
                lat = lat0 + (y + rnd.uniform(-0.2, 0.2)) * step_lat
                w(f'<node id="{y * side + x + 1}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>\n')
        shape = side * side + 1
        ways = []
        for vertical in (0, 1):
            for k in range(side):
                ids = [(i * side + k + 1) if vertical else (k * side + i + 1) for i in range(side)]
                ways.append((vertical, k, ids))
        coords = {}
        # shape points between consecutive intersections (slightly off the straight line)
        way_nodes = []
        for vertical, k, ids in ways:
            seq = [ids[0]]
            for a, b in zip(ids, ids[1:]):
                ya, xa = divmod(a - 1, side)
                yb, xb = divmod(b - 1, side)
                lon = lon0 + ((xa + xb) / 2 + rnd.uniform(-0.1, 0.1)) * step_lon
                lat = lat0 + ((ya + yb) / 2 + rnd.uniform(-0.1, 0.1)) * step_lat
                coords[shape] = (lon, lat)
                seq += [shape, b]
                shape += 1
            way_nodes.append(seq)
        for nid, (lon, lat) in coords.items():
            w(f'<node id="{nid}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>\n')
        for wid, ((vertical, k, _), seq) in enumerate(zip(ways, way_nodes), start=1):
            if k % 40 == 0:
                tags = {"highway": "trunk", "maxspeed": "80", "ref": f"T{k // 40}"}
            elif k % 10 == 0:
                tags = {"highway": "primary", "maxspeed": "50"}
            else:
                tags = {"highway": "residential"}
                if k % 7 == 3:
                    tags["oneway"] = "yes"
            tags["name"] = f"{'Avenue' if vertical else 'Street'} {k}"
            w(f'<way id="{wid}" version="1">')
            w("".join(f'<nd ref="{x}"/>' for x in seq))
            w("".join(f'<tag k="{a}" v="{b}"/>' for a, b in tags.items()))
            w("</way>\n")
        w("</osm>\n")


if __name__ == "__main__":
    main()
