#!/usr/bin/env python3
"""Summarises .cpuprofile files by package and by function, optionally within a window of marks.json.

  python3 bench/cpuprofile.py DIR/file.cpuprofile [DIR/marks.json WINDOW[,WINDOW...]] [--top N]

Prints self time per package (node_modules/<pkg>, node:, ours: src/..., (gc), (program), (idle)) and the
top functions by self and inclusive time, in ms of CPU sampled within the window.
"""
import json, re, sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if not a.startswith('--')]
top = 25
if '--top' in sys.argv:
    top = int(sys.argv[sys.argv.index('--top') + 1]); args = [a for a in args if a != str(top)]
prof = json.load(open(args[0]))
windows = None
if len(args) >= 3:
    # WINDOW may name several marks, comma-separated: their windows are summed
    allmarks = json.load(open(args[1]))
    windows = [allmarks[w] for w in args[2].split(',')]

nodes = {n['id']: n for n in prof['nodes']}
parent = {}
for n in prof['nodes']:
    for c in n.get('children', []):
        parent[c] = n['id']

def package(url):
    if not url: return None
    m = re.search(r'node_modules/((?:@[^/]+/)?[^/]+)', url)
    if m: return m.group(1)
    if url.startswith('node:'): return 'node:' + url[5:].split('/')[0]
    m = re.search(r'/(src|dist|bench|test)/(.*)', url)
    if m: return 'ours:' + m.group(2)
    return url

def label(n):
    cf = n['callFrame']
    name = cf['functionName'] or '(anonymous)'
    url = cf['url']
    pkg = package(url)
    if not url: return name
    return f"{name} [{pkg}:{cf['lineNumber']+1}]"

t = prof['startTime']
selfc = defaultdict(int)
for sid, dt in zip(prof['samples'], prof['timeDeltas']):
    t += dt
    if windows and not any(w[0] <= t <= w[1] for w in windows): continue
    selfc[sid] += dt

total = sum(selfc.values())
span = sum(w[1] - w[0] for w in windows) if windows else (prof['endTime'] - prof['startTime'])
by_pkg = defaultdict(int); by_fn = defaultdict(int); incl = defaultdict(int); incl_pkg = defaultdict(int)
for sid, us in selfc.items():
    n = nodes[sid]
    name = n['callFrame']['functionName']
    pkg = package(n['callFrame']['url']) or name or '(native)'
    by_pkg[pkg] += us
    by_fn[label(n)] += us
    seen = set(); seenp = set(); cur = sid
    while cur is not None:
        l = label(nodes[cur])
        if l not in seen: incl[l] += us; seen.add(l)
        p = package(nodes[cur]['callFrame']['url'])
        if p and p not in seenp: incl_pkg[p] += us; seenp.add(p)
        cur = parent.get(cur)

busy = total - by_pkg.get('(idle)', 0)
print(f"{args[0]}: window {span/1e6:.1f} s, sampled {total/1e3:.0f} ms, busy (not idle) {busy/1e3:.0f} ms = {100*busy/span:.2f} % of a core")
def show(title, d):
    print(f"-- {title}")
    for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {v/1e3:9.1f} ms {100*v/max(busy,1):5.1f} %  {k}")
show('self by package', by_pkg)
show('inclusive by package', incl_pkg)
show('self by function', by_fn)
show('inclusive by function', incl)
