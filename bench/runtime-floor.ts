import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { control, median, peerPaths, quiet, sleep, startSandbox, started, stopChild, threadCpu, usage } from './peers.ts';

// `npm run bench -- floor` (only when named): the runtime alone, as issue 38 asks: one bare Baileys socket
// (bench/floor-socket.ts, no API, keys in memory) on Node.js and the same file on Bun, each in its own
// process, linked to one sandbox process, alternating rounds of texts with the same number in flight,
// each round counted until the sandbox's phone decrypted every text. CPU from /proc of each socket's
// process alone. Bun comes from the peer checkout (PEER_DIR, docs/benchmarks-peers.md) or FLOOR_BUN.
const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const ROUNDS = setting('FLOOR_ROUNDS', 5);
const TEXTS = setting('FLOOR_TEXTS', 1000);
const IN_FLIGHT = setting('FLOOR_IN_FLIGHT', 8);
const MAX_MINUTES = setting('FLOOR_MAX_MINUTES', 20);

type Runtime = 'node' | 'bun';
interface Socket {
  runtime: Runtime;
  child: ChildProcess;
  next: (what: string) => Promise<Record<string, unknown>>;
}

const startSocket = (runtime: Runtime, bun: string, socketUrl: string): Socket => {
  const [command, args] =
    runtime === 'node'
      ? [process.execPath, [...(process.env.FLOOR_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', 'bench/floor-socket.ts']]
      : [bun, ['bench/floor-socket.ts']];
  const child = spawn(command, args, {
    env: { ...process.env, FLOOR_SOCKET_URL: socketUrl, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  started.add(child);
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => {
    errors = (errors + d.toString()).slice(-4000);
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<() => void> = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return;
    }
    for (const wake of waiting.splice(0)) wake();
  });
  const next = async (what: string) => {
    const until = Date.now() + 120_000;
    for (;;) {
      const line = lines.shift();
      if (line) return line;
      if (child.exitCode !== null) throw new Error(`floor: the ${runtime} socket exited while waiting for ${what}:\n${errors}`);
      if (Date.now() > until) throw new Error(`floor: timed out waiting for the ${runtime} socket's ${what}:\n${errors}`);
      await new Promise<void>((wake) => {
        waiting.push(wake);
        setTimeout(wake, 1_000);
      });
    }
  };
  return { runtime, child, next };
};

export interface FloorResult {
  versions: Record<Runtime, string>;
  cpuMs: Record<Runtime, number[]>;
  rates: Record<Runtime, number[]>;
  threads: Record<Runtime, Map<string, number>>;
  rssMb: Record<Runtime, number>;
}

export const benchFloor = async (): Promise<FloorResult> => {
  const bun = process.env.FLOOR_BUN ?? (process.env.PEER_DIR ? peerPaths(process.env.PEER_DIR).bun : '');
  if (!bun || !existsSync(bun))
    throw new Error('floor: set PEER_DIR (a checkout prepared by scripts/prepare-peer.ts) or FLOOR_BUN to a bun binary');
  const watchdog = setTimeout(() => {
    console.error(`floor: still running after ${MAX_MINUTES} minutes (FLOOR_MAX_MINUTES); stopping`);
    process.exit(1);
  }, MAX_MINUTES * 60_000);
  const sandbox = await startSandbox();
  const phone = control(sandbox.controlUrl);
  const sockets: Socket[] = [];
  const result: FloorResult = {
    versions: { node: process.version, bun: '' },
    cpuMs: { node: [], bun: [] },
    rates: { node: [], bun: [] },
    threads: { node: new Map(), bun: new Map() },
    rssMb: { node: 0, bun: 0 },
  };
  try {
    result.versions.bun = await new Promise<string>((resolve) => {
      const child = spawn(bun, ['--version']);
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.on('exit', () => resolve(out.trim()));
    });
    const runtimes: Runtime[] = ['node', 'bun'];
    const numbers = { node: ['5511940000001', '5511940000002'], bun: ['5511940000011', '5511940000012'] };
    for (const runtime of runtimes) {
      const [own, sink] = numbers[runtime];
      await phone.addPhone(own as string);
      await phone.addPhone(sink as string);
      const socket = startSocket(runtime, bun, sandbox.socketUrl);
      sockets.push(socket);
      const first = await socket.next('QR code');
      if (typeof first.qr !== 'string') throw new Error(`floor: the ${runtime} socket said ${JSON.stringify(first)} before its QR code`);
      await phone.scan(own as string, { qr: first.qr });
      for (;;) if ((await socket.next('link')).open) break;
    }
    const pidsOf = (s: Socket) => [s.child.pid as number];
    const round = async (s: Socket, prefix: string) => {
      const sink = numbers[s.runtime][1] as string;
      const threadsBefore = threadCpu(pidsOf(s));
      const cpuBefore = usage(pidsOf(s)).cpu;
      const from = performance.now();
      s.child.stdin?.write(`${JSON.stringify({ send: TEXTS, to: sink, prefix, inFlight: IN_FLIGHT })}\n`);
      const answer = await s.next('its sends');
      if (answer.failed) throw new Error(`floor: the ${s.runtime} socket failed to send: ${String(answer.failed)}`);
      const until = Date.now() + 120_000;
      for (;;) {
        const inbox = await phone.inbox(sink);
        if (new Set(inbox.filter((e) => e.content?.startsWith(prefix)).map((e) => e.content)).size >= TEXTS) break;
        if (Date.now() > until) throw new Error(`floor: the ${s.runtime} socket's texts "${prefix}" did not all arrive`);
        await sleep(50);
      }
      const seconds = (performance.now() - from) / 1000;
      await quiet(pidsOf(s), 0.02);
      const cpu = usage(pidsOf(s)).cpu - cpuBefore;
      const threadsAfter = threadCpu(pidsOf(s));
      return { cpuMs: (cpu * 1000) / TEXTS, rate: TEXTS / seconds, threadsBefore, threadsAfter };
    };
    // Warm-up: a round each, not counted.
    for (const s of sockets) await round(s, `${s.runtime} warm `);
    const perThread: Record<Runtime, Array<Map<string, number>>> = { node: [], bun: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of r % 2 === 0 ? sockets : [...sockets].reverse()) {
        const figures = await round(s, `${s.runtime} r${r} `);
        result.cpuMs[s.runtime].push(figures.cpuMs);
        result.rates[s.runtime].push(figures.rate);
        const split = new Map<string, number>();
        for (const [name, ms] of figures.threadsAfter) split.set(name, (ms - (figures.threadsBefore.get(name) ?? 0)) / TEXTS);
        perThread[s.runtime].push(split);
      }
    }
    for (const s of sockets) {
      result.rssMb[s.runtime] = usage(pidsOf(s)).rssMb;
      const names = new Set(perThread[s.runtime].flatMap((m) => [...m.keys()]));
      for (const name of names) result.threads[s.runtime].set(name, median(perThread[s.runtime].map((m) => m.get(name) ?? 0)));
    }
    return result;
  } finally {
    clearTimeout(watchdog);
    for (const s of sockets) await stopChild(s.child, 3_000);
    await stopChild(sandbox.child);
  }
};

export const printFloorBench = (r: FloorResult): void => {
  const fmt = (values: number[], digits = 2) => values.map((v) => v.toFixed(digits)).join(' ');
  console.log(
    `floor: one bare Baileys socket per runtime (keys in memory, no API), ${ROUNDS} alternating rounds of ${TEXTS} texts, ${IN_FLIGHT} in flight`,
  );
  console.log('| runtime | CPU per sent text (median of rounds) | texts/s (median) | RSS after the rounds |');
  console.log('|---|---|---|---|');
  for (const runtime of ['node', 'bun'] as const) {
    console.log(
      `| ${runtime === 'node' ? `Node.js ${r.versions.node}` : `Bun ${r.versions.bun}`} | ${median(r.cpuMs[runtime]).toFixed(2)} ms | ${Math.round(median(r.rates[runtime]))} | ${Math.round(r.rssMb[runtime])} MB |`,
    );
  }
  for (const runtime of ['node', 'bun'] as const) {
    const threads = [...r.threads[runtime]]
      .filter(([, ms]) => ms >= 0.005)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
      .join(', ');
    console.log(
      `  ${runtime}: rounds ${fmt(r.cpuMs[runtime])} ms/text, ${fmt(r.rates[runtime], 0)} texts/s; by thread (ms per text, median) ${threads}`,
    );
  }
  console.log(`  Node/Bun CPU per text: ${(median(r.cpuMs.node) / median(r.cpuMs.bun)).toFixed(2)}x`);
};
