/* gpath map page (web/index.html), an ES module. Everything it asks goes to the gpath that served it:
 *   GET /v1/graphs                          the graphs and their profiles, for the pickers
 *   GET /v1/graphs/{g}/style.json           the basemap: gpath's vector tiles (/v1/graphs/{g}/tiles/
 *                                           {z}/{x}/{y}.mvt, layers roads and places, glyphs under
 *                                           /web/fonts/); where it answers no style (a gpath without
 *                                           tiles) the page draws the road overview instead, styled
 *                                           by road class
 *   GET /v1/graphs/{g}/overview.geojson     that overview, and the graph's bbox the map is fitted to
 *   GET /route/v1/{g}/{from};{to}           alternatives, steps, annotations, full GeoJSON overview
 *   GET /v1/graphs/{g}/isochrone            polygons for a right-click or the button
 *   GET /v1/graphs/{g}                      data_version and the traffic files in force
 *   GET /v1/graphs/{g}/traffic.geojson      the segments the traffic slowed, drawn by slowdown
 * State for tests: document.body.dataset.{map, basemap, route, isochrone} ("ready" | "error" |
 * "loading"; basemap is "tiles" | "overview"), dataset.trafficSegments (the slowed segments drawn)
 * and dataset.trafficVersion (their data_version), and window.gpath (the map, the last answers and
 * the route's drawn features).
 */
import * as maplibregl from './maplibre-gl.mjs';

const base = window.location.origin;
const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const text = window.osrmTextInstructions ? window.osrmTextInstructions('v5') : null;
const state = { graphs: [], graph: null, origin: null, dest: null, routes: [], selected: 0,
                answer: null, iso: null, basemap: null, drawn: [], seq: 0 };
window.gpath = state;

function say(t) { $('status').textContent = t || ''; }
function setFlag(k, v) { document.body.dataset[k] = v; }

async function getJSON(path) {
  const r = await fetch(base + path);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON: reported below */ }
  if (!r.ok) throw new Error((j && (j.message || j.code)) || path + ': HTTP ' + r.status);
  return j;
}

/* ---- formatting ---- */
function km(m) { return m >= 1000 ? (m / 1000).toFixed(m >= 10000 ? 0 : 1) + ' km' : Math.round(m) + ' m'; }
function mins(s) {
  if (s < 60) return Math.round(s) + ' s';
  const m = Math.round(s / 60);
  return m < 60 ? m + ' min' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]); }

/* ---- basemap ---- */
const ROAD_COLOR = ['match', ['get', 'class'],
  'motorway', '#e892a2', 'trunk', '#f9b29c', 'primary', '#fcd6a4', 'secondary', '#f7fabf',
  'ferry', '#7fa7d8', 'path', '#c98b6b', 'footway', '#e58f7d', 'cycleway', '#7b8fe0', 'track', '#b0894f',
  '#ffffff'];
const ROAD_RANK = ['match', ['get', 'class'], 'motorway', 10, 'trunk', 9, 'primary', 8, 'secondary', 7,
  'tertiary', 6, 'unclassified', 5, 'residential', 5, 'living_street', 4, 'service', 3, 2];
function roadWidth(scale) {
  const w = (major, minor) => ['match', ['get', 'class'],
    ['motorway', 'trunk', 'primary'], major, ['secondary', 'tertiary'], major * 0.8,
    ['unclassified', 'residential', 'living_street'], minor, ['service'], minor * 0.6, minor * 0.35];
  return ['interpolate', ['exponential', 1.6], ['zoom'], 10, w(1.4 * scale, 0.5 * scale),
    14, w(4 * scale, 2.4 * scale), 18, w(16 * scale, 11 * scale)];
}
const MINOR_PATH = ['match', ['get', 'class'], ['path', 'footway', 'cycleway', 'track', 'ferry'], true, false];

