#!/usr/bin/env python3
"""Compare a synthetic build (examples/synth.rs) with what real cmake/g++/ctest wrote
for the same source tree. Used by bench/validate-shape.sh.

    compare_shape.py SYNTH_BUILD REAL_BUILD [--fileapi-only]

--fileapi-only compares only the File API reply (for a tree that was configured but
not built: no depfiles, and ctest lists no commands before the build).

A Ninja build (deps.txt names BUILD/.ninja_deps) has its deps log compared instead of
depfiles: both logs must be laid out exactly as ninja 1.11's DepsLog writes them (each
is re-encoded from its decoded records with ninja's rule and must give its own bytes),
and must hold the same outputs with the same inputs in the same order. Only the record
order (ninja's is the build's completion order) and the mtimes may differ.

Both builds were configured from the same source directory. Paths under REAL_BUILD are
rewritten to SYNTH_BUILD before comparing. Opaque hashes (target ids' directory hash,
reply file names) are compared only for consistency, not for value. Prints every
difference and exits 1 if there is one.
"""
import glob
import json
import os
import re
import struct
import sys

synth, real = (os.path.abspath(p) for p in sys.argv[1:3])
fileapi_only = "--fileapi-only" in sys.argv[3:]
problems = []


def note(msg):
    problems.append(msg)
    if len(problems) <= 200:
        print("DIFF " + msg)


