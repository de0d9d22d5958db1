// mvt_decode.mjs - decodes a Mapbox Vector Tile with @mapbox/vector-tile + pbf (pinned in
// web/package.json devDependencies, installed by `make web`) and prints it as JSON on stdout:
// {"layers": {NAME: {"version", "extent", "keys", "features": [{"id", "type", "properties",
// "types": {key: "string" | "number" | "boolean"}, "geometry": [[[x, y], ...], ...]}]}}}.
// Used by tests/test_tiles.sh; the first argument is the tile file ("-" for stdin), the second
// (optional) the node_modules directory holding the two packages.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const file = process.argv[2];
const nm = process.argv[3] || process.env.NODE_MODULES;
if (!file || !nm) {
  console.error("usage: node tests/mvt_decode.mjs TILE NODE_MODULES");
  process.exit(2);
}
const load = async (name) => {
  const req = createRequire(path.join(nm, "x.js"));
  return import(pathToFileURL(req.resolve(name)).href);
};
const { VectorTile } = await load("@mapbox/vector-tile");
const Pbf = (await load("pbf")).default;
const buf = readFileSync(file === "-" ? 0 : file);
const tile = new VectorTile(new Pbf(buf));
const out = { layers: {} };
for (const [name, layer] of Object.entries(tile.layers)) {
  const l = { version: layer.version, extent: layer.extent, keys: layer._keys, features: [] };
  for (let i = 0; i < layer.length; i++) {
    const f = layer.feature(i);
    const types = {};
    for (const [k, v] of Object.entries(f.properties)) types[k] = typeof v;
    l.features.push({
      id: f.id,
      type: f.type,
      properties: f.properties,
      types,
      geometry: f.loadGeometry().map((ring) => ring.map((p) => [p.x, p.y])),
    });
  }
  out.layers[name] = l;
}
process.stdout.write(JSON.stringify(out));