/* A style of the overview GeoJSON, for a gpath without vector tiles (no glyphs: no labels). */
function overviewStyle(fc) {
  return {
    version: 8,
    sources: { overview: { type: 'geojson', data: fc } },
    layers: [
      { id: 'background', type: 'background', paint: { 'background-color': '#f2efe9' } },
      { id: 'road-casing', type: 'line', source: 'overview', filter: ['!', MINOR_PATH],
        layout: { 'line-join': 'round', 'line-cap': 'round', 'line-sort-key': ROAD_RANK },
        paint: { 'line-color': ['match', ['get', 'class'], 'motorway', '#c24e6e', 'trunk', '#c8603a',
                                'primary', '#a06b00', 'secondary', '#707d05', '#b8b0a4'],
                 'line-width': roadWidth(1.35), 'line-gap-width': 0 } },
      { id: 'road', type: 'line', source: 'overview', filter: ['!', MINOR_PATH],
        layout: { 'line-join': 'round', 'line-cap': 'round', 'line-sort-key': ROAD_RANK },
        paint: { 'line-color': ROAD_COLOR, 'line-width': roadWidth(1) } },
      { id: 'road-path', type: 'line', source: 'overview', filter: MINOR_PATH,
        paint: { 'line-color': ROAD_COLOR, 'line-dasharray': [2, 1.5],
                 'line-width': ['interpolate', ['linear'], ['zoom'], 12, 0.8, 18, 3] } }
    ]
  };
}

/* gpath's style.json may name its tiles, glyphs and sprite by path: MapLibre needs URLs. */
function absolutise(style) {
  const abs = (u) => (typeof u === 'string' && u.startsWith('/') ? base + u : u);
  Object.values(style.sources || {}).forEach((s) => {
    if (s.tiles) s.tiles = s.tiles.map(abs);
    if (s.url) s.url = abs(s.url);
  });
  if (style.glyphs) style.glyphs = abs(style.glyphs);
  if (typeof style.sprite === 'string') style.sprite = abs(style.sprite);
  return style;
}

/* The basemap of graph g: gpath's vector tile style where the server has one, else the overview. */
async function basemapFor(g) {
  let style = null;
  try {
    const r = await fetch(base + '/v1/graphs/' + enc(g) + '/style.json');
    if (r.ok) style = absolutise(await r.json());
  } catch (e) { style = null; }
  // with tiles, one merged line is enough for the bbox
  const fc = await getJSON('/v1/graphs/' + enc(g) + '/overview.geojson' + (style ? '?max_edges=1' : ''));
  return { style: style || overviewStyle(fc), kind: style ? 'tiles' : 'overview', fc };
}

/* ---- overlays: isochrones, alternatives, the route by speed ---- */
const SPEEDS = [[0, '#a50026'], [15, '#e34a33'], [30, '#fc8d59'], [45, '#fee08b'], [60, '#91cf60'], [90, '#1a9850']];
const ISO_COLORS = ['#1a9850', '#91cf60', '#fee08b', '#fc8d59', '#d73027', '#a50026'];
const EMPTY = { type: 'FeatureCollection', features: [] };
/* slowed segments by ratio = speed now / the profile's speed (closed: dark grey) */
const SLOW = [[0.5, '#b2182b', 'under half'], [0.8, '#ef6c00', 'under 80%'], [1, '#f9c80e', 'slower'],
              [Infinity, '#1a9850', 'faster']];
const slowColor = ['case', ['get', 'closed'], '#333333',
  ['step', ['get', 'ratio'], SLOW[0][1], SLOW[0][0], SLOW[1][1], SLOW[1][0], SLOW[2][1], SLOW[2][0], SLOW[3][1]]];

