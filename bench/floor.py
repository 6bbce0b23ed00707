#!/usr/bin/env python3
"""Precision against a traced floor, on a real project's history.

    python3 bench/floor.py SRC BUILD COMMITS BIN OUT [REVIEWED_POLICY] > OUT.log
    python3 bench/floor-summary.py OUT.log

SRC is a git checkout of the project, BUILD a build dir to create (Unix Makefiles, Debug,
with the File API queries), COMMITS a file of commit ids oldest first (e.g.
`git log --first-parent --format=%h -n 21 | tac`), BIN the diff2test to measure.

For each commit: check out, build incrementally, list the catalogue, run every test's
command under `strace -f -e trace=openat,open,execve` (its working directory and
environment from the catalogue) and hash every file of the source and build trees. For
each consecutive pair, a test is *truly affected* when its catalogue entry changed or a
file it opened for reading (its program, the libraries it loaded, its data) differs
between the two commits: the floor. Then diff2test is run on the pair (`--base PREV
--head C`) four ways: default; with the policy `diff2test init` wrote at the first commit,
as written; that policy plus `--base-snapshot` (the snapshot of PREV's build); and the
reviewed policy plus the snapshot. And, with no policy, with the record of PREV's whole
suite run (`ctest -j2` under README's strace command line, `diff2test record`): `record`,
and `record+snapshot` (with PREV's snapshot); each row gives the record's size and the
selection's time beside the default run's. Each mode's selection is checked against the floor
(`missed`: affected tests it left out; there must be none). Needs cmake, ctest, a C/C++
compiler and strace. One JSON line per pair on stdout, the whole list in OUT."""
import hashlib, json, os, re, subprocess, sys
src, build, commits_file, bin_, out = sys.argv[1:6]
reviewed = sys.argv[6] if len(sys.argv) > 6 else None
commits = [l.strip() for l in open(commits_file) if l.strip()]
init_pol = out + '.init.toml'
def sh(*a, **k):
    return subprocess.run(a, capture_output=True, text=True, **k)
def hash_tree(root, skip):
    h = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip and x != '.git']
        for f in files:
            p = os.path.join(d, f)
            try:
                if os.path.islink(p):
                    h[p] = 'link:' + os.readlink(p)
                else:
                    h[p] = hashlib.sha1(open(p, 'rb').read()).hexdigest()
            except OSError:
                pass
    return h
OPEN = re.compile(r'^(?:\d+\s+)?(openat|open|execve|stat|newfstatat|access)\((?:AT_FDCWD, )?"([^"]+)".*\)\s+=\s+(\d+|-1)')
def trace(test):
    cmd = test.get('command')
    if not cmd:
        return None
    props = {p['name']: p['value'] for p in test.get('properties', [])}
    cwd = props.get('WORKING_DIRECTORY', build)
    env = dict(os.environ)
    for e in props.get('ENVIRONMENT', []) or []:
        k, _, v = e.partition('=')
        env[k] = v
    r = subprocess.run(['strace', '-f', '-qq', '-e', 'trace=openat,open,execve', '-o', '/tmp/floor-st.txt'] + cmd,
                       cwd=cwd, env=env, capture_output=True, timeout=300)
    files = set()
    for line in open('/tmp/floor-st.txt', errors='replace'):
        m = OPEN.match(line)
        if not m or m.group(3) == '-1':
            continue
        if m.group(1) != 'execve' and ('O_WRONLY' in line or 'O_CREAT' in line or 'O_DIRECTORY' in line):
            continue
        p = os.path.normpath(os.path.join(cwd, m.group(2)))
        if p.startswith(src + '/') or p.startswith(build + '/'):
            files.add(p)
    return files, r.returncode
STRACE = ['strace', '-f', '-y', '-s', '4096', '-e', 'trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect', '-o']
def record_suite(c):
    """The whole suite under README's strace command line, and its record: (path, seconds of
    the traced run, seconds of the plain run)."""
    import time
    t0 = time.monotonic()
    sh('ctest', '-j2', '--timeout', '300', cwd=build)
    plain = time.monotonic() - t0
    log = out + '.strace'
    t0 = time.monotonic()
    sh(*(STRACE + [log, 'ctest', '-j2', '--timeout', '300']), cwd=build)
    traced = time.monotonic() - t0
    rec = out + '.record-' + c
    r = sh(bin_, 'record', '--source-dir', src, '--build-dir', build, '--strace', log, '--output', rec)
    if r.returncode not in (0, 3):
        print(c, 'record failed', r.stderr[:300], file=sys.stderr)
    os.remove(log)
    return rec, traced, plain
