#!/usr/bin/python3
"""check_deploy.py - the documented structural check of gpath's deployment files (run by
tests/test_deploy.sh with Debian's /usr/bin/python3 and python3-yaml).

CI has no Docker engine and no Kubernetes cluster, and hadolint/kubeconform are not Debian packages,
so this checks what a reviewer would, file by file and across files:
  Dockerfile      multi-stage: build on nvidia/cuda:<V>-devel-ubuntu24.04, run on the same <V>'s
                  -runtime image, <V> pinned (not latest) and of the CUDA major.minor that nvcc here
                  reports; the build stage RUNs deploy/build.sh with flags build.sh accepts and the
                  runtime stage copies build.sh's --prefix; runtime packages cover the Makefile's
                  pkg-config libraries (and, with --binary, every DT_NEEDED library of the binary);
                  non-root USER; HEALTHCHECK on /health; EXPOSE = the server's port; VOLUMEs for
                  /etc/gpath and the cache; exec-form ENTRYPOINT `gpath serve`; .dockerignore keeps
                  what the build needs and drops build outputs.
  Kubernetes      apiVersion/kind/metadata.name everywhere; the Deployment's selector matches its
                  template; probes (/ready readiness, /health liveness) on a declared port;
                  nvidia.com/gpu: 1; terminationGracePeriodSeconds >= preStop sleep + the ConfigMap's
                  shutdown_grace_s; image tag pinned; every Secret/ConfigMap reference resolves; the
                  pod user is the image's; Service, HPA and PDB point at the Deployment; gpath.conf's
                  keys are the server's (--known-keys); graphs come from PostgreSQL; placeholders are
                  marked CHANGE-ME; kustomization lists every manifest.
  compose.yaml    gpath with an nvidia GPU reservation, PostgreSQL with a pinned pgRouting image,
                  healthchecks, named volumes, gpath waiting for a healthy database.
  gpath.service   the sandboxing, restart and reload settings named in docs/deployment.md.
  docs/deployment.md  the deployment guide, naming every file above; the README links it.
Prints "ok - NAME" or "not ok - NAME: WHY" per check; exits 1 if any failed.

usage: check_deploy.py [--known-keys FILE] [--binary PATH] [--nvcc-version X.Y]
       check_deploy.py --docker-context < paths     (prints the paths .dockerignore keeps)
  --known-keys FILE   output of `gpath serve --print-config` (else config/gpath.conf.example if any)
"""
import argparse
import configparser
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
results = []

# Ubuntu 24.04 runtime package of each pkg-config library named in the Makefile's PKGS.
RUNTIME_PKG = {
    'libmicrohttpd': 'libmicrohttpd12t64', 'libcjson': 'libcjson1', 'inih': 'libinih1',
    'libpq': 'libpq5', 'sqlite3': 'libsqlite3-0', 'zlib': 'zlib1g', 'libxml-2.0': 'libxml2',
}
# DT_NEEDED sonames and the Ubuntu 24.04 package shipping them; None: in every Ubuntu base image.
SONAME_PKG = {
    'libmicrohttpd.so.12': 'libmicrohttpd12t64', 'libcjson.so.1': 'libcjson1',
    'libinih.so.1': 'libinih1', 'libpq.so.5': 'libpq5', 'libsqlite3.so.0': 'libsqlite3-0',
    'libz.so.1': 'zlib1g', 'libxml2.so.2': 'libxml2', 'libmetis.so.5': 'libmetis5',
    'libstdc++.so.6': None,
    'libexpat.so.1': 'libexpat1', 'libbz2.so.1.0': 'libbz2-1.0',  # libosmium (OSM import)
    'libgcc_s.so.1': None, 'libc.so.6': None, 'libm.so.6': None, 'libpthread.so.0': None,
    'libdl.so.2': None, 'librt.so.1': None, 'ld-linux-x86-64.so.2': None,
    # sanitizer builds (make asan) link these; the image never is one
    'libasan.so.8': None, 'libubsan.so.1': None,
}


