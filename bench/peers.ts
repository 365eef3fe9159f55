import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { setup as buildIfStale } from '../test/helpers/build.ts';
import { spawnService } from '../test/helpers/process.ts';
import type { ServiceProcess } from '../test/helpers/process.ts';
import { childPids, processUsage } from '../test/helpers/proc.ts';

// `npm run bench -- peers` (only when named): this service beside the peer product fazer-ai/baileys-api
// (issue 38), both linked to one sandbox process, as a user runs each: ours from dist/ (`npm start`,
// SQLite), the peer under Bun from a checkout that scripts/prepare-peer.ts prepared (PEER_DIR), with its
// own Redis. For each count of linked sessions, fresh processes of both products: link through the QR
// flow, sit idle, warm up, alternate rounds of texts (IN_FLIGHT requests in flight per product, spread
// over the sessions) each counted until the sandbox's phone has decrypted every text, then time a
// phone's message to each product's webhook. CPU and memory are read from /proc for each product's own
// processes: ours with its network process, the peer with its Redis; the sandbox and this process (load
// generator and webhook receiver) are left out.
const settingList = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
export const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0, got ${process.env[name]}`);
  return value;
};
const COUNTS = settingList('PEERS_SESSIONS', '1,10,100').map(Number);
const ROUNDS = setting('PEERS_ROUNDS', 5);
const TEXTS = setting('PEERS_TEXTS', 1000);
const IN_FLIGHT = setting('PEERS_IN_FLIGHT', 8);
const LATENCY_SAMPLES = setting('PEERS_LATENCY_SAMPLES', 200);
const LINK_PARALLEL = setting('PEERS_LINK_PARALLEL', 10);
const SETTLE_SECONDS = setting('PEERS_SETTLE_SECONDS', 10);
const IDLE_SECONDS = setting('PEERS_IDLE_SECONDS', 10);
// Every wait below is bounded by its own timeout and by this deadline; the watchdog ends the run (and
// the processes it started) if something still hangs past it.
const MAX_MINUTES = setting('PEERS_MAX_MINUTES', 45);
// What our service's webhook endpoint subscribes to: the peer cannot choose (it posts every event it
// handles), a user of ours picks what they need; the latency needs message.received.
const OUR_EVENTS = settingList('PEERS_OUR_EVENTS', 'message.received');
// PEERS_OUR_STORE=specOnly: our account stores nothing beyond the spec's routes (the message store off), as the peer.
const OUR_STORE = process.env.PEERS_OUR_STORE;
// A text that has not reached its phone when no other has arrived for this long is counted as lost.
const STALL_MS = 15_000;
// PEERS_LOG_DIR=<dir>: each product's output is written there (<product>-<sessions>.log).
const LOG_DIR = process.env.PEERS_LOG_DIR;
// PEERS_MARKS=<file>: each round's window (monotonic µs, the clock of `--cpu-prof` profiles) by product and
// count, and each product's linking, to slice a profile of the service (SERVICE_NODE_ARGS) with bench/cpuprofile.py.
const MARKS = process.env.PEERS_MARKS;
const marks: Record<string, Array<[number, number]>> = {};
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const WEBHOOK_TOKEN = 'peers-bench-token';
const OUR_KEY = 'peers-bench-key-0123456789';
const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The benchmark using this machinery (`peers`, or `pacing` in bench/pacing.ts): the first word of its messages.
let benchName = 'peers';
let deadline = Number.POSITIVE_INFINITY;
/**
 * Bounds every wait below by `minutes` from now, and arms a watchdog that ends the process (and with it
 * the processes it started) 2 minutes past them if something still hangs; answers the watchdog's stop.
 */
export const armDeadline = (name: string, minutes: number, knob: string): (() => void) => {
  benchName = name;
  deadline = Date.now() + minutes * 60_000;
  const watchdog = setTimeout(
    () => {
      console.error(`${name}: still running after ${minutes + 2} minutes (${knob}); stopping`);
      process.exit(1);
    },
    (minutes + 2) * 60_000,
  );
  watchdog.unref();
  return () => clearTimeout(watchdog);
};
export const waitUntil = async (what: string | (() => string), check: () => boolean | Promise<boolean>, ms: number, every = 50) => {
  const until = Math.min(Date.now() + ms, deadline);
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${benchName}: timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(every);
  }
};
const withTimeout = <T>(what: string, promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolvePromise, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${benchName}: timed out waiting for ${what}`)),
      Math.min(ms, Math.max(0, deadline - Date.now())),
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolvePromise(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};
export const median = (values: number[]) => quantile(values, 0.5);

