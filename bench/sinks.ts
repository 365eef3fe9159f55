import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { Connection } from 'rabbitmq-client';
import { payloadOf } from '../src/runtime/webhooks/attempt.ts';
import type { TestApp } from '../test/helpers/app.ts';
import { http, startTestApp } from '../test/helpers/app.ts';
import type { Consumed } from '../test/helpers/brokers.ts';
import { AMQP_URL, NATS_URL, amqpConsumer, natsConsumer } from '../test/helpers/brokers.ts';
import { nowUs, profileMarks } from './marks.ts';

const ROUNDS = 3;
const ROUND_EVENTS = 4_000;
/** events written at once into the service (each emit is the outbox's own grouped write) */
const IN_FLIGHT = 64;
/** the bare loop sends this many before awaiting their confirms, as the sink's publisher does (SINK_BATCH) */
const WINDOW = 500;
const RATE_PER_S = 1_000;
const RATE_SECONDS = 5;

// SINKS_CPU_PROF=<dir>: with the bench under `node --cpu-prof --cpu-prof-dir=<dir>`, marks.json there holds
// the windows of the measured rounds (`amqp service`, `amqp bare`, `nats service`, `nats bare`), to slice
// the profile by them (bench/cpuprofile.py).
const mark = profileMarks(process.env.SINKS_CPU_PROF);

const clock = () => performance.timeOrigin + performance.now();
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
};
const median = (values: number[]) => quantile(values, 0.5);

const until = async (done: () => boolean, ms = 120_000) => {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('the consumer did not get every event in time');
    await new Promise((r) => setTimeout(r, 2));
  }
};

interface Consumer {
  received: Consumed[];
  close: () => Promise<void>;
}
type Kind = 'amqp' | 'nats';

/** The same client library publishing from memory with confirms (WINDOW at a time): the floor. */
const bareLoop = async (kind: Kind, target: { exchange?: string; stream?: string; prefix?: string }) => {
  const event = (i: number) => ({
    id: `msg_bare_${i}_${Date.now()}`,
    body: payloadOf({ type: 'message.received', data: `{"n":${i}}`, createdAt: new Date() }),
  });
  if (kind === 'amqp') {
    const connection = new Connection(AMQP_URL);
    const publisher = connection.createPublisher({ confirm: true });
    return {
      send: async (from: number, count: number) => {
        const sends: Array<Promise<void>> = [];
        for (let i = from; i < from + count; i++) {
          const e = event(i);
          sends.push(
            publisher.send(
              {
                exchange: target.exchange,
                routingKey: 'bench.session.message.received',
                durable: true,
                messageId: e.id,
                type: 'message.received',
                contentType: 'application/json',
              },
              Buffer.from(e.body),
            ),
          );
        }
        await Promise.all(sends);
      },
      close: async () => {
        await publisher.close();
        await connection.close();
      },
    };
  }
  const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '') });
  const js = jetstream(nc);
  return {
    send: async (from: number, count: number) => {
      const sends: Array<Promise<unknown>> = [];
      for (let i = from; i < from + count; i++) {
        const e = event(i);
        const h = headers();
        h.set('Content-Type', 'application/json');
        sends.push(
          js.publish(`${target.prefix}.bench.session.message.received`, e.body, {
            msgID: e.id,
            headers: h,
            expect: { streamName: target.stream },
          }),
        );
      }
      await Promise.all(sends);
    },
    close: () => nc.close(),
  };
};

const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