def check(name, ok, why=''):
    results.append((name, bool(ok), why))
    return bool(ok)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
        return f.read()


# ---------------------------------------------------------------- Dockerfile
def parse_dockerfile(text):
    """[(instruction, args, line)] with continuations joined and comments dropped."""
    out, cur, start = [], '', 0
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not cur and (not s or s.startswith('#')):
            continue
        if cur and s.startswith('#'):
            continue  # comment lines inside a continuation are removed by Docker too
        if not cur:
            start = no
        if s.endswith('\\'):
            cur += s[:-1] + ' '
            continue
        cur += s
        word, _, rest = cur.partition(' ')
        out.append((word.upper(), rest.strip(), start))
        cur = ''
    return out


def exec_form(args):
    try:
        v = json.loads(args)
        return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None
    except ValueError:
        return None


def check_dockerfile(args, known):
    instrs = parse_dockerfile(read('Dockerfile'))
    stages = []
    for ins, a, line in instrs:
        if ins == 'FROM':
            parts = a.split()
            stages.append({'image': parts[0], 'name': parts[2] if len(parts) >= 3 and
                           parts[1].upper() == 'AS' else None, 'line': line, 'ins': []})
        elif stages:
            stages[-1]['ins'].append((ins, a, line))
    check('dockerfile: multi-stage (>= 2 FROM)', len(stages) >= 2, f'{len(stages)} stages')
    if len(stages) < 2:
        return
    names = {s['name'] for s in stages if s['name']}
    for s in stages:
        img = s['image']
        if img in names:
            continue
        tag = img.split('@')[0].rsplit(':', 1)[1] if ':' in img.split('/')[-1] else ''
        check(f'dockerfile: FROM {img} is pinned (a tag, not latest)',
              (tag and tag != 'latest') or '@sha256:' in img, f'line {s["line"]}')
    build, run = stages[0], stages[-1]
    m_b = re.fullmatch(r'nvidia/cuda:(\d+\.\d+\.\d+)-devel-ubuntu24\.04', build['image'])
    m_r = re.fullmatch(r'nvidia/cuda:(\d+\.\d+\.\d+)-runtime-ubuntu24\.04', run['image'])
    check('dockerfile: build stage on nvidia/cuda:<V>-devel-ubuntu24.04', m_b, build['image'])
    check('dockerfile: runtime stage on nvidia/cuda:<V>-runtime-ubuntu24.04', m_r, run['image'])
    if m_b and m_r:
        check('dockerfile: build and runtime CUDA versions match', m_b.group(1) == m_r.group(1),
              f'{m_b.group(1)} vs {m_r.group(1)}')
        if args.nvcc_version:
            check('dockerfile: CUDA major.minor is the toolkit CI compiles with (nvcc)',
                  m_b.group(1).startswith(args.nvcc_version + '.'),
                  f'image {m_b.group(1)}, nvcc {args.nvcc_version}')

    # The build stage runs deploy/build.sh, with flags the script knows.
    build_sh = read('deploy/build.sh')
    runs = [a for i, a, _ in build['ins'] if i == 'RUN' and 'deploy/build.sh' in a]
    check('dockerfile: build stage RUNs deploy/build.sh', runs, 'no RUN deploy/build.sh')
    prefix = None
    for r in runs:
        toks = shlex.split(r)
        for i, t in enumerate(toks):
            if t.startswith('--'):
                check(f'dockerfile: build.sh flag {t} exists in deploy/build.sh',
                      re.search(r'^\s*' + re.escape(t) + r'[)|]', build_sh, re.M), t)
            if t == '--prefix' and i + 1 < len(toks):
                prefix = toks[i + 1]
        check('dockerfile: build stage requires the CUDA backend (--require-cuda)',
              '--require-cuda' in toks, r)
        check('dockerfile: build stage requires the map page and /docs assets (--require-web)',
              '--require-web' in toks, r)
    copies = [a for i, a, _ in run['ins'] if i == 'COPY' and a.startswith('--from=')]
    check('dockerfile: runtime stage copies build.sh\'s --prefix from the build stage',
          prefix and any(a.split()[1].rstrip('/') == prefix.rstrip('/') for a in copies),
          f'prefix {prefix}, copies {copies}')

    # Runtime packages: only runtime libraries, covering every library the binary links.
    apt = ' '.join(a for i, a, _ in run['ins'] if i == 'RUN' and 'apt-get install' in a)
    pkgs = set(re.findall(r'\b(lib[\w.+-]+|zlib1g|curl|ca-certificates)\b', apt))
    check('dockerfile: runtime stage installs no -dev packages',
          not any(p.endswith('-dev') for p in pkgs), sorted(p for p in pkgs if p.endswith('-dev')))
    mk = re.search(r'^PKGS\s*:?=\s*(.+)$', read('Makefile'), re.M)
    for pc in (mk.group(1).split() if mk else []):
        want = RUNTIME_PKG.get(pc)
        check(f'dockerfile: runtime package for Makefile library {pc}', want and want in pkgs,
              f'{pc}: add its Ubuntu 24.04 runtime package to the runtime stage and to '
              f'RUNTIME_PKG in tests/check_deploy.py' if not want else f'{want} not installed')
    if args.binary:
        try:
            dyn = subprocess.run(['readelf', '-d', args.binary], capture_output=True, text=True,
                                 check=True).stdout
            needed = re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', dyn)
            for so in needed:
                known_so = so in SONAME_PKG
                pkg = SONAME_PKG.get(so)
                check(f'dockerfile: runtime image provides {so}',
                      known_so and (pkg is None or pkg in pkgs),
                      f'{so} unknown: add its package to the runtime stage and SONAME_PKG'
                      if not known_so else f'{pkg} not installed')
        except (OSError, subprocess.CalledProcessError) as e:
            check('dockerfile: readelf the binary', False, str(e))
    check('dockerfile: curl installed for the HEALTHCHECK', 'curl' in pkgs, apt)

    def last(ins, stage=run):
        v = [a for i, a, _ in stage['ins'] if i == ins]
        return v[-1] if v else None

    user = last('USER')
    uid = (user or '').split(':')[0]
    check('dockerfile: runtime USER is not root', user and uid not in ('root', '0'), user)
    last_user = max((n for n, (i, _, _) in enumerate(run['ins']) if i == 'USER'), default=-1)
    last_run = max((n for n, (i, _, _) in enumerate(run['ins']) if i == 'RUN'), default=-1)
    check('dockerfile: USER comes after the last RUN', last_user > last_run, '')
    hc = last('HEALTHCHECK') or ''
    check('dockerfile: HEALTHCHECK requests /health', re.search(r'CMD .*?/health\b', hc), hc)
    port = known.get('port', '8080')
    expose = ' '.join(a for i, a, _ in run['ins'] if i == 'EXPOSE').split()
    check(f'dockerfile: EXPOSE {port} (the server\'s default port)',
          port in [e.split('/')[0] for e in expose], expose)
    check(f'dockerfile: HEALTHCHECK uses port {port}', re.search(r'\b' + port + r'\b', hc), hc)
    vols = []
    for i, a, _ in run['ins']:
        if i == 'VOLUME':
            vols += exec_form(a) or a.split()
    check('dockerfile: VOLUME /etc/gpath (config)', '/etc/gpath' in vols, vols)
    env = ' '.join(a for i, a, _ in run['ins'] if i == 'ENV')
    cm = re.search(r'GPATH_CACHE_PATH=(\S+)', env)
    check('dockerfile: GPATH_CACHE_PATH lies on a VOLUME',
          cm and any(cm.group(1).startswith(v.rstrip('/') + '/') for v in vols),
          cm.group(1) if cm else 'GPATH_CACHE_PATH not set')
    ep = exec_form(last('ENTRYPOINT') or '')
    check('dockerfile: ENTRYPOINT is exec form `gpath serve`',
          ep and os.path.basename(ep[0]) == 'gpath' and ep[1:2] == ['serve'], last('ENTRYPOINT'))
    if ep and ep[0].startswith('/') and prefix:
        check('dockerfile: ENTRYPOINT binary is under the installed prefix',
              ep[0] == prefix.rstrip('/') + '/bin/gpath', ep[0])
    cmd = last('CMD')
    check('dockerfile: no CMD arguments by default (built-in graph when nothing is configured)',
          cmd is None or exec_form(cmd) == [], cmd)

    # .dockerignore: drops outputs, keeps what deploy/build.sh needs (test_deploy.sh also builds
    # from exactly the files it keeps).
    pats = dockerignore_patterns()

    def ignored(path):
        return docker_ignored(path, pats)
    for keep in ['Makefile', 'deploy/build.sh', 'deploy/install-deps.sh', 'graph/graph.c',
                 'engine/engine.c', 'cli/main.c', 'storage/pg.h', 'kernels/x.cu',
                 'migrations/postgres/0001.sql', 'config/gpath.conf.example']:
        check(f'.dockerignore keeps {keep}', not ignored(keep), '')
    for drop in ['.git/HEAD', 'build/gpath', 'build-asan/gpath', '.dev-x/lib/a.so',
                 'graph/graph.o', 'gpath-cache.sqlite']:
        check(f'.dockerignore drops {drop}', ignored(drop), '')