type Json = Record<string, unknown>;
export const request = async (
  url: string,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> => {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let parsed: Json = {};
  try {
    parsed = text ? (JSON.parse(text) as Json) : {};
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
};
export const expectOk = async (what: string, answer: Promise<{ status: number; body: Json }>) => {
  const { status, body } = await answer;
  if (status < 200 || status > 299) throw new Error(`${benchName}: ${what} answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};

const freePort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
};

// ---- processes ----------------------------------------------------------------------------------

export const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
export const stopChild = async (child: ChildProcess, graceMs = 5_000) => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  started.delete(child);
};

/** Spawns a process, keeps the tail of its output, and resolves once a line matches `ready` (or rejects when it exits first). */
const spawnUntil = async (
  what: string,
  command: string,
  args: string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; ready: RegExp; ms?: number },
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> => {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const match = await withTimeout(
    `${what} to start`,
    new Promise<RegExpExecArray>((resolveMatch, reject) => {
      const check = () => {
        const found = options.ready.exec(out);
        if (found) {
          child.stdout?.off('data', check);
          resolveMatch(found);
        }
      };
      child.stdout?.on('data', check);
      child.once('error', (err) => reject(new Error(`${benchName}: ${what} could not start (${command}): ${err.message}`)));
      child.once('exit', (code) => reject(new Error(`${benchName}: ${what} exited (${code}) before it was ready:\n${out.slice(-3000)}`)));
    }),
    options.ms ?? 60_000,
  );
  return { child, match, output: () => out };
};

export const startSandbox = async () => {
  const { child, output } = await spawnUntil('the sandbox', process.execPath, ['dist/runtime/sandbox/main.js'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      SANDBOX_PORT: '0',
      SANDBOX_CONTROL_PORT: '0',
      SANDBOX_BARTENDER: 'true',
      SANDBOX_BARTENDER_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    ready: /SOCKET_URL=(\S+)/,
  });
  const controlUrl = /Control API: (\S+)/.exec(output())?.[1];
  const socketUrl = /SOCKET_URL=(\S+)/.exec(output())?.[1];
  if (!controlUrl || !socketUrl) throw new Error(`${benchName}: the sandbox printed no URLs:\n${output()}`);
  return { child, controlUrl, socketUrl, output };
};

// ---- /proc ---------------------------------------------------------------------------------------

const TICK_MS = 10;
const descendants = (pid: number): number[] => [pid, ...childPids(pid).flatMap(descendants)];
/** CPU seconds (all threads) and resident memory of these processes and their descendants. */
export const usage = (roots: number[]): { cpu: number; rssMb: number } => {
  let cpu = 0;
  let rssMb = 0;
  for (const pid of roots.flatMap(descendants)) {
    const u = processUsage(pid);
    cpu += u.cpu;
    rssMb += u.rssMb;
  }
  return { cpu, rssMb };
};
const comm = (path: string) => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '?';
  }
};
/** CPU (ms) by "process/thread" name of these processes and their descendants. */
export const threadCpu = (roots: number[]): Map<string, number> => {
  const used = new Map<string, number>();
  for (const pid of roots.flatMap(descendants)) {
    const processName = comm(`/proc/${pid}/comm`);
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const key = `${processName}/${name}`;
        used.set(key, (used.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return used;
};

/** Resolves once these processes used at most `idleShare` of a core plus 10 ms in a 200 ms window (or after `maxMs`). */
export const quiet = async (roots: number[], idleShare: number, maxMs = 5_000) => {
  const until = Date.now() + maxMs;
  let last = usage(roots).cpu;
  for (;;) {
    await sleep(200);
    const now = usage(roots).cpu;
    if ((now - last) * 1000 <= idleShare * 200 + 10 || Date.now() > until) return;
    last = now;
  }
};

// ---- the webhook receiver (both products) --------------------------------------------------------

export interface Receiver {
  url: string;
  /** webhook requests received so far, by product */
  posts: { ours: number; peer: number };
  /** called with each incoming text a product reported and when it arrived */
  onText: (product: ProductName, text: string, at: number) => void;
  /** called with the peer's connection updates: a QR to scan, or `open` */
  onPeerConnection: (number: string, update: { qr?: string; open?: boolean }) => void;
  close: () => Promise<void>;
}

export type ProductName = 'ours' | 'peer';

const peerText = (message: Json): string | undefined => {
  const content = message.message as Json | undefined;
  const text = content?.conversation ?? (content?.extendedTextMessage as Json | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
};

export const startReceiver = async (): Promise<Receiver> => {
  const receiver: Receiver = {
    url: '',
    posts: { ours: 0, peer: 0 },
    onText: () => {},
    onPeerConnection: () => {},
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200, { 'content-length': '0' }).end();
      const path = req.url ?? '/';
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      } catch {
        return;
      }
      if (path === '/ours') {
        receiver.posts.ours += 1;
        const data = body.data as Json | undefined;
        if (body.type === 'message.received' && typeof data?.content === 'string') receiver.onText('ours', data.content, at);
        return;
      }
      const peerNumber = /^\/peer\/(\d+)$/.exec(path)?.[1];
      if (!peerNumber) return;
      receiver.posts.peer += 1;
      const data = body.data as Json | undefined;
      if (body.event === 'connection.update' && data) {
        if (typeof data.qr === 'string') receiver.onPeerConnection(peerNumber, { qr: data.qr });
        if (data.connection === 'open') receiver.onPeerConnection(peerNumber, { open: true });
      } else if (body.event === 'messages.upsert' && data?.type === 'notify') {
        for (const message of (data.messages as Json[] | undefined) ?? []) {
          const key = message.key as Json | undefined;
          const text = peerText(message);
          if (text !== undefined && !key?.fromMe) receiver.onText('peer', text, at);
        }
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return receiver;
};

// ---- load generator ------------------------------------------------------------------------------

export interface SendRequest {
  path: string;
  body: Json;
}
/** The load generator on a thread of its own: `concurrency` requests in flight. */
export const startLoader = async (baseUrl: string, headers: Record<string, string>, concurrency = IN_FLIGHT) => {
  const worker = new Worker(new URL('./peer-load.mjs', import.meta.url), {
    name: 'load',
    workerData: { baseUrl, headers, concurrency },
  });
  await withTimeout('the load generator', once(worker, 'message'), 30_000);
  return {
    /** Posts every request (`concurrency` at a time) and resolves once all are answered with `expect`. */
    run: async (requests: SendRequest[], expect: number) => {
      const answer = await withTimeout(
        `${requests.length} sends to be answered`,
        new Promise<{ failures: string[] }>((resolveAnswer, reject) => {
          worker.once('message', resolveAnswer);
          worker.once('error', reject);
          worker.postMessage({ requests, expect });
        }),
        Math.max(60_000, requests.length * 100),
      );
      if (answer.failures.length > 0)
        throw new Error(`${benchName}: ${answer.failures.length} sends failed (first: ${answer.failures[0]})`);
    },
    close: async () => {
      worker.postMessage('close');
      await withTimeout('the load generator to exit', once(worker, 'exit'), 10_000).catch(() => worker.terminate());
    },
  };
};

// ---- the two products ----------------------------------------------------------------------------

export interface Product {
  name: ProductName;
  /** where its API answers, and the headers every request to it carries (its key) */
  baseUrl: string;
  headers: Record<string, string>;
  /** processes whose CPU and memory are this product's */
  pids: () => number[];
  link: (number: string) => Promise<void>;
  /** the request that sends `text` from the linked `session` to the phone `to` */
  send: (session: string, to: string, text: string) => SendRequest;
  expect: number;
  loader: Awaited<ReturnType<typeof startLoader>>;
  /** what the product printed (the tail of it) */
  output: () => string;
  stop: () => Promise<void>;
}

export const control = (controlUrl: string) => ({
  addPhone: (number: string, name?: string) =>
    expectOk(`adding phone ${number}`, request(`${controlUrl}/phones`, 'POST', { number, name })),
  inbox: async (number: string) =>
    (await request(`${controlUrl}/phones/${number}/inbox`)).body as unknown as Array<{ content?: string; duplicates?: number }>,
  send: (from: string, to: string, text: string) =>
    expectOk(`phone ${from} sending`, request(`${controlUrl}/phones/${from}/send`, 'POST', { to, text })),
  scan: (number: string, scan: { qr?: string; qrCode?: string }) => request(`${controlUrl}/phones/${number}/scan`, 'POST', scan),
});
export type Control = ReturnType<typeof control>;

/**
 * Waits until `sink` holds every text of `prefix` (0..n-1), or until none has arrived for STALL_MS.
 * Answers when the last one arrived (to within the 50 ms poll), the texts that never arrived, and the
 * copies the phone received twice.
 */
export const awaitDelivered = async (
  phone: Control,
  sink: string,
  prefix: string,
  n: number,
): Promise<{ at: number; missing: string[]; duplicates: number }> => {
  let seen = new Set<string>();
  let duplicates = 0;
  let progressAt = performance.now();
  await waitUntil(
    `${n} texts "${prefix}..." at ${sink}`,
    async () => {
      const inbox = await phone.inbox(sink);
      const mine = inbox.filter((e) => typeof e.content === 'string' && e.content.startsWith(prefix));
      const now = new Set(mine.map((e) => e.content as string));
      if (now.size > seen.size) progressAt = performance.now();
      seen = now;
      duplicates = mine.reduce((sum, e) => sum + (e.duplicates ?? 0), 0);
      return seen.size >= n || performance.now() - progressAt > STALL_MS;
    },
    Math.max(120_000, n * 100),
  );
  const missing = Array.from({ length: n }, (_, i) => `${prefix}${i}`).filter((text) => !seen.has(text));
  return { at: progressAt, missing, duplicates };
};

/**
 * Our service from dist/ on SQLite in `dir`, its webhook endpoint posting to `receiver`; `env` over the
 * benchmark's settings below (bench/pacing.ts turns the pacer on), `inFlight` requests at a time.
 */
export const startOurs = async (
  controlUrl: string,
  receiver: Receiver,
  dir: string,
  options: { env?: Record<string, string>; inFlight?: number; webhook?: boolean } = {},
): Promise<Product> => {
  const service: ServiceProcess = await spawnService({
    DATABASE_URL: `file:${join(dir, 'app.db')}`,
    WA_SANDBOX_URL: controlUrl,
    BOOTSTRAP_EMAIL: 'peers@example.com',
    BOOTSTRAP_API_KEY: OUR_KEY,
    // A benchmark sends far more than the defaults allow one account (a user raises them the same way).
    DAILY_QUOTA: '0',
    MAX_SESSIONS_PER_ACCOUNT: '0',
    RATE_LIMIT_REQUESTS: '0',
    // Throughput, as the peer measures it: the peer paces nothing.
    SEND_PACING: 'off',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...options.env,
  });
  started.add(service.child);
  const api = (path: string, method = 'GET', body?: unknown) =>
    request(`${service.baseUrl}${path}`, method, body, { 'x-api-key': OUR_KEY });
  if (options.webhook !== false)
    await expectOk('creating the webhook endpoint', api('/v1/webhooks', 'POST', { url: `${receiver.url}/ours`, events: OUR_EVENTS }));
  if (OUR_STORE) await expectOk('setting the message store', api('/v1/accounts/me/settings', 'PATCH', { messageStore: OUR_STORE }));
  const sessionIds = new Map<string, string>();
  const scan = control(controlUrl).scan;
  return {
    name: 'ours',
    baseUrl: service.baseUrl,
    headers: { 'x-api-key': OUR_KEY },
    pids: () => [service.child.pid as number],
    link: async (number) => {
      const created = await expectOk('creating a session', api('/v1/sessions', 'POST', { name: number }));
      const id = String(created.id);
      await expectOk('connecting a session', api(`/v1/sessions/${id}/connect`, 'POST'));
      let qrCode: unknown;
      await waitUntil(
        `session ${number}'s QR code`,
        async () => {
          qrCode = (await api(`/v1/sessions/${id}/qrcode?waitMs=10000`)).body.qrCode;
          return typeof qrCode === 'string';
        },
        60_000,
        0,
      );
      await expectOk(`phone ${number} scanning`, scan(number, { qrCode: String(qrCode) }));
      await waitUntil(
        `session ${number} to be CONNECTED`,
        async () => (await api(`/v1/sessions/${id}/status?waitFor=CONNECTED&waitMs=10000`)).body.status === 'CONNECTED',
        60_000,
        0,
      );
      sessionIds.set(number, id);
    },
    send: (session, to, text) => ({ path: `/v1/sessions/${sessionIds.get(session)}/send`, body: { to, message: text } }),
    expect: 200,
    loader: await startLoader(service.baseUrl, { 'x-api-key': OUR_KEY }, options.inFlight),
    output: service.output,
    stop: async () => {
      await stopChild(service.child, 10_000);
    },
  };
};

