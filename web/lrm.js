/* gpath's Leaflet Routing Machine page (GET /lrm, see lrm.html). Everything it asks goes to the gpath that served it:
 *   GET /v1/graphs                          the graphs, for the selector
 *   GET /v1/graphs/{g}/overview.geojson     the roads, drawn as the base layer (no tiles offline)
 *   GET /route/v1/{g}/...                   through L.Routing.osrmv1 unchanged (serviceUrl = here)
 *   GET /v1/graphs/{g}/isochrone            GeoJSON polygons
 * State for tests: document.body.dataset.{overview, route, isochrone} = "ready" | "error".
 */
(function () {
  'use strict';
  var base = window.location.origin;
  var map = L.map('map', { preferCanvas: false, zoomControl: true }).setView([47.3, 8.5], 13);
  var roads = L.layerGroup().addTo(map);
  map.createPane('iso').style.zIndex = 350; /* under the route line (overlayPane, 400) */
  var iso = L.layerGroup().addTo(map);
  L.control.layers(null, { roads: roads, isochrones: iso }).addTo(map);
  L.control.scale().addTo(map);
  var status = document.getElementById('status');
  var graphSel = document.getElementById('graph');
  var control = null;
  function say(t) { status.textContent = t; }

  function classStyle(f) {
    var c = f.properties && f.properties['class'];
    var w = { motorway: 4, trunk: 3.5, primary: 3, secondary: 2.5, tertiary: 2 }[c] || 1.2;
    return { color: '#8d8d8d', weight: w, opacity: 0.9, className: 'gpath-road' };
  }

  function loadOverview(g) {
    roads.clearLayers();
    document.body.dataset.overview = 'loading';
    return fetch(base + '/v1/graphs/' + encodeURIComponent(g) + '/overview.geojson')
      .then(function (r) { if (!r.ok) throw new Error('overview: HTTP ' + r.status); return r.json(); })
      .then(function (fc) {
        var layer = L.geoJSON(fc, { style: classStyle, interactive: false });
        roads.addLayer(layer);
        var b = fc.bbox;
        map.fitBounds([[b[1], b[0]], [b[3], b[2]]]);
        say(fc.roads + ' roads' + (fc.merged ? ' (merged on a grid for display)' : '') + ' in ' + g);
        document.body.dataset.overview = 'ready';
      })
      .catch(function (e) { say(String(e)); document.body.dataset.overview = 'error'; });
  }

  function makeControl(g) {
    if (control) map.removeControl(control);
    control = L.Routing.control({
      router: L.Routing.osrmv1({ serviceUrl: base + '/route/v1', profile: g }),
      waypoints: [],
      routeWhileDragging: false,
      showAlternatives: true,
      altLineOptions: { styles: [{ color: '#ffffff', opacity: 0.8, weight: 7 },
                                 { color: '#6a7fa8', opacity: 0.9, weight: 3, className: 'gpath-alt' }] },
      fitSelectedRoutes: false,
      lineOptions: { styles: [{ color: '#ffffff', opacity: 0.9, weight: 8 },
                              { color: '#d03030', opacity: 1, weight: 4, className: 'gpath-route' }] }
    }).addTo(map);
    control.on('routingstart', function () { document.body.dataset.route = 'loading'; });
    control.on('routesfound', function (e) {
      var r = e.routes[0];
      say('route: ' + (r.summary.totalDistance / 1000).toFixed(2) + ' km, ' +
          Math.round(r.summary.totalTime) + ' s, ' + r.instructions.length + ' steps');
      window.gpathRoute = { distance: r.summary.totalDistance, duration: r.summary.totalTime,
                            points: r.coordinates.length, steps: r.instructions.length };
      document.body.dataset.route = 'ready';
    });
    control.on('routingerror', function (e) {
      say('routing error: ' + (e.error && (e.error.message || e.error.status)));
      document.body.dataset.route = 'error';
    });
  }

  /* two clicks: start, then destination (later clicks move the destination) */
  map.on('click', function (e) {
    if (!control) return;
    var wps = control.getWaypoints();
    if (!wps[0].latLng) control.spliceWaypoints(0, 1, e.latlng);
    else control.spliceWaypoints(wps.length - 1, 1, e.latlng);
  });

  document.getElementById('iso').onclick = function () {
    var wps = control && control.getWaypoints();
    var p = wps && wps[0].latLng ? wps[0].latLng : map.getCenter();
    var url = base + '/v1/graphs/' + encodeURIComponent(graphSel.value) + '/isochrone?lon=' +
      p.lng.toFixed(6) + '&lat=' + p.lat.toFixed(6) + '&contours=' +
      encodeURIComponent(document.getElementById('contours').value) + '&contours_type=' +
      document.getElementById('ctype').value;
    document.body.dataset.isochrone = 'loading';
    fetch(url).then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.message); return j; }); })
      .then(function (fc) {
        iso.clearLayers();
        var n = fc.features.length;
        iso.addLayer(L.geoJSON(fc, { pane: 'iso', style: function (f) {
          var i = fc.features.indexOf(f), t = n > 1 ? i / (n - 1) : 0;
          return { color: '#2060c0', weight: 1, fillColor: 'hsl(' + Math.round(220 - 180 * t) + ',70%,50%)',
                   fillOpacity: 0.25, className: 'gpath-iso' };
        } }));
        say('isochrone: ' + n + ' contours');
        document.body.dataset.isochrone = 'ready';
      })
      .catch(function (e) { say('isochrone: ' + e.message); document.body.dataset.isochrone = 'error'; });
  };
  document.getElementById('isoclear').onclick = function () { iso.clearLayers(); };

  graphSel.onchange = function () { makeControl(graphSel.value); loadOverview(graphSel.value); };
  fetch(base + '/v1/graphs').then(function (r) { return r.json(); }).then(function (j) {
    var want = new URLSearchParams(window.location.search).get('graph');
    j.graphs.forEach(function (g) {
      var o = document.createElement('option');
      o.value = o.textContent = g.name;
      if (g.name === want) o.selected = true;
      graphSel.appendChild(o);
    });
    graphSel.onchange();
  }).catch(function (e) { say('cannot list graphs: ' + e); });
  window.gpathMap = map;
  window.gpathControl = function () { return control; };
})();
