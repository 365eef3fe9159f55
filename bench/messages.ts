import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Session } from 'node:inspector/promises';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress } from '../src/runtime/sandbox/sandbox.ts';
import { linkSession, startWithSandbox } from '../test/helpers/sandbox.ts';
import type { BareReport, BareRequest } from './bare-socket.ts';
import { nowUs, profileMarks } from './marks.ts';

const WARM = 2000;
const SENDS = 600;
const ROUNDS = 9;
const CONCURRENCY = 16;
const POLLS = 400;
// MESSAGES_CPU_PROF=<dir>: run with NODE_OPTIONS="--cpu-prof --cpu-prof-dir=<dir>" so every thread writes a
// .cpuprofile there; marks.json then holds the monotonic windows (µs, the profiles' clock) of the API
// rounds, the bare rounds and the long-poll samples, each a list of [from, to], to slice the profiles
// by phase (bench/cpuprofile.py).
const PROFILE_DIR = process.env.MESSAGES_CPU_PROF;
// MESSAGES_HEAP_SAMPLE=<file>: V8's sampling allocation profile of the main thread over the warm-up API
// sends, garbage included (what a send allocates, not what it keeps); bench/heapprofile.py sums it.
const HEAP_SAMPLE = process.env.MESSAGES_HEAP_SAMPLE;

/** Runs `work` under the sampling heap profiler of this thread and writes the profile to `file`. */
const sampleAllocations = async <T>(file: string, work: () => Promise<T>): Promise<T> => {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const result = await work();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(profile));
    return result;
  } finally {
    session.disconnect();
  }
};
const mark = profileMarks(PROFILE_DIR);

export const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};

// Node.js gives each worker thread its `name` as the OS thread's; V8's own helpers (concurrent marking
// and compilation) are "V8Worker". Clock ticks of 10 ms: a round spends a second or more.
const THREADS: Record<string, string> = { MainThread: 'main', network: 'network', bare: 'bare', load: 'load', V8Worker: 'V8 helpers' };
const TICK_MS = 10;
/** CPU (ms) used so far by each group of this process's threads, from /proc. */
const threadCpu = (): Map<string, number> => {
  const used = new Map<string, number>();
  // no figures by thread where there is no /proc (macOS)
  if (!existsSync('/proc/self/task')) return used;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // after the name: state is field 3, utime and stime fields 14 and 15
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const group = THREADS[name] ?? 'other';
      used.set(group, (used.get(group) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return used;
};

/** When the main thread last went idle: the start of the first 10 ms in which it was busy under 5% of the time. */
export const idleSince = async (): Promise<number> => {
  for (;;) {
    const start = performance.now();
    const before = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, 10));
    if (performance.eventLoopUtilization(before).utilization < 0.05) return start;
  }
};

/**
 * The load generator's thread (http-load.mjs), started once: `post` sends `count` requests and resolves,
 * once every answer is in, with the CPU (ms) that thread spent on them.
 */
export const startLoader = async (workerData: { baseUrl: string; key: string; concurrency: number }) => {
  const worker = new Worker(new URL('./http-load.mjs', import.meta.url), { name: 'load', workerData });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    post: (job: { path: string; to: string; prefix: string; count: number; expect: number; field?: string }) =>
      new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        worker.once('error', onError);
        worker.once('message', ({ failures, cpuMs }: { failures: number[]; cpuMs: number }) => {
          worker.off('error', onError);
          if (failures.length > 0) reject(new Error(`${failures.length} requests failed (first answered ${failures[0]})`));
          else resolve(cpuMs);
        });
        worker.postMessage(job);
      }),
    close: async () => {
      worker.postMessage('close');
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
};

type PollReport = { kind: 'ready' } | { kind: 'sent' } | { kind: 'answer'; count: number; at: bigint };

