import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { linkSession, startWithSandbox } from '../test/helpers/sandbox.ts';
import { linkedSocket } from '../test/sandbox/helpers.ts';

const WARM = 2000;
const SENDS = 600;
const ROUNDS = 5;
const CONCURRENCY = 16;
const POLLS = 200;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};

const pool = async (count: number, concurrency: number, task: (i: number) => Promise<unknown>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
};

/** When the main thread last went idle: the start of the first 10 ms in which it was busy under 5% of the time. */
const idleSince = async (): Promise<number> => {
  for (;;) {
    const start = performance.now();
    const before = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, 10));
    if (performance.eventLoopUtilization(before).utilization < 0.05) return start;
  }
};

/** Posts `count` sends from a worker thread and resolves when every answer is in. */
const loadFromWorker = (workerData: { baseUrl: string; path: string; key: string; to: string; prefix: string; count: number; concurrency: number }) =>
  new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.mjs', import.meta.url), { workerData });
    worker.once('message', ({ failures }: { failures: number[] }) => {
      if (failures.length > 0) reject(new Error(`${failures.length} sends failed (first answered ${failures[0]})`));
      else resolve();
    });
    worker.once('error', reject);
  });

/** A lean keep-alive client for the long-polls, so their figure is not fetch's overhead. */
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const getJson = (baseUrl: string, path: string, key: string): Promise<{ count?: number }> =>
  new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { agent, headers: { 'x-api-key': key } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as { count?: number }));
    });
    req.on('error', reject);
    req.end();
  });

export const benchMessages = async () => {
  const ctx = await startWithSandbox('sqlite', { DAILY_QUOTA: 0 });
  try {
    const sessionId = await linkSession(ctx, '15580000001');
    ctx.sandbox.control.addPhone('15580000002', 'Sink');
    ctx.sandbox.control.addPhone('15580000004', 'Sink 2');
    const bare = await linkedSocket(ctx.sandbox, '15580000003');

    // Both rates count until the sandbox's phone has decrypted every message and the process is idle
    // again: the sandbox shares this process, and work a round leaves behind (receipts, acks, key
    // writes) would otherwise be charged to the next round, of the other path.
    const delivered = async (number: string, before: number, count: number): Promise<number> => {
      while (ctx.sandbox.control.inbox(number).length < before + count) await new Promise((r) => setTimeout(r, 5));
      return idleSince();
    };
    const apiRound = async (round: string, count: number) => {
      const before = ctx.sandbox.control.inbox('15580000002').length;
      const started = performance.now();
      await loadFromWorker({ baseUrl: ctx.app.baseUrl, path: `/v1/sessions/${sessionId}/send`, key: ctx.key, to: '15580000002', prefix: `api ${round} `, count, concurrency: CONCURRENCY });
      const ended = await delivered('15580000002', before, count);
      return count / ((ended - started) / 1000);
    };
    const bareRound = async (round: string, count: number) => {
      const before = ctx.sandbox.control.inbox('15580000004').length;
      const started = performance.now();
      await pool(count, CONCURRENCY, (i) => bare.sock.sendMessage('15580000004@s.whatsapp.net', { text: `bare ${round} ${i}` }));
      const ended = await delivered('15580000004', before, count);
      return count / ((ended - started) / 1000);
    };

    // Warm both paths first (Signal sessions, connections, and the JIT: whichever runs first runs
    // colder), then alternate, so neither gets the quieter moments of the machine.
    await apiRound('warm', WARM);
    await bareRound('warm', WARM);
    const apiRates: number[] = [];
    const bareRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      apiRates.push(await apiRound(String(round), SENDS));
      bareRates.push(await bareRound(String(round), SENDS));
    }
    const apiRate = quantile(apiRates, 0.5);
    const bareRate = quantile(bareRates, 0.5);
    // Each round's pair ran back to back, under the same conditions of the machine.
    const ratio = quantile(apiRates.map((api, i) => api / (bareRates[i] ?? NaN)), 0.5);
    bare.sock.end(undefined);

    // From the moment the phone's message enters the network (after the phone encrypted it, which is
    // the phone's work, not the network's) to the waiting long-poll's answer in the client.
    const latencies: number[] = [];
    let entered = 0;
    const stop = ctx.sandbox.control.onPhoneMessage(() => {
      entered = performance.now();
    });
    try {
      for (let i = 0; i < POLLS; i++) {
        const poll = getJson(ctx.app.baseUrl, `/v1/sessions/${sessionId}/incoming?waitMs=5000`, ctx.key);
        await new Promise((r) => setTimeout(r, 5));
        await ctx.sandbox.control.sendText('15580000002', '15580000001', `poll ${i}`);
        const answer = await poll;
        latencies.push(performance.now() - entered);
        if (answer.count !== 1) throw new Error(`long-poll returned ${answer.count} items`);
      }
    } finally {
      stop();
    }
    return { apiRate, bareRate, ratio, apiRates, bareRates, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
  } finally {
    await ctx.app.close();
    await ctx.sandbox.close();
  }
};

export const printMessageBench = (r: Awaited<ReturnType<typeof benchMessages>>): void => {
  console.log(
    `messages (sent and decrypted by the sandbox phone): POST /send ${r.apiRate.toFixed(0)} msg/s vs Baileys sendMessage on a bare socket ${r.bareRate.toFixed(0)} msg/s ` +
      `(median of ${ROUNDS} alternating rounds; median ratio of back-to-back rounds ${(100 * r.ratio).toFixed(0)}%, target >= 90%); phone message to long-poll answer p50 ${r.p50.toFixed(1)} ms, ` +
      `p99 ${r.p99.toFixed(1)} ms (target p99 <= 5 ms; from the phone's encrypted message entering the sandbox)`,
  );
  console.log(`  rounds, msg/s: API ${r.apiRates.map((x) => x.toFixed(0)).join(' ')}; bare ${r.bareRates.map((x) => x.toFixed(0)).join(' ')}`);
};
