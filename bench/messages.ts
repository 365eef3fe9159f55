import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { http } from '../test/helpers/app.ts';
import { linkSession, startWithSandbox } from '../test/helpers/sandbox.ts';
import { linkedSocket } from '../test/sandbox/helpers.ts';

const SENDS = 600;
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

/** A lean keep-alive HTTP client, so the figure is the server's cost rather than fetch's. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const post = (baseUrl: string, path: string, key: string, body: unknown): Promise<number> =>
  new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = request(`${baseUrl}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });

export const benchMessages = async () => {
  const ctx = await startWithSandbox('sqlite', { DAILY_QUOTA: 0 });
  try {
    const sessionId = await linkSession(ctx, '15580000001');
    ctx.sandbox.control.addPhone('15580000002', 'Sink');
    ctx.sandbox.control.addPhone('15580000004', 'Sink 2');
    const bare = await linkedSocket(ctx.sandbox, '15580000003');

    // warm both paths (Signal sessions, prekeys, connections)
    await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/send`, { key: ctx.key, body: { to: '15580000002', message: 'warm' } });
    await bare.sock.sendMessage('15580000004@s.whatsapp.net', { text: 'warm' });

    // Both rates count until the sandbox's phone has decrypted every message: the sandbox shares this
    // process, so stopping the clock when the sends return would leave its work to the next run.
    const delivered = async (number: string, prefix: string) => {
      while (ctx.sandbox.control.inbox(number).filter((e) => e.content.startsWith(prefix)).length < SENDS) await new Promise((r) => setTimeout(r, 2));
    };
    let started = performance.now();
    await pool(SENDS, CONCURRENCY, async (i) => {
      const status = await post(ctx.app.baseUrl, `/v1/sessions/${sessionId}/send`, ctx.key, { to: '15580000002', message: `api ${i}` });
      if (status !== 200) throw new Error(`send answered ${status}`);
    });
    await delivered('15580000002', 'api ');
    const apiRate = SENDS / ((performance.now() - started) / 1000);

    started = performance.now();
    await pool(SENDS, CONCURRENCY, (i) => bare.sock.sendMessage('15580000004@s.whatsapp.net', { text: `bare ${i}` }));
    await delivered('15580000004', 'bare ');
    const bareRate = SENDS / ((performance.now() - started) / 1000);
    bare.sock.end(undefined);

    const latencies: number[] = [];
    for (let i = 0; i < POLLS; i++) {
      const poll = http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?waitMs=5000`, { key: ctx.key });
      await new Promise((r) => setTimeout(r, 5));
      const entered = performance.now();
      await ctx.sandbox.control.sendText('15580000002', '15580000001', `poll ${i}`);
      const res = await poll;
      latencies.push(performance.now() - entered);
      if (res.body.count !== 1) throw new Error(`long-poll returned ${res.body.count} items`);
    }
    return { apiRate, bareRate, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
  } finally {
    await ctx.app.close();
    await ctx.sandbox.close();
  }
};

export const printMessageBench = (r: Awaited<ReturnType<typeof benchMessages>>): void => {
  console.log(
    `messages (sent and decrypted by the sandbox phone): POST /send ${r.apiRate.toFixed(0)} msg/s vs Baileys sendMessage on a bare socket ${r.bareRate.toFixed(0)} msg/s ` +
      `(ratio ${((100 * r.apiRate) / r.bareRate).toFixed(0)}%, target >= 90%); phone message to long-poll answer p50 ${r.p50.toFixed(1)} ms, ` +
      `p99 ${r.p99.toFixed(1)} ms (target p99 <= 5 ms; includes the phone's Signal encryption in the sandbox)`,
  );
};
