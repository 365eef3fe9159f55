import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../src/resolvers/webhooks.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { SinkPublisher } from '../src/runtime/sinks/publisher.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Consumed } from './helpers/brokers.ts';
import {
  AMQP_URL,
  NATS_URL,
  amqpConnectionPids,
  amqpConsumer,
  closeAmqpConnections,
  freePort,
  natsConsumer,
  privateNats,
} from './helpers/brokers.ts';
import { waitUntil } from './helpers/sandbox.ts';

/** Retries and polls in tenths of a second instead of seconds; a lease that runs out within the test. */
const FAST = { SINK_POLL_MS: 100, SINK_RETRY_BASE_MS: 100, SINK_RETRY_MAX_MS: 500, SINK_LEASE_MS: 3_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(dbKinds)('event sinks: the API (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let other: string;
  const call = (method: string, path: string, body?: unknown, as = key) => http(app.baseUrl, method, path, { key: as, body });

  beforeAll(async () => {
    // no publisher: these tests are about the records, not the brokers
    app = await startTestApp(kind, { SINK_POLL_MS: 60_000 });
    key = (await app.newAccount()).apiKey;
    other = (await app.newAccount()).apiKey;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('creates, lists, reads, changes, pauses and deletes sinks; the URL password is never shown', async () => {
    const amqp = await call('POST', '/v1/sinks', {
      kind: 'amqp',
      url: 'amqp://app:s3cret-pw@127.0.0.1:5672/prod',
      exchange: 'wa.events',
      events: ['message.received', 'message.sent', 'message.received'],
      description: 'crm',
    });
    expect(amqp.status).toBe(201);
    const status = {
      state: 'ok',
      lastError: null,
      lastErrorAt: null,
      failingSince: null,
      lastPublishedAt: null,
      pending: 0,
      oldestPendingAt: null,
    };
    expect(amqp.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      kind: 'amqp',
      url: 'amqp://app:****@127.0.0.1:5672/prod',
      exchange: 'wa.events',
      stream: null,
      subjectPrefix: null,
      events: ['message.received', 'message.sent'],
      sessionId: null,
      description: 'crm',
      enabled: true,
      status,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const nats = await call('POST', '/v1/sinks', {
      kind: 'nats',
      url: 'nats://tok-123456@127.0.0.1:4222',
      stream: 'WA',
      subjectPrefix: 'wa.events',
      events: ['*'],
    });
    expect(nats.status).toBe(201);
    expect(nats.body).toMatchObject({
      kind: 'nats',
      url: 'nats://****@127.0.0.1:4222',
      stream: 'WA',
      subjectPrefix: 'wa.events',
      exchange: null,
    });
    expect(JSON.stringify([amqp.body, nats.body])).not.toMatch(/s3cret|tok-123456/);

    const listed = await call('GET', '/v1/sinks');
    expect(listed.status).toBe(200);
    expect(listed.body.map((s: { id: string }) => s.id)).toEqual([amqp.body.id, nats.body.id]);
    expect(JSON.stringify(listed.body)).not.toMatch(/s3cret|tok-123456/);
    expect((await call('GET', `/v1/sinks/${amqp.body.id}`)).body).toEqual(amqp.body);
    // the stored URL keeps its password: the publisher needs it
    expect((await app.db.eventSink.findUniqueOrThrow({ where: { id: amqp.body.id } })).url).toBe(
      'amqp://app:s3cret-pw@127.0.0.1:5672/prod',
    );

    const paused = await call('PATCH', `/v1/sinks/${amqp.body.id}`, { enabled: false, exchange: 'wa.other' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ enabled: false, exchange: 'wa.other', status: { ...status, state: 'paused' } });
    const resumed = await call('PATCH', `/v1/sinks/${amqp.body.id}`, { enabled: true, url: 'amqps://app:n3w-pw@broker.example:5671' });
    expect(resumed.body).toMatchObject({ enabled: true, url: 'amqps://app:****@broker.example:5671', status: { state: 'ok' } });

    // another account sees none of them
    expect((await call('GET', '/v1/sinks', undefined, other)).body).toEqual([]);
    expect((await call('GET', `/v1/sinks/${amqp.body.id}`, undefined, other)).status).toBe(404);
    expect((await call('DELETE', `/v1/sinks/${amqp.body.id}`, undefined, other)).status).toBe(404);

    expect((await call('DELETE', `/v1/sinks/${amqp.body.id}`)).body).toEqual({ ok: true });
    expect((await call('GET', `/v1/sinks/${amqp.body.id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/sinks/${nats.body.id}`)).status).toBe(200);
    expect((await call('GET', '/v1/sinks')).body).toEqual([]);
  });

  it('refuses bad sinks with 400 VALIDATION_FAILED and stores nothing', async () => {
    const bad = async (body: unknown, path: string, message: RegExp) => {
      const res = await call('POST', '/v1/sinks', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details).toEqual(expect.arrayContaining([{ path, message: expect.stringMatching(message) }]));
    };
    const amqp = { kind: 'amqp', url: AMQP_URL, exchange: 'x', events: ['*'] };
    await bad({ ...amqp, url: 'http://127.0.0.1:5672' }, 'url', /amqp:\/\/ or amqps:\/\//);
    await bad({ ...amqp, url: 'not a url' }, 'url', /absolute URL/);
    await bad({ ...amqp, kind: 'nats', stream: 'S', subjectPrefix: 'p', exchange: undefined }, 'url', /nats:\/\/ or tls:\/\//);
    await bad({ ...amqp, kind: 'kafka' }, 'kind', /amqp or nats/);
    await bad({ ...amqp, exchange: 'amq.topic' }, 'exchange', /reserved/);
    await bad({ ...amqp, exchange: '' }, 'exchange', /.+/);
    await bad({ ...amqp, events: ['message.nope'] }, 'events[0]', /must be one of/);
    await bad({ ...amqp, stream: 'S' }, '(body)', /.+/);
    const nats = { kind: 'nats', url: NATS_URL, stream: 'WA', subjectPrefix: 'wa', events: ['*'] };
    await bad({ ...nats, subjectPrefix: 'wa.>' }, 'subjectPrefix', /no wildcards/);
    await bad({ ...nats, stream: 'a.b' }, 'stream', /letters, digits/);
    await bad({ ...nats, stream: undefined }, 'stream', /.+/);

    const sink = await call('POST', '/v1/sinks', amqp);
    expect(sink.status).toBe(201);
    const wrongField = await call('PATCH', `/v1/sinks/${sink.body.id}`, { stream: 'S' });
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error.details).toEqual([{ path: 'stream', message: 'is not a field of a amqp sink' }]);
    const wrongScheme = await call('PATCH', `/v1/sinks/${sink.body.id}`, { url: 'nats://127.0.0.1:4222' });
    expect(wrongScheme.status).toBe(400);
    expect((await call('POST', '/v1/sinks', { ...amqp, sessionId: '00000000-0000-0000-0000-000000000000' })).status).toBe(404);
    expect((await call('GET', '/v1/sinks')).body).toEqual([
      expect.objectContaining({ id: sink.body.id, url: AMQP_URL.replace('guest@', '****@') }),
    ]);
    await call('DELETE', `/v1/sinks/${sink.body.id}`);
  });

  it('GraphQL: the same sinks, the same rules', async () => {
    const created = await gql(
      app.baseUrl,
      key,
      `mutation { createSink(kind: nats, url: "nats://user:pa55word@127.0.0.1:4222", stream: "WA", subjectPrefix: "wa", events: ["message.sent"]) {
        id kind url stream subjectPrefix events enabled status { state pending lastError } } }`,
    );
    expect(created.errors).toBeUndefined();
    const sink = created.data.createSink;
    expect(sink).toEqual({
      id: expect.any(String),
      kind: 'nats',
      url: 'nats://user:****@127.0.0.1:4222',
      stream: 'WA',
      subjectPrefix: 'wa',
      events: ['message.sent'],
      enabled: true,
      status: { state: 'ok', pending: 0, lastError: null },
    });
    const updated = await gql(app.baseUrl, key, `mutation { updateSink(id: "${sink.id}", enabled: false) { enabled status { state } } }`);
    expect(updated.data.updateSink).toEqual({ enabled: false, status: { state: 'paused' } });
    const listed = await gql(app.baseUrl, key, '{ sinks { id url } }');
    expect(listed.data.sinks).toEqual([{ id: sink.id, url: 'nats://user:****@127.0.0.1:4222' }]);
    const invalid = await gql(app.baseUrl, key, `mutation { createSink(kind: amqp, url: "ftp://x", exchange: "e", events: ["*"]) { id } }`);
    expect(invalid.errors?.[0].extensions?.code).toBe('VALIDATION_FAILED');
    const deleted = await gql(app.baseUrl, key, `mutation { deleteSink(id: "${sink.id}") }`);
    expect(deleted.data.deleteSink).toBe(true);
    expect((await gql(app.baseUrl, key, '{ sinks { id } }')).data.sinks).toEqual([]);
  });
});

describe.each(dbKinds)('event sinks: publishing (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  const sessionId = randomUUID();
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const createSink = async (body: Record<string, unknown>): Promise<string> => {
    const res = await call('POST', '/v1/sinks', { events: ['*'], ...body });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const statusOf = async (id: string) => (await call('GET', `/v1/sinks/${id}`)).body.status;
  const emit = (type: string, data: Record<string, unknown>) => app.deps.webhooks.emit({ accountId, sessionId, type, data });

  beforeAll(async () => {
    app = await startTestApp(kind, FAST);
    const account = await app.newAccount();
    key = account.apiKey;
    accountId = account.id;
  });
  afterAll(async () => {
    await app?.close();
  });
  const removeSinks = async () => {
    for (const sink of (await call('GET', '/v1/sinks')).body) await call('DELETE', `/v1/sinks/${sink.id}`);
  };

  /** Every event (by its data.n) arrived, the copies of one event share its id, and first arrivals are in order. */
  const expectAllInOrder = (received: Consumed[], count: number) => {
    const idOf = new Map<number, string>();
    const firsts: number[] = [];
    for (const m of received) {
      const n = m.body.data.n as number;
      const seen = idOf.get(n);
      if (seen === undefined) {
        idOf.set(n, m.eventId);
        firsts.push(n);
      } else expect(m.eventId).toBe(seen);
    }
    expect(firsts).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(new Set(idOf.values()).size).toBe(count);
    return received.length - count;
  };

  it('publishes every event type into RabbitMQ and NATS JetStream: the webhook body, the broker headers, in order, filtered', async () => {
    const rabbit = await amqpConsumer();
    const nats = await natsConsumer();
    // a stream of its own: in the same stream, JetStream would drop the second copy of an event id
    const sentOnly = await natsConsumer();
    try {
      const amqpId = await createSink({ kind: 'amqp', url: AMQP_URL, exchange: rabbit.exchange });
      const natsId = await createSink({ kind: 'nats', url: NATS_URL, stream: nats.stream, subjectPrefix: nats.prefix });
      await createSink({ kind: 'nats', url: NATS_URL, stream: sentOnly.stream, subjectPrefix: sentOnly.prefix, events: ['message.sent'] });
      const began = Date.now();
      for (const [n, type] of WEBHOOK_EVENT_TYPES.entries()) await emit(type, { n, sessionId });
      const types = [...WEBHOOK_EVENT_TYPES];
      await waitUntil(
        async () => [rabbit.received.length, nats.received.length, sentOnly.received.length],
        ([r, s, o]) => r >= types.length && s >= types.length && o >= 1,
      );
      await sleep(300);
      expect(rabbit.received.map((m) => m.type)).toEqual(types);
      const natsMain = nats.received;
      expect(natsMain.map((m) => m.type)).toEqual(types);
      expect(sentOnly.received.map((m) => m.type)).toEqual(['message.sent']);
      for (const [n, type] of types.entries()) {
        const amqp = rabbit.received[n];
        const jet = natsMain[n];
        // one event, one id, whichever sink it went through
        expect(amqp.eventId).toMatch(/^msg_[0-9a-z]{25}$/);
        expect(jet.eventId).toBe(amqp.eventId);
        expect(amqp.key).toBe(`${accountId}.${sessionId}.${type}`);
        expect(jet.key).toBe(`${nats.prefix}.${accountId}.${sessionId}.${type}`);
        const body = { type, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), data: { n, sessionId } };
        expect(amqp.body).toEqual(body);
        expect(jet.body).toEqual(amqp.body);
        const at = Date.parse(amqp.body.timestamp);
        expect(at).toBeGreaterThanOrEqual(began - 5);
        expect(amqp.meta).toEqual({
          messageId: amqp.eventId,
          type,
          timestamp: Math.floor(at / 1000),
          contentType: 'application/json',
          durable: true,
          headers: { 'event-time': amqp.body.timestamp },
        });
        expect(jet.meta).toEqual({
          'Nats-Msg-Id': amqp.eventId,
          'Nats-Expected-Stream': nats.stream,
          'Content-Type': 'application/json',
          'Event-Id': amqp.eventId,
          'Event-Type': type,
          'Event-Time': amqp.body.timestamp,
        });
      }
      for (const id of [amqpId, natsId]) {
        const status = await waitUntil(
          () => statusOf(id),
          (s) => s.pending === 0 && s.lastPublishedAt !== null,
        );
        expect(status).toMatchObject({ state: 'ok', lastError: null, failingSince: null, pending: 0 });
      }
      const published = await app.deps.metrics.registry.getSingleMetric('wa_sink_published_total')?.get();
      expect(published?.values.find((v) => v.labels.sink === amqpId)?.value).toBe(types.length);
      expect(published?.values.find((v) => v.labels.sink === natsId)?.value).toBe(types.length);
    } finally {
      await removeSinks();
      await rabbit.close();
      await nats.close();
      await sentOnly.close();
    }
  });

  it('NATS restarted during a stream of 1,000 events: none lost, each once in the stream, in order', async () => {
    const server = await privateNats();
    const nats = await natsConsumer(server.url, { consume: false });
    try {
      const id = await createSink({ kind: 'nats', url: server.url, stream: nats.stream, subjectPrefix: nats.prefix });
      let restarted: Promise<void> | null = null;
      for (let n = 0; n < 1_000; n++) {
        await emit('message.received', { n });
        if (n === 300) restarted = server.restart(1_000);
        if (n % 25 === 24) await sleep(20);
      }
      await restarted;
      await waitUntil(
        () => statusOf(id),
        (s) => s.pending === 0,
        60_000,
      );
      // the consumer reads the stream once everything is in: the server restarted under it too
      await nats.start();
      await waitUntil(
        async () => nats.received.length,
        (n) => n >= 1_000,
        30_000,
      );
      // sent again after the restart, a copy within the duplicate window is dropped by the server (Nats-Msg-Id)
      expect(await nats.stored()).toBe(1_000);
      expect(expectAllInOrder(nats.received, 1_000)).toBe(0);
      const failed = await app.deps.metrics.registry.getSingleMetric('wa_sink_failed_total')?.get();
      expect(failed?.values.find((v) => v.labels.sink === id)?.value ?? 0).toBeGreaterThan(0);
      expect(await statusOf(id)).toMatchObject({ state: 'ok', lastError: expect.any(String), failingSince: null });
    } finally {
      await removeSinks();
      await nats.close();
      await server.close();
    }
  }, 120_000);

  it('RabbitMQ drops the connection during a stream of 1,000 events: none lost, copies carry the same id, in order', async () => {
    const rabbit = await amqpConsumer();
    try {
      const id = await createSink({ kind: 'amqp', url: AMQP_URL, exchange: rabbit.exchange });
      await emit('message.received', { n: 0 });
      await waitUntil(
        async () => rabbit.received.length,
        (n) => n === 1,
      );
      const pids = await amqpConnectionPids(`wa-sink-${id}`);
      expect(pids).toHaveLength(1);
      let closed = false;
      let n = 1;
      for (; n < 1_000; n++) {
        await emit('message.received', { n });
        if (n === 100) void closeAmqpConnections(pids).then(() => (closed = true));
        // the stream goes on slowly until the broker has closed the connection, then at full speed
        if (!closed && n % 10 === 9) await sleep(50);
      }
      expect(closed).toBe(true);
      await waitUntil(
        () => statusOf(id),
        (s) => s.pending === 0,
        60_000,
      );
      await waitUntil(
        async () => rabbit.received.length,
        (n) => n >= 1_000,
        30_000,
      );
      await sleep(300);
      const copies = expectAllInOrder(rabbit.received, 1_000);
      expect(copies).toBeGreaterThanOrEqual(0);
      expect((await amqpConnectionPids(`wa-sink-${id}`)).filter((p) => pids.includes(p))).toEqual([]);
    } finally {
      await removeSinks();
      await rabbit.close();
    }
  }, 180_000);

  it('a queue with no consumer fills up: the refused events wait, reported, and go once it drains', async () => {
    const rabbit = await amqpConsumer({ consume: false, queueArgs: { 'x-max-length': 100, 'x-overflow': 'reject-publish' } });
    try {
      const id = await createSink({ kind: 'amqp', url: AMQP_URL, exchange: rabbit.exchange });
      for (let n = 0; n < 150; n++) await emit('message.received', { n });
      const failing = await waitUntil(
        () => statusOf(id),
        (s) => s.state === 'failing' && s.pending === 50,
      );
      expect(failing).toMatchObject({
        lastError: expect.stringMatching(/./),
        failingSince: expect.any(String),
        oldestPendingAt: expect.any(String),
      });
      expect(await rabbit.depth()).toBe(100);
      rabbit.start();
      await waitUntil(
        () => statusOf(id),
        (s) => s.pending === 0 && s.state === 'ok',
      );
      await waitUntil(
        async () => rabbit.received.length,
        (n) => n >= 150,
      );
      expect(expectAllInOrder(rabbit.received, 150)).toBe(0);
    } finally {
      await removeSinks();
      await rabbit.close();
    }
  }, 60_000);

  it('wrong URL, wrong credentials, missing exchange or stream: a clear sink.status, nothing lost, published once put right', async () => {
    const rabbit = await amqpConsumer();
    const nats = await natsConsumer();
    try {
      const closedPort = await freePort();
      const refused = await createSink({ kind: 'amqp', url: `amqp://guest:guest@127.0.0.1:${closedPort}`, exchange: rabbit.exchange });
      const badLogin = await createSink({ kind: 'amqp', url: 'amqp://guest:n0t-the-pa55word@127.0.0.1:5672', exchange: rabbit.exchange });
      const noExchange = await createSink({ kind: 'amqp', url: AMQP_URL, exchange: `${rabbit.exchange}-missing` });
      const noStream = await createSink({ kind: 'nats', url: NATS_URL, stream: `${nats.stream}_MISSING`, subjectPrefix: nats.prefix });
      const natsRefused = await createSink({
        kind: 'nats',
        url: `nats://127.0.0.1:${closedPort}`,
        stream: nats.stream,
        subjectPrefix: nats.prefix,
      });
      await emit('message.received', { n: 0 });
      const expected: Array<[string, RegExp]> = [
        [refused, /ECONNREFUSED|connection refused/i],
        [badLogin, /ACCESS_REFUSED/],
        [noExchange, /NOT_FOUND.*exchange/],
        [noStream, /stream not found/i],
        [natsRefused, /ECONNREFUSED|connection refused/i],
      ];
      for (const [id, error] of expected) {
        const status = await waitUntil(
          () => statusOf(id),
          (s) => s.state === 'failing' && s.pending === 1,
        );
        expect(status.lastError).toMatch(error);
        expect(status.lastError).not.toContain('n0t-the-pa55word');
      }
      expect(rabbit.received).toEqual([]);
      expect(nats.received).toEqual([]);
      // put right, the waiting event goes
      await call('PATCH', `/v1/sinks/${noExchange}`, { exchange: rabbit.exchange });
      await call('PATCH', `/v1/sinks/${noStream}`, { stream: nats.stream });
      await waitUntil(
        async () => [rabbit.received.length, nats.received.length],
        ([r, s]) => r === 1 && s === 1,
      );
      expect(rabbit.received[0].body.data).toEqual({ n: 0 });
      expect(nats.received[0].eventId).toBe(rabbit.received[0].eventId);
      await waitUntil(
        () => statusOf(noExchange),
        (s) => s.state === 'ok' && s.pending === 0 && s.failingSince === null,
      );
    } finally {
      await removeSinks();
      await rabbit.close();
      await nats.close();
    }
  }, 60_000);
});

describe.runIf(dbKinds.includes('postgres'))('event sinks: two nodes (postgres)', () => {
  it('each event is published by one node; when that node stops, the other takes the sink over', async () => {
    const database = await createTestDatabase('postgres');
    const a = await startTestApp('postgres', FAST, {}, { existing: database });
    const b = await startTestApp('postgres', FAST, {}, { existing: database });
    const rabbit = await amqpConsumer();
    try {
      const account = await a.newAccount();
      const sessionId = randomUUID();
      const created = await http(a.baseUrl, 'POST', '/v1/sinks', {
        key: account.apiKey,
        body: { kind: 'amqp', url: AMQP_URL, exchange: rabbit.exchange, events: ['*'] },
      });
      expect(created.status).toBe(201);
      b.deps.sinks.changed();
      const emitOn = (app: TestApp, n: number) =>
        app.deps.webhooks.emit({ accountId: account.id, sessionId, type: 'message.received', data: { n } });
      for (let n = 0; n < 200; n++) await emitOn(n % 2 === 0 ? a : b, n);
      await waitUntil(
        async () => rabbit.received.length,
        (n) => n >= 200,
      );
      await sleep(500);
      expect(rabbit.received.map((m) => m.body.data.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      const holder = (await a.db.eventSink.findUniqueOrThrow({ where: { id: created.body.id } })).leaseOwner;
      expect(holder).not.toBeNull();
      // the holder stops (its lease released); the other node publishes what comes next
      const nodeOf = (app: TestApp) => (app.deps.sinks as SinkPublisher).nodeId;
      expect([nodeOf(a), nodeOf(b)]).toContain(holder);
      const [first, second] = holder === nodeOf(a) ? [a, b] : [b, a];
      await first.deps.sinks.stop();
      for (let n = 200; n < 300; n++) await emitOn(second, n);
      await waitUntil(
        async () => rabbit.received.length,
        (n) => n >= 300,
        20_000,
      );
      expect(rabbit.received.slice(200).map((m) => m.body.data.n)).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
      expect((await a.db.eventSink.findUniqueOrThrow({ where: { id: created.body.id } })).leaseOwner).toBe(nodeOf(second));
    } finally {
      await rabbit.close();
      await a.close();
      await b.close();
      await database.drop();
    }
  }, 120_000);
});
