// map_page.js BASE_URL OUTDIR OPERATOR_TOKEN - drives gpath's map page (GET /, MapLibre GL JS) in
// real headless Chromium (Debian's /usr/bin/chromium through the pinned playwright-core of
// web/package-lock.json, from the npm cache `make web` fills: $PLAYWRIGHT_CORE), run by
// tests/test_map_page.sh against a gpath serving Monaco as graph "monaco" (the first) and
// tests/data/osm/traffic.osm as "small". It waits for the
// basemap, clicks two points, checks the route drawn by speed, the itinerary's steps and their
// text against gpath's own answer, selects an alternative (in the panel and on the map), draws an
// isochrone by right-click, applies a speed file and checks the traffic state, and checks the
// layout (the panel beside the map, below it on a narrow screen). Screenshots go to OUTDIR.
// Prints "ok ..." / "FAIL ..." lines and "N passed, N failed, N skipped" last.
'use strict';
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE ||
                             path.join(__dirname, '..', 'web', 'node_modules', 'playwright-core'));
const [base, outdir, token] = process.argv.slice(2);
let pass = 0, fail = 0;
function check(cond, what) {
  if (cond) { pass++; console.log('ok   ' + what); } else { fail++; console.log('FAIL ' + what); }
}
// two points in Monaco (tests/test_map_page.sh serves monaco.osm.pbf): the port and Fontvieille
const FROM = [7.4200, 43.7310], TO = [7.4280, 43.7400];
// a destination south of the start: the route goes through a roundabout (in and out)
const ROUNDABOUTS = [7.421, 43.728];
const flag = (page, k, want) => page.waitForFunction(([k, want]) => want.includes(document.body.dataset[k]),
  [k, want], { timeout: 30000 });
