import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { createWebhook } from '../src/resolvers/webhooks.ts';
import { groupCommit } from '../src/runtime/db/group-commit.ts';
import { jsonRows } from '../src/runtime/db/json-rows.ts';
import { jobContext } from '../src/resolvers/context.ts';
import { startTestApp } from '../test/helpers/app.ts';

const ROUNDS = 5;
// Long enough that a garbage collection or a slower moment of the machine weighs little on a round (a
// round of the floor lasts about half a second).
const ROUND_EVENTS = 4_000;
const RATE_PER_S = 100;
const RATE_SECONDS = 10;
const CONCURRENCY = 32;
// Events of one session go out one at a time (ordering), so the service can use its whole concurrency only across as many sessions.
const SESSIONS = 32;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};
const clock = () => performance.timeOrigin + performance.now();
// WEBHOOKS_MARKS=<dir> (with the bench under --cpu-prof): marks.json there holds the monotonic windows (µs, the
// profiles' clock) of each round, to slice a profile by side (bench/cpuprofile.py).
const MARKS_DIR = process.env.WEBHOOKS_MARKS;
const marks: Record<string, [number, number]> = {};
const monotonic = () => Number(process.hrtime.bigint() / 1000n);
/** Runs one round, noting its window and the CPU (all threads) the whole process spent in it. */
const measured = async (name: string, round: () => Promise<number>) => {
  const from = monotonic();
  const cpu = process.cpuUsage();
  const rate = await round();
  const used = process.cpuUsage(cpu);
  marks[name] = [from, monotonic()];
  if (MARKS_DIR) writeFileSync(join(MARKS_DIR, 'marks.json'), JSON.stringify(marks, null, 1));
  return { rate, cpuMsPerEvent: (used.user + used.system) / 1000 / ROUND_EVENTS };
};

