#!/usr/bin/env python3
"""Summarises .cpuprofile files by package and by function, optionally within a window of marks.json.

  python3 bench/cpuprofile.py DIR/file.cpuprofile [DIR/marks.json WINDOW[,WINDOW...]] [--top N] [--per N]

Prints self time per package (node_modules/<pkg>, node:, ours: src/..., (gc), (program), (idle)) and the
top functions by self and inclusive time, in ms of CPU sampled within the window. A window in marks.json
is [from, to] or a list of such pairs (e.g. every round of one kind). --per N also prints each figure
divided by N (e.g. the messages sent within the window), in µs.
"""
import json, re, sys
from collections import defaultdict

argv = sys.argv[1:]
def option(name, default):
    if name not in argv: return default
    i = argv.index(name); value = argv[i + 1]; del argv[i:i + 2]
    return value
top = int(option('--top', 25))
per = float(option('--per', 0))
args = argv
prof = json.load(open(args[0]))
windows = None
if len(args) >= 3:
    # WINDOW may name several marks, comma-separated: their windows are summed
    allmarks = json.load(open(args[1]))
    windows = []
    for w in args[2].split(','):
        mark = allmarks[w]
        windows.extend(mark if isinstance(mark[0], list) else [mark])

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
print(f"{args[0]}: window {span/1e6:.1f} s, sampled {total/1e3:.0f} ms, busy (not idle) {busy/1e3:.0f} ms = {100*busy/span:.2f} % of a core"
      + (f", {busy/per:.0f} µs busy per unit (/{per:g})" if per else ''))
def show(title, d):
    print(f"-- {title}")
    for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:top]:
        unit = f" {v/per:7.1f} µs/unit" if per else ''
        print(f"  {v/1e3:9.1f} ms{unit} {100*v/max(busy,1):5.1f} %  {k}")
show('self by package', by_pkg)
show('inclusive by package', incl_pkg)
show('self by function', by_fn)
show('inclusive by function', incl)