def dockerignore_patterns():
    with open(os.path.join(ROOT, '.dockerignore'), encoding='utf-8') as f:
        return [l.strip() for l in f if l.strip() and not l.lstrip().startswith('#')]


def docker_ignored(path, pats):
    """Whether Docker leaves PATH (relative to the context) out of the build context: the last
    matching pattern wins ('!' re-includes); a pattern matching a directory covers its contents;
    '**/' matches any number of leading directories."""
    parts = path.split('/')
    prefixes = ['/'.join(parts[:k]) for k in range(1, len(parts) + 1)]
    hit = False
    for p in pats:
        neg = p.startswith('!')
        p = p.lstrip('!').strip('/')
        globs = [p, p[3:], '*/' + p[3:]] if p.startswith('**/') else [p]
        if any(fnmatch.fnmatchcase(x, g) for x in prefixes for g in globs):
            hit = not neg
    return hit


# ---------------------------------------------------------------- Kubernetes
def ini_keys(text):
    """{section: {key: value}} of an INI text (gpath.conf)."""
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str
    cp.read_string('[__top__]\n' + text)
    return {s: dict(cp[s]) for s in cp.sections()}


def check_kubernetes(args, known, image_uid):
    d = os.path.join(ROOT, 'deploy/kubernetes')
    files = sorted(f for f in os.listdir(d) if f.endswith('.yaml'))
    objs = {}
    for f in files:
        with open(os.path.join(d, f), encoding='utf-8') as fh:
            for doc in yaml.safe_load_all(fh):
                if not doc:
                    continue
                if doc.get('kind') == 'Kustomization':
                    listed = set(doc.get('resources', []))
                    others = set(files) - {f}
                    check('kubernetes: kustomization lists every manifest', listed == others,
                          f'missing {sorted(others - listed)}, extra {sorted(listed - others)}')
                    continue
                ok = all(doc.get(k) for k in ('apiVersion', 'kind')) and \
                    (doc.get('metadata') or {}).get('name')
                check(f'kubernetes: {f}: apiVersion, kind, metadata.name', ok, str(doc)[:80])
                if ok:
                    objs[(doc['kind'], doc['metadata']['name'])] = doc

    def one(kind):
        v = [o for (k, _), o in objs.items() if k == kind]
        check(f'kubernetes: exactly one {kind}', len(v) == 1, f'{len(v)} found')
        return v[0] if len(v) == 1 else None

    dep, svc, hpa, cmap, sec = (one(k) for k in
                                ('Deployment', 'Service', 'HorizontalPodAutoscaler', 'ConfigMap',
                                 'Secret'))
    pdb = next((o for (k, _), o in objs.items() if k == 'PodDisruptionBudget'), None)
    if not dep:
        return
    spec = dep['spec']
    tmpl = spec['template']
    labels = tmpl['metadata'].get('labels', {})
    sel = spec['selector'].get('matchLabels', {})
    check('kubernetes: Deployment selector matches its template labels',
          sel and all(labels.get(k) == v for k, v in sel.items()), f'{sel} vs {labels}')
    pod = tmpl['spec']
    cs = pod['containers']
    c = next((x for x in cs if x['name'] == 'gpath'), cs[0])
    ports = {p.get('name'): p['containerPort'] for p in c.get('ports', [])}
    check('kubernetes: container declares its http port', ports, c.get('ports'))
    conf = {}
    if cmap:
        try:
            conf = ini_keys(cmap['data']['gpath.conf'])
        except (KeyError, configparser.Error) as e:
            check('kubernetes: ConfigMap gpath.conf parses as INI', False, str(e))
    server = dict(conf.get('__top__', {}), **conf.get('server', {}))
    want_port = int(server.get('port', known.get('port', 8080)))
    check(f'kubernetes: containerPort {want_port} is gpath.conf\'s port',
          want_port in ports.values(), ports)
    for sect in conf:
        check(f'kubernetes: gpath.conf section [{sect}] is one gpath knows',
              sect in ('__top__', 'server', 'graphs'), sect)
    if known:
        for k in server:
            check(f'kubernetes: gpath.conf key {k} is one `gpath serve --print-config` lists',
                  k in known, f'unknown key {k}')

    def probe_ok(name, path):
        p = c.get(name) or {}
        g = p.get('httpGet') or {}
        port = g.get('port')
        good_port = port in ports or port in ports.values()
        check(f'kubernetes: {name} GETs {path} on a declared port',
              g.get('path') == path and good_port, g)
    probe_ok('readinessProbe', '/ready')
    probe_ok('livenessProbe', '/health')
    limits = c.get('resources', {}).get('limits', {})
    check('kubernetes: container limits nvidia.com/gpu: 1',
          str(limits.get('nvidia.com/gpu')) == '1', limits)
    img = c['image']
    tag = img.rsplit(':', 1)[1] if ':' in img.split('/')[-1] else ''
    check('kubernetes: image tag pinned (not latest)', tag and tag != 'latest', img)

    pre = (((c.get('lifecycle') or {}).get('preStop') or {}).get('exec') or {}).get('command', [])
    sleep_s = int(pre[1]) if len(pre) == 2 and pre[0] == 'sleep' and pre[1].isdigit() else 0
    check('kubernetes: preStop sleeps while endpoints drop the pod', sleep_s > 0, pre)
    grace = int(server.get('shutdown_grace_s', known.get('shutdown_grace_s', 30)))
    tgps = pod.get('terminationGracePeriodSeconds', 30)
    check('kubernetes: terminationGracePeriodSeconds > preStop sleep + shutdown_grace_s',
          tgps > sleep_s + grace, f'{tgps} vs {sleep_s} + {grace}')

    # The pod's user is the image's, and it cannot become root.
    sc = pod.get('securityContext', {})
    check('kubernetes: pod runs as non-root', sc.get('runAsNonRoot') is True, sc)
    if image_uid:
        check('kubernetes: runAsUser is the image\'s USER', str(sc.get('runAsUser')) == image_uid,
              f'{sc.get("runAsUser")} vs {image_uid}')
    csc = c.get('securityContext', {})
    check('kubernetes: no privilege escalation, read-only root filesystem',
          csc.get('allowPrivilegeEscalation') is False and csc.get('readOnlyRootFilesystem'), csc)

    # Config file, Secret references.
    env = {e['name']: e for e in c.get('env', [])}
    cargs = c.get('args', [])
    conf_path = (cargs[cargs.index('--config') + 1] if '--config' in cargs else
                 env.get('GPATH_CONFIG', {}).get('value'))
    mounts = {m['name']: m['mountPath'] for m in c.get('volumeMounts', [])}
    vols = {v['name']: v for v in pod.get('volumes', [])}
    cm_vol = next((n for n, v in vols.items() if 'configMap' in v), None)
    ok = False
    if cm_vol and conf_path and cmap:
        v = vols[cm_vol]['configMap']
        items = {i['path']: i['key'] for i in v.get('items', [])} or \
            {k: k for k in cmap.get('data', {})}
        rel = os.path.relpath(conf_path, mounts.get(cm_vol, '/nonexistent'))
        ok = v['name'] == cmap['metadata']['name'] and items.get(rel) in cmap.get('data', {})
    check('kubernetes: the server reads gpath.conf from the mounted ConfigMap', ok,
          f'config {conf_path}, mounts {mounts}')
    cache_path = server.get('cache_path', '')
    check('kubernetes: cache_path lies on a writable volume mount',
          any(cache_path.startswith(p.rstrip('/') + '/') for n, p in mounts.items()
              if n != cm_vol), cache_path)
    for name, e in env.items():
        ref = (e.get('valueFrom') or {}).get('secretKeyRef')
        if ref:
            data = dict((sec or {}).get('stringData', {}), **(sec or {}).get('data', {}))
            check(f'kubernetes: env {name} references an existing Secret key',
                  sec and ref['name'] == sec['metadata']['name'] and ref['key'] in data, ref)
    check('kubernetes: admin token from the Secret (GPATH_ADMIN_TOKEN)',
          'secretKeyRef' in (env.get('GPATH_ADMIN_TOKEN', {}).get('valueFrom') or {}), '')
    check('kubernetes: graphs from the Secret (GPATH_GRAPHS)',
          'secretKeyRef' in (env.get('GPATH_GRAPHS', {}).get('valueFrom') or {}), '')
    if sec:
        data = sec.get('stringData', {})
        graphs = data.get('graphs', '')
        pairs = [p.split('=', 1) for p in graphs.split()]
        check('kubernetes: every graph is a PostgreSQL source (replicas agree)',
              pairs and all(len(p) == 2 and p[1].startswith(('postgresql://', 'postgres://'))
                            for p in pairs), graphs)
        for k, v in data.items():
            check(f'kubernetes: Secret value {k} is a marked placeholder (CHANGE-ME)',
                  'CHANGE-ME' in v, v)

    if svc:
        ssel = svc['spec'].get('selector', {})
        check('kubernetes: Service selector matches the pod labels',
              ssel and all(labels.get(k) == v for k, v in ssel.items()), ssel)
        for p in svc['spec'].get('ports', []):
            t = p.get('targetPort')
            check(f'kubernetes: Service port {p.get("name")} targets a container port',
                  t in ports or t in ports.values(), t)
    if hpa:
        ref = hpa['spec']['scaleTargetRef']
        check('kubernetes: HPA scales the Deployment',
              ref.get('kind') == 'Deployment' and ref.get('name') == dep['metadata']['name'] and
              ref.get('apiVersion') == dep['apiVersion'], ref)
        check('kubernetes: HPA autoscaling/v2', hpa['apiVersion'] == 'autoscaling/v2',
              hpa['apiVersion'])
        lo, hi = hpa['spec'].get('minReplicas', 1), hpa['spec'].get('maxReplicas', 0)
        check('kubernetes: HPA keeps >= 2 replicas and can grow', 2 <= lo < hi, f'{lo}..{hi}')
        if 'cpu' in json.dumps(hpa['spec'].get('metrics', [])):
            check('kubernetes: CPU requests set (the HPA needs them)',
                  c.get('resources', {}).get('requests', {}).get('cpu'), '')
    if pdb:
        psel = pdb['spec'].get('selector', {}).get('matchLabels', {})
        check('kubernetes: PodDisruptionBudget selects the pods',
              psel and all(labels.get(k) == v for k, v in psel.items()), psel)


