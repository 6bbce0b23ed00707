import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
n=len(rows)
fl=sum(r['floor']/r['tests'] for r in rows)/n
print(f"{sys.argv[1]}: {n} pairs, floor mean fraction {fl:.2f}")
for m in ['default','init','init+snapshot','reviewed','record','record+snapshot']:
    if m not in rows[0]: continue
    sub=sum(1 for r in rows if r[m]['exit']==0)
    frac=sum(r[m]['selected']/r['tests'] for r in rows)/n
    missed=sum(len(r[m]['missed']) for r in rows)
    secs=sum(r[m].get('seconds',0) for r in rows)/n
    print(f"  {m:16s} subsets {sub}/{n} ({100*sub/n:.0f}%), mean fraction selected {frac:.2f} (floor +{frac-fl:.2f}), missed affected tests {missed}, mean selection {secs*1000:.0f} ms")
if 'record_bytes' in rows[0]:
    size=sum(r['record_bytes'] for r in rows)/n
    plain=sum(r['suite_seconds']['plain'] for r in rows)/n
    traced=sum(r['suite_seconds']['traced'] for r in rows)/n
    print(f"  record: mean {size/1024:.0f} KiB; suite run {plain:.2f} s plain, {traced:.2f} s under strace ({traced/plain if plain else 0:.2f}x)")
