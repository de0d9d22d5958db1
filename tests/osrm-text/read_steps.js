// read_steps.js - reads OSRM routes (a JSON array on stdin) and prints each step's English
// instruction from osrm-text-instructions (tests/guidance_test.py), one JSON array of strings
// per route; a step it cannot read prints "ERROR: ..." instead (exit status 1).
'use strict';
const oti = require('osrm-text-instructions')('v5');
let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  let bad = 0;
  const out = JSON.parse(input).map((route) => {
    const texts = [];
    route.legs.forEach((leg, legIndex) => {
      leg.steps.forEach((step) => {
        try {
          texts.push(oti.compile('en', step, { legIndex, legCount: route.legs.length }));
        } catch (e) {
          bad++;
          texts.push('ERROR: ' + e.message + ' in ' + JSON.stringify(step.maneuver));
        }
      });
    });
    return texts;
  });
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(bad ? 1 : 0);
});