function addOverlays(map) {
  const before = (map.getStyle().layers.find((l) => l.type === 'symbol') || {}).id;
  const add = (layer) => map.addLayer(layer, before);
  map.addSource('iso', { type: 'geojson', data: state.iso || EMPTY });
  map.addSource('alts', { type: 'geojson', data: EMPTY });
  map.addSource('route', { type: 'geojson', data: EMPTY });
  add({ id: 'iso-fill', type: 'fill', source: 'iso',
        paint: { 'fill-color': ['get', 'color'], 'fill-opacity': 0.22 } });
  add({ id: 'iso-line', type: 'line', source: 'iso',
        paint: { 'line-color': ['get', 'color'], 'line-width': 1.5 } });
  map.addSource('traffic', { type: 'geojson', data: state.traffic || EMPTY });
  add({ id: 'traffic-casing', type: 'line', source: 'traffic', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': '#ffffff', 'line-width': 26 } });
  /* wider than the route: where a route runs on a slowed segment, a halo of its colour shows */
  add({ id: 'traffic-line', type: 'line', source: 'traffic', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': slowColor, 'line-width': 22 } });
  add({ id: 'alt-casing', type: 'line', source: 'alts', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': '#ffffff', 'line-width': 10 } });
  add({ id: 'alt-line', type: 'line', source: 'alts', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': '#8797b0', 'line-width': 6 } });
  add({ id: 'route-casing', type: 'line', source: 'route', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': '#17325c', 'line-width': 11 } });
  add({ id: 'route-line', type: 'line', source: 'route', layout: { 'line-join': 'round', 'line-cap': 'round' },
        paint: { 'line-color': ['interpolate', ['linear'], ['get', 'kmh']].concat(...SPEEDS),
                 'line-width': 7 } });
  add({ id: 'route-traffic', type: 'line', source: 'route', filter: ['==', ['get', 'traffic'], true],
        paint: { 'line-color': '#17325c', 'line-width': 3, 'line-dasharray': [1, 1.5] } });
  map.on('mouseenter', 'alt-line', () => { map.getCanvas().style.cursor = 'pointer'; });
  map.on('mouseleave', 'alt-line', () => { map.getCanvas().style.cursor = ''; });
}

function speedKey() {
  $('speedkey').innerHTML = 'speed' + SPEEDS.map(([k, c]) => ' <i style="background:' + c + '"></i>' + k).join('') +
    ' km/h';
}

/* The route as one feature per run of segments of about the same speed (5 km/h steps); a
 * segment whose speed comes from a traffic file (annotation.datasources) is marked traffic. */
function speedFeatures(route) {
  const coords = route.geometry.coordinates, feats = [];
  let k = 0, cur = null;
  route.legs.forEach((leg) => {
    const a = leg.annotation || {}, names = (a.metadata && a.metadata.datasource_names) || [];
    (a.distance || []).forEach((d, i) => {
      if (k + 1 >= coords.length) return;
      const t = a.duration[i], kmh = t > 0 ? Math.round(d / t * 3.6 / 5) * 5 : 0;
      const src = a.datasources ? names[a.datasources[i]] : 'profile';
      const traffic = !!src && src !== 'profile';
      if (!cur || cur.properties.kmh !== kmh || cur.properties.traffic !== traffic) {
        cur = { type: 'Feature', properties: { kmh, traffic }, geometry: { type: 'LineString', coordinates: [coords[k]] } };
        feats.push(cur);
      }
      cur.geometry.coordinates.push(coords[k + 1]);
      k++;
    });
  });
  if (!feats.length) feats.push({ type: 'Feature', properties: { kmh: 45, traffic: false }, geometry: route.geometry });
  return feats;
}

/* ---- itinerary icons (inline SVG) ---- */
const ANGLE = { uturn: 180, 'sharp right': 135, right: 90, 'slight right': 40, straight: 0,
                'slight left': -40, left: -90, 'sharp left': -135 };
function arrowHead(x, y, deg) {
  const r = (a) => (deg + a) * Math.PI / 180;
  const p = (a, l) => (x + l * Math.sin(r(a))).toFixed(1) + ' ' + (y - l * Math.cos(r(a))).toFixed(1);
  return '<path d="M' + p(0, 0) + ' L' + p(-150, 5) + ' M' + p(0, 0) + ' L' + p(150, 5) + '"/>';
}
function icon(step) {
  const m = step.maneuver, mod = m.modifier || 'straight', type = m.type;
  const svg = (body, cls) => '<svg viewBox="0 0 24 24" class="' + cls + '" aria-hidden="true" fill="none" ' +
    'stroke="#1d2330" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round">' + body + '</svg>';
  if (type === 'depart')
    return svg('<circle cx="12" cy="15" r="4" fill="#1f9d55" stroke="#fff"/><path d="M12 10 V3"/>' + arrowHead(12, 3, 0), 'depart');
  if (type === 'arrive')
    return svg('<path d="M12 22 C12 22 5 14 5 9.5 a7 7 0 0 1 14 0 C19 14 12 22 12 22 z" fill="#d64545" stroke="#fff" stroke-width="1.5"/>' +
               '<circle cx="12" cy="9.5" r="2.5" fill="#fff" stroke="none"/>', 'arrive');
  if (/roundabout|rotary/.test(type)) {
    // the ring, the way in from below and the way out towards the exit's direction
    const a = ((ANGLE[mod] !== undefined ? ANGLE[mod] : 0) * Math.PI) / 180;
    const ex = 12 + 5 * Math.sin(a), ey = 10 - 5 * Math.cos(a), ox = 12 + 10 * Math.sin(a), oy = 10 - 10 * Math.cos(a);
    return svg('<circle cx="12" cy="10" r="5"/><path d="M12 22 V15"/><path d="M' + ex.toFixed(1) + ' ' + ey.toFixed(1) +
               ' L' + ox.toFixed(1) + ' ' + oy.toFixed(1) + '"/>' + arrowHead(ox, oy, ANGLE[mod] || 0), 'roundabout');
  }
  if (mod === 'uturn')
    return svg('<path d="M15 21 V9 a4 4 0 0 0 -8 0 V16"/>' + arrowHead(7, 16, 180), 'uturn');
  const deg = ANGLE[mod] !== undefined ? ANGLE[mod] : 0, r = deg * Math.PI / 180;
  const x = 12 + 8 * Math.sin(r), y = 12 - 8 * Math.cos(r);
  return svg('<path d="M12 22 V12 L' + x.toFixed(1) + ' ' + y.toFixed(1) + '"/>' + arrowHead(x, y, deg), 'turn');
}

/* A step's instruction as OSRM's clients say it (osrm-text-instructions), else a plain one. */
function instruction(step, legIndex, legCount) {
  if (text) {
    try { return text.compile('en', step, { legIndex, legCount }); } catch (e) { /* below */ }
  }
  const m = step.maneuver, on = step.name ? ' onto ' + step.name : '';
  if (m.type === 'depart') return 'Head ' + (step.name ? 'along ' + step.name : 'off');
  if (m.type === 'arrive') return 'You have arrived at your destination';
  return (m.type + ' ' + (m.modifier || '')).trim().replace(/^./, (c) => c.toUpperCase()) + on;
}

/* ---- the panel ---- */
function renderResult() {
  const r = state.routes[state.selected];
  $('hint').hidden = !!r;
  $('result').hidden = !r;
  if (!r) return;
  const via = r.legs.map((l) => l.summary).filter(Boolean).join(', ');
  $('summary').innerHTML = esc(mins(r.duration)) + ' <span style="font-weight:400;color:#556">· ' + esc(km(r.distance)) +
    '</span><small>' + (via ? 'via ' + esc(via) : '') + '</small>';
  $('alts').innerHTML = state.routes.map((x, i) => '<li data-i="' + i + '" class="' + (i === state.selected ? 'selected' : '') +
    '">' + (i ? 'Alternative ' + i : 'Fastest') + ': ' + esc(mins(x.duration)) + ', ' + esc(km(x.distance)) + '</li>').join('');
  const rows = [];
  r.legs.forEach((leg, li) => leg.steps.forEach((s) => {
    rows.push('<li data-lon="' + s.maneuver.location[0] + '" data-lat="' + s.maneuver.location[1] + '">' + icon(s) +
      '<span class="text">' + esc(instruction(s, li, r.legs.length)) + '</span><span class="dist">' +
      (s.distance > 0 ? esc(km(s.distance)) : '') + '</span></li>');
  }));
  $('steps').innerHTML = rows.join('');
}

function drawRoutes() {
  const map = state.map;
  if (!map.getSource('route')) return;
  const r = state.routes[state.selected];
  map.getSource('alts').setData({ type: 'FeatureCollection', features: state.routes
    .map((x, i) => ({ type: 'Feature', properties: { i }, geometry: x.geometry })).filter((f, i) => i !== state.selected) });
  state.drawn = r ? speedFeatures(r) : [];
  map.getSource('route').setData({ type: 'FeatureCollection', features: state.drawn });
}

function select(i) {
  state.selected = i;
  drawRoutes();
  renderResult();
}

/* Brings the routes into view when they are not, or zooms in when they fill a corner of it. */
function fitRoutes() {
  const cs = state.routes.flatMap((r) => r.geometry.coordinates);
  if (!cs.length) return;
  const lons = cs.map((c) => c[0]), lats = cs.map((c) => c[1]);
  const w = Math.min(...lons), e = Math.max(...lons), s = Math.min(...lats), n = Math.max(...lats);
  const v = state.map.getBounds();
  const inside = v.contains([w, s]) && v.contains([e, n]);
  const small = (e - w) / (v.getEast() - v.getWest()) < 0.3 && (n - s) / (v.getNorth() - v.getSouth()) < 0.3;
  if (!inside || small) state.map.fitBounds([[w, s], [e, n]], { padding: 80, maxZoom: 17, duration: 300 });
}

/* ---- routing ---- */
function marker(cls, label) {
  const el = document.createElement('div');
  el.className = 'marker ' + cls;
  el.title = label;
  el.textContent = cls === 'start' ? 'A' : 'B';
  const m = new maplibregl.Marker({ element: el, draggable: true });
  m.on('dragend', route);
  return m;
}

async function route() {
  if (!state.origin || !state.dest) return;
  const ll = (m) => { const p = m.getLngLat(); return p.lng.toFixed(6) + ',' + p.lat.toFixed(6); };
  const seq = ++state.seq;
  setFlag('route', 'loading');
  say('');
  try {
    const j = await getJSON('/route/v1/' + enc(state.graph) + '/' + ll(state.origin) + ';' + ll(state.dest) +
      '?alternatives=true&steps=true&annotations=true&overview=full&geometries=geojson');
    if (seq !== state.seq) return;
    state.answer = j;
    state.routes = j.routes || [];
    select(0);
    fitRoutes();
    showTraffic();
    setFlag('route', 'ready');
  } catch (e) {
    if (seq !== state.seq) return;
    state.routes = [];
    select(0);
    say('No route: ' + e.message);
    setFlag('route', 'error');
  }
}

/* ---- isochrones ---- */
async function isochrone(lngLat) {
  const p = lngLat || (state.origin && state.origin.getLngLat()) || state.map.getCenter();
  setFlag('isochrone', 'loading');
  try {
    const fc = await getJSON('/v1/graphs/' + enc(state.graph) + '/isochrone?lon=' + p.lng.toFixed(6) + '&lat=' +
      p.lat.toFixed(6) + '&contours=' + enc($('contours').value) + '&contours_type=' + $('ctype').value);
    // largest first, so each smaller area is drawn over the larger ones
    const limits = [...new Set(fc.features.map((f) => f.properties.contour))].sort((a, b) => a - b);
    fc.features.forEach((f) => { f.properties.color = ISO_COLORS[Math.min(limits.indexOf(f.properties.contour), ISO_COLORS.length - 1)]; });
    fc.features.sort((a, b) => b.properties.contour - a.properties.contour);
    state.iso = fc;
    state.map.getSource('iso').setData(fc);
    const unit = $('ctype').value === 'time' ? (v) => mins(v) : (v) => km(v);
    $('isolegend').innerHTML = limits.map((v, i) => '<span><i style="background:' +
      ISO_COLORS[Math.min(i, ISO_COLORS.length - 1)] + '"></i>' + esc(unit(v)) + '</span>').join('');
    setFlag('isochrone', 'ready');
  } catch (e) {
    say('Isochrone: ' + e.message);
    setFlag('isochrone', 'error');
  }
}

/* ---- traffic state ---- */
async function slowedSegments(g) {
  let fc;
  try { fc = await getJSON('/v1/graphs/' + enc(g) + '/traffic.geojson'); } catch (e) { fc = null; }
  if (g !== state.graph) return null;
  state.traffic = fc ? { type: 'FeatureCollection', features: fc.features } : EMPTY;
  const src = state.map && state.map.getSource('traffic');
  if (src) src.setData(state.traffic);
  setFlag('trafficSegments', String(state.traffic.features.length));
  setFlag('trafficVersion', fc ? fc.data_version : '');
  return fc;
}

async function showTraffic() {
  let info;
  try { info = await getJSON('/v1/graphs/' + enc(state.graph)); } catch (e) { return; }
  const fc = await slowedSegments(state.graph);
  const answered = state.answer && state.answer.data_version;
  let h = 'data_version <code>' + esc(info.data_version || info.version) + '</code>';
  if (answered && answered !== info.data_version) h += ' (the route shown: <code>' + esc(answered) + '</code>)';
  const t = info.traffic;
  const files = [];
  if (t) Object.keys(t).forEach((k) => { if (Array.isArray(t[k])) t[k].forEach((f) => files.push([k, f])); });
  if (!files.length) h += '<br>No traffic applied: durations are the profile\'s.';
  else {
    h += '<br>Traffic in force: ' + files.map(([k, f]) => esc(k.replace('_', ' ')) + ' ' + esc(f.entries) +
      ' entries, ' + esc(mins(f.age_s)) + ' old' + (f.expires_at ? ', until ' + esc(f.expires_at) : '')).join('; ') +
      '.';
    const dotted = state.drawn.some((f) => f.properties.traffic);
    if (dotted) h += ' The route\'s segments timed by it are dotted.';
  }
  const n = fc ? fc.features.length : 0;
  if (n) {
    h += '<br>' + n + ' road segment' + (n > 1 ? 's' : '') + ' changed (data_version <code>' + esc(fc.data_version) +
      '</code>' + (fc.expires_at ? ', until ' + esc(fc.expires_at) : '') + '), drawn by speed against the profile\'s:' +
      SLOW.map(([, c, t]) => ' <i style="background:' + c + '"></i>' + t).join('') + ' <i style="background:#333"></i>closed';
  }
  $('traffic').innerHTML = h;
}

/* Forgets the route and its markers (a new graph, or the "clear route" button). */
function clearRoute() {
  state.seq++;
  state.routes = [];
  state.answer = null;
  [state.origin, state.dest].forEach((m) => m && m.remove());
  state.origin = state.dest = null;
  renderResult();
  if (state.map) drawRoutes();
}

/* ---- the graph and profile pickers ---- */
async function showGraph(g) {
  state.graph = g;
  state.iso = null;
  state.traffic = null;
  $('isolegend').innerHTML = '';
  clearRoute();
  setFlag('map', 'loading');
  let bm;
  try { bm = await basemapFor(g); } catch (e) {
    say('Cannot draw ' + g + ': ' + e.message);
    setFlag('map', 'error');
    return;
  }
  state.basemap = bm.kind;
  setFlag('basemap', bm.kind);
  const b = bm.fc.bbox;
  const bounds = [[b[0], b[1]], [b[2], b[3]]];
  if (!state.map) {
    state.map = new maplibregl.Map({ container: 'map', style: bm.style, bounds, fitBoundsOptions: { padding: 30 },
                                     attributionControl: { compact: true, customAttribution: 'roads: OpenStreetMap contributors, via gpath' } });
    state.map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
    state.map.addControl(new maplibregl.ScaleControl(), 'bottom-right');
    wireMap(state.map);
  } else {
    state.map.setStyle(bm.style);
    state.map.fitBounds(bounds, { padding: 30, animate: false });
  }
  state.map.once('idle', () => setFlag('map', 'ready'));
  showTraffic();
}

function wireMap(map) {
  map.on('style.load', () => { addOverlays(map); drawRoutes(); });
  map.on('click', (e) => {
    const alt = map.getLayer('alt-line') && map.queryRenderedFeatures(e.point, { layers: ['alt-line'] })[0];
    if (alt) { select(alt.properties.i); return; }
    if (!state.origin) {
      state.origin = marker('start', 'start').setLngLat(e.lngLat).addTo(map);
      return;
    }
    if (!state.dest) state.dest = marker('end', 'destination').setLngLat(e.lngLat).addTo(map);
    else state.dest.setLngLat(e.lngLat);
    route();
  });
  map.on('contextmenu', (e) => { e.preventDefault(); isochrone(e.lngLat); });
}

function fillGraphs(profile) {
  const want = state.graph || new URLSearchParams(window.location.search).get('graph');
  const gs = state.graphs.filter((g) => g.has_coordinates && (!profile || g.profile === profile));
  $('graph').innerHTML = gs.map((g) => '<option value="' + esc(g.name) + '"' + (g.name === want ? ' selected' : '') + '>' +
    esc(g.name) + ' (' + esc(g.nodes) + ' nodes)</option>').join('');
}

async function start() {
  speedKey();
  let j;
  try { j = await getJSON('/v1/graphs'); } catch (e) { say('Cannot list graphs: ' + e.message); setFlag('map', 'error'); return; }
  state.graphs = j.graphs || [];
  const profiles = [...new Set(state.graphs.filter((g) => g.has_coordinates).map((g) => g.profile || 'any'))];
  $('profile').innerHTML = '<option value="">all</option>' + profiles.map((p) => '<option>' + esc(p) + '</option>').join('');
  fillGraphs('');
  if (!$('graph').value) { say('No graph with coordinates is served: nothing to draw.'); setFlag('map', 'error'); return; }
  $('graph').onchange = () => showGraph($('graph').value);
  $('profile').onchange = () => {
    fillGraphs($('profile').value);
    if ($('graph').value && $('graph').value !== state.graph) showGraph($('graph').value);
  };
  $('alts').onclick = (e) => { const li = e.target.closest('li'); if (li) select(+li.dataset.i); };
  $('steps').onclick = (e) => {
    const li = e.target.closest('li');
    if (li) state.map.flyTo({ center: [+li.dataset.lon, +li.dataset.lat], zoom: Math.max(state.map.getZoom(), 16.5) });
  };
  $('iso').onclick = () => isochrone(null);
  $('clear').onclick = clearRoute;
  $('isoclear').onclick = () => { state.iso = null; state.map.getSource('iso').setData(EMPTY); $('isolegend').innerHTML = ''; };
  await showGraph($('graph').value);
}

start();
