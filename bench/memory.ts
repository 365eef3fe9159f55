import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setup as buildIfStale } from '../test/helpers/build.ts';
import type { Product } from './peers.ts';
import {
  armDeadline,
  awaitDelivered,
  control,
  request,
  setting,
  sleep,
  startOurs,
  startPeer,
  startReceiver,
  startSandbox,
  stopChild,
  usage,
} from './peers.ts';
import { processUsage } from '../test/helpers/proc.ts';

// `npm run bench -- memory` (only when named): issue 48's load on one linked session per product, all
// products at once against one sandbox process, loopback only, for MEMORY_BENCH_MINUTES. Per product:
// SEND_RATE texts a second through its send route to a phone, PHONE_RATE texts a second from another
// phone to the session; ours (from dist/, SQLite, SEND_PACING=off) also reads what arrives with POLLS
// long-polls on /incoming, reads the session's messages through GraphQL every 200 ms and upserts a
// contact every second; the peer (fazer-ai/baileys-api, PEER_DIR) reports what arrives to its webhook,
// its only way. "before" is our service with the settings main had before issue 48 (BEFORE_ENV below),
// "after" with today's defaults. Every 10 s: each product's resident memory from /proc (ours: its
// process; the peer: Bun and its Redis apart) and, for ours, V8's heap by space, external memory and
// array buffers from its /metrics. Then the load stops, every text is checked at its phone or reader,
// and after MEMORY_BENCH_IDLE_SECONDS idle the last figures are read.
const MINUTES = setting('MEMORY_BENCH_MINUTES', 6);
const WARMUP_SECONDS = setting('MEMORY_BENCH_WARMUP_SECONDS', 60);
const SEND_RATE = setting('MEMORY_BENCH_SEND_RATE', 11);
const PHONE_RATE = setting('MEMORY_BENCH_PHONE_RATE', 10);
const POLLS = setting('MEMORY_BENCH_POLLS', 4);
const IDLE_SECONDS = setting('MEMORY_BENCH_IDLE_SECONDS', 30);
const EVERY_SECONDS = 10;
// MEMORY_BENCH_LOG_DIR=<dir>: each product's output and the samples (samples.json) are written there.
const LOG_DIR = process.env.MEMORY_BENCH_LOG_DIR;
if (LOG_DIR) mkdirSync(LOG_DIR, { recursive: true });
const METRICS_TOKEN = 'memory-bench-metrics-token';

/** `peer`, or one of our service's processes: `before`, `after`, or any other name with its own settings (below) */
type Label = string;
/**
 * What main ran with before issue 48 changed the defaults (each entry one of the settings it added or
 * changed), so that one run compares the two builds' behaviour side by side.
 */
