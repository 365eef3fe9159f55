import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnService } from '../test/helpers/process.ts';
import { startSandboxProcess } from '../test/helpers/sandbox-process.ts';
import { treeUsage } from '../test/helpers/proc.ts';
import type { ServiceProcess } from '../test/helpers/process.ts';
import type { FloorReport, FloorRequest } from './bare-sockets.ts';

// `npm run bench -- scale`: N sessions linked by pairing code to a sandbox in its own process, as a user
// runs them, each figure printed beside its floor measured in the same run: the same N bare Baileys
// sockets (credentials in memory, one process) against the same sandbox. SCALE_SESSIONS sets N.
const N = Number(process.env.SCALE_SESSIONS ?? 2000);
const PARALLEL = Number(process.env.SCALE_PARALLEL ?? 10);
const IDLE_SECONDS = Number(process.env.SCALE_IDLE_SECONDS ?? 30);
const SETTLE_MS = 10_000;
// Long enough for the service's memory reclaim (a check every 10 s, once its threads are quiet) to have
// given back what a busy period left, as it does for a user whose sessions sit idle.
const QUIET_MS = 30_000;
const KEY = 'scale-bench-key-0123456789';
// SCALE_CPU_PROF=<dir>: the service (its main thread and its network process, which inherits NODE_OPTIONS)
// and the floor process write .cpuprofile files there, and
// marks.json the monotonic windows (µs, the profiles' clock) of linking and idling, to slice them by phase
// (bench/cpuprofile.py). The service and the floor are then stopped by SIGTERM (a clean exit) instead of
// the SIGKILL before the re-link, so their profiles are written; the profiled re-link is marked too.
const PROFILE_DIR = process.env.SCALE_CPU_PROF;
const profileArgs = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
const marks: Record<string, [number, number]> = {};
const now = () => Number(process.hrtime.bigint() / 1000n);
const mark = (name: string, from: number) => {
  marks[name] = [from, now()];
  if (PROFILE_DIR) writeFileSync(join(PROFILE_DIR, 'marks.json'), JSON.stringify(marks, null, 1));
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * CPU seconds (all threads) and resident memory of a process and its children, from /proc: the service
 * with its network process (the floor process has none).
 */
const usage = (pid: number): { cpu: number; rssMb: number } => treeUsage(pid).total;

const idleCpu = async (pid: number): Promise<number> => {
  const before = usage(pid).cpu;
  await sleep(IDLE_SECONDS * 1000);
  return (usage(pid).cpu - before) / IDLE_SECONDS;
};

const json = async (
  url: string,
  method = 'GET',
  body?: unknown,
  key?: string,
): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
};

const inBatches = async <T>(items: T[], work: (item: T) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
};

const numbers = (prefix: string, count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(7, '0')}`);

const addPhones = async (controlUrl: string, list: string[]) => {
  await inBatches(list, async (number) => {
    await json(`${controlUrl}/phones`, 'POST', { number });
  });
};

const connectedCount = async (service: ServiceProcess): Promise<number> => {
  const res = await json(`${service.baseUrl}/v1/sessions`, 'GET', undefined, KEY);
  const list = (Array.isArray(res.body) ? res.body : (res.body.sessions as unknown[])) as Array<{ status: string }>;
  return list.filter((s) => s.status === 'CONNECTED').length;
};

const linkThroughApi = async (service: ServiceProcess, controlUrl: string, number: string) => {
  const created = await json(`${service.baseUrl}/v1/sessions`, 'POST', { name: number }, KEY);
  if (created.status !== 201) throw new Error(`creating a session answered ${created.status}: ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  const paired = await json(`${service.baseUrl}/v1/sessions/${id}/pairing-code`, 'POST', { phoneNumber: number }, KEY);
  await json(`${controlUrl}/phones/${number}/pairing-code`, 'POST', { code: paired.body.pairingCode });
  // As the README tells a user to wait: the status long-poll, which answers once CONNECTED.
  const until = Date.now() + 120_000;
  for (;;) {
    const status = await json(`${service.baseUrl}/v1/sessions/${id}/status?waitFor=CONNECTED&waitMs=30000`, 'GET', undefined, KEY);
    if (status.body.status === 'CONNECTED') return;
    if (Date.now() > until) throw new Error(`session ${number} not CONNECTED after 120 s: ${JSON.stringify(status.body)}`);
  }
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

