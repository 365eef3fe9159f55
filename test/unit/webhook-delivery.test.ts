import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, providerOf } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { urlRules } from '../../src/resolvers/media-urls.ts';
import { retryDelay, WebhookDeliveryLoop } from '../../src/runtime/jobs/webhook-delivery.ts';
import { createWebhookOutbox } from '../../src/runtime/webhooks/outbox.ts';
import { dbKinds } from '../helpers/app.ts';

const DAY = 24 * 60 * 60 * 1000;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe.each(dbKinds)('webhook delivery client (%s)', (kind) => {
  let database: TestDatabase;
  let db: Db;
  // Real time to the second: receivers refuse signatures whose timestamp is far from their clock.
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  const seen: Array<{ headers: Record<string, string>; body: string }> = [];
  // A receiver on loopback (the loop runs with allowPrivate): /ok answers 200, /failing 500 with a text.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/ok') {
        seen.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        res.writeHead(200).end();
      } else if (req.method === 'POST' && req.url === '/failing')
        res.writeHead(500, { 'content-type': 'text/plain' }).end('down for maintenance');
      else res.writeHead(404).end();
    });
  });
  let URL_OK = '';
  let URL_FAILING = '';

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

  const seed = async (url: string, failingSince: Date | null) => {
    const endpoint = await db.webhookEndpoint.create({ data: { accountId: 'acc', url, events: '["*"]', secret: SECRET, failingSince } });
    const event = await db.webhookEvent.create({
      data: {
        id: `msg_${endpoint.id.slice(0, 8)}`,
        accountId: 'acc',
        type: 'session.status',
        data: '{"status":"CONNECTED"}',
        createdAt: clock,
      },
    });
    const delivery = await db.webhookDelivery.create({
      data: { id: `${event.id}_${endpoint.id}`, eventId: event.id, endpointId: endpoint.id, accountId: 'acc', createdAt: clock },
    });
    return {
      endpoint,
      event,
      claimed: { id: delivery.id, eventId: event.id, endpointId: endpoint.id, sessionId: null, attempts: 0, createdAt: clock },
    };
  };

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    URL_OK = `http://127.0.0.1:${port}/ok`;
    URL_FAILING = `http://127.0.0.1:${port}/failing`;
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
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: claimed.id } })).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      lastStatus: 200,
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

  it('prunes finished deliveries, their attempts and events past the retention, and keeps pending ones', async () => {
    const start = clock;
    const done = await seed(URL_OK, null);
    await loop().attempt(done.claimed);
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
    expect(await db.webhookEvent.findUnique({ where: { id: done.event.id } })).toBeNull();
    expect(await db.webhookDelivery.findUnique({ where: { id: pending.claimed.id } })).toMatchObject({ status: 'PENDING' });
    expect(await db.webhookEvent.findUnique({ where: { id: pending.event.id } })).not.toBeNull();
  });

  it('backs off exponentially with jitter up to the ceiling', () => {
    expect(retryDelay(1, 1_000, 60_000, () => 0)).toBe(500);
    expect(retryDelay(1, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(retryDelay(4, 1_000, 60_000, () => 1)).toBe(8_000);
    expect(retryDelay(40, 1_000, 60_000, () => 1)).toBe(60_000);
  });
});
