import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
n=len(rows)
fl=sum(r['floor']/r['tests'] for r in rows)/n
print(f"{sys.argv[1]}: {n} pairs, floor mean fraction {fl:.2f}")
for m in ['default','init','init+snapshot','reviewed']:
    if m not in rows[0]: continue
    sub=sum(1 for r in rows if r[m]['exit']==0)
    frac=sum(r[m]['selected']/r[m]['tests'] if False else r[m]['selected']/r['tests'] for r in rows)/n
    missed=sum(len(r[m]['missed']) for r in rows)
    print(f"  {m:14s} subsets {sub}/{n} ({100*sub/n:.0f}%), mean fraction selected {frac:.2f} (floor +{frac-fl:.2f}), missed affected tests {missed}")