/** Probes /healthz and an API read every 50 ms until stopped; returns the latencies. */
const probe = (service: ServiceProcess) => {
  let running = true;
  const samples: number[] = [];
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await Promise.all([
        fetch(`${service.baseUrl}/healthz`).then((r) => r.arrayBuffer()),
        json(`${service.baseUrl}/v1/accounts/me`, 'GET', undefined, KEY),
      ]);
      samples.push(performance.now() - started);
      await sleep(50);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return samples.sort((a, b) => a - b);
  };
};

export interface ScaleResult {
  count: number;
  service: {
    fixedMb: number;
    firstSessionMb: number;
    perSessionMb: number;
    /** the memory-reducing collections the service logged: how long each took, and on which thread */
    reclaims: Array<{ ms: number; thread: 'main' | 'network' }>;
    /** per further session, both readings taken after QUIET_MS without activity (the first one) or at the end of the idle window */
    perIdleSessionMb: number;
    cpuPerLink: number;
    idleCpu: number;
    relinkSeconds: number;
    /** of relinkSeconds: from the spawn to the service listening */
    listeningSeconds: number;
    probeP99Ms: number;
    probeMaxMs: number;
  };
  floor: {
    baseMb: number;
    perSessionMb: number;
    cpuPerLink: number;
    idleCpu: number;
    /** from the spawn of a new floor process, which reads the saved credentials, to all open */
    relinkSeconds: number;
    /** the sockets alone: closed and opened again in the same process */
    socketsOnlySeconds: number;
  };
}

/** The pauses (ms) of the service's memory reclaim, from its log lines (the network's carry a `network` field). */
const reclaimsIn = (output: string): ScaleResult['service']['reclaims'] =>
  output
    .split('\n')
    .filter((line) => line.includes('memory given back'))
    .map((line) => ({ ms: Number(/"ms":(\d+)/.exec(line)?.[1] ?? NaN), thread: line.includes('"network":') ? 'network' : 'main' }));