# ---------------------------------------------------------------- compose, systemd, docs
def check_compose():
    doc = yaml.safe_load(read('deploy/compose.yaml'))
    svcs = doc.get('services', {})
    g, pg = svcs.get('gpath'), svcs.get('postgres')
    check('compose: services gpath and postgres', g and pg, list(svcs))
    if not (g and pg):
        return
    devs = (((g.get('deploy') or {}).get('resources') or {}).get('reservations') or {}) \
        .get('devices', [])
    check('compose: gpath reserves an NVIDIA GPU',
          any(d.get('driver') == 'nvidia' and 'gpu' in d.get('capabilities', []) for d in devs),
          devs)
    img = pg.get('image', '')
    check('compose: postgres runs a pinned pgrouting/pgrouting image',
          re.fullmatch(r'pgrouting/pgrouting:[0-9][\w.-]*', img) is not None, img)
    for n, s in (('gpath', g), ('postgres', pg)):
        check(f'compose: {n} has a healthcheck', (s.get('healthcheck') or {}).get('test'), '')
    dep = g.get('depends_on', {})
    check('compose: gpath waits for a healthy postgres',
          isinstance(dep, dict) and dep.get('postgres', {}).get('condition') == 'service_healthy',
          dep)
    named = set(doc.get('volumes', {}) or {})
    for n, s in (('gpath', g), ('postgres', pg)):
        vs = [v.split(':')[0] if isinstance(v, str) else v.get('source') for v in
              s.get('volumes', [])]
        if n == 'postgres':
            check(f'compose: {n} keeps its data on a named volume', any(v in named for v in vs), vs)
        else:  # a cache file serves one process: each replica gets an anonymous volume of its own
            check('compose: gpath keeps its cache on a volume per replica (anonymous, not named)',
                  '/var/cache/gpath' in vs and not any(v in named for v in vs), vs)
        for v in vs:
            if v and v.startswith('.'):
                check(f'compose: bind source {v} exists',
                      os.path.exists(os.path.join(ROOT, 'deploy', v)), v)
    ctx = (g.get('build') or {}).get('context', '.')
    check('compose: gpath builds from the repository\'s Dockerfile',
          os.path.exists(os.path.join(ROOT, 'deploy', ctx, 'Dockerfile')), ctx)
    env = g.get('environment', {})
    graphs = env.get('GPATH_GRAPHS', '') if isinstance(env, dict) else ''
    check('compose: gpath reads its graph from the postgres service',
          '@postgres:' in graphs and graphs.split('=', 1)[1].startswith('postgresql://'), graphs)
    check('compose: stop_grace_period covers the server drain',
          str(g.get('stop_grace_period', '10s')).rstrip('s').isdigit() and
          int(str(g.get('stop_grace_period', '10s')).rstrip('s')) > 30,
          g.get('stop_grace_period'))


