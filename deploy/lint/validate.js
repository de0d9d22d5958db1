#!/usr/bin/env node
// validate.js - schema-aware checks of gpath's deployment files, run by tests/test_deploy.sh with
// the pinned packages of package.json installed beside it (node_modules is not committed):
//   dockerfile FILE      dockerfile-utils' validator (the Dockerfile language server's linter):
//                        syntax, flags, references, JSON forms; every diagnostic fails the check
//   kubernetes FILE...   every document against the Kubernetes OpenAPI schema of its
//                        apiVersion/kind (kubernetes-models: required fields, types, enums)
// compose.yaml is dclint's (the Compose Specification schema plus its rules), run directly.
// Prints one "ok - ..." or "not ok - ..." line per file/document; exits 1 when any check failed.
// Cross-references between objects (selectors, probe paths, Secret keys) are tests/check_deploy.py's.
'use strict';
const fs = require('fs');
const path = require('path');
const YAML = require('yaml');

let failed = 0;
function report(ok, what, detail) {
  if (ok) console.log(`ok - ${what}`);
  else {
    failed++;
    console.log(`not ok - ${what}: ${detail}`);
  }
}

function checkDockerfile(file) {
  const { validate } = require('dockerfile-utils');
  const text = fs.readFileSync(file, 'utf8');
  // Defaults plus the optional checks turned into errors: instruction casing, one CMD/ENTRYPOINT/
  // HEALTHCHECK per stage, JSON in single quotes, relative WORKDIR, empty continuation lines.
  const E = 2;
  const diags = validate(text, {
    deprecatedMaintainer: E, directiveCasing: E, emptyContinuationLine: E, instructionCasing: E,
    instructionCmdMultiple: E, instructionEntrypointMultiple: E, instructionHealthcheckMultiple: E,
    instructionJSONInSingleQuotes: E, instructionWorkdirRelative: E,
  });
  const msgs = diags.map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  report(msgs.length === 0, `dockerfile ${file}`, msgs.join('; '));
}

// kubernetes-models lays its classes out as <group>/<version>/<Kind> (core group: "v1").
function k8sModel(apiVersion, kind) {
  const parts = String(apiVersion).split('/');
  const group = parts.length === 2 ? parts[0] : '';
  const version = parts[parts.length - 1];
  const dir = group === '' ? version : path.join(group, version);
  try {
    return require(`kubernetes-models/${dir}/${kind}`)[kind];
  } catch (e) {
    return null;
  }
}

function checkKubernetes(files) {
  for (const file of files) {
    const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
    docs.forEach((doc, i) => {
      const what = `kubernetes ${file}#${i}`;
      if (doc.errors.length) return report(false, what, doc.errors.map(String).join('; '));
      const obj = doc.toJSON();
      if (obj === null) return; // an empty document after a trailing ---
      if (path.basename(file) === 'kustomization.yaml') {
        // kustomize's own file: not an API object; its resources must exist.
        const missing = (obj.resources || []).filter(
          (r) => !fs.existsSync(path.join(path.dirname(file), r)));
        return report(obj.kind === 'Kustomization' && missing.length === 0, what,
          `kind ${obj.kind}, missing resources: ${missing.join(', ')}`);
      }
      const Model = k8sModel(obj.apiVersion, obj.kind);
      if (!Model) return report(false, what, `unknown apiVersion/kind ${obj.apiVersion}/${obj.kind}`);
      try {
        new Model(obj).validate();
        report(true, `${what} ${obj.kind}/${obj.metadata && obj.metadata.name}`);
      } catch (e) {
        report(false, `${what} ${obj.kind}`, e.message);
      }
    });
  }
}

const [mode, ...files] = process.argv.slice(2);
if (!mode || files.length === 0) {
  console.error('usage: validate.js dockerfile|kubernetes FILE...');
  process.exit(2);
}
if (mode === 'dockerfile') files.forEach(checkDockerfile);
else if (mode === 'kubernetes') checkKubernetes(files);
else {
  console.error(`validate.js: unknown mode ${mode}`);
  process.exit(2);
}
process.exit(failed ? 1 : 0);