const benchService = async (controlUrl: string): Promise<ScaleResult['service']> => {
  const dir = mkdtempSync(join(tmpdir(), 'scale-'));
  const env = {
    DATABASE_URL: `file:${join(dir, 'app.db')}`,
    WA_SANDBOX_URL: controlUrl,
    BOOTSTRAP_EMAIL: 'scale@example.com',
    BOOTSTRAP_API_KEY: KEY,
    DAILY_QUOTA: '0',
    // N sessions in one account, polled by the benchmark: the per-account cap and the rate limit would refuse them.
    MAX_SESSIONS_PER_ACCOUNT: '0',
    RATE_LIMIT_REQUESTS: '0',
    SEND_PACING: 'off',
    ...(PROFILE_DIR ? { NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...profileArgs].join(' ').trim() } : {}),
  };
  let service = await spawnService(env);
  try {
    await sleep(SETTLE_MS);
    const fixedMb = usage(service.child.pid as number).rssMb;
    const list = numbers('1557', N);
    await addPhones(controlUrl, list);
    // The first link starts the network process, a fixed cost measured apart.
    await linkThroughApi(service, controlUrl, list[0]);
    await sleep(SETTLE_MS);
    const first = usage(service.child.pid as number);
    await sleep(QUIET_MS - SETTLE_MS);
    const firstQuiet = usage(service.child.pid as number);
    const linkStart = now();
    await inBatches(list.slice(1), (number) => linkThroughApi(service, controlUrl, number));
    mark('service-link', linkStart);
    const linked = usage(service.child.pid as number);
    await sleep(SETTLE_MS);
    const settled = usage(service.child.pid as number);
    // Printed now as well: on a loaded machine the re-link below can fail the run after memory was measured.
    console.log(
      `  (service memory: fixed ${fixedMb.toFixed(0)} MB, first session +${(first.rssMb - fixedMb).toFixed(0)} MB, ` +
        `${((settled.rssMb - first.rssMb) / (N - 1)).toFixed(2)} MB per further session)`,
    );
    // Idle is measured once the end of the linking burst is behind it (its memory given back), as the floor's is.
    await sleep(QUIET_MS - SETTLE_MS);
    const idleStart = now();
    const idle = await idleCpu(service.child.pid as number);
    mark('service-idle', idleStart);
    const idleEnd = usage(service.child.pid as number);
    const reclaims = reclaimsIn(service.output());
    // Profiled, the service is stopped by SIGTERM so that its profiles are written; the rows are left as a
    // crash leaves them all the same (a stop closes the links without recording it).
    await service.stop(PROFILE_DIR ? 'SIGTERM' : 'SIGKILL');
    const restarted = performance.now();
    const relinkStart = now();
    service = await spawnService(env);
    const listeningSeconds = (performance.now() - restarted) / 1000;
    const stopProbe = probe(service);
    while ((await connectedCount(service)) < N) await sleep(250);
    const relinkSeconds = (performance.now() - restarted) / 1000;
    mark('service-relink', relinkStart);
    const latencies = await stopProbe();
    return {
      fixedMb,
      firstSessionMb: first.rssMb - fixedMb,
      perSessionMb: (settled.rssMb - first.rssMb) / (N - 1),
      perIdleSessionMb: (idleEnd.rssMb - firstQuiet.rssMb) / (N - 1),
      reclaims,
      cpuPerLink: (linked.cpu - firstQuiet.cpu) / (N - 1),
      idleCpu: idle,
      relinkSeconds,
      listeningSeconds,
      probeP99Ms: percentile(latencies, 99),
      probeMaxMs: latencies.at(-1) ?? 0,
    };
  } finally {
    await service.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
};

const forkFloor = (controlUrl: string, env: Record<string, string> = {}): ChildProcess =>
  fork('bench/bare-sockets.ts', [], {
    execArgv: ['--import', 'tsx', ...profileArgs],
    env: { ...process.env, WA_SANDBOX_URL: controlUrl, FLOOR_PARALLEL: String(PARALLEL), ...env },
  });

const reportFrom = (child: ChildProcess) =>
  new Promise<FloorReport>((resolve) => child.once('message', (report: FloorReport) => resolve(report)));

const stopFloor = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ kind: 'stop' } satisfies FloorRequest);
  await exited;
};