def check_systemd(known):
    text = read('deploy/systemd/gpath.service')
    vals = {}
    sect = None
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(('#', ';')):
            continue
        if s.startswith('['):
            sect = s.strip('[]')
            continue
        k, _, v = s.partition('=')
        vals.setdefault((sect, k.strip()), []).append(v.strip())

    def get(k, sect='Service'):
        return vals.get((sect, k), [])
    check('systemd: ExecStart runs `gpath serve`',
          any(re.search(r'/gpath serve\b', v) for v in get('ExecStart')), get('ExecStart'))
    check('systemd: ExecReload goes through the admin endpoint (gpath-reload)',
          any('gpath-reload' in v for v in get('ExecReload')), get('ExecReload'))
    reload_sh = read('deploy/systemd/gpath-reload.sh')
    check('systemd: gpath-reload POSTs /admin/graphs/NAME/reload with the bearer token',
          '/admin/graphs/$g/reload' in reload_sh and 'Authorization: Bearer' in reload_sh, '')
    check('systemd: Restart=on-failure', get('Restart') == ['on-failure'], get('Restart'))
    for k, want in (('NoNewPrivileges', 'yes'), ('ProtectSystem', 'strict'),
                    ('PrivateTmp', 'yes'), ('ProtectHome', 'yes'), ('DevicePolicy', 'closed')):
        check(f'systemd: {k}={want}', get(k) == [want], get(k))
    check('systemd: a non-root user (DynamicUser= or User=)',
          get('DynamicUser') == ['yes'] or (get('User') and get('User') != ['root']), '')
    check('systemd: PrivateDevices off (it would hide /dev/nvidia*)',
          get('PrivateDevices') in ([], ['no']), get('PrivateDevices'))
    check('systemd: DeviceAllow covers the NVIDIA devices',
          any('nvidia' in v for v in get('DeviceAllow')), get('DeviceAllow'))
    check('systemd: the cache in a managed directory (CacheDirectory=/StateDirectory=)',
          get('CacheDirectory') or get('StateDirectory'), '')
    env = dict(e.split('=', 1) for v in get('Environment') for e in shlex.split(v))
    cache = env.get('GPATH_CACHE_PATH', '')
    dirs = ['/var/cache/' + d for d in get('CacheDirectory')] + \
        ['/var/lib/' + d for d in get('StateDirectory')]
    check('systemd: GPATH_CACHE_PATH lies in that directory',
          any(cache.startswith(d + '/') for d in dirs), cache)
    check('systemd: secrets from a root-only EnvironmentFile', get('EnvironmentFile'), '')
    t = ''.join(get('TimeoutStopSec')).rstrip('s')
    grace = int(known.get('shutdown_grace_s', 30))
    check('systemd: TimeoutStopSec exceeds the server drain (shutdown_grace_s)',
          t.isdigit() and int(t) > grace, f'{t} vs {grace}')
    envfile = read('deploy/systemd/gpath.env.example')
    check('systemd: gpath.env.example marks its placeholders CHANGE-ME',
          'GPATH_ADMIN_TOKEN=CHANGE-ME' in envfile, '')


