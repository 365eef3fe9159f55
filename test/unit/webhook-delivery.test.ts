import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, providerOf } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { urlRulesFor } from '../../src/resolvers/media-urls.ts';
import { WebhookDeliveryLoop } from '../../src/runtime/jobs/webhook-delivery.ts';
import { createWebhookOutbox } from '../../src/runtime/webhooks/outbox.ts';
import type { WebhookOutbox } from '../../src/runtime/ports/webhooks.ts';
import { dbKinds } from '../helpers/app.ts';

const urlRules = urlRulesFor('WEBHOOK_ALLOW_PRIVATE');

const DAY = 24 * 60 * 60 * 1000;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe.each(dbKinds)('webhook delivery client (%s)', (kind) => {
  let database: TestDatabase;
  let db: Db;
  // Real time to the second: receivers refuse signatures whose timestamp is far from their clock.
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  const seen: Array<{ headers: Record<string, string>; body: string }> = [];
  let slowSeen = 0;
  // A receiver on loopback (the loop runs with allowPrivate): /ok answers 200, /slow 200 after half a second,
  // /failing 500 with a text.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/ok') {
        seen.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        res.writeHead(200).end();
      } else if (req.method === 'POST' && req.url === '/slow')
        setTimeout(() => {
          slowSeen += 1;
          res.writeHead(200).end();
        }, 500);
      else if (req.method === 'POST' && req.url === '/failing')
        res.writeHead(500, { 'content-type': 'text/plain' }).end('down for maintenance');
      else res.writeHead(404).end();
    });
  });
  let URL_OK = '';
  let URL_FAILING = '';
  let URL_SLOW = '';

  const loop = () =>
    new WebhookDeliveryLoop({
      db,
      logger: pino({ level: 'silent' }),
      outbox: createWebhookOutbox({ db, provider: providerOf(database.url), now: () => clock, cacheMs: 0 }),
      databaseUrl: database.url,
      now: () => clock,
      concurrency: 4,
      timeoutMs: 1_000,
      retryBaseMs: 5_000,
      retryMaxMs: 3_600_000,
      retryForMs: 3 * DAY,
      allowPrivate: true,
      urlRules,
      retentionMs: 7 * DAY,
    });

  /** Counts the writes the loop's handoff took into memory and those it declined. */
  const countHandoff = (outbox: WebhookOutbox) => {
    const counts = { taken: 0, declined: 0 };
    const handoff = outbox.handoff;
    outbox.handoff = (given) =>
      handoff({
        ...given,
        accepts: (deliveries) => {
          const lease = given.accepts(deliveries);
          if (lease) counts.taken += 1;
          else counts.declined += 1;
          return lease;
        },
      });
    return counts;
  };

  const seed = async (url: string, failingSince: Date | null) => {
    const endpoint = await db.webhookEndpoint.create({ data: { accountId: 'acc', url, events: '["*"]', secret: SECRET, failingSince } });
    const event = { id: `msg_${endpoint.id.slice(0, 8)}`, type: 'session.status', data: '{"status":"CONNECTED"}', createdAt: clock };
    const delivery = await db.webhookDelivery.create({
      data: {
        id: `${event.id}_${endpoint.id}`,
        eventId: event.id,
        type: event.type,
        data: event.data,
        endpointId: endpoint.id,
        accountId: 'acc',
        createdAt: clock,
      },
    });
    return {
      endpoint,
      event,
      claimed: { id: delivery.id, eventId: event.id, endpointId: endpoint.id, sessionId: null, attempts: 0, createdAt: clock, event },
    };
  };

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    URL_OK = `http://127.0.0.1:${port}/ok`;
    URL_FAILING = `http://127.0.0.1:${port}/failing`;
    URL_SLOW = `http://127.0.0.1:${port}/slow`;
    database = await createTestDatabase(kind);
    db = createPrisma(database.url);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db?.$disconnect();
    await database?.drop();
  });

  it('signs the payload so the standardwebhooks package verifies it, with the event id as webhook-id', async () => {
    const { event, claimed } = await seed(URL_OK, null);
    await loop().attempt(claimed);
    const [got] = seen;
    const headers = got?.headers ?? {};
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['webhook-timestamp']).toBe(String(clock.getTime() / 1000));
    const payload = new Webhook(SECRET).verify(got?.body ?? '', headers);
    expect(payload).toEqual({ type: 'session.status', timestamp: clock.toISOString(), data: { status: 'CONNECTED' } });
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { id: claimed.id } });
    expect(row).toMatchObject({ status: 'DELIVERED', attempts: 1, lastStatus: 200, deliveredAt: clock, successExcerpt: '' });
    expect(row.successLatencyMs).toBeGreaterThanOrEqual(0);
    // the success is recorded on the delivery, not as a log row of its own
    expect(await db.webhookAttempt.count({ where: { deliveryId: claimed.id } })).toBe(0);
  });

  it('claims nothing while not started, even once a failed attempt made through it has a retry due', async () => {
    const realTime = () => new Date();
    const idle = new WebhookDeliveryLoop({ ...loop().options, now: realTime, retryBaseMs: 20, retryMaxMs: 40 });
    const { claimed } = await seed(URL_FAILING, null);
    await idle.attempt({ ...claimed, createdAt: realTime(), event: { ...claimed.event, createdAt: realTime() } });
    // another due delivery, which a loop running anywhere would claim and send at once
    const other = await seed(URL_OK, null);
    const before = seen.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.length).toBe(before);
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: other.claimed.id } })).toMatchObject({
      status: 'PENDING',
      attempts: 0,
      claimedUntil: null,
    });
  });

  it('keeps retrying a failing endpoint with backoff, and disables it once it has failed for 3 days, with the reason', async () => {
    const start = clock;
    const { endpoint, claimed } = await seed(URL_FAILING, null);
    const delivery = loop();
    await delivery.attempt(claimed);
    let row = await db.webhookDelivery.findUniqueOrThrow({ where: { id: claimed.id } });
    expect(row).toMatchObject({ status: 'PENDING', attempts: 1, lastStatus: 500, lastError: 'HTTP 500' });
    expect(row.nextAttemptAt.getTime() - start.getTime()).toBeGreaterThanOrEqual(2_500);
    expect(row.nextAttemptAt.getTime() - start.getTime()).toBeLessThanOrEqual(5_000);
    expect((await db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).failingSince).toEqual(start);
    const [attempt] = await db.webhookAttempt.findMany({ where: { deliveryId: claimed.id } });
    expect(attempt).toMatchObject({ statusCode: 500, responseExcerpt: 'down for maintenance', error: null });

    clock = new Date(start.getTime() + 3 * DAY - 1);
    await delivery.attempt({ ...claimed, attempts: 1 });
    expect(await db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
      enabled: true,
      disabledReason: null,
    });

    clock = new Date(start.getTime() + 3 * DAY);
    await delivery.attempt({ ...claimed, attempts: 2 });
    const disabled = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toBe(`Every delivery failed from ${start.toISOString()} to ${clock.toISOString()} (last: HTTP 500)`);
    row = await db.webhookDelivery.findUniqueOrThrow({ where: { id: claimed.id } });
    expect(row).toMatchObject({ status: 'FAILED', attempts: 3 });
  });

  it('warns of a failing endpoint at its first failure, then once per window with the failures it stands for, and says when it delivers again', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const delivery = new WebhookDeliveryLoop({ ...loop().options, logger, failureWarnEveryMs: 60_000 });
    const start = clock;
    const at = (ms: number) => {
      clock = new Date(start.getTime() + ms);
    };
    const down = await seed(URL_FAILING, null);
    const other = await seed(URL_FAILING, null);
    const warnings = () => lines.map((l) => [l.level, l.endpointId, l.failures, l.msg]);
    for (let n = 0; n < 5; n++) {
      at(n * 1_000);
      await delivery.attempt({ ...down.claimed, attempts: n });
    }
    expect(warnings()).toEqual([[40, down.endpoint.id, 1, expect.stringMatching(/^webhook endpoint failing/)]]);
    expect(lines[0]).toMatchObject({ accountId: 'acc', url: URL_FAILING, lastError: 'HTTP 500' });
    // another endpoint failing in the same window has a warning of its own
    await delivery.attempt(other.claimed);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toEqual([40, other.endpoint.id, 1, expect.stringMatching(/^webhook endpoint failing/)]);
    // past the window: one more line, for the 4 failures unsaid and this one
    at(61_000);
    await delivery.attempt({ ...down.claimed, attempts: 5 });
    at(62_000);
    await delivery.attempt({ ...down.claimed, attempts: 6 });
    expect(warnings().slice(2)).toEqual([[40, down.endpoint.id, 5, expect.stringMatching(/^webhook endpoint still failing/)]]);
    await db.webhookEndpoint.update({ where: { id: down.endpoint.id }, data: { url: URL_OK } });
    await delivery.attempt({ ...down.claimed, attempts: 7 });
    expect(lines.slice(3).map((l) => [l.level, l.endpointId, l.url, l.msg])).toEqual([
      [30, down.endpoint.id, URL_OK, 'webhook endpoint delivering again'],
    ]);
    // no retry left due for the loops the later tests start
    await db.webhookDelivery.update({ where: { id: other.claimed.id }, data: { status: 'FAILED' } });
    clock = start;
  });

  it('prunes finished deliveries, with their events and attempts, past the retention, and keeps pending ones', async () => {
    const start = clock;
    // failed once, then delivered: a log row and a success on the delivery
    const done = await seed(URL_FAILING, null);
    await loop().attempt(done.claimed);
    await db.webhookEndpoint.update({ where: { id: done.endpoint.id }, data: { url: URL_OK } });
    await loop().attempt({ ...done.claimed, attempts: 1 });
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: done.claimed.id } })).toMatchObject({
      status: 'DELIVERED',
      attempts: 2,
    });
    expect(await db.webhookAttempt.count({ where: { deliveryId: done.claimed.id } })).toBe(1);
    const pending = await seed(URL_FAILING, null);
    await loop().attempt(pending.claimed);
    clock = new Date(start.getTime() + 7 * DAY - 1);
    await loop().prune();
    expect(await db.webhookDelivery.findUnique({ where: { id: done.claimed.id } })).not.toBeNull();
    clock = new Date(start.getTime() + 7 * DAY + 1);
    const pruned = await loop().prune();
    expect(pruned.deliveries).toBeGreaterThanOrEqual(1);
    expect(await db.webhookDelivery.findUnique({ where: { id: done.claimed.id } })).toBeNull();
    expect(await db.webhookAttempt.count({ where: { deliveryId: done.claimed.id } })).toBe(0);
    expect(await db.webhookDelivery.count({ where: { eventId: done.event.id } })).toBe(0);
    expect(await db.webhookDelivery.findUnique({ where: { id: pending.claimed.id } })).toMatchObject({
      status: 'PENDING',
      type: 'session.status',
      data: '{"status":"CONNECTED"}',
    });
    expect(await db.webhookAttempt.count({ where: { deliveryId: pending.claimed.id } })).toBe(1);
  });

  it("keeps each session's order, once each, when events come faster than the loop takes them in memory", async () => {
    const endpoint = await db.webhookEndpoint.create({ data: { accountId: 'order', url: URL_OK, events: '["*"]', secret: SECRET } });
    const outbox = createWebhookOutbox({ db, provider: providerOf(database.url), now: () => clock, cacheMs: 60_000 });
    // to know the run went through both
    const handed = countHandoff(outbox);
    const delivery = new WebhookDeliveryLoop({ ...loop().options, outbox, concurrency: 2, pollMs: 50 });
    delivery.start();
    const before = seen.length;
    const sessions = ['s1', 's2', 's3'];
    // This test's deliveries only: a delivery of an earlier test may still land on the same receiver.
    const ours = () =>
      seen
        .slice(before)
        .map((r) => (JSON.parse(r.body) as { data?: { sessionId?: string; seq?: number } }).data)
        .filter((d): d is { sessionId: string; seq: number } => sessions.includes(d?.sessionId ?? '') && typeof d?.seq === 'number');
    const arrived = async (count: number) => {
      const until = Date.now() + 30_000;
      while (ours().length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    };
    // One writer per session, as the network's events of a session come one after another: a burst the
    // loop cannot hold in memory, a slower stream while it catches up, then single events once it has.
    const phases = [
      { count: 40, pauseMs: 0 },
      { count: 30, pauseMs: 25 },
      { count: 5, pauseMs: 0 },
    ];
    const PER_SESSION = phases.reduce((n, p) => n + p.count, 0);
    let seq = 0;
    try {
      for (const [i, phase] of phases.entries()) {
        if (i === phases.length - 1) await arrived(3 * seq);
        const from = seq;
        await Promise.all(
          sessions.map(async (sessionId) => {
            for (let n = from; n < from + phase.count; n++) {
              await outbox.emit({ accountId: 'order', sessionId, type: 'session.status', data: { sessionId, seq: n } });
              if (phase.pauseMs > 0) await new Promise((r) => setTimeout(r, phase.pauseMs));
            }
          }),
        );
        seq += phase.count;
      }
      await arrived(3 * PER_SESSION);
    } finally {
      await delivery.stop();
    }
    const got = ours();
    expect(handed.taken).toBeGreaterThan(0);
    expect(handed.declined).toBeGreaterThan(0);
    for (const sessionId of sessions)
      expect(got.filter((d) => d.sessionId === sessionId).map((d) => d.seq)).toEqual(Array.from({ length: PER_SESSION }, (_, i) => i));
    expect(await db.webhookDelivery.count({ where: { endpointId: endpoint.id, status: 'DELIVERED' } })).toBe(3 * PER_SESSION);
  });

  it('keeps taking what is written here in memory while its polls find nothing, however busy it is', async () => {
    const endpoint = await db.webhookEndpoint.create({ data: { accountId: 'polled', url: URL_SLOW, events: '["*"]', secret: SECRET } });
    const outbox = createWebhookOutbox({ db, provider: providerOf(database.url), now: () => new Date(), cacheMs: 60_000 });
    const handed = countHandoff(outbox);
    // Polls every 10 ms while twice the concurrency waits on a receiver taking half a second: a poll
    // that made the handoff wait for a claim (which cannot run while the loop is that busy) sent
    // everything written meanwhile through the database.
    const delivery = new WebhookDeliveryLoop({ ...loop().options, outbox, now: () => new Date(), concurrency: 2, pollMs: 10 });
    delivery.start();
    const before = slowSeen;
    try {
      await new Promise((r) => setTimeout(r, 50));
      for (let seq = 0; seq < 4; seq++) {
        for (const sessionId of ['s1', 's2']) await outbox.emit({ accountId: 'polled', sessionId, type: 'session.status', data: { seq } });
        await new Promise((r) => setTimeout(r, 40));
      }
      const until = Date.now() + 30_000;
      while (slowSeen - before < 8 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await delivery.stop();
    }
    expect(handed.declined).toBe(0);
    expect(slowSeen - before).toBe(8);
    expect(await db.webhookDelivery.count({ where: { endpointId: endpoint.id, status: 'DELIVERED' } })).toBe(8);
  });

  // SQLite is one process's database: a start sends at once what the process before it left leased.
  if (kind === 'sqlite')
    it('sends at its start what a crashed process left leased, instead of when the lease ends', async () => {
      const endpoint = await db.webhookEndpoint.create({ data: { accountId: 'crashed', url: URL_OK, events: '["*"]', secret: SECRET } });
      const realTime = () => new Date();
      const leased = await db.webhookDelivery.create({
        data: {
          id: `msg_crashed_${endpoint.id}`,
          eventId: 'msg_crashed',
          type: 'session.status',
          data: '{"status":"CONNECTED"}',
          endpointId: endpoint.id,
          accountId: 'crashed',
          nextAttemptAt: new Date(Date.now() - 1_000),
          claimedUntil: new Date(Date.now() + 60 * 60 * 1000),
        },
      });
      const outbox = createWebhookOutbox({ db, provider: 'sqlite', now: realTime, cacheMs: 60_000 });
      const delivery = new WebhookDeliveryLoop({ ...loop().options, outbox, now: realTime, pollMs: 20 });
      delivery.start();
      try {
        const until = Date.now() + 30_000;
        while (!seen.some((r) => r.headers['webhook-id'] === 'msg_crashed') && Date.now() < until)
          await new Promise((r) => setTimeout(r, 20));
      } finally {
        await delivery.stop();
      }
      expect(seen.filter((r) => r.headers['webhook-id'] === 'msg_crashed')).toHaveLength(1);
      expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: leased.id } })).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    });

  // Several nodes share one PostgreSQL; SQLite is one process's database.
  if (kind === 'postgres')
    it('two nodes on one database deliver every event exactly once, the second claiming what the first did not take', async () => {
      await db.webhookEndpoint.create({ data: { accountId: 'nodes', url: URL_OK, events: '["*"]', secret: SECRET } });
      const realTime = () => new Date();
      const sent = { a: 0, b: 0 };
      const node = (name: 'a' | 'b') => {
        const outbox = createWebhookOutbox({ db, provider: 'postgres', now: realTime, cacheMs: 60_000 });
        const delivery = new WebhookDeliveryLoop({
          ...loop().options,
          outbox,
          now: realTime,
          concurrency: 2,
          pollMs: 20,
          onAttempt: () => {
            sent[name] += 1;
          },
        });
        return { outbox, delivery };
      };
      const a = node('a');
      const b = node('b');
      const before = seen.length;
      const EVENTS = 4 * 50;
      a.delivery.start();
      b.delivery.start();
      try {
        // every event is raised on node a, faster than it takes them in memory
        await Promise.all(
          ['s1', 's2', 's3', 's4'].map(async (sessionId) => {
            for (let seq = 0; seq < 50; seq++)
              await a.outbox.emit({ accountId: 'nodes', sessionId, type: 'session.status', data: { sessionId, seq } });
          }),
        );
        const until = Date.now() + 30_000;
        while (seen.length - before < EVENTS && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        // a second delivery of any of them would come within a poll or two
        await new Promise((r) => setTimeout(r, 300));
      } finally {
        await Promise.all([a.delivery.stop(), b.delivery.stop()]);
      }
      const ids = seen.slice(before).map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(EVENTS);
      expect(new Set(ids).size).toBe(EVENTS);
      expect(sent.a + sent.b).toBe(EVENTS);
      expect(sent.b).toBeGreaterThan(0);
      expect(await db.webhookDelivery.count({ where: { accountId: 'nodes', status: 'DELIVERED' } })).toBe(EVENTS);
    });

  it("a slow receiver's backlog holds back no other endpoint's deliveries, and what waits for it in memory keeps its lease", async () => {
    const slow = await db.webhookEndpoint.create({ data: { accountId: 'slow', url: URL_SLOW, events: '["*"]', secret: SECRET } });
    await db.webhookEndpoint.create({ data: { accountId: 'fast', url: URL_OK, events: '["*"]', secret: SECRET } });
    const realTime = () => new Date();
    const outbox = createWebhookOutbox({ db, provider: providerOf(database.url), now: realTime, cacheMs: 60_000 });
    const delivery = new WebhookDeliveryLoop({ ...loop().options, outbox, now: realTime, concurrency: 4, pollMs: 50 });
    const waitFor = async (done: () => boolean | Promise<boolean>) => {
      const until = Date.now() + 30_000;
      while (!(await done()) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    };
    const leases = async () =>
      new Map(
        (await db.webhookDelivery.findMany({ where: { endpointId: slow.id, status: 'PENDING', claimedUntil: { not: null } } })).map(
          (r) => [r.id, r.claimedUntil?.getTime() ?? 0] as const,
        ),
      );
    const slowBefore = slowSeen;
    const fastBefore = seen.length;
    delivery.start();
    try {
      for (let seq = 0; seq < 40; seq++) await outbox.emit({ accountId: 'slow', sessionId: 's', type: 'session.status', data: { seq } });
      await waitFor(async () => (await leases()).size >= 16);
      const first = await leases();
      for (let seq = 0; seq < 5; seq++) await outbox.emit({ accountId: 'fast', sessionId: 's', type: 'session.status', data: { seq } });
      await waitFor(() => seen.length - fastBefore >= 5);
      expect(seen.length - fastBefore).toBe(5);
      // each slow delivery takes half a second: the fast ones did not wait behind the slow backlog
      expect(slowSeen - slowBefore).toBeLessThan(4);

      // the leases of the slow deliveries still waiting are renewed (every timeoutMs, here 1 s)
      await new Promise((r) => setTimeout(r, 1_300));
      const later = await leases();
      const waiting = [...first.keys()].filter((id) => later.has(id));
      expect(waiting.length).toBeGreaterThan(0);
      for (const id of waiting) expect(later.get(id)).toBeGreaterThan(first.get(id) ?? Number.POSITIVE_INFINITY);
    } finally {
      await delivery.stop();
    }
  });
});