export const peerPaths = (peerDir: string) => ({
  bun: join(peerDir, '.bench-runtime', 'node_modules', '.bin', 'bun'),
  entry: join(peerDir, 'src', 'index.ts'),
});

export const startPeer = async (
  peerDir: string,
  socketUrl: string,
  controlUrl: string,
  receiver: Receiver,
  dir: string,
): Promise<Product> => {
  const { bun, entry } = peerPaths(peerDir);
  const redisPort = await freePort();
  const redis = await spawnUntil(
    'redis-server',
    process.env.REDIS_SERVER ?? 'redis-server',
    // No snapshots: a fork mid-round would charge the peer CPU outside its processes' own counters.
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'notice'],
    { env: process.env, ready: /Ready to accept connections/ },
  );
  const port = await freePort();
  // The peer asks web.whatsapp.com for the current client version at every connect: a proxy on a closed
  // loopback port fails that at once (it then uses Baileys' own), and nothing leaves the machine.
  const closedPort = await freePort();
  const apiKey = `peers-bench-${Date.now()}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    NODE_TLS_REJECT_UNAUTHORIZED: '0',
    HTTPS_PROXY: `http://127.0.0.1:${closedPort}`,
    NO_PROXY: '127.0.0.1,localhost',
    PEER_SOCKET_URL: socketUrl,
  };
  const keys = spawn(bun, ['scripts/manage-api-keys.ts', 'create', 'user', apiKey], {
    cwd: peerDir,
    env: { ...env, LOG_LEVEL: 'warn' },
    stdio: 'pipe',
  });
  let keysOut = '';
  keys.stdout?.on('data', (d: Buffer) => {
    keysOut += d.toString();
  });
  const [code] = (await withTimeout('the peer’s manage-api-keys.ts', once(keys, 'exit'), 30_000)) as [number | null];
  if (code !== 0 || !keysOut.includes(apiKey)) throw new Error(`peers: the peer's manage-api-keys.ts failed (${code}): ${keysOut}`);
  const peer = await spawnUntil('the peer', bun, ['--preload', join(repoRoot, 'bench', 'peer-preload.mjs'), entry], {
    cwd: peerDir,
    env,
    ready: /running on/,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await expectOk('the peer’s GET /status', request(`${baseUrl}/status`));
  const scan = control(controlUrl).scan;
  const opened = new Map<string, () => void>();
  const scanned = new Set<string>();
  receiver.onPeerConnection = (number, update) => {
    if (update.open) opened.get(number)?.();
    if (update.qr && !scanned.has(number)) {
      scanned.add(number);
      void scan(number, { qr: update.qr }).then(({ status }) => {
        // an expired QR: the next one the peer shows is scanned instead
        if (status !== 200) scanned.delete(number);
      });
    }
  };
  return {
    name: 'peer',
    baseUrl,
    headers: { 'x-api-key': apiKey },
    pids: () => [peer.child.pid as number, redis.child.pid as number],
    link: async (number) => {
      const open = new Promise<void>((r) => opened.set(number, r));
      await expectOk(
        `the peer connecting +${number}`,
        request(
          `${baseUrl}/connections/+${number}`,
          'POST',
          { webhookUrl: `${receiver.url}/peer/${number}`, webhookVerifyToken: WEBHOOK_TOKEN },
          { 'x-api-key': apiKey },
        ),
      );
      await withTimeout(`+${number} to open on the peer`, open, 60_000);
      opened.delete(number);
    },
    send: (session, to, text) => ({
      path: `/connections/+${session}/send-message`,
      body: { jid: `${to}@s.whatsapp.net`, messageContent: { text } },
    }),
    expect: 200,
    loader: await startLoader(baseUrl, { 'x-api-key': apiKey }),
    output: peer.output,
    stop: async () => {
      await stopChild(peer.child);
      await stopChild(redis.child);
    },
  };
};

// ---- one count of sessions -----------------------------------------------------------------------

export interface ProductFigures {
  fixedRssMb: number;
  idleRssMb: number;
  perSessionMb: number;
  linkCpuMs: number;
  linkSeconds: number;
  idleCpu: number;
  cpuMs: number[];
  rates: number[];
  threads: Map<string, number>;
  webhooksPerText: number;
  texts: number;
  duplicates: number;
  p50: number;
  p99: number;
  /** texts answered as sent that never reached the phone */
  lost: number;
  /** log lines at pino's error level or above */
  errorLines: number;
  /** ours only: SENT records, and those whose delivery receipt set deliveredAt, once the rounds are over */
  deliveredMarks?: { sent: number; delivered: number };
}

const numbers = (product: ProductName, countIndex: number, role: number, count: number) =>
  Array.from({ length: count }, (_, i) => `15${product === 'ours' ? 1 : 2}${countIndex}${role}${String(i).padStart(7, '0')}`);

const inBatches = async <T>(items: T[], parallel: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(parallel, items.length)) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
};