/** A long-poll client on its own thread (see poll-client.mjs); `poll` resolves with the answer's count and arrival time. */
const startPollClient = async (workerData: { baseUrl: string; path: string; key: string }) => {
  const worker = new Worker(new URL('./poll-client.mjs', import.meta.url), { name: 'poll-client', workerData });
  const next = (kind: PollReport['kind']) =>
    new Promise<PollReport>((resolve, reject) => {
      const onMessage = (report: PollReport) => {
        if (report.kind !== kind) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(report);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  await next('ready');
  return {
    /** Sends a GET and resolves once it is out; `answer` then resolves when its answer has arrived. */
    poll: async () => {
      const sent = next('sent');
      const answer = next('answer') as Promise<Extract<PollReport, { kind: 'answer' }>>;
      worker.postMessage('poll');
      await sent;
      return { answer };
    },
    close: async () => {
      worker.postMessage('close');
      await once(worker, 'exit');
    },
  };
};

/** The bare Baileys socket on its own thread (bare-socket.ts), linked to `number` through the QR flow. */
const startBareSocket = async (sandbox: Sandbox, number: string) => {
  sandbox.control.addPhone(number, 'Bare socket');
  const worker = new Worker(new URL('./bare-socket.mjs', import.meta.url), {
    name: 'bare',
    workerData: { sandbox: sandboxAddress(sandbox) },
  });
  const request = (message: BareRequest) => worker.postMessage(message);
  const arrivals: Array<(at: bigint) => void> = [];
  let sent: ((failed?: string) => void) | null = null;
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (report: BareReport) => {
      if (report.kind === 'qr') sandbox.control.scanQr(number, report.qr).catch(reject);
      else if (report.kind === 'open') resolve();
      else if (report.kind === 'upsert') arrivals.shift()?.(report.at);
      else sent?.(report.failed);
    });
    worker.once('error', reject);
  });
  return {
    /** Resolves once Baileys' sendMessage has returned for every one of `count` texts to `to`. */
    send: (to: string, prefix: string, count: number) =>
      new Promise<void>((resolve, reject) => {
        sent = (failed) => (failed ? reject(new Error(`bare send failed: ${failed}`)) : resolve());
        request({ kind: 'send', to, prefix, count, concurrency: CONCURRENCY });
      }),
    /** Resolves with the moment the socket's next incoming message is upserted. */
    nextArrival: () => new Promise<bigint>((resolve) => arrivals.push(resolve)),
    close: async () => {
      request({ kind: 'close' });
      await once(worker, 'exit');
    },
  };
};

const sinceMs = (from: bigint | undefined, to: bigint) => Number(to - (from ?? to)) / 1e6;

// MESSAGES_NETWORK_MODE=thread|process: the service's links somewhere other than the main thread (the default).
const MODE = process.env.MESSAGES_NETWORK_MODE as 'thread' | 'process' | 'inline' | undefined;