const benchFloor = async (controlUrl: string): Promise<ScaleResult['floor']> => {
  let child = forkFloor(controlUrl);
  const ask = (request: FloorRequest) => {
    const report = reportFrom(child);
    child.send(request);
    return report;
  };
  const dir = mkdtempSync(join(tmpdir(), 'scale-floor-'));
  try {
    const list = numbers('1558', N);
    await addPhones(controlUrl, list);
    await sleep(SETTLE_MS);
    const base = usage(child.pid as number);
    const linkStart = now();
    await ask({ kind: 'link', numbers: list, parallel: PARALLEL });
    mark('floor-link', linkStart);
    const linked = usage(child.pid as number);
    await sleep(SETTLE_MS);
    const settled = usage(child.pid as number);
    console.log(`  (floor memory: process ${base.rssMb.toFixed(0)} MB, ${((settled.rssMb - base.rssMb) / N).toFixed(2)} MB per socket)`);
    await sleep(QUIET_MS - SETTLE_MS);
    const idleStart = now();
    const idle = await idleCpu(child.pid as number);
    mark('floor-idle', idleStart);
    const started = performance.now();
    await ask({ kind: 'relink', parallel: PARALLEL });
    const socketsOnlySeconds = (performance.now() - started) / 1000;
    // The restart the service gets: the process is killed and a new one opens every socket from the
    // saved credentials; the clock starts at its spawn, as the service's does.
    const file = join(dir, 'saved.json');
    await ask({ kind: 'save', file });
    // Profiled, it exits by itself so that its profile is written.
    if (PROFILE_DIR) await stopFloor(child);
    else {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    const restarted = performance.now();
    const relinkStart = now();
    child = forkFloor(controlUrl, { FLOOR_RESTORE: file });
    await reportFrom(child);
    const relinkSeconds = (performance.now() - restarted) / 1000;
    mark('floor-relink', relinkStart);
    return {
      baseMb: base.rssMb,
      perSessionMb: (settled.rssMb - base.rssMb) / N,
      cpuPerLink: (linked.cpu - base.cpu) / N,
      idleCpu: idle,
      relinkSeconds,
      socketsOnlySeconds,
    };
  } finally {
    await stopFloor(child);
    rmSync(dir, { recursive: true, force: true });
  }
};

export const benchScale = async (): Promise<ScaleResult> => {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const sandbox = await startSandboxProcess();
  try {
    const floor = await benchFloor(sandbox.controlUrl);
    const service = await benchService(sandbox.controlUrl);
    return { count: N, service, floor };
  } finally {
    await sandbox.stop();
  }
};

const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');

export const printScaleBench = (r: ScaleResult): void => {
  const { service: s, floor: f } = r;
  const pct = (x: number) => `${(x * 100).toFixed(1)} % of a core`;
  console.log(
    `scale: ${r.count} sessions linked by pairing code, sandbox in its own process; service beside the bare-socket floor of the same run`,
  );
  console.log(
    `  idle CPU          ${pct(s.idleCpu)}  floor ${pct(f.idleCpu)}  ratio ${ratio(s.idleCpu, f.idleCpu)} (target <= 1.25×, and < 5 % for 2,000; ` +
      `${IDLE_SECONDS} s from ${QUIET_MS / 1000} s after linking)`,
  );
  console.log(
    `  memory reclaim    ${s.reclaims.length} collection(s) after the linking burst, pauses ${s.reclaims.map((r) => `${r.ms} ms (${r.thread})`).join(', ') || 'none'}`,
  );
  console.log(
    `  CPU per link      ${(s.cpuPerLink * 1000).toFixed(0)} ms  floor ${(f.cpuPerLink * 1000).toFixed(0)} ms  ratio ${ratio(s.cpuPerLink, f.cpuPerLink)} (target <= 1.5×)`,
  );
  console.log(
    `  re-link all       ${s.relinkSeconds.toFixed(1)} s from the spawn after a SIGKILL  floor ${f.relinkSeconds.toFixed(1)} s (a new process from saved credentials)  ratio ${ratio(s.relinkSeconds, f.relinkSeconds)} (target <= 1.25×)`,
  );
  console.log(
    `    of which        ${s.listeningSeconds.toFixed(1)} s spawn to listening, ${(s.relinkSeconds - s.listeningSeconds).toFixed(1)} s listening to all CONNECTED; ` +
      `floor's sockets alone (closed and opened in the same process) ${f.socketsOnlySeconds.toFixed(1)} s`,
  );
  console.log(
    `  during re-link    /healthz + GET /v1/accounts/me p99 ${s.probeP99Ms.toFixed(0)} ms, max ${s.probeMaxMs.toFixed(0)} ms (target p99 <= 1,000 ms)`,
  );
  console.log(
    `  memory            ${s.perIdleSessionMb.toFixed(2)} MB per linked idle session as the service leaves it (read after ${QUIET_MS / 1000} s quiet and at the end of the idle window; target <= 1 MB), ` +
      `${s.perSessionMb.toFixed(2)} MB read ${SETTLE_MS / 1000} s after linking; floor ${f.perSessionMb.toFixed(2)} MB ${SETTLE_MS / 1000} s after linking; ` +
      `fixed ${s.fixedMb.toFixed(0)} MB before any session, the first session with the network process +${s.firstSessionMb.toFixed(0)} MB; floor process ${f.baseMb.toFixed(0)} MB`,
  );
};