export const BEFORE_ENV: Record<string, string> = { V8_SEMI_SPACE_MB: '0' };
const envList = (name: string): Record<string, string> =>
  Object.fromEntries(
    (process.env[name] ?? '')
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
// MEMORY_BENCH_PRODUCTS: which processes, side by side; `peer` is the peer, any other name a process
// of our service with the settings in MEMORY_BENCH_ENV_<name> (space-separated NAME=value, over
// BEFORE_ENV for `before`) and the Node.js options in MEMORY_BENCH_NODE_ARGS_<name> (e.g. `--import
// ./bench/heap-sampler.mjs`), to compare settings in one run.
const LABELS: Label[] = (process.env.MEMORY_BENCH_PRODUCTS ?? 'before,after,peer')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

export interface Sample {
  at: number;
  rssMb: number;
  /** the peer: its Redis apart (in rssMb too) */
  redisMb?: number;
  cpu: number;
  /** ours: V8 heap by space (used / size, MB), external and array buffers (MB) */
  spaces?: Record<string, [number, number]>;
  heapUsedMb?: number;
  heapTotalMb?: number;
  externalMb?: number;
  arrayBuffersMb?: number;
}

export interface MemoryFigures {
  label: Label;
  samples: Sample[];
  afterWarmupMb: number;
  peakMb: number;
  idleMb: number;
  /** CPU ms per message (sent + received) over the load after the warm-up */
  cpuPerMessageMs: number;
  sent: number;
  delivered: number;
  received: number;
  phoneSent: number;
  refused: number;
  duplicates: number;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const MB = 1024 * 1024;

/** Our /metrics as name{labels} → value. */
const scrape = async (baseUrl: string): Promise<Map<string, number>> => {
  // A connection of its own, bounded in time: never queued behind the load's requests.
  const text = await new Promise<string>((resolveText, reject) => {
    const req = get(
      `${baseUrl}/metrics`,
      { agent: false, headers: { authorization: `Bearer ${METRICS_TOKEN}` }, timeout: 30_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolveText(body));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('metrics: no answer in 30 s')));
    req.on('error', reject);
  });
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
};

interface Running {
  label: Label;
  product: Product;
  session: string;
  sink: string;
  sender: string;
  sessionId?: string;
  received: string[];
  samples: Sample[];
  sent: Set<string>;
  phoneSent: Set<string>;
  refused: number;
  outCount: number;
  inCount: number;
  /** requests answered beside the sends, by kind: long-polls, GraphQL reads, contact writes */
  polls: number;
  queries: number;
  contacts: number;
}

const sampleOf = async (r: Running, started: number): Promise<Sample> => {
  const pids = r.product.pids();
  const { cpu, rssMb } = usage(pids);
  const sample: Sample = { at: Math.round((performance.now() - started) / 1000), rssMb: round(rssMb), cpu };
  if (r.label === 'peer') {
    sample.redisMb = round(processUsage(pids[1] as number).rssMb);
    return sample;
  }
  // A service too busy to answer within the bound gives its resident memory alone for this sample.
  const m = await scrape(r.product.baseUrl).catch(() => undefined);
  if (!m) return sample;
  const spaces: Record<string, [number, number]> = {};
  for (const [key, value] of m) {
    const space = /^wa_nodejs_heap_space_size_(used|total)_bytes\{space="([^"]+)"\}$/.exec(key);
    if (!space) continue;
    const name = space[2] as string;
    const entry = spaces[name] ?? [0, 0];
    entry[space[1] === 'used' ? 0 : 1] = round(value / MB);
    spaces[name] = entry;
  }
  sample.spaces = spaces;
  sample.heapUsedMb = round((m.get('wa_nodejs_heap_size_used_bytes') ?? 0) / MB);
  sample.heapTotalMb = round((m.get('wa_nodejs_heap_size_total_bytes') ?? 0) / MB);
  sample.externalMb = round((m.get('wa_nodejs_external_memory_bytes') ?? 0) / MB);
  sample.arrayBuffersMb = round((m.get('wa_nodejs_array_buffers_bytes') ?? 0) / MB);
  return sample;
};

const formatSample = (label: Label, s: Sample): string => {
  if (s.spaces === undefined)
    return `  ${s.at} s ${label}: RSS ${s.rssMb} MB${s.redisMb === undefined ? ' (its /metrics did not answer in 30 s)' : ` (Redis ${s.redisMb} MB of it)`}`;
  const spaces = Object.entries(s.spaces)
    .filter(([, [, total]]) => total >= 0.5)
    .map(([name, [used, total]]) => `${name.replace(/_space$/, '')} ${used}/${total}`)
    .join(', ');
  return `  ${s.at} s ${label}: RSS ${s.rssMb} MB; heap ${s.heapUsedMb}/${s.heapTotalMb} MB (${spaces}); external ${s.externalMb} MB, array buffers ${s.arrayBuffersMb} MB`;
};

export interface MemoryResult {
  figures: MemoryFigures[];
  minutes: number;
  load: [number, number];
}