def check_readme():
    body = read('docs/deployment.md')
    check('docs/deployment.md: Deployment section', re.search(r'^#+ Deployment', body, re.M), '')
    for ref in ('Dockerfile', 'deploy/kubernetes', 'deploy/systemd/gpath.service',
                'deploy/compose.yaml', 'gpath_reload', 'tests/test_replicas.sh'):
        check(f'docs/deployment.md names {ref}', ref in body, '')
    check('README links docs/deployment.md', 'docs/deployment.md' in read('README.md'), '')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--known-keys')
    ap.add_argument('--binary')
    ap.add_argument('--nvcc-version')
    ap.add_argument('--docker-context', action='store_true',
                    help='read paths on stdin, print those .dockerignore keeps, and exit')
    args = ap.parse_args()
    if args.docker_context:
        pats = dockerignore_patterns()
        for line in sys.stdin:
            path = line.rstrip('\n')
            if path and not docker_ignored(path, pats):
                print(path)
        return 0
    known = {}
    src = args.known_keys or os.path.join(ROOT, 'config/gpath.conf.example')
    if os.path.exists(src):
        with open(src, encoding='utf-8') as f:
            known = ini_keys(f.read()).get('server', {})
    image_uid = None
    for ins, a, _ in parse_dockerfile(read('Dockerfile')):
        if ins == 'USER':
            image_uid = a.split(':')[0]
    for fn, fargs in ((check_dockerfile, (args, known)),
                      (check_kubernetes, (args, known, image_uid)),
                      (check_compose, ()), (check_systemd, (known,)), (check_readme, ())):
        try:
            fn(*fargs)
        except Exception as e:  # a malformed file: report it as a failed check, keep going
            check(f'{fn.__name__}: parses', False, f'{type(e).__name__}: {e}')
    bad = 0
    for name, ok, why in results:
        print(f'ok - {name}' if ok else f'not ok - {name}: {why}')
        bad += not ok
    print(f'check_deploy: {len(results) - bad} of {len(results)} checks ok')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