export const benchMessages = async () => {
  const ctx = await startWithSandbox('sqlite', { DAILY_QUOTA: 0, ...(MODE ? { NETWORK_MODE: MODE } : {}) });
  let bare: Awaited<ReturnType<typeof startBareSocket>> | undefined;
  let loader: Awaited<ReturnType<typeof startLoader>> | undefined;
  try {
    const sessionId = await linkSession(ctx, '15580000001');
    ctx.sandbox.control.addPhone('15580000002', 'Sink');
    ctx.sandbox.control.addPhone('15580000004', 'Sink 2');
    const bareSocket = await startBareSocket(ctx.sandbox, '15580000003');
    bare = bareSocket;
    const load = await startLoader({ baseUrl: ctx.app.baseUrl, key: ctx.key, concurrency: CONCURRENCY });
    loader = load;

    // Both rates count until the sandbox's phone has decrypted every message and the process is idle
    // again: the sandbox shares this process, and work a round leaves behind (receipts, acks, key
    // writes) would otherwise be charged to the next round, of the other path.
    const delivered = async (number: string, before: number, count: number): Promise<number> => {
      while (ctx.sandbox.control.inbox(number).length < before + count) await new Promise((r) => setTimeout(r, 5));
      return idleSince();
    };
    /**
     * One round: `load` runs it (and answers the CPU, in ms, of the load generator's thread, if it has
     * one), `settle` waits until its work is done and the process is idle. Its rate, and per request the
     * CPU the whole process spent (every thread: service, Baileys, sandbox, loader) and the loader's share.
     */
    const measure = async (count: number, load: () => Promise<number>, settle: () => Promise<number>, phase?: string) => {
      const cpu = process.cpuUsage();
      const threadsBefore = threadCpu();
      const from = nowUs();
      const started = performance.now();
      const loaderCpuMs = await load();
      const ended = await settle();
      const { user, system } = process.cpuUsage(cpu);
      const threads = new Map([...threadCpu()].map(([group, ms]) => [group, (ms - (threadsBefore.get(group) ?? 0)) / count]));
      if (phase) mark(phase, from);
      return { rate: count / ((ended - started) / 1000), cpuMs: (user + system) / 1000 / count, loaderMs: loaderCpuMs / count, threads };
    };
    const sendRound = (number: string, count: number, load: () => Promise<number>, phase?: string) => {
      const before = ctx.sandbox.control.inbox(number).length;
      return measure(count, load, () => delivered(number, before, count), phase);
    };
    const apiRound = (name: string, count: number, phase?: string) =>
      sendRound(
        '15580000002',
        count,
        () => load.post({ path: `/v1/sessions/${sessionId}/send`, to: '15580000002', prefix: `api ${name} `, count, expect: 200 }),
        phase,
      );
    const bareRound = (name: string, count: number, phase?: string) =>
      sendRound(
        '15580000004',
        count,
        async () => {
          await bareSocket.send('15580000004', `bare ${name} `, count);
          return 0;
        },
        phase,
      );
    // What the HTTP layer costs by itself: the same requests to the same route, each refused by the
    // body's validation (400), so nothing is written or sent; the same authentication, router, body
    // parser, logger and answer as a send.
    const httpRound = (count: number, phase?: string) =>
      measure(
        count,
        () => load.post({ path: `/v1/sessions/${sessionId}/send`, to: 'not a number', prefix: 'http ', count, expect: 400 }),
        idleSince,
        phase,
      );

    // Warm both paths first (Signal sessions, connections, and the JIT: whichever runs first runs
    // colder), then alternate, so neither gets the quieter moments of the machine.
    if (HEAP_SAMPLE) await sampleAllocations(HEAP_SAMPLE, () => apiRound('warm', WARM));
    else await apiRound('warm', WARM);
    await bareRound('warm', WARM);
    await httpRound(WARM);
    type Round = Awaited<ReturnType<typeof measure>>;
    const api: Round[] = [];
    const bareRounds: Round[] = [];
    const httpRounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      api.push(await apiRound(String(i), SENDS, 'api'));
      bareRounds.push(await bareRound(String(i), SENDS, 'bare'));
      httpRounds.push(await httpRound(SENDS, 'http'));
    }
    const apiRates = api.map((r) => r.rate);
    const bareRates = bareRounds.map((r) => r.rate);
    const apiRate = quantile(apiRates, 0.5);
    const bareRate = quantile(bareRates, 0.5);
    // Each round's pair ran back to back, under the same conditions of the machine.
    const ratio = quantile(
      apiRates.map((api, i) => api / (bareRates[i] ?? NaN)),
      0.5,
    );

    // From the moment the phone's message enters the network (after the phone encrypted it, which is
    // the phone's work, not the network's) to the waiting long-poll's answer arriving in the client;
    // alternated with the same message to a bare Baileys socket on its own thread, timed to its
    // messages.upsert: what Baileys takes by itself on this machine, before any API.
    const entered = new Map<string, bigint>();
    const stop = ctx.sandbox.control.onPhoneMessage(({ to }) => entered.set(to, process.hrtime.bigint()));
    const client = await startPollClient({
      baseUrl: ctx.app.baseUrl,
      path: `/v1/sessions/${sessionId}/incoming?waitMs=5000`,
      key: ctx.key,
    });
    const latencies: number[] = [];
    const bareLatencies: number[] = [];
    const pollsFrom = nowUs();
    try {
      for (let i = 0; i < POLLS; i++) {
        const { answer } = await client.poll();
        await new Promise((r) => setTimeout(r, 5));
        await ctx.sandbox.control.sendText('15580000002', '15580000001', `poll ${i}`);
        const { count, at } = await answer;
        latencies.push(sinceMs(entered.get('15580000001'), at));
        if (count !== 1) throw new Error(`long-poll returned ${count} items`);
        const arrived = bareSocket.nextArrival();
        await ctx.sandbox.control.sendText('15580000002', '15580000003', `bare ${i}`);
        bareLatencies.push(sinceMs(entered.get('15580000003'), await arrived));
        await new Promise((r) => setTimeout(r, 5));
      }
      mark('polls', pollsFrom);
    } finally {
      stop();
      await client.close();
    }
    const median = (values: number[]) => quantile(values, 0.5);
    const byThread = (rounds: Round[]) =>
      new Map(
        Object.values(THREADS)
          .concat('other')
          .map((group) => [group, median(rounds.map((r) => r.threads.get(group) ?? 0))]),
      );
    return {
      apiThreads: byThread(api),
      bareThreads: byThread(bareRounds),
      httpThreads: byThread(httpRounds),
      apiCpuMs: median(api.map((r) => r.cpuMs)),
      bareCpuMs: median(bareRounds.map((r) => r.cpuMs)),
      httpCpuMs: median(httpRounds.map((r) => r.cpuMs)),
      httpLoaderMs: median(httpRounds.map((r) => r.loaderMs)),
      apiLoaderMs: median(api.map((r) => r.loaderMs)),
      apiRate,
      bareRate,
      ratio,
      apiRates,
      bareRates,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      bareP50: quantile(bareLatencies, 0.5),
      bareP99: quantile(bareLatencies, 0.99),
    };
  } finally {
    await loader?.close();
    await bare?.close();
    await ctx.app.close();
    await ctx.sandbox.close();
  }
};