export const benchMemory = async (): Promise<MemoryResult> => {
  const peerDir = process.env.PEER_DIR;
  if (LABELS.includes('peer') && !peerDir)
    throw new Error('memory: PEER_DIR is not set (docs/benchmarks-peers.md); MEMORY_BENCH_PRODUCTS=before,after runs without the peer');
  const startedAt = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const stopWatchdog = armDeadline('memory', MINUTES + 10, 'MEMORY_BENCH_MINUTES');
  buildIfStale();
  const sandbox = await startSandbox();
  const receiver = await startReceiver();
  const phone = control(sandbox.controlUrl);
  const dirs: string[] = [];
  const running: Running[] = [];
  try {
    for (const [i, label] of LABELS.entries()) {
      const dir = mkdtempSync(join(tmpdir(), `memory-${label}-`));
      dirs.push(dir);
      const product =
        label === 'peer'
          ? await startPeer(peerDir as string, sandbox.socketUrl, sandbox.controlUrl, receiver, dir)
          : await startOurs(sandbox.controlUrl, receiver, dir, {
              webhook: false,
              env: {
                METRICS_TOKEN,
                ...(label === 'before' ? BEFORE_ENV : {}),
                ...envList(`MEMORY_BENCH_ENV_${label}`),
                ...(process.env[`MEMORY_BENCH_NODE_ARGS_${label}`]
                  ? { SERVICE_NODE_ARGS: process.env[`MEMORY_BENCH_NODE_ARGS_${label}`] as string }
                  : {}),
              },
            });
      const [session, sink, sender] = [0, 1, 2].map((role) => `1559${i}${role}0000001`) as [string, string, string];
      for (const number of [session, sink, sender]) await phone.addPhone(number);
      await product.link(session);
      const r: Running = {
        label,
        product,
        session,
        sink,
        sender,
        received: [],
        samples: [],
        sent: new Set(),
        phoneSent: new Set(),
        refused: 0,
        outCount: 0,
        inCount: 0,
        polls: 0,
        queries: 0,
        contacts: 0,
      };
      if (label !== 'peer') {
        r.sessionId = /\/v1\/sessions\/([^/]+)\/send/.exec(product.send(session, sink, '').path)?.[1];
      }
      running.push(r);
    }
    receiver.onText = (name, text) => {
      if (name === 'peer') running.find((r) => r.label === 'peer')?.received.push(text);
    };

    let stopped = false;
    const api = (r: Running, path: string, method = 'GET', body?: unknown) =>
      request(`${r.product.baseUrl}${path}`, method, body, r.product.headers);
    // Ours beside the sends: long-polls, GraphQL reads, contact writes.
    const background = running
      .filter((r) => r.sessionId)
      .flatMap((r) => [
        ...Array.from({ length: POLLS }, async () => {
          while (!stopped) {
            const res = await api(r, `/v1/sessions/${r.sessionId}/incoming?waitMs=1000&limit=200`).catch(() => null);
            if (!res) await sleep(200);
            else r.polls += 1;
            for (const item of (res?.body.items ?? []) as Array<{ content: string; fromMe: boolean }>)
              if (!item.fromMe) r.received.push(item.content);
          }
        }),
        (async () => {
          while (!stopped) {
            await api(r, '/graphql', 'POST', {
              query: 'query($id: ID!) { session(id: $id) { id status messages(first: 20) { edges { cursor } } } }',
              variables: { id: r.sessionId },
            }).then(
              () => {
                r.queries += 1;
              },
              () => undefined,
            );
            await sleep(200);
          }
        })(),
        (async () => {
          for (let n = 0; !stopped; n += 1) {
            await api(r, '/v1/contacts', 'POST', {
              phone: `1558${String(n % 500).padStart(7, '0')}`,
              name: `Contact ${n}`,
              tags: ['memory-bench', `round-${Math.floor(n / 500)}`],
            }).then(
              () => {
                r.contacts += 1;
              },
              () => undefined,
            );
            await sleep(1000);
          }
        })(),
      ]);

    const inFlight = new Set<Promise<unknown>>();
    const track = (p: Promise<unknown>) => {
      inFlight.add(p);
      p.finally(() => inFlight.delete(p)).catch(() => undefined);
    };
    const sendOut = (r: Running) => {
      const text = `${r.label} out ${r.outCount++}`;
      const { path, body } = r.product.send(r.session, r.sink, text);
      track(
        api(r, path, 'POST', body).then(
          ({ status }) => {
            if (status === 200) r.sent.add(text);
            else r.refused += 1;
          },
          () => {
            r.refused += 1;
          },
        ),
      );
    };
    const sendIn = (r: Running) => {
      const text = `${r.label} in ${r.inCount++}`;
      track(
        phone.send(r.sender, r.session, text).then(
          () => r.phoneSent.add(text),
          () => undefined,
        ),
      );
    };

    const started = performance.now();
    const seconds = MINUTES * 60;
    const warm: Map<Label, { cpu: number; messages: number }> = new Map();
    console.log(`memory: ${LABELS.join(', ')} linked; load for ${seconds} s (the first ${WARMUP_SECONDS} s a warm-up)`);
    // Samples on their own clock, so that a slow /metrics answer never holds the sends back.
    let loading = true;
    const sampling = Promise.all(
      running.map(async (r) => {
        for (let next = 0; loading; next += EVERY_SECONDS) {
          await sleep(Math.max(0, started + next * 1000 - performance.now()));
          if (!loading) break;
          const messages = r.outCount + r.inCount;
          // at its scheduled second (the reading itself may take a while on a busy machine)
          const sample = { ...(await sampleOf(r, started)), at: next };
          r.samples.push(sample);
          console.log(formatSample(r.label, sample));
          if (!warm.has(r.label) && next >= WARMUP_SECONDS) warm.set(r.label, { cpu: sample.cpu, messages });
        }
      }),
    );
    for (;;) {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= seconds) break;
      for (const r of running) {
        while (r.outCount < Math.floor(elapsed * SEND_RATE)) sendOut(r);
        while (r.inCount < Math.floor(elapsed * PHONE_RATE)) sendIn(r);
      }
      await sleep(20);
    }
    loading = false;
    await sampling;
    const end = new Map(running.map((r) => [r.label, { cpu: usage(r.product.pids()).cpu, messages: r.outCount + r.inCount }]));
    while (inFlight.size > 0) await Promise.race(inFlight);
    const loadEnd = await Promise.all(running.map((r) => sampleOf(r, started)));
    running.forEach((r, i) => {
      r.samples.push(loadEnd[i] as Sample);
      console.log(formatSample(r.label, loadEnd[i] as Sample));
    });

    // Every text checked where it went.
    const figures: MemoryFigures[] = [];
    const delivered = new Map<Label, { delivered: number; duplicates: number }>();
    for (const r of running) {
      const { missing, duplicates } = await awaitDelivered(phone, r.sink, `${r.label} out `, r.outCount);
      delivered.set(r.label, { delivered: r.outCount - missing.length, duplicates });
    }
    const until = Date.now() + 30_000;
    while (Date.now() < until && running.some((r) => new Set(r.received).size < r.phoneSent.size)) await sleep(500);
    stopped = true;
    await Promise.all(background);
    console.log(`memory: load stopped; ${IDLE_SECONDS} s idle`);
    for (const r of running)
      if (r.sessionId)
        console.log(
          `  ${r.label}: ${r.outCount} sends, ${r.inCount} phone messages, ${r.polls} long-polls answered, ${r.queries} GraphQL reads, ${r.contacts} contact writes`,
        );
    await sleep(IDLE_SECONDS * 1000);
    for (const r of running) {
      const idle = await sampleOf(r, started);
      r.samples.push(idle);
      console.log(formatSample(r.label, idle));
      const w = warm.get(r.label) ?? { cpu: 0, messages: 0 };
      const e = end.get(r.label) ?? { cpu: 0, messages: 0 };
      const underLoad = r.samples.filter((s) => s.at >= WARMUP_SECONDS && s !== idle);
      const afterWarmup = underLoad[0]?.rssMb ?? Number.NaN;
      const d = delivered.get(r.label) ?? { delivered: 0, duplicates: 0 };
      const received = new Set(r.received);
      figures.push({
        label: r.label,
        samples: r.samples,
        afterWarmupMb: afterWarmup,
        peakMb: Math.max(...underLoad.map((s) => s.rssMb)),
        idleMb: idle.rssMb,
        cpuPerMessageMs: ((e.cpu - w.cpu) * 1000) / Math.max(1, e.messages - w.messages),
        sent: r.sent.size,
        delivered: d.delivered,
        received: [...r.phoneSent].filter((t) => received.has(t)).length,
        phoneSent: r.phoneSent.size,
        refused: r.refused,
        duplicates: d.duplicates + (r.received.length - received.size),
      });
    }
    if (LOG_DIR) writeFileSync(join(LOG_DIR, 'samples.json'), JSON.stringify(figures, null, 1));
    return { figures, minutes: (performance.now() - startedAt) / 60_000, load: [loadAtStart, loadavg()[0] ?? 0] };
  } finally {
    stopWatchdog();
    for (const r of running) {
      await r.product.stop().catch(() => {});
      if (LOG_DIR) writeFileSync(join(LOG_DIR, `${r.label}.log`), r.product.output());
    }
    await receiver.close();
    await stopChild(sandbox.child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
};

export const printMemoryBench = (r: MemoryResult): void => {
  console.log(
    `memory: one linked session per product, ${SEND_RATE} sends/s and ${PHONE_RATE} phone messages/s each, ours with ${POLLS} long-polls, GraphQL every 200 ms and a contact upsert a second; ` +
      `${MINUTES} min of load (warm-up ${WARMUP_SECONDS} s), all at once against one sandbox; ${r.minutes.toFixed(1)} min; load average ${r.load[0].toFixed(2)} at the start, ${r.load[1].toFixed(2)} at the end`,
  );
  console.log(
    '| product | RSS after warm-up | peak under load | peak / after warm-up | after idle | CPU per message | out: sent / delivered / refused | in: sent / received | duplicates |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const f of r.figures) {
    console.log(
      `| ${f.label} | ${f.afterWarmupMb.toFixed(0)} MB | ${f.peakMb.toFixed(0)} MB | ${(f.peakMb / f.afterWarmupMb).toFixed(2)} | ${f.idleMb.toFixed(0)} MB | ` +
        `${f.cpuPerMessageMs.toFixed(2)} ms | ${f.sent} / ${f.delivered} / ${f.refused} | ${f.phoneSent} / ${f.received} | ${f.duplicates} |`,
    );
  }
};
