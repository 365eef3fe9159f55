import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createPrisma } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import { spawnService } from '../test/helpers/process.ts';
import type { ServiceProcess } from '../test/helpers/process.ts';
import { startSandboxProcess } from '../test/helpers/sandbox-process.ts';

// `npm run bench -- failover`: N sessions (FAILOVER_SESSIONS, default 100) on three nodes over one
// PostgreSQL database and Redis, the sandbox in its own process. SIGKILL the node holding the most: the
// time until every session is CONNECTED on the two others; then a fourth node joins: the time until it
// holds its share and every session is CONNECTED again. Requests go to the survivors throughout (a
// session's status, forwarded to its owner, every 50 ms), and their p99 is printed per phase.
const N = Number(process.env.FAILOVER_SESSIONS ?? 100);
const PARALLEL = Number(process.env.FAILOVER_PARALLEL ?? 8);
const KEY = `wak_${randomUUID()}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const json = async (url: string, method: string, body?: unknown, key?: string) => {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
};

const inBatches = async <T>(items: T[], work: (item: T, i: number) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i] as T, i);
      }
    }),
  );
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

export interface FailoverResult {
  sessions: number;
  linkSeconds: number;
  failoverSessions: number;
  failoverSeconds: number;
  failoverP99Ms: number;
  failoverRefused: number;
  failoverRequests: number;
  rebalanceMoved: number;
  rebalanceSeconds: number;
  rebalanceP99Ms: number;
  rebalanceRefused: number;
  rebalanceRequests: number;
}

export const benchFailover = async (): Promise<FailoverResult> => {
  const sandbox = await startSandboxProcess();
  const database = await createTestDatabase('postgres');
  const db = createPrisma(database.url);
  const env = {
    DATABASE_URL: database.url,
    WA_SANDBOX_URL: sandbox.controlUrl,
    BOOTSTRAP_EMAIL: 'failover@example.com',
    BOOTSTRAP_API_KEY: KEY,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    CLUSTER_SECRET: `failover-${randomUUID()}`,
    DAILY_QUOTA: '0',
    MAX_SESSIONS_PER_ACCOUNT: '0',
    RATE_LIMIT_REQUESTS: '0',
  };
  const nodes: ServiceProcess[] = [];
  const alive = new Set<ServiceProcess>();
  const spawn = async () => {
    const node = await spawnService(env);
    nodes.push(node);
    alive.add(node);
    return node;
  };
  try {
    for (let i = 0; i < 3; i++) await spawn();
    const numbers = Array.from({ length: N }, (_, i) => `1556${String(i).padStart(7, '0')}`);
    await inBatches(numbers, async (number) => {
      await json(`${sandbox.controlUrl}/phones`, 'POST', { number });
    });
    const ids: string[] = [];
    const linkStart = performance.now();
    await inBatches(numbers, async (number, i) => {
      const node = nodes[i % 3] as ServiceProcess;
      const created = await json(`${node.baseUrl}/v1/sessions`, 'POST', { name: number }, KEY);
      const id = created.body.id as string;
      ids[i] = id;
      for (let attempt = 0; ; attempt++) {
        const paired = await json(`${node.baseUrl}/v1/sessions/${id}/pairing-code`, 'POST', { phoneNumber: number }, KEY);
        if (typeof paired.body.pairingCode === 'string') {
          await json(`${sandbox.controlUrl}/phones/${number}/pairing-code`, 'POST', { code: paired.body.pairingCode });
          break;
        }
        if (attempt > 20) throw new Error(`no pairing code for ${number}: ${JSON.stringify(paired.body)}`);
        await sleep(500);
      }
    });
    const statusOf = async (through: ServiceProcess, id: string) =>
      (await json(`${through.baseUrl}/v1/sessions/${id}/status`, 'GET', undefined, KEY)).body.status;
    const ownerOf = async () => {
      const leases = await db.sessionLease.findMany({ select: { sessionId: true, nodeId: true } });
      const addresses = new Map((await db.clusterNode.findMany()).map((n) => [n.id, n.address]));
      return new Map(leases.map((l) => [l.sessionId, nodes.find((n) => n.baseUrl === addresses.get(l.nodeId))]));
    };
    /** Every session CONNECTED as its owner tells it, and owned by a live node. */
    const allConnected = async () => {
      const owners = await ownerOf();
      if (!ids.every((id) => alive.has(owners.get(id) as ServiceProcess))) return false;
      const through = [...alive][0] as ServiceProcess;
      const statuses: unknown[] = [];
      await inBatches(ids, async (id, i) => {
        statuses[i] = await statusOf(through, id);
      });
      return statuses.every((s) => s === 'CONNECTED');
    };
    while (!(await allConnected())) await sleep(500);
    const linkSeconds = (performance.now() - linkStart) / 1000;
    console.log(`  (${N} sessions linked through three nodes in ${linkSeconds.toFixed(1)} s)`);

    const probe = () => {
      let running = true;
      const samples: number[] = [];
      let refused = 0;
      const loop = (async () => {
        for (let i = 0; running; i++) {
          const through = [...alive][i % alive.size] as ServiceProcess;
          const started = performance.now();
          const res = await json(`${through.baseUrl}/v1/sessions/${ids[i % ids.length]}/status`, 'GET', undefined, KEY).catch(() => ({
            status: 0,
          }));
          samples.push(performance.now() - started);
          if (res.status !== 200) refused += 1;
          await sleep(50);
        }
      })();
      return async () => {
        running = false;
        await loop;
        return { sorted: samples.sort((a, b) => a - b), refused };
      };
    };

    const owners = await ownerOf();
    const victim = [...alive].sort(
      (a, b) => ids.filter((id) => owners.get(id) === b).length - ids.filter((id) => owners.get(id) === a).length,
    )[0] as ServiceProcess;
    const failoverSessions = ids.filter((id) => owners.get(id) === victim).length;
    alive.delete(victim);
    const failoverProbe = probe();
    const killedAt = performance.now();
    await victim.stop('SIGKILL');
    while (!(await allConnected())) await sleep(100);
    const failoverSeconds = (performance.now() - killedAt) / 1000;
    const failover = await failoverProbe();

    // A session claimed within the last 10 s is not handed over: let the survivors' fresh claims age first.
    await sleep(11_000);
    const rebalanceProbe = probe();
    const joinedAt = performance.now();
    const joined = await spawn();
    // Each node holds at most sessions ÷ nodes rounded up; the one that joined gets what the others leave.
    const share = N - (alive.size - 1) * Math.ceil(N / alive.size);
    let rebalanceMoved = 0;
    for (;;) {
      const now = await ownerOf();
      rebalanceMoved = ids.filter((id) => now.get(id) === joined).length;
      if (rebalanceMoved >= share && (await allConnected())) break;
      await sleep(250);
    }
    const rebalanceSeconds = (performance.now() - joinedAt) / 1000;
    const rebalance = await rebalanceProbe();
    return {
      sessions: N,
      linkSeconds,
      failoverSessions,
      failoverSeconds,
      failoverP99Ms: percentile(failover.sorted, 99),
      failoverRefused: failover.refused,
      failoverRequests: failover.sorted.length,
      rebalanceMoved,
      rebalanceSeconds,
      rebalanceP99Ms: percentile(rebalance.sorted, 99),
      rebalanceRefused: rebalance.refused,
      rebalanceRequests: rebalance.sorted.length,
    };
  } finally {
    for (const node of nodes) await node.stop('SIGKILL');
    await db.$disconnect();
    await sandbox.stop();
    await database.drop();
  }
};

export const printFailoverBench = (r: FailoverResult): void => {
  console.log(`failover: ${r.sessions} sessions on three nodes, one PostgreSQL and Redis, sandbox in its own process`);
  console.log(
    `  SIGKILL of the node holding ${r.failoverSessions}: all ${r.sessions} CONNECTED on the two others after ${r.failoverSeconds.toFixed(1)} s` +
      ` (fazer-ai/baileys-api: lease TTL 30 s + claim scan, about 37 s worst case)`,
  );
  console.log(
    `    requests meanwhile: ${r.failoverRequests}, p99 ${r.failoverP99Ms.toFixed(0)} ms, ${r.failoverRefused} answered 409 while their session moved`,
  );
  console.log(
    `  a node joins: it holds its share (${r.rebalanceMoved} sessions) and all are CONNECTED after ${r.rebalanceSeconds.toFixed(1)} s` +
      ' (fazer-ai/baileys-api: 100 connections from one worker to two in about 8 minutes)',
  );
  console.log(
    `    requests meanwhile: ${r.rebalanceRequests}, p99 ${r.rebalanceP99Ms.toFixed(0)} ms, ${r.rebalanceRefused} answered 409 while their session moved`,
  );
};