def run_d2t(prev, c, policy, snap=None, record=None):
    import time
    args = [bin_, '--source-dir', src, '--build-dir', build, '--base', prev, '--head', c, '--no-ci']
    if policy:
        args += ['--policy', policy]
    if snap:
        args += ['--base-snapshot', snap]
    if record:
        args += ['--record', record]
    t0 = time.monotonic()
    r = sh(*args)
    run_d2t.seconds = time.monotonic() - t0
    sel = [l for l in r.stdout.splitlines() if l]
    first = r.stderr.splitlines()[0] if r.stderr else ''
    reasons = sorted({l.split(':')[0][7:] for l in r.stderr.splitlines() if l.startswith('reason ')})
    return r.returncode, first, sel, reasons
rows = []
prev = None; F_prev = {}; H_prev = {}; D_prev = {}
for c in commits:
    sh('git', '-C', src, 'checkout', '-q', c)
    if not os.path.isdir(build):
        os.makedirs(build + '/.cmake/api/v1/query')
        for q in ['codemodel-v2', 'cmakeFiles-v1', 'toolchains-v1']:
            open(build + '/.cmake/api/v1/query/' + q, 'w').close()
        sh('cmake', '-S', src, '-B', build, '-DCMAKE_BUILD_TYPE=Debug')
    sh('cmake', build)
    b = sh('cmake', '--build', build, '-j2')
    if b.returncode:
        print(c, 'build failed', file=sys.stderr)
    cj = sh('ctest', '--show-only=json-v1', cwd=build).stdout
    open(build + '/ctest.json', 'w').write(cj)
    tests = json.loads(cj)['tests']
    F = {}; D = {}
    for t in tests:
        D[t['name']] = json.dumps(t, sort_keys=True)
        tr = trace(t)
        F[t['name']] = tr[0] if tr else set()
    H = hash_tree(src, {build}); H.update(hash_tree(build, set()))
    rec, traced, plain = record_suite(c)
    if prev is None:
        sh(bin_, 'init', '--source-dir', src, '--build-dir', build, '--output', init_pol, '--force')
    else:
        affected = set(); why = {}
        for n in F:
            if n not in D_prev or D_prev[n] != D[n]:
                affected.add(n); why[n] = 'definition'; continue
            for f in sorted(F[n] | F_prev.get(n, set())):
                if H_prev.get(f) != H.get(f):
                    affected.add(n); why[n] = f; break
        changed = sh('git', '-C', src, 'diff', '--name-only', prev, c).stdout.split()
        row = {'commit': c, 'tests': len(tests), 'floor': len(affected), 'changed': changed,
               'why': sorted(set(why.values()))[:6]}
        row['record_bytes'] = os.path.getsize(rec_prev)
        row['suite_seconds'] = {'plain': round(plain_prev, 2), 'traced': round(traced_prev, 2)}
        for mode, pol, snap, record in [('default', None, None, None), ('init', init_pol, None, None),
                                ('init+snapshot', init_pol, out + '.snap-init-' + prev, None),
                                ('reviewed', reviewed, out + '.snap-reviewed-' + prev, None),
                                ('record', None, None, rec_prev),
                                ('record+snapshot', None, out + '.snap-none-' + prev, rec_prev)]:
            if mode == 'reviewed' and not reviewed:
                continue
            code, first, sel, reasons = run_d2t(prev, c, pol, snap, record)
            missed = sorted(affected - set(sel)) if code in (0, 3) else []
            row[mode] = {'exit': code, 'state': first, 'selected': len(sel), 'reasons': reasons,
                         'missed': missed, 'seconds': round(run_d2t.seconds, 3)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    for name, pol in [('init', init_pol), ('reviewed', reviewed)]:
        if pol:
            sh(bin_, 'snapshot', '--source-dir', src, '--build-dir', build, '--policy', pol,
               '--output', out + '.snap-' + name + '-' + c)
    sh(bin_, 'snapshot', '--source-dir', src, '--build-dir', build, '--output', out + '.snap-none-' + c)
    prev, F_prev, H_prev, D_prev = c, F, H, D
    rec_prev, traced_prev, plain_prev = rec, traced, plain
json.dump(rows, open(out, 'w'), indent=1)