const benchCount = async (
  count: number,
  countIndex: number,
  sandbox: { controlUrl: string; socketUrl: string },
  peerDir: string,
  receiver: Receiver,
): Promise<Record<ProductName, ProductFigures>> => {
  const phone: Control = control(sandbox.controlUrl);
  const dir = mkdtempSync(join(tmpdir(), 'peers-'));
  const products: Product[] = [];
  const figures = new Map<ProductName, Partial<ProductFigures>>([
    ['ours', { cpuMs: [], rates: [], duplicates: 0, lost: 0 }],
    ['peer', { cpuMs: [], rates: [], duplicates: 0, lost: 0 }],
  ]);
  try {
    products.push(await startOurs(sandbox.controlUrl, receiver, dir));
    products.push(await startPeer(peerDir, sandbox.socketUrl, sandbox.controlUrl, receiver, dir));
    const fig = (p: Product) => figures.get(p.name) as Partial<ProductFigures>;
    const sessions = new Map<ProductName, string[]>();
    const sinks = new Map<ProductName, string[]>();
    const senders = new Map<ProductName, string>();
    for (const p of products) {
      sessions.set(p.name, numbers(p.name, countIndex, 0, count));
      sinks.set(p.name, numbers(p.name, countIndex, 1, Math.max(1, ROUNDS)));
      senders.set(p.name, numbers(p.name, countIndex, 2, 1)[0] as string);
      for (const number of [...(sessions.get(p.name) ?? []), ...(sinks.get(p.name) ?? []), senders.get(p.name) as string]) {
        await phone.addPhone(number);
      }
    }
    await sleep(SETTLE_SECONDS * 1000);
    for (const p of products) fig(p).fixedRssMb = usage(p.pids()).rssMb;

    // Linking, one product after the other so that neither's CPU window holds the other's work.
    for (const p of products) {
      const before = usage(p.pids()).cpu;
      const from = performance.now();
      const fromUs = nowUs();
      await inBatches(sessions.get(p.name) ?? [], LINK_PARALLEL, p.link);
      fig(p).linkSeconds = (performance.now() - from) / 1000;
      await sleep(5_000);
      fig(p).linkCpuMs = ((usage(p.pids()).cpu - before) * 1000) / count;
      if (MARKS) {
        // The links' window, the 5 s after them included (what linking leaves to do), as `<product> link c<count>`.
        marks[`${p.name} link c${count}`] = [[fromUs, nowUs()]];
        writeFileSync(MARKS, JSON.stringify(marks, null, 1));
      }
    }

    // Idle, both at once, once the linking's aftermath has settled.
    await sleep(SETTLE_SECONDS * 1000);
    const idleBefore = products.map((p) => usage(p.pids()).cpu);
    await sleep(IDLE_SECONDS * 1000);
    products.forEach((p, i) => {
      const now = usage(p.pids());
      fig(p).idleCpu = (now.cpu - (idleBefore[i] ?? 0)) / IDLE_SECONDS;
      fig(p).idleRssMb = now.rssMb;
      fig(p).perSessionMb = (now.rssMb - (fig(p).fixedRssMb ?? 0)) / count;
    });

    // A text the product lost is counted against it and the run goes on.
    const delivered = async (p: Product, sink: string, prefix: string, n: number) => {
      const { at, missing, duplicates } = await awaitDelivered(phone, sink, prefix, n);
      if (missing.length > 0) {
        console.log(
          `  ${p.name}: ${missing.length} of ${n} texts never reached ${sink} (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''})`,
        );
        fig(p).lost = (fig(p).lost ?? 0) + missing.length;
      }
      fig(p).duplicates = (fig(p).duplicates ?? 0) + duplicates;
      return at;
    };
    const sendAll = async (p: Product, texts: Array<{ session: string; sink: string; text: string }>) => {
      await p.loader.run(
        texts.map((t) => p.send(t.session, t.sink, t.text)),
        p.expect,
      );
    };

    // Warm-up: every session writes to every sink once (Signal sessions made outside the rounds), then
    // one round's worth of texts, each verified too.
    for (const p of products) {
      const own = sessions.get(p.name) ?? [];
      const sinkList = sinks.get(p.name) ?? [];
      const first = sinkList.flatMap((sink, k) => own.map((session, i) => ({ session, sink, text: `${p.name} c${count} warm${k} ${i}` })));
      await sendAll(p, first);
      for (const [k, sink] of sinkList.entries()) await delivered(p, sink, `${p.name} c${count} warm${k} `, own.length);
      const prefix = `${p.name} c${count} warm `;
      const sink = sinkList[0] as string;
      await sendAll(
        p,
        Array.from({ length: TEXTS }, (_, i) => ({ session: own[i % own.length] as string, sink, text: `${prefix}${i}` })),
      );
      await delivered(p, sink, prefix, TEXTS);
    }
    for (const p of products) await quiet(p.pids(), fig(p).idleCpu ?? 0);

    // Rounds, alternating which product goes first.
    const threadRounds = new Map<ProductName, Array<Map<string, number>>>(products.map((p) => [p.name, []]));
    let webhookPosts = { ours: 0, peer: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? products : [...products].reverse();
      for (const p of order) {
        const own = sessions.get(p.name) ?? [];
        const sink = (sinks.get(p.name) ?? [])[r] as string;
        const prefix = `${p.name} c${count} r${r} `;
        const texts = Array.from({ length: TEXTS }, (_, i) => ({ session: own[i % own.length] as string, sink, text: `${prefix}${i}` }));
        const requests = texts.map((t) => p.send(t.session, t.sink, t.text));
        const postsBefore = receiver.posts[p.name];
        const threadsBefore = threadCpu(p.pids());
        const cpuBefore = usage(p.pids()).cpu;
        const from = performance.now();
        const fromUs = nowUs();
        await p.loader.run(requests, p.expect);
        const done = await delivered(p, sink, prefix, TEXTS);
        await quiet(p.pids(), fig(p).idleCpu ?? 0);
        const cpu = usage(p.pids()).cpu - cpuBefore;
        const threadsAfter = threadCpu(p.pids());
        threadRounds
          .get(p.name)
          ?.push(new Map([...threadsAfter].map(([name, ms]) => [name, (ms - (threadsBefore.get(name) ?? 0)) / TEXTS])));
        webhookPosts = { ...webhookPosts, [p.name]: webhookPosts[p.name] + receiver.posts[p.name] - postsBefore };
        if (MARKS) {
          const key = `${p.name} c${count}`;
          marks[key] = [...(marks[key] ?? []), [fromUs, nowUs()]];
          writeFileSync(MARKS, JSON.stringify(marks, null, 1));
        }
        fig(p).cpuMs?.push((cpu * 1000) / TEXTS);
        fig(p).rates?.push(TEXTS / ((done - from) / 1000));
      }
    }
    for (const p of products) {
      const rounds = threadRounds.get(p.name) ?? [];
      const names = new Set(rounds.flatMap((m) => [...m.keys()]));
      fig(p).threads = new Map([...names].map((name) => [name, median(rounds.map((m) => m.get(name) ?? 0))]));
      fig(p).webhooksPerText = webhookPosts[p.name] / Math.max(1, ROUNDS * TEXTS);
      fig(p).texts = (ROUNDS + 1) * TEXTS + count * Math.max(1, ROUNDS);
    }

    // Issue 38 saw a bare socket on Node emit "delivered" for a fraction of the receipts that arrived:
    // every text the phones decrypted got a delivery receipt, so every SENT record should carry deliveredAt.
    {
      const db = new DatabaseSync(join(dir, 'app.db'), { readOnly: true });
      const row = db
        .prepare(`SELECT count(*) AS sent, count("deliveredAt") AS delivered FROM "OutgoingMessage" WHERE status = 'SENT'`)
        .get() as {
        sent: number;
        delivered: number;
      };
      db.close();
      const ours = figures.get('ours');
      if (ours) ours.deliveredMarks = { sent: Number(row.sent), delivered: Number(row.delivered) };
    }

    // A phone's message to each product's webhook, alternating; one unrecorded message to every session first.
    const waiting = new Map<string, (at: number) => void>();
    receiver.onText = (_product, text, at) => waiting.get(text)?.(at);
    const latencies = new Map<ProductName, number[]>(products.map((p) => [p.name, []]));
    const oneMessage = async (p: Product, to: string, text: string) => {
      const arrived = new Promise<number>((r) => waiting.set(text, r));
      const from = performance.now();
      await phone.send(senders.get(p.name) as string, to, text);
      const at = await withTimeout(`"${text}" at ${p.name}'s webhook`, arrived, 30_000);
      waiting.delete(text);
      return at - from;
    };
    for (const p of products)
      for (const [i, to] of (sessions.get(p.name) ?? []).entries()) await oneMessage(p, to, `${p.name} c${count} hello ${i}`);
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      for (const p of products) {
        const own = sessions.get(p.name) ?? [];
        latencies.get(p.name)?.push(await oneMessage(p, own[i % own.length] as string, `${p.name} c${count} ping ${i}`));
        await sleep(5);
      }
    }
    for (const p of products) {
      fig(p).p50 = quantile(latencies.get(p.name) ?? [], 0.5);
      fig(p).p99 = quantile(latencies.get(p.name) ?? [], 0.99);
    }
  } finally {
    for (const p of products) {
      await p.loader.close().catch(() => {});
      await p.stop().catch(() => {});
      const output = p.output();
      const f = figures.get(p.name);
      // Baileys logs the 515 restart that ends every QR link as an error: left out.
      if (f) f.errorLines = output.split('\n').filter((line) => /"level":(5|6)0\b/.test(line) && !line.includes('"code":"515"')).length;
      if (LOG_DIR) writeFileSync(join(LOG_DIR, `${p.name}-${count}.log`), output);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return { ours: figures.get('ours') as ProductFigures, peer: figures.get('peer') as ProductFigures };
};

// ---- the whole run -------------------------------------------------------------------------------

export interface PeersResult {
  versions: { node: string; ours: string; peerBaileys: string; bun: string; peerOrigin: string };
  counts: Array<{ count: number; ours: ProductFigures; peer: ProductFigures }>;
  minutes: number;
  /** the machine's 1-minute load average when the run started and when it ended */
  load: [number, number];
}

const versionOf = (packageJson: string) => {
  try {
    return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
};

export const benchPeers = async (): Promise<PeersResult> => {
  const peerDir = process.env.PEER_DIR ? resolve(process.env.PEER_DIR) : '';
  if (!peerDir) {
    throw new Error(
      'peers: PEER_DIR is not set. Prepare a checkout of fazer-ai/baileys-api outside this repository with ' +
        '`npx tsx scripts/prepare-peer.ts <dir> --from <checkout or bare git dir>` (docs/benchmarks-peers.md), then run ' +
        '`PEER_DIR=<dir> npm run bench -- peers`.',
    );
  }
  const { bun, entry } = peerPaths(peerDir);
  for (const [path, what] of [
    [entry, 'src/index.ts (the peer’s entry point)'],
    [bun, 'Bun in .bench-runtime'],
    [
      join(peerDir, 'node_modules', '@whiskeysockets', 'baileys', 'package.json'),
      'node_modules/@whiskeysockets/baileys (its dependencies)',
    ],
  ] as const) {
    if (!existsSync(path)) throw new Error(`peers: PEER_DIR=${peerDir} has no ${what} (${path}): prepare it with scripts/prepare-peer.ts`);
  }
  let prepared: { origin?: string; bun?: string } = {};
  try {
    prepared = JSON.parse(readFileSync(join(peerDir, '.bench-runtime', 'prepared.json'), 'utf8')) as typeof prepared;
  } catch {
    // prepared by hand: versions read below
  }
  const startedAt = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const stopWatchdog = armDeadline('peers', MAX_MINUTES, 'PEERS_MAX_MINUTES');
  buildIfStale();
  const sandbox = await startSandbox();
  const receiver = await startReceiver();
  try {
    const counts: PeersResult['counts'] = [];
    for (const [i, count] of COUNTS.entries()) {
      const result = await benchCount(count, i, sandbox, peerDir, receiver);
      counts.push({ count, ...result });
      console.log(`  (${count} session(s) done after ${((performance.now() - startedAt) / 60_000).toFixed(1)} min)`);
    }
    return {
      versions: {
        node: process.version,
        ours: versionOf(join(repoRoot, 'node_modules', 'baileys', 'package.json')),
        peerBaileys: versionOf(join(peerDir, 'node_modules', '@whiskeysockets', 'baileys', 'package.json')),
        bun: prepared.bun ?? 'unknown',
        peerOrigin: prepared.origin ?? peerDir,
      },
      counts,
      minutes: (performance.now() - startedAt) / 60_000,
      load: [loadAtStart, loadavg()[0] ?? 0],
    };
  } finally {
    stopWatchdog();
    await receiver.close();
    await stopChild(sandbox.child);
    if (LOG_DIR) writeFileSync(join(LOG_DIR, 'sandbox.log'), sandbox.output());
  }
};

export const printPeersBench = (r: PeersResult): void => {
  const v = r.versions;
  console.log(
    `peers: this service (Node ${v.node}, baileys ${v.ours}, SQLite) beside fazer-ai/baileys-api (Bun ${v.bun}, baileys ${v.peerBaileys}, Redis; ${v.peerOrigin}); ` +
      `one sandbox process; per count fresh processes of both; ${ROUNDS} alternating rounds of ${TEXTS} texts, ${IN_FLIGHT} in flight per product; ${r.minutes.toFixed(1)} min; load average ${r.load[0].toFixed(2)} at the start, ${r.load[1].toFixed(2)} at the end (2 cores, shared)`,
  );
  console.log(
    '| sessions | product | CPU per sent text (median of rounds) | texts/s (median) | RSS idle, all sessions | RSS per linked idle session | CPU per link | idle CPU | phone → webhook p50 / p99 | webhooks per text | texts lost |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const { count, ours, peer } of r.counts) {
    for (const [label, f] of [
      ['this service', ours],
      ['fazer-ai/baileys-api', peer],
    ] as const) {
      console.log(
        `| ${count} | ${label} | ${median(f.cpuMs).toFixed(2)} ms | ${median(f.rates).toFixed(0)} | ${f.idleRssMb.toFixed(0)} MB | ` +
          `${f.perSessionMb.toFixed(2)} MB | ${f.linkCpuMs.toFixed(0)} ms | ${(100 * f.idleCpu).toFixed(2)} % of a core | ` +
          `${f.p50.toFixed(1)} / ${f.p99.toFixed(1)} ms | ${f.webhooksPerText.toFixed(2)} | ${f.lost} of ${f.texts} |`,
      );
    }
  }
  for (const { count, ours, peer } of r.counts) {
    for (const [label, f] of [
      ['ours', ours],
      ['peer', peer],
    ] as const) {
      const threads = [...f.threads]
        .filter(([, ms]) => ms >= 0.01)
        .sort((a, b) => b[1] - a[1])
        .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
        .join(', ');
      console.log(
        `  ${count} session(s), ${label}: rounds ${f.cpuMs.map((x) => x.toFixed(2)).join(' ')} ms/text, ${f.rates.map((x) => x.toFixed(0)).join(' ')} texts/s; ` +
          `by thread (ms per text, median of rounds; process/thread) ${threads}; fixed RSS before any session ${f.fixedRssMb.toFixed(0)} MB; ` +
          `linked in ${f.linkSeconds.toFixed(1)} s; ${f.texts - f.lost} of ${f.texts} texts reached the phones (${f.duplicates} received twice); ${f.errorLines} log lines at error level` +
          (f.deliveredMarks ? `; deliveredAt set on ${f.deliveredMarks.delivered} of ${f.deliveredMarks.sent} SENT records` : ''),
      );
    }
  }
};
