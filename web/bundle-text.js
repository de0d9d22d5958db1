// bundle-text.js DIR - writes to stdout osrm-text-instructions (the npm package in DIR, pinned by
// web/package-lock.json) as one browser script for the map page (web/bundle-map.sh): its index.js
// unchanged, with English only in place of ./languages (the 30 other languages would add 1 MB the
// page does not use). The script defines window.osrmTextInstructions, the package's export: call
// it with 'v5' and .compile('en', step, options) gives a step's instruction as OSRM's clients say it.
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node web/bundle-text.js NODE_MODULES/osrm-text-instructions');
  process.exit(2);
}
const read = (f) => fs.readFileSync(path.join(dir, f), 'utf8');
const json = (f) => JSON.stringify(JSON.parse(read(f)));
const version = JSON.parse(read('package.json')).version;
process.stdout.write(`/* osrm-text-instructions ${version} (BSD-2-Clause, Project OSRM contributors), English only:
 * made a browser script by gpath's web/bundle-text.js. */
(function () {
  var languages = {
    supportedCodes: ['en'],
    instructions: { en: ${json('languages/translations/en.json')} },
    grammars: {},
    abbreviations: { en: ${json('languages/abbreviations/en.json')} }
  };
  var module = { exports: {} };
  (function (module, exports, require) {
${read('index.js')}
  })(module, module.exports, function (name) {
    if (name === './languages') return languages;
    throw new Error('osrm-text bundle: no module ' + name);
  });
  window.osrmTextInstructions = module.exports;
})();
`);