export const benchSinks = async () => {
  const results: Array<{
    kind: Kind;
    rounds: Array<{ service: number; floor: number; serviceCpuMs: number; floorCpuMs: number }>;
    ratio: number;
    p50: number;
    p99: number;
    rateCpuMs: number;
  }> = [];
  for (const kind of ['amqp', 'nats'] as Kind[]) {
    const app: TestApp = await startTestApp('sqlite', {});
    const account = await app.newAccount();
    const serviceSide = kind === 'amqp' ? await amqpConsumer() : await natsConsumer();
    const floorSide = kind === 'amqp' ? await amqpConsumer() : await natsConsumer();
    const consumers: Consumer[] = [serviceSide, floorSide];
    try {
      const body =
        kind === 'amqp'
          ? { kind, url: AMQP_URL, exchange: (serviceSide as Awaited<ReturnType<typeof amqpConsumer>>).exchange }
          : {
              kind,
              url: NATS_URL,
              stream: (serviceSide as Awaited<ReturnType<typeof natsConsumer>>).stream,
              subjectPrefix: (serviceSide as Awaited<ReturnType<typeof natsConsumer>>).prefix,
            };
      const created = await http(app.baseUrl, 'POST', '/v1/sinks', { key: account.apiKey, body: { ...body, events: ['*'] } });
      if (created.status !== 201) throw new Error(`sink not created: ${JSON.stringify(created.body)}`);
      const floorTarget =
        kind === 'amqp'
          ? { exchange: (floorSide as Awaited<ReturnType<typeof amqpConsumer>>).exchange }
          : {
              stream: (floorSide as Awaited<ReturnType<typeof natsConsumer>>).stream,
              prefix: (floorSide as Awaited<ReturnType<typeof natsConsumer>>).prefix,
            };
      const floor = await bareLoop(kind, floorTarget);
      let written = 0;
      const emit = (data: Record<string, unknown>) =>
        app.deps.webhooks.emit({
          accountId: account.id,
          sessionId: 'bench-session',
          type: 'message.received',
          data: { n: written++, ...data },
        });

      /** The service: events written through the outbox (IN_FLIGHT at once), counted at the consumer. */
      const serviceRound = async () => {
        const target = serviceSide.received.length + ROUND_EVENTS;
        const began = clock();
        const cpu = process.cpuUsage();
        let left = ROUND_EVENTS;
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (left > 0) {
              left -= 1;
              await emit({});
            }
          }),
        );
        await until(() => serviceSide.received.length >= target);
        return { rate: ROUND_EVENTS / ((clock() - began) / 1000), cpuMs: cpuMs(cpu) };
      };
      let bareAt = 0;
      const floorRound = async () => {
        const target = floorSide.received.length + ROUND_EVENTS;
        const began = clock();
        const cpu = process.cpuUsage();
        for (let sent = 0; sent < ROUND_EVENTS; sent += WINDOW) await floor.send(bareAt + sent, Math.min(WINDOW, ROUND_EVENTS - sent));
        bareAt += ROUND_EVENTS;
        await until(() => floorSide.received.length >= target);
        return { rate: ROUND_EVENTS / ((clock() - began) / 1000), cpuMs: cpuMs(cpu) };
      };
      // one round each to warm up, then alternating rounds, so a slower minute of a shared machine weighs on both
      await serviceRound();
      await floorRound();
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const serviceFrom = nowUs();
        const service = await serviceRound();
        mark(`${kind} service`, serviceFrom);
        const bareFrom = nowUs();
        const bare = await floorRound();
        mark(`${kind} bare`, bareFrom);
        rounds.push({
          service: service.rate,
          floor: bare.rate,
          serviceCpuMs: service.cpuMs / ROUND_EVENTS,
          floorCpuMs: bare.cpuMs / ROUND_EVENTS,
        });
      }

      // Latency: RATE_PER_S events a second, each carrying the time it was written, against when the consumer got it.
      const from = serviceSide.received.length;
      const total = RATE_PER_S * RATE_SECONDS;
      const started = clock();
      const cpu = process.cpuUsage();
      const writes: Array<Promise<void>> = [];
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / RATE_PER_S;
        const wait = due - clock();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        writes.push(emit({ at: clock() }));
      }
      await Promise.all(writes);
      await until(() => serviceSide.received.length >= from + total);
      const rateCpuMs = cpuMs(cpu) / total;
      const lateness = serviceSide.received.slice(from).map((m) => m.receivedAt - (m.body.data.at as number));
      results.push({
        kind,
        rounds,
        ratio: median(rounds.map((r) => r.service / r.floor)),
        p50: quantile(lateness, 0.5),
        p99: quantile(lateness, 0.99),
        rateCpuMs,
      });
      await floor.close();
    } finally {
      await app.close();
      for (const c of consumers) await c.close();
    }
  }
  return results;
};

export const printSinksBench = (results: Awaited<ReturnType<typeof benchSinks>>) => {
  for (const r of results) {
    for (const round of r.rounds)
      console.log(
        `sinks ${r.kind}: service ${round.service.toFixed(0)} events/s (CPU ${round.serviceCpuMs.toFixed(3)} ms/event), bare ${r.kind} loop with confirms ${round.floor.toFixed(0)} events/s (CPU ${round.floorCpuMs.toFixed(3)} ms/event)`,
      );
    console.log(
      `sinks ${r.kind}: median ${(r.ratio * 100).toFixed(0)} % of the bare loop over ${ROUNDS} alternating rounds of ${ROUND_EVENTS} (goal 60 %); at ${RATE_PER_S} events/s for ${RATE_SECONDS} s, causing write to consumer p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (goal 50 ms), CPU ${r.rateCpuMs.toFixed(3)} ms/event (this process: the service and the consumer)`,
    );
  }
};
