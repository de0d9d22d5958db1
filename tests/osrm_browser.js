// osrm_browser.js BASE_URL SCREENSHOT - drives gpath's LRM page (GET /lrm) in real headless Chromium
// (Debian's /usr/bin/chromium through the pinned playwright-core of web/package-lock.json, from
// the npm cache `make web` fills: $PLAYWRIGHT_CORE), run by
// tests/test_osrm_browser.sh. It clicks two points of the drawn road network, lets Leaflet
// Routing Machine's stock OSRM v1 router ask gpath's /route/v1, and checks the drawn route line
// and the itinerary against gpath's own OSRM answer for the same waypoints; then draws an
// isochrone and keeps a screenshot. Prints "ok ..." / "FAIL ..." lines and
// "N passed, N failed, N skipped" last.
'use strict';
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE ||
                             path.join(__dirname, '..', 'web', 'node_modules', 'playwright-core'));
const [base, shot] = process.argv.slice(2);
let pass = 0, fail = 0;
function check(cond, what) {
  if (cond) { pass++; console.log('ok   ' + what); } else { fail++; console.log('FAIL ' + what); }
}
(async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                          args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(base + '/lrm');
  await page.waitForFunction(() => document.body.dataset.overview === 'ready', null, { timeout: 30000 });
  check(requests.every((u) => u.startsWith(base)), 'every asset and API call goes to gpath itself (no CDN)');
  const roads = await page.$$eval('path.gpath-road', (ps) => ps.length);
  check(roads > 0, 'the road network is drawn from overview.geojson (' + roads + ' SVG paths)');
  // two clicks on drawn roads: 30% and 70% across the network's bounding box
  const pts = await page.evaluate(() => {
    const m = window.gpathMap, b = m.getBounds();
    const r = m.getContainer().getBoundingClientRect();
    const at = (fx, fy) => {
      const ll = L.latLng(b.getSouth() + fy * (b.getNorth() - b.getSouth()),
                          b.getWest() + fx * (b.getEast() - b.getWest()));
      const p = m.latLngToContainerPoint(ll);
      return { x: r.left + p.x, y: r.top + p.y };
    };
    return [at(0.35, 0.4), at(0.62, 0.6)];
  });
  await page.mouse.click(pts[0].x, pts[0].y);
  await page.waitForTimeout(300);
  await page.mouse.click(pts[1].x, pts[1].y);
  await page.waitForFunction(() => document.body.dataset.route === 'ready' || document.body.dataset.route === 'error',
                             null, { timeout: 30000 });
  check(await page.evaluate(() => document.body.dataset.route) === 'ready', 'LRM got a route from /route/v1');
  check(requests.some((u) => u.startsWith(base + '/route/v1/')), 'LRM asked gpath at /route/v1/{profile}/...');
  const line = await page.$$eval('path.gpath-route', (ps) => ps.map((p) => (p.getAttribute('d') || '').split(/[LM]/).length - 1));
  check(line.length === 1 && line[0] >= 3, 'the route line is drawn (' + line + ' vertices)');
  // the selected route's itinerary (alternatives, when any, are the minimized tables)
  const itin = await page.$$eval('.leaflet-routing-alt:not(.leaflet-routing-alt-minimized) tr',
                                 (rs) => rs.map((r) => r.textContent.trim()));
  const alts = await page.$$eval('.leaflet-routing-alt', (as) => as.length);
  console.log('note: ' + (alts - 1) + ' alternative route(s) listed');
  check(itin.length >= 2, 'the itinerary table lists ' + itin.length + ' steps');
  check(itin.length && /destination/i.test(itin[itin.length - 1]), 'the last step says the destination is reached: "' + itin[itin.length - 1] + '"');
  // the same request as a plain OSRM client, for the waypoints LRM used
  const mine = await page.evaluate(async () => {
    const ws = window.gpathControl().getWaypoints().map((w) => w.latLng.lng.toFixed(6) + ',' + w.latLng.lat.toFixed(6));
    const g = document.getElementById('graph').value;
    const j = await (await fetch('/route/v1/' + g + '/' + ws.join(';') + '?steps=true&overview=full&alternatives=true')).json();
    return { api: j, lrm: window.gpathRoute };
  });
  const r0 = mine.api.routes && mine.api.routes[0];
  check(r0 && Math.abs(r0.distance - mine.lrm.distance) < 1 && Math.abs(r0.duration - mine.lrm.duration) < 1,
        'LRM shows gpath\'s route: ' + (r0 && r0.distance) + ' m / ' + (r0 && r0.duration) + ' s');
  const nsteps = r0 ? r0.legs.reduce((s, l) => s + l.steps.length, 0) : -1;
  check(nsteps === itin.length, 'one itinerary row per OSRM step (' + nsteps + ')');
  check(alts === mine.api.routes.length, 'LRM lists every route gpath offers (' + mine.api.routes.length + ')');
  // isochrone from the start
  await page.click('#iso');
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.isochrone), null, { timeout: 30000 });
  const iso = await page.$$eval('path.gpath-iso', (ps) => ps.length);
  check(iso >= 1, 'the isochrone layer is drawn (' + iso + ' polygons)');
  check(errors.length === 0, 'no page errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  await page.screenshot({ path: shot });
  console.log('screenshot: ' + shot);
  await browser.close();
  console.log(pass + ' passed, ' + fail + ' failed, 0 skipped');
  process.exit(fail ? 1 : 0);
})().catch((e) => { console.log('FAIL ' + e); console.log(pass + ' passed, ' + (fail + 1) + ' failed, 0 skipped'); process.exit(1); });