export const printMessageBench = (r: Awaited<ReturnType<typeof benchMessages>>): void => {
  console.log(
    `messages (sent and decrypted by the sandbox phone): POST /send ${r.apiRate.toFixed(0)} msg/s vs Baileys sendMessage on a bare socket ${r.bareRate.toFixed(0)} msg/s ` +
      `(median of ${ROUNDS} alternating rounds; median ratio of back-to-back rounds ${(100 * r.ratio).toFixed(0)}%); phone message to long-poll answer p50 ${r.p50.toFixed(1)} ms, ` +
      `p99 ${r.p99.toFixed(1)} ms (from the phone's encrypted message entering the sandbox)`,
  );
  console.log(
    `  the same phone message to a bare Baileys socket's messages.upsert, on its own thread: p50 ${r.bareP50.toFixed(1)} ms, p99 ${r.bareP99.toFixed(1)} ms; ` +
      `the long-poll adds ${(r.p99 - r.bareP99).toFixed(1)} ms at p99 (target <= 1 ms)`,
  );
  console.log(
    `  CPU per message, all threads of the process (service or bare socket, sandbox, load generator): API ${r.apiCpuMs.toFixed(2)} ms, bare socket ${r.bareCpuMs.toFixed(2)} ms (median of the rounds), ${(r.apiCpuMs / r.bareCpuMs).toFixed(2)}× (target <= 1.3×); ` +
      `${availableParallelism()} cores give at most ${((1000 * availableParallelism()) / r.apiCpuMs).toFixed(0)} API sends/s at that cost`,
  );
  // The load generator's thread is the client's work, which the bare socket has not: taken out here.
  const api = r.apiCpuMs - r.apiLoaderMs;
  const http = r.httpCpuMs - r.httpLoaderMs;
  console.log(
    `  without the load generator's thread (${r.apiLoaderMs.toFixed(2)} ms per send): API ${api.toFixed(2)} ms, ${(api / r.bareCpuMs).toFixed(2)}× the bare socket; ` +
      `HTTP alone (the same requests refused by validation, 400: nothing written or sent) ${http.toFixed(2)} ms, the bare socket plus it ${((r.bareCpuMs + http) / r.bareCpuMs).toFixed(2)}×; ` +
      `what the API adds beyond both (the durable record and SENT mark, the thread hop, persisted keys) ${(api - r.bareCpuMs - http).toFixed(2)} ms`,
  );
  const threads = (figures: Map<string, number>) =>
    [...figures]
      .filter(([, ms]) => ms > 0)
      .map(([group, ms]) => `${group} ${ms.toFixed(2)}`)
      .join(', ');
  console.log(
    `  CPU per message by thread (ms, median of the rounds, from /proc in 10 ms ticks): API ${threads(r.apiThreads)}; bare ${threads(r.bareThreads)}; HTTP alone ${threads(r.httpThreads)}`,
  );
  console.log(
    `  rounds, msg/s: API ${r.apiRates.map((x) => x.toFixed(0)).join(' ')}; bare ${r.bareRates.map((x) => x.toFixed(0)).join(' ')}`,
  );
};