const idle = (page) => page.evaluate(() => new Promise((res) => {
  const m = window.gpath.map;
  if (m.loaded() && !m.isMoving()) setTimeout(res, 50); else m.once('idle', () => res());
}));
// the page's pixel of a lon/lat
const pixel = (page, ll) => page.evaluate((ll) => {
  const m = window.gpath.map, p = m.project(ll), r = m.getContainer().getBoundingClientRect();
  return { x: r.left + p.x, y: r.top + p.y };
}, ll);
const rendered = (page, layers) => page.evaluate((layers) =>
  window.gpath.map.queryRenderedFeatures(layers ? { layers } : undefined).length, layers);

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                          args: ['--no-sandbox', '--enable-unsafe-swiftshader'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // a failed call, but for style.json where the server has no vector tiles (the overview is drawn)
  page.on('response', (r) => {
    if (r.status() >= 400 && !(r.status() === 404 && /\/style\.json$/.test(r.url()))) errors.push(r.status() + ' ' + r.url());
  });

  await page.goto(base + '/');
  await flag(page, 'map', ['ready', 'error']);
  check(await page.evaluate(() => document.body.dataset.map) === 'ready', 'the map is drawn (WebGL, MapLibre GL JS)');
  const basemap = await page.evaluate(() => document.body.dataset.basemap);
  console.log('note: basemap from ' + (basemap === 'tiles' ? 'vector tiles (style.json)' : 'the road overview GeoJSON (no style.json)'));
  await idle(page);
  const roads = await rendered(page, null);
  check(roads > 0, 'the basemap renders features (' + roads + ')');
  const fit = await page.evaluate(() => {
    const b = window.gpath.map.getBounds();
    return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()];
  });
  check(fit[0] < 7.42 && fit[2] > 7.44 && fit[1] < 43.73 && fit[3] > 43.745 && fit[2] - fit[0] < 0.6,
        'the map is fitted to the graph\'s area (' + fit.map((v) => v.toFixed(3)) + ')');
  const graphs = await (await page.request.get(base + '/v1/graphs')).json();
  const opts = await page.$$eval('#graph option', (os) => os.map((o) => o.value));
  check(opts.length === graphs.graphs.filter((g) => g.has_coordinates).length && opts.includes('monaco') && opts.includes('small'),
        'the graph picker lists the served graphs (' + opts + ')');
  const profiles = await page.$$eval('#profile option', (os) => os.map((o) => o.textContent));
  check(profiles.includes('car'), 'the profile picker lists the graphs\' profiles (' + profiles + ')');
  check(await page.isVisible('#hint') && !(await page.isVisible('#result')),
        'before the first route: a hint, no empty itinerary');
  await page.screenshot({ path: path.join(outdir, 'map-start.png') });

  // two clicks route; the second marker is the destination
  let p = await pixel(page, FROM);
  await page.mouse.click(p.x, p.y);
  await page.waitForTimeout(200);
  p = await pixel(page, TO);
  await page.mouse.click(p.x, p.y);
  await flag(page, 'route', ['ready', 'error']);
  check(await page.evaluate(() => document.body.dataset.route) === 'ready', 'two clicks give a route');
  const asked = requests.filter((u) => u.startsWith(base + '/route/v1/'));
  check(asked.length === 1 && /alternatives=true/.test(asked[0]) && /steps=true/.test(asked[0]) &&
        /annotations=true/.test(asked[0]) && /overview=full/.test(asked[0]),
        'the page asks /route/v1 with alternatives, steps, annotations, overview=full');
  const answer = await page.evaluate(() => window.gpath.answer);
  const r0 = answer.routes[0];
  await idle(page);
  const lines = await rendered(page, ['route-line']);
  check(lines > 0, 'the route is drawn (' + lines + ' rendered pieces)');
  const kmh = await page.evaluate(() => [...new Set(window.gpath.drawn
    .map((f) => f.properties.kmh))]);
  check(kmh.length >= 2, 'the route is coloured by speed from the annotations (' + kmh.sort((a, b) => a - b) + ' km/h)');
  const steps = await page.$$eval('#steps li', (ls) => ls.map((l) => ({
    text: l.querySelector('.text').textContent, svg: !!l.querySelector('svg'), cls: l.querySelector('svg').getAttribute('class') })));
  const nsteps = r0.legs.reduce((s, l) => s + l.steps.length, 0);
  check(steps.length === nsteps && nsteps >= 3, 'the itinerary lists one row per step (' + steps.length + ' of ' + nsteps + ')');
  check(steps.every((s) => s.text.length > 5 && s.svg), 'every step has an instruction and an icon');
  check(/^Head /.test(steps[0].text) && /destination/i.test(steps[steps.length - 1].text),
        'osrm-text-instructions\' words: "' + steps[0].text + '" ... "' + steps[steps.length - 1].text + '"');
  const named = r0.legs[0].steps.filter((s) => s.name).map((s) => s.name);
  check(named.some((n) => steps.some((s) => s.text.includes(n))), 'the steps name the roads (' + named.slice(0, 3) + ')');
  check(steps.filter((s) => s.cls === 'turn').length >= 3, 'turn icons for the turns');
  const summary = await page.textContent('#summary');
  const km = (r0.distance / 1000).toFixed(1);
  check(summary.includes(km + ' km') && summary.includes('min'), 'the total distance and time: "' + summary.trim() + '"');
  const layout = await page.evaluate(() => {
    const a = document.getElementById('panel').getBoundingClientRect(), m = document.getElementById('map').getBoundingClientRect();
    return { panelRight: a.right, mapLeft: m.left, mapWidth: m.width };
  });
  check(layout.panelRight <= layout.mapLeft + 1 && layout.mapWidth > 600, 'the panel is beside the map, not over it');
  await page.screenshot({ path: path.join(outdir, 'map-route.png') });

  // alternatives: listed, drawn, selectable in the panel and on the map
  const nalt = answer.routes.length;
  check(nalt >= 2, 'gpath offers ' + nalt + ' routes for these points');
  const chips = await page.$$eval('#alts li', (ls) => ls.length);
  check(chips === nalt, 'the panel lists every route (' + chips + ')');
  check(await rendered(page, ['alt-line']) > 0, 'the alternative is drawn under the route');
  await page.click('#alts li[data-i="1"]');
  check(await page.evaluate(() => window.gpath.selected) === 1 &&
        (await page.textContent('#summary')).includes((answer.routes[1].distance / 1000).toFixed(1) + ' km'),
        'selecting alternative 1 in the panel shows its distance');
  await idle(page);
  // back to the first by clicking its line, where it is away from the other's
  const spot = await page.evaluate(() => {
    const g = window.gpath, other = g.routes[1].geometry.coordinates, m = g.map;
    let best = null, bestd = -1;
    g.routes[0].geometry.coordinates.forEach((c) => {
      const p = m.project(c);
      const d = Math.min(...other.map((o) => { const q = m.project(o); return Math.hypot(p.x - q.x, p.y - q.y); }));
      if (d > bestd) { bestd = d; best = p; }
    });
    const r = m.getContainer().getBoundingClientRect();
    return { x: r.left + best.x, y: r.top + best.y, d: bestd };
  });
  await page.mouse.click(spot.x, spot.y);
  await page.waitForTimeout(200);
  check(await page.evaluate(() => window.gpath.selected) === 0 && await page.evaluate(() => document.body.dataset.route) === 'ready',
        'clicking the grey line on the map selects it (' + spot.d.toFixed(0) + ' px from the other route)');

  // drag the destination marker: a route through two roundabouts (zoomed out to see both places)
  await page.evaluate(([a, b, c]) => window.gpath.map.fitBounds([[Math.min(a[0], b[0], c[0]), Math.min(a[1], b[1], c[1])],
    [Math.max(a[0], b[0], c[0]), Math.max(a[1], b[1], c[1])]], { padding: 120, animate: false }), [FROM, TO, ROUNDABOUTS]);
  await idle(page);
  p = await pixel(page, TO);
  const q = await pixel(page, ROUNDABOUTS);
  await page.evaluate(() => { document.body.dataset.route = ''; });
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(p.x + (q.x - p.x) * i / 10, p.y + (q.y - p.y) * i / 10);
  await page.mouse.up();
  await flag(page, 'route', ['ready', 'error']);
  const moved = await page.evaluate(() => window.gpath.answer.waypoints[1].location);
  check(Math.abs(moved[0] - ROUNDABOUTS[0]) < 0.002 && Math.abs(moved[1] - ROUNDABOUTS[1]) < 0.002,
        'dragging the destination marker routes to where it is dropped (' + moved + ')');
  const rsteps = await page.evaluate(() => window.gpath.answer.routes[0].legs[0].steps
    .filter((s) => /roundabout|rotary/.test(s.maneuver.type)).map((s) => s.maneuver.type));
  const ricons = await page.$$eval('#steps li svg.roundabout', (s) => s.length);
  check(rsteps.length >= 2 && ricons === rsteps.length, 'a roundabout icon for each roundabout step (' + rsteps + ')');
  const rtext = await page.$$eval('#steps li .text', (s) => s.map((x) => x.textContent).filter((t) => /roundabout/i.test(t)));
  check(rtext.length >= 1 && /exit/i.test(rtext.join(' ')), 'the roundabout steps say which exit: "' + rtext[0] + '"');
  await idle(page);
  await page.screenshot({ path: path.join(outdir, 'map-roundabout.png') });

  // isochrone by right-click near the start (not on its marker)
  p = await pixel(page, FROM);
  await page.mouse.click(p.x + 30, p.y + 30, { button: 'right' });
  await flag(page, 'isochrone', ['ready', 'error']);
  check(await page.evaluate(() => document.body.dataset.isochrone) === 'ready', 'right-click asks an isochrone');
  await idle(page);
  const iso = await rendered(page, ['iso-fill']);
  check(iso > 0, 'the isochrone is drawn (' + iso + ' rendered pieces)');
  const legend = await page.$$eval('#isolegend span', (s) => s.map((x) => x.textContent));
  check(legend.length === 3, 'the isochrone legend lists the 3 limits (' + legend + ')');

  // traffic: data_version of the answer, then a speed file on two segments of the route
  let traffic = await page.textContent('#traffic');
  check(traffic.includes(answer.data_version) && /No traffic/.test(traffic), 'the traffic state: "' + traffic.trim() + '"');
  if (token) {
    const nodes = r0.legs[0].annotation.nodes;
    const body = nodes[2] + ',' + nodes[3] + ',5\n' + nodes[3] + ',' + nodes[4] + ',5\n';
    const res = await page.request.post(base + '/v1/graphs/monaco/speeds?ttl_s=600',
      { headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'text/csv' }, data: body });
    check(res.status() === 200, 'POST a speed file of 2 segments of the route: ' + res.status());
    const before = answer.data_version;
    p = await pixel(page, TO);
    await page.evaluate(() => { document.body.dataset.route = ''; });
    await page.mouse.click(p.x, p.y); // the destination again: routes anew
    await flag(page, 'route', ['ready', 'error']);
    await page.waitForFunction(() => /Traffic in force/.test(document.getElementById('traffic').textContent), null, { timeout: 10000 })
      .catch(() => {});
    const now = await page.evaluate(() => window.gpath.answer.data_version);
    traffic = await page.textContent('#traffic');
    check(now !== before && traffic.includes(now), 'a new data_version after the speed file: ' + now);
    check(/speeds 2 entries/.test(traffic), 'the traffic state lists the file: "' + traffic.trim() + '"');
    // the page's route now either avoids the slowed segment or is drawn slower there
    const after = await page.evaluate(() => ({ a: window.gpath.answer.routes[0].legs[0].annotation,
                                              kmh: window.gpath.drawn.map((f) => f.properties.kmh) }));
    const a0 = r0.legs[0].annotation;
    const at = after.a.nodes.findIndex((n, i) => n === nodes[2] && after.a.nodes[i + 1] === nodes[3]);
    const v0 = a0.distance[2] / a0.duration[2] * 3.6, v1 = at >= 0 ? after.a.distance[at] / after.a.duration[at] * 3.6 : 0;
    check(at < 0 ? after.a.nodes.join() !== a0.nodes.join() : v1 < v0 && after.kmh.includes(Math.round(v1 / 5) * 5),
          'the route shown takes the file into account (' + (at < 0 ? 'it goes around the segment'
            : 'the segment drawn at ' + v1.toFixed(0) + ' km/h, ' + v0.toFixed(0) + ' before') + ')');
    // the slowed segments on the map: what traffic.geojson answers, drawn by slowdown
    await page.waitForFunction(() => Number(document.body.dataset.trafficSegments || 0) > 0, null, { timeout: 10000 })
      .catch(() => {});
    const tj = await (await page.request.get(base + '/v1/graphs/monaco/traffic.geojson')).json();
    const seg = await page.evaluate(() => ({ n: Number(document.body.dataset.trafficSegments || 0),
                                             v: document.body.dataset.trafficVersion,
                                             layer: !!window.gpath.map.getLayer('traffic-line') }));
    check(tj.features.length >= 1 && tj.features.every((f) => f.properties.ratio < 0.5 && f.properties.speed_kmh < f.properties.profile_kmh),
          'traffic.geojson lists the slowed arcs (' + tj.features.length + ', ' +
          tj.features.map((f) => f.properties.speed_kmh + '/' + f.properties.profile_kmh + ' km/h').join(', ') + ')');
    check(seg.layer && seg.n === tj.features.length && seg.v === now && tj.data_version === now,
          'the page draws them in the traffic-line layer (' + seg.n + ' segments, data_version ' + seg.v + ')');
    check(traffic.includes('changed') || (await page.textContent('#traffic')).includes('road segment'),
          'the traffic panel says how many segments changed and their colours: "' + (await page.textContent('#traffic')).trim() + '"');
    await idle(page);
    const drawnSlow = await page.evaluate(() => window.gpath.map.queryRenderedFeatures({ layers: ['traffic-line'] }).length);
    check(drawnSlow > 0, 'the slowed segments are rendered on the map (' + drawnSlow + ' rendered features)');
    await page.screenshot({ path: path.join(outdir, 'map-traffic.png') });
    // close up on the slowed segments (a segment of some tens of metres is a few pixels above)
    await page.evaluate((fc) => {
      const c = fc.features.flatMap((f) => f.geometry.coordinates);
      const xs = c.map((p) => p[0]), ys = c.map((p) => p[1]);
      window.gpath.map.fitBounds([[Math.min(...xs), Math.min(...ys)], [Math.max(...xs), Math.max(...ys)]],
                                 { padding: 120, maxZoom: 18, animate: false });
    }, tj);
    await idle(page);
    await page.screenshot({ path: path.join(outdir, 'map-traffic-zoom.png') });
    // and without the route over it: the slowed segments alone
    await page.evaluate(() => ['route-casing', 'route-line', 'route-traffic', 'alt-casing', 'alt-line']
      .forEach((l) => window.gpath.map.setLayoutProperty(l, 'visibility', 'none')));
    await idle(page);
    await page.screenshot({ path: path.join(outdir, 'map-traffic-alone.png') });
    await page.evaluate(() => ['route-casing', 'route-line', 'route-traffic', 'alt-casing', 'alt-line']
      .forEach((l) => window.gpath.map.setLayoutProperty(l, 'visibility', 'visible')));
  }

  // the LRM page is still there
  const lrm = await page.request.get(base + '/lrm');
  check(lrm.status() === 200 && (await lrm.text()).includes('web/lrm.js'), 'GET /lrm: the Leaflet Routing Machine page');
  check(requests.every((u) => u.startsWith(base) || u.startsWith('blob:')), 'every asset and API call goes to gpath itself (no CDN)');

  // the other graph: the map moves to its area, the route is gone, a route there is drawn
  await page.evaluate(() => { document.body.dataset.map = ''; });
  await page.selectOption('#graph', 'small');
  await flag(page, 'map', ['ready', 'error']);
  await idle(page);
  const b2 = await page.evaluate(() => { const b = window.gpath.map.getBounds(); return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()]; });
  check(b2[0] < 7.0 && b2[2] > 7.015 && b2[1] < 45.0 && b2[3] > 45.003 && b2[2] - b2[0] < 0.1,
        'picking the graph "small" fits the map to its area (' + b2.map((v) => v.toFixed(4)) + ')');
  check(await page.isVisible('#hint') && !(await page.isVisible('#result')) && await page.$$eval('.marker', (m) => m.length) === 0,
        'the previous graph\'s route and markers are gone');
  for (const ll of [[7.0, 45.0], [7.015, 45.0]]) {
    p = await pixel(page, ll);
    await page.mouse.click(p.x, p.y);
    await page.waitForTimeout(200);
  }
  await flag(page, 'route', ['ready', 'error']);
  const small = await page.evaluate(() => window.gpath.answer);
  check(/\/route\/v1\/small\//.test(requests.filter((u) => u.includes('/route/v1/')).pop()) && small.routes[0].duration > 60 &&
        small.routes[0].duration < 70, 'a route on "small" goes to /route/v1/small/ (' + small.routes[0].duration + ' s along Main, 65.3 s in docs/traffic.md)');
  await idle(page);
  check(await rendered(page, ['route-line']) > 0, 'the route is drawn on the new basemap');

  // a narrow screen: the map on top, the panel below it
  await page.setViewportSize({ width: 420, height: 900 });
  await page.waitForTimeout(300);
  const narrow = await page.evaluate(() => {
    const a = document.getElementById('panel').getBoundingClientRect(), m = document.getElementById('map').getBoundingClientRect();
    return { panelTop: a.top, mapBottom: m.bottom, mapHeight: m.height };
  });
  check(narrow.panelTop >= narrow.mapBottom - 1 && narrow.mapHeight > 300, 'on a narrow screen the panel is below the map');
  await page.screenshot({ path: path.join(outdir, 'map-narrow.png'), fullPage: true });
  // "clear route": the hint again, no markers, no line
  await page.click('#clear');
  await idle(page);
  check(await page.isVisible('#hint') && await page.$$eval('.marker', (m) => m.length) === 0 &&
        await rendered(page, ['route-line', 'alt-line']) === 0, '"clear route" removes the route, its markers and the itinerary');
  check(errors.length === 0, 'no page errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  await browser.close();
  console.log('screenshots: ' + outdir);
  console.log(pass + ' passed, ' + fail + ' failed, 0 skipped');
  process.exit(fail ? 1 : 0);
})().catch((e) => { console.log('FAIL ' + e); console.log(pass + ' passed, ' + (fail + 1) + ' failed, 0 skipped'); process.exit(1); });