/** A receiver on loopback that answers 204 and notes when each event arrived (the `at` its sender put in it). */
const startReceiver = async () => {
  const lateness: number[] = [];
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count += 1;
      const at = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { at?: number } }).data.at;
      if (typeof at === 'number') lateness.push(clock() - at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => count,
    lateness,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const waitFor = async (check: () => boolean, ms: number) => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('the benchmark did not finish in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/**
 * Webhook delivery through the outbox against a bare loop posting the same signed payloads to the same
 * receiver with the same concurrency, and the latency from an event to the receiver at 100 events/s.
 */
export const benchWebhooks = async () => {
  const receiver = await startReceiver();
  const app = await startTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_CONCURRENCY: CONCURRENCY });
  const agent = new Agent();
  try {
    const account = await app.newAccount();
    const ctx = jobContext(app.deps, account.id);
    const { secret } = await createWebhook(ctx, { url: receiver.url, events: ['*'] });
    const emit = (i: number) =>
      app.deps.webhooks.emit({
        accountId: account.id,
        sessionId: `s${i % SESSIONS}`,
        type: 'session.status',
        data: { seq: i, status: 'CONNECTED' },
      });

    // Floor: the same signed payloads, posted by a bare loop with the same concurrency and the same HTTP
    // client as the service (undici's request over a keep-alive agent).
    const signer = new Webhook(secret);
    const postSigned = async (id: string, body: string) => {
      const now = new Date();
      const res = await request(receiver.url, {
        dispatcher: agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(id, now, body),
        },
        body,
      });
      await res.body.arrayBuffer();
    };
    const floorRound = async () => {
      const began = clock();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < ROUND_EVENTS) {
            const i = next++;
            const body = JSON.stringify({
              type: 'session.status',
              timestamp: new Date().toISOString(),
              data: { seq: i, status: 'CONNECTED' },
            });
            await postSigned(`msg_floor${i}`, body);
          }
        }),
      );
      return ROUND_EVENTS / ((clock() - began) / 1000);
    };
    // The durable floor: the bare loop plus the least a durable outbox writes, one grouped INSERT of the
    // events as they are raised (16 writers, as for the service) and one grouped UPDATE of their outcomes
    // (written behind, 5 ms groups), in the same database through the same client. What the service
    // spends above it is its own; what this spends above the bare floor is the database's share.
    const rowTable = jsonRows('sqlite', [
      ['id', 'text'],
      ['data', 'text'],
      ['at', 'timestamp'],
    ]);
    const doneTable = jsonRows('sqlite', [
      ['id', 'text'],
      ['at', 'timestamp'],
    ]);
    const leased = new Date('9999-01-01T00:00:00Z');
    let durableRound = 0;
    const durableFloorRound = async () => {
      durableRound += 1;
      const began = clock();
      // rows of the bench's own endpoint id, leased for ever, so the service's loop never claims them
      const inserts = groupCommit<[string, string, Date]>(async (rows) => {
        await app.deps.db
          .$executeRaw`INSERT INTO "WebhookDelivery" ("id", "eventId", "endpointId", "accountId", "status", "attempts", "nextAttemptAt", "claimedUntil", "data", "createdAt")
          SELECT "id", "id", 'bench-floor', 'bench-floor', 'PENDING', 0, "at", ${leased}, "data", "at" FROM (${rowTable(rows)}) AS r`;
      });
      const outcomes = groupCommit<[string, Date]>(
        async (rows) => {
          await app.deps.db.$executeRaw`UPDATE "WebhookDelivery" SET "status" = 'DELIVERED', "deliveredAt" = v."at", "claimedUntil" = NULL
            FROM (${doneTable(rows)}) AS v WHERE "WebhookDelivery"."id" = v."id"`;
        },
        { delayMs: 5 },
      );
      const ready: Array<{ id: string; body: string }> = [];
      const waiting: Array<() => void> = [];
      let written = 0;
      let posted = 0;
      const writers = Array.from({ length: 16 }, async () => {
        while (written < ROUND_EVENTS) {
          const i = written++;
          const id = `msg_durable${durableRound}_${i}`;
          const body = JSON.stringify({
            type: 'session.status',
            timestamp: new Date().toISOString(),
            data: { seq: i, status: 'CONNECTED' },
          });
          await inserts.add([id, body, new Date()]);
          ready.push({ id, body });
          waiting.shift()?.();
        }
      });
      const behind: Array<Promise<void>> = [];
      const posters = Array.from({ length: CONCURRENCY }, async () => {
        while (posted < ROUND_EVENTS) {
          const next = ready.shift();
          if (!next) {
            await new Promise<void>((resolve) => waiting.push(resolve));
            continue;
          }
          posted += 1;
          await postSigned(next.id, next.body);
          behind.push(outcomes.add([next.id, new Date()]));
        }
        // the last ones: wake the posters still waiting for a row that will not come
        for (const wake of waiting.splice(0)) wake();
      });
      await Promise.all([...writers, ...posters]);
      await Promise.all(behind);
      return ROUND_EVENTS / ((clock() - began) / 1000);
    };
    // Through the service: events written to the outbox (16 writers at once), counted at the receiver.
    const serviceRound = async () => {
      const base = receiver.count();
      const began = clock();
      let written = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (written < ROUND_EVENTS) await emit(written++);
        }),
      );
      await waitFor(() => receiver.count() - base >= ROUND_EVENTS, 120_000);
      return ROUND_EVENTS / ((clock() - began) / 1000);
    };
    // One round of each to warm up (compiled code, connections, the database's pages), not counted; then
    // alternating rounds, so a slower minute of a shared machine weighs on both sides.
    await floorRound();
    await durableFloorRound();
    await serviceRound();
    const rounds: Array<{
      floor: number;
      durable: number;
      service: number;
      floorCpuMs: number;
      durableCpuMs: number;
      serviceCpuMs: number;
    }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const floor = await measured(`floor${r}`, floorRound);
      const durable = await measured(`durable${r}`, durableFloorRound);
      const service = await measured(`service${r}`, serviceRound);
      rounds.push({
        floor: floor.rate,
        durable: durable.rate,
        service: service.rate,
        floorCpuMs: floor.cpuMsPerEvent,
        durableCpuMs: durable.cpuMsPerEvent,
        serviceCpuMs: service.cpuMsPerEvent,
      });
    }

    // Latency at a steady 100 events/s.
    receiver.lateness.length = 0;
    const total = RATE_PER_S * RATE_SECONDS;
    const began = clock();
    for (let i = 0; i < total; i++) {
      const due = began + (i * 1000) / RATE_PER_S;
      const wait = due - clock();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void app.deps.webhooks.emit({
        accountId: account.id,
        sessionId: `s${i % SESSIONS}`,
        type: 'session.status',
        data: { seq: i, at: clock() },
      });
    }
    await waitFor(() => receiver.lateness.length >= total, 60_000);
    return {
      rounds,
      ratio: quantile(
        rounds.map((r) => r.service / r.floor),
        0.5,
      ),
      durableRatio: quantile(
        rounds.map((r) => r.durable / r.floor),
        0.5,
      ),
      cpuRatio: quantile(
        rounds.map((r) => r.floorCpuMs / r.serviceCpuMs),
        0.5,
      ),
      p50: quantile(receiver.lateness, 0.5),
      p99: quantile(receiver.lateness, 0.99),
    };
  } finally {
    await agent.close();
    await app.close();
    await receiver.close();
  }
};

export const printWebhookBench = (r: Awaited<ReturnType<typeof benchWebhooks>>) => {
  for (const round of r.rounds) {
    console.log(
      `webhooks round (SQLite, ${ROUND_EVENTS} events, ${CONCURRENCY} in flight): ${round.service.toFixed(0)} events/s through the outbox, floor ${round.floor.toFixed(0)}/s for a bare signed-POST loop; process CPU per event ${round.serviceCpuMs.toFixed(2)} ms against ${round.floorCpuMs.toFixed(2)} ms; durable floor ${round.durable.toFixed(0)}/s at ${round.durableCpuMs.toFixed(2)} ms`,
    );
  }
  console.log(
    `webhooks: median ratio ${(r.ratio * 100).toFixed(0)} % of the floor over ${ROUNDS} alternating rounds after one to warm up (target 50 %); the durable floor (the bare loop plus one grouped insert and one grouped update) ${(r.durableRatio * 100).toFixed(0)} %; CPU per event: the floor's is ${(r.cpuRatio * 100).toFixed(0)} % of the service's (median)`,
  );
  console.log(
    `webhooks at ${RATE_PER_S} events/s for ${RATE_SECONDS} s: event to receiver p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (target p99 50 ms)`,
  );
};
