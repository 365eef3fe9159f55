#!/usr/bin/env python3
"""Sums a sampling heap profile (.heapprofile JSON, e.g. MESSAGES_HEAP_SAMPLE) by package and function.

  python3 bench/heapprofile.py FILE [PER]

Bytes allocated (sampled) by self and inclusive size; PER divides every figure (e.g. the sends sampled).
"""
import json, sys, re
from collections import defaultdict
prof = json.load(open(sys.argv[1]))
per = float(sys.argv[2]) if len(sys.argv) > 2 else 1
selff = defaultdict(int); selfp = defaultdict(int); incl = defaultdict(int)
def pkg(url):
    m = re.search(r'node_modules/((?:@[^/]+/)?[^/]+)', url)
    if m: return m.group(1)
    if url.startswith('node:'): return url
    m = re.search(r'/(src|bench|test)/(.*)', url)
    if m: return 'ours:' + m.group(2)
    return url or '(native)'
def walk(n, stack):
    cf = n['callFrame']
    name = f"{cf['functionName'] or '(anon)'} [{pkg(cf['url'])}:{cf['lineNumber']+1}]"
    selff[name] += n['selfSize']; selfp[pkg(cf['url'])] += n['selfSize']
    total = n['selfSize']
    seen = set(stack)
    for c in n.get('children', []):
        total += walk(c, stack + [name])
    if name not in seen: incl[name] += total
    return total
total = walk(prof['head'], [])
print(f"total sampled {total/1e6:.1f} MB, {total/per/1e3:.1f} KB per unit")
for title, d in (('self by package', selfp), ('self by function', selff), ('inclusive by function', incl)):
    print('--', title)
    for k, v in sorted(d.items(), key=lambda x: -x[1])[:30]:
        print(f"  {v/per/1e3:8.2f} KB/unit {100*v/total:5.1f} %  {k}")