def load_text(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def fix(text):
    return text.replace(real, synth)


ID = re.compile(r"::@[0-9a-f]{20}")


def norm(v):
    """Drop opaque hashes: ids keep their name, jsonFile names are blanked."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "jsonFile":
                out[k] = "<file>"
            else:
                out[k] = norm(x)
        return out
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        return ID.sub("::@<hash>", v)
    return v


def diff(a, b, where):
    if type(a) is not type(b):
        note(f"{where}: type {type(a).__name__} vs {type(b).__name__}: {a!r:.120} vs {b!r:.120}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                note(f"{where}.{k}: only in real: {json.dumps(b[k])[:160]}")
            elif k not in b:
                note(f"{where}.{k}: only in synth: {json.dumps(a[k])[:160]}")
            else:
                diff(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            note(f"{where}: length {len(a)} (synth) vs {len(b)} (real)")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]")
    elif a != b:
        note(f"{where}: {a!r:.160} (synth) vs {b!r:.160} (real)")


def check_depfiles():
    """Depfiles: byte for byte."""
    s_list = load_text(synth, "deps.txt").split()
    r_list = fix(load_text(real, "deps.txt")).split()
    if s_list != r_list:
        note(f"deps.txt: {len(s_list)} (synth) vs {len(r_list)} (real) entries; "
             f"only synth {sorted(set(s_list) - set(r_list))[:3]}, only real {sorted(set(r_list) - set(s_list))[:3]}")
    same = 0
    logs = [d for d in set(s_list) & set(r_list) if d.endswith("/.ninja_deps")]
    for d in logs:
        check_deps_log(d, d.replace(synth, real))
    for d in sorted(set(s_list) & set(r_list) - set(logs)):
        a = open(d, encoding="utf-8").read()
        b = fix(open(d.replace(synth, real), encoding="utf-8").read())
        if a == b:
            same += 1
            continue
        ta = a.replace("\\\n", " ").split()
        tb = b.replace("\\\n", " ").split()
        if ta == tb:
            note(f"{d}: same prerequisites, different wrapping")
        else:
            i = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
            note(f"{d}: {len(ta)} vs {len(tb)} tokens, first difference at {i}: {ta[i:i+2]} vs {tb[i:i+2]}")
    print(f"depfiles: {same} of {len(s_list) - len(logs)} byte-identical")


def decode_deps_log(path):
    """(paths, [(out_id, mtime, [input ids])]) of a version-4 .ninja_deps."""
    b = open(path, "rb").read()
    if b[:12] != b"# ninjadeps\n" or struct.unpack("<i", b[12:16])[0] != 4:
        raise ValueError(f"{path}: not a version-4 ninja deps log")
    o, paths, recs = 16, [], []
    while o < len(b):
        head, = struct.unpack("<I", b[o:o + 4])
        n = head & 0x7FFFFFFF
        p = b[o + 4:o + 4 + n]
        o += 4 + n
        if head & 0x80000000:
            out, lo, hi = struct.unpack("<iII", p[:12])
            recs.append((out, hi << 32 | lo, list(struct.unpack(f"<{(n - 12) // 4}i", p[12:]))))
        else:
            if struct.unpack("<I", p[-4:])[0] != (~len(paths)) & 0xFFFFFFFF:
                raise ValueError(f"{path}: bad checksum at path record {len(paths)}")
            paths.append(p[:-4].rstrip(b"\0").decode())
    return paths, recs


def encode_deps_log(records):
    """ninja 1.11's DepsLog::RecordDeps from an empty log: path records for the
    output then each input that has no id yet, then the deps record (skipped when
    the output's live record has the same mtime and inputs)."""
    out = bytearray(b"# ninjadeps\n" + struct.pack("<i", 4))
    ids, live = {}, {}

    def rid(path):
        nonlocal changed
        if path in ids:
            return ids[path]
        i = len(ids)
        raw = path.encode()
        pad = (4 - len(raw) % 4) % 4
        out.extend(struct.pack("<I", len(raw) + pad + 4) + raw + b"\0" * pad + struct.pack("<I", ~i & 0xFFFFFFFF))
        ids[path] = i
        changed = True
        return i

    for o, mtime, ins in records:
        changed = False
        oid = rid(o)
        iids = [rid(p) for p in ins]
        if not changed and live.get(oid) == (mtime, iids):
            continue
        out.extend(struct.pack("<IiII", (4 * (3 + len(iids))) | 0x80000000, oid, mtime & 0xFFFFFFFF, mtime >> 32))
        out.extend(struct.pack(f"<{len(iids)}i", *iids))
        live[oid] = (mtime, iids)
    return bytes(out)


def check_deps_log(s_log, r_log):
    """The two .ninja_deps: ninja's layout, then the same records."""
    logs = {}
    for label, path, fixer in (("synth", s_log, lambda x: x), ("real", r_log, fix)):
        paths, recs = decode_deps_log(path)
        named = [(paths[o], m, [paths[i] for i in ins]) for o, m, ins in recs]
        if encode_deps_log(named) != open(path, "rb").read():
            note(f"{label} .ninja_deps: not laid out as ninja 1.11 writes it")
        live = {}
        for o, m, ins in named:
            live[fixer(o)] = [fixer(i) for i in ins]
        logs[label] = (live, len(recs), len(paths))
    (s_live, s_n, s_p), (r_live, r_n, r_p) = logs["synth"], logs["real"]
    if set(s_live) != set(r_live):
        note(f".ninja_deps outputs: only synth {sorted(set(s_live) - set(r_live))[:3]}, "
             f"only real {sorted(set(r_live) - set(s_live))[:3]}")
    same = 0
    for o in sorted(set(s_live) & set(r_live)):
        a, b = s_live[o], r_live[o]
        if a == b:
            same += 1
        else:
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            note(f".ninja_deps record {o}: {len(a)} vs {len(b)} inputs, first difference at {i}: {a[i:i+2]} vs {b[i:i+2]}")
    print(f".ninja_deps: both laid out as ninja writes them; {same} of {len(s_live)} records with identical inputs "
          f"(synth {s_n} records / {s_p} paths, real {r_n} / {r_p})")


def check_ctest():
    """ctest.json (exact text, else structure) and every CTestTestfile.cmake."""
    a = load_text(synth, "ctest.json")
    b = fix(load_text(real, "ctest.json"))
    if a == b:
        print("ctest.json: byte-identical")
    else:
        diff(json.loads(a), json.loads(b), "ctest.json")
    for root, _, files in os.walk(synth):
        if "CTestTestfile.cmake" in files:
            rel = os.path.relpath(os.path.join(root, "CTestTestfile.cmake"), synth)
            rp = os.path.join(real, rel)
            if not os.path.exists(rp):
                note(f"{rel}: missing in real build")
            elif load_text(synth, rel) != fix(load_text(real, rel)):
                note(f"{rel}: text differs")


if not fileapi_only:
    check_depfiles()
    check_ctest()

# ---- File API
def reply(root):
    d = os.path.join(root, ".cmake/api/v1/reply")
    idx = sorted(glob.glob(os.path.join(d, "index-*.json")))[-1]
    index = json.loads(fix(open(idx).read()))
    objs = {o["kind"]: json.loads(fix(open(os.path.join(d, o["jsonFile"])).read())) for o in index["objects"]}
    targets = {}
    for t in objs["codemodel"]["configurations"][0]["targets"]:
        text = fix(open(os.path.join(d, t["jsonFile"])).read())
        targets[t["name"]] = (json.loads(text), text)
    return index, objs, targets


s_index, s_objs, s_targets = reply(synth)
r_index, r_objs, r_targets = reply(real)
diff(norm(s_index), norm(r_index), "index")
diff(norm(s_objs["codemodel"]), norm(r_objs["codemodel"]), "codemodel")
diff(norm(s_objs["cmakeFiles"]), norm(r_objs["cmakeFiles"]), "cmakeFiles")
diff(norm(s_objs["toolchains"]), norm(r_objs["toolchains"]), "toolchains")
layout_same = 0
for name in sorted(set(s_targets) | set(r_targets)):
    if name not in s_targets or name not in r_targets:
        note(f"target {name}: only in {'real' if name in r_targets else 'synth'}")
        continue
    (sj, st), (rj, rt) = s_targets[name], r_targets[name]
    diff(norm(sj), norm(rj), f"target[{name}]")
    if ID.sub("", st) == ID.sub("", rt):
        layout_same += 1
print(f"targets: {layout_same} of {len(s_targets)} byte-identical apart from id hashes")
# ids: same directory -> same hash, in both
for label, tg in (("synth", s_targets), ("real", r_targets)):
    by_dir = {}
    for name, (j, _) in tg.items():
        by_dir.setdefault(j["paths"]["build"], set()).add(j["id"].split("::@")[1])
    bad = {d: h for d, h in by_dir.items() if len(h) != 1}
    if bad:
        note(f"{label}: directories with several id hashes: {list(bad)[:3]}")

print(f"{len(problems)} difference(s)")
sys.exit(1 if problems else 0)
